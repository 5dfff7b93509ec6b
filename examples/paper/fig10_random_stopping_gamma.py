"""Fig. 10: HG(RNM, RS_gamma) for four values of gamma (§V-A, App. D).

Random stopping with a smaller gamma stops later and behaves more like RNM with the
candidates' own noise scales: it wins where ``d1 < d2`` and loses elsewhere. Monte Carlo
(random stopping has no closed form); the paper does not list its gamma values, we take
0.5, 0.2, 0.05 and 0.01.

Full size: 4000 draws per cell, ``dpbandits two-candidate --figure 10``. The gallery takes
800 draws per cell.
"""

from __future__ import annotations

import os

import numpy as np

from dpbandits.scenarios import plots, two_candidate

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_DRAWS = 800 if SMALL else 4_000

grid = np.linspace(0.1, 2.0, 20)
maps = [
    two_candidate.hg_map("rnm", f"rs:gamma={gamma}", grid, grid, epsilon=0.1, q2=1.0,
                         n_draws=N_DRAWS, seed=np.random.SeedSequence(0, spawn_key=(k,)))
    for k, gamma in enumerate((0.5, 0.2, 0.05, 0.01))
]  # fmt: skip
for hg in maps:
    print(f"HG(rnm, {hg.m2}): from {hg.hg.min():+.3f} to {hg.hg.max():+.3f}")
plots.plot_hg(maps, ncols=4).savefig("fig10_rs_gamma.png", dpi=100)
