"""Shared core of the bandit environments: schedules, the clipped-Gaussian mean, the reward tape.

App. H-1 (App. H-1). Every environment of this package is a *schedule*: for each 0-based step
``t = 0, ..., horizon - 1`` it fixes the mean ``m_a(t)`` and standard deviation ``s_a(t)`` of every
arm ``a``. Rewards are either Gaussian clipped to ``[lo, hi]``, ``clip(N(m, s^2), lo, hi)``, or
Bernoulli with success probability ``m``. A schedule is deterministic, so its per-step tables
(means, sds, expected rewards, optimal arm, per-arm regret) are computed once, when the
environment is built, and read at every step.

Random draws (the *reward tape*): in step ``t`` copy ``i`` draws one standard normal ``z[t, i]``
(Gaussian arms) or one uniform ``u[t, i]`` (Bernoulli arms) from the environment's generator,
whichever arm is pulled, and the reward of arm ``a`` is ``clip(m_a(t) + s_a(t) z[t, i], lo, hi)``
or ``1[u[t, i] < m_a(t)]``. The draws are data independent: they are made in C-ordered blocks of
shape ``(block, R)`` that never cross the horizon, so an episode consumes exactly the stream of
``standard_normal((horizon, R))`` whatever the block size. Consequences, all tested:

- ``Env.reset(seed=s)`` and ``VectorEnv(num_envs=1).reset(seed=s)`` give identical rewards for
  identical actions (the single environment *is* the batched core with one copy);
- two agents run on the same seed face the same draws (common random numbers), which lowers the
  variance of regret differences without changing any arm's marginal reward distribution — an
  agent only ever observes one arm per step, so the coupling across arms is invisible to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dpbandits.core import checks
from dpbandits.core.arrays import FloatArray, IntArray
from dpbandits.core.checks import ParameterError
from dpbandits.core.jit import generator_address, kernel
from dpbandits.core.samplers import fill_standard_normal

ArmType = Literal["gaussian", "bernoulli"]
ARM_TYPES: tuple[str, ...] = ("gaussian", "bernoulli")

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# H(x) below is < phi(40) / 40**2 < 1e-350 for |x| >= 40, i.e. exactly 0.0 in double precision;
# clamping |x| there keeps the arithmetic finite (no overflow warnings) without changing a bit.
_X_MAX = 40.0
# Target number of float64 entries of one precomputed block (~ a few MB over all block arrays).
_BLOCK_ENTRIES = 1 << 16
_BLOCK_MAX = 4096
_INT64 = np.dtype(np.int64)
_UINT64 = np.dtype(np.uint64)


# --------------------------------------------------------------------------------------------
# Closed form (App. H-1)
# --------------------------------------------------------------------------------------------
#: Below this ``|x|``, :func:`_tail_excess` subtracts with ``erfc``; from it on, it uses the
#: continued fraction, with this many terms for ``|x| < 2.5``, ``< 4`` and above.
_CF_FROM = 1.5
_CF_TERMS = (250, 120, 60)
_SPLIT = 134217729.0  # 2^27 + 1: Dekker's splitting constant for float64


@kernel
def _normal_pdf(a: float) -> float:
    """``phi(a)`` to a few ulps for any ``a >= 0``: ``a^2`` rounded would put a relative error
    of ``a^2 eps / 2`` into the exponent, so ``a = ah + al`` with ``ah`` of 26 bits (``ah^2``
    exact) and ``exp(-a^2/2) = exp(-ah^2/2) exp(-(ah al + al^2/2))``."""
    c = a * _SPLIT
    ah = c - (c - a)
    al = a - ah
    return _INV_SQRT_2PI * math.exp(-0.5 * (ah * ah)) * math.exp(-(ah * al + 0.5 * (al * al)))


@kernel
def _tail_excess_fill(x: Any, out: Any) -> None:
    """``out[i] = H(x[i])`` (:func:`_tail_excess`) for 1-D ``x`` (finite or infinite)."""
    for i in range(x.shape[0]):
        a = min(abs(x[i]), _X_MAX)
        phi = _normal_pdf(a)
        if a < _CF_FROM:
            # little cancellation here (H > phi / 5): erfc is accurate to a few ulps
            out[i] = phi - a * (0.5 * math.erfc(a * _SQRT_HALF))
            continue
        n = _CF_TERMS[0] if a < 2.5 else (_CF_TERMS[1] if a < 4.0 else _CF_TERMS[2])
        t = 0.0  # T = 1/(a + 2/(a + 3/(a + ...))), evaluated from the innermost term
        for k in range(n, 1, -1):
            t = k / (a + t)
        t = 1.0 / (a + t)
        out[i] = phi * (t / (a + t))


def _tail_excess(x: FloatArray) -> FloatArray:
    """``H(x) = E[(Z - |x|)^+] = phi(a) - a Phi(-a)``, ``a = |x|``, ``Z ~ N(0, 1)``, elementwise,
    to a few ulps relative: at most 1.1e-15 on ``[0, 12]`` (tested against a 120-digit
    reference).

    The two terms nearly cancel for large ``a`` (``H ~ phi(a) / a^2``), so there ``H`` is
    written without a subtraction: with Laplace's continued fraction of the Mills ratio,
    ``Phi(-a)/phi(a) = 1/(a + T)`` with ``T = 1/(a + 2/(a + 3/(a + ...)))``, hence
    ``H = phi(a) T / (a + T)``, whose terms are all positive. For ``a < 1.5``, where the
    fraction converges slowly, the subtraction loses at most a few bits (``H > phi(a) / 5``)
    and ``Phi(-a)`` is ``erfc(a / sqrt 2) / 2``. ``|x| >= 40`` gives 0.0, the exact value
    rounded (``H(40) < 1e-350``).

    Until 2026-11-23 this was ``phi(a) (1 - a sqrt(pi/2) erfcx(a / sqrt 2))`` with scipy's
    ``erfcx``: within 1e-16 for ``a < 1.5`` but up to 3.4e-14 above (the ``1 - a R(a)``
    cancellation). The change moved the means of :func:`expected_clipped_normal` by at most
    9e-15 (for ``s`` up to 30; less for smaller ``s``) and spared every run the import of
    ``scipy.special``, 0.2 s of its start (docs/performance.md). Compiled:
    :func:`_tail_excess_fill`.
    """
    flat = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    out = np.empty(flat.shape)
    _tail_excess_fill(flat, out)
    return out.reshape(np.shape(x))


def expected_clipped_normal(
    m: npt.ArrayLike, s: npt.ArrayLike, lo: float = 0.0, hi: float = 1.0
) -> FloatArray:
    """Exact mean of ``clip(X, lo, hi)`` for ``X ~ N(m, s^2)`` (App. H-1).

    App. H-1 writes it as ``lo Phi(alpha) + m (Phi(beta) - Phi(alpha)) + s (phi(alpha) - phi(beta))
    + hi (1 - Phi(beta))`` with ``alpha = (lo - m)/s``, ``beta = (hi - m)/s``. Writing
    ``clip(X) = lo + (X - lo)^+ - (X - hi)^+`` gives the algebraically equal form used here,

        ``E = clip(m, lo, hi) + s (H(alpha) - H(beta))``,  ``H(x) = E[(Z - |x|)^+]``,

    a clipped mean plus a small correction that is accurate when clipping is heavy (``m`` far
    outside ``[lo, hi]`` or ``s`` tiny) where the textbook form cancels. Arrays broadcast.

    Raises ``ValueError`` if ``s <= 0``, ``lo >= hi`` or any input is not finite.
    """
    lo, hi = check_bounds(lo, hi)
    m_arr = np.asarray(m, dtype=np.float64)
    s_arr = np.asarray(s, dtype=np.float64)
    if not np.all(np.isfinite(m_arr)):
        raise ValueError(f"m must be finite, got {m_arr}")
    if not np.all(np.isfinite(s_arr) & (s_arr > 0)):
        raise ValueError(f"s must be finite and > 0, got {s_arr}")
    # (lo - m)/s may overflow to +-inf for s ~ 1e-308; H(+-inf) = 0 is then the exact limit.
    with np.errstate(over="ignore"):
        alpha = (lo - m_arr) / s_arr
        beta = (hi - m_arr) / s_arr
    out = np.clip(m_arr, lo, hi) + s_arr * (_tail_excess(alpha) - _tail_excess(beta))
    # Rounding may leave the result a few ulps outside [lo, hi]; the true mean lies inside.
    return np.asarray(np.clip(out, lo, hi), dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Validation helpers (shared by every environment)
# --------------------------------------------------------------------------------------------
def check_seed(seed: Any) -> int | None:
    """A ``reset(seed=...)``: ``None`` or a non-negative int (not bool), as the input policy says;
    a clear ``TypeError``/``ValueError`` instead of Gymnasium's generic seeding error."""
    return None if seed is None else checks.integer(seed, "seed", minimum=0)


