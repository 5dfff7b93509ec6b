"""What every check of the kit shares: its context, watched calls, the output contract."""

from __future__ import annotations

import math
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.audit.selector import AuditResult, NeighbouringPair

__all__ = [
    "P_MIN",
    "Context",
    "Failure",
    "call",
    "describe_exc",
    "draw",
    "indices",
    "is_real_number",
    "show",
    "verdict",
]

#: A statistical check fails when its p-value is below this (a correct selector: 1e-6 per test).
P_MIN = 1e-6


class Failure(Exception):
    """A check's verdict: the selector broke the contract (the message says how)."""


def describe_exc(exc: BaseException) -> str:
    """``TypeName: first line of the message``, at most 300 characters."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def show(x: Any) -> str:
    """A short readable form of an output, for messages."""
    text = np.array2string(x, threshold=8, edgeitems=3) if isinstance(x, np.ndarray) else repr(x)
    return text if len(text) <= 120 else text[:117] + "..."


def is_real_number(x: Any) -> bool:
    """A real int/float or NumPy real scalar (not bool)."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)
    )


def call(sel: Any, q: ArrayLike, d: ArrayLike | None, rng: Any, what: str) -> Any:
    """``sel.select(q, d, rng)``; a warning on valid input is a failure (a NaN on its way).
    ``what`` names the call in the failure message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = sel.select(q, d, rng)
        except Exception as exc:
            raise Failure(f"{what}: select raised {describe_exc(exc)} on valid input") from exc
    if caught:
        w = caught[0]
        raise Failure(f"{what}: select emitted {w.category.__name__}: {w.message} on valid input")
    return out


def indices(out: Any, batch_shape: tuple[int, ...], k: int, what: str) -> NDArray[np.int64]:
    """Check the output contract (integer array of shape ``batch_shape`` in ``[0, K)``)."""
    if batch_shape == () and isinstance(out, (int, np.integer)) and not isinstance(out, bool):
        out = np.asarray(out)
    if not isinstance(out, np.ndarray):
        raise Failure(f"{what}: returned {type(out).__name__}, expected a numpy.ndarray")
    if not np.issubdtype(out.dtype, np.integer):
        raise Failure(f"{what}: returned dtype {out.dtype}, expected integers (int64)")
    if out.shape != batch_shape:
        raise Failure(f"{what}: returned shape {out.shape}, expected {batch_shape}")
    if np.iinfo(out.dtype).max < k - 1:
        raise Failure(f"{what}: returned dtype {out.dtype}, which cannot hold index {k - 1}")
    bad = (out < 0) | (out >= k)
    if np.any(bad):
        value = int(np.asarray(out)[bad].ravel()[0])
        raise Failure(f"{what}: returned index {value} outside [0, {k}) for K = {k}")
    return out.astype(np.int64, copy=False)


def draw(sel: Any, q: ArrayLike, d: ArrayLike | None, rng: Any, what: str) -> NDArray[np.int64]:
    """``sel.select(q, d, rng)`` on valid input, its output checked by :func:`indices`."""
    qa = np.asarray(q)
    return indices(call(sel, q, d, rng, what), qa.shape[:-1], qa.shape[-1], what)


def verdict(p: float, failure: str, success: str) -> str:
    """Raise :class:`Failure` (``failure``) when the p-value ``p`` is below :data:`P_MIN`, else
    return ``success``; both messages get the p-value appended."""
    if p < P_MIN:
        raise Failure(f"{failure} (chi-square p = {p:.2g})")
    return f"{success} (chi-square p = {p:.2g})"


@dataclass
class Context:
    """The selector under check and the kit's settings, handed to every check."""

    sel: Any
    epsilon: float
    private: bool
    root: int
    draws: int
    alpha: float
    pairs: list[NeighbouringPair] | None
    audit: list[AuditResult] = field(default_factory=list)

    def rng(self, name: str, i: int = 0) -> np.random.Generator:
        """A generator of the kit's own, fixed by ``rng`` and the check's name."""
        return np.random.default_rng([self.root, zlib.crc32(name.encode()), i])

    def seed(self, name: str, i: int = 0) -> int:
        """An int seed passed to the selector, fixed by ``rng`` and the check's name."""
        return int(self.rng(name, i).integers(2**62))

    def scale(self) -> float:
        """Scores in units of 2/eps, so that the laws tested are not degenerate at any eps."""
        return 2.0 / self.epsilon if math.isfinite(2.0 / self.epsilon) else 1.0
