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
``dpbandits.quantiles.exact``).

Both mechanisms (float sampler) and the windows' step are compiled kernels, in
:mod:`dpbandits.quantiles.kernels` (``docs/performance.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.core import checks
from dpbandits.core.arms import RunArms, matrix_property
from dpbandits.core.checks import positive_int, positive_number
from dpbandits.quantiles.exact import grid_quantile_exact
from dpbandits.quantiles.kernels import (
    grid_quantile_rows,
    grid_values,
    smith_quantile_rows,
    snap_rows,
    window_estimate_grid,
    window_estimate_smith,
    window_push,
)

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
    "mechanism_options",
]


def check_level_pair(levels: Any, name: str = "levels") -> tuple[float, float]:
    """A pair of quantile levels in ``[0, 1]`` (the windowed sensitivities' ``levels``)."""
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__len__") or len(levels) != 2:
        raise ValueError(f"{name} must be a pair of quantile levels in [0, 1], got {levels!r}")
    return (checks.unit_interval(levels[0], name), checks.unit_interval(levels[1], name))


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


def mechanism_options(options: Mapping[str, Any], grid_size: int, prefix: str = "") -> Mechanism:
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
    checks.one_of(method, METHODS, f"{prefix}method")
    m = checks.integer(options.get("grid_size", grid_size), f"{prefix}grid_size")
    # 2**52: every grid index and every count of grid points is exact in float64
    if not 1 <= m <= 2**52:
        raise ValueError(f"{prefix}grid_size must be in [1, 2**52], got {m!r}")
    w = checks.number(options.get("endpoint_mass", DEFAULT_ENDPOINT_MASS), f"{prefix}endpoint_mass")
    if not 0.0 <= w <= 1e6:
        raise ValueError(f"{prefix}endpoint_mass must be finite and in [0, 1e6], got {w!r}")
    sampler = options.get("sampler", "float")
    checks.one_of(sampler, SAMPLERS, f"{prefix}sampler")
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
    exactly this law (``dpbandits.quantiles.exact``).

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
    qf = checks.unit_interval(q, "q")  # checked here so that the error names ``q``, not ``qs``
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
    levels = [checks.unit_interval(q, "qs") for q in np.atleast_1d(checks.real_array(qs, "qs"))]
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
    order of the replications, in one kernel for all of them (:func:`window_estimate_smith`,
    :func:`window_estimate_grid` for the grid mechanism's float sampler).  ``values`` (R, K)
    current estimates, ``n_estimates`` (R, K) number of quantile pairs released per
    (replication, arm) -- what the privacy ledger records.  NaN rewards raise ValueError.
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

    def kernel_args(self) -> tuple[Any, ...] | None:
        """The state and parameters of the compiled step (``window_update_smith`` if the flag
        ``smith`` is true, else ``window_update_grid``), for a compiled caller that holds the
        Generator, besides ``lo``, ``hi``: ``(buf, fill, values, n_est, smith, levels,
        eps_level, grid_size, endpoint_mass, floor, util, exp_util)``; ``None`` for the exact
        sampler (no kernel)."""
        if not (self.method == "smith" or self._compiled):
            return None
        return (self._buf, self._fill, self._values, self._n_est, self.method == "smith",
                self._levels, self._eps_level, self.grid_size, self.endpoint_mass, self.floor,
                self._util, self._exp_util)  # fmt: skip

    @property
    def generator(self) -> np.random.Generator:
        """The Generator of the mechanism's draws (a compiled caller draws from it)."""
        return self._rng

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
        if self.method == "smith":
            uu = self._rng.random((full.size, len(self.levels), 2))  # numpy's draws, C order
            window_estimate_smith(
                self._buf, self._fill, self._values, self._n_est, full, self._util,
                self._exp_util, self.lo, self.hi, self.floor, uu,
            )  # fmt: skip
            return
        if self._compiled:  # the grid mechanism's float sampler (window_estimate_grid)
            uu = self._rng.random((full.size, len(self.levels), 2))  # numpy's draws, C order
            window_estimate_grid(
                self._buf, self._fill, self._values, self._n_est, full, self._levels,
                self._eps_level, self.lo, self.hi, self.grid_size, self.endpoint_mass,
                self.floor, uu,
            )  # fmt: skip
            return
        # the grid mechanism's exact sampler
        k = _snap_sorted(self._buf[full], self.lo, self.hi, self.grid_size)
        j = _grid_draw(k, self.levels, self.epsilon, self._mech, self._rng)
        p = _grid_values(j, self.lo, self.hi, self.grid_size)
        self._values[full] = np.maximum(np.abs(p[:, 1] - p[:, 0]), self.floor)
        self._n_est[full] += 1
        self._fill[full] = 0  # each reward is used in exactly one estimate
