"""Checks of exercise 6: permute-and-flip, a private agent with it, the comparison run."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import fmt, fmt_vec, require_pmf, require_same_draws, seed_from
from dpbandits.course.stats import ALPHA
from dpbandits.selectors import FunctionSelector

N_DRAWS = 100_000
SHIFT_ID = "dpbandits/TwoArmedShift-v0"

Select = Callable[[np.ndarray, np.ndarray, float, np.random.Generator], Any]


def _flip_law(p: np.ndarray, orders: list[tuple[int, ...]], position: bool = False) -> np.ndarray:
    """Law of the first accepted candidate (acceptance probabilities ``p``), the order drawn
    uniformly from ``orders``; when none accepts, the first of the order is returned (an
    argmax of an all-False row). ``position=True``: the law of its position in the order."""
    k = p.size
    out = np.zeros(k)
    for order in orders:
        reach = 1.0  # probability that every earlier candidate was rejected
        for j, a in enumerate(order):
            out[j if position else a] += reach * p[a]
            reach *= 1.0 - p[a]
        out[0 if position else order[0]] += reach
    return out / len(orders)


def _accept(q: np.ndarray, scale: np.ndarray | float, eps: float) -> np.ndarray:
    return np.asarray(np.exp(eps * (q - q.max()) / scale))


def pf_pmf(q: np.ndarray, d: np.ndarray, eps: float) -> np.ndarray:
    """Exact law of permute-and-flip, summing over all ``K!`` orders (small ``K`` only)."""
    return _flip_law(_accept(q, 2.0 * d.max(), eps), list(itertools.permutations(range(q.size))))


CASES = (
    ((0.0, 0.5, 1.0), (1.0, 1.0, 1.0), 1.0),
    ((0.2, 0.8, 0.5, 0.1), (0.1, 0.5, 0.2, 0.3), 2.0),
    ((1.0, 0.0, 0.6), (0.05, 0.25, 0.1), 1.0),
    ((0.0, 1.0), (1.0, 1.0), 0.5),
)

NO_RANDOM_ORDER = (
    "no random order per row: each row goes through the candidates in a uniformly random order "
    "of its own, np.argsort(rng.random((R, K)), axis=1); yours looks fixed, or shared by the rows"
)
WRONG_SCALE = (
    "noise on the wrong scale: accept with p_a = exp(eps (q_a - max q) / (2 D)), D = max d"
)


def _pf_causes(q: np.ndarray, d: np.ndarray, eps: float) -> Iterator[tuple[str, np.ndarray]]:
    """Laws of typical mistakes, computed only when asked (a failed test)."""
    k = q.size
    orders = list(itertools.permutations(range(k)))
    big = d.max()
    yield (NO_RANDOM_ORDER, _flip_law(_accept(q, 2 * big, eps), [tuple(range(k))]))
    yield (
        WRONG_SCALE + " (yours looks like D: the factor 2 is missing)",
        _flip_law(_accept(q, big, eps), orders),
    )
    yield (
        WRONG_SCALE + " (yours uses the smallest d, not the largest)",
        _flip_law(_accept(q, 2 * d.min(), eps), orders),
    )
    yield (
        WRONG_SCALE + " (yours uses each candidate's own d_a: use the row's D)",
        _flip_law(_accept(q, 2 * d, eps), orders),
    )
    yield (
        WRONG_SCALE + " (yours ignores the sensitivities)",
        _flip_law(_accept(q, 2.0, eps), orders),
    )
    yield (
        "you return the position in the order, not the candidate: return order[row, first]",
        _flip_law(_accept(q, 2 * big, eps), orders, position=True),
    )
    yield (
        "accept with probability p_a (draw < p_a), not 1 - p_a",
        _flip_law(1 - _accept(q, 2 * big, eps), orders),
    )
    # Both make the first candidate of the random order win whatever the scores.
    yield (
        "every candidate is equally likely: flip each candidate's coin with its own "
        "probability, p[row, order] in the order's positions, and keep p <= 1 by subtracting "
        "max q", np.full(k, 1.0 / k),
    )  # fmt: skip
    for order in orders:  # one order shared by the rows: the law of some fixed order
        yield NO_RANDOM_ORDER, _flip_law(_accept(q, 2 * big, eps), [order])


def _law(
    select: Select, q: tuple[float, ...], d: tuple[float, ...], eps: float, name: str,
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
        causes=_pf_causes(np.array(q), np.array(d), eps),
    )


def check_permute_and_flip(student: Student, rng: np.random.Generator) -> None:
    """Chi-square against the exact law, on batches of one problem and on a batch mixing two;
    draws from ``rng`` only; the library's privacy audit on hard pairs."""
    from dpbandits import selectors
    from dpbandits.audit.selector import HARD_PAIRS, estimate_privacy_loss

    def fn(q: np.ndarray, d: np.ndarray, eps: float, g: np.random.Generator) -> np.ndarray:
        return Student.indices(
            student.call("permute_and_flip", q.copy(), d.copy(), eps, g), (q.shape[0],),
            q.shape[1], "permute_and_flip",
        )  # fmt: skip

    for q, d, eps in CASES:
        _law(fn, q, d, eps, "permute_and_flip", rng, "your permute-and-flip")
    # Rows of two problems in one batch: max q and D are each row's own.
    (q1, d1, _), (q2, d2, _) = CASES[2], CASES[0]
    first = rng.random(N_DRAWS) < 0.5
    qa = np.where(first[:, None], np.array(q1) + 2.0, np.array(q2))
    da = np.where(first[:, None], np.array(d1), np.array(d2))
    picks = fn(qa, da, 1.0, rng)
    for mask, q, d in ((first, q1, d1), (~first, q2, d2)):
        counts = np.bincount(picks[mask], minlength=len(q))
        try:
            require_pmf(
                counts, pf_pmf(np.array(q), np.array(d), 1.0),
                f"in a batch mixing two problems, your permute-and-flip on the rows with "
                f"d = {fmt_vec(d)} at eps = 1",
            )  # fmt: skip
        except CheckFailed as exc:
            raise CheckFailed(
                str(exc),
                cause="max q or D taken over the whole batch: both are each row's own "
                "(q.max(axis=1, keepdims=True), d.max(axis=1, keepdims=True))",
            ) from None
    q, d = np.random.default_rng(0).random((2, 100, 4))
    require_same_draws(lambda g: fn(q, d + 0.5, 1.0, g), "permute_and_flip", seed_from(rng))
    sel = selectors.from_function(fn, name="permute_and_flip", epsilon=1.0)
    for pair_name in ("shift2", "one_up_het"):
        res = estimate_privacy_loss(sel, pair_name, draws=100_000, alpha=ALPHA, rng=rng)
        if not res.passed:
            pair = HARD_PAIRS[pair_name]
            raise CheckFailed(
                f"the privacy audit finds your permute-and-flip is not 1-DP: on q = "
                f"{fmt_vec(pair.q)}, q' = {fmt_vec(pair.q_prime)} (d = {fmt_vec(pair.d)}) its "
                f"privacy loss is at least {fmt(res.loss_lower, 3)} (estimate {fmt(res.loss, 3)})",
                cause=WRONG_SCALE,
            )


