"""Fig. 7: combined GEM on the two-group scenarios 7 and 8 (§VII, Alg. 2, App. F).

Two groups of users score the candidates in opposite orders (strong polarisation in scenario
7, weak in 8). Combined GEM chooses between GEM and mGEM from a private estimate of the
correlation, and should follow the better of the two in each scenario.

Full size: the paper's 5 000 trials per scenario (``dpbandits scenarios -s fig7``). The
gallery runs 400 trials.
"""

from __future__ import annotations

import os

from dpbandits import scenarios
from dpbandits.scenarios import evaluation, plots

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_TRIALS = 400 if SMALL else 5_000
SELECTORS = (*evaluation.DEFAULT_SELECTORS, "combined_gem")

evaluations = [
    evaluation.evaluate(scenario, SELECTORS, n_trials=N_TRIALS, seed=0, keep_errors=False)
    for scenario in scenarios.figure_scenarios("fig7")
]
for ev in evaluations:
    print(ev.to_markdown(), end="\n\n")
plots.plot_evaluations(evaluations).savefig("fig07_combined_gem.png", dpi=100)
