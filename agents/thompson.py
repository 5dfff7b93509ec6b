"""Thompson sampling, the paper's second non-private baseline (Fig. 9)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import unit_interval_error
from agents.skeleton import CompiledAgent, fields
from dpbandits.core.jit import beats, inline_kernel, kernel
from dpbandits.core.numba_compat import next_double
from dpbandits.core.params import Param
from dpbandits.core.samplers import (
    gamma_constants,
    gamma_with,
    standard_exponential,
    standard_normal,
)
from dpbandits.core.traits import AgentTraits

__all__ = ["ThompsonSampling"]


# -- the compiled step on the skeleton (agents.skeleton): both paths draw inside the kernels from
# the agent's Generator (dpbandits.core.samplers: numpy's samplers, same numbers), in the step
# protocol's order. Only the pulled arm's posterior changes in a step, so each arm's posterior
# constants are kept in the state -- the Gaussian model's mean and sqrt(N_a + 1), the Bernoulli
# model's Gamma constants (b, c) of the successes' and the failures' shapes -- and the pulled
# arm's are recomputed after each pull: the same operations on the same numbers, done once per
# pull instead of once per draw.
ARM = fields("sum", "count", "mean", "root", "b_success", "c_success", "b_failure", "c_failure")
PAR = fields("gaussian")


@kernel
def _posterior(s: float, n: float) -> tuple[float, float]:
    """The Gaussian posterior ``N(S_a / (N_a + 1), 1 / (N_a + 1))`` of an arm with ``N_a = n``
    pulls and reward sum ``S_a = s``, as its mean and ``sqrt(N_a + 1)``."""
    w = n + 1.0
    return s / w, math.sqrt(w)


@kernel
def _gaussian_draw(mean: float, root: float, z: float) -> float:
    """``theta_a = S_a / (N_a + 1) + z / sqrt(N_a + 1)`` for a standard normal ``z``, from
    :func:`_posterior`'s ``(mean, root)``."""
    return mean + z / root


@kernel
def _gamma_constants(shape: float) -> tuple[float, float]:
    """What a ``Gamma(shape)`` draw needs, ``shape >= 1``: numpy's Marsaglia--Tsang constants
    ``(b, c)`` (``dpbandits.core.samplers.gamma_constants``), or ``c = 0`` when ``shape == 1``
    (numpy then draws an exponential)."""
    if shape == 1.0:
        return shape, 0.0
    return gamma_constants(shape)


@inline_kernel
def _gamma(bits: Any, b: float, c: float) -> float:
    """numpy's ``standard_gamma(shape)`` from :func:`_gamma_constants`'s ``(b, c)``."""
    if c == 0.0:
        return standard_exponential(bits)
    return gamma_with(bits, b, c)


@kernel
def _beta_draw(ga: float, gb: float) -> float:
    """``Beta(a, b)`` as numpy draws it when ``a + b >= 3`` (every arm pulled once):
    ``Ga / (Ga + Gb)`` with ``Ga ~ Gamma(successes + 1)`` drawn before ``Gb ~ Gamma(failures
    + 1)``."""
    return ga / (ga + gb)


@kernel
def _binarised(u: float, x: float) -> float:
    """The Bernoulli model's reward: ``1.0`` with probability ``x`` (the uniform ``u < x``)."""
    return 1.0 if u < x else 0.0


@kernel
def _beta_shape(s: float, n: float, success: bool) -> float:
    """The shape of the Gamma variable of the successes (``successes + 1``) or of the failures
    (``failures + 1``) of an arm with ``n`` pulls and ``s`` successes."""
    return s + 1.0 if success else (n - s) + 1.0