def check_int(name: str, value: Any, *, minimum: int | None = None) -> int:
    """``value`` as ``int`` by the library's input policy; integral floats (``3e4``) are
    accepted, ``True`` is not."""
    return checks.integer(value, name, minimum=minimum, allow_integral_float=True)


def check_bounds(lo: Any, hi: Any) -> tuple[float, float]:
    """The reward range ``[lo, hi]``: finite and ``lo < hi``."""
    return checks.bounds(lo, hi)


def check_arm(arm: Any) -> ArmType:
    return checks.one_of(arm, ARM_TYPES, "arm")


def check_schedule_args(
    horizon: Any, arm: Any, lo: Any, hi: Any
) -> tuple[int, ArmType, float, float]:
    """The arguments every schedule takes: ``horizon >= 1``, the arm type, the reward range."""
    horizon = check_int("horizon", horizon, minimum=1)
    arm_t = check_arm(arm)
    lo, hi = check_bounds(lo, hi)
    return horizon, arm_t, lo, hi


def as_vector(name: str, value: Any, n_arms: int | None = None) -> FloatArray:
    """A finite 1-d float vector of length ``n_arms`` (if given); a copy, never a view."""
    try:  # the input policy: no bool, str or complex entries
        arr = checks.real_array(value, name, finite=False).copy()
    except TypeError as exc:
        raise TypeError(f"{name} must be a sequence of real numbers, got {value!r}") from exc
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence, got shape {arr.shape}")
    if n_arms is not None and arr.size != n_arms:
        raise ValueError(f"{name} must have length {n_arms} (one per arm), got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr}")
    return arr


