"""Fig. 11: HG(RNM, RNMH) for three eps and four score gaps (§V-A, App. D).

Rows: eps = 0.1, 1, 3; columns: ``q2 - q1`` = 0.1, 1, 2, 5. For RNMH the sign rule (better
exactly when ``d1 < d2``) holds in every panel; the size of the gain depends on eps times the
gap. Closed forms, exact.

Runs at full size; ``dpbandits two-candidate --figure 11`` draws the same.
"""

from __future__ import annotations

import numpy as np

from dpbandits.scenarios import plots, two_candidate

grid = np.linspace(0.1, 2.0, 20)
maps = [
    two_candidate.hg_map("rnm", "rnmh", grid, grid, epsilon=eps, q2=gap, method="closed form")
    for eps in (0.1, 1.0, 3.0)
    for gap in (0.1, 1.0, 2.0, 5.0)
]
for hg in maps:
    print(f"eps = {hg.epsilon:g}, gap = {hg.q2 - hg.q1:g}: "
          f"{np.mean(hg.hg > 0):.0%} of the cells favour RNMH")  # fmt: skip
plots.plot_hg(maps, ncols=4).savefig("fig11_rnmh.png", dpi=100)
