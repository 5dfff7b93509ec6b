"""Write a bandit agent in a few lines and compare it with UCB and Thompson sampling.

An agent subclasses ``agents.Agent`` and writes ``setup`` (state for R replications),
``choose`` (one action per replication) and ``observe`` (learn from the step). The base class
pulls every arm once first and handles seeding. Everything is a numpy array over the R
replications, so the engine runs all of them at once. Its parameters are declared once, in
``parameter_constraints``: ``reset`` checks them, and configs and ``dpbandits list`` read them.
``dpbandits.testing.check_agent`` checks the agent against the protocol before it is used.

Run:  python examples/custom_agent.py      (about 10 seconds; writes custom_agent.png)
"""

from __future__ import annotations

import numpy as np

import agents
from dpbandits.core.params import Param
from dpbandits.experiments import plotting, run, shift_env
from dpbandits.testing import check_agent


class EpsilonGreedy(agents.Agent):
    """Play the best empirical mean, except with probability ``explore`` a uniform arm
    (epsilon-greedy; its rate is called ``explore`` because in this library ``epsilon`` is
    always a privacy budget)."""

    name = "eps_greedy"
    parameter_constraints = {"explore": Param(low=0, high=1, doc="exploration probability")}

    def __init__(self, explore: float = 0.05) -> None:
        self.explore = explore

    def setup(self) -> None:
        self.stats = agents.ArmStatistics(self.n_runs, self.n_arms)

    def choose(self) -> np.ndarray:
        greedy = self.stats.means().argmax(axis=1)
        explores = self.rng.random(self.n_runs) < self.explore
        return np.where(explores, self.rng.integers(self.n_arms, size=self.n_runs), greedy)

    def observe(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.stats.update(actions, rewards)


if __name__ == "__main__":
    print(check_agent(EpsilonGreedy(explore=0.05)))  # protocol, determinism, params, validation
    results = run(
        shift_env(t_shift=6_000, horizon=10_000),
        {
            "UCB": agents.UCB(),
            "TS": agents.ThompsonSampling(),
            "eps-greedy": EpsilonGreedy(explore=0.05),
        },
        n_runs=50,
        seed=2,
    )
    print(results.summary())
    plotting.plot_cumulative(results, "regret").savefig("custom_agent.png", dpi=120)
    print("wrote custom_agent.png")
