"""AdaC-UCB (Azize & Basu 2023, "Concentrated differential privacy for bandits"): a rho-zCDP
index policy on arm-dependent doubling episodes, each episode's rewards released once with
Gaussian noise -- AdaP-UCB (:mod:`agents.adap`) with the Gaussian mechanism for the Laplace.

Privacy (rho-zCDP, Bun & Steinke 2016, Definition 1.1): an episode's reward sum has
sensitivity 1 (rewards in ``[0, 1]``), and ``sum + N(0, 1 / (2 rho))`` is rho-zCDP (the
Gaussian mechanism, Bun & Steinke 2016, Proposition 1.6). Every reward is in exactly one
released sum and which sum a reward joins is fixed by the actions before it, so the releases
together are rho-zCDP (parallel composition over disjoint episodes, Azize & Basu 2023's
adaptive-episode argument); the actions are post-processing. ``privacy_report`` states rho,
and the accountant converts it to (eps, delta) (:mod:`dpbandits.trust.notions`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.adap import ARM, RUN, _held, _start, episode_pull, release
from agents.skeleton import IndexAgent, fields, one_based_round
from dpbandits.accounting import zcdp_report
from dpbandits.core import checks
from dpbandits.core.jit import inline_kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_normal
from dpbandits.core.traits import AgentTraits

__all__ = ["AdaCUCB"]

# AdaP-UCB's layout (agents.adap): per arm the pull count, the private mean of its last episode,
# that episode's length and the number of releases; per replication the episode in progress.
PAR = fields("rho", "sigma", "alpha")


@inline_kernel
def _index(arms: Any, runs: Any, par: Any, r: int, a: int, t_round: float,
           bits: Any) -> float:  # fmt: skip
    """AdaC-UCB's index at the start of an episode in round ``t_round``: the private mean of
    the arm's last episode (``n`` rewards) plus a Hoeffding bonus and the Gaussian noise's
    bonus (class docstring)."""
    alpha, rho, n = par[PAR.alpha], par[PAR.rho], arms[r, a, ARM.last_n]
    hoeffding = math.sqrt(alpha * math.log(2.0 * t_round) / (2.0 * n))
    privacy = math.sqrt(alpha * math.log(t_round) / rho) / n
    return arms[r, a, ARM.private] + hoeffding + privacy


@inline_kernel
def _pull(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    """AdaP-UCB's episode bookkeeping (:func:`agents.adap.episode_pull`) with the Gaussian
    mechanism: a completed episode releases ``(sum + N(0, 1 / (2 rho))) / length``."""
    done = episode_pull(arms, runs, r, t, x)
    if done >= 0:
        release(arms, runs, r, done, standard_normal(bits) * par[PAR.sigma])


class AdaCUCB(IndexAgent):
    """AdaC-UCB (Azize & Basu 2023, "Concentrated differential privacy for bandits"):
    rho-zCDP for rewards in ``[0, 1]`` (module docstring).

    Episodes as :class:`agents.AdaPUCB` (Azize & Basu 2022, Algorithm 1: after the initial
    pulls, the arm of largest index is played until its pull count doubles, and the episode's
    rewards are released once, at its end); the release is
    ``mu~_a = (sum + N(0, 1 / (2 rho))) / n_a`` and the index at an episode starting in round
    ``t_l`` (1-based)

        ``I_a = mu~_a + sqrt(alpha ln(2 t_l) / (2 n_a)) + sqrt(alpha ln(t_l) / rho) / n_a``:

    AdaP-UCB's Hoeffding term, and the Gaussian tail in place of the Laplace one: the noise on
    the mean is ``N(0, 1 / (2 rho n_a^2))``, above ``sqrt(alpha ln t / rho) / n_a`` with
    probability at most ``t^-alpha``. The paper's Algorithm (its index and constants) could
    not be read (docs/trust-models.md, "Sources"); this index is derived from the tail bound
    as AdaP-UCB's eq. (7) is from the Laplace tail, and its constants may differ from the
    paper's.

    Parameters
    ----------
    rho:
        The zCDP budget of the whole run (> 0); an eps-DP guarantee implies
        ``rho = eps^2 / 2`` (``rho = 0.5`` matches AdaP-UCB at ``eps = 1``).
    alpha:
        The confidence exponent, 3.1 as AdaP-UCB's. Any ``alpha > 0`` is accepted (privacy
        does not depend on it).

    The choices AdaP-UCB documents (episode lengths, the initial pulls as episodes of one
    reward, ties, episodes cut by the horizon) are the same. ``update`` must get the actions
    ``act`` returned (an episode commits to its arm).
    """

    name = "adac_ucb"
    algorithm = "AdaC-UCB"
    traits = AgentTraits(rewards="unit", private=True, compiled=True)
    ARM, RUN, PAR = ARM, RUN, PAR
    round_kernel, held_kernel, chosen_kernel = one_based_round, _held, _start
    index_kernel, learn_kernel = _index, _pull
    ARM_START = {"last_n": 1.0}  # the initial pull is an episode of one pull
    cost_hint = 3.0
    parameter_constraints = {
        "rho": Param(low=0, low_open=True, doc="zCDP budget of the whole run"),
        "alpha": Param(low=0, low_open=True, doc="confidence exponent"),
    }

    def __init__(self, rho: float = 0.5, alpha: float = 3.1) -> None:
        self.rho = rho
        self.alpha = alpha

    def parameters(self) -> dict[str, float]:
        rho = float(self.rho)
        sigma = 1.0 / math.sqrt(2.0 * rho)
        if not sigma <= checks.MAX_NOISE_SCALE:  # a tiny rho: the releases would overflow
            raise checks.ParameterError(
                f"rho={self.rho!r} is too small for AdaC-UCB's Gaussian noise: its scale "
                f"1/sqrt(2 rho) would exceed {checks.MAX_NOISE_SCALE:g}",
                "rho",
            )
        return {"rho": rho, "sigma": sigma, "alpha": float(self.alpha)}

    def check_step(self, actions: NDArray[np.int64]) -> None:
        if self.t >= self.n_arms and not np.array_equal(actions, self.run_field("cur")):
            raise ValueError(
                "AdaC-UCB plays the arm of its episode until the episode ends: update() needs "
                "the actions act() returned"
            )

    def private_means(self) -> NDArray[np.float64]:
        """The ``(R, K)`` private means released so far (the last of each arm)."""
        return np.array(self.arm_field("private"), dtype=np.float64)

    def privacy_report(self) -> dict[str, Any]:
        """rho-zCDP for the whole run (module docstring), with the releases per arm."""
        per_arm = [int(c) for c in self.arm_field("releases").max(axis=0, initial=0)]
        report = zcdp_report(
            self.algorithm, float(self.rho),
            f"per arm, the reward sum of each completed episode plus N(0, 1/(2 rho)) "
            f"(releases per arm, largest over the replications: {per_arm})",
            "every reward is in exactly one released sum, of sensitivity 1 (rewards in "
            "[0, 1]): parallel composition, rho (Gaussian mechanism, Bun & Steinke 2016 "
            "Prop. 1.6; Azize & Basu 2023)",
        )  # fmt: skip
        report["releases_per_arm"] = per_arm
        return report
