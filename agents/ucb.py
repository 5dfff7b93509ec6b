"""Upper confidence bound, the paper's non-private baseline (App. H-1a)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, ArmStatistics
from dpbandits.checks import positive_number

__all__ = ["UCB"]


class UCB(Agent):
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

    def __init__(self, alpha: float = math.sqrt(2.0), log: str = "T") -> None:
        self.alpha = alpha
        self.log = log

    def setup(self) -> None:
        self._alpha = positive_number(self.alpha, "alpha")
        if self.log not in ("T", "t"):
            raise ValueError(f"log must be 'T' (ln horizon) or 't' (ln t, UCB1), got {self.log!r}")
        if self.log == "T":
            if self.horizon is None:
                raise ValueError("UCB(log='T') needs the horizon: reset(..., horizon=T)")
            self._log_horizon = math.log(self.horizon)
        self.stats = ArmStatistics(self.n_runs, self.n_arms)

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` UCB indices at the current step."""
        log_term = self._log_horizon if self.log == "T" else math.log(max(self.t, 1))
        counts = self.stats.counts
        return self.stats.sums / counts + self._alpha * np.sqrt(log_term / counts)

    def choose(self) -> NDArray[np.int64]:
        return np.argmax(self.index(), axis=1)

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        self.stats.update(actions, rewards)
