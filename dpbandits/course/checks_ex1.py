"""Checks of exercise 1: playing a bandit, running means, epsilon-greedy, its regret rate."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
from scipy import stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import (
    first_match,
    fmt,
    fmt_vec,
    require_close,
    require_pmf,
    require_same_draws,
    seed_from,
)
from dpbandits.course.stats import ALPHA, binomial_pvalue, fmt_p

#: Every difference of two means is distinct, so a regret against the wrong arm is told apart.
MEANS = (0.15, 0.5, 0.8, 0.3)


def _regret_cause(regret: float, reward: float, n: int, arm: int) -> str | None:
    """The mistake that gives total regret ``regret`` after ``n`` pulls of ``arm``."""
    mu = np.array(MEANS)
    best = int(np.argmax(mu))
    gap = mu[best] - mu[arm]
    candidates: list[tuple[str, float]] = [
        (f"an off-by-one in the pull count: your loop pulls {n - 1} times, not {n}",
         (n - 1) * gap),
        (f"an off-by-one in the pull count: your loop pulls {n + 1} times, not {n}",
         (n + 1) * gap),
        ("a sign error: the regret of a step is mu* - mu_a >= 0 (info['regret'])", -n * gap),
        ("regret kept for the last step only: add it up with += in the loop", gap),
    ]  # fmt: skip
    for m in mu:
        candidates.append((
            "regret computed from the reward you drew: the regret of a step is mu* - mu_a, "
            "with the arm's mean mu_a, not its random reward (use info['regret'])",
            n * m - reward,
        ))  # fmt: skip
    for i, j in itertools.permutations(range(mu.size), 2):
        if (i, j) != (best, arm) and mu[i] - mu[j] != gap:
            against = f"arm {i} (mean {fmt(mu[i])})" if i != best else "the best arm"
            of = f"arm {j} (mean {fmt(mu[j])})" if j != arm else "the pulled arm"
            candidates.append((
                f"regret computed against the wrong arm: yours is {of} against {against}; "
                "the regret of a step is mu* - mu_a of the arm you pulled (info['regret'])",
                n * (mu[i] - mu[j]),
            ))  # fmt: skip
    return first_match(regret, candidates, rtol=1e-9, atol=1e-6 * n)


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
        swapped = abs(reward - expected) <= 1e-6 * n
        raise CheckFailed(
            f"your total regret after {n} pulls of arm {arm} of a bandit with means "
            f"{fmt_vec(MEANS)} is {fmt(regret, 6)}; the env's info['regret'] adds up to "
            f"{fmt(expected, 6)} (= {n} x {fmt(gap)})",
            cause="the pair is in the wrong order: return (total_reward, total_regret)"
            if swapped
            else _regret_cause(regret, reward, n, arm),
        )
    if reward != round(reward) or not 0 <= reward <= n:
        raise CheckFailed(
            f"your total reward {fmt(reward, 6)} cannot come from {n} Bernoulli rewards (0 or 1)"
        )
    p = binomial_pvalue(int(reward), n, MEANS[arm])
    if p < ALPHA:
        cause = None
        if reward == 0:
            cause = (
                "every reward you added is 0: add up the reward, the 2nd item of env.step's "
                "5-tuple (obs, reward, terminated, truncated, info), with += in the loop"
            )
        elif reward == 1:
            cause = "only the last reward is kept: add the rewards up with += in the loop"
        elif reward == n:
            cause = "every pull paid the same: reset the environment once, before the loop"
        raise CheckFailed(
            f"your total reward after {n} pulls of arm {arm} (mean {MEANS[arm]}) is "
            f"{fmt(reward, 6)}, expected about {fmt(n * MEANS[arm], 6)} (binomial {fmt_p(p)})",
            cause=cause,
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
            f"two calls with the same seed gave total rewards {fmt(first, 6)} and {fmt(again, 6)}",
            cause="the environment is not reset with the seed: call env.reset(seed=seed)",
        )


def _update_causes(
    counts: np.ndarray, means: np.ndarray, actions: np.ndarray, rewards: np.ndarray
) -> list[tuple[str, np.ndarray]]:
    """Means after the update as some typical mistakes compute them."""
    rows = np.arange(counts.shape[0])
    n_old, q = counts[rows, actions], means[rows, actions]

    def at(values: np.ndarray) -> np.ndarray:
        out = means.copy()
        out[rows, actions] = values
        return out

    with np.errstate(all="ignore"):
        return [
            ("dividing by the old count: first increment N, then divide by the new count",
             at(q + (rewards - q) / n_old)),
            ("dividing by N + 1 after incrementing N: divide by the new count itself",
             at(q + (rewards - q) / (n_old + 2))),
            ("the update is Q + (r - Q) / N: add the step to the old mean (+=), not =",
             at((rewards - q) / (n_old + 1))),
            ("the update is Q + (r - Q) / N: the step is the reward minus the old mean",
             at(q + rewards / (n_old + 1))),
            ("averaging the old mean with the new reward: weight the reward by 1/N",
             at((q + rewards) / 2)),
        ]  # fmt: skip


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
    rows = np.arange(r)
    exp_counts = counts.copy()
    exp_counts[rows, actions] += 1
    exp_means = means.copy()
    exp_means[rows, actions] += (rewards - means[rows, actions]) / exp_counts[rows, actions]
    causes = _update_causes(counts, means, actions, rewards)
    try:
        new_counts = Student.floats(out[0], (r, k), "update_estimates (counts)")
        new_means = Student.floats(out[1], (r, k), "update_estimates (means)")
    except CheckFailed as exc:
        raise CheckFailed(
            str(exc), cause=causes[0][0] if "NaN" in str(exc) else exc.cause
        ) from None
    if np.array_equal(new_counts, exp_means) and np.array_equal(new_means, exp_counts):
        raise CheckFailed(
            "`update_estimates` returned the means first",
            cause="the pair is in the wrong order: return (counts, means)",
        )
    for i in range(r):
        a = int(actions[i])
        n_old, m_old = counts[i, a], means[i, a]
        others = np.arange(k) != a
        changed = others & ((new_counts[i] != counts[i]) | (new_means[i] != means[i]))
        if changed.any():
            b = int(np.flatnonzero(changed)[0])
            raise CheckFailed(
                f"row {i} pulled arm {a}, but you also changed arm {b} (count {fmt(counts[i, b])} "
                f"-> {fmt(new_counts[i, b])}, mean {fmt(means[i, b])} -> {fmt(new_means[i, b])})",
                cause="x[:, actions] selects whole columns: index the pulled entries with "
                "x[np.arange(R), actions]",
            )
        if new_counts[i, a] != exp_counts[i, a] or not np.isclose(
            new_means[i, a], exp_means[i, a], rtol=1e-9, atol=1e-12
        ):
            cause = None
            if new_counts[i, a] == n_old:
                cause = "the count of the pulled arm is not incremented (N <- N + 1)"
            elif new_counts[i, a] == exp_counts[i, a]:
                cause = first_match(new_means, causes, rtol=1e-9, atol=1e-12)
            raise CheckFailed(
                f"row {i} pulled arm {a} and got reward {fmt(rewards[i])} (count was "
                f"{int(n_old)}, mean {fmt(m_old)}): expected count {int(exp_counts[i, a])} and "
                f"mean {fmt(exp_means[i, a], 6)} (= {fmt(m_old)} + ({fmt(rewards[i])} - "
                f"{fmt(m_old)}) / {int(exp_counts[i, a])}), you returned count "
                f"{fmt(new_counts[i, a])} and mean {fmt(new_means[i, a], 6)}",
                cause=cause,
            )


def _ranks_chosen(estimates: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Rank of the chosen arm's estimate in its row: 0 = the highest."""
    order = np.argsort(-estimates, axis=1)
    return np.argmax(order == chosen[:, None], axis=1)


