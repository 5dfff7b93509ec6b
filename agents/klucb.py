"""KL-UCB (Garivier & Cappé 2011), the non-private asymptotically optimal baseline for rewards in
``[0, 1]`` with the Bernoulli KL divergence."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.kl import kl_upper, kl_upper_logit, kl_with, log_pair, neg_entropy, sigmoid
from agents.skeleton import IndexAgent, fields
from dpbandits.core.jit import beats, inline_kernel, kernel
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["KLUCB", "exploration"]


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play. The
# argmax of the K indices needs one index computed in full, not K: the previous action's arm
# (usually the argmax again) is the candidate b, its index u_b is inverted (agents.kl, warm
# started from its last root), and another arm a beats it exactly when kl(p_a, u_b) < level_a
# (kl(p_a, .) increases on [p_a, 1]), one evaluation from the two logarithms of u_b shared by
# all arms and a's -H(p_a). Only an arm that beats the candidate has its own index inverted.
# Indices are compared as log-odds, which keeps apart indices within 1e-16 of 1 (p = 1 gives
# exactly 1, +inf). Ties (the same p and level) go to the lowest arm, numpy.argmax's rule. The state
# is the skeleton's (agents.skeleton): ``arms[r, a, :]`` (reward sum, pull count, -H of the mean,
# last index as a log-odds) and the candidates ``runs[r, RUN.last]``.
ARM = fields("sum", "count", "neg_h", "root")
RUN = fields("last")
PAR = fields("c")


@kernel
def exploration(t: int, c: float) -> float:
    """``f(t) = ln t + c ln ln t`` of Garivier & Cappé (2011), ``t`` the number of rounds played
    (``c ln ln t`` counts as 0 while ``ln t <= 1``, where it would be negative or undefined)."""
    lt = math.log(max(t, 1))
    return lt + c * math.log(lt) if lt > 1.0 else lt


@kernel
def _arm(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """The arm of highest KL-UCB index of replication ``r``, from the candidate arm ``b``
    (comment above); the roots of the indices it inverts are kept for the next warm start."""
    b = np.int64(runs[r, RUN.last])
    best = b
    p_best = arms[r, b, ARM.sum] / arms[r, b, ARM.count]
    level_best = f / arms[r, b, ARM.count]
    y = kl_upper_logit(p_best, arms[r, b, ARM.neg_h], level_best, arms[r, b, ARM.root])
    arms[r, b, ARM.root] = y
    u_best = sigmoid(y)  # (compared with means only: the order of indices is that of y)
    log_u, log_1mu = log_pair(y)
    for a in range(arms.shape[1]):
        if a == best:
            continue
        p = arms[r, a, ARM.sum] / arms[r, a, ARM.count]
        level = f / arms[r, a, ARM.count]
        if p == p_best and level == level_best:  # the same index: the lowest arm
            if a < best:
                best = a
            continue
        # below u_best, a's index exceeds u_best iff kl(p, u_best) < level
        if p < u_best and kl_with(p, arms[r, a, ARM.neg_h], log_u, log_1mu) > level:
            continue
        ya = kl_upper_logit(p, arms[r, a, ARM.neg_h], level, arms[r, a, ARM.root])
        arms[r, a, ARM.root] = ya
        if beats(ya, y) or (ya == y and a < best):
            best, y, u_best, p_best, level_best = a, ya, sigmoid(ya), p, level
            log_u, log_1mu = log_pair(y)
    return best


@inline_kernel
def _record(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
            bits: Any) -> None:  # fmt: skip
    """Replication ``r`` pulled arm ``a`` and got ``x``: the sum, the count, the arm's ``-H(p)``
    and the next candidate."""
    arms[r, a, ARM.sum] += x
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.neg_h] = neg_entropy(arms[r, a, ARM.sum] / arms[r, a, ARM.count])
    runs[r, RUN.last] = a


@inline_kernel
def _round(par: Any, t: int) -> float:
    """The exploration function at step ``t``."""
    return exploration(t, par[PAR.c])


class KLUCB(IndexAgent):
    """KL-UCB (Garivier & Cappé 2011, "The KL-UCB algorithm for bounded stochastic bandits and
    beyond", COLT, arXiv 1102.2490, Algorithm 1) with the Bernoulli divergence ``kl``: at round
    ``t + 1`` play the arm of largest index

        ``u_a = max{q in [p_a, 1] : N_a kl(p_a, q) <= ln t + c ln ln t}``,

    ``p_a`` the mean and ``N_a`` the number of the arm's rewards among the ``t`` so far. It is
    asymptotically optimal for Bernoulli arms, and the paper's bounded-reward setting is any
    rewards in ``[0, 1]``; rewards outside ``[0, 1]`` raise ``ValueError`` (at the first such
    step, before anything is learnt from it).

    Parameters
    ----------
    c:
        The ``c`` of the exploration function; 0 (default) is what Garivier & Cappé use in
        their experiments, ``c = 3`` what their regret bound (Theorem 1) needs.
        ``c ln ln t`` counts as 0 while ``ln t <= 1``.

    Every arm is pulled once first (common to all agents). The index is computed by
    :func:`agents.kl.kl_upper` (Halley's method, accurate to 1e-10), and the argmax needs one
    index in full per step (module comment); ties of the index go to the lowest arm. Anytime:
    no horizon needed.
    """

    name = "klucb"
    algorithm = "KL-UCB"
    traits = AgentTraits(rewards="unit", compiled=True)
    ARM, RUN, PAR = ARM, RUN, PAR
    ARM_START = {"root": math.nan}  # no warm start yet
    round_kernel, arm_kernel, learn_kernel = _round, _arm, _record
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling (docs/performance.md):
    #: ~90 ns per agent-step at R = 100 against UCB's ~12 (benchmarks/bench_scaling.py).
    cost_hint = 7.0

    parameter_constraints = {
        "c": Param(low=0, doc="the c of the exploration function ln t + c ln ln t"),
    }

    def __init__(self, c: float = 0.0) -> None:
        self.c = c

    def parameters(self) -> dict[str, float]:
        return {"c": float(self.c)}

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` KL-UCB indices at the current step (each computed in full)."""
        counts = self.arm_field("count")
        level = exploration(self.t, float(self.c)) / counts
        return np.vectorize(kl_upper)(self.arm_field("sum") / counts, level)
