"""Quickstart: UCB against a private mGEM agent on the paper's shifting bandit (App. H, Fig. 9).

Run:  python examples/quickstart.py      (about 10 seconds; writes quickstart.png)
"""

from __future__ import annotations

import gymnasium

import dpbandits  # the front door (and it registers the dpbandits/... environment ids)
from dpbandits import agents, plotting

# 1. The environment: two clipped-Gaussian arms whose means (0.2, 0.8) swap at t_shift.
env = gymnasium.make("dpbandits/TwoArmedShift-v0", t_shift=6_000, horizon=10_000)
print(env.unwrapped.expected_rewards(0), "->", env.unwrapped.expected_rewards(6_000))

# 2. The agents: plain UCB and a private agent (private means, DP sensitivities, mGEM selector).
contenders = {
    "UCB": agents.UCB(),
    "mGEM": agents.PrivateAgent("mgem", epsilon_select=1.0, epsilon_means=1.0, beta=0.05),
}

# 3. Run 50 replications of each, in lockstep, on all cores.
results = dpbandits.run(env, contenders, n_runs=50, seed=0)
print(results.summary())
print(results.privacy_text())

# 4. Plot cumulative reward and regret (bands: 95% CI of the mean; dotted: the shift).
plotting.plot_cumulative(results).savefig("quickstart.png", dpi=120)
print("wrote quickstart.png")
