"""AdaP-UCB and AdaP-KLUCB (Azize & Basu, NeurIPS 2022): eps-global-DP index policies on
arm-dependent doubling episodes, each episode's rewards released once with Laplace noise."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import variant
from agents.episodes import LaplaceBatchAgent
from agents.kl import kl_upper_logit, neg_entropy
from agents.skeleton import fields, one_based_round
from dpbandits.core.jit import inline_kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace

__all__ = ["AdaPKLUCB", "AdaPUCB"]


# -- the compiled step on the skeleton (agents.skeleton). Per (replication, arm): the pull count,
# the private mean released by the arm's last completed episode, that episode's length and the
# number of releases. Per replication: the arm of the current episode, the pulls it has left (0:
# the next step starts an episode), and its reward sum and length. The Laplace draws are made in
# the order of the step protocol: step by step, each step's replications in order, one draw per
# completed episode.
ARM = fields("count", "private", "last_n", "releases")
RUN = fields("cur", "left", "ep_sum", "ep_len")
PAR = fields("eps", "scale", "alpha")


@inline_kernel
def _ucb_index(arms: Any, runs: Any, par: Any, r: int, a: int, t_round: float,
               bits: Any) -> float:  # fmt: skip
    """AdaP-UCB's index at the start of an episode in round ``t_round`` of an arm whose last
    episode had ``n`` pulls and released the private mean (Azize & Basu 2022, eq. (7))."""
    alpha, eps, n = par[PAR.alpha], par[PAR.eps], arms[r, a, ARM.last_n]
    privacy_bonus = alpha * math.log(t_round) / (eps * n)
    return (arms[r, a, ARM.private] + math.sqrt(alpha * math.log(2.0 * t_round) / (2.0 * n))
            + privacy_bonus)  # fmt: skip


@inline_kernel
def _klucb_index(arms: Any, runs: Any, par: Any, r: int, a: int, t_round: float,
                 bits: Any) -> float:  # fmt: skip
    """AdaP-KLUCB's index (eq. (7)) as its log-odds, which orders indices within 1e-16 of 1 as
    exactly as the others (``+inf`` for an index of exactly 1)."""
    alpha, eps, n = par[PAR.alpha], par[PAR.eps], arms[r, a, ARM.last_n]
    privacy_bonus = alpha * math.log(t_round) / (eps * n)
    clipped = min(max(arms[r, a, ARM.private] + privacy_bonus, 0.0), 1.0)
    return kl_upper_logit(clipped, neg_entropy(clipped), alpha * math.log(t_round) / n, math.nan)


@inline_kernel
def _held(arms: Any, runs: Any, par: Any, r: int) -> int:
    """The arm of replication ``r``'s episode while it has pulls left, else -1."""
    return np.int64(runs[r, RUN.cur]) if runs[r, RUN.left] > 0.0 else -1


@inline_kernel
def _start(arms: Any, runs: Any, par: Any, r: int, a: int) -> None:
    """An episode of arm ``a`` lasts until its pull count doubles (Algorithm 1, lines 5-7)."""
    runs[r, RUN.cur] = a
    runs[r, RUN.left] = arms[r, a, ARM.count]
    runs[r, RUN.ep_sum] = 0.0
    runs[r, RUN.ep_len] = arms[r, a, ARM.count]


@inline_kernel
def episode_pull(arms: Any, runs: Any, r: int, t: int, x: float) -> int:
    """Algorithm 1's bookkeeping of one pull: replication ``r`` got reward ``x`` from its
    episode's arm at step ``t`` (0-based; an initial-round pull is an episode of one pull).
    Returns the arm whose episode this pull completed (its sum and length in ``runs[r]``), or
    -1. Shared by AdaP-UCB/KLUCB (Laplace release) and AdaC-UCB (Gaussian release)."""
    if t < arms.shape[1]:
        runs[r, RUN.cur] = t
        runs[r, RUN.left] = 1.0
        runs[r, RUN.ep_sum] = 0.0
        runs[r, RUN.ep_len] = 1.0
    a = np.int64(runs[r, RUN.cur])
    arms[r, a, ARM.count] += 1.0
    runs[r, RUN.ep_sum] += x
    runs[r, RUN.left] -= 1.0
    return a if runs[r, RUN.left] == 0.0 else -1


@inline_kernel
def release(arms: Any, runs: Any, r: int, a: int, noise: float) -> None:
    """Arm ``a``'s completed episode releases its private mean ``(sum + noise) / length``."""
    arms[r, a, ARM.private] = (runs[r, RUN.ep_sum] + noise) / runs[r, RUN.ep_len]
    arms[r, a, ARM.last_n] = runs[r, RUN.ep_len]
    arms[r, a, ARM.releases] += 1.0