def check_means(name: str, means: FloatArray, arm: ArmType) -> None:
    if arm == "bernoulli" and np.any((means < 0.0) | (means > 1.0)):
        bad = means[(means < 0.0) | (means > 1.0)]
        raise ValueError(f"{name} of bernoulli arms must lie in [0, 1], got {bad}")


def check_sds(name: str, sds: FloatArray) -> None:
    if np.any(sds <= 0.0):
        raise ValueError(f"{name} must be > 0, got {sds[sds <= 0.0]}")


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# --------------------------------------------------------------------------------------------
# Schedule
# --------------------------------------------------------------------------------------------
def _expected_by_rows(means: FloatArray, sds: FloatArray, lo: float, hi: float) -> FloatArray:
    """:func:`expected_clipped_normal` of every row of the ``(horizon, K)`` tables, evaluated
    once per run of equal rows: schedules are piecewise constant (a shift, a few change points),
    and the closed form costs up to ~1 µs per entry, seconds at a horizon of millions."""
    new_row = np.empty(means.shape[0], dtype=bool)
    new_row[0] = True
    np.any((means[1:] != means[:-1]) | (sds[1:] != sds[:-1]), axis=1, out=new_row[1:])
    starts = np.flatnonzero(new_row)
    distinct = expected_clipped_normal(means[starts], sds[starts], lo, hi)
    return np.asarray(distinct[np.cumsum(new_row) - 1])


