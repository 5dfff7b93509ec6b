"""AdaP-UCB and AdaP-KLUCB (Azize & Basu, NeurIPS 2022): eps-global-DP index policies on
arm-dependent doubling episodes, each episode's rewards released once with Laplace noise."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import in_unit_interval
from agents.episodes import LaplaceBatchAgent
from agents.kl import kl_upper_logit, neg_entropy
from dpbandits.core.jit import beats, generator_address, generator_at, kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace

__all__ = ["AdaPKLUCB", "AdaPUCB"]

_UCB, _KLUCB = 0, 1


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play. The
# state is two arrays, so that the helpers take two arrays (numba counts the references of every
# array passed to a call). Per (replication, arm), ``arms[r, a, :]``: the pull count, the private
# mean released by the arm's last completed episode, that episode's length and the number of
# releases. Per replication, ``runs[r, :]`` (integers stored exactly as floats): the arm of the
# current episode, the pulls it has left (0: the next step starts an episode), and its reward
# sum and length. The Laplace draws are made in the order of the step protocol: step by step,
# each step's replications in order, one draw per completed episode.
COUNT, PRIVATE, LAST_N, RELEASES = range(4)
N_ARM_FIELDS = 4
CUR, LEFT, EP_SUM, EP_LEN = range(4)
N_RUN_FIELDS = 4


@kernel
def _index(kind: int, private: float, n: float, t_round: float, alpha: float,
           eps: float) -> float:  # fmt: skip
    """The index at the start of an episode in round ``t_round`` of an arm whose last episode
    had ``n`` pulls and released the private mean ``private`` (Azize & Basu 2022, eq. (7)); the
    KL index as its log-odds, which orders indices within 1e-16 of 1 as exactly as the others
    (``+inf`` for an index of exactly 1)."""
    privacy_bonus = alpha * math.log(t_round) / (eps * n)
    if kind == _UCB:
        return private + math.sqrt(alpha * math.log(2.0 * t_round) / (2.0 * n)) + privacy_bonus
    clipped = min(max(private + privacy_bonus, 0.0), 1.0)
    return kl_upper_logit(clipped, neg_entropy(clipped), alpha * math.log(t_round) / n, math.nan)


@kernel
def _start(kind: int, arms: Any, runs: Any, r: int, t_round: float, alpha: float,
           eps: float) -> int:  # fmt: skip
    """The arm of replication ``r`` in round ``t_round``: its episode's, or if that is over, the
    arm of largest index (``numpy.argmax``'s rule), whose episode lasts until its pull count
    doubles (Algorithm 1, lines 5-7)."""
    if runs[r, LEFT] > 0.0:
        return np.int64(runs[r, CUR])
    best_a = 0
    best = _index(kind, arms[r, 0, PRIVATE], arms[r, 0, LAST_N], t_round, alpha, eps)
    for a in range(1, arms.shape[1]):
        v = _index(kind, arms[r, a, PRIVATE], arms[r, a, LAST_N], t_round, alpha, eps)
        if beats(v, best):
            best_a, best = a, v
    runs[r, CUR] = best_a
    runs[r, LEFT] = arms[r, best_a, COUNT]
    runs[r, EP_SUM] = 0.0
    runs[r, EP_LEN] = arms[r, best_a, COUNT]
    return best_a


@kernel
def _pull(arms: Any, runs: Any, r: int, t: int, x: float, scale: float, bits: Any) -> None:
    """Replication ``r`` got reward ``x`` from its episode's arm at step ``t`` (0-based); an
    initial-round pull is an episode of one pull. A completed episode releases its private mean
    ``(sum + Lap(1 / eps)) / length`` (Lemma 1)."""
    if t < arms.shape[1]:
        runs[r, CUR] = t
        runs[r, LEFT] = 1.0
        runs[r, EP_SUM] = 0.0
        runs[r, EP_LEN] = 1.0
    a = np.int64(runs[r, CUR])
    arms[r, a, COUNT] += 1.0
    runs[r, EP_SUM] += x
    runs[r, LEFT] -= 1.0
    if runs[r, LEFT] == 0.0:
        z = standard_laplace(bits)
        arms[r, a, PRIVATE] = (runs[r, EP_SUM] + z * scale) / runs[r, EP_LEN]
        arms[r, a, LAST_N] = runs[r, EP_LEN]
        arms[r, a, RELEASES] += 1.0


@kernel
def _choose(kind: int, arms: Any, runs: Any, t_round: float, alpha: float, eps: float,
            out: Any) -> None:  # fmt: skip
    for r in range(out.shape[0]):
        out[r] = _start(kind, arms, runs, r, t_round, alpha, eps)


@kernel
def _observe(arms: Any, runs: Any, t: int, x: Any, scale: float, address: int) -> None:
    bits = generator_at(address).bit_generator
    for r in range(x.shape[0]):
        _pull(arms, runs, r, t, x[r], scale, bits)


@kernel
def _play(kind: int, arms: Any, runs: Any, alpha: float, eps: float, scale: float,
          address: int, t0: int, rows: Any, actions: Any, rewards: Any,
          x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if a step met a reward outside ``[0, 1]`` (its episodes
    are started, nothing is learnt from it)."""
    bits = generator_at(address).bit_generator
    n_runs, n_arms = arms.shape[0], arms.shape[1]
    for i in range(rows.shape[0]):
        t = t0 + i
        for r in range(n_runs):
            a = t
            if t >= n_arms:
                a = _start(kind, arms, runs, r, float(t + 1), alpha, eps)
            actions[i, r] = a
            x[r] = rows[i, a * n_runs + r]
        if not in_unit_interval(x):
            return i
        for r in range(n_runs):
            rewards[i, r] = x[r]
            _pull(arms, runs, r, t, x[r], scale, bits)
    return rows.shape[0]


class _AdaP(LaplaceBatchAgent):
    """Algorithm 1 of Azize & Basu (2022) with the index of ``kind`` (the classes below)."""

    _kind = _UCB
    batches = "episode"
    private_field, releases_field = PRIVATE, RELEASES
    citation = "Azize & Basu 2022, Lemma 1 and Theorem 6"
    parameter_constraints = {
        **LaplaceBatchAgent.parameter_constraints,
        "alpha": Param(low=0, low_open=True, doc="confidence exponent (> 3 in the regret bounds)"),
    }

    def __init__(self, epsilon: float = 1.0, alpha: float = 3.1) -> None:
        self.epsilon = epsilon
        self.alpha = alpha

    def setup(self) -> None:
        self._setup_common()
        self._alpha = float(self.alpha)
        arms = np.zeros((self.n_runs, self.n_arms, N_ARM_FIELDS))
        arms[:, :, LAST_N] = 1.0
        self._arms = arms
        self._runs = np.zeros((self.n_runs, N_RUN_FIELDS))

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self._kind, self._arms, self._runs, float(self.t + 1), self._alpha, self._eps,
                out)  # fmt: skip
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = self._rewards(rewards)
        if self.t >= self.n_arms and not np.array_equal(actions, self._runs[:, CUR]):
            raise ValueError(
                f"{self.algorithm} plays the arm of its episode until the episode ends "
                "(Azize & Basu 2022, Algorithm 1): update() needs the actions act() returned"
            )
        _observe(self._arms, self._runs, self.t, x, self._scale, generator_address(self.rng))

    play = LaplaceBatchAgent.play  # (the engine plays the class that defines play by blocks)

    def _play_block(self, rows: Any, actions: Any, rewards: Any) -> int:
        return int(_play(self._kind, self._arms, self._runs, self._alpha, self._eps,
                         self._scale, generator_address(self.rng), self.t, rows, actions,
                         rewards, self._x))  # fmt: skip


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
    _kind = _UCB


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
    _kind = _KLUCB
