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

from agents.skeleton import CompiledAgent, fields
from dpbandits.accounting import global_dp_report
from dpbandits.core.jit import inline_kernel, kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace
from dpbandits.core.traits import AgentTraits

__all__ = ["DPSE"]

# R_e never needs to exceed the horizon (an epoch that long never ends); without a horizon,
# a bound that keeps the int64 pull counters far from overflowing
_NO_CAP = float(2**60)


# -- the compiled step on the skeleton (agents.skeleton). Per replication: the epoch e (from 1),
# the number of arms still in play, the pulls made in the epoch, the slot whose turn it is
# (pulls mod arms in play) and R_e; per (replication, slot i): the i-th arm in play (the first
# n_active slots, in order); per (replication, arm): this epoch's reward sum and the last
# released private mean. Integers are stored exactly as floats. The end of an epoch is the
# skeleton's settle step (once per step, not inlined), so that the per-pull kernels stay small
# enough for numba to drop their reference counting: inlined, it cost 2-3x the time of a step
# (before the skeleton lent its state to the per-pull kernels, agents.skeleton).
ARM = fields("sum", "released", "active")
RUN = fields("epoch", "n_active", "pos", "turn", "length")
PAR = fields("eps", "beta", "cap")


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
def elimination_radius(e: int, n_active: int, re: int, eps: float, beta: float) -> float:
    """``2 (h_e + c_e)`` of epoch ``e`` with ``n_active`` arms pulled ``R_e = re`` times each
    (module docstring, step 3)."""
    ee = float(e) * float(e)
    return 2.0 * (math.sqrt(math.log(8.0 * n_active * ee / beta) / (2.0 * re))
                  + math.log(4.0 * n_active * ee / beta) / (re * eps))  # fmt: skip


@inline_kernel
def _arm(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """Replication ``r``'s arm: its arms still in play in turn, or the one left (the first
    ``K`` steps, arm ``t``, are epoch 1's first turn)."""
    return np.int64(arms[r, np.int64(runs[r, RUN.turn]), ARM.active])


@kernel
def _end_epoch(arms: Any, runs: Any, par: Any, r: int, bits: Any) -> None:
    """Release the private means of replication ``r``'s arms in play, eliminate, start the
    next epoch (module docstring, steps 2-3)."""
    eps, beta = par[PAR.eps], par[PAR.beta]
    n, e = np.int64(runs[r, RUN.n_active]), np.int64(runs[r, RUN.epoch])
    re = np.int64(runs[r, RUN.length])
    scale = 1.0 / (re * eps)
    best = -math.inf
    for i in range(n):
        a = np.int64(arms[r, i, ARM.active])
        mu = arms[r, a, ARM.sum] / re + standard_laplace(bits) * scale
        arms[r, a, ARM.released] = mu
        best = max(best, mu)
    radius = elimination_radius(e, n, re, eps, beta)
    kept = 0
    for i in range(n):
        a = np.int64(arms[r, i, ARM.active])
        if not best - arms[r, a, ARM.released] > radius:
            arms[r, kept, ARM.active] = a
            kept += 1
    runs[r, RUN.n_active] = kept
    for a in range(arms.shape[1]):
        arms[r, a, ARM.sum] = 0.0
    runs[r, RUN.epoch] = e + 1
    runs[r, RUN.pos] = 0.0
    runs[r, RUN.turn] = 0.0
    runs[r, RUN.length] = epoch_length(e + 1, kept, eps, beta, par[PAR.cap])


@inline_kernel
def _pull(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    """Replication ``r`` pulled ``a`` and got ``x``."""
    arms[r, a, ARM.sum] += x
    runs[r, RUN.pos] += 1.0
    # the next slot in turn, pos mod n_active (no branch, no integer division)
    turn = runs[r, RUN.turn] + 1.0
    runs[r, RUN.turn] = turn * (turn < runs[r, RUN.n_active])


@kernel
def _end_epochs(arms: Any, runs: Any, par: Any, t: int, actions: Any, x: Any,
                bits: Any) -> None:  # fmt: skip
    """After step ``t``: every replication whose last pull ended its epoch (every arm in play
    pulled ``R_e`` times; none ends once one arm is left) ends it, in replication order."""
    for r in range(runs.shape[0]):
        n = runs[r, RUN.n_active]
        if n > 1.0 and runs[r, RUN.pos] == runs[r, RUN.length] * n:
            _end_epoch(arms, runs, par, r, bits)


class DPSE(CompiledAgent):
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
    ARM, RUN, PAR = ARM, RUN, PAR
    arm_kernel, learn_kernel = _arm, _pull
    settle_kernel = _end_epochs
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

    def parameters(self) -> dict[str, float]:
        eps = float(self.epsilon)  # (checked: parameter_constraints)
        if self.beta is None:
            beta = 1.0 / self.needed_horizon("DPSE(beta=None) takes beta = 1/T")
        else:
            beta = float(self.beta)
        cap = _NO_CAP if self.horizon is None else float(self.horizon + 1)
        return {"eps": eps, "beta": beta, "cap": cap}

    def init_state(self) -> None:
        eps, beta, cap = self.par
        k = self.n_arms
        self.arm_field("active")[:] = np.arange(k)
        self.arm_field("released")[:] = np.nan
        self.run_field("epoch")[:] = 1.0
        self.run_field("n_active")[:] = k
        self.run_field("length")[:] = epoch_length(1, k, eps, beta, cap)

    # -- hooks for plots, reports and tests ---------------------------------------------------
    def private_means(self) -> NDArray[np.float64]:
        """The ``(R, K)`` last released private means (NaN before an arm's first release; an
        eliminated arm keeps its last one)."""
        return np.array(self.arm_field("released"))

    def epochs(self) -> NDArray[np.int64]:
        """The ``(R,)`` current epoch of every replication (1 for the first)."""
        return self.run_field("epoch").astype(np.int64)

    def arms_in_play(self) -> NDArray[np.bool_]:
        """``(R, K)``: whether each arm is still in play (not eliminated)."""
        n_active = self.run_field("n_active").astype(np.int64)
        active = self.arm_field("active").astype(np.int64)
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
