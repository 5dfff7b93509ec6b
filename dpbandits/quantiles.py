"""DP quantiles (exponential mechanisms) and windowed sensitivities (App. H; docs/quantiles.md).

- :func:`dp_quantile` -- one eps-DP quantile per leading index of ``x`` (batched);
- :func:`dp_quantiles` -- several levels of the same data, eps split equally (sequential
  composition);
- :class:`WindowedSensitivity` -- the App. H sensitivity estimate of every (replication, arm):
  ``d[a] = max(|p_0.9 - p_0.1|, floor)`` from disjoint windows of ``w`` rewards.

Two mechanisms, chosen by ``method`` (see ``docs/quantiles.md``):

- ``"grid"`` (default): the exponential mechanism over a data-independent grid of
  ``grid_size + 1`` points of ``[lo, hi]`` (end points included, as OpenDP's quantile) with the
  inverse-sensitivity utility, which is right on tied and discrete data;
- ``"smith"``: Smith's (2011) continuous mechanism, as in App. H; on tied data it gives the
  ties zero weight (see :func:`dp_quantile`).

Two samplers for the grid mechanism, chosen by ``sampler``: ``"float"`` (default; float64
weights, inverse CDF) and ``"exact"`` (exactly the mechanism's law, integer randomness only;
``dpbandits.quantiles_exact``).

Both mechanisms (float sampler) and the windows' step are compiled kernels (``dpbandits.jit``;
``docs/performance.md``), public so that other kernels can call them: :func:`snap_sorted`,
:func:`grid_quantile_row`, :func:`grid_value`, :func:`smith_quantile_rows`,
:func:`window_push`, :func:`window_estimate_grid`, :func:`window_update_grid`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import checks
from dpbandits.arms import RunArms, matrix_property
from dpbandits.checks import positive_int, positive_number
from dpbandits.jit import kernel
from dpbandits.quantiles_exact import grid_quantile_exact

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "DEFAULT_ENDPOINT_MASS",
    "DEFAULT_GRID_SIZE",
    "DEFAULT_WINDOW_GRID_SIZE",
    "METHODS",
    "Mechanism",
    "SAMPLERS",
    "QuantileOptions",
    "WindowedSensitivity",
    "check_level_pair",
    "dp_quantile",
    "dp_quantiles",
    "grid_quantile_row",
    "grid_quantile_rows",
    "grid_value",
    "grid_values",
    "mechanism_options",
    "smith_quantile_rows",
    "snap",
    "snap_rows",
    "snap_sorted",
    "uniform_pairs",
    "window_estimate_grid",
    "window_push",
    "window_update_grid",
]


def _check_level(q: Any, name: str = "q") -> float:
    qf = checks.number(q, name)
    if not 0.0 <= qf <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {q!r}")
    return qf


def check_level_pair(levels: Any, name: str = "levels") -> tuple[float, float]:
    """A pair of quantile levels in ``[0, 1]`` (the windowed sensitivities' ``levels``)."""
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__len__") or len(levels) != 2:
        raise ValueError(f"{name} must be a pair of quantile levels in [0, 1], got {levels!r}")
    return (_check_level(levels[0], name), _check_level(levels[1], name))


def _intervals(
    x: NDArray[np.float64], lo: float, hi: float, clip: bool = True
) -> NDArray[np.float64]:
    """Sorted clipped data with end points: ``z_0 = lo <= z_1 <= ... <= z_n <= z_{n+1} = hi``.

    ``clip=False`` when ``x`` is already inside ``[lo, hi]``.
    """
    z = np.empty(x.shape[:-1] + (x.shape[-1] + 2,))
    z[..., 0] = lo
    z[..., -1] = hi
    if clip:
        np.clip(x, lo, hi, out=z[..., 1:-1])
    else:
        z[..., 1:-1] = x
    z[..., 1:-1].sort(axis=-1)
    return z


def _utility(n: int, levels: Sequence[float], epsilon: float) -> NDArray[np.float64]:
    """``eps u_i / 2`` with ``u_i = -|i - q n|``, ``i = 0..n``, one row per level (L, n+1)."""
    i = np.arange(n + 1)
    return np.stack([(-0.5 * epsilon) * np.abs(i - q * n) for q in levels])


def _exponential_quantile(
    z: NDArray[np.float64],
    util: NDArray[np.float64],
    rng: np.random.Generator,
    exp_util: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Smith's mechanism on end points ``z`` (..., n+2) for the L rows of ``util`` (L, n+1)
    (:func:`smith_quantile_rows`).  Returns (values, intervals), each of shape (..., L).
    ``exp_util`` = ``exp(util)`` may be passed precomputed."""
    lead = z.shape[:-1]
    z2 = np.ascontiguousarray(z.reshape(-1, z.shape[-1]))
    n_lev = util.shape[0]
    values = np.empty((z2.shape[0], n_lev))
    intervals = np.empty((z2.shape[0], n_lev), dtype=np.int64)
    e = np.exp(util) if exp_util is None else exp_util
    uu = rng.random((z2.shape[0], n_lev, 2))  # one draw for the interval, one for the point
    smith_quantile_rows(z2, util, e, uu, values, intervals)
    return values.reshape(lead + (n_lev,)), intervals.reshape(lead + (n_lev,))


# --------------------------------------------------------------------------------------------
# Compiled kernels (dpbandits.jit): one implementation of each mechanism, used by the public
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
        for i in range(n):
            out[i] = snap(x[i], lo, hi, grid_size)
        out.sort()


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
    cum = np.empty(n2 - 1)
    log_space = False
    for r in range(m_rows):
        for lev in range(n_lev):
            total = 0.0
            for i in range(n2 - 1):
                v = (z[r, i + 1] - z[r, i]) * exp_util[lev, i]
                total = v if i == 0 else total + v
            if total < 1e-250:
                log_space = True
    for r in range(m_rows):
        for lev in range(n_lev):
            if log_space:
                top = -math.inf
                for i in range(n2 - 1):
                    if z[r, i + 1] - z[r, i] > 0:
                        top = _maximum(top, util[lev, i])
                for i in range(n2 - 1):
                    width = z[r, i + 1] - z[r, i]
                    log_w = math.log(width) if width > 0 else -math.inf
                    v = math.exp((util[lev, i] - top) + log_w)
                    cum[i] = v if i == 0 else cum[i - 1] + v
            else:
                for i in range(n2 - 1):
                    v = (z[r, i + 1] - z[r, i]) * exp_util[lev, i]
                    cum[i] = v if i == 0 else cum[i - 1] + v
            u_interval, u_point = uu[r, lev, 0], uu[r, lev, 1]
            target = (1.0 - u_interval) * cum[n2 - 2]
            i = 0  # the number of cumulative weights below the target (a prefix)
            while i < n2 - 1 and cum[i] < target:
                i += 1
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


# --------------------------------------------------------------------------------------------
# The grid mechanism: right on tied and discrete data
# --------------------------------------------------------------------------------------------

#: Quantile mechanisms accepted by ``method``.
METHODS: tuple[str, ...] = ("grid", "smith")
#: Default number of grid intervals: candidates ``lo + j (hi - lo) / 2**16``, ``j = 0..2**16``.
DEFAULT_GRID_SIZE = 2**16
#: Default grid of :class:`WindowedSensitivity`: 64 intervals of the reward range. Its estimate
#: is a noise scale, whose DP error (a few hundredths of the range for 200 rewards at eps_p = 1)
#: dwarfs 1/64; a coarse grid resolves ties between interior values, narrow reward
#: distributions and the end points better (docs/quantiles.md).
DEFAULT_WINDOW_GRID_SIZE = 2**6
#: Default extra base mass of each end point, as a fraction of the whole grid's mass.
DEFAULT_ENDPOINT_MASS = 0.1


#: Samplers of the grid mechanism accepted by ``sampler``.
SAMPLERS: tuple[str, ...] = ("float", "exact")


class QuantileOptions(TypedDict, total=False):
    """Keyword options of the quantile mechanism, shared by :func:`dp_quantile`,
    :func:`dp_quantiles` and :class:`WindowedSensitivity` (defaults in brackets).

    - ``method`` (``"grid"``): ``"grid"`` or ``"smith"`` (module docstring);
    - ``grid_size`` (:data:`DEFAULT_GRID_SIZE`; :data:`DEFAULT_WINDOW_GRID_SIZE` for the windows):
      number of grid intervals of ``[lo, hi]``, in ``[1, 2**52]``;
    - ``endpoint_mass`` (:data:`DEFAULT_ENDPOINT_MASS`): extra base mass of each end point, as a
      fraction of the whole grid's, in ``[0, 1e6]``;
    - ``sampler`` (``"float"``): how the grid mechanism is drawn. ``"float"``: block weights in
      float64 and an inverse-CDF draw with a 53-bit uniform (fast; its probabilities are the
      mechanism's up to rounding). ``"exact"``: rejection from the base measure with exact
      coins (integer randomness and rational arithmetic only), so the output's law is exactly
      the eps-DP law; slower (docs/quantiles.md). ``"exact"`` needs ``method="grid"``: Smith's
      mechanism outputs a uniform real number, which a float cannot hold exactly.
    """

    method: str
    grid_size: int
    endpoint_mass: float
    sampler: str


class Mechanism(NamedTuple):
    """The validated options of the quantile mechanism (:func:`mechanism_options`)."""

    method: str
    grid_size: int
    endpoint_mass: float
    sampler: str


def mechanism_options(
    options: Mapping[str, Any], grid_size: int, prefix: str = ""
) -> Mechanism:
    """The validated :class:`QuantileOptions` (``grid_size`` is the caller's default).

    ``prefix`` is how the caller names the options, e.g. ``"quantile_"`` for the private
    agent's ``quantile_method``/``quantile_sampler``: errors name the caller's parameters.
    """
    unknown = sorted(set(options) - set(QuantileOptions.__annotations__))
    if unknown:
        raise TypeError(
            f"unexpected keyword argument {prefix}{unknown[0]!r}; the quantile options are "
            f"{[prefix + k for k in QuantileOptions.__annotations__]}"
        )
    method = options.get("method", "grid")
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"{prefix}method must be one of {list(METHODS)}, got {method!r}")
    m = checks.integer(options.get("grid_size", grid_size), f"{prefix}grid_size")
    # 2**52: every grid index and every count of grid points is exact in float64
    if not 1 <= m <= 2**52:
        raise ValueError(f"{prefix}grid_size must be in [1, 2**52], got {m!r}")
    w = checks.number(
        options.get("endpoint_mass", DEFAULT_ENDPOINT_MASS), f"{prefix}endpoint_mass"
    )
    if not 0.0 <= w <= 1e6:
        raise ValueError(f"{prefix}endpoint_mass must be finite and in [0, 1e6], got {w!r}")
    sampler = options.get("sampler", "float")
    if not isinstance(sampler, str) or sampler not in SAMPLERS:
        raise ValueError(f"{prefix}sampler must be one of {list(SAMPLERS)}, got {sampler!r}")
    if sampler == "exact" and method != "grid":
        raise ValueError(
            f"{prefix}sampler='exact' needs {prefix}method='grid', got {prefix}method="
            f"{method!r}: Smith's mechanism outputs a uniform point of a data-dependent "
            "interval, which no float holds exactly"
        )
    return Mechanism(method, m, w, sampler)


def _snap_sorted(x: NDArray[np.float64], lo: float, hi: float, grid_size: int) -> NDArray[np.int64]:
    """The sorted grid indices (:func:`snap_rows`) of every row of ``x`` (M, n) inside
    ``[lo, hi]``."""
    k = np.empty(x.shape, dtype=np.int64)
    snap_rows(np.ascontiguousarray(x), lo, hi, grid_size, k)
    return k


def _grid_values(j: NDArray[np.int64], lo: float, hi: float, grid_size: int) -> NDArray[np.float64]:
    """:func:`grid_value` of every index of ``j``."""
    out = np.empty(j.shape)
    grid_values(np.ascontiguousarray(j).reshape(-1), lo, hi, grid_size, out.reshape(-1))
    return out


def _grid_draw(
    k: NDArray[np.int64],
    levels: Sequence[float],
    epsilon: float,
    mech: Mechanism,
    rng: np.random.Generator,
) -> NDArray[np.int64]:
    """Grid indices (M, L) of the grid mechanism on sorted snapped ``k`` (M, n), ``epsilon``
    split equally between the levels, drawn with ``mech.sampler``."""
    m, w = mech.grid_size, mech.endpoint_mass
    if mech.sampler == "exact":  # the exact rational split: the levels sum to epsilon exactly
        split = Fraction(epsilon) / len(levels)
        return grid_quantile_exact(k, tuple(levels), split, m, w, rng)
    j = np.empty((k.shape[0], len(levels)), dtype=np.int64)
    lv = np.asarray(levels, dtype=np.float64)
    uu = rng.random((k.shape[0], len(levels), 2))  # one draw for the block, one for the point
    grid_quantile_rows(k, lv, epsilon / len(levels), m, w, uu, j)
    return j


def dp_quantile(
    x: ArrayLike,
    q: float,
    epsilon: float,
    lo: float,
    hi: float,
    rng: np.random.Generator | int | None = None,
    **options: Unpack[QuantileOptions],
) -> NDArray[np.float64] | float:
    """eps-DP ``q``-quantile of the last axis of ``x`` (App. H; ``docs/quantiles.md``).

    ``x`` (..., n) is clipped to ``[lo, hi]``; neighbouring data sets replace one value (fixed
    ``n``).  One independent draw per leading index; returns an array of shape
    ``x.shape[:-1]`` (a float for 1-d ``x``), always in ``[lo, hi]``.  NaN in ``x`` raises
    ValueError.  ``options``: ``method``, ``grid_size``, ``endpoint_mass``, ``sampler``
    (:class:`QuantileOptions`).

    ``method="grid"`` (default): the values are snapped to the nearest of the grid points
    ``lo + j (hi - lo) / grid_size`` and the exponential mechanism (McSherry and Talwar 2007)
    chooses a grid point ``j`` with probability ``∝ mass_j exp(-eps dist(q n, [L_j, U_j]) / 2)``,
    ``L_j = #{x < j}``, ``U_j = #{x <= j}`` (the inverse sensitivity of Asi and Duchi 2020;
    OpenDP's quantile is the same kind of mechanism over a user-given candidate set).  The base
    mass is 1 per grid point plus ``endpoint_mass * (grid_size + 1)`` at ``lo`` and at ``hi``:
    rewards clipped to ``[lo, hi]`` (and Bernoulli rewards) pile up exactly there.  The output
    is a grid point.  Right on tied data: on ``n`` equal values the median is their grid point
    (error at most ``(hi - lo) / (2 grid_size)``) except with probability about
    ``(1 + 2 endpoint_mass) grid_size exp(-eps n / 4)``.  ``sampler="exact"`` draws ``j`` from
    exactly this law (``dpbandits.quantiles_exact``).

    ``method="smith"``: Smith's (2011) mechanism.  With the sorted clipped values and
    ``z_0 = lo``, ``z_{n+1} = hi``, interval ``i`` is chosen with probability
    ``∝ (z_{i+1} - z_i) exp(-eps |i - q n| / 2)`` and a uniform point of it is returned.
    Tied values make zero-width intervals, which have probability exactly 0, so the output
    never equals a tied value (except ``lo``/``hi`` themselves with probability 0): on ``n``
    equal values ``v`` it is uniform on ``[lo, v]`` with probability
    ``(v - lo) e^{-eps q n / 2} / ((v - lo) e^{-eps q n / 2} + (hi - v) e^{-eps (1 - q) n / 2})``
    and uniform on ``[v, hi]`` otherwise; on data taking few distinct values (e.g. Bernoulli
    rewards) it is a draw on the gaps between them, whatever eps.  It is still eps-DP and
    always defined (the end points keep a total width ``hi - lo > 0``, even for ``n = 0``).
    """
    qf = _check_level(q)  # checked here so that the error names ``q``, not ``qs``
    mech = mechanism_options(options, DEFAULT_GRID_SIZE)
    value = _release(x, [qf], epsilon, lo, hi, rng, mech)[..., 0]  # one level: all of epsilon
    return float(value) if value.ndim == 0 else value


def dp_quantiles(
    x: ArrayLike,
    qs: Sequence[float] | ArrayLike,
    epsilon: float,
    lo: float,
    hi: float,
    rng: np.random.Generator | int | None = None,
    **options: Unpack[QuantileOptions],
) -> NDArray[np.float64]:
    """Several DP quantiles of the same data, each with ``epsilon / len(qs)`` (App. H).

    Sequential composition: the whole vector is eps-DP.  Returns shape ``x.shape[:-1] +
    (len(qs),)``; the data are sorted once.  ``options`` as in :func:`dp_quantile`.
    """
    levels = [_check_level(q, "qs") for q in np.atleast_1d(checks.real_array(qs, "qs"))]
    if not levels:
        raise ValueError("qs must contain at least one quantile level")
    return _release(x, levels, epsilon, lo, hi, rng, mechanism_options(options, DEFAULT_GRID_SIZE))


def _release(
    x: ArrayLike,
    levels: list[float],
    epsilon: float,
    lo: float,
    hi: float,
    rng: np.random.Generator | int | None,
    mech: Mechanism,
) -> NDArray[np.float64]:
    """:func:`dp_quantiles` once the levels and options are checked."""
    eps = positive_number(epsilon, "epsilon")
    lo_f, hi_f = checks.bounds(lo, hi)
    xa = checks.real_array(x, "x", finite=False)  # NaN is refused below, +-inf clipped
    if xa.ndim == 0:
        raise ValueError("x must have at least one axis (the data axis)")
    if np.isnan(xa).any():
        raise ValueError("x must not contain NaN")
    gen = checks.generator(rng)
    if mech.method == "smith":
        util = _utility(xa.shape[-1], levels, eps / len(levels))
        return _exponential_quantile(_intervals(xa, lo_f, hi_f), util, gen)[0]
    lead, n, m = xa.shape[:-1], xa.shape[-1], mech.grid_size
    rows = math.prod(lead)
    k = _snap_sorted(np.clip(xa, lo_f, hi_f).reshape(rows, n), lo_f, hi_f, m)
    j = _grid_draw(k, levels, eps, mech, gen)
    return _grid_values(j, lo_f, hi_f, m).reshape(lead + (len(levels),))


class WindowedSensitivity:
    """Windowed DP sensitivity estimate of every (replication, arm) (App. H; docs/quantiles.md).

    Each arm's rewards (clipped to ``[lo, hi]``) fill a buffer; when ``window`` new rewards have
    arrived, ``p_lo, p_hi = dp_quantiles(buffer, levels, epsilon, **options)``
    (``epsilon`` = eps_p for the pair, split equally: eps_p/2 each),
    ``d[a] = max(|p_hi - p_lo|, floor)`` and the buffer is emptied -- each reward is used in
    exactly one estimate, so the pairs are computed on disjoint data (App. H).  Before the
    first estimate ``d[a] = initial`` (default ``hi - lo``).

    ``options`` (:class:`QuantileOptions`): ``method="grid"`` (default) is right on tied and
    discrete rewards (Bernoulli rewards, or clipped rewards piling up at ``lo``/``hi``) as well
    as on continuous ones; ``"smith"`` is the paper's mechanism, which returns noise on tied
    rewards (see :func:`dp_quantile`).  The method is a fixed parameter, never chosen from the
    rewards: a choice made by looking at the private rewards (e.g. "are there ties?") would
    itself leak them.  The default grid is coarser than :func:`dp_quantile`'s:
    ``grid_size=64`` intervals of ``[lo, hi]`` (:data:`DEFAULT_WINDOW_GRID_SIZE`).
    ``sampler="exact"`` draws the grid mechanism exactly (slower, docs/quantiles.md).

    ``update(actions (R,), rewards (R,))`` is one compiled pass over the replications
    (:func:`window_push`); estimates run only for the buffers that filled in this step, in the
    order of the replications (:func:`window_estimate_grid` for the grid mechanism's float
    sampler, one kernel for all of them).  ``values`` (R, K) current estimates,
    ``n_estimates`` (R, K) number of quantile pairs released per (replication, arm) -- what the
    privacy ledger records.  NaN rewards raise ValueError.
    """

    def __init__(
        self,
        n_runs: int,
        n_arms: int,
        epsilon: float,
        lo: float = 0.0,
        hi: float = 1.0,
        window: int = 200,
        levels: Sequence[float] = (0.1, 0.9),
        floor: float = 1e-6,
        initial: float | None = None,
        rng: np.random.Generator | int | None = None,
        **options: Unpack[QuantileOptions],
    ) -> None:
        self.layout = RunArms(n_runs, n_arms)
        self.n_runs, self.n_arms = self.layout.n_runs, self.layout.n_arms
        self._mech = mechanism_options(options, DEFAULT_WINDOW_GRID_SIZE)
        self.method, self.grid_size, self.endpoint_mass, self.sampler = self._mech
        self.epsilon = positive_number(epsilon, "epsilon")
        self.lo, self.hi = checks.bounds(lo, hi)
        self.window = positive_int(window, "window")
        self.levels = check_level_pair(levels)
        self.floor = positive_number(floor, "floor")
        self.initial = self.hi - self.lo if initial is None else positive_number(initial, "initial")
        self._rng = checks.generator(rng)
        s = self.layout.size
        checks.memory(
            s * (self.window + 4), f"n_runs * n_arms * window = {n_runs} * {n_arms} * {window}"
        )
        self._buf = np.empty((s, self.window))
        self._buf_flat = self._buf.reshape(-1)
        self._fill = np.zeros(s, dtype=np.int64)
        self._values = np.full(s, self.initial)
        self._n_est = np.zeros(s, dtype=np.int64)
        # eps_p split equally between the two levels (sequential composition)
        self._util = _utility(self.window, self.levels, self.epsilon / 2)
        self._exp_util = np.exp(self._util)
        self._levels = np.asarray(self.levels, dtype=np.float64)
        self._eps_level = self.epsilon / len(self.levels)
        self._compiled = self.method == "grid" and self.sampler == "float"
        self._full = np.empty(self.n_runs, dtype=np.intp)  # streams filled by a step

    def __repr__(self) -> str:
        return (
            f"WindowedSensitivity(n_runs={self.n_runs}, n_arms={self.n_arms}, "
            f"epsilon={self.epsilon}, lo={self.lo}, hi={self.hi}, window={self.window}, "
            f"levels={self.levels}, floor={self.floor}, initial={self.initial}, "
            f"method={self.method!r}, grid_size={self.grid_size}, "
            f"endpoint_mass={self.endpoint_mass}, sampler={self.sampler!r})"
        )

    values = matrix_property("_values", "Current sensitivity estimates d (R, K).")
    n_estimates = matrix_property(
        "_n_est", "Number of quantile pairs released so far per (replication, arm), (R, K)."
    )
    fill = matrix_property(
        "_fill", "Rewards waiting in each buffer (not yet used in any estimate), (R, K)."
    )

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        """Record one reward per replication; estimate where a window just filled."""
        self.update_flat(*self.layout.pulls(actions, rewards, self.lo, self.hi))

    def update_flat(self, flat: NDArray[np.intp], x: NDArray[np.float64]) -> None:
        """:meth:`update` on validated input (the agents' hot path): ``flat[r] = r K +
        actions[r]`` and ``x`` the rewards already clipped to ``[lo, hi]``; no checks
        (:func:`window_push`, then the estimates of the windows that filled)."""
        if flat.shape[0] > self._full.shape[0]:  # never with one pull per replication; but a
            self._full = np.empty(flat.shape[0], dtype=np.intp)  # kernel writes unchecked
        n_full = window_push(self._buf, self._fill, flat, x, self._full)
        if n_full:
            self._estimate(self._full[:n_full])

    @property
    def current(self) -> NDArray[np.float64]:
        """The current estimates (R, K) without a copy (read-only use; see :attr:`values`)."""
        return self.layout.matrix(self._values)

    def _estimate(self, full: NDArray[np.intp]) -> None:
        """Estimate the streams ``full`` whose windows just filled; empty their buffers.

        Same mechanism as ``dp_quantiles(buffer, levels, eps_p)`` (both levels at once, eps_p/2
        each), written for the per-step hot path: no re-validation, ``exp(util)`` precomputed,
        the buffers are already clipped.
        """
        if self._compiled:  # the grid mechanism's float sampler (window_estimate_grid)
            uu = self._rng.random((full.size, len(self.levels), 2))  # numpy's draws, C order
            window_estimate_grid(
                self._buf, self._fill, self._values, self._n_est, full, self._levels,
                self._eps_level, self.lo, self.hi, self.grid_size, self.endpoint_mass,
                self.floor, uu,
            )  # fmt: skip
            return
        if self.method == "grid":
            k = _snap_sorted(self._buf[full], self.lo, self.hi, self.grid_size)
            j = _grid_draw(k, self.levels, self.epsilon, self._mech, self._rng)
            p = _grid_values(j, self.lo, self.hi, self.grid_size)
        else:
            z = _intervals(self._buf[full], self.lo, self.hi, clip=False)  # clipped in update
            p = _exponential_quantile(z, self._util, self._rng, self._exp_util)[0]
        self._values[full] = np.maximum(np.abs(p[:, 1] - p[:, 0]), self.floor)
        self._n_est[full] += 1
        self._fill[full] = 0  # each reward is used in exactly one estimate
