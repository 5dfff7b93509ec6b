"""Non-stationary UCB baselines: sliding-window and discounted UCB (Garivier & Moulines 2011).

Not part of the paper; App. H adds them to test honestly the claim of App. H that private
selection adapts faster to a shift than (stationary) UCB: an agent built to forget is the fair
non-private competitor.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, ArmStatistics
from dpbandits.core import checks
from dpbandits.core.arms import add_pull, read_only
from dpbandits.core.jit import beats, kernel
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["DiscountedUCB", "SlidingWindowUCB"]


# -- the compiled steps (dpbandits.core.jit): one implementation for index/choose/observe and play
# --
# ``params`` is ``(xi, bound, tau or gamma)``; ``state`` is the per-step scalar (``t`` for
# SW-UCB, ``gamma ** t`` for D-UCB). ``counts``/``sums`` are the (R, K) statistics. The
# logarithm of the index is the same for every arm and replication of a step: ``_bonus``
# computes ``xi * ln(...)`` once per step, ``_value`` the rest, per arm.
@kernel
def _bonus(sliding: bool, params: Any, state: float) -> float:
    """``xi * ln(min(max(t, 1), tau))`` (SW-UCB) or ``xi * ln(max(m, 1))`` with ``m = (1 -
    gamma^t) / (1 - gamma)`` (D-UCB): the numerator under the square root of every index."""
    xi, _, p = params
    if sliding:
        return xi * math.log(min(max(state, 1.0), p))
    m = (1.0 - state) / (1.0 - p)
    return xi * math.log(max(m, 1.0))


@kernel
def _value(sliding: bool, params: Any, bonus: float, n: float, s: float) -> float:
    """The index of one arm with ``n`` (discounted) pulls and reward sum ``s``, in numpy's
    order of operations, from the step's ``bonus`` (``_bonus``). SW-UCB: ``s / max(n, 1) +
    bound * sqrt(xi * ln(min(max(t, 1), tau)) / max(n, 1))``, ``+inf`` if ``n == 0``. D-UCB:
    with ``c = max(n, 1e-300)`` and ``m = (1 - gamma^t) / (1 - gamma)``, ``s / c + 2 bound *
    sqrt(xi * ln(max(m, 1)) / c)``."""
    bound = params[1]
    if sliding:
        if n == 0.0:
            return math.inf
        safe = max(n, 1.0)
        return s / safe + bound * math.sqrt(bonus / safe)
    c = max(n, 1e-300)
    return s / c + 2.0 * bound * math.sqrt(bonus / c)


@kernel
def _indices(sliding: bool, params: Any, state: float, counts: Any, sums: Any, out: Any) -> None:
    bonus = _bonus(sliding, params, state)
    for r in range(counts.shape[0]):
        for a in range(counts.shape[1]):
            out[r, a] = _value(sliding, params, bonus, counts[r, a], sums[r, a])


@kernel
def _choose(sliding: bool, params: Any, state: float, counts: Any, sums: Any, out: Any) -> None:
    """Every replication's arm of highest index (``numpy.argmax``'s rule)."""
    bonus = _bonus(sliding, params, state)
    for r in range(out.shape[0]):
        best_a = 0
        best = _value(sliding, params, bonus, counts[r, 0], sums[r, 0])
        for a in range(1, counts.shape[1]):
            v = _value(sliding, params, bonus, counts[r, a], sums[r, a])
            if beats(v, best):
                best_a, best = a, v
        out[r] = best_a


@kernel
def _resum(sums: Any, buf_arm: Any, buf_rew: Any) -> None:
    """SW-UCB: the window sums recomputed from the buffers, oldest first, so that rounding
    errors of adding and removing rewards cannot accumulate."""
    sums[:] = 0.0
    for slot in range(buf_arm.shape[0]):
        for r in range(buf_arm.shape[1]):
            sums[r, buf_arm[slot, r]] += buf_rew[slot, r]


@kernel
def _observe(sliding: bool, gamma: float, t: int, counts: Any, sums: Any, buf_arm: Any,
             buf_rew: Any, actions: Any, x: Any) -> None:  # fmt: skip
    """Every replication ``r`` pulled arm ``actions[r]`` with reward ``x[r]`` at step ``t``.
    SW-UCB: the pull of step ``t - tau`` leaves the window (the buffers hold the last ``tau``
    steps). D-UCB: every arm's count and sum are discounted by ``gamma`` first."""
    tau = buf_arm.shape[0]
    slot = t % tau
    for r in range(actions.shape[0]):
        a, xr = actions[r], x[r]
        if sliding:
            if t >= tau:
                old = buf_arm[slot, r]
                counts[r, old] -= 1.0
                sums[r, old] -= buf_rew[slot, r]
            buf_arm[slot, r] = a
            buf_rew[slot, r] = xr
        else:
            for b in range(counts.shape[1]):
                counts[r, b] *= gamma
                sums[r, b] *= gamma
        add_pull(counts, sums, r, a, xr)
    if sliding and slot == tau - 1:
        _resum(sums, buf_arm, buf_rew)


