"""Fig. 4: the exceptional positively-correlated scenarios (§V-B).

Two scenarios whose scores and sensitivities are both positively correlated, yet where GEM wins
in one and loses in the other: the top panels show the candidates, the middle ones the MSE of
every selector against eps, the bottom ones how often GEM and mGEM select each candidate.
docs/scenarios.md checks the figure claim by claim.

Full size: the paper's 10 000 trials and 100 000 selections per panel
(``dpbandits scenarios -s fig4``). The gallery runs 500 trials and 20 000 selections.
"""

from __future__ import annotations

import os

from dpbandits import scenarios
from dpbandits.scenarios import evaluation, exceptional_figures

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_TRIALS, N_DRAWS = (500, 20_000) if SMALL else (10_000, 100_000)

evaluations = [
    evaluation.evaluate(scenario, n_trials=N_TRIALS, seed=0, keep_errors=False)
    for scenario in scenarios.figure_scenarios("fig4")
]
for ev in evaluations:
    print(ev.to_markdown(), end="\n\n")
figure = exceptional_figures.exceptional_figure(evaluations, "fig4", n_draws=N_DRAWS, seed=0)
figure.savefig("fig04_exceptional.png", dpi=100)
