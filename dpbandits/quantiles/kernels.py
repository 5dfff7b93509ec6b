"""The compiled DP quantile mechanisms (App. H; docs/quantiles.md): the grid mechanism, Smith's
mechanism and the step of the windowed sensitivity estimates, as kernels (``dpbandits.core.jit``).

:mod:`dpbandits.quantiles` is the validated public interface (``dp_quantile``,
``dp_quantiles``, ``WindowedSensitivity``); these kernels are what it runs, public so that other
kernels (a fused private-agent step) can call them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbandits.core.jit import kernel
from dpbandits.core.sorting import shell_sort, stable_argsort

__all__ = [
    "grid_quantile_row",
    "grid_quantile_rows",
    "grid_value",
    "grid_values",
    "smith_quantile_rows",
    "snap",
    "snap_rows",
    "snap_sorted",
    "sort_in_range",
    "uniform_pairs",
    "window_estimate_grid",
    "window_estimate_smith",
    "window_push",
    "window_update_grid",
    "window_update_smith",
]


# --------------------------------------------------------------------------------------------
# Compiled kernels (dpbandits.core.jit): one implementation of each mechanism, used by the public
# functions below and callable from other kernels (a fused private-agent step). Every kernel
# does the IEEE operations of the numpy code it replaced, in the same order, so the numbers
# are the same to the last bit. The mechanisms take their uniforms as an array ``uu`` (rows,
# levels, 2) -- per row and level, the block's (interval's) draw then the point's -- which is
# exactly ``rng.random((rows, levels, 2))``: a Python caller draws it with numpy (handing a
# Generator to a compiled function costs tens of µs per call), a kernel that holds the
# Generator fills it with :func:`uniform_pairs` (numba draws numpy's numbers).
# --------------------------------------------------------------------------------------------


@kernel
def _maximum(a: float, b: float) -> float:
    """``numpy.maximum`` of two floats (NaN propagates from either side)."""
    return a if a >= b or a != a else b


@kernel
def _minimum(a: float, b: float) -> float:
    """``numpy.minimum`` of two floats (NaN propagates from either side)."""
    return a if a <= b or a != a else b


@kernel
def snap(x: float, lo: float, hi: float, grid_size: int) -> int:
    """Index of the grid point nearest to ``x`` (inside ``[lo, hi]``):
    ``clip(rint((x - lo) * (grid_size / (hi - lo))), 0, grid_size)``.

    A fixed map applied to each value separately, so replacing one value of the data replaces
    one index: neighbouring data stay neighbouring.
    """
    k = np.rint((x - lo) * (grid_size / (hi - lo)))
    return int(min(max(k, 0.0), float(grid_size)))


@kernel
def snap_sorted(x: Any, lo: float, hi: float, grid_size: int, out: Any) -> None:
    """The sorted :func:`snap` indices of the values ``x`` (n,) inside ``[lo, hi]`` into ``out``
    (n,): the grid mechanism's input.  A counting sort when the grid is not much larger than
    the data (a window's 64 intervals; a comparison sort of 200 indices with many ties costs
    several times more), else a comparison sort: the same sorted integers either way."""
    n = x.shape[0]
    if grid_size <= 4 * n:
        counts = np.zeros(grid_size + 1, dtype=np.int64)
        for i in range(n):
            counts[snap(x[i], lo, hi, grid_size)] += 1
        i = 0
        for j in range(grid_size + 1):
            for _ in range(counts[j]):
                out[i] = j
                i += 1
    else:
        keys = np.empty(n, dtype=np.int64)
        for i in range(n):
            keys[i] = snap(x[i], lo, hi, grid_size)
        order = np.empty(n, dtype=np.int64)
        stable_argsort(keys, order)
        for i in range(n):
            out[i] = keys[order[i]]


@kernel
def snap_rows(x: Any, lo: float, hi: float, grid_size: int, out: Any) -> None:
    """:func:`snap_sorted` of every row of ``x`` (M, n) into ``out`` (M, n)."""
    for r in range(x.shape[0]):
        snap_sorted(x[r], lo, hi, grid_size, out[r])


@kernel
def grid_value(j: int, lo: float, hi: float, grid_size: int) -> float:
    """Grid point ``lo + (hi - lo) (j / m)`` of index ``j``, exactly ``hi`` at ``j = m``."""
    if j >= grid_size:
        return hi
    return _minimum(lo + (hi - lo) * (j / grid_size), hi)


@kernel
def grid_values(j: Any, lo: float, hi: float, grid_size: int, out: Any) -> None:
    """:func:`grid_value` of every index of the flat array ``j`` into ``out``."""
    for i in range(j.shape[0]):
        out[i] = grid_value(j[i], lo, hi, grid_size)


@kernel
def grid_quantile_row(
    k: Any, levels: Any, epsilon: float, grid_size: int, endpoint_mass: float, uu: Any, out: Any
) -> None:
    """Grid indices ``out[l]`` of the eps-DP ``levels[l]``-quantiles of sorted snapped data
    ``k`` (n,), each level with ``epsilon``: the exponential mechanism of :func:`dp_quantile`
    (McSherry and Talwar 2007) over the candidates ``j = 0..m`` (``m = grid_size``), base mass 1
    each plus ``endpoint_mass * (m + 1)`` at ``0`` and at ``m`` (data independent).

    The utility of ``j`` for level ``q`` is minus the inverse sensitivity (Asi and Duchi 2020):
    ``-dist(q n, [L_j, U_j])``, ``L_j = #{k < j}``, ``U_j = #{k <= j}``; replacing one value
    moves ``L_j`` and ``U_j`` by at most 1, so ``P(j) ∝ mass_j exp(-eps dist / 2)`` is eps-DP.
    Between two distinct data values the utility is constant (Smith's ``-|i - q n|``), so the
    candidates form ``2n + 3`` blocks: the ``n + 1`` gaps ``i`` (``L = U = i``), the ``n`` data
    positions ``p`` (``L = p``, ``U`` = 1 + position of the value's last occurrence; only a
    value's first occurrence carries the grid point's mass) and the two end points.  A block is
    drawn by inverse CDF on its weights (log-weights shifted by their maximum, which is finite:
    a block at distance 0 exists), with a target in ``(0, total]`` so that a zero-weight block
    is never chosen, then a uniform candidate inside it: ``uu[l]`` (L, 2) are level ``l``'s two
    uniforms on ``[0, 1)``, for the block and for the candidate (:func:`uniform_pairs`).
    """
    n = k.shape[0]
    nb = 2 * n + 3
    half_eps = 0.5 * epsilon
    w = np.empty(nb)
    # U of each data position, as floats: 1 + the position of the value's last occurrence
    upper = np.empty(n)
    run = float(n)
    for p in range(n - 1, -1, -1):
        last = float(n) if p + 1 < n and k[p + 1] == k[p] else float(p + 1)
        run = _minimum(last, run)
        upper[p] = run
    n_lo = 0.0  # values at the lower end point
    n_below_hi = 0  # values below the upper end point
    if n:
        if k[0] == 0:
            n_lo = upper[0]
        for p in range(n):
            if k[p] < grid_size:
                n_below_hi += 1
    n_hi = n - n_below_hi
    log_end = math.log(endpoint_mass * (grid_size + 1)) if endpoint_mass > 0 else -math.inf
    # gaps i = 0..n between k[i-1] and k[i] (sentinels -1 and m + 1): log of the number of
    # candidates (log 0 = -inf: an empty gap is never chosen), the same for every level
    log_gap = np.empty(n + 1)
    prev = -1
    for i in range(n + 1):
        nxt = k[i] if i < n else grid_size + 1
        count = nxt - prev - 1
        log_gap[i] = math.log(count) if count > 0 else -math.inf
        prev = nxt
    for lev in range(levels.shape[0]):
        qn = levels[lev] * n
        for i in range(n + 1):  # gaps: + Smith's utility -eps/2 |i - q n|
            w[i] = log_gap[i] + -half_eps * abs(i - qn)
        # data positions: -eps/2 dist(q n, [p, U_p]) + log mass (1, or 0 for a repeat)
        for p in range(n):
            a = _maximum(qn - upper[p], 0.0) * -half_eps
            a += -half_eps * _maximum(p - qn, 0.0)
            a += -math.inf if p > 0 and k[p] == k[p - 1] else 0.0
            w[n + 1 + p] = a
        # end points: [0, n_lo] and [n - n_hi, n], extra base mass endpoint_mass * (m + 1)
        w[nb - 2] = log_end - half_eps * _maximum(qn - n_lo, 0.0)
        w[nb - 1] = log_end - half_eps * _maximum((n - n_hi) - qn, 0.0)
        top = w[0]
        for i in range(1, nb):
            top = _maximum(top, w[i])
        total = 0.0
        for i in range(nb):
            # exp(-inf - top) = 0 (most blocks of a window are empty gaps or repeated values)
            v = 0.0 if w[i] == -math.inf and top != -math.inf else math.exp(w[i] - top)
            total = v if i == 0 else total + v
            w[i] = total  # the cumulative sum, in place
        u_block, u_point = uu[lev, 0], uu[lev, 1]
        target = (1.0 - u_block) * total
        # numpy counted the cumulative weights below the target: they are a prefix (the sums
        # never decrease, and a NaN, if any, stays), so the count is the first index not below
        b = 0
        while b < nb and w[b] < target:
            b += 1
        b = min(b, nb - 1)  # zero-weight blocks are never chosen
        if b == nb - 2:
            out[lev] = 0
        elif b == nb - 1:
            out[lev] = grid_size
        elif b > n:
            out[lev] = k[b - (n + 1)]
        else:
            left = k[b - 1] if b > 0 else -1
            right = k[b] if b < n else grid_size + 1
            count = max(right - left - 1, 0)
            out[lev] = left + 1 + min(int(u_point * count), count - 1)


@kernel
def grid_quantile_rows(
    k: Any, levels: Any, epsilon: float, grid_size: int, endpoint_mass: float, uu: Any, out: Any
) -> None:
    """:func:`grid_quantile_row` of every row of ``k`` (M, n) with the uniforms ``uu[r]``
    (``uu`` (M, L, 2), e.g. ``rng.random((M, L, 2))``) into ``out`` (M, L)."""
    for r in range(k.shape[0]):
        grid_quantile_row(k[r], levels, epsilon, grid_size, endpoint_mass, uu[r], out[r])


@kernel
def smith_quantile_rows(
    z: Any, util: Any, exp_util: Any, uu: Any, values: Any, intervals: Any
) -> None:
    """Smith's mechanism on end points ``z`` (M, n+2) for the L rows of ``util`` (L, n+1).

    Interval ``i`` (``0..n``) is ``[z_i, z_{i+1}]``; it is chosen with probability
    proportional to ``(z_{i+1} - z_i) exp(util_i)``.  Since ``util <= 0`` these weights are
    computed directly (``exp_util`` = ``exp(util)``) when no row's total underflows (the common
    case); otherwise, for every row of the call, in log space, shifted by the maximum utility
    over the intervals of positive width before adding the log widths (at a huge eps the
    utilities are ~1e16 apart and adding log widths first would round the widths away), with
    ``log 0 = -inf``.  Either way zero-width intervals get weight exactly 0.  The interval is
    drawn by inverse CDF with a target in ``(0, total]``, so a zero-weight interval is never
    chosen, and the output is uniform on it (kept inside: ``left + u (right - left)`` could
    round one ulp past ``right``).  ``uu`` (M, L, 2): the uniforms of each row and level, for
    the interval and for the point (e.g. ``rng.random((M, L, 2))``); ``values`` and
    ``intervals`` (M, L) receive the outputs.
    """
    m_rows, n2 = z.shape
    n_lev = util.shape[0]
    # the direct weights' cumulative sums of every row and level (kept: the common case);
    # the same products and sums as the log-space check, so a total is its cum's last entry
    cum = np.empty((m_rows, n_lev, n2 - 1))
    log_space = False
    for r in range(m_rows):
        for lev in range(n_lev):
            c = cum[r, lev]
            total = 0.0
            for i in range(n2 - 1):
                v = (z[r, i + 1] - z[r, i]) * exp_util[lev, i]
                total = v if i == 0 else total + v
                c[i] = total
            if total < 1e-250:
                log_space = True
    for r in range(m_rows):
        for lev in range(n_lev):
            c = cum[r, lev]
            if log_space:
                top = -math.inf
                for i in range(n2 - 1):
                    if z[r, i + 1] - z[r, i] > 0:
                        top = _maximum(top, util[lev, i])
                for i in range(n2 - 1):
                    width = z[r, i + 1] - z[r, i]
                    log_w = math.log(width) if width > 0 else -math.inf
                    v = math.exp((util[lev, i] - top) + log_w)
                    c[i] = v if i == 0 else c[i - 1] + v
            u_interval, u_point = uu[r, lev, 0], uu[r, lev, 1]
            target = (1.0 - u_interval) * c[n2 - 2]
            # i = the number of cumulative weights below the target (a prefix: the weights
            # are >= 0), by bisection
            lo_i, hi_i = 0, n2 - 1
            while lo_i < hi_i:
                mid = (lo_i + hi_i) >> 1
                if c[mid] < target:
                    lo_i = mid + 1
                else:
                    hi_i = mid
            i = lo_i
            left, right = z[r, i], z[r, i + 1]
            values[r, lev] = _minimum(left + u_point * (right - left), right)
            intervals[r, lev] = i


@kernel
def window_push(buf: Any, fill: Any, flat: Any, x: Any, full: Any) -> int:
    """Append ``x[r]`` to the window of stream ``flat[r]`` (rows of ``buf`` (S, w), ``fill``
    (S,) values in each); write the streams whose window just filled into ``full``, in order,
    and return their number."""
    n_full = 0
    window = buf.shape[1]
    for r in range(flat.shape[0]):
        s = flat[r]
        pos = fill[s]
        buf[s, pos] = x[r]
        fill[s] = pos + 1
        if pos + 1 == window:
            full[n_full] = s
            n_full += 1
    return n_full


@kernel
def window_estimate_grid(
    buf: Any, fill: Any, values: Any, n_est: Any, full: Any, levels: Any, epsilon: float,
    lo: float, hi: float, grid_size: int, endpoint_mass: float, floor: float, uu: Any,
) -> None:  # fmt: skip
    """The grid mechanism's estimate of every stream ``full[i]`` whose window (row of ``buf``
    (S, w), inside ``[lo, hi]``) is full, with the uniforms ``uu[i]`` (``uu`` (len(full), L,
    2)): its ``levels`` quantiles (``epsilon`` each), ``values[s] = max(|p_hi - p_lo|,
    floor)`` (two levels), one more estimate in ``n_est[s]``, the window emptied."""
    k = np.empty(buf.shape[1], dtype=np.int64)
    j = np.empty(levels.shape[0], dtype=np.int64)
    for i in range(full.shape[0]):
        s = full[i]
        snap_sorted(buf[s], lo, hi, grid_size, k)
        grid_quantile_row(k, levels, epsilon, grid_size, endpoint_mass, uu[i], j)
        p_lo = grid_value(j[0], lo, hi, grid_size)
        p_hi = grid_value(j[1], lo, hi, grid_size)
        values[s] = _maximum(abs(p_hi - p_lo), floor)
        n_est[s] += 1
        fill[s] = 0  # each reward is used in exactly one estimate


#: Buckets of :func:`sort_in_range` holding more values than this are sorted by :func:`shell_sort`.
BUCKET_INSERTION_MAX = 16


@kernel
def sort_in_range(x: Any, lo: float, hi: float, out: Any, work: Any) -> None:
    """``out = sorted(x)`` for values ``x`` inside ``[lo, hi]`` (no NaN); ``work``: int64
    scratch of at least ``3 len(x) + 3`` entries.

    A bucket sort: the values equal to ``lo``, ``2 len(x)`` buckets of equal width over
    ``[lo, hi]``, the values equal to ``hi`` (clipped rewards pile up at the end points; those
    two buckets hold equal values and are never sorted); a range bucket holding more than
    ``BUCKET_INSERTION_MAX`` values is sorted by :func:`shell_sort`; then one insertion pass
    over the whole array moves the values their bucket left out of order. The bucket index
    ``(v - lo) * scale`` is non-decreasing in ``v`` (rounded subtraction and multiplication are
    monotone), so the buckets are in order and the result is the sorted array -- the same
    values in the same order as numpy's sort. Counts in ``work[:2n + 3]``, each value's bucket
    in ``work[2n + 3:]``. Branches: a comparison sort of 200 fresh rewards mispredicts half of
    its own; a loop per bucket mispredicts its trip count at nearly every bucket (the former
    version, ~5 µs for a window of the shift experiment, ~25 ns per agent-step); the single
    pass mispredicts only where a bucket held values out of order (docs/performance.md,
    round 8)."""
    n = x.shape[0]
    nb = 2 * n  # range buckets 1..nb; bucket 0 holds the values equal to lo, nb + 1 to hi
    scale = nb / (hi - lo)
    # the buckets first, in a loop of their own (vectorised), then their counts
    for i in range(n):
        v = x[i]
        work[nb + 3 + i] = (v > lo) * (1 + min(max(int((v - lo) * scale), 0), nb - 1)) + (v == hi)
    for b in range(nb + 3):
        work[b] = 0
    for i in range(n):
        work[work[nb + 3 + i] + 1] += 1
    crowded = False
    for b in range(nb + 2):
        crowded |= (work[b + 1] > BUCKET_INSERTION_MAX) & (b > 0) & (b <= nb)
        work[b + 1] += work[b]
    for i in range(n):  # work[b]: the next free slot of bucket b, then the end of bucket b
        b = work[nb + 3 + i]
        out[work[b]] = x[i]
        work[b] += 1
    if crowded:  # (the end-point buckets hold equal values)
        for b in range(1, nb + 1):
            if work[b] - work[b - 1] > BUCKET_INSERTION_MAX:
                shell_sort(out, work[b - 1], work[b])
    for i in range(1, n):
        v = out[i]
        if out[i - 1] > v:  # rare: only inside a bucket
            j = i - 1
            while j >= 0 and out[j] > v:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = v


@kernel
def window_estimate_smith(
    buf: Any, fill: Any, values: Any, n_est: Any, full: Any, util: Any, exp_util: Any,
    lo: float, hi: float, floor: float, uu: Any,
) -> None:  # fmt: skip
    """Smith's mechanism's estimate of every stream ``full[i]`` whose window (row of ``buf``
    (S, w), inside ``[lo, hi]``) is full, with the uniforms ``uu[i]`` (``uu`` (len(full), L,
    2)): the end points ``lo <= sorted window <= hi`` of every full window, then
    :func:`smith_quantile_rows` on all of them in one call (its choice of log space spans the
    call), ``values[s] = max(|p_hi - p_lo|, floor)`` (two levels of ``util``/``exp_util``
    (L, w + 1)), one more estimate in ``n_est[s]``, the window emptied."""
    n_full, window = full.shape[0], buf.shape[1]
    z = np.empty((n_full, window + 2))
    work = np.empty(3 * window + 3, dtype=np.int64)
    # sorted into a contiguous array, then copied: sorting into the row slice z[i, 1:-1]
    # (a view numba cannot prove contiguous) took 5.3 instead of 2.3 µs for 200 rewards
    ordered = np.empty(window)
    for i in range(n_full):
        sort_in_range(buf[full[i]], lo, hi, ordered, work)
        z[i, 0] = lo
        for j in range(window):
            z[i, j + 1] = ordered[j]
        z[i, window + 1] = hi
    p = np.empty((n_full, util.shape[0]))
    intervals = np.empty((n_full, util.shape[0]), dtype=np.int64)
    smith_quantile_rows(z, util, exp_util, uu, p, intervals)
    for i in range(n_full):
        s = full[i]
        values[s] = _maximum(abs(p[i, 1] - p[i, 0]), floor)
        n_est[s] += 1
        fill[s] = 0  # each reward is used in exactly one estimate


@kernel
def uniform_pairs(rng: Any, uu: Any) -> None:
    """Fill ``uu`` (M, L, 2) from ``rng`` in C order: the numbers of ``rng.random((M, L, 2))``
    (numba's Generator draws numpy's numbers), for kernels that hold the Generator."""
    for r in range(uu.shape[0]):
        for lev in range(uu.shape[1]):
            for c in range(2):
                uu[r, lev, c] = rng.random()


@kernel
def window_update_grid(
    buf: Any, fill: Any, values: Any, n_est: Any, flat: Any, x: Any, levels: Any,
    epsilon: float, lo: float, hi: float, grid_size: int, endpoint_mass: float, floor: float,
    rng: Any, full: Any,
) -> None:  # fmt: skip
    """One step of :class:`WindowedSensitivity` with the grid mechanism (float sampler), for a
    kernel that holds the Generator ``rng``: :func:`window_push` of ``x`` (inside
    ``[lo, hi]``) into the windows ``flat``, then :func:`window_estimate_grid` of the windows
    that filled (``full``: scratch of ``len(flat)`` stream indices), with uniforms drawn from
    ``rng`` as the step-by-step class draws them.

    (The class itself draws with numpy and calls the two kernels: handing a Generator to a
    compiled function from Python costs tens of µs, more than a whole step.)"""
    n_full = window_push(buf, fill, flat, x, full)
    if n_full:
        uu = np.empty((n_full, levels.shape[0], 2))
        uniform_pairs(rng, uu)
        window_estimate_grid(buf, fill, values, n_est, full[:n_full], levels, epsilon, lo, hi,
                             grid_size, endpoint_mass, floor, uu)  # fmt: skip


@kernel
def window_update_smith(
    buf: Any, fill: Any, values: Any, n_est: Any, flat: Any, x: Any, util: Any, exp_util: Any,
    lo: float, hi: float, floor: float, rng: Any, full: Any,
) -> None:  # fmt: skip
    """:func:`window_update_grid` with Smith's mechanism (:func:`window_estimate_smith`)."""
    n_full = window_push(buf, fill, flat, x, full)
    if n_full:
        uu = np.empty((n_full, util.shape[0], 2))
        uniform_pairs(rng, uu)
        window_estimate_smith(buf, fill, values, n_est, full[:n_full], util, exp_util, lo, hi,
                              floor, uu)  # fmt: skip
