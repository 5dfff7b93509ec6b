"""Upper confidence bound, the paper's non-private baseline (App. H-1a)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.skeleton import IndexAgent, fields
from dpbandits.core.jit import inline_kernel, kernel
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["UCB"]


# -- the compiled step on the skeleton (agents.skeleton): the state is each arm's reward sum, pull
# count and index. With the horizon's logarithm an index changes only when its arm is pulled, so
# it is kept in the state and recomputed after each pull (the value the arm would get at the next
# step); with ln t every index changes at every step and is computed as the arm is chosen.
ARM = fields("sum", "count", "index")
PAR = fields("alpha", "log_horizon", "per_step")


@kernel
def _value(s: float, n: float, log_term: float, alpha: float) -> float:
    """The index ``s / n + alpha * sqrt(log_term / n)`` of one arm (numpy's order of
    operations: ``sqrt(log_term / n) * alpha``, then the mean, then the sum)."""
    return s / n + math.sqrt(log_term / n) * alpha


@inline_kernel
def _round(par: Any, t: int) -> float:
    """The logarithm in the bonus: ``ln t`` (``t`` pulls made so far), or ``ln T``."""
    return math.log(max(t, 1)) if par[PAR.per_step] != 0.0 else par[PAR.log_horizon]


@inline_kernel
def _index(arms: Any, runs: Any, par: Any, r: int, a: int, log_term: float, bits: Any) -> float:
    if par[PAR.per_step] != 0.0:
        return _value(arms[r, a, ARM.sum], arms[r, a, ARM.count], log_term, par[PAR.alpha])
    return arms[r, a, ARM.index]


@inline_kernel
def _learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.sum] += x
    if par[PAR.per_step] == 0.0:
        arms[r, a, ARM.index] = _value(arms[r, a, ARM.sum], arms[r, a, ARM.count],
                                       par[PAR.log_horizon], par[PAR.alpha])  # fmt: skip


class UCB(IndexAgent):
    """UCB with index ``mean_a + alpha * sqrt(ln T / N_a)`` (App. H-1a).

    Parameters
    ----------
    alpha:
        Optimism, ``sqrt(2)`` as in the paper.
    log:
        ``"T"`` (default, the paper): the horizon ``T`` in the bonus, which then needs
        ``reset(..., horizon=T)``. ``"t"``: classic UCB1 (Auer et al. 2002) with ``ln t``, ``t``
        the number of pulls made so far.

    Every arm is pulled once first (App. H). Ties of the index go to the lowest arm index
    (``numpy.argmax``); with continuous rewards they have probability zero.
    """

    name = "ucb"
    traits = AgentTraits(compiled=True, needs_horizon=True)
    ARM, PAR = ARM, PAR
    # an arm never pulled has the index 0 / 0 + sqrt(ln T / 0) * alpha = nan, as computed
    ARM_START = {"index": math.nan}
    round_kernel, index_kernel, learn_kernel = _round, _index, _learn

    parameter_constraints = {
        "alpha": Param(low=0, low_open=True, doc="exploration constant of the bonus"),
        "log": Param("str", options=("T", "t"), doc="ln T (App. H) or ln t (UCB1)"),
    }

    def __init__(self, alpha: float = math.sqrt(2.0), log: str = "T") -> None:
        self.alpha = alpha
        self.log = log

    def parameters(self) -> dict[str, float]:
        log_horizon = math.nan
        if self.log == "T":
            log_horizon = math.log(self.needed_horizon("UCB(log='T') has ln T in its bonus"))
        return {"alpha": float(self.alpha), "log_horizon": log_horizon,
                "per_step": float(self.log == "t")}  # fmt: skip

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` UCB indices at the current step."""
        per_step = self.par[PAR.per_step] != 0.0
        log_term = math.log(max(self.t, 1)) if per_step else self.par[PAR.log_horizon]
        return np.asarray(
            self.arm_field("sum") / self.arm_field("count")
            + np.sqrt(log_term / self.arm_field("count")) * self.par[PAR.alpha]
        )