def _rank_causes(k: int, eps: float) -> list[tuple[str, np.ndarray]]:
    """Laws of the chosen rank under typical mistakes."""

    def law(best: float, rest: float, worst: float | None = None) -> np.ndarray:
        p = np.full(k, rest)
        p[0] = best
        if worst is not None:
            p[-1] = worst
        return p

    causes = [
        ("exploring only among the non-greedy arms: explore uniformly among all K arms, "
         "the greedy one included", law(1 - eps, eps / (k - 1))),
        ("exploring with probability 1 - epsilon: explore when the uniform draw is < epsilon",
         law(eps + (1 - eps) / k, (1 - eps) / k)),
        ("exploiting the lowest estimate: exploit with argmax, not argmin",
         law(eps / k, eps / k, 1 - eps + eps / k)),
        ("no row explored: draw one uniform number per row (rng.random(R)) and explore "
         "where it is < epsilon", law(1.0, 0.0)),
        ("the whole batch explores (or exploits) together: draw one uniform number per row, "
         "rng.random(R), not one per call", law(1.0 / k, 1.0 / k)),
    ]  # fmt: skip
    return causes


def check_epsilon_greedy(student: Student, rng: np.random.Generator) -> None:
    """Law of the chosen rank (chi-square), every arm explored, eps = 0, independent rows,
    draws from ``rng`` only."""
    n = 50_000
    labels_of = {k: ["the best arm"] + [f"the arm ranked {j + 1}" for j in range(1, k)]
                 for k in (2, 3, 4, 5)}  # fmt: skip
    for k, eps in ((4, 0.1), (3, 0.5), (2, 0.05), (5, 1.0)):
        est = rng.random((n, k))
        out = Student.indices(
            student.call("epsilon_greedy", est.copy(), eps, rng), (n,), k, "epsilon_greedy"
        )
        counts = np.bincount(_ranks_chosen(est, out), minlength=k)
        probs = np.full(k, eps / k)
        probs[0] += 1.0 - eps
        require_pmf(
            counts, probs, f"with K = {k} arms and epsilon = {eps}", labels_of[k],
            causes=_rank_causes(k, eps),
        )  # fmt: skip
        if eps == 1.0:
            # The ranks do not see which positions are explored: every arm must be.
            arms = np.bincount(out, minlength=k)
            if np.count_nonzero(arms) == 1:
                raise CheckFailed(
                    f"with K = {k} arms and epsilon = 1 (always exploring) every row chose arm "
                    f"{int(np.argmax(arms))}",
                    cause="the rows share one random arm: draw one arm per row (size=R)",
                )
            uniform = np.full(k, 1.0 / k)
            require_pmf(
                arms, uniform, f"with K = {k} arms and epsilon = 1 (always exploring)",
                causes=[
                    ("rng.integers(0, K - 1) never explores arm K - 1: the upper bound of "
                     "rng.integers is excluded, so use rng.integers(0, K)",
                     np.r_[np.full(k - 1, 1.0 / (k - 1)), 0.0]),
                    ("rng.integers(1, K) never explores arm 0: use rng.integers(0, K)",
                     np.r_[0.0, np.full(k - 1, 1.0 / (k - 1))]),
                ],
            )  # fmt: skip
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
    est = rng.random((100, 4))
    require_same_draws(
        lambda g: student.call("epsilon_greedy", est.copy(), 0.5, g), "epsilon_greedy",
        seed_from(rng),
    )  # fmt: skip
    _check_independent_rows(student, rng)


