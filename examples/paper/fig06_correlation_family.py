"""Fig. 6: MSE as the correlation between scores and sensitivities grows (§VI-d).

The correlation family ``corr:t``: the spread of each candidate's scores grows linearly with
its mean score, with slope ``t / 5``, so ``t`` sets how strongly sensitivities and scores are
correlated. GEM and mGEM gain over report noisy max as the correlation grows.
docs/scenarios.md gives the reading of the paper's garbled formula that this uses.

Full size: the paper's 10 000 trials for each ``t`` (``dpbandits scenarios -s fig6``). The
gallery runs 300 trials.
"""

from __future__ import annotations

import os

from dpbandits import scenarios
from dpbandits.scenarios import evaluation, plots

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_TRIALS = 300 if SMALL else 10_000

evaluations = [
    evaluation.evaluate(scenario, n_trials=N_TRIALS, seed=0, keep_errors=False)
    for scenario in scenarios.figure_scenarios("fig6")
]
print(evaluations[-1].to_markdown())
plots.plot_evaluations(evaluations).savefig("fig06_correlation.png", dpi=100)
