"""Write a bandit agent in a few lines and compare it with UCB and Thompson sampling.

An agent subclasses ``agents.Agent`` and writes ``setup`` (state for R replications),
``choose`` (one action per replication) and ``observe`` (learn from the step). The base class
pulls every arm once first and handles seeding. Everything is a numpy array over the R
replications, so the engine runs all of them at once.

Run:  python examples/custom_agent.py      (about 10 seconds; writes custom_agent.png)
"""

from __future__ import annotations

import numpy as np

import agents
from dpbandits.experiments import plotting, run, shift_env


class EpsilonGreedy(agents.Agent):
    """Play the best empirical mean, except with probability epsilon a uniform arm."""

    name = "eps_greedy"

    def __init__(self, epsilon: float = 0.05) -> None:
        self.epsilon = epsilon

    def setup(self) -> None:
        self.stats = agents.ArmStatistics(self.n_runs, self.n_arms)

    def choose(self) -> np.ndarray:
        greedy = self.stats.means().argmax(axis=1)
        explore = self.rng.random(self.n_runs) < self.epsilon
        return np.where(explore, self.rng.integers(self.n_arms, size=self.n_runs), greedy)

    def observe(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.stats.update(actions, rewards)


if __name__ == "__main__":
    results = run(
        shift_env(t_shift=6_000, horizon=10_000),
        {"UCB": agents.UCB(), "TS": agents.ThompsonSampling(), "eps-greedy": EpsilonGreedy(0.05)},
        n_runs=50,
        seed=2,
    )
    print(results.summary())
    plotting.plot_cumulative(results, "regret").savefig("custom_agent.png", dpi=120)
    print("wrote custom_agent.png")
