"""DP-SE: private successive elimination (Sajed & Sheffet, ICML 2019).

Sajed & Sheffet, "An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private
Stopping Rule" (ICML 2019): Successive Elimination (Even-Dar et al. 2002) made eps-DP for
rewards in ``[0, 1]``, with regret ``O(sum_a log T / Delta_a + K log T / eps)``, which meets
the lower bound of Shariff & Sheffet (2018). Epoch ``e = 1, 2, ...`` over the arms ``S`` still
in play:

1. ``Delta_e = 2^-e`` and ``R_e = ceil(max(32 ln(8 |S| e^2 / beta) / Delta_e^2,
   8 ln(4 |S| e^2 / beta) / (eps Delta_e)))``;
2. every arm of ``S`` is pulled ``R_e`` times, and its private mean is the mean of *this
   epoch's* ``R_e`` rewards plus ``Lap(1 / (R_e eps))`` (fresh noise, earlier epochs' rewards
   are not reused);
3. with ``h_e = sqrt(ln(8 |S| e^2 / beta) / (2 R_e))`` (the Hoeffding radius) and
   ``c_e = ln(4 |S| e^2 / beta) / (R_e eps)`` (the Laplace radius), every arm whose private
   mean is more than ``2 (h_e + c_e)`` below the largest is eliminated.

Once one arm is left it is played to the end. Privacy: each reward enters exactly one released
mean (its arm's, in its epoch), whose sensitivity is ``1 / R_e``, so each release is eps-DP
and the releases, on disjoint rewards, compose in parallel; the actions are functions of the
releases, so the whole run is eps-DP (``privacy_report()``). See ``docs/private-bandits.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, in_unit_interval, unit_interval_error
from dpbandits.accounting import global_dp_report
from dpbandits.core.jit import generator_address, generator_at, kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace
from dpbandits.core.traits import AgentTraits

__all__ = ["DPSE"]

# R_e never needs to exceed the horizon (an epoch that long never ends); without a horizon,
# a bound that keeps the int64 pull counters far from overflowing
_NO_CAP = float(2**60)


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play -------
# The state, per replication (``DPSE._state``): ``epoch`` e (from 1), ``n_active`` arms still in
# play and those arms in order (the first n_active entries of a row of ``active``), ``pos`` the
# pulls made in the epoch, ``length`` R_e, ``sums`` this epoch's reward sums (R, K) and
# ``released`` the last released private means (R, K); then (eps, beta, cap). The arrays are
# passed one by one and the kernels are called once per step, not per pull: numba counts the
# references of every array a compiled function receives (about 6 ns each), more than a pull.
@kernel
def epoch_length(e: int, n_active: int, eps: float, beta: float, cap: float) -> int:
    """``R_e`` of epoch ``e`` with ``n_active`` arms (module docstring, step 1), at most
    ``cap``."""
    gap = math.ldexp(1.0, -e)  # Delta_e = 2^-e, exactly
    ee = float(e) * float(e)
    hoeffding = 32.0 * math.log(8.0 * n_active * ee / beta) / (gap * gap)
    laplace = 8.0 * math.log(4.0 * n_active * ee / beta) / (eps * gap)
    return int(math.ceil(min(max(hoeffding, laplace), cap)))


@kernel
def _choose(n_active: Any, active: Any, pos: Any, out: Any) -> None:
    """Every replication's arm: its arms still in play in turn, or the one left (during the
    first ``K`` steps, arm ``t``: App. H's initial round is epoch 1's first turn)."""
    for r in range(out.shape[0]):
        n = n_active[r]
        out[r] = active[r, pos[r] % n] if n > 1 else active[r, 0]


@kernel
def _end_epoch(epoch: Any, n_active: Any, active: Any, pos: Any, length: Any, sums: Any,
               released: Any, eps: float, beta: float, cap: float, bits: Any,
               r: int) -> None:  # fmt: skip
    """Release the private means of replication ``r``'s arms in play, eliminate, start the
    next epoch (module docstring, steps 2-3)."""
    n, e, re = n_active[r], epoch[r], length[r]
    scale = 1.0 / (re * eps)
    best = -math.inf
    for i in range(n):
        a = active[r, i]
        mu = sums[r, a] / re + standard_laplace(bits) * scale
        released[r, a] = mu
        best = max(best, mu)
    ee = float(e) * float(e)
    radius = 2.0 * (math.sqrt(math.log(8.0 * n * ee / beta) / (2.0 * re))
                    + math.log(4.0 * n * ee / beta) / (re * eps))  # fmt: skip
    kept = 0
    for i in range(n):
        a = active[r, i]
        if not best - released[r, a] > radius:
            active[r, kept] = a
            kept += 1
    n_active[r] = kept
    sums[r, :] = 0.0
    epoch[r] = e + 1
    pos[r] = 0
    length[r] = epoch_length(e + 1, kept, eps, beta, cap)


@kernel
def _observe(epoch: Any, n_active: Any, active: Any, pos: Any, length: Any, sums: Any,
             released: Any, eps: float, beta: float, cap: float, bits: Any, actions: Any,
             x: Any) -> None:  # fmt: skip
    """Replication ``r`` pulled ``actions[r]`` and got ``x[r]``, for every ``r`` in order; an
    epoch's last pull ends it (its draws in that order)."""
    for r in range(actions.shape[0]):
        sums[r, actions[r]] += x[r]
        p = pos[r] + 1
        pos[r] = p
        n = n_active[r]
        if n > 1 and p == length[r] * n:
            _end_epoch(epoch, n_active, active, pos, length, sums, released, eps, beta, cap,
                       bits, r)  # fmt: skip


