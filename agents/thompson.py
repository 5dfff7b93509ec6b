"""Thompson sampling, the paper's second non-private baseline (Fig. 9)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, ArmStatistics

__all__ = ["ThompsonSampling"]

#: Normals drawn per refill of the Gaussian model's noise (about 0.5 MB).
_NOISE_BLOCK = 1 << 16


class ThompsonSampling(Agent):
    """Thompson sampling with a Gaussian or a Beta--Bernoulli model.

    ``model="gaussian"`` (default): Agrawal & Goyal (2013), prior ``N(0, 1)`` and unit-variance
    likelihood, so the posterior of arm ``a`` after ``N_a`` pulls with reward sum ``S_a`` is
    ``N(S_a / (N_a + 1), 1 / (N_a + 1))``; each step draws ``theta_a`` from it and plays the
    argmax. App. H writes the posterior mean as ``mean_a``; we use Agrawal & Goyal's
    ``S_a / (N_a + 1)``, which is the exact posterior mean of that model (the two differ by a
    factor ``N_a / (N_a + 1)``).

    ``model="bernoulli"``: Beta(1, 1) priors and the binarisation trick (Agrawal & Goyal 2012) for
    rewards in ``[0, 1]``: a reward ``r`` is replaced by a ``Bernoulli(r)`` draw ``b``, which
    updates ``Beta(1 + successes, 1 + failures)``. Rewards outside ``[0, 1]`` raise
    ``ValueError``.

    Every arm is pulled once first (App. H); those pulls update the posterior too.
    """

    name = "thompson"

    def __init__(self, model: str = "gaussian") -> None:
        self.model = model

    def setup(self) -> None:
        if self.model not in ("gaussian", "bernoulli"):
            raise ValueError(f"model must be 'gaussian' or 'bernoulli', got {self.model!r}")
        self.stats = ArmStatistics(self.n_runs, self.n_arms)
        self._shape = (self.n_runs, self.n_arms)
        self._theta = np.empty(self._shape)
        self._work = np.empty(self._shape)
        self._ab = np.empty((*self._shape, 2))  # Beta parameters (a, b), interleaved
        # Gaussian model: the generator draws nothing else, so the (R, K) normals of the next
        # ``_block`` steps are drawn at once -- the same stream as one draw per step.
        self._block = max(1, _NOISE_BLOCK // (self.n_runs * self.n_arms))
        self._noise = np.empty((0, self.n_runs, self.n_arms))
        self._j = 0

    def choose(self) -> NDArray[np.int64]:
        theta, work = self._theta, self._work
        counts = self.stats.counts
        if self.model == "gaussian":
            j = self._j
            if j == self._noise.shape[0]:
                self._noise = self.rng.standard_normal((self._block, *self._shape))
                j = 0
            self._j = j + 1
            np.add(counts, 1.0, work)  # N_a + 1
            np.divide(self.stats.sums, work, theta)  # posterior mean S_a / (N_a + 1)
            np.sqrt(work, work)
            np.divide(self._noise[j], work, work)  # N(0, 1 / (N_a + 1))
            np.add(theta, work, theta)
        else:
            # sums holds the successes of the binarised rewards.
            successes = self.stats.sums
            if self.t < self.n_arms:  # (not reached through act(): every arm is pulled first)
                np.add(counts, 1.0, work)
                return np.asarray(self.rng.beta(1.0 + successes, work - successes).argmax(1))
            # Beta(a, b) with a + b >= 3 (every arm pulled once) is numpy's gamma branch,
            # Ga / (Ga + Gb) with Ga ~ Gamma(a) drawn before Gb ~ Gamma(b), element by element:
            # one standard_gamma call on the interleaved (a, b) pairs makes exactly those draws,
            # and costs less than Generator.beta (whose argument checks dominate at small R).
            ab = self._ab
            np.add(successes, 1.0, ab[:, :, 0])
            np.subtract(counts, successes, ab[:, :, 1])
            ab[:, :, 1] += 1.0
            g = self.rng.standard_gamma(ab)
            np.add(g[:, :, 0], g[:, :, 1], work)
            np.divide(g[:, :, 0], work, theta)
        return theta.argmax(1)

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        if self.model == "bernoulli":
            r = np.asarray(rewards, dtype=float)
            # (ufunc reductions: the ndarray methods add a Python layer on this per-step path)
            if not (np.minimum.reduce(r) >= 0.0 and np.maximum.reduce(r) <= 1.0):
                raise ValueError(
                    "ThompsonSampling(model='bernoulli') needs rewards in [0, 1], got "
                    f"min {r.min()}, max {r.max()}"
                )
            # the binarised rewards as booleans: the statistics store them as 0.0 / 1.0
            rewards = self.rng.random(self.n_runs) < r  # type: ignore[assignment]
        self.stats.update(actions, rewards)
