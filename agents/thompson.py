"""Thompson sampling, the paper's second non-private baseline (Fig. 9)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, ArmStatistics

__all__ = ["ThompsonSampling"]


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

    def choose(self) -> NDArray[np.int64]:
        counts1 = self.stats.counts + 1.0
        if self.model == "gaussian":
            theta = self.stats.sums / counts1
            theta += self.rng.standard_normal(self._shape) / np.sqrt(counts1)
        else:
            # sums holds the successes of the binarised rewards.
            successes = self.stats.sums
            theta = self.rng.beta(1.0 + successes, counts1 - successes)
        return np.argmax(theta, axis=1)

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        if self.model == "bernoulli":
            r = np.asarray(rewards, dtype=float)
            if not (r.min() >= 0.0 and r.max() <= 1.0):
                raise ValueError(
                    "ThompsonSampling(model='bernoulli') needs rewards in [0, 1], got "
                    f"min {r.min()}, max {r.max()}"
                )
            rewards = (self.rng.random(self.n_runs) < r).astype(float)
        self.stats.update(actions, rewards)
