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
        self._index_buf = np.empty((self.n_runs, self.n_arms))
        self._bonus_buf = np.empty((self.n_runs, self.n_arms))

    def _index(self, out: NDArray[np.float64], bonus: NDArray[np.float64]) -> NDArray[np.float64]:
        """``out = sums / N + alpha * sqrt(log_term / N)`` with ``bonus`` as work space."""
        log_term = self._log_horizon if self.log == "T" else math.log(max(self.t, 1))
        counts = self.stats.counts
        # positional out= arguments: the cheapest ufunc calls on these small arrays
        np.divide(log_term, counts, bonus)
        np.sqrt(bonus, bonus)
        np.multiply(bonus, self._alpha, bonus)
        np.divide(self.stats.sums, counts, out)
        np.add(out, bonus, out)
        return out

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` UCB indices at the current step."""
        return self._index(np.empty_like(self._index_buf), np.empty_like(self._bonus_buf))

    def choose(self) -> NDArray[np.int64]:
        return self._index(self._index_buf, self._bonus_buf).argmax(1)

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        self.stats.update(actions, rewards)
