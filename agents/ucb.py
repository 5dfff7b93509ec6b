"""Upper confidence bound, the paper's non-private baseline (App. H-1a)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, ArmStatistics
from dpbandits.core.arms import add_pull
from dpbandits.core.jit import beats, kernel
from dpbandits.core.params import Param

__all__ = ["UCB"]


# -- the compiled step (dpbandits.core.jit): one implementation for choose/index and play ---------
@kernel
def _value(s: float, n: float, log_term: float, alpha: float) -> float:
    """The index ``s / n + alpha * sqrt(log_term / n)`` of one arm (numpy's order of
    operations: ``sqrt(log_term / n) * alpha``, then the mean, then the sum)."""
    return s / n + math.sqrt(log_term / n) * alpha


@kernel
def _indices(sums: Any, counts: Any, log_term: float, alpha: float, out: Any) -> None:
    for r in range(sums.shape[0]):
        for a in range(sums.shape[1]):
            out[r, a] = _value(sums[r, a], counts[r, a], log_term, alpha)


@kernel
def _argmax(index: Any, out: Any) -> None:
    """The arm of highest index of every replication (``numpy.argmax``'s rule)."""
    for r in range(out.shape[0]):
        best_a = 0
        best = index[r, 0]
        for a in range(1, index.shape[1]):
            if beats(index[r, a], best):
                best_a, best = a, index[r, a]
        out[r] = best_a


@kernel
def _arm(sums: Any, counts: Any, r: int, log_term: float, alpha: float) -> int:
    """The arm of highest index of replication ``r`` (``numpy.argmax``'s rule)."""
    best_a = 0
    best = _value(sums[r, 0], counts[r, 0], log_term, alpha)
    for a in range(1, sums.shape[1]):
        v = _value(sums[r, a], counts[r, a], log_term, alpha)
        if beats(v, best):
            best_a, best = a, v
    return best_a


@kernel
def _choose(sums: Any, counts: Any, log_term: float, alpha: float, out: Any) -> None:
    for r in range(out.shape[0]):
        out[r] = _arm(sums, counts, r, log_term, alpha)


@kernel
def _play(sums: Any, counts: Any, alpha: float, log_horizon: float, per_step: bool, t0: int,
          rows: Any, actions: Any, rewards: Any, chosen: Any, index: Any,
          index_valid: bool) -> None:  # fmt: skip
    """Steps ``t0 .. t0 + len(rows) - 1`` of every replication (see ``Agent.play``). With the
    horizon's logarithm (``per_step`` false) an index changes only when its arm is pulled:
    the ``(R, K)`` indices are kept in ``index``, and the pulled arm's recomputed after each
    pull (the same value the step protocol computes at its next step). ``index_valid``: they
    are those of ``sums``/``counts`` already (kept from the previous call,
    ``Agent.kept_tables_valid``), else computed first."""
    n_runs, n_arms = sums.shape
    if not per_step and not index_valid:
        _indices(sums, counts, log_horizon, alpha, index)
    for i in range(rows.shape[0]):
        t = t0 + i
        log_term = math.log(max(t, 1)) if per_step else log_horizon
        if t < n_arms:
            chosen[:] = t
        elif not per_step:
            _argmax(index, chosen)
        for r in range(n_runs):
            # ln t: every index changes at every step, each is computed as the arm is chosen
            a = _arm(sums, counts, r, log_term, alpha) if per_step and t >= n_arms else chosen[r]
            x = rows[i, a * n_runs + r]
            actions[i, r] = a
            rewards[i, r] = x
            add_pull(counts, sums, r, a, x)
            if not per_step:
                index[r, a] = _value(sums[r, a], counts[r, a], log_horizon, alpha)


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

    parameter_constraints = {
        "alpha": Param(low=0, low_open=True, doc="exploration constant of the bonus"),
        "log": Param("str", options=("T", "t"), doc="ln T (App. H) or ln t (UCB1)"),
    }

    def __init__(self, alpha: float = math.sqrt(2.0), log: str = "T") -> None:
        self.alpha = alpha
        self.log = log

    def setup(self) -> None:
        self._alpha = float(self.alpha)
        self._log_horizon = math.nan
        if self.log == "T":
            self._log_horizon = math.log(self.needed_horizon("UCB(log='T') has ln T in its bonus"))
        self.stats = ArmStatistics(self.n_runs, self.n_arms)
        self._chosen = np.empty(self.n_runs, dtype=np.int64)  # work space of play
        self._index = np.empty((self.n_runs, self.n_arms))  # play's (Agent.kept_tables_valid)

    def _log_term(self) -> float:
        return self._log_horizon if self.log == "T" else math.log(max(self.t, 1))

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` UCB indices at the current step."""
        out = np.empty((self.n_runs, self.n_arms))
        _indices(self.stats.sums, self.stats.counts, self._log_term(), self._alpha, out)
        return out

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self.stats.sums, self.stats.counts, self._log_term(), self._alpha, out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        self.stats.update(actions, rewards)

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        _play(self.stats.sums, self.stats.counts, self._alpha, self._log_horizon,
              self.log == "t", self.t, rows, actions, rewards, self._chosen, self._index,
              self.kept_tables_valid)  # fmt: skip
        self.played(rows.shape[0])
