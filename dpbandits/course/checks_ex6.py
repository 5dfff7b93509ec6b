"""Checks of exercise 6: permute-and-flip, a private agent with it, the comparison run."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import fmt, fmt_vec, require_pmf, seed_from
from dpbandits.course.stats import ALPHA

N_DRAWS = 100_000
SHIFT_ID = "dpbandits/TwoArmedShift-v0"


def pf_pmf(q: np.ndarray, d: np.ndarray, eps: float) -> np.ndarray:
    """Exact law of permute-and-flip, summing over all ``K!`` orders (small ``K`` only)."""
    p = np.exp(eps * (q - q.max()) / (2.0 * d.max()))
    k = q.size
    out = np.zeros(k)
    for order in itertools.permutations(range(k)):
        reach = 1.0  # probability that every earlier candidate was rejected
        for a in order:
            out[a] += reach * p[a]
            reach *= 1.0 - p[a]
    return out / math.factorial(k)


CASES = (
    ((0.0, 0.5, 1.0), (1.0, 1.0, 1.0), 1.0),
    ((0.2, 0.8, 0.5, 0.1), (0.1, 0.5, 0.2, 0.3), 2.0),
    ((1.0, 0.0, 0.6), (0.05, 0.25, 0.1), 1.0),
    ((0.0, 1.0), (1.0, 1.0), 0.5),
)


def _law(
    select: Any, q: tuple[float, ...], d: tuple[float, ...], eps: float, name: str,
    rng: np.random.Generator, what: str,
) -> None:  # fmt: skip
    k = len(q)
    qa = np.tile(np.array(q), (N_DRAWS, 1))
    da = np.tile(np.array(d), (N_DRAWS, 1))
    out = Student.indices(select(qa, da, eps, rng), (N_DRAWS,), k, name)
    require_pmf(
        np.bincount(out, minlength=k),
        pf_pmf(np.array(q), np.array(d), eps),
        f"{what} on q = {fmt_vec(q)}, d = {fmt_vec(d)} at eps = {fmt(eps)}",
    )


def check_permute_and_flip(student: Student, rng: np.random.Generator) -> None:
    """Chi-square against the exact law; the library's privacy audit on hard pairs."""
    from dpbandits import selectors
    from dpbandits.testing.audit import HARD_PAIRS, estimate_privacy_loss

    def fn(q: np.ndarray, d: np.ndarray, eps: float, g: np.random.Generator) -> np.ndarray:
        return Student.indices(
            student.call("permute_and_flip", q, d, eps, g), (q.shape[0],), q.shape[1],
            "permute_and_flip",
        )  # fmt: skip

    for q, d, eps in CASES:
        _law(fn, q, d, eps, "permute_and_flip", rng, "your permute-and-flip")
    sel = selectors.from_function(fn, name="permute_and_flip", epsilon=1.0)
    for pair_name in ("shift2", "one_up_het"):
        res = estimate_privacy_loss(sel, pair_name, draws=100_000, alpha=ALPHA, rng=rng)
        if not res.passed:
            pair = HARD_PAIRS[pair_name]
            raise CheckFailed(
                f"the privacy audit finds your permute-and-flip is not 1-DP: on q = "
                f"{fmt_vec(pair.q)}, q' = {fmt_vec(pair.q_prime)} (d = {fmt_vec(pair.d)}) its "
                f"privacy loss is at least {fmt(res.loss_lower, 3)} (estimate {fmt(res.loss, 3)})"
            )


def check_make_agent(student: Student, rng: np.random.Generator) -> None:
    """A PrivateAgent, with the student's selector at the asked eps, that runs."""
    import agents
    from dpbandits.experiments import run

    for eps in (0.5, 3.0):
        agent = student.call("make_agent", eps)
        if not isinstance(agent, agents.PrivateAgent):
            raise CheckFailed(
                f"`make_agent` must return an agents.PrivateAgent, got {type(agent).__name__}"
            )
        sel = agent.selector_
        if float(sel.epsilon) != eps:
            raise CheckFailed(
                f"make_agent({eps}) has a selector with epsilon {fmt(sel.epsilon)}, expected {eps}"
            )

        def select(
            q: np.ndarray, d: np.ndarray, e: float, g: np.random.Generator, sel: Any = sel
        ) -> Any:
            return sel.select(q, d, rng=g)

        _law(
            select, CASES[1][0], CASES[1][1], eps, "make_agent(...).selector_", rng,
            f"make_agent({eps})'s selector (it must be your permute_and_flip)",
        )  # fmt: skip
    env = {"id": SHIFT_ID, "t_shift": 150, "horizon": 300}
    res = run(env, {"yours": agent}, n_runs=8, seed=seed_from(rng), n_jobs=1, progress=False)
    report = res.privacy.get("yours")
    if not isinstance(report, dict) or report["selection"]["epsilon_per_action"] != 3.0:
        raise CheckFailed("your agent ran, but its privacy report does not show eps_S = 3")


def check_compare(student: Student, rng: np.random.Generator) -> None:
    """The run's configuration: environment, horizon, runs, seed, labels, eps per agent."""
    from dpbandits.experiments import Results

    grid, n_runs, horizon, seed = (0.5, 4.0), 3, 400, seed_from(rng) % 1000
    res = student.call("compare", grid, n_runs, horizon, seed)
    if not isinstance(res, Results):
        raise CheckFailed(
            f"`compare` must return the Results of dpbandits.experiments.run, got "
            f"{type(res).__name__}"
        )
    want = ["UCB", "TS"] + [f"PF eps={e:g}" for e in grid]
    missing = [label for label in want if label not in res.labels]
    if missing:
        raise CheckFailed(
            f"compare({grid}, ...) has agents {res.labels}; missing {missing} "
            "(labels: 'UCB', 'TS', 'PF eps=<eps:g>')"
        )
    env = res.config["env"]
    expected_env = {"t_shift": 3 * horizon // 5, "horizon": horizon}
    if env.get("id") != SHIFT_ID or any(env["kwargs"].get(k) != v for k, v in expected_env.items()):
        raise CheckFailed(
            f"compare(..., horizon={horizon}) ran on {env}; expected the id {SHIFT_ID!r} with "
            f"t_shift = 3 * horizon // 5 = {3 * horizon // 5} and horizon = {horizon}"
        )
    if res.n_runs != n_runs or res.config["seed"] != seed:
        raise CheckFailed(
            f"compare(..., n_runs={n_runs}, seed={seed}) ran {res.n_runs} runs with seed "
            f"{res.config['seed']}"
        )
    for label, eps in zip(want[2:], grid, strict=True):
        rep = res.privacy.get(label)
        got = None if not isinstance(rep, dict) else rep["selection"]["epsilon_per_action"]
        if got != eps:
            raise CheckFailed(f"agent {label!r} selects with eps_S = {got}, expected {eps}")
    ucb = res.config["agents"]["UCB"]
    if ucb.get("class") != "UCB" or ucb.get("params", {}).get("log") != "t":
        raise CheckFailed(f"'UCB' must be agents.UCB(log='t'), got {ucb.get('repr')}")