class Schedule:
    """Per-step parameters of a K-armed bandit over ``horizon`` steps (App. H-1).

    ``means`` and ``sds`` are ``(horizon, n_arms)`` tables (``sds`` is ``None`` for Bernoulli
    arms). The derived tables are exact: ``expected`` is the expected (clipped) reward of every
    arm at every step, ``optimal`` the arm of highest expected reward (ties: the lowest index),
    ``regret[t, a] = max_b expected[t, b] - expected[t, a]`` (dynamic pseudo-regret). All tables
    are read-only. Memory is ``O(horizon * n_arms)``.
    """

    def __init__(
        self,
        means: FloatArray,
        sds: FloatArray | None,
        *,
        arm: ArmType,
        lo: float,
        hi: float,
        change_points: tuple[int, ...] = (),
    ) -> None:
        self.arm: ArmType = check_arm(arm)
        self.lo, self.hi = check_bounds(lo, hi)
        means = np.ascontiguousarray(means, dtype=np.float64)
        if means.ndim != 2 or means.shape[0] < 1 or means.shape[1] < 1:
            raise ValueError(f"means table must have shape (horizon, n_arms), got {means.shape}")
        if not np.all(np.isfinite(means)):
            raise ParameterError("means must be finite", "means")
        check_means("means", means, self.arm)
        self.horizon, self.n_arms = (int(n) for n in means.shape)
        if self.arm == "gaussian":
            if sds is None:
                raise ValueError("sds are required for gaussian arms")
            sds = np.ascontiguousarray(np.broadcast_to(sds, means.shape), dtype=np.float64)
            if not np.all(np.isfinite(sds)):
                raise ParameterError("sds must be finite", "sds")
            check_sds("sds", sds)
            expected = _expected_by_rows(means, sds, self.lo, self.hi)
        else:
            if sds is not None:
                raise ParameterError(
                    "sds must be None for bernoulli arms (the mean fixes them)", "sds"
                )
            if self.lo > 0.0 or self.hi < 1.0:
                raise ValueError(
                    f"bernoulli rewards are 0 or 1, so [lo, hi] must contain [0, 1]; "
                    f"got lo={self.lo}, hi={self.hi}"
                )
            expected = means.copy()
        self.means: FloatArray = _read_only(means)
        self.sds: FloatArray | None = None if sds is None else _read_only(sds)
        self.expected: FloatArray = _read_only(np.ascontiguousarray(expected))
        self.optimal: IntArray = _read_only(np.argmax(expected, axis=1).astype(np.int64))
        best = expected.max(axis=1, keepdims=True)
        self.regret: FloatArray = _read_only(np.ascontiguousarray(best - expected))
        self.change_points: tuple[int, ...] = tuple(int(c) for c in change_points)


def evaluate_schedule(
    name: str, fn: Callable[..., Any], horizon: int, *, vectorized: bool
) -> FloatArray:
    """Evaluate ``fn`` at every step ``t = 0..horizon-1`` and return a ``(horizon, K)`` table.

    ``vectorized=True``: ``fn`` gets the int64 array of all steps, shape ``(horizon,)``, and
    returns ``(horizon, K)`` (or ``(horizon,)`` for one arm). ``vectorized=False``: ``fn(t)``
    gets one Python int and returns ``K`` values; it is called ``horizon`` times.
    """
    t = np.arange(horizon, dtype=np.int64)
    try:
        if vectorized:
            table = np.asarray(fn(t), dtype=np.float64)
        else:
            table = np.array([np.asarray(fn(int(s)), dtype=np.float64) for s in t])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}(t) could not be evaluated as a float table: {exc}") from exc
    if table.ndim == 1 and table.shape[0] == horizon:
        table = table[:, None]
    if table.ndim != 2 or table.shape[0] != horizon:
        raise ValueError(
            f"{name}(t) must return shape (horizon, n_arms) = ({horizon}, K) for the step array "
            f"t (vectorized={vectorized}), got {table.shape}"
        )
    if not np.all(np.isfinite(table)):
        raise ValueError(f"{name}(t) must be finite at every step")
    return table


