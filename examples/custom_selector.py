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
2. ``compiled_kernel`` is optional: the same selection as a compiled row kernel, so that the
   private agent plays it inside its compiled loop, as fast as a built-in selector, instead of
   calling ``select_batch`` from Python at every step (docs/selectors.md, "A compiled kernel").
3. ``check_selector`` runs the API contract (shapes, one independent draw per row, seeding,
   symmetric law, validation), checks that the kernel selects as ``select`` does, and runs the
   empirical privacy audit (raises if broken).
4. ``selectors.register`` makes the name usable everywhere a selector name is: agents, the
   engine, ``dpbandits scenarios/audit/list --plugin examples/custom_selector.py``.

Run:  python examples/custom_selector.py      (a few seconds, plus a few the first time: the
kernel and the agent's loop with it are compiled once and cached)
"""

from __future__ import annotations

import math

import numpy as np

import agents
from dpbandits import selectors
from dpbandits.core.jit import kernel
from dpbandits.experiments import run, shift_env
from dpbandits.selectors.base import row_max
from dpbandits.selectors.compiled import CompiledKernel
from dpbandits.testing import check_selector


@kernel  # numba.njit(cache=True) works too
def softmax_em_kernel(params, q, d, rng, out):
    """``select_batch`` below as a row loop: the same arithmetic and one ``rng.random()`` per
    row, in row order (the draws of ``rng.random(R)``). ``params = (epsilon,)``. Returns True:
    no input is refused (a kernel returns False, drawing nothing, where ``select_batch`` would
    raise)."""
    epsilon = params[0]
    cdf = np.empty(q.shape[1])
    for r in range(q.shape[0]):
        q_max, d_max = q[r, 0], d[r, 0]
        for a in range(1, q.shape[1]):
            q_max, d_max = max(q_max, q[r, a]), max(d_max, d[r, a])
        lam = epsilon / (2.0 * d_max)
        total = 0.0
        for a in range(q.shape[1]):
            total += math.exp((q[r, a] - q_max) * lam)
            cdf[a] = total
        u = rng.random() * total
        chosen = 0
        for a in range(q.shape[1]):
            chosen += cdf[a] <= u
        out[r] = chosen
    return True


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

    def compiled_kernel(self, n_candidates):
        # the kernel and its parameters for n_candidates candidates (here independent of it)
        return CompiledKernel(softmax_em_kernel, (float(self.epsilon),))


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

    # the kernel at work: the agent plays blocks of steps in one compiled call; without it
    # (StepByStep), it calls select_batch from Python at every step
    class StepByStep(SoftmaxEM):
        def compiled_kernel(self, n_candidates):
            return None

    for label, selector in [("softmax_em", SoftmaxEM()), ("softmax_em step by step",
                            StepByStep()), ("built-in exponential_mechanism",
                            "exponential_mechanism")]:  # fmt: skip
        timed = run(shift_env(t_shift=12_000, horizon=20_000),
                    {label: agents.PrivateAgent(selector)}, n_runs=50, seed=1, progress=False,
                    n_jobs=1)  # fmt: skip
        per_step = timed.timing["wall_seconds"] / (50 * 20_000) * 1e9
        print(f"{label}: {per_step:.0f} ns per replication and step")