@kernel
def _play(sliding: bool, params: Any, gamma_t: float, t0: int, counts: Any, sums: Any,
          buf_arm: Any, buf_rew: Any, rows: Any, actions: Any, rewards: Any,
          chosen: Any, x: Any) -> float:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns ``gamma ** t`` after
    them (D-UCB's running product)."""
    n_runs, n_arms = counts.shape
    gamma = params[2]
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:
            chosen[:] = t
        else:
            _choose(sliding, params, float(t) if sliding else gamma_t, counts, sums, chosen)
        for r in range(n_runs):
            x[r] = rows[i, chosen[r] * n_runs + r]
            actions[i, r] = chosen[r]
            rewards[i, r] = x[r]
        _observe(sliding, gamma, t, counts, sums, buf_arm, buf_rew, chosen, x)
        if not sliding:
            gamma_t *= gamma
    return gamma_t


class _ForgettingUCB(Agent):
    """What SW-UCB and D-UCB share: the constants ``xi`` and ``bound`` of the index, the arm
    statistics they forget, and the compiled steps above (``_sliding`` tells which)."""

    traits = AgentTraits(compiled=True)

    _sliding: bool
    _buf_arm: NDArray[np.int64]  # SW-UCB: the arm of each of the last tau steps (tau, R)
    _buf_rew: NDArray[np.float64]  # and its reward

    parameter_constraints = {
        "xi": Param(low=0, low_open=True, doc="exploration constant"),
        "bound": Param(low=0, low_open=True, doc="bound B on the rewards"),
    }

    def __init__(self, xi: float, bound: float) -> None:
        self.xi = xi
        self.bound = bound

    def setup(self) -> None:
        self._xi = float(self.xi)
        self._bound = float(self.bound)
        self.stats = ArmStatistics(self.n_runs, self.n_arms)
        self._chosen = np.empty(self.n_runs, dtype=np.int64)  # work space of play
        self._x = np.empty(self.n_runs)
        self._gamma_t = 1.0  # D-UCB: gamma ** t, kept as a running product

    def _params(self) -> tuple[float, float, float]:
        raise NotImplementedError

    def _state(self) -> float:
        return float(self.t) if self._sliding else self._gamma_t

    def _buffers(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        return self._buf_arm, self._buf_rew

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` indices at the current step."""
        out = np.empty((self.n_runs, self.n_arms))
        _indices(self._sliding, self._params(), self._state(), self.stats.counts,
                 self.stats.sums, out)  # fmt: skip
        return out

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self._sliding, self._params(), self._state(), self.stats.counts,
                self.stats.sums, out)  # fmt: skip
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        _observe(self._sliding, self._params()[2], self.t, self.stats.counts, self.stats.sums,
                 *self._buffers(), np.asarray(actions, dtype=np.int64),
                 np.asarray(rewards, dtype=np.float64))  # fmt: skip
        if not self._sliding:
            self._gamma_t *= self._params()[2]

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        rows = read_only(rows)  # the one compiled loop for the engine's tape and any other rows
        self._gamma_t = _play(self._sliding, self._params(), self._gamma_t, self.t,
                              self.stats.counts, self.stats.sums, *self._buffers(), rows,
                              actions, rewards, self._chosen, self._x)  # fmt: skip
        self.played(rows.shape[0])


class SlidingWindowUCB(_ForgettingUCB):
    """Sliding-window UCB (SW-UCB, Garivier & Moulines 2011, Alg. 2).

    Only the last ``window`` steps count. With ``N_a`` pulls of arm ``a`` and reward sum ``S_a``
    in the window, the index is ``S_a / N_a + bound * sqrt(xi * ln(min(t, window)) / N_a)``;
    an arm not pulled inside the window has index ``+inf``. Ties go to the lowest index.

    Parameters: ``window`` (tau), ``xi`` (0.6 in the authors' simulations), ``bound`` (``B``, a
    bound on the rewards). Garivier & Moulines tune ``window = 2 B sqrt(T ln T / Y)`` for ``Y``
    breakpoints, about 1500 for the paper's T = 50_000 with one shift; the default 1000 is of
    that order.

    The window sums are updated incrementally and recomputed exactly every ``window`` steps, so
    floating-point drift from adding and removing rewards cannot accumulate.
    """

    name = "sw_ucb"
    _sliding = True

    parameter_constraints = {
        **_ForgettingUCB.parameter_constraints,
        "window": Param("int", low=1, doc="length tau of the sliding window"),
    }

    def __init__(self, window: int = 1000, xi: float = 0.6, bound: float = 1.0) -> None:
        super().__init__(xi, bound)
        self.window = window

    def setup(self) -> None:
        self._tau = int(self.window)
        checks.memory(2 * self._tau * self.n_runs, f"window * n_runs = {self._tau} * {self.n_runs}")
        super().setup()
        self._buf_arm = np.zeros((self._tau, self.n_runs), dtype=np.int64)
        self._buf_rew = np.zeros((self._tau, self.n_runs))

    def _params(self) -> tuple[float, float, float]:
        return (self._xi, self._bound, float(self._tau))


class DiscountedUCB(_ForgettingUCB):
    """Discounted UCB (D-UCB, Garivier & Moulines 2011, Alg. 1).

    Past pulls are discounted by ``gamma`` per step: ``N_a = sum_s gamma^(t-s) 1{a_s = a}``,
    ``S_a`` likewise with the rewards, ``n = sum_a N_a = (1 - gamma^t) / (1 - gamma)``; the index
    is ``S_a / N_a + 2 bound * sqrt(xi * ln(n) / N_a)``. Ties go to the lowest index.

    Parameters: ``gamma`` (Garivier & Moulines tune ``1 - sqrt(Y / T) / (4 B)``, about 0.9989
    for T = 50_000 and one shift), ``xi`` (0.6), ``bound`` (``B``). A discounted count that
    underflows is floored at ``1e-300`` in the index, which then is astronomically large: the
    arm is played, as the algorithm intends.
    """

    name = "d_ucb"
    _sliding = False

    parameter_constraints = {
        **_ForgettingUCB.parameter_constraints,
        "gamma": Param(low=0, high=1, low_open=True, high_open=True, doc="discount per step"),
    }

    def __init__(self, gamma: float = 0.999, xi: float = 0.6, bound: float = 1.0) -> None:
        super().__init__(xi, bound)
        self.gamma = gamma

    def setup(self) -> None:
        self._gamma = float(self.gamma)
        super().setup()
        # (no window: empty buffers keep one signature for the compiled steps)
        self._buf_arm = np.zeros((1, self.n_runs), dtype=np.int64)
        self._buf_rew = np.zeros((1, self.n_runs))

    def _params(self) -> tuple[float, float, float]:
        return (self._xi, self._bound, self._gamma)
