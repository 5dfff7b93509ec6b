"""Fig. 5: MSE of every selector on the Gaussian scenarios 4-6 (§VI).

Scenarios 4-6 give each candidate a Gaussian score distribution whose spread (hence the
quantile sensitivity) is correlated positively, negatively or not at all with its mean score.
docs/scenarios.md sets the numbers beside the paper's claims.

Full size: the paper's 10 000 trials per scenario (``dpbandits scenarios -s fig5``). The
gallery runs 500 trials.
"""

from __future__ import annotations

import os

from dpbandits import scenarios
from dpbandits.scenarios import evaluation, plots

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_TRIALS = 500 if SMALL else 10_000

evaluations = [
    evaluation.evaluate(scenario, n_trials=N_TRIALS, seed=0, keep_errors=False)
    for scenario in scenarios.figure_scenarios("fig5")
]
for ev in evaluations:
    print(ev.to_markdown(), end="\n\n")
plots.plot_evaluations(evaluations).savefig("fig05_scenarios.png", dpi=100)
