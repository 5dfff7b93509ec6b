"""Paper 001, Fig. 3: click-through rate of private recommendation against eps.

Companion paper 001 (private recommendation). Each request holds candidates with a user's
private relevance scores; randomized response (RR), scaled report noisy max (Eq. 3) and
clipped report noisy max (Eq. 4) pick one under local DP, and the figure shows the
engagement (CTR) of what they pick against eps, between a random pick and the non-private
best. The requests are synthetic (the App. G generator): docs/recommendation.md says what
differs from the paper because of it.

Full size: 40 000 requests (``dpbandits recommend --experiment epsilon``). The gallery draws
4 000.
"""

from __future__ import annotations

import os

from dpbandits.recommendation import local_experiments, plots
from dpbandits.recommendation.synthetic import generate_requests

SMALL = os.environ.get("DPBANDITS_EXAMPLES") == "small"  # the docs gallery runs it small
N_REQUESTS = 4_000 if SMALL else 40_000

requests = generate_requests(N_REQUESTS, rng=0)
rows = local_experiments.epsilon_sweep(
    requests, [0.1, 0.3, 1, 2, 3, 5, 10, 20], bounds=(0.05, 0.25), rng=1
)
print(f"non-personalised CTR {rows[0]['ctr_nonpersonalised']:.3f}, "
      f"non-private best {rows[0]['ctr_greedy']:.3f}")  # fmt: skip
for row in rows:
    bound = "" if row["bound"] != row["bound"] else f" (bound {row['bound']:g})"  # NaN: no bound
    print(f"eps {row['epsilon']:>4g}  {row['mechanism'] + bound:26} "
          f"CTR {row['ctr']:.3f} +- {row['se']:.3f}")  # fmt: skip
plots.plot_epsilon_sweep(rows, title="Fig. 3: engagement against eps").savefig(
    "paper001_fig3.png", dpi=100
)
