"""Lazy-DP-TS (Hu & Hegde, UAI 2022, Algorithm 2), ``agents.make("dp_ts")``: (a) the step
protocol against a plain per-step implementation written here (same seed, identical actions:
the Beta draws are numpy's ``Generator.beta``); the epochs' doubling; the non-private limit.
Block path, regret, noise, parameters: ``test_literature_common.py``.
"""

from __future__ import annotations

import math

import numpy as np

import agents
from agents.dp_ts import OFFSET
from tests.agents.test_literature_dp_ucb import bernoulli_rows, play_rows
from tests.agents.test_literature_kl import laplace_source, regret_per_run
from tests.stats import assert_same_distribution


def reference_lazy_dp_ts(rows, R, K, eps, seed):
    """Algorithm 2 as ``agents.LazyDPTS``'s docstring reads it: each arm's rewards fill epochs
    of 1, 2, 4, ... pulls; a full epoch releases ``(sum + Lap(1/eps)) / O`` and is dropped; in
    round t (1-based) each arm draws ``Beta(mu O + 1, (1 - mu) O + 1)``, ``mu = clip(mu~ + 3
    ln t / (eps O))``, and the largest draw is played (first maximum). Draws: at each step every
    run's Beta variables (arm by arm), then every run's Laplace variable if an epoch ended."""
    T = rows.shape[0]
    rng, laplace = laplace_source(seed)
    actions = np.empty((T, R), dtype=np.int64)
    buf_sum, buf_n = np.zeros((R, K)), np.zeros((R, K))
    size, last_n, private = np.ones((R, K)), np.ones((R, K)), np.zeros((R, K))
    for t in range(T):
        for r in range(R):
            if t < K:
                actions[t, r] = t
                continue
            theta = []
            for a in range(K):
                n = last_n[r, a]
                mu = min(max(private[r, a] + OFFSET * math.log(t + 1) / (eps * n), 0.0), 1.0)
                theta.append(rng.beta(mu * n + 1, (1 - mu) * n + 1))
            actions[t, r] = int(np.argmax(theta))
        for r in range(R):
            a = actions[t, r]
            buf_sum[r, a] += rows[t, a * R + r]
            buf_n[r, a] += 1
            if buf_n[r, a] == size[r, a]:
                private[r, a] = (buf_sum[r, a] + laplace() * (1.0 / eps)) / size[r, a]
                last_n[r, a] = size[r, a]
                size[r, a] *= 2
                buf_sum[r, a], buf_n[r, a] = 0.0, 0.0
    return actions


def test_dp_ts_step_protocol_is_algorithm_2():
    R, K, T = 3, 3, 1500
    rows = bernoulli_rows(np.random.default_rng(4), np.array([0.3, 0.7, 0.5]), T, R)
    for eps in (0.5, 4.0):
        agent = agents.make("dp_ts", epsilon=eps)
        agent.reset(R, K, rng=9)
        got = play_rows(agent, rows, R, steps=True)
        np.testing.assert_array_equal(got, reference_lazy_dp_ts(rows, R, K, eps, 9))


def test_epochs_double_and_their_rewards_are_dropped():
    """After ``N`` pulls of an arm, ``floor(log2(N + 1))`` epochs are released (1 + 2 + 4 + ...),
    and the private mean is that of the last full epoch only: with rewards 1 up to the end of
    epoch 3 (7 pulls) and 0 after, the release of epoch 4 (pulls 8-15) is its noise / 8."""
    eps, R = 2.0, 4000
    agent = agents.make("dp_ts", epsilon=eps)
    agent.reset(R, 1, rng=3)
    for t in range(15):
        agent.update(agent.act(), np.full(R, 1.0 if t < 7 else 0.0))
    assert (agent.arm_field("releases") == 4).all()
    z = agent.private_means()[:, 0] * 8 * eps  # standard Laplace if only pulls 8-15 count
    assert abs(z.mean()) < 5 * math.sqrt(2 / R)
    assert abs((z**2).mean() - 2) < 5 * math.sqrt(20 / R)  # Var z^2 = 24 - 4 for Lap(1)


def lazy_ts_regret(means, T, R, seed):
    """Per-run regret of Algorithm 2 with eps = inf (no noise, no offset): Beta posteriors on
    the last epoch's exact mean; numpy over the runs."""
    rng = np.random.default_rng(seed)
    K = means.size
    buf_sum, buf_n = np.zeros((R, K)), np.zeros((R, K))
    size, last_n, mean = np.ones((R, K)), np.ones((R, K)), np.zeros((R, K))
    regret = np.zeros(R)
    runs = np.arange(R)
    for t in range(T):
        if t < K:
            a = np.full(R, t)
        else:
            a = np.argmax(rng.beta(mean * last_n + 1, (1 - mean) * last_n + 1), axis=1)
        x = (rng.random(R) < means[a]).astype(float)
        regret += means.max() - means[a]
        buf_sum[runs, a] += x
        buf_n[runs, a] += 1
        full = buf_n[runs, a] == size[runs, a]
        r, b = runs[full], a[full]
        mean[r, b] = buf_sum[r, b] / size[r, b]
        last_n[r, b] = size[r, b]
        size[r, b] *= 2
        buf_sum[r, b], buf_n[r, b] = 0.0, 0.0
    return regret


def test_huge_eps_is_the_non_private_limit():
    """eps -> inf: no noise, no offset. Two-sample test of the per-run regrets against the
    numpy version above (independent rewards and draws)."""
    means, T, R = np.array([0.35, 0.65, 0.5]), 3000, 300
    ours = regret_per_run(agents.make("dp_ts", epsilon=1e9), means, T, R, 7)
    assert_same_distribution(ours, lazy_ts_regret(means, T, R, 8))