@inline_kernel
def _pull(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    """:func:`episode_pull`; a completed episode releases its private mean
    ``(sum + Lap(1 / eps)) / length`` (Lemma 1)."""
    done = episode_pull(arms, runs, r, t, x)
    if done >= 0:
        release(arms, runs, r, done, standard_laplace(bits) * par[PAR.scale])


@variant(alpha=3.1)
class _AdaP(LaplaceBatchAgent):
    """Algorithm 1 of Azize & Basu (2022) with the index of the classes below."""

    batches = "episode"
    citation = "Azize & Basu 2022, Lemma 1 and Theorem 6"
    ARM, RUN, PAR = ARM, RUN, PAR
    ARM_START = {"last_n": 1.0}  # the initial pull is an episode of one pull
    round_kernel, held_kernel, chosen_kernel, learn_kernel = one_based_round, _held, _start, _pull
    parameter_constraints = {
        **LaplaceBatchAgent.parameter_constraints,
        "alpha": Param(low=0, low_open=True, doc="confidence exponent (> 3 in the regret bounds)"),
    }
    alpha: float  # the constructor's (variant), read by the kernels as PAR.alpha

    def check_step(self, actions: NDArray[np.int64]) -> None:
        if self.t >= self.n_arms and not np.array_equal(actions, self.run_field("cur")):
            raise ValueError(
                f"{self.algorithm} plays the arm of its episode until the episode ends "
                "(Azize & Basu 2022, Algorithm 1): update() needs the actions act() returned"
            )


class AdaPUCB(_AdaP):
    """AdaP-UCB (Azize & Basu, NeurIPS 2022, "When Privacy Meets Partial Information: A Refined
    Analysis of Differentially Private Bandits", Algorithm 1 with the index of eq. (7)):
    eps-global DP for rewards in ``[0, 1]`` (Theorem 7).

    After every arm is pulled once, the run is cut into episodes. An episode starting in round
    ``t_l`` (1-based) plays, until its pull count ``N_a`` doubles, the arm of largest index

        ``I_a = mu~_a + sqrt(alpha ln(2 t_l) / (2 n_a)) + alpha ln(t_l) / (eps n_a)``,

    where ``mu~_a = (sum of the rewards of a's last episode + Lap(1 / eps)) / n_a`` is released
    once, when that episode ends, and ``n_a`` is its length. Each reward is in exactly one
    released sum, so the whole run is eps-DP (Lemma 1, Theorem 6); ``privacy_report`` states
    it.

    Parameters
    ----------
    epsilon:
        The privacy budget of the whole run (> 0).
    alpha:
        The confidence exponent, 3.1 as in the paper's experiments (§5); the regret bound of
        Theorem 7 needs ``alpha > 3``. Any ``alpha > 0`` is accepted (privacy does not depend
        on it).

    Choices where the paper leaves a detail open (tested): ``n_a`` is the number of rewards in
    the last episode -- ``N_a / 2`` as the paper writes it, except after the initial pull,
    whose episode has one reward (``N_a / 2 = 1/2`` would count half a reward); ``t_l`` is the
    1-based round at which the episode starts, ``ln`` natural; the initial pull of each arm is
    its first episode (its reward is released with ``Lap(1 / eps)`` like any other, as in the
    paper's Example 2); ties of the index go to the lowest arm; an episode cut by the end of
    the run releases nothing. The noise is ``Lap(1 / eps)`` on the episode's sum, which is
    ``Lap(1 / (eps n_a))`` on its mean as in the paper. Eq. (7) is as the text we could read
    writes it (the submitted version, with ``ln(2 t_l)`` under the root); the published
    version may differ in such constants. Rewards outside ``[0, 1]`` raise
    ``ValueError`` at the first such step, before anything is learnt from it. Anytime: no
    horizon needed. ``update`` must get the actions ``act`` returned (an episode commits to
    its arm).
    """

    name = "adap_ucb"
    algorithm = "AdaP-UCB"
    index_kernel = _ucb_index


class AdaPKLUCB(_AdaP):
    """AdaP-KLUCB (Azize & Basu, NeurIPS 2022, "When Privacy Meets Partial Information",
    Algorithm 1 with the KL index of eq. (7)): eps-global DP for rewards in ``[0, 1]``, regret
    analysed for Bernoulli rewards (Theorem 8).

    Episodes as :class:`AdaPUCB` (see there for the details the paper leaves open and their
    choice here); the index of an arm at an episode starting in round ``t_l`` is

        ``I_a = max{q in [0, 1] : kl(clip(mu~_a + alpha ln(t_l) / (eps n_a)), q)
        <= alpha ln(t_l) / n_a}``,

    ``clip`` to ``[0, 1]``, ``kl`` the Bernoulli divergence (:func:`agents.kl.kl_upper`,
    accurate to 1e-10; indices are compared by their log-odds, which keeps apart indices within
    1e-16 of 1).

    Parameters
    ----------
    epsilon:
        The privacy budget of the whole run (> 0).
    alpha:
        The confidence exponent, 3.1 as in the paper's experiments (§5); Theorem 8 needs
        ``alpha > 3``. Any ``alpha > 0`` is accepted.
    """

    name = "adap_klucb"
    algorithm = "AdaP-KLUCB"
    index_kernel = _klucb_index
