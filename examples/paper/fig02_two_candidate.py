"""Fig. 2: two candidates, HG(RNM, RNMH) and HG(RNM, RS) over their sensitivities (§V-A).

With two candidates of scores ``q1 < q2`` and sensitivities ``d1``, ``d2``, HG(M, M') is how
much less often M' than M picks the worse candidate (red: M' better). RNM with heterogeneous
noise beats RNM exactly when ``d1 < d2``; these maps use the closed forms of App. D, so they
are exact. docs/scenarios.md compares them with the paper.

Runs at full size (closed forms); ``dpbandits two-candidate --figure 2`` draws the same.
"""

from __future__ import annotations

import numpy as np

from dpbandits.scenarios import plots, two_candidate

grid = np.linspace(0.1, 2.0, 20)  # d1 and d2
maps = [
    two_candidate.hg_map("rnm", "rnmh", grid, grid, epsilon=0.1, q2=1.0, method="closed form"),
    # RS has no closed form: Monte Carlo, 4000 draws per cell
    two_candidate.hg_map("rnm", "rs:gamma=0.01", grid, grid, epsilon=0.1, q2=1.0, seed=0),
]
for hg in maps:
    print(f"HG({hg.m}, {hg.m2}), eps = {hg.epsilon}: from {hg.hg.min():+.4f} to {hg.hg.max():+.4f}")
plots.plot_hg(maps, ncols=2).savefig("fig02_two_candidate.png", dpi=100)
