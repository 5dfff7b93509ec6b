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

from agents.skeleton import IndexAgent, fields
from dpbandits.core import checks
from dpbandits.core.jit import inline_kernel, kernel
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["DiscountedUCB", "SlidingWindowUCB"]


# -- the compiled steps on the skeleton (agents.skeleton). Per (replication, arm): the pull count
# and reward sum the agent still remembers (SW-UCB: inside the window; D-UCB: discounted). The
# logarithm of the index is the same for every arm and replication of a step and is computed
# once per step: SW-UCB's from ``t`` (its round kernel), D-UCB's from ``gamma ** t``, a running
# product that the first replication's learn kernel advances (below).
ARM = fields("sum", "count")
SW_PAR = fields("xi", "bound", "tau")
#: SW-UCB's record per replication is its window: the arm of each of the last ``tau`` steps in
#: the columns ``window .. window + tau - 1`` (slot ``t % tau``), their rewards in the next
#: ``tau`` columns (:meth:`SlidingWindowUCB.run_columns`).
SW_RUN = fields("window")
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


@inline_kernel
def _sw_round(par: Any, t: int) -> float:
    """``xi * ln(min(max(t, 1), tau))``: the numerator under the square root of every index."""
    return par[SW_PAR.xi] * math.log(min(max(float(t), 1.0), par[SW_PAR.tau]))


@inline_kernel
def _sw_index(arms: Any, runs: Any, par: Any, r: int, a: int, bonus: float, bits: Any) -> float:
    return _sw_value(arms[r, a, ARM.sum], arms[r, a, ARM.count], bonus, par[SW_PAR.bound])


@kernel
def _resum(arms: Any, runs: Any, r: int, tau: int) -> None:
    """Replication ``r``'s window sums recomputed from its window, oldest first, so that
    rounding errors of adding and removing rewards cannot accumulate."""
    for b in range(arms.shape[1]):
        arms[r, b, ARM.sum] = 0.0
    for slot in range(tau):
        arms[r, int(runs[r, SW_RUN.window + slot]), ARM.sum] += runs[r, SW_RUN.window + tau + slot]


@inline_kernel
def _sw_learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
              bits: Any) -> None:  # fmt: skip
    """The pull of step ``t - tau`` leaves the window, that of step ``t`` joins it; every
    ``tau`` steps the sums are recomputed from the window."""
    tau = int(par[SW_PAR.tau])
    slot = t % tau
    arm_at = SW_RUN.window + slot
    if t >= tau:
        old = int(runs[r, arm_at])
        arms[r, old, ARM.count] -= 1.0
        arms[r, old, ARM.sum] -= runs[r, arm_at + tau]
    runs[r, arm_at] = a
    runs[r, arm_at + tau] = x
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.sum] += x
    if slot == tau - 1:
        _resum(arms, runs, r, tau)


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
def _indices(sliding: bool, arms: Any, bonus: float, bound: float, out: Any) -> None:
    """Every ``(r, a)`` index with the step's ``bonus`` (:meth:`_ForgettingUCB.index`)."""
    for r in range(out.shape[0]):
        for a in range(out.shape[1]):
            s, n = arms[r, a, ARM.sum], arms[r, a, ARM.count]
            out[r, a] = _sw_value(s, n, bonus, bound) if sliding else _d_value(s, n, bonus, bound)


class _ForgettingUCB(IndexAgent):
    """What SW-UCB and D-UCB share: the constants ``xi`` and ``bound`` of the index and the
    arm statistics they forget."""

    traits = AgentTraits(compiled=True)
    ARM = ARM

    parameter_constraints = {
        "xi": Param(low=0, low_open=True, doc="exploration constant"),
        "bound": Param(low=0, low_open=True, doc="bound B on the rewards"),
    }

    def __init__(self, xi: float, bound: float) -> None:
        self.xi = xi
        self.bound = bound

    def _bonus(self) -> float:
        raise NotImplementedError

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` indices at the current step."""
        out = np.empty((self.n_runs, self.n_arms))
        _indices(isinstance(self, SlidingWindowUCB), self.arms, self._bonus(),
                 self.par[self.PAR.bound], out)  # fmt: skip
        return out


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
    PAR, RUN = SW_PAR, SW_RUN
    round_kernel, index_kernel, learn_kernel = _sw_round, _sw_index, _sw_learn

    parameter_constraints = {
        **_ForgettingUCB.parameter_constraints,
        "window": Param("int", low=1, doc="length tau of the sliding window"),
    }

    def __init__(self, window: int = 1000, xi: float = 0.6, bound: float = 1.0) -> None:
        super().__init__(xi, bound)
        self.window = window

    def parameters(self) -> dict[str, float]:
        tau = int(self.window)
        checks.memory(2 * tau * self.n_runs, f"window * n_runs = {tau} * {self.n_runs}")
        return {"xi": float(self.xi), "bound": float(self.bound), "tau": float(tau)}

    def run_columns(self) -> int:
        return 2 * int(self.window)

    def window_arms(self) -> NDArray[np.int64]:
        """The ``(R, tau)`` arms of the window, by slot (step ``t`` is in slot ``t % tau``)."""
        tau = int(self.window)
        return self.runs[:, SW_RUN.window : SW_RUN.window + tau].astype(np.int64)

    def window_rewards(self) -> NDArray[np.float64]:
        """The ``(R, tau)`` rewards of the window, by slot."""
        tau = int(self.window)
        return np.array(self.runs[:, SW_RUN.window + tau : SW_RUN.window + 2 * tau])

    def _bonus(self) -> float:
        return float(_sw_round(self.par, self.t))


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
    PAR, RUN = D_PAR, D_RUN
    RUN_START = {"gamma_t": 1.0}
    index_kernel, learn_kernel = _d_index, _d_learn

    parameter_constraints = {
        **_ForgettingUCB.parameter_constraints,
        "gamma": Param(low=0, high=1, low_open=True, high_open=True, doc="discount per step"),
    }

    def __init__(self, gamma: float = 0.999, xi: float = 0.6, bound: float = 1.0) -> None:
        super().__init__(xi, bound)
        self.gamma = gamma

    def parameters(self) -> dict[str, float]:
        return {"xi": float(self.xi), "bound": float(self.bound), "gamma": float(self.gamma)}

    def _bonus(self) -> float:
        return float(self.runs[0, D_RUN.bonus])
