"""Write your own DP selector, check it with the conformance kit, and run it inside a bandit agent.

The selector lives in this file, not in the library. It is the exponential mechanism
(McSherry & Talwar 2007) sampled by *inverse CDF*: per row, the probabilities

    P(a) = exp(eps (q[a] - max q) / (2 D)) / sum_b exp(eps (q[b] - max q) / (2 D)),
    D = max_a d[a]

are accumulated and one uniform picks the candidate. Between neighbouring inputs every score
moves by at most ``d[a] <= D`` (eq. (1)), so each weight changes by a factor of at most
``e^{eps/2}`` and their sum too: the output is eps-DP. (The library's ``exponential_mechanism``
samples the same law by Gumbel-max; this one uses one uniform per row instead of one Gumbel per
candidate.) docs/selectors.md explains each step.

1. ``select_batch`` is the only method to write: the base class validates ``q``, ``d`` and
   ``rng``, handles any leading shape and K = 1, and calls it with float arrays ``(R, K)``.
2. ``check_selector`` runs the API contract (shapes, one independent draw per row, seeding,
   symmetric law, validation) and the empirical privacy audit (raises if broken).
3. ``selectors.register`` makes the name usable everywhere a selector name is: agents, the
   engine, ``dpbandits scenarios/audit/list --plugin examples/custom_selector.py``.

Run:  python examples/custom_selector.py      (a few seconds)
"""

from __future__ import annotations

import numpy as np

import agents
from dpbandits import selectors
from dpbandits.experiments import run, shift_env
from dpbandits.selectors.base import row_max
from dpbandits.testing import check_selector


class SoftmaxEM(selectors.Selector):
    """The exponential mechanism ``P(a) ∝ exp(eps q[a] / (2D))``, sampled by inverse CDF."""

    name = "softmax_em"
    private = True
    guarantee = "eps-DP"
    uses_sensitivities = True  # through D = max_a d[a]
    summary = "P(a) ∝ exp(eps q[a]/(2D)) by inverse CDF, D = max d"

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon)  # validates epsilon; get_params/with_epsilon/repr come free

    def select_batch(self, q, d, rng):
        # q, d: validated float arrays (R, K), K >= 2; one independent draw per row.
        lam = self.epsilon / (2.0 * row_max(d))  # eps / (2D), per row
        with np.errstate(over="ignore"):  # a gap beyond the float range is -inf: weight 0
            log_w = (q - row_max(q)) * lam  # <= 0, the maximiser exactly 0: no overflow
        cdf = np.cumsum(np.exp(log_w), axis=1)  # unnormalised; the last entry is >= 1
        u = rng.random(q.shape[0])[:, None] * cdf[:, -1:]  # uniform in [0, total), < total
        # the first candidate whose cumulative weight exceeds u: in range (u < total) and
        # never one of weight 0 (its cumulative weight equals its predecessor's)
        return (cdf <= u).sum(axis=1)


selectors.register("softmax_em", SoftmaxEM, overwrite=True)

if __name__ == "__main__":
    report = check_selector(SoftmaxEM(epsilon=1.0))  # raises SelectorCheckError if broken
    print(report.summary())
    print(report["privacy"].message, "\n")

    results = run(
        shift_env(t_shift=2_500, horizon=4_000),
        {
            "softmax_em": agents.PrivateAgent("softmax_em", epsilon_select=1.0),
            "exponential_mechanism": agents.PrivateAgent("exponential_mechanism"),
            "mGEM": agents.PrivateAgent("mgem", beta=0.05),
        },
        n_runs=10,
        seed=1,
        progress=False,
        n_jobs=1,
    )
    print(results.summary())
