"""Typical student mistakes are caught, each with a readable one-line message.

Each case takes a reference solution, makes one mistake in it (a text replacement) and checks
the task it breaks: the verdict must be ``failed`` and the message must say what is wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpbandits import course

# (exercise, task, old text, new text, words the message must contain)
CASES = [
    # -- exercise 1 -----------------------------------------------------------------------
    (
        1,
        "pull_arm_repeatedly",
        'total_regret += info["regret"]',
        'total_regret += max(info["expected_rewards"]) - reward',
        ["total regret", "info['regret'] adds up to"],
    ),
    (
        1,
        "pull_arm_repeatedly",
        "for _ in range(n_steps):",
        "for _ in range(n_steps - 1):",
        ["total regret after 3000 pulls", "1050"],
    ),
    (1, "pull_arm_repeatedly", "env.reset(seed=seed)", "env.reset()", ["same seed"]),
    (
        1,
        "update_estimates",
        "/ counts[rows, actions]",
        "/ (counts[rows, actions] + 1)",
        ["expected count", "you returned"],
    ),
    (
        1,
        "epsilon_greedy",
        "random_arms = rng.integers(0, k, size=n_rows)",
        "random_arms = (greedy + rng.integers(1, k, size=n_rows)) % k",
        ["the best arm is chosen with frequency", "expected", "chi-square p"],
    ),
    (
        1,
        "epsilon_greedy",
        "explore = rng.random(n_rows) < epsilon",
        "explore = np.full(n_rows, rng.random() < epsilon)",
        ["frequency"],
    ),
    (
        1,
        "greedy_regret_rate",
        "return float(epsilon * (means.max() - means.mean()))",
        "return float(epsilon * (means.max() - np.sort(means)[:-1].mean()))",
        ["your regret per step is", "expected"],
    ),
    (
        1,
        "greedy_regret_rate",
        "means = np.asarray(means, dtype=float)",
        "means = np.asarray(means, dtype=float)[10]",
        ["your code raised IndexError", "ex1_bandit_basics.py, line", "in greedy_regret_rate"],
    ),
    # -- exercise 2 -----------------------------------------------------------------------
    (
        2,
        "ucb_index",
        "alpha * np.sqrt(np.log(t) / counts)",
        "alpha * np.log(t) / counts",
        ["your index is", "S/N + alpha * sqrt(ln t / N)"],
    ),
    (2, "ucb_index", "np.log(t)", "np.log(t + 1)", ["your index is"]),
    (
        2,
        "thompson_choose",
        "rng.beta(1.0 + successes, 1.0 + failures)",
        "rng.beta(1.0 + failures, 1.0 + successes)",
        ["is chosen with frequency", "uniform prior"],
    ),
    (
        2,
        "thompson_choose",
        "rng.beta(1.0 + successes, 1.0 + failures)",
        "rng.beta(successes, failures)",
        ["your code raised ValueError", "ex2_ucb_thompson.py, line"],
    ),
    (
        2,
        "thompson_choose",
        "theta = rng.beta(1.0 + successes, 1.0 + failures)",
        "theta = (1.0 + successes) / (2.0 + successes + failures)",
        ["is chosen with frequency"],
    ),
    (
        2,
        "lai_robbins_constant",
        "kl = bad * np.log(bad / best) + (1 - bad) * np.log((1 - bad) / (1 - best))",
        "kl = best * np.log(best / bad) + (1 - best) * np.log((1 - best) / (1 - bad))",
        ["your constant is"],
    ),
    # -- exercise 3 -----------------------------------------------------------------------
    (
        3,
        "window_counts_sums",
        "[:, -window:]",
        "[:, -(window + 1) :]",
        ["window = 1", "the last 1 steps", "add up to 2 pulls"],
    ),
    (3, "window_counts_sums", "[:, -window:]", "[:, -window + 1 :]", ["window = "]),
    (3, "sw_ucb_index", "np.log(min(t, window))", "np.log(t)", ["your index is"]),
    (
        3,
        "sw_ucb_index",
        "return np.where(counts > 0, index, np.inf)",
        "return index",
        ["must have index +inf"],
    ),
    (
        3,
        "ts_stale_probability",
        "sd = 1.0 / np.sqrt(stale_pulls + 1)",
        "sd = 1.0 / (stale_pulls + 1)",
        ["your probability is"],
    ),
    # -- exercise 4 -----------------------------------------------------------------------
    (
        4,
        "randomized_response",
        "np.exp(epsilon) / (np.exp(epsilon) + k - 1)",
        "np.exp(epsilon / 2) / (np.exp(epsilon / 2) + k - 1)",
        [
            "your randomized response with K = 2 at eps = 1",
            "the true answer (the argmax)",
            "frequency 0.62",
            "expected 0.731",
            "chi-square p",
        ],
    ),
    (
        4,
        "randomized_response",
        "other = rng.integers(0, k - 1, size=n_rows)\n    other = other + (other >= best)",
        "other = rng.integers(0, k, size=n_rows)",
        ["the true answer (the argmax) is chosen with frequency", "expected 0.731"],
    ),
    (
        4,
        "report_noisy_max",
        "scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon",
        "scale = d.max(axis=1, keepdims=True) / epsilon",
        ["your report noisy max on q = [0, 0.5, 1]", "chi-square p"],
    ),
    (
        4,
        "report_noisy_max",
        "scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon",
        "scale = 2.0 * d / epsilon",
        ["d = [0.1, 0.5, 0.2, 0.3]"],
    ),
    (
        4,
        "report_noisy_max",
        "rng.gumbel(size=q.shape)",
        "rng.laplace(size=q.shape)",
        ["is chosen with frequency"],
    ),
    (
        4,
        "audit",
        "np.exp(epsilon) / (np.exp(epsilon) + k - 1)",
        "np.exp(2 * epsilon) / (np.exp(2 * epsilon) + k - 1)",
        ["privacy audit", "your randomized_response is not 1-DP", "at least"],
    ),
    (
        4,
        "audit",
        "scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon",
        "scale = 2.0 * d / epsilon",
        ["your report_noisy_max is not 1-DP"],
    ),
    (4, "privacy_loss", "return float(np.inf)", "return 0.0", ["your loss is 0, expected inf"]),
    (
        4,
        "expected_utility_krr",
        "others_mean = (q.sum() - best) / (k - 1)",
        "others_mean = q.mean()",
        ["your utility is"],
    ),
    # -- exercise 5 -----------------------------------------------------------------------
    (
        5,
        "dyadic_decomposition",
        "(n >> level) - 1)",
        "(n >> level))",
        ["for n = 1 your nodes are", "items 1-1"],
    ),
    (
        5,
        "binary_mechanism",
        "out[n - 1] = total",
        "out[n - 1] = total - x[n - 1]",
        ["eps = 1e9", "the true prefix sum"],
    ),
    (
        5,
        "binary_mechanism",
        "levels = horizon.bit_length()",
        "levels = int(np.ceil(np.log2(horizon)))",
        ["L = 6 levels", "expected Laplace noise of scale 6", "Kolmogorov-Smirnov p"],
    ),
    (
        5,
        "binary_mechanism",
        "if (level, index) not in noise:",
        "if True:",
        ["share the node", "covariance", "draw each node's noise once"],
    ),
    (
        5,
        "binary_mechanism",
        "rng.laplace(scale=levels / epsilon)",
        "rng.laplace(scale=1.0 / epsilon)",
        ["expected Laplace noise of scale 6"],
    ),
    (
        5,
        "naive_prefix_sums",
        "scale=1.0 / epsilon",
        "scale=2.0 / epsilon",
        ["expected Laplace noise of scale 0.5"],
    ),
    (
        5,
        "naive_prefix_sums",
        "np.cumsum(x + rng.laplace(scale=1.0 / epsilon, size=x.size))",
        "x + rng.laplace(scale=1.0 / epsilon, size=x.size)",
        ["the true prefix sum"],
    ),
    # -- exercise 6 -----------------------------------------------------------------------
    (
        6,
        "permute_and_flip",
        "order = np.argsort(rng.random((n_rows, k)), axis=1)",
        "order = np.tile(np.arange(k), (n_rows, 1))",
        ["your permute-and-flip on q =", "chi-square p"],
    ),
    (
        6,
        "permute_and_flip",
        "scale = 2.0 * d.max(axis=1, keepdims=True)",
        "scale = 2.0 * d.min(axis=1, keepdims=True)",
        ["d = [0.1, 0.5, 0.2, 0.3]"],
    ),
    (
        6,
        "make_agent",
        'name="my_pf", epsilon=epsilon)',
        'name="my_pf", epsilon=1.0)',
        ["make_agent(0.5) has a selector with epsilon 1, expected 0.5"],
    ),
    (
        6,
        "make_agent",
        "return agents.PrivateAgent(selector)",
        'return agents.PrivateAgent("krr", epsilon_select=epsilon)',
        ["it must be your permute_and_flip"],
    ),
    (
        6,
        "compare",
        '"t_shift": 3 * horizon // 5',
        '"t_shift": horizon // 2',
        ["t_shift = 3 * horizon // 5 = 240"],
    ),
    (
        6,
        "compare",
        'players[f"PF eps={eps:g}"]',
        'players[f"PF {eps}"]',
        ["missing ['PF eps=0.5', 'PF eps=4']"],
    ),
    (6, "compare", '"UCB": agents.UCB(log="t")', '"UCB": agents.UCB()', ["agents.UCB(log='t')"]),
]
SLOW_EXERCISES = {5, 6}


def _mutated(tmp_path: Path, number: int, old: str, new: str) -> Path:
    ex = course.exercise(number)
    text = ex.solution_text()  # the complete reference notebook
    assert old in text, f"the mistake {old!r} does not apply to {ex.filename}"
    path = tmp_path / ex.filename
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("number", "task", "old", "new", "words"),
    [
        pytest.param(*case, id=f"ex{case[0]}-{case[1]}-{i}",
                     marks=[pytest.mark.slow] if case[0] in SLOW_EXERCISES else [])
        for i, case in enumerate(CASES)
    ],
)  # fmt: skip
def test_mistake_is_caught(
    tmp_path: Path, number: int, task: str, old: str, new: str, words: list[str]
) -> None:
    path = _mutated(tmp_path, number, old, new)
    (result,) = course.check(number, path, tasks=[task])
    assert result.status == "failed", result.line()
    assert "\n" not in result.message and "Traceback" not in result.message
    for w in words:
        assert w in result.message, result.message


def test_file_that_does_not_run(tmp_path: Path) -> None:
    path = _mutated(tmp_path, 1, "def epsilon_greedy(", "def epsilon_greedy(:")
    results = course.check(1, path)
    assert [r.status for r in results] == ["failed"] * 4
    assert "your file could not be imported: your code raised SyntaxError" in results[0].message
    assert "ex1_bandit_basics.py, line" in results[0].message
    assert all("could not be imported" in r.message for r in results[1:])


def test_file_that_runs_an_unfinished_function_on_import(tmp_path: Path) -> None:
    ex = course.exercise(1)
    path = tmp_path / ex.filename
    path.write_text(ex.starter_path().read_text() + "\nepsilon_greedy(None, 0.1, None)\n")
    (first, *_) = course.check(1, path)
    assert "raises NotImplementedError when it is imported" in first.message


def test_renamed_function_and_prints(tmp_path: Path, capsys) -> None:
    path = _mutated(tmp_path, 1, "def epsilon_greedy(", "def eps_greedy(")
    line = "    n_rows, k = estimates.shape\n"
    text = path.read_text().replace(line, "    print('debug')\n" + line)
    path.write_text(text + "\nprint('hello from the student')\n")
    res = course.check(1, path, tasks=["epsilon_greedy", "greedy_regret_rate"])
    assert res[0].status == "failed" and "your file has no `epsilon_greedy`" in res[0].message
    assert res[1].ok
    assert capsys.readouterr().out == ""  # the student's prints do not garble the report


@pytest.mark.parametrize(
    ("returned", "words"),
    [
        (".astype(float) + 0.5", "must return integer arm indices"),
        ("[:, None]", "one arm per row, shape (50000,), got shape (50000, 1)"),
    ],
)
def test_wrong_return_types_are_explained(tmp_path: Path, returned: str, words: str) -> None:
    old = "return np.where(explore, random_arms, greedy)"
    path = _mutated(tmp_path, 1, old, old + returned)
    (res,) = course.check(1, path, tasks=["epsilon_greedy"])
    assert words in res.message
