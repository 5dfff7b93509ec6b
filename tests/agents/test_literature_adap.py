"""AdaP-UCB and AdaP-KLUCB (Azize & Basu, NeurIPS 2022, "When Privacy Meets Partial
Information"): (a) the step protocol against a plain per-step implementation of Algorithm 1 and
eq. (7) written here (same seeds, identical actions); the episodes' doubling; the regret bound of
Theorem 7; the non-private limit. Block path, noise, parameters: ``test_literature_common.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
from tests.agents.test_literature_dp_ucb import bernoulli_rows, play_rows
from tests.agents.test_literature_kl import (
    argmax_random_ties,
    kl_ucb_logit_ref,
    laplace_source,
    regret_per_run,
)
from tests.stats import assert_same_distribution


def adap_index(kl: bool, private: float, n: float, t_round: int, alpha: float, eps: float):
    """Eq. (7) at an episode starting in round ``t_round`` (1-based), for an arm whose last
    episode had ``n`` rewards and released ``private`` (the KL index as its log-odds: the
    same order); ``eps = inf``: the non-private limit (no privacy term)."""
    bonus = 0.0 if math.isinf(eps) else alpha * math.log(t_round) / (eps * n)
    if not kl:
        return private + math.sqrt(alpha * math.log(2 * t_round) / (2 * n)) + bonus
    return kl_ucb_logit_ref(min(max(private + bonus, 0.0), 1.0), alpha * math.log(t_round) / n)


def reference_adap(rows, R, K, eps, alpha, seed, kl):
    """Algorithm 1: each arm once (an episode of one reward each); then episodes: at round
    ``t_l`` the arm of largest index (first maximum) is played until its pull count doubles,
    and at the episode's end its mean plus Lap(1/(eps n)) -- drawn as Lap(1/eps) on the sum --
    is the arm's private mean, ``n`` the episode's length. Draws in step order, each step's
    replications in order."""
    T = rows.shape[0]
    _, laplace = laplace_source(seed)
    actions = np.empty((T, R), dtype=np.int64)
    count, private, last_n = np.zeros((R, K)), np.zeros((R, K)), np.ones((R, K))
    cur, left = np.zeros(R, dtype=np.int64), np.zeros(R, dtype=np.int64)
    ep_sum, ep_len = np.zeros(R), np.ones(R)
    for t in range(T):
        for r in range(R):
            if t < K:
                cur[r], left[r], ep_sum[r], ep_len[r] = t, 1, 0.0, 1.0
            elif left[r] == 0:
                idx = [adap_index(kl, private[r, b], last_n[r, b], t + 1, alpha, eps)
                       for b in range(K)]  # fmt: skip
                a = int(np.argmax(idx))
                cur[r], left[r], ep_sum[r], ep_len[r] = a, int(count[r, a]), 0.0, count[r, a]
            actions[t, r] = cur[r]
        for r in range(R):
            a = cur[r]
            count[r, a] += 1
            ep_sum[r] += rows[t, a * R + r]
            left[r] -= 1
            if left[r] == 0:
                private[r, a] = (ep_sum[r] + laplace() * (1.0 / eps)) / ep_len[r]
                last_n[r, a] = ep_len[r]
    return actions


@pytest.mark.parametrize(("name", "eps"), [("adap_ucb", 0.5), ("adap_ucb", 2.0),
                                           ("adap_klucb", 0.5), ("adap_klucb", 2.0)])  # fmt: skip
def test_adap_step_protocol_is_algorithm_1(name, eps):
    R, K, T, alpha = 3, 3, 1500, 3.1
    rows = bernoulli_rows(np.random.default_rng(3), np.array([0.3, 0.7, 0.5]), T, R)
    agent = agents.make(name, epsilon=eps, alpha=alpha)
    agent.reset(R, K, rng=5)
    got = play_rows(agent, rows, R, steps=True)
    np.testing.assert_array_equal(got, reference_adap(rows, R, K, eps, alpha, 5,
                                                      name == "adap_klucb"))  # fmt: skip


def test_episodes_double_each_arms_pulls():
    """An episode plays one arm until its pull count doubles, and only then releases: at any
    time each arm has made ``2^(releases - 1)`` pulls, plus the current episode's."""
    R, K, T = 50, 3, 4000
    agent = agents.make("adap_klucb", epsilon=1.0)
    agent.reset(R, K, rng=0)
    rows = bernoulli_rows(np.random.default_rng(1), np.array([0.2, 0.5, 0.6]), T, R)
    actions = play_rows(agent, rows, R)
    counts = np.stack([(actions == a).sum(axis=0) for a in range(K)], axis=1)
    released = agent.arm_field("releases").astype(int)
    expected = 2.0 ** (released - 1)
    current = agent.run_field("cur").astype(int)  # the arm of each run's current episode
    done = np.ones((R, K), dtype=bool)
    done[np.arange(R), current] = False
    np.testing.assert_array_equal(counts[done], expected[done])
    mid = counts[~done]
    assert ((mid >= expected[~done]) & (mid <= 2 * expected[~done])).all()
    # an episode's arm is played without a break until its end
    switches = (np.diff(actions, axis=0) != 0).sum(axis=0)
    assert (switches <= released.sum(axis=1)).all()


