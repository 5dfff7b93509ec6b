"""Fig. 18: the exceptional scenarios again, for RNM, GEM and mGEM (App. I).

App. I returns to the scenarios of Fig. 4 to argue for a weighted correlation that puts the
high scorers first: it tells the two scenarios apart where Spearman's correlation does not.

Full size: the paper's 10 000 trials (``dpbandits scenarios -s fig18``). The gallery runs 500.
"""

from __future__ import annotations

import os

from dpbandits import scenarios
from dpbandits.scenarios import evaluation, exceptional_figures

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_TRIALS = 500 if SMALL else 10_000
SELECTORS = exceptional_figures.FIG18_SELECTORS  # "a subset of the algorithms"

evaluations = [
    evaluation.evaluate(scenario, SELECTORS, n_trials=N_TRIALS, seed=0, keep_errors=False)
    for scenario in scenarios.figure_scenarios("fig18")
]
for ev in evaluations:
    print(ev.to_markdown(), end="\n\n")
figure = exceptional_figures.exceptional_figure(evaluations, "fig18", seed=0)
figure.savefig("fig18_weighted.png", dpi=100)
