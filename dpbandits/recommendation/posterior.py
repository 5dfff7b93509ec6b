"""The server's guesses of the user's features given the signal (paper 004, §3.1 and App. A).

- :func:`realuser_indices` -- ``L_eta^realuser(f)``: a training user ``a`` with probability
  proportional to ``exp(-|f - f_a|_1 / eta)`` (the exponential mechanism over ``A^tr``);
- :func:`capped_samples` -- ``L_eta^cap(f)``: ``f`` plus i.i.d. ``Laplace(eta)`` noise, each
  component capped to ``[0, 1]``, each half (liked, disliked genres) rescaled to sum to 1;
- :func:`nearest_user` -- the training user closest to the signal in l1 (the
  ``A_nopost-realuser`` baseline, §6.1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.recommendation.geo import check_eta
from dpbandits.selectors.base import RNGLike

__all__ = ["capped_samples", "l1_distances", "nearest_user", "realuser_indices"]

#: Rows of signals handled at once in the (signals x users x d) distance computation.
_CHUNK_ELEMENTS = 2**22


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def l1_distances(signals: ArrayLike, train: ArrayLike) -> NDArray[np.float64]:
    """``|f - f_a|_1`` for every signal (rows) and training user (columns)."""
    s = np.atleast_2d(np.asarray(signals, dtype=np.float64))
    t = np.asarray(train, dtype=np.float64)
    if s.shape[1] != t.shape[1]:
        raise ValueError(f"signals have d = {s.shape[1]}, training users d = {t.shape[1]}")
    out = np.empty((s.shape[0], t.shape[0]))
    rows = max(1, _CHUNK_ELEMENTS // max(1, t.size))
    for r0 in range(0, s.shape[0], rows):
        out[r0 : r0 + rows] = np.abs(s[r0 : r0 + rows, None, :] - t[None, :, :]).sum(axis=2)
    return out


def realuser_indices(
    signals: ArrayLike, train: ArrayLike, eta: float, size: int, rng: RNGLike = None
) -> NDArray[np.int64]:
    """``size`` draws per signal from ``L_eta^realuser``: indices into ``train``, ``(n, size)``."""
    e = check_eta(eta)
    size = _count(size, "size")
    gen = np.random.default_rng(rng)
    logw = -l1_distances(signals, train) / e
    logw -= logw.max(axis=1, keepdims=True)  # log-space: no underflow of all weights
    w = np.exp(logw)
    cdf = np.cumsum(w, axis=1)
    cdf /= cdf[:, -1:]
    u = gen.random((cdf.shape[0], size))
    idx = np.stack([np.searchsorted(c, ui, side="right") for c, ui in zip(cdf, u, strict=True)])
    return np.minimum(idx, cdf.shape[1] - 1).astype(np.int64)


def capped_samples(
    signal: ArrayLike, eta: float, size: int, rng: RNGLike = None
) -> NDArray[np.float64]:
    """``size`` draws from ``L_eta^cap(signal)`` (App. A), shape ``(size, d)``.

    A half whose capped entries are all 0 becomes uniform (the sum must be 1).
    """
    e = check_eta(eta)
    size = _count(size, "size")
    f = np.asarray(signal, dtype=np.float64)
    if f.ndim != 1 or f.size % 2:
        raise ValueError(f"signal must be a vector [like; dislike] of even length, got {f.shape}")
    gen = np.random.default_rng(rng)
    x = np.clip(f[None, :] + gen.laplace(0.0, e, size=(size, f.size)), 0.0, 1.0)
    g = f.size // 2
    for half in (slice(0, g), slice(g, 2 * g)):
        part = x[:, half]
        total = part.sum(axis=1, keepdims=True)
        x[:, half] = np.where(total > 0, part / np.where(total > 0, total, 1.0), 1.0 / g)
    return x


def nearest_user(signals: ArrayLike, train: ArrayLike) -> NDArray[np.int64]:
    """Index of the training user nearest (l1) to each signal."""
    return np.argmin(l1_distances(signals, train), axis=1).astype(np.int64)