def test_adap_ucb_regret_is_below_theorem_7():
    """Theorem 7: ``Reg_T <= sum_a (16 alpha ln T / min(Delta_a, eps) + alpha / (alpha - 3))``
    for alpha > 3. At T = 2^17, Bernoulli(0.5, 0.8), eps = 1, alpha = 3.1: 2 027.6 -- 14% of
    uniform play's 19 661. The mean regret of 40 runs plus 5 standard errors must be below it
    (the bound holds in expectation)."""
    T, R, alpha, eps = 2**17, 40, 3.1, 1.0
    means = np.array([0.5, 0.8])
    bound = 16 * alpha * math.log(T) / min(0.3, eps) + alpha / (alpha - 3)
    regret = regret_per_run(agents.make("adap_ucb", epsilon=eps, alpha=alpha), means, T, R, 0)
    assert regret.mean() + 5 * regret.std(ddof=1) / math.sqrt(R) < bound, (regret.mean(), bound)


def noise_free_adap_regret(kl, means, T, R, seed, alpha=3.1):
    """Per-run regret of Algorithm 1 with eps = inf (exact episode means, no privacy term): the
    non-private limit, index ties broken uniformly (as the i.i.d. noise breaks them); numpy
    over the runs."""
    rng = np.random.default_rng(seed)
    K = means.size
    count, mean, last_n = np.zeros((R, K)), np.zeros((R, K)), np.ones((R, K))
    cur, left = np.zeros(R, dtype=np.int64), np.zeros(R)
    ep_sum, ep_len = np.zeros(R), np.ones(R)
    regret = np.zeros(R)
    runs = np.arange(R)
    for t in range(T):
        if t < K:
            cur[:], left[:], ep_sum[:], ep_len[:] = t, 1, 0.0, 1.0
        else:
            for r in np.flatnonzero(left == 0):  # episodes start rarely (doubling)
                idx = [adap_index(kl, mean[r, b], last_n[r, b], t + 1, alpha, math.inf)
                       for b in range(K)]  # fmt: skip
                cur[r] = argmax_random_ties(np.array([idx]), rng)[0]
                left[r], ep_sum[r], ep_len[r] = count[r, cur[r]], 0.0, count[r, cur[r]]
        x = (rng.random(R) < means[cur]).astype(float)
        regret += means.max() - means[cur]
        count[runs, cur] += 1
        ep_sum += x
        left -= 1
        ended = left == 0
        mean[runs[ended], cur[ended]] = ep_sum[ended] / ep_len[ended]
        last_n[runs[ended], cur[ended]] = ep_len[ended]
    return regret


@pytest.mark.parametrize("name", ["adap_ucb", "adap_klucb"])
def test_huge_eps_is_the_non_private_limit(name):
    """eps -> inf: no noise, no privacy term. Two-sample test of the per-run regrets against the
    noise-free Algorithm 1 above (independent rewards)."""
    means, T, R = np.array([0.35, 0.65, 0.5]), 3000, 300
    ours = regret_per_run(agents.make(name, epsilon=1e9), means, T, R, 5)
    assert_same_distribution(ours, noise_free_adap_regret(name == "adap_klucb", means, T, R, 6))


def test_update_needs_the_episodes_arm():
    agent = agents.make("adap_ucb")
    agent.reset(2, 2, rng=0)
    for _ in range(2):
        agent.update(agent.act(), np.zeros(2))
    a = agent.act()
    with pytest.raises(ValueError, match="episode"):
        agent.update(1 - a, np.zeros(2))
    assert agent.t == 2
