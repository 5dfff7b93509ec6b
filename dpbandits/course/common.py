"""Small helpers shared by the exercises' checks: formatting and comparisons for students."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.course.checker import CheckFailed
from dpbandits.course.stats import ALPHA, chisquare_pvalue, fmt_p

__all__ = ["fmt", "fmt_vec", "require_close", "require_pmf", "seed_from"]


def fmt(x: Any, digits: int = 4) -> str:
    """A number for a student: ``0.7311``, ``1.2e-05``, ``inf``."""
    x = float(x)
    if x == 0:
        return "0"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def fmt_vec(v: ArrayLike, digits: int = 3) -> str:
    """``[0.1, 0.45, 0.8]``."""
    return "[" + ", ".join(fmt(x, digits) for x in np.asarray(v, dtype=float).ravel()) + "]"


def seed_from(rng: np.random.Generator) -> int:
    """An int seed drawn from the check's generator (for APIs that want an int)."""
    return int(rng.integers(0, 2**31 - 1))


def require_close(
    got: float, expected: float, what: str, *, rtol: float = 1e-7, atol: float = 1e-10
) -> None:
    """Fail with ``"<what> is <got>, expected <expected>"`` unless the two agree."""
    if np.isinf(expected) or np.isinf(got):
        if got != expected:
            raise CheckFailed(f"{what} is {fmt(got, 6)}, expected {fmt(expected, 6)}")
        return
    if not (np.isfinite(got) and abs(got - expected) <= atol + rtol * abs(expected)):
        raise CheckFailed(f"{what} is {fmt(got, 6)}, expected {fmt(expected, 6)}")


def require_pmf(
    counts: ArrayLike,
    probs: ArrayLike,
    what: str,
    labels: Sequence[str] | None = None,
) -> float:
    """Chi-square test of ``counts`` against ``probs``; fail below :data:`ALPHA`.

    The message names the cell whose frequency is furthest from its probability, e.g.
    ``"<what>: arm 0 is chosen with frequency 0.62, expected 0.73 (chi-square p = 1e-09)"``.
    """
    c = np.asarray(counts, dtype=float).ravel()
    p = np.asarray(probs, dtype=float).ravel()
    pval = chisquare_pvalue(c, p)
    if pval < ALPHA:
        n = c.sum()
        freq = c / n
        # The cell furthest from its probability (ties: the first, e.g. the true answer).
        gap = np.where(p == 0, np.where(c > 0, np.inf, 0.0), np.round(np.abs(freq - p), 9))
        j = int(np.argmax(gap))
        name = labels[j] if labels is not None else f"arm {j}"
        raise CheckFailed(
            f"{what}: {name} is chosen with frequency {fmt(freq[j], 3)}, expected "
            f"{fmt(p[j], 3)} (chi-square {fmt_p(pval)}, {int(n)} draws)"
        )
    return pval
