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

from agents.skeleton import IndexAgent, fields, no_learn
from dpbandits.core import checks
from dpbandits.core.jit import inline_kernel, kernel
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["DiscountedUCB", "SlidingWindowUCB"]


# -- the compiled steps (dpbandits.core.jit). Per (replication, arm): the pull count and reward
# sum the agent still remembers (SW-UCB: inside the window; D-UCB: discounted). The logarithm
# of the index is the same for every arm and replication of a step and is computed once per
# step: SW-UCB's from ``t``, D-UCB's from ``gamma ** t``, a running product that the first
# replication's learn kernel advances. Both are on the skeleton (agents.skeleton): ARM, and
# SW_PAR or D_PAR and D_RUN are their fields. SW-UCB learns a whole step in its settle kernel:
# its window is two (tau, R) arrays in SW_PAR, written one slot of every replication at a time.
ARM = fields("sum", "count")
SW_PAR = fields("xi", "bound", "tau", "buf_arm", "buf_rew")
_XI, _BOUND, _TAU, _BUF_ARM, _BUF_REW = SW_PAR  # (arrays in PAR: literal indices only)
D_PAR = fields("xi", "bound", "gamma")
#: D-UCB's ``gamma ** t`` and the step's ``xi * ln(max(m, 1))``: the same for every
#: replication, kept (and computed once per step) in the first replication's record only.
D_RUN = fields("gamma_t", "bonus")


@kernel
def _sw_value(s: float, n: float, bonus: float, bound: float) -> float:
    """SW-UCB's index of one arm with ``n`` pulls and reward sum ``s`` in the window, in
    numpy's order of operations: ``s / max(n, 1) + bound * sqrt(bonus / max(n, 1))``, ``+inf``
    if ``n == 0``, with ``bonus = xi * ln(min(max(t, 1), tau))``."""
    if n == 0.0:
        return math.inf
    safe = max(n, 1.0)
    return s / safe + bound * math.sqrt(bonus / safe)


@kernel
def _sw_bonus(xi: float, tau: float, t: int) -> float:
    """``xi * ln(min(max(t, 1), tau))``: the numerator under the square root of every index."""
    return xi * math.log(min(max(float(t), 1.0), tau))


@inline_kernel
def _sw_round(par: Any, t: int) -> float:
    """The step's ``xi * ln(min(t, tau))``."""
    return _sw_bonus(par[_XI], par[_TAU], t)


@inline_kernel
def _sw_index(arms: Any, runs: Any, par: Any, r: int, a: int, f: float, bits: Any) -> float:
    return _sw_value(arms[r, a, ARM.sum], arms[r, a, ARM.count], f, par[_BOUND])


@kernel
def _resum(arms: Any, buf_arm: Any, buf_rew: Any) -> None:
    """The window sums recomputed from the buffers, oldest first, so that rounding errors of
    adding and removing rewards cannot accumulate (slot by slot across the replications: the
    additions into one sum depend on each other, those of different replications do not)."""
    arms[:, :, ARM.sum] = 0.0
    for slot in range(buf_arm.shape[0]):
        for r in range(buf_arm.shape[1]):
            arms[r, buf_arm[slot, r], ARM.sum] += buf_rew[slot, r]


@kernel
def _sw_settle(arms: Any, runs: Any, par: Any, t: int, actions: Any, x: Any, bits: Any) -> None:
    """Every replication ``r`` pulled arm ``actions[r]`` with reward ``x[r]`` at step ``t``:
    the pull of step ``t - tau`` leaves the window (the buffers hold the last ``tau`` steps).
    The whole step at once, slot ``t % tau`` of every replication in turn (the skeleton's
    ``settle_kernel``; learning one replication at a time cost 1.5x the CPU per agent-step at
    R = 100)."""
    buf_arm, buf_rew = par[_BUF_ARM], par[_BUF_REW]
    tau = buf_arm.shape[0]
    slot = t % tau
    for r in range(actions.shape[0]):
        a, xr = actions[r], x[r]
        if t >= tau:
            old = buf_arm[slot, r]
            arms[r, old, ARM.count] -= 1.0
            arms[r, old, ARM.sum] -= buf_rew[slot, r]
        buf_arm[slot, r] = a
        buf_rew[slot, r] = xr
        arms[r, a, ARM.count] += 1.0
        arms[r, a, ARM.sum] += xr
    if slot == tau - 1:
        _resum(arms, buf_arm, buf_rew)


@kernel
def _d_value(s: float, n: float, bonus: float, bound: float) -> float:
    """D-UCB's index of one arm with discounted count ``n`` and sum ``s``: with ``c = max(n,
    1e-300)``, ``s / c + 2 bound * sqrt(bonus / c)``, ``bonus = xi * ln(max(m, 1))``."""
    c = max(n, 1e-300)
    return s / c + 2.0 * bound * math.sqrt(bonus / c)