@inline_kernel
def _draw(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """Replication ``r``'s arm: the arm of the largest posterior draw (``numpy.argmax``'s rule),
    the draws made arm by arm. Arm ``a``'s draw is ``theta_a = S_a / (N_a + 1) + z / sqrt(N_a +
    1)``, or ``Beta(successes + 1, failures + 1)`` as numpy draws it when ``a + b >= 3`` (every
    arm pulled once): ``Ga / (Ga + Gb)``, ``Ga`` drawn before ``Gb``.

    The skeleton's ``arm_kernel``, inlined into its loop with the state borrowed: no call and
    no reference count per step or replication, so the samplers' rare paths may be calls. As
    a ``prepare_kernel`` (a call per step holding counts of ``arms`` and ``runs``, and a pass
    copying the arms back) the loop took 1.6-1.7x the time of the loop before the skeleton
    at R = 1 (docs/performance.md, "Thompson sampling's draws"). One loop serves both models:
    LLVM moves the model's test out of it, the same machine code as a loop per model."""
    gaussian = par[PAR.gaussian] != 0.0
    best_a = 0
    best = 0.0
    for a in range(arms.shape[1]):
        if gaussian:
            z = standard_normal(bits)
            v = _gaussian_draw(arms[r, a, ARM.mean], arms[r, a, ARM.root], z)
        else:
            ga = _gamma(bits, arms[r, a, ARM.b_success], arms[r, a, ARM.c_success])
            gb = _gamma(bits, arms[r, a, ARM.b_failure], arms[r, a, ARM.c_failure])
            v = _beta_draw(ga, gb)
        if a == 0 or beats(v, best):
            best_a, best = a, v
    return best_a


@inline_kernel
def _learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    """Record a pull; the Bernoulli model first replaces the reward ``x`` in ``[0, 1]`` by a
    ``Bernoulli(x)`` draw. A success changes the first Beta shape, a failure the second; the
    other is the same number (successes and failures are whole numbers), so are its constants:
    only the changed shape's are computed, picked without a branch (the outcome is
    unpredictable)."""
    if par[PAR.gaussian] != 0.0:
        arms[r, a, ARM.count] += 1.0
        arms[r, a, ARM.sum] += x
        arms[r, a, ARM.mean], arms[r, a, ARM.root] = _posterior(
            arms[r, a, ARM.sum], arms[r, a, ARM.count]
        )
        return
    success = _binarised(next_double(bits), x)
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.sum] += success
    k = ARM.b_success + 2 - 2 * int(success)
    shape = _beta_shape(arms[r, a, ARM.sum], arms[r, a, ARM.count], success == 1.0)
    arms[r, a, k], arms[r, a, k + 1] = _gamma_constants(shape)


class ThompsonSampling(CompiledAgent):
    """Thompson sampling with a Gaussian or a Beta--Bernoulli model.

    ``model="gaussian"`` (default): Agrawal & Goyal (2013), prior ``N(0, 1)`` and unit-variance
    likelihood, so the posterior of arm ``a`` after ``N_a`` pulls with reward sum ``S_a`` is
    ``N(S_a / (N_a + 1), 1 / (N_a + 1))``; each step draws ``theta_a`` from it and plays the
    argmax. App. H writes the posterior mean as ``mean_a``; we use Agrawal & Goyal's
    ``S_a / (N_a + 1)``, which is the exact posterior mean of that model (the two differ by a
    factor ``N_a / (N_a + 1)``).

    ``model="bernoulli"``: Beta(1, 1) priors and the binarisation trick (Agrawal & Goyal 2012) for
    rewards in ``[0, 1]``: a reward ``r`` is replaced by a ``Bernoulli(r)`` draw ``b``, which
    updates ``Beta(1 + successes, 1 + failures)``. Rewards outside ``[0, 1]`` raise
    ``ValueError``.

    Every arm is pulled once first (App. H); those pulls update the posterior too.
    """

    name = "thompson"
    traits = AgentTraits(compiled=True)  # (rewards in [0, 1] with model="bernoulli")
    ARM, PAR = ARM, PAR
    # the posterior constants of 0 pulls: N(0, 1), and Beta(1, 1)'s Gamma(1) (c = 0: exponential)
    ARM_START = {"root": 1.0, "b_success": 1.0, "b_failure": 1.0}
    arm_kernel, learn_kernel = _draw, _learn
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling (docs/performance.md).
    cost_hint = 1.5

    parameter_constraints = {
        "model": Param("str", options=("gaussian", "bernoulli"), doc="the posterior's family"),
    }

    def __init__(self, model: str = "gaussian") -> None:
        self.model = model

    def parameters(self) -> dict[str, float]:
        return {"gaussian": float(self.model == "gaussian")}

    def reward_domain(self) -> str:
        return "real" if self.model == "gaussian" else "unit"

    def reward_error(self, x: NDArray[np.float64]) -> ValueError:
        return unit_interval_error("ThompsonSampling(model='bernoulli')", x)
