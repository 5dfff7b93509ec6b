"""Fig. 13: MSE against the proportion of high scores, at eps = 2 (App. E).

The bimodal scenarios 1-3 with a varying fraction of candidates in the high mode. Where few
candidates score high, a selector that favours low-sensitivity candidates pays more.

Full size: the paper's 10 000 trials per proportion (``dpbandits scenarios -s fig13``). The
gallery runs 300 trials.
"""

from __future__ import annotations

import os

from dpbandits.scenarios import evaluation, plots

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_TRIALS = 300 if SMALL else 10_000

sweeps = [evaluation.proportion_sweep(kind, epsilon=2.0, n_trials=N_TRIALS, seed=0)
          for kind in (1, 2, 3)]  # fmt: skip
print(sweeps[0].to_markdown())
figure = plots.plot_sweeps(sweeps, suptitle="Fig. 13: proportion of high scores")
figure.savefig("fig13_proportion.png", dpi=100)
