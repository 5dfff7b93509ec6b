"""Fig. 1: MSE of every selector on the bimodal scenarios 1-3 (§VI).

Scenarios 1-3 draw 100 candidates with bimodal scores whose sensitivities are positively
correlated, negatively correlated or independent of the scores; each selector picks one
candidate per trial, and the panels show the mean squared error of the picked score against
eps. docs/scenarios.md sets the numbers beside the paper's claims.

Full size: the paper's 10 000 trials per scenario (``dpbandits scenarios -s fig1``). The
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
    for scenario in scenarios.figure_scenarios("fig1")
]
for ev in evaluations:
    print(ev.to_markdown(), end="\n\n")
plots.plot_evaluations(evaluations).savefig("fig01_scenarios.png", dpi=100)
