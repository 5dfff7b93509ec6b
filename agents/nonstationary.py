"""Non-stationary UCB baselines: sliding-window and discounted UCB (Garivier & Moulines 2011).

Not part of the paper; App. H adds them to test honestly the claim of App. H that private
selection adapts faster to a shift than (stationary) UCB: an agent built to forget is the fair
non-private competitor.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, ArmStatistics
from dpbandits import checks
from dpbandits.checks import positive_int, positive_number

__all__ = ["DiscountedUCB", "SlidingWindowUCB"]


class _ForgettingUCB(Agent):
    """What SW-UCB and D-UCB share: the constants ``xi`` and ``bound`` of the index, the arm
    statistics they forget, and the choice of the arm of highest index (ties: lowest index)."""

    def __init__(self, xi: float, bound: float) -> None:
        self.xi = xi
        self.bound = bound

    def setup(self) -> None:
        self._xi = positive_number(self.xi, "xi")
        self._bound = positive_number(self.bound, "bound")
        self.stats = ArmStatistics(self.n_runs, self.n_arms)

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` indices at the current step."""
        raise NotImplementedError

    def choose(self) -> NDArray[np.int64]:
        return np.argmax(self.index(), axis=1)


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

    def __init__(self, window: int = 1000, xi: float = 0.6, bound: float = 1.0) -> None:
        super().__init__(xi, bound)
        self.window = window

    def setup(self) -> None:
        self._tau = positive_int(self.window, "window")
        checks.memory(2 * self._tau * self.n_runs, f"window * n_runs = {self._tau} * {self.n_runs}")
        super().setup()
        self._buf_idx = np.zeros((self._tau, self.n_runs), dtype=np.int64)
        self._buf_rew = np.zeros((self._tau, self.n_runs))

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` SW-UCB indices at the current step."""
        counts = self.stats.counts
        safe = np.maximum(counts, 1.0)
        log_term = math.log(min(max(self.t, 1), self._tau))
        idx = self.stats.sums / safe + self._bound * np.sqrt(self._xi * log_term / safe)
        idx[counts == 0] = np.inf
        return idx

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        slot = self.t % self._tau
        stats = self.stats
        if self.t >= self._tau:
            old = self._buf_idx[slot]
            stats.counts_flat[old] -= 1.0
            stats.sums_flat[old] -= self._buf_rew[slot]
        idx = stats.flat_index(actions)
        stats.counts_flat[idx] += 1.0
        stats.sums_flat[idx] += rewards
        self._buf_idx[slot] = idx
        self._buf_rew[slot] = rewards
        if slot == self._tau - 1:
            # The buffer now holds exactly the window: recompute the sums without drift.
            stats.sums_flat[:] = np.bincount(
                self._buf_idx.ravel(), weights=self._buf_rew.ravel(), minlength=stats.sums.size
            )


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

    def __init__(self, gamma: float = 0.999, xi: float = 0.6, bound: float = 1.0) -> None:
        super().__init__(xi, bound)
        self.gamma = gamma

    def setup(self) -> None:
        g = checks.number(self.gamma, "gamma")
        if not (0.0 < g < 1.0):
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma}")
        self._gamma = g
        super().setup()
        self._gamma_t = 1.0  # gamma ** t, kept as a running product

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` D-UCB indices at the current step."""
        counts = np.maximum(self.stats.counts, 1e-300)
        n = (1.0 - self._gamma_t) / (1.0 - self._gamma)
        log_n = math.log(max(n, 1.0))
        return self.stats.sums / counts + 2.0 * self._bound * np.sqrt(self._xi * log_n / counts)

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        self.stats.counts *= self._gamma
        self.stats.sums *= self._gamma
        self.stats.update(actions, rewards)
        self._gamma_t *= self._gamma