# --------------------------------------------------------------------------------------------
# The batched reward tape
# --------------------------------------------------------------------------------------------
def block_length(n_copies: int, n_arms: int) -> int:
    """Steps per precomputed block: about ``_BLOCK_ENTRIES`` floats per block array."""
    return int(min(_BLOCK_MAX, max(1, _BLOCK_ENTRIES // (n_copies * n_arms))))


@kernel
def fill_tape(means: Any, sds: Any, gaussian: bool, lo: float, hi: float, draws: Any,
              out: Any) -> None:  # fmt: skip
    """The reward tape of ``n`` steps: ``out[i, a * R + r]`` is the reward of copy ``r`` if it
    plays arm ``a`` at step ``i``, from the ``(n, R)`` draws of the copies (App. H-1). Gaussian
    arms: ``min(max(sd * z + mean, lo), hi)`` with a standard normal ``z``; Bernoulli arms:
    ``1.0`` if the uniform ``u < mean``, else ``0.0``."""
    n, n_copies = draws.shape
    for i in range(n):
        for a in range(means.shape[1]):
            m, sd = means[i, a], sds[i, a]
            base = a * n_copies
            for r in range(n_copies):
                if gaussian:
                    out[i, base + r] = min(max(sd * draws[i, r] + m, lo), hi)
                else:
                    out[i, base + r] = 1.0 if draws[i, r] < m else 0.0


def reward_tape(table: FloatArray, n_copies: int) -> FloatArray:
    """The reward tape of a fixed ``(T, K)`` table for ``n_copies`` copies: ``(T, K * R)``,
    column ``a * R + r`` is arm ``a`` of copy ``r``, every copy the same rewards (the layout of
    :func:`fill_tape`, which the agents' block path reads)."""
    return np.repeat(table, n_copies, axis=1)


class BanditCore:
    """``n_copies`` synchronised replications of one schedule: the single implementation.

    All copies share the step index ``t`` (they start together and are truncated together at the
    horizon). Every ``block`` steps the core draws the next ``(block, R)`` slice of the reward
    tape and precomputes, for those steps, the candidate reward of every arm ``(block, K, R)``,
    the per-arm regret, the expected-reward rows and the optimal arm, so a step is two
    ``take``s and a few views. Blocks are freshly allocated, so arrays returned by earlier steps
    are never overwritten.
    """

    def __init__(
        self, schedule: Schedule, n_copies: int, rng: Callable[[], np.random.Generator]
    ) -> None:
        self.schedule = schedule
        # A getter, not a Generator: draws always come from the environment's *current*
        # ``np_random`` (Gymnasium lets users replace it).
        self._rng = rng
        self.started = False
        self.n_copies = n_copies
        self.n_arms = schedule.n_arms
        self._block = block_length(n_copies, schedule.n_arms)
        self._base = np.arange(n_copies, dtype=np.int64)
        self.t = -1  # index of the last step taken; -1 before the first step
        self._i = 0  # position inside the current block
        self._n = 0  # length of the current block
        self._t0 = 0  # step of the current block's first row
        self._info_t0 = -1  # block whose info arrays are built (-1: none)
        self.last_actions: IntArray | None = None
        self.last_rewards: FloatArray | None = None

    @property
    def done(self) -> bool:
        """True once the step ``horizon - 1`` has been taken."""
        return self.t >= self.schedule.horizon - 1

    def reset(self) -> None:
        """Start a new episode at step 0 (the next block is drawn at the next step)."""
        self.started = True
        self.t = -1
        self._i = self._n = self._t0 = 0
        self.last_actions = self.last_rewards = None

    def _refill(self) -> None:
        rng = self._rng()
        sch = self.schedule
        t0 = self.t + 1
        n = min(self._block, sch.horizon - t0)  # never draw past the horizon (see module doc)
        rows = slice(t0, t0 + n)
        R, K = self.n_copies, self.n_arms
        # Layout (step, arm, copy): the copy axis is innermost, so broadcasting a (step, arm)
        # table over copies runs over long contiguous rows (5-10x faster than (step, copy, arm)).
        cand = np.empty((n, K * R))
        if sch.arm == "gaussian":
            assert sch.sds is not None
            # rng.standard_normal((n, R)): the same numbers, drawn by a kernel at a third of
            # numpy's cost (dpbandits.core.samplers)
            z = np.empty((n, R))
            fill_standard_normal(generator_address(rng), z)
            fill_tape(sch.means[rows], sch.sds[rows], True, sch.lo, sch.hi, z, cand)
        else:
            fill_tape(sch.means[rows], sch.means[rows], False, sch.lo, sch.hi,
                      rng.random((n, R)), cand)  # fmt: skip
        self._cand = cand
        self._t0, self._n, self._i = t0, n, 0
        self._info_t0 = -1  # the info arrays of this block are built on the first step()

    def _fill_info(self) -> None:
        """The per-step ``info`` arrays of the current block (only :meth:`step` needs them)."""
        sch = self.schedule
        t0, n = self._t0, self._n
        rows = slice(t0, t0 + n)
        R, K = self.n_copies, self.n_arms
        regret = np.empty((n, K, R))
        regret[...] = sch.regret[rows, :, None]
        self._regret = regret.reshape(n, K * R)
        self._expected = np.empty((n, K, R))
        self._expected[...] = sch.expected[rows, :, None]
        self._steps = np.empty((n, R), dtype=np.int64)
        self._steps[...] = np.arange(t0, t0 + n, dtype=np.int64)[:, None]
        self._optimal = np.empty((n, R), dtype=np.int64)
        self._optimal[...] = sch.optimal[rows, None]
        self._info_t0 = t0

    def step(
        self, actions: IntArray
    ) -> tuple[FloatArray, FloatArray, IntArray, IntArray, FloatArray]:
        """One step of every copy with validated int64 ``actions`` of shape ``(R,)``.

        Returns ``rewards (R,)``, ``expected_rewards (R, K)``, ``t (R,)``, ``optimal_arm (R,)``
        and ``regret (R,)``. The caller checks that the episode is not over.
        """
        if self._i == self._n:
            self._refill()
        if self._info_t0 != self._t0:
            self._fill_info()
        i = self._i
        idx = actions * self.n_copies
        idx += self._base
        rewards = self._cand[i].take(idx)
        regret = self._regret[i].take(idx)
        self._i = i + 1
        self.t += 1
        self.last_actions = actions
        self.last_rewards = rewards
        # expected_rewards: an (R, K) transposed view of this step's fresh (K, R) block row.
        return rewards, self._expected[i].T, self._steps[i], self._optimal[i], regret

    def rows(self, max_steps: int) -> FloatArray:
        """The reward tape of the next ``m <= max_steps`` steps (``m >= 1``; fewer at the end of
        a block), as a read-only ``(m, K * R)`` array: copy ``r`` playing arm ``a`` at the
        ``i``-th of those steps gets ``rows[i, a * R + r]``.

        The episode advances by ``m`` steps: the same draws and state change as ``m`` calls of
        :meth:`pull`, for a caller that plays the steps itself (the engine's compiled agents).
        ``last_actions``/``last_rewards`` are then unknown (``None``)."""
        i = self._i
        if i == self._n:
            self._refill()
            i = 0
        m = min(int(max_steps), self._n - i)
        out = self._cand[i : i + m]
        out.flags.writeable = False
        self._i = i + m
        self.t += m
        self.last_actions = self.last_rewards = None
        return out

    def pull(self, actions: IntArray) -> FloatArray:
        """The rewards ``(R,)`` of one step, nothing else: :meth:`step` without ``info``.

        Same draws and same state change as :meth:`step` (the two can be mixed); validated
        int64 ``actions`` of shape ``(R,)``, and the caller checks that the episode is not over.
        Three numpy calls: the batched engine's per-step hot path.
        """
        i = self._i
        if i == self._n:
            self._refill()
            i = 0
        idx = actions * self.n_copies
        idx += self._base
        rewards = self._cand[i].take(idx)
        self._i = i + 1
        self.t += 1
        self.last_actions = actions
        self.last_rewards = rewards
        return rewards


def check_actions(actions: Any, n_copies: int, n_arms: int) -> IntArray:
    """Validate a batch of actions: integers in ``[0, n_arms)``, shape ``(n_copies,)``."""
    if type(actions) is np.ndarray and actions.dtype is _INT64 and actions.shape == (n_copies,):
        # Fast path (the engine's case): one reduction, no conversion. Negative int64 values are
        # huge as uint64, so the maximum checks both ends.
        if actions.view(_UINT64).max() < n_arms:
            return actions
    a = np.asarray(actions)
    if a.dtype.kind not in "iu":
        raise TypeError(f"actions must be integers, got dtype {a.dtype}")
    if a.shape != (n_copies,):
        raise ValueError(f"actions must have shape ({n_copies},), got {a.shape}")
    a = a.astype(np.int64, copy=False)
    if n_copies and a.view(_UINT64).max() >= n_arms:
        bad = a[(a < 0) | (a >= n_arms)]
        raise ValueError(
            f"actions must lie in the action space Discrete({n_arms}), i.e. 0..{n_arms - 1}; "
            f"got {bad[:5].tolist()}"
        )
    return a


def check_action(action: Any, n_arms: int) -> int:
    """Validate one action of a ``Discrete(n_arms)`` space; returns it as ``int``."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = int(action)
        else:
            raise TypeError(
                f"action must be an integer in Discrete({n_arms}), got {action!r} "
                f"({type(action).__name__})"
            )
    a = int(action)
    if not 0 <= a < n_arms:
        raise ValueError(
            f"action must lie in the action space Discrete({n_arms}), i.e. 0..{n_arms - 1}; got {a}"
        )
    return a


def as_steps(name: str, t: Any, horizon: int) -> int:
    t = check_int(name, t)
    if not 0 <= t < horizon:
        raise ValueError(f"{name} must lie in [0, horizon) = [0, {horizon}), got {t}")
    return t


def format_means(values: Sequence[float] | FloatArray) -> str:
    return "[" + " ".join(f"{v:.3f}" for v in np.asarray(values)) + "]"
