# Reference solution of exercise 1: the solved parts only.
#
# The rest of the notebook is the exercise file, dpbandits/course/exercises/ex1_bandit_basics.py
# (examples/course/ex1_bandit_basics.py): each function
# below is the solved body of the task of the same name there (which has its types,
# defaults and docstring), and the lines between BEGIN ANSWER and END ANSWER replace
# its "# Your answer:".
#   dpbandits course start 1 DIR --solution   writes the complete, runnable notebook;
#   dpbandits course check 1 examples/course-solutions/ex1_bandit_basics.py   grades it.

from __future__ import annotations

import numpy as np


def pull_arm_repeatedly(env, arm, n_steps, seed):
    env.reset(seed=seed)
    total_reward = 0.0
    total_regret = 0.0
    for _ in range(n_steps):
        _, reward, _, _, info = env.step(arm)
        total_reward += float(reward)
        total_regret += info["regret"]
    return total_reward, total_regret


def update_estimates(counts, means, actions, rewards):
    counts = counts.copy()
    means = means.copy()
    rows = np.arange(counts.shape[0])
    counts[rows, actions] += 1
    means[rows, actions] += (rewards - means[rows, actions]) / counts[rows, actions]
    return counts, means


def epsilon_greedy(estimates, epsilon, rng):
    n_rows, k = estimates.shape
    greedy = np.argmax(estimates, axis=1)
    explore = rng.random(n_rows) < epsilon
    random_arms = rng.integers(0, k, size=n_rows)
    return np.where(explore, random_arms, greedy)


def greedy_regret_rate(means, epsilon):
    means = np.asarray(means, dtype=float)
    return float(epsilon * (means.max() - means.mean()))


# BEGIN ANSWER
# 1. Greedy exploits its first estimates forever: after one pull per arm, a good arm that
#    paid 0 has estimate 0 and may never be tried again, so a share of the runs pays a
#    constant regret per step (linear regret; the share varies a lot between runs).
# 2. greedy_regret_rate(means, 0.1) = 0.1 * (0.7 - 0.45) = 0.025 per step; the measured
#    slope (seed 0, 200 runs) is (164 - 98) / 2500 = 0.026.
# 3. eps = 0.1 (164 +- 6; eps = 0.01: 171 +- 16, greedy: 349 +- 34, eps = 0.3: 391 +- 2).
#    Any fixed eps has linear regret eps * (mu* - mean mu) per step, so at T = 100_000 a
#    smaller eps wins; epsilon must decrease with t (or use UCB/Thompson sampling, ex. 2).
# END ANSWER
