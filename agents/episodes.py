"""What the eps-global-DP agents of the literature built on Laplace releases share.

AdaP-UCB and AdaP-KLUCB (Azize & Basu 2022), DP-KLUCB and DP-IMED (Azize et al. 2025) and
Lazy-DP-TS (Hu & Hegde 2022) cut each arm's rewards into consecutive batches -- episodes,
phases, epochs: the papers' words -- whose lengths depend on the arm's pull count only, add one
``Laplace(1 / eps)`` variable to the sum of each completed batch, and choose every action from
these noisy sums and the pull counts only (the counts are shown by the actions themselves).
Rewards in ``[0, 1]`` give each sum sensitivity 1, every reward is in exactly one sum, and
which sum a reward joins is fixed by the actions before it, so the released sums together are
eps-DP (parallel composition over disjoint batches; Azize & Basu 2022, Lemma 1 and Theorem 6;
Azize et al. 2025, Proposition 2; Hu & Hegde 2022, Theorem 3); the actions are post-processing
of them. The whole run is therefore
eps-global-DP for any horizon: its ledger is a single eps, which :meth:`LaplaceBatchAgent.
privacy_report` states (:func:`dpbandits.accounting.global_dp_report`), with the number of
releases per arm.

:class:`LaplaceBatchAgent` is the part they share on top of the compiled skeleton
(:mod:`agents.skeleton`, which owns the loop and the reward check): the ``epsilon`` check and
noise scale, the private-means hook and the privacy report; its constructor takes ``epsilon``
only. A subclass's own parameter (AdaP's confidence exponent ``alpha``, DP-KL's phase growth
ratio ``alpha``) is declared in its parameter table and added to the constructor by
:func:`agents.base.variant`; the skeleton passes it to the kernels as the ``PAR`` field of its
name (:meth:`agents.skeleton.CompiledAgent.parameters`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.skeleton import IndexAgent
from dpbandits.accounting import global_dp_report
from dpbandits.core import checks
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["LaplaceBatchAgent"]


class LaplaceBatchAgent(IndexAgent):
    """Base of the agents that release one Laplace-noised sum per batch of an arm's rewards
    (module docstring), on the compiled skeleton (:mod:`agents.skeleton`). A subclass sets
    :attr:`algorithm`, :attr:`batches` and :attr:`citation`, declares its ``ARM`` fields with
    ``private`` (the private mean released last) and ``releases`` (the number of releases) and
    its ``PAR`` fields with ``eps`` and ``scale`` (filled by :meth:`parameters`), and its
    kernels; ``traits`` say ``rewards="bernoulli"`` for an algorithm defined for Bernoulli
    bandits only."""

    #: Name of the algorithm in messages and reports, e.g. ``"AdaP-UCB"``.
    algorithm: str = ""
    #: What the papers call the batches (``"episode"``, ``"phase"``, ``"epoch"``).
    batches: str = "batch"
    #: The paper's privacy statement, for the report.
    citation: str = ""
    traits = AgentTraits(rewards="unit", private=True, compiled=True)
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling (docs/performance.md);
    #: measured by benchmarks/bench_scaling.py at R = 100: AdaP ~35 ns per agent-step, DP-IMED
    #: ~55, DP-KLUCB ~90, Lazy-DP-TS ~80 (K = 2), against UCB's ~12.
    cost_hint = 3.0

    parameter_constraints = {
        "epsilon": Param(
            low=0, low_open=True, doc="privacy budget of the whole run (eps-global DP)"
        ),
    }

    epsilon: float

    def __init__(self, epsilon: float = 1.0) -> None:
        """``epsilon``: the privacy budget of the whole run; a subclass with more parameters
        passes it on (``super().__init__(epsilon)``)."""
        self.epsilon = epsilon

    def parameters(self) -> dict[str, float]:
        """``eps`` and the noise scale ``1 / eps`` (``epsilon`` is checked by the constraints
        table; a scale too large for floats is refused here)."""
        eps = float(self.epsilon)
        scale = checks.noise_scale(1.0, eps, f"{self.algorithm}'s Laplace noise")
        return {"eps": eps, "scale": scale}

    # -- hooks for plots and reports -------------------------------------------------------
    def private_means(self) -> NDArray[np.float64]:
        """The ``(R, K)`` private means released so far (the last of each arm)."""
        return np.array(self.arm_field("private"), dtype=np.float64)

    def privacy_report(self) -> dict[str, Any]:
        """The privacy spent by the whole run, as a JSON-able dict
        (:func:`dpbandits.accounting.global_dp_report`): ``epsilon_total`` is the run's
        eps-global-DP guarantee (module docstring), whatever the horizon; ``releases_per_arm``
        the largest number of Laplace releases of each arm over the replications."""
        counts = self.arm_field("releases").astype(np.int64)
        per_arm = [int(c) for c in counts.max(axis=0, initial=0)]
        report = global_dp_report(
            self.algorithm,
            self.par[self.PAR.eps],
            f"per arm, the reward sum of each completed {self.batches} plus Lap(1/eps) "
            f"(releases per arm, largest over the replications: {per_arm})",
            f"every reward is in exactly one released sum, of sensitivity 1 (rewards in "
            f"[0, 1]): parallel composition, eps ({self.citation})",
        )
        report["releases_per_arm"] = per_arm
        report["total_releases"] = int(sum(per_arm))
        return report