def _default_params() -> dict[str, Any]:
    import agents

    params = agents.PrivateAgent("krr").get_params()
    return {k: v for k, v in params.items() if k not in ("selector", "epsilon_select")}


def check_make_agent(student: Student, rng: np.random.Generator) -> None:
    """A PrivateAgent with the other parameters at their defaults, with the student's selector
    at the asked eps, that runs and reports eps_S."""
    import agents
    from dpbandits.experiments import run

    defaults = _default_params()
    for eps in (0.5, 3.0):
        agent = student.call("make_agent", eps)
        if not isinstance(agent, agents.PrivateAgent):
            raise CheckFailed(
                f"`make_agent` must return an agents.PrivateAgent, got {type(agent).__name__}",
                cause="return agents.PrivateAgent(your_selector), not the selector itself"
                if hasattr(agent, "select")
                else None,
            )
        params = agent.get_params()
        changed = {k: params.get(k) for k, v in defaults.items() if params.get(k) != v}
        if changed:
            name, value = next(iter(changed.items()))
            raise CheckFailed(
                f"make_agent({eps}) sets {name} = {value!r}; keep the agent's default "
                f"{name} = {defaults[name]!r}",
                cause="the wrong eps split: epsilon is the selector's eps_S per action; eps_M "
                "(means) and eps_p (quantiles) keep their defaults"
                if name.startswith("epsilon")
                else None,
            )
        sel = agent.selector_
        if float(sel.epsilon) != eps:
            cause = None
            if np.isclose(float(sel.epsilon), eps / 2):
                cause = (
                    "the wrong eps split: the whole epsilon is the selector's eps_S per action "
                    "(the means and quantiles have budgets of their own)"
                )
            elif float(sel.epsilon) == 1.0:
                cause = "the selector's epsilon must be make_agent's argument, not a constant"
            raise CheckFailed(
                f"make_agent({eps}) has a selector with epsilon {fmt(sel.epsilon)}, expected {eps}",
                cause=cause,
            )

        if not isinstance(sel, FunctionSelector):
            raise CheckFailed(
                f"make_agent({eps})'s selector is the library's {sel!r}, not your permute_and_flip",
                cause="a library selector: wrap your own function, "
                "selectors.from_function(permute_and_flip, name=..., epsilon=epsilon)",
            )

        def select(
            q: np.ndarray, d: np.ndarray, e: float, g: np.random.Generator, sel: Any = sel
        ) -> Any:
            return sel.select(q, d, rng=g)

        try:
            _law(
                select, CASES[1][0], CASES[1][1], eps, "make_agent(...).selector_", rng,
                f"make_agent({eps})'s selector",
            )  # fmt: skip
        except CheckFailed as exc:
            raise CheckFailed(
                str(exc),
                cause="the agent's selector must be your permute_and_flip, wrapped with "
                "selectors.from_function (not a library selector)",
            ) from None
    env = {"id": SHIFT_ID, "t_shift": 150, "horizon": 300}
    res = run(env, {"yours": agent}, n_runs=8, seed=seed_from(rng), n_jobs=1, progress=False)
    report = res.privacy.get("yours")
    if not isinstance(report, dict) or report["selection"]["epsilon_per_action"] != 3.0:
        raise CheckFailed("your agent ran, but its privacy report does not show eps_S = 3")