@kernel
def _observe_at(epoch: Any, n_active: Any, active: Any, pos: Any, length: Any, sums: Any,
                released: Any, eps: float, beta: float, cap: float, address: int, actions: Any,
                x: Any) -> None:  # fmt: skip
    """:func:`_observe` drawing from the Generator at ``address`` (the step protocol)."""
    bits = generator_at(address).bit_generator
    _observe(epoch, n_active, active, pos, length, sums, released, eps, beta, cap, bits,
             actions, x)  # fmt: skip


@kernel
def _play(epoch: Any, n_active: Any, active: Any, pos: Any, length: Any, sums: Any,
          released: Any, eps: float, beta: float, cap: float, address: int, rows: Any,
          actions: Any, rewards: Any, chosen: Any, x: Any) -> int:  # fmt: skip
    """Steps as :meth:`DPSE.choose` and :meth:`DPSE.observe` take them (the same kernels,
    one call of each per step); returns the number of steps played, fewer than
    ``len(rows)`` at a reward outside ``[0, 1]``."""
    bits = generator_at(address).bit_generator
    n_runs = actions.shape[1]
    for i in range(rows.shape[0]):
        _choose(n_active, active, pos, chosen)
        for r in range(n_runs):
            x[r] = rows[i, chosen[r] * n_runs + r]
        if not in_unit_interval(x):
            return i
        for r in range(n_runs):
            actions[i, r] = chosen[r]
            rewards[i, r] = x[r]
        _observe(epoch, n_active, active, pos, length, sums, released, eps, beta, cap, bits,
                 chosen, x)  # fmt: skip
    return rows.shape[0]


