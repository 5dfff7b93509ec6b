"""Paper 002, Fig. 1: sure independence screening against the two-stage method, non-private.

Companion paper 002 (DP feature selection). On two synthetic designs, how often each of 100
features is selected among the top 5 by SIS (marginal correlations) and by the two-stage
method (LASSO, then the top 5): the true features are 1-5 and 96-100. docs/topk.md compares
the counts with the paper's. Needs scikit-learn (``pip install ".[sklearn]"``).

Full size: the paper's 1000 repetitions (``dpbandits topk --figure fig1 --reps 1000``). The
gallery runs 40.
"""

from __future__ import annotations

import os

from dpbandits.topk import experiments, plots

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
REPS = 40 if SMALL else 1_000

records = experiments.figure1_counts(REPS, seed=0)
for design in ("W1", "W1/W2"):
    for method in ("SIS", "two-stage"):
        counts = [r["count"] for r in records if r["design"] == design and r["method"] == method]
        print(f"{design:6} {method:10} true features 1-5: {counts[:5]}, 96-100: {counts[95:]}")
plots.plot_figure1(records).savefig("paper002_fig1.png", dpi=100)
