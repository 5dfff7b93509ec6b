"""Fig. 12: HG(RNM, RS) with gamma = 0.01 for three eps and four score gaps (§V-A, App. D).

The panels of Fig. 11 for random stopping, by Monte Carlo. docs/scenarios.md says where the
sign rule of Fig. 11 still holds for it and where it does not.

Full size: 4000 draws per cell, ``dpbandits two-candidate --figure 12``. The gallery takes 400
draws per cell on a 10 x 10 grid.
"""

from __future__ import annotations

import os

import numpy as np

from dpbandits.scenarios import plots, two_candidate

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_DRAWS, N_GRID = (400, 10) if SMALL else (4_000, 20)

grid = np.linspace(0.1, 2.0, N_GRID)
maps = [
    two_candidate.hg_map("rnm", "rs:gamma=0.01", grid, grid, epsilon=eps, q2=gap,
                         n_draws=N_DRAWS, seed=np.random.SeedSequence(0, spawn_key=(k,)))
    for k, (eps, gap) in enumerate((e, g) for e in (0.1, 1.0, 3.0) for g in (0.1, 1.0, 2.0, 5.0))
]  # fmt: skip
for hg in maps:
    print(f"eps = {hg.epsilon:g}, gap = {hg.q2 - hg.q1:g}: "
          f"HG from {hg.hg.min():+.3f} to {hg.hg.max():+.3f}")  # fmt: skip
plots.plot_hg(maps, ncols=4).savefig("fig12_rs.png", dpi=100)
