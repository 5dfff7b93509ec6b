"""Dynamic pseudo-regret and pull frequencies of a chunk of runs, from its actions (App. H-1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.jit import kernel

__all__ = ["BLOCK", "action_frequencies", "regret_from_actions"]

BLOCK = 8192  # steps per block of the regret sums (kept: it fixes the order of the additions)


@kernel
def _accumulate_regret(actions: Any, table: Any, rec: Any, rec_order: Any, cps: Any,
                       cp_order: Any, curve: Any, at_change: Any, cum: Any,
                       block: int) -> None:  # fmt: skip
    """``cum`` (n,) becomes the total regret; ``curve[i]`` the cumulative regret after
    ``rec[i]`` steps, ``at_change[j]`` after ``cps[j]`` steps (``*_order``: their indices in
    increasing order). The sums are those of the blocked numpy form: within each block of
    ``block`` steps a running sum from zero, added to the total of the blocks before."""
    T, n = actions.shape
    running = np.empty(n)
    ri = 0
    ci = 0
    for s0 in range(0, T, block):
        s1 = min(s0 + block, T)
        running[:] = 0.0
        for t in range(s0, s1):
            for r in range(n):
                running[r] += table[t, actions[t, r]]
            step = t + 1
            while ri < rec_order.size and rec[rec_order[ri]] <= step:
                if rec[rec_order[ri]] == step:
                    for r in range(n):
                        curve[rec_order[ri], r] = running[r] + cum[r]
                ri += 1
            while ci < cp_order.size and cps[cp_order[ci]] <= step:
                if cps[cp_order[ci]] == step:
                    for r in range(n):
                        at_change[cp_order[ci], r] = running[r] + cum[r]
                ci += 1
        for r in range(n):
            cum[r] = running[r] + cum[r]


#: Up to this many arms the pulls are counted arm by arm (comparisons the compiler vectorises),
#: beyond it by one indexed increment per pull.
COUNT_BY_ARM_MAX_K = 16


@kernel
def _count_pulls(actions: Any, rec: Any, counts: Any, freq: Any) -> None:
    """``counts[r, a]``: pulls of arm ``a`` in run ``r``; ``freq[i, a]``: pulls of arm ``a``
    over all runs in the steps ``(rec[i - 1], rec[i]]`` (``rec`` increasing, ``rec[-1] >= T``).

    An interval's pulls are tallied per arm as integers (exact, so ``freq`` is what counting
    the pulls one by one gives) and added at its end: O(K) per interval, O(size of ``freq``)
    in all. For a few arms each step is counted arm by arm into per-arm rows, which the
    compiler vectorises (an indexed increment per pull costs ~4 ns)."""
    T, n = actions.shape
    k = counts.shape[1]
    tally = np.zeros((1, k), dtype=np.int64)
    by_arm = k <= COUNT_BY_ARM_MAX_K
    runs = np.zeros((k, n), dtype=np.int64) if by_arm else np.zeros((0, 0), dtype=np.int64)
    i = 0
    for t in range(T):
        while rec[i] < t + 1:
            _close_interval(tally, freq, i)
            i += 1
        row = actions[t]
        if by_arm:
            for a in range(k):
                hits = 0
                arm = runs[a]
                for r in range(n):
                    hit = np.int64(row[r] == a)
                    arm[r] += hit
                    hits += hit
                tally[0, a] += hits
        else:
            for r in range(n):
                a = row[r]
                counts[r, a] += 1
                tally[0, a] += 1
    if T:
        _close_interval(tally, freq, i)
    if by_arm:
        for r in range(n):
            for a in range(k):
                counts[r, a] += runs[a, r]


@kernel
def _close_interval(tally: Any, freq: Any, i: int) -> None:
    for a in range(tally.shape[1]):
        freq[i, a] += float(tally[0, a])
        tally[0, a] = 0


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
    rec_order = np.argsort(rec, kind="stable")
    cp_order = np.argsort(cp_arr, kind="stable")
    _accumulate_regret(actions, regret_table, np.asarray(rec, dtype=np.int64), rec_order, cp_arr,
                       cp_order, curve, at_change, cum, BLOCK)  # fmt: skip
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
    rec = np.asarray(rec, dtype=np.int64)
    if T and (rec.size == 0 or np.any(np.diff(rec) <= 0) or rec[-1] < T):
        raise ValueError(f"rec must be increasing record steps ending at T = {T} or later")
    counts = np.zeros((n, K), dtype=np.int64)
    freq = np.zeros((rec.size, K))
    _count_pulls(actions, rec, counts, freq)
    lengths = np.diff(np.concatenate([[0], rec]))
    freq /= (lengths * n)[:, None]
    return counts, freq
