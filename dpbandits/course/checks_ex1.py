"""Checks of exercise 1: playing a bandit, running means, epsilon-greedy, its regret rate."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from scipy import stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import fmt, fmt_vec, require_close, require_pmf, seed_from
from dpbandits.course.stats import ALPHA, binomial_pvalue, fmt_p

MEANS = (0.1, 0.45, 0.8, 0.3)


def check_pull_arm_repeatedly(student: Student, rng: np.random.Generator) -> None:
    """Total regret is exact (sum of info["regret"]); total reward passes a binomial test."""
    import envs  # noqa: F401  (registers the ids)

    arm, n = 1, 3000
    gap = max(MEANS) - MEANS[arm]
    seed = seed_from(rng)
    env = gym.make("dpbandits/KArmedBernoulli-v0", means=list(MEANS), horizon=5000)
    out = student.call("pull_arm_repeatedly", env, arm, n, seed)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise CheckFailed("`pull_arm_repeatedly` must return a pair (total_reward, total_regret)")
    reward = Student.number(out[0], "pull_arm_repeatedly (total_reward)")
    regret = Student.number(out[1], "pull_arm_repeatedly (total_regret)")
    expected = n * gap
    if abs(regret - expected) > 1e-6 * n:
        raise CheckFailed(
            f"your total regret after {n} pulls of arm {arm} of a bandit with means "
            f"{fmt_vec(MEANS)} is {fmt(regret, 6)}; the env's info['regret'] adds up to "
            f"{fmt(expected, 6)} (= {n} x {fmt(gap)})"
        )
    if reward != round(reward) or not 0 <= reward <= n:
        raise CheckFailed(
            f"your total reward {fmt(reward, 6)} cannot come from {n} Bernoulli rewards (0 or 1)"
        )
    p = binomial_pvalue(int(reward), n, MEANS[arm])
    if p < ALPHA:
        raise CheckFailed(
            f"your total reward after {n} pulls of arm {arm} (mean {MEANS[arm]}) is "
            f"{fmt(reward, 6)}, expected about {fmt(n * MEANS[arm], 6)} (binomial {fmt_p(p)})"
        )
    # Same seed, same rewards. Checked on clipped-Gaussian arms: two Bernoulli totals of
    # different draws are equal with probability about 1 %, two Gaussian totals never.
    env = gym.make("dpbandits/KArmedGaussian-v0", means=list(MEANS), horizon=5000)
    first, again = (
        Student.number(student.call("pull_arm_repeatedly", env, arm, n, seed)[0],
                       "pull_arm_repeatedly (total_reward)")
        for _ in range(2)
    )  # fmt: skip
    if again != first:
        raise CheckFailed(
            f"two calls with the same seed gave total rewards {fmt(first, 6)} and "
            f"{fmt(again, 6)}: pass `seed` to env.reset(seed=...)"
        )


def check_update_estimates(student: Student, rng: np.random.Generator) -> None:
    """Exact comparison with N += 1, Q += (r - Q) / N on the pulled arm only."""
    r, k = 8, 4
    counts = rng.integers(0, 6, size=(r, k)).astype(float)
    counts[0] = 0.0  # a first pull: the mean becomes the reward
    means = np.where(counts > 0, rng.random((r, k)).round(3), 0.0)
    actions = rng.integers(0, k, size=r)
    rewards = rng.random(r).round(3)
    out = student.call("update_estimates", counts.copy(), means.copy(), actions.copy(), rewards)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise CheckFailed("`update_estimates` must return a pair (counts, means)")
    new_counts = Student.floats(out[0], (r, k), "update_estimates (counts)")
    new_means = Student.floats(out[1], (r, k), "update_estimates (means)")
    rows = np.arange(r)
    exp_counts = counts.copy()
    exp_counts[rows, actions] += 1
    exp_means = means.copy()
    exp_means[rows, actions] += (rewards - means[rows, actions]) / exp_counts[rows, actions]
    for i in range(r):
        a = int(actions[i])
        n_old, m_old = counts[i, a], means[i, a]
        if new_counts[i, a] != exp_counts[i, a] or not np.isclose(
            new_means[i, a], exp_means[i, a], rtol=1e-9, atol=1e-12
        ):
            raise CheckFailed(
                f"row {i} pulled arm {a} and got reward {fmt(rewards[i])} (count was "
                f"{int(n_old)}, mean {fmt(m_old)}): expected count {int(exp_counts[i, a])} and "
                f"mean {fmt(exp_means[i, a], 6)} (= {fmt(m_old)} + ({fmt(rewards[i])} - "
                f"{fmt(m_old)}) / {int(exp_counts[i, a])}), you returned count "
                f"{fmt(new_counts[i, a])} and mean {fmt(new_means[i, a], 6)}"
            )
        others = np.arange(k) != a
        if np.any(new_counts[i, others] != counts[i, others]) or np.any(
            new_means[i, others] != means[i, others]
        ):
            b = int(
                np.flatnonzero(
                    others & ((new_counts[i] != counts[i]) | (new_means[i] != means[i]))
                )[0]
            )
            raise CheckFailed(
                f"row {i} pulled arm {a}, but you also changed arm {b} (count {fmt(counts[i, b])} "
                f"-> {fmt(new_counts[i, b])}, mean {fmt(means[i, b])} -> {fmt(new_means[i, b])})"
            )


def _ranks_chosen(estimates: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Rank of the chosen arm's estimate in its row: 0 = the highest."""
    order = np.argsort(-estimates, axis=1)
    return np.argmax(order == chosen[:, None], axis=1)


