"""Dynamic pseudo-regret and pull frequencies of a chunk of runs, from its actions (App. H-1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["BLOCK", "action_frequencies", "regret_from_actions"]

BLOCK = 8192  # steps per block when turning actions into regret after the loop


def regret_from_actions(
    actions: NDArray[Any],
    record_steps: NDArray[np.int64],
    regret_table: NDArray[np.float64] | None,
    change_points: Sequence[int] = (),
) -> dict[str, NDArray[np.float64]]:
    """Cumulative dynamic pseudo-regret per run from the ``(T, n)`` actions and the ``(T, K)``
    table ``regret[t, a] = max_b mu_b(t) - mu_a(t)`` (``None``: every regret is NaN).

    Besides the curve at ``record_steps`` and the total: ``segment_regret`` (S, n), the regret
    accumulated in each segment between consecutive change points (S = number of change points
    + 1; the rows sum to the total), and for back-compatibility ``pre_change_regret`` /
    ``post_change_regret``, the split at the first change point.
    """
    T, n = actions.shape
    rec = record_steps
    cps = [c for c in change_points if 0 < c < T]
    if regret_table is None:
        nan_runs = np.full(n, np.nan)
        return {
            "regret": np.full((rec.size, n), np.nan),
            "total_regret": nan_runs,
            "pre_change_regret": nan_runs.copy(),
            "post_change_regret": nan_runs.copy(),
            "segment_regret": np.full((len(cps) + 1, n), np.nan),
        }
    curve = np.empty((rec.size, n))
    cum = np.zeros(n)
    # cumulative regret after c steps, for every change point c
    at_change = np.zeros((len(cps), n))
    cp_arr = np.asarray(cps, dtype=np.int64)
    for s0 in range(0, T, BLOCK):
        s1 = min(s0 + BLOCK, T)
        blk = actions[s0:s1].astype(np.intp)
        reg = np.take_along_axis(regret_table[s0:s1], blk, axis=1)
        creg = np.cumsum(reg, axis=0)
        creg += cum
        # recorded steps are 1-based counts: step s is row s - 1 - s0 of this block
        sel = (rec > s0) & (rec <= s1)
        curve[sel] = creg[rec[sel] - 1 - s0]
        csel = (cp_arr > s0) & (cp_arr <= s1)
        if csel.any():
            at_change[csel] = creg[cp_arr[csel] - 1 - s0]
        cum = creg[-1]
    total = cum.copy()
    bounds = np.concatenate([np.zeros((1, n)), at_change, total[None, :]])
    segments = np.diff(bounds, axis=0)
    if cps:
        pre, post = at_change[0].copy(), total - at_change[0]
    else:
        pre, post = total.copy(), np.full(n, np.nan)
    return {"regret": curve, "total_regret": total, "pre_change_regret": pre,
            "post_change_regret": post, "segment_regret": segments}  # fmt: skip


def action_frequencies(
    actions: NDArray[Any], K: int, rec: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Per-run pull counts ``(R, K)`` and, per recorded interval, the fraction of pulls of each
    arm over all runs ``(P, K)``."""
    T, n = actions.shape
    counts = np.zeros((n, K), dtype=np.int64)
    freq = np.zeros((rec.size, K))
    offsets = np.arange(n, dtype=np.int64) * K
    interval = np.searchsorted(rec, np.arange(1, T + 1), side="left")  # (T,) recorded interval
    for s0 in range(0, T, BLOCK):
        s1 = min(s0 + BLOCK, T)
        blk = actions[s0:s1].astype(np.int64)
        counts += np.bincount((blk + offsets).ravel(), minlength=n * K).reshape(n, K)
        cell = (interval[s0:s1, None] * K + blk).ravel()
        freq += np.bincount(cell, minlength=rec.size * K).reshape(rec.size, K)
    lengths = np.diff(np.concatenate([[0], rec]))
    freq /= (lengths * n)[:, None]
    return counts, freq
