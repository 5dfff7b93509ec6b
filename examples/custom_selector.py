"""Plug your own DP selector into a private bandit agent by name.

The selector below lives in this file, not in the library: ``selectors.register`` makes its
name usable everywhere a selector name is accepted -- here ``agents.PrivateAgent("noisy_top2")``
and the engine. It is *report-noisy-max with Laplace noise scaled per candidate*, i.e. RNMH with
Laplace noise -- **not** differentially private (§IV-A), which is why it declares
``private = False``: a plug-in states its own guarantee.

Run:  python examples/custom_selector.py      (about 10 seconds)
"""

from __future__ import annotations

import numpy as np

import agents
from dpbandits import selectors
from dpbandits.experiments import run, shift_env


class NoisyTop(selectors.Selector):
    """argmax(q + Lap(2 d / eps)) with candidate-wise scale: a heterogeneous-noise heuristic."""

    name = "noisy_top2"
    private = False  # heterogeneous report-noisy-max is not DP (§IV-A counterexample)
    guarantee = "none (heuristic)"
    uses_sensitivities = True

    def select_batch(self, q, d, rng):
        # q, d: validated (R, K) arrays; one draw per row, no loop over rows.
        return np.argmax(q + rng.laplace(scale=2.0 * d / self.epsilon), axis=1)


selectors.register("noisy_top2", NoisyTop)

if __name__ == "__main__":
    results = run(
        shift_env(t_shift=6_000, horizon=10_000),
        {
            "mGEM": agents.PrivateAgent("mgem", beta=0.05),
            "noisy_top2": agents.PrivateAgent("noisy_top2", epsilon_select=1.0),
        },
        n_runs=40,
        seed=1,
    )
    print(results.summary())