def check_epsilon_greedy(student: Student, rng: np.random.Generator) -> None:
    """Law of the chosen rank (chi-square), eps = 0 and 1, independence across rows."""
    n = 50_000
    for k, eps in ((4, 0.1), (3, 0.5), (2, 0.05), (5, 1.0)):
        est = rng.random((n, k))
        out = Student.indices(
            student.call("epsilon_greedy", est.copy(), eps, rng), (n,), k, "epsilon_greedy"
        )
        counts = np.bincount(_ranks_chosen(est, out), minlength=k)
        probs = np.full(k, eps / k)
        probs[0] += 1.0 - eps
        labels = ["the best arm"] + [f"the arm ranked {j + 1}" for j in range(1, k)]
        require_pmf(counts, probs, f"with K = {k} arms and epsilon = {eps}", labels)
    est = rng.random((1000, 3))
    out = Student.indices(
        student.call("epsilon_greedy", est.copy(), 0.0, rng), (1000,), 3, "epsilon_greedy"
    )
    wrong = int(np.sum(out != np.argmax(est, axis=1)))
    if wrong:
        raise CheckFailed(
            f"with epsilon = 0 your choice is not the arm with the highest estimate in {wrong} "
            "of 1000 rows"
        )
    # Every row explores on its own: the number of exploring rows per call is binomial.
    calls, rows, eps = 300, 400, 0.5
    p_other = eps / 2  # K = 2: a non-greedy arm with probability eps * (K - 1) / K
    x = np.empty(calls)
    for c in range(calls):
        est = rng.random((rows, 2))
        out = Student.indices(
            student.call("epsilon_greedy", est.copy(), eps, rng), (rows,), 2, "epsilon_greedy"
        )
        x[c] = np.sum(out != np.argmax(est, axis=1))
    var = rows * p_other * (1 - p_other)
    stat = float(np.sum((x - rows * p_other) ** 2) / var)
    p = float(stats.chi2.sf(stat, calls))
    if p < ALPHA:
        raise CheckFailed(
            f"the rows of a batch do not explore independently: over {calls} calls of {rows} "
            f"rows with epsilon = {eps}, the number of exploring rows varies with standard "
            f"deviation {fmt(x.std(), 3)}, expected {fmt(np.sqrt(var), 3)} ({fmt_p(p)}); "
            "draw one random number per row"
        )


def check_greedy_regret_rate(student: Student, rng: np.random.Generator) -> None:
    """Closed form ``epsilon * (max(means) - mean(means))``."""
    for means, eps in (((0.2, 0.5, 0.9), 0.1), ((0.3, 0.3, 0.6, 0.1, 0.8), 0.25)):
        got = Student.number(
            student.call("greedy_regret_rate", np.array(means), eps), "greedy_regret_rate"
        )
        m = np.array(means)
        require_close(
            got,
            eps * (m.max() - m.mean()),
            f"for means {fmt_vec(means)} and epsilon = {eps}, your regret per step",
        )