def check_compare(student: Student, rng: np.random.Generator) -> None:
    """The run's configuration: environment, horizon, runs, seed, labels, eps per agent."""
    import agents
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
            "(labels: 'UCB', 'TS', 'PF eps=<eps:g>')",
            cause="the labels must be exactly 'UCB', 'TS' and f'PF eps={eps:g}'"
            if len(res.labels) == len(want)
            else None,
        )
    env = res.config["env"]
    expected_env = {"t_shift": 3 * horizon // 5, "horizon": horizon}
    if env.get("id") != SHIFT_ID or any(env["kwargs"].get(k) != v for k, v in expected_env.items()):
        raise CheckFailed(
            f"compare(..., horizon={horizon}) ran on {env}; expected the id {SHIFT_ID!r} with "
            f"t_shift = 3 * horizon // 5 = {3 * horizon // 5} and horizon = {horizon}",
            cause="build the environment from compare's arguments, not from constants"
            if env["kwargs"].get("horizon") != horizon
            else None,
        )
    if res.n_runs != n_runs or res.config["seed"] != seed:
        raise CheckFailed(
            f"compare(..., n_runs={n_runs}, seed={seed}) ran {res.n_runs} runs with seed "
            f"{res.config['seed']}",
            cause="pass compare's own n_runs and seed on to run(...)",
        )
    for label, eps in zip(want[2:], grid, strict=True):
        rep = res.privacy.get(label)
        got = None if not isinstance(rep, dict) else rep["selection"]["epsilon_per_action"]
        if got != eps:
            raise CheckFailed(
                f"agent {label!r} selects with eps_S = {got}, expected {eps}",
                cause="each private agent is make_agent(eps) with its own eps of the grid",
            )
    ucb = res.config["agents"]["UCB"]
    if ucb.get("class") != "UCB" or ucb.get("params", {}).get("log") != "t":
        raise CheckFailed(f"'UCB' must be agents.UCB(log='t'), got {ucb.get('repr')}")
    ts = res.config["agents"]["TS"]
    default_ts = agents.ThompsonSampling().get_params()
    if ts.get("class") != "ThompsonSampling" or ts.get("params") != default_ts:
        raise CheckFailed(f"'TS' must be agents.ThompsonSampling(), got {ts.get('repr')}")