class DPSE(Agent):
    """DP-SE (Sajed & Sheffet, ICML 2019): private successive elimination.

    The algorithm is in the module docstring.

    Rewards must lie in ``[0, 1]`` (``ValueError`` otherwise). The first ``K`` steps pull each
    arm once, in order (App. H); they are epoch 1's first round, so nothing changes.

    Parameters
    ----------
    epsilon:
        The eps of the whole run (eps-global DP), ``> 0``.
    beta:
        The confidence parameter of the eliminations, in ``(0, 1)``; ``None`` (default) takes
        ``1 / T`` for the horizon ``T`` (then ``reset(..., horizon=T)`` is required), the
        choice for regret minimisation.

    Choices where the paper leaves room, each tested (``tests/agents/test_literature_dp_ucb.py``):
    within an epoch the arms in play are pulled in turn (round robin), so an epoch cut short by
    the horizon has pulled every arm about equally; ``R_e`` is rounded up; the elimination
    threshold ``2 (h_e + c_e)`` uses the integer ``R_e`` actually pulled (it is at most
    ``Delta_e / 2``); the arm order of the released means (and of their Laplace draws) is the
    arms' index order.
    """

    name = "dp_se"
    traits = AgentTraits(rewards="unit", private=True, compiled=True, needs_horizon=True)
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling (docs/performance.md).
    cost_hint = 1.0
    algorithm = "DP-SE (Sajed & Sheffet 2019)"

    parameter_constraints = {
        "epsilon": Param(low=0, low_open=True, doc="eps of the whole run (eps-global DP)"),
        "beta": Param(low=0, high=1, low_open=True, high_open=True, none=True,
                      doc="confidence of the eliminations; None: 1/T"),
    }  # fmt: skip

    def __init__(self, epsilon: float = 1.0, beta: float | None = None) -> None:
        self.epsilon = epsilon
        self.beta = beta

    def setup(self) -> None:
        eps = float(self.epsilon)  # (checked: parameter_constraints)
        if self.beta is None:
            beta = 1.0 / self.needed_horizon("DPSE(beta=None) takes beta = 1/T")
        else:
            beta = float(self.beta)
        cap = _NO_CAP if self.horizon is None else float(self.horizon + 1)
        r, k = self.n_runs, self.n_arms
        active = np.empty((r, k), dtype=np.int64)
        active[:] = np.arange(k)
        first = epoch_length(1, k, eps, beta, cap)
        self._state = (np.ones(r, dtype=np.int64), np.full(r, k, dtype=np.int64), active,
                       np.zeros(r, dtype=np.int64), np.full(r, first, dtype=np.int64),
                       np.zeros((r, k)), np.full((r, k), np.nan))  # fmt: skip
        self._cfg = (eps, beta, cap)
        self._chosen = np.empty(r, dtype=np.int64)  # work space of play
        self._x = np.empty(r)

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self._state[1], self._state[2], self._state[3], out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = np.asarray(rewards, dtype=np.float64)
        if not in_unit_interval(x):
            raise unit_interval_error("DPSE", x)
        _observe_at(*self._state, *self._cfg, generator_address(self.rng),
                 np.asarray(actions, dtype=np.int64), x)  # fmt: skip

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        out = actions if actions.dtype == np.int64 else np.empty(actions.shape, dtype=np.int64)
        done = int(_play(*self._state, *self._cfg, generator_address(self.rng), rows, out,
                         rewards, self._chosen, self._x))  # fmt: skip
        if out is not actions:
            actions[:done] = out[:done]
        self.played(done)
        if done < rows.shape[0]:
            raise unit_interval_error("DPSE", self._x)

    # -- hooks for plots, reports and tests ---------------------------------------------------
    def private_means(self) -> NDArray[np.float64]:
        """The ``(R, K)`` last released private means (NaN before an arm's first release; an
        eliminated arm keeps its last one)."""
        return np.array(self._state[6])

    def epochs(self) -> NDArray[np.int64]:
        """The ``(R,)`` current epoch of every replication (1 for the first)."""
        return self._state[0].copy()

    def arms_in_play(self) -> NDArray[np.bool_]:
        """``(R, K)``: whether each arm is still in play (not eliminated)."""
        n_active, active = self._state[1], self._state[2]
        out = np.zeros((self.n_runs, self.n_arms), dtype=bool)
        for r in range(self.n_runs):  # a hook for reports and tests, not a step
            out[r, active[r, : n_active[r]]] = True
        return out

    def privacy_report(self) -> dict[str, Any]:
        """The eps of the whole run (module docstring), as a JSON-able dict."""
        return global_dp_report(
            self.algorithm, float(self.epsilon),
            "each arm's mean over its rewards of the current epoch only, plus Lap(1/(R_e eps)), "
            "at the end of every epoch",
            "a reward enters exactly one released mean (sensitivity 1/R_e, so eps-DP); the "
            "means of disjoint rewards compose in parallel: eps",
        )  # fmt: skip
