"""The frugal (local PCA) model and the user's local choice (paper 004, §3.3).

The server samples ``q2`` feature vectors ``f`` from its posterior, forms the rows
``[1, f, u_M(f, b_1), ..., u_M(f, b_k)]`` of ``X`` (``q2 x (1 + d + k)``), takes the SVD
``X = V Sigma W^T`` and sends the first ``p`` columns ``W_L`` of ``W`` with the ``k`` results.
The user finds the ``x`` whose first ``1 + d`` entries of ``W_L x`` are closest (l2) to
``[1; f_a]`` and reads its estimates of ``u_M(f_a, b)`` from the last ``k`` entries; it picks
the best estimate (:func:`frugal_choice`). With the true model instead, the user picks
``argmax_b u_M(f_a, b)`` over the ``k`` results (:func:`best_choice`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.core.arrays import FloatArray

__all__ = ["best_choice", "fit_frugal_model", "frugal_choice", "frugal_estimates"]


def fit_frugal_model(features: ArrayLike, utilities: ArrayLike, p: int = 20) -> FloatArray:
    """``W_L``: the top-``p`` right singular vectors of ``X = [1, F, U]``, ``(1+d+k, p')``.

    ``p' = min(p, rank)`` (fewer when there are fewer samples than ``p``).
    """
    f = np.asarray(features, dtype=np.float64)
    u = np.asarray(utilities, dtype=np.float64)
    if f.ndim != 2 or u.ndim != 2 or f.shape[0] != u.shape[0] or f.shape[0] == 0:
        raise ValueError(
            f"features (q2, d) and utilities (q2, k) need the same q2 >= 1 rows, got "
            f"{f.shape} and {u.shape}"
        )
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
        raise ValueError(f"p must be an integer >= 1, got {p!r}")
    x = np.concatenate([np.ones((f.shape[0], 1)), f, u], axis=1)
    # The right singular vectors of X are the eigenvectors of X^T X (squared singular values);
    # the small Gram matrix is several times cheaper than an SVD of X.
    lam, vec = np.linalg.eigh(x.T @ x)
    order = np.argsort(-lam, kind="stable")
    lam, vec = lam[order], vec[:, order]
    rank = int((lam > lam[0] * 1e-12).sum()) if lam[0] > 0 else 1
    return np.ascontiguousarray(vec[:, : min(int(p), max(rank, 1))])


def frugal_estimates(model: ArrayLike, f: ArrayLike) -> FloatArray:
    """The user's estimates of ``u_M(f, b)`` for the ``k`` results from ``W_L`` and ``f``."""
    w = np.asarray(model, dtype=np.float64)
    fa = np.asarray(f, dtype=np.float64)
    head = 1 + fa.size
    if w.ndim != 2 or w.shape[0] <= head:
        raise ValueError(f"model has {w.shape[0]} rows; need 1 + d + k with d = {fa.size}")
    target = np.concatenate([[1.0], fa])
    x, *_ = np.linalg.lstsq(w[:head], target, rcond=None)
    return w[head:] @ x


def frugal_choice(model: ArrayLike, f: ArrayLike) -> int:
    """Position (0..k-1) of the result with the best frugal estimate."""
    return int(np.argmax(frugal_estimates(model, f)))


def best_choice(true_utilities: ArrayLike) -> int:
    """Position of the result the user prefers under the true model."""
    return int(np.argmax(np.asarray(true_utilities, dtype=np.float64)))