def _check_independent_rows(student: Student, rng: np.random.Generator) -> None:
    """Rows with the same estimates must still explore, and pick their arm, independently.

    Over ``calls`` calls of ``rows`` identical rows (K = 2, eps = 1/2), the number of rows
    that do not take the greedy arm is Binomial(rows, eps / 2) in each call, independently:
    the spread of those numbers around their mean is a chi-square with ``calls`` degrees of
    freedom. Both tails are tested: shared draws spread too much, draws repeated from one
    seed too little.
    """
    calls, rows, eps = 300, 400, 0.5
    p_other = eps / 2
    x = np.empty(calls)
    for c in range(calls):
        est = np.tile(rng.random(2), (rows, 1))
        out = Student.indices(
            student.call("epsilon_greedy", est.copy(), eps, rng), (rows,), 2, "epsilon_greedy"
        )
        x[c] = np.sum(out != np.argmax(est, axis=1))
    var = rows * p_other * (1 - p_other)
    stat = float(np.sum((x - rows * p_other) ** 2) / var)
    p = float(2 * min(stats.chi2.sf(stat, calls), stats.chi2.cdf(stat, calls)))
    if p < ALPHA:
        too_much = stat > calls
        raise CheckFailed(
            f"the rows of a batch do not explore independently: over {calls} calls of {rows} "
            f"identical rows with epsilon = {eps}, the number of exploring rows varies with "
            f"standard deviation {fmt(x.std(), 3)}, expected {fmt(np.sqrt(var), 3)} ({fmt_p(p)})",
            cause="the rows share their random draws: draw one uniform number and one random "
            "arm per row (size=R)"
            if too_much
            else "every call repeats the same draws: use the generator `rng` you are given, not "
            "a new one made from a fixed seed",
        )


def check_greedy_regret_rate(student: Student, rng: np.random.Generator) -> None:
    """Closed form ``epsilon * (max(means) - mean(means))``."""
    for means, eps in (((0.2, 0.5, 0.9), 0.1), ((0.3, 0.3, 0.6, 0.1, 0.8), 0.25)):
        m = np.array(means)
        got = Student.number(
            student.call("greedy_regret_rate", m.copy(), eps), "greedy_regret_rate"
        )
        others = np.sort(m)[:-1].mean()
        require_close(
            got,
            eps * (m.max() - m.mean()),
            f"for means {fmt_vec(means)} and epsilon = {eps}, your regret per step",
            causes=[
                ("regret against the wrong arms: exploring picks among all K arms, the best one "
                 "included, so average over all the means", eps * (m.max() - others)),
                ("regret of exploring against the worst arm: exploration is uniform, so average "
                 "over the arms", eps * (m.max() - m.min())),
                ("only the exploring fraction epsilon of the steps has regret: multiply by "
                 "epsilon", m.max() - m.mean()),
                ("exploring happens with probability epsilon, not 1 - epsilon",
                 (1 - eps) * (m.max() - m.mean())),
                ("an exploring step picks each arm with probability 1/K, and its expected "
                 "regret is already an average: do not divide by K again",
                 eps / m.size * (m.max() - m.mean())),
            ],
        )  # fmt: skip