@inline_kernel
def _d_index(arms: Any, runs: Any, par: Any, r: int, a: int, f: float, bits: Any) -> float:
    return _d_value(arms[r, a, ARM.sum], arms[r, a, ARM.count], runs[0, D_RUN.bonus],
                    par[D_PAR.bound])  # fmt: skip


@inline_kernel
def _d_learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
             bits: Any) -> None:  # fmt: skip
    """Every arm's count and sum are discounted by ``gamma``, then the pull is added. The
    first replication also advances ``gamma ** t`` and computes the next step's
    ``xi * ln(max(m, 1))``, ``m = (1 - gamma^t) / (1 - gamma)`` (every replication learns at
    every step, so the first one's learning is once per step)."""
    gamma = par[D_PAR.gamma]
    for b in range(arms.shape[1]):
        arms[r, b, ARM.count] *= gamma
        arms[r, b, ARM.sum] *= gamma
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.sum] += x
    if r == 0:
        g = runs[0, D_RUN.gamma_t] * gamma
        runs[0, D_RUN.gamma_t] = g
        m = (1.0 - g) / (1.0 - gamma)
        runs[0, D_RUN.bonus] = par[D_PAR.xi] * math.log(max(m, 1.0))


@kernel
def _indices(sliding: bool, counts: Any, sums: Any, bonus: float, bound: float,
             out: Any) -> None:  # fmt: skip
    """Every ``(r, a)`` index with the step's ``bonus`` (``index()``)."""
    for r in range(out.shape[0]):
        for a in range(out.shape[1]):
            s, n = sums[r, a], counts[r, a]
            out[r, a] = _sw_value(s, n, bonus, bound) if sliding else _d_value(s, n, bonus, bound)


_CONSTANTS = {
    "xi": Param(low=0, low_open=True, doc="exploration constant"),
    "bound": Param(low=0, low_open=True, doc="bound B on the rewards"),
}


class SlidingWindowUCB(IndexAgent):
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

    On the compiled skeleton (:mod:`agents.skeleton`, docs/agents.md), learning a whole step in
    its ``settle_kernel``: the window is two ``(tau, R)`` arrays, written one slot of every
    replication at a time (learning one replication at a time, in ``learn_kernel``, cost 1.5x
    the CPU per agent-step at R = 100).
    """

    name = "sw_ucb"
    traits = AgentTraits(compiled=True)
    ARM, PAR = ARM, SW_PAR
    round_kernel, index_kernel = _sw_round, _sw_index
    learn_kernel, settle_kernel = no_learn, _sw_settle

    parameter_constraints = {
        **_CONSTANTS,
        "window": Param("int", low=1, doc="length tau of the sliding window"),
    }

    def __init__(self, window: int = 1000, xi: float = 0.6, bound: float = 1.0) -> None:
        self.xi = xi
        self.bound = bound
        self.window = window

    def parameters(self) -> dict[str, Any]:
        tau = int(self.window)
        checks.memory(2 * tau * self.n_runs, f"window * n_runs = {tau} * {self.n_runs}")
        return {"xi": float(self.xi), "bound": float(self.bound), "tau": float(tau),
                "buf_arm": np.zeros((tau, self.n_runs), dtype=np.int64),
                "buf_rew": np.zeros((tau, self.n_runs))}  # fmt: skip

    def window_arms(self) -> NDArray[np.int64]:
        """The ``(R, tau)`` arms of the window, by slot (step ``t`` is in slot ``t % tau``)."""
        return np.array(self.par[_BUF_ARM].T)

    def window_rewards(self) -> NDArray[np.float64]:
        """The ``(R, tau)`` rewards of the window, by slot."""
        return np.array(self.par[_BUF_REW].T)

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` indices at the current step."""
        bonus = _sw_bonus(self.par[_XI], self.par[_TAU], self.t)
        out = np.empty((self.n_runs, self.n_arms))
        _indices(True, self.stats.counts, self.stats.sums, bonus, self.par[_BOUND], out)
        return out


class DiscountedUCB(IndexAgent):
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
    traits = AgentTraits(compiled=True)
    ARM, PAR, RUN = ARM, D_PAR, D_RUN
    RUN_START = {"gamma_t": 1.0}
    index_kernel, learn_kernel = _d_index, _d_learn

    parameter_constraints = {
        **_CONSTANTS,
        "gamma": Param(low=0, high=1, low_open=True, high_open=True, doc="discount per step"),
    }

    def __init__(self, gamma: float = 0.999, xi: float = 0.6, bound: float = 1.0) -> None:
        self.xi = xi
        self.bound = bound
        self.gamma = gamma

    def parameters(self) -> dict[str, float]:
        return {"xi": float(self.xi), "bound": float(self.bound), "gamma": float(self.gamma)}

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` indices at the current step."""
        out = np.empty((self.n_runs, self.n_arms))
        _indices(False, self.arm_field("count"), self.arm_field("sum"),
                 float(self.runs[0, D_RUN.bonus]), self.par[D_PAR.bound], out)  # fmt: skip
        return out
