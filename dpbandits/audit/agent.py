"""End-to-end empirical privacy audit of a whole bandit agent (docs/selectors.md, "Auditing an
agent").

An agent is eps-DP -- eps-global differential privacy for bandits (Shariff & Sheffet, NeurIPS
2018; Azize & Basu, "When Privacy Meets Partial Information", NeurIPS 2022, whose reward-table
model this follows) -- when, for any two reward tables that differ in the rewards of one step,
the law of everything it outputs changes by a factor of at most ``e^eps`` on every event.
:func:`audit_agent` checks the action sequence, from the outside, through the agent protocol
only (:mod:`agents.base`), so it audits any agent, a user's plug-in as well as the built-in
ones. A neighbour ``x'`` of a table ``x`` changes the rewards of one step ``t0``: every arm's
reward moves to the far end of the reward range (:func:`~dpbandits.audit.reward_tables.\
neighbour_table`).

By default it *searches* (:mod:`dpbandits.audit.search`): over reward tables (the
environment's, constant tables, ties, near-ties, random means, a knife-edge gap found on pilot
runs, the environment's with a change point), over changed steps (every step of the horizon
with a few pilot runs, a grid with many, and the steps before the agent's behaviour changes)
and over events of the actions (the action at every step, pull and switch counts in windows,
switch times, the last actions, the action after each arm's n-th pull:
:mod:`dpbandits.audit.events`). Pilot runs pick the candidates; only these are bounded
on held-out runs with fresh seeds, by exact Clopper-Pearson intervals simultaneous over all of
them (Bonferroni), so an eps-DP agent gives ``eps_lower > eps`` with probability at most
``alpha`` however much the pilot tried. ``quick=True`` is the seconds-long smoke test: two
tables (:data:`QUICK_TABLES`: the environment's and an exact tie), the steps of
:func:`~dpbandits.audit.reward_tables.default_steps`, half of ``runs`` picking the events and
half bounding them (as many neighbours of either table as steps). The claimed eps is the
agent's own, ``privacy_report()["epsilon_total"]`` (:class:`dpbandits.accounting.PrivacyLedger`).

With ``delta`` the audit checks (eps, delta)-DP: every bound, on the pilot runs as on the
held-out ones, is of ``log((P - delta) / P')``, and the claim is the eps the accountant gives
the agent's native guarantee at ``delta`` (how a rho-zCDP agent is audited; docs/trust-models.md).
An environment that privatizes its rewards at the user (``dpbandits/LocalDP-v0``) is audited
with any agent: the tables are built from the wrapped environment and every run reports each
reward it gets through the local randomizer afresh, in the quick audit as in the search.

The replications of a batch must be independent (the agent protocol's rule); the pilot and the
held-out runs are independent in any case, as they never share a batch.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

import agents as agents_pkg
from dpbandits.audit.agent_result import AgentAuditResult, EventBound
from dpbandits.audit.events import FAMILIES
from dpbandits.audit.reward_tables import (
    TABLE_KINDS,
    default_steps,
    draw_table,
    local_randomizer,
    make_table,
    parse_table_spec,
)
from dpbandits.audit.search import (
    GAP_RUNS,
    GAPS,
    Bound,
    Runner,
    SearchPlan,
    choose,
    confirm,
    knife_edge_gap,
    pilot,
)
from dpbandits.core import checks
from dpbandits.core.docs import docs_reference
from dpbandits.trust.notions import approx_dp, check_delta, native_guarantee

__all__ = [
    "DEFAULT_ENV",
    "FAMILIES",
    "QUICK_RUNS",
    "QUICK_TABLES",
    "SEARCH",
    "AgentAuditResult",
    "EventBound",
    "audit_agent",
    "claimed_epsilon",
]

#: The table's environment when neither an env nor a table is given: arm 0 always pays 0 and
#: arm 1 always pays 1. Changing the bad arm's first reward makes the two arms look alike: the
#: hardest table found for UCB, Thompson sampling and the App. H agents (docs/selectors.md).
DEFAULT_ENV: dict[str, Any] = {"id": "dpbandits/KArmedBernoulli-v0", "means": [0.0, 1.0]}

#: The section of docs/selectors.md that documents the audit.
AUDIT_DOCS = "auditing-an-agent"
#: Replications per batch (memory: the agent's per-replication state, e.g. the noise blocks
#: of the App. H agents' private means, ~8 KB per replication at T = 500).
CHUNK = 2048
#: Runs on every table of the quick audit (half pick the events, half bound them).
QUICK_RUNS = 20_000
#: The quick audit's tables: the environment's (by default :data:`DEFAULT_ENV`, the hardest
#: table found for UCB, Thompson sampling and the App. H agents) and ``zeros``, every arm paying
#: the bottom of the range: an exact tie, on which an index policy's first decision after its
#: exploration turns on the one changed reward. On the default table alone (a gap of the whole
#: range) an agent that explores on a schedule and then follows the gap may move no action for
#: one reward -- LDP-UCB-L, whose arm with at most ``4 ln(t + 1)`` reports is played first: at
#: eps = 20 claiming 0.5 it showed a bound of 0 there (``T = 100``, 4 000 runs; and at the
#: defaults), 3.2-4.1 with ``zeros`` (docs/selectors.md, "Auditing an agent").
QUICK_TABLES = ("env", "zeros")
#: The default search (``budget = 1``): 9 tables; per table 4 000 pilot runs on the table,
#: 1 500 on each of ~20 grid neighbours and 48 on each other step's; then 10 neighbours with
#: their 3 best events, and their tables, on 10 000 held-out runs each.
SEARCH = SearchPlan(tables=tuple(k for k in TABLE_KINDS), pilot_base=4000, screen_runs=48,
                    grid_runs=1500, grid_steps=12, confirm_runs=10_000, confirm_neighbours=10,
                    events_per_neighbour=3)  # fmt: skip


def claimed_epsilon(agent: Any, delta: float | None = None) -> float | None:
    """The total eps ``agent`` claims (after its last run): ``privacy_report()["epsilon_total"]``.

    That entry of the agent's privacy report is the eps of global DP of everything the agent
    outputs, for reward tables that differ in one step's rewards (``inf`` when its design
    supports no finite total). An agent without ``privacy_report`` claims nothing (``None``);
    one whose report lacks ``epsilon_total`` is refused with a ``ValueError``. With ``delta``:
    the eps at ``delta`` of the report's native guarantee (eps-DP, eps-LDP, rho-zCDP;
    :func:`dpbandits.trust.notions.approx_dp`)."""
    report_fn = getattr(agent, "privacy_report", None)
    if not callable(report_fn):
        return None
    report = report_fn()
    if not isinstance(report, Mapping) or "epsilon_total" not in report:
        keys = sorted(report) if isinstance(report, Mapping) else type(report).__name__
        raise ValueError(
            f"{type(agent).__name__}.privacy_report() has no 'epsilon_total' (the total eps of "
            f"global DP that the agent audit checks: {docs_reference('selectors', AUDIT_DOCS)}); "
            f"it has {keys}"
        )
    eps = checks.number(report["epsilon_total"], "privacy_report()['epsilon_total']",
                        finite=False)  # fmt: skip
    if eps < 0:
        raise ValueError(f"privacy_report()['epsilon_total'] must be >= 0, got {eps}")
    if delta is None:
        return eps
    # with delta: the (eps, delta) guarantee the accountant gives for the report's native
    # notion (eps-DP, eps-LDP, rho-zCDP; dpbandits.trust.notions), the claim the audit checks
    native = native_guarantee(dict(report))
    if native is None:
        return eps
    conv = approx_dp(native[0], native[1], delta)
    if conv["epsilon"] is None:
        raise ImportError(f"audit_agent(delta=...): {conv['missing']}")
    return float(conv["epsilon"])



# -- the audit ----------------------------------------------------------------------------------
@dataclass
class _Setup:
    """The audit's checked inputs: the tables by name, their range and the changed steps."""

    tables: dict[str, NDArray[np.float64]]
    lo: float
    hi: float
    source: str
    steps: tuple[int, ...] | None
    plan: SearchPlan
    knife: NDArray[np.float64] | None
    shape: tuple[int, int]
    #: the delta of an (eps, delta) audit (0: pure eps-DP)
    delta: float = 0.0
    #: the local randomizer of a ``dpbandits/LocalDP-v0`` environment, applied per run
    randomizer: Any = None


def _env_table(env: Any, horizon: int, seed: int) -> tuple[NDArray[np.float64], float, float, str]:
    """The environment's table (``DEFAULT_ENV`` when ``env`` is ``None``; the wrapped
    environment's for ``dpbandits/LocalDP-v0``), its range, its name."""
    env = DEFAULT_ENV if env is None else env
    tab, lo, hi = draw_table(local_randomizer(env)[0], horizon, seed)
    name = env if isinstance(env, str) else (env.get("id") if isinstance(env, Mapping)
                                             else type(env).__name__)  # fmt: skip
    return tab, lo, hi, f"{name} (seed {seed})"


def _tables(env: Any, table: Any, reward_range: Any, horizon: int, quick: bool,
            gen: np.random.Generator) -> tuple[dict[str, NDArray[np.float64]], float, float,
                                               str, NDArray[np.float64] | None]:  # fmt: skip
    """The tables searched, by name (``env@SEED``, ``tie@SEED``, ...), their range, where they
    come from, and the environment's table when the knife-edge gap is still to be found (on
    pilot runs; not in the quick audit)."""
    env_seed, table_seed = (int(x) for x in gen.integers(2**31, size=2))
    if _is_array(table):
        if env is not None:
            raise ValueError("give env or table, not both")
        tab = checks.real_array(table, "table")
        if tab.ndim != 2 or tab.shape[0] < 2 or tab.shape[1] < 1:
            raise ValueError(f"table must have shape (T, K) with T >= 2, got {tab.shape}")
        lo, hi = checks.bounds(*(reward_range if reward_range is not None else (0.0, 1.0)))
        if tab.min() < lo or tab.max() > hi:
            raise ValueError(f"table values must lie in reward_range [{lo}, {hi}], got "
                             f"[{tab.min()}, {tab.max()}]")  # fmt: skip
        return {"given": tab}, lo, hi, "a given table", None
    if reward_range is not None:
        raise ValueError("reward_range goes with a given table (an env has its own range)")
    specs = [table] if isinstance(table, str) else (list(table) if table is not None else None)
    if specs is not None and not specs:
        raise ValueError("table must name at least one table")
    parsed = [parse_table_spec(s) for s in specs] if specs else []
    seeds = [p[2] for p in parsed if p[0] in ("env", "swapped", "shift") and p[2] is not None]
    tab, lo, hi, source = _env_table(env, horizon, seeds[0] if seeds else env_seed)
    if specs is None:
        kinds = QUICK_TABLES if quick else SEARCH.tables
        specs = list(kinds)  # each gets its seed below
    out = {}
    knife = False
    for spec in specs:
        kind, param, seed = parse_table_spec(spec)
        if seed is None and kind not in ("zeros", "ones"):  # the name says which coins
            spec = f"{spec}@{env_seed if kind in ('env', 'swapped', 'shift') else table_seed}"
        if kind == "gap" and param is None:
            if quick:
                raise ValueError(f"table {spec!r}: the quick audit needs the gap, gap:G")
            knife = True  # the knife-edge gap, found on pilot runs
            continue
        out[spec] = make_table(spec, tab, lo, hi)
    return out, lo, hi, f"tables built from {source}", tab if knife else None


def _is_array(table: Any) -> bool:
    """Whether ``table`` is the rewards themselves (not ``None``, a name or a list of names)."""
    if table is None or isinstance(table, str):
        return False
    return not (isinstance(table, (list, tuple)) and all(isinstance(x, str) for x in table))


def _steps(steps: Sequence[int] | None, horizon: int, n_arms: int, quick: bool
           ) -> tuple[int, ...] | None:  # fmt: skip
    """The changed steps given (checked), the quick audit's defaults, or ``None`` (search)."""
    if steps is None:
        steps_t = default_steps(horizon, n_arms) if quick else None
    else:
        steps_t = tuple(sorted({checks.integer(s, "steps", minimum=0) for s in steps}))
        if not steps_t:
            raise ValueError("steps must name at least one step")
        if steps_t[-1] >= horizon - 1:
            raise ValueError(f"steps must be < T - 1 = {horizon - 1} (the last step whose "
                             f"change can show in an action), got {steps_t[-1]}")  # fmt: skip
    if steps_t is not None and not steps_t:
        raise ValueError(f"T = {horizon} leaves no step to change")
    return steps_t


def _plan(quick: bool, runs: int | None, budget: float, n_steps: int) -> SearchPlan:
    """The quick plan (every changed step bounded: half of ``runs`` picks, half bounds) or the
    search's, scaled by ``budget``, ``runs`` its held-out runs per table."""
    if quick:
        half = (QUICK_RUNS if runs is None else runs) // 2
        return SearchPlan(tables=QUICK_TABLES, pilot_base=half, screen_runs=0, grid_runs=half,
                          grid_steps=0, confirm_runs=half, confirm_neighbours=n_steps,
                          events_per_neighbour=3)  # fmt: skip
    plan = SEARCH.scaled(budget)
    return plan if runs is None else SearchPlan(**{**plan.__dict__, "confirm_runs": runs // 2})


def _progress_total(setup: _Setup, horizon: int) -> int:
    """Agent-steps the search plans (the confirmation's as if every table were confirmed)."""
    p = setup.plan
    n_grid = (len(setup.steps) if setup.steps is not None else p.grid_steps + 6)
    n_screen = 0 if setup.steps is not None or p.screen_runs == 0 else horizon - 1 - n_grid
    n_tables = len(setup.tables) + (setup.knife is not None)
    per_table = p.pilot_base + n_grid * p.grid_runs + max(n_screen, 0) * p.screen_runs
    confirm = (p.confirm_neighbours + min(n_tables, p.confirm_neighbours)) * p.confirm_runs
    knife = len(GAPS) * GAP_RUNS if setup.knife is not None else 0
    return (n_tables * per_table + confirm + knife) * horizon


def _search(runner: Runner, setup: _Setup, confirm_gen: np.random.Generator, alpha: float
            ) -> tuple[list[Bound], int, int]:  # fmt: skip
    """Pilot every table, confirm the best candidates: their bounds, the neighbours scored and
    the events bounded."""
    if setup.knife is not None:
        any_table = setup.knife
        seed = int(runner.gen.integers(2**31))
        gap = knife_edge_gap(runner, any_table, setup.lo, setup.hi, seed)
        spec = f"gap:{gap:g}@{seed}"
        setup.tables[spec] = make_table(spec, any_table, setup.lo, setup.hi)
    cands, tried = [], 0
    for spec, tab in setup.tables.items():
        found, n = pilot(runner, spec, tab, setup.lo, setup.hi, setup.plan, setup.steps,
                         setup.delta)  # fmt: skip
        cands += found
        tried += n
    chosen = choose(cands, setup.plan.confirm_neighbours)
    n_events = sum(len(c.events) for c in chosen)
    if not n_events:
        return [], tried, 0
    runner.gen = confirm_gen  # the held-out runs: seeds the pilot never saw
    bounds = confirm(runner, chosen, setup.tables, setup.lo, setup.hi, setup.plan.confirm_runs,
                     alpha / n_events, setup.delta)  # fmt: skip
    return bounds, tried, n_events


def audit_agent(
    agent: Any,
    env: Any = None,
    *,
    table: ArrayLike | str | Sequence[str] | None = None,
    reward_range: tuple[float, float] | None = None,
    horizon: int = 500,
    steps: Sequence[int] | None = None,
    quick: bool = False,
    runs: int | None = None,
    budget: float = 1.0,
    alpha: float = 1e-3,
    epsilon: float | None = None,
    rng: Any = 0,
    chunk: int = CHUNK,
    progress: bool = False,
    delta: float | None = None,
) -> AgentAuditResult:
    """Audit ``agent`` end to end: a lower confidence bound on its privacy loss, against its
    claimed total eps (module docstring; docs/selectors.md, "Auditing an agent").

    Parameters
    ----------
    agent:
        An agent (the protocol of :mod:`agents.base`; a copy is run, the original is left
        alone) or a registered agent name (:func:`agents.make`).
    env:
        The environment the ``env`` table is drawn from (and whose range and number of arms
        every table takes), a registered id or a config ``{"id": ..., **kwargs}``; default
        :data:`DEFAULT_ENV`. Non-stationary environments give their reward tape as it is.
    table:
        The tables to search instead of the default ones: a name or list of names
        ``KIND[:PARAM][@SEED]`` (:data:`~dpbandits.audit.reward_tables.TABLE_KINDS`; ``gap``
        without a gap: the knife-edge gap), or a ``(T, K)`` array (then ``reward_range``, the
        range ``(lo, hi)`` its rewards may take, default ``(0, 1)``).
    horizon:
        Steps of every run, when the tables are built from ``env``.
    steps:
        The changed steps to try on every table, each ``< T - 1`` (then no screen of every
        step); default: the search's, or :func:`default_steps` when ``quick``.
    quick:
        The seconds-long smoke test (module docstring) instead of the search.
    runs:
        Quick: runs on every table, half pick the events, half bound them (default 20 000).
        Search: twice the held-out runs of every confirmed table (default ``2 * 10 000 *
        budget``).
    budget:
        The search's run counts times ``budget`` (1: about 10 minutes for an agent played step
        by step at a million agent-steps per second).
    alpha:
        The level: an agent that is eps-DP fails (``eps_lower > eps``) with probability at most
        ``alpha``.
    epsilon:
        The eps to compare with; default the agent's claim (:func:`claimed_epsilon`).
    rng:
        A seed or Generator: the tables and every run come from it (same seed, same result).
    chunk:
        Replications per batch (memory: the agent's state for ``chunk`` replications). Other
        batches draw other numbers, so the result depends on it; every value gives a valid
        bound.
    progress:
        Show a ``tqdm`` progress bar over the agent-steps.
    delta:
        Audit (eps, delta)-DP at this ``delta`` in ``(0, 1)``: each event bounds
        ``log((P - delta) / P')`` (pilot and held-out runs), and the claim is the eps of the
        agent's guarantee at ``delta`` (:func:`claimed_epsilon`; how rho-zCDP agents are
        audited, docs/trust-models.md). ``None``: pure eps-DP.

    An ``env`` that privatizes its rewards at the user (``dpbandits/LocalDP-v0``) is audited
    with any agent: the tables are built from the wrapped environment, every run reports each
    reward through the randomizer afresh, and the claim is the smaller of the randomizer's eps
    and the agent's own.
    """
    t_start = time.perf_counter()
    # -- every argument is checked before any work
    if isinstance(agent, str):
        agent = agents_pkg.make(agent)
    for method in ("reset", "act", "update"):
        if not callable(getattr(agent, method, None)):
            raise TypeError(f"agent must follow the agent protocol (agents.base.Agent); "
                            f"{type(agent).__name__} has no {method}()")  # fmt: skip
    checks.flag(quick, "quick")
    if runs is not None:
        runs = checks.integer(runs, "runs", minimum=4)
    budget = checks.positive_number(budget, "budget")
    alpha = checks.probability(alpha, "alpha")
    chunk = checks.positive_int(chunk, "chunk")
    checks.flag(progress, "progress")
    if delta is not None:
        delta = check_delta(delta)
    if epsilon is not None:
        epsilon = checks.number(epsilon, "epsilon", finite=False)
        if epsilon < 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    gen = checks.generator(rng)
    if not _is_array(table):
        horizon = checks.integer(horizon, "horizon", minimum=2)
    tables, lo, hi, source, knife = _tables(env, table, reward_range, horizon, quick, gen)
    horizon, n_arms = (knife if knife is not None else next(iter(tables.values()))).shape
    steps_t = _steps(steps, horizon, n_arms, quick)
    plan = _plan(quick, runs, budget, len(steps_t) if steps_t else 0)
    # a local randomizer at the user (dpbandits/LocalDP-v0), applied per run; none for a table
    randomizer = None if _is_array(table) else local_randomizer(env)[1]
    setup = _Setup(tables, lo, hi, source, steps_t, plan, knife, (horizon, n_arms),
                   delta or 0.0, randomizer)  # fmt: skip
    agent = copy.deepcopy(agent)
    # the agent's parameters and its claim are checked on one replication, before the runs
    agent.reset(1, n_arms, horizon=horizon, rng=0)
    claims = [] if epsilon is not None else [claimed_epsilon(agent, delta)]
    return _run(agent, setup, gen, alpha, epsilon, claims, chunk, progress, t_start, quick)


def _claim(epsilon: float | None, claims: list[float | None], setup: _Setup
           ) -> tuple[float | None, str]:  # fmt: skip
    """The eps the bound is compared with, and where it comes from: ``epsilon`` if given, else
    the largest the agent reported, or the local randomizer's when smaller (its reports are
    eps-LDP whatever the agent does), at ``delta`` in an (eps, delta) audit."""
    if epsilon is not None:
        return epsilon, "given"
    known = [c for c in claims if c is not None]
    claimed = max(known) if known else None
    source = "privacy_report()['epsilon_total']"
    if setup.randomizer is not None:
        eps_ldp = float(setup.randomizer.epsilon)
        local = (eps_ldp if not setup.delta
                 else approx_dp("local", eps_ldp, setup.delta)["epsilon"])  # fmt: skip
        if local is not None and (claimed is None or local < claimed):
            claimed, source = float(local), "the local randomizer's eps"
    if setup.delta and claimed is not None:
        source += f", as (eps, delta) at delta={setup.delta:g} by dp-accounting"
    return claimed, source


def _run(agent: Any, setup: _Setup, gen: np.random.Generator, alpha: float,
         epsilon: float | None, claims: list[float | None], chunk: int, progress: bool,
         t_start: float, quick: bool) -> AgentAuditResult:  # fmt: skip
    """The search with a progress bar, and its result."""
    horizon, n_arms = setup.shape
    pilot_gen, confirm_gen = gen.spawn(2)
    bar: Any = None
    if progress:
        from tqdm.auto import tqdm  # only when shown (its import costs start-up time)

        bar = tqdm(total=_progress_total(setup, horizon), unit="step", unit_scale=True,
                   desc="dpbandits audit-agent", mininterval=0.5)  # fmt: skip

    def tick(k: int) -> None:
        if bar is not None:
            bar.update(k)

    runner = Runner(agent, chunk, pilot_gen, tick, setup.randomizer)
    if epsilon is None:
        delta = setup.delta or None
        runner.after_batch = lambda: claims.append(claimed_epsilon(agent, delta))
    try:
        bounds, tried, n_events = _search(runner, setup, confirm_gen, alpha)
    finally:
        if bar is not None:
            bar.close()
    claimed, source_claim = _claim(epsilon, claims, setup)
    events = [EventBound(
        family=b.event.family, step=b.candidate.step, event=b.event.describe(n_arms),
        direction="P'/P" if b.event.swap else "P/P'", count=b.count, count_prime=b.count_prime,
        n=b.n, lower=b.lower, estimate=b.estimate, selection_lower=max(0.0, b.event.score),
        table=b.candidate.table,
    ) for b in bounds]  # fmt: skip
    return AgentAuditResult(
        agent=_label(agent), epsilon=claimed,
        epsilon_source=source_claim if claimed is not None else "none (no privacy_report)",
        eps_lower=max((e.lower for e in events), default=0.0), alpha=alpha,
        runs=setup.plan.confirm_runs, horizon=horizon, n_arms=n_arms,
        steps=setup.steps if setup.steps is not None else (), events=events,
        seconds=time.perf_counter() - t_start, table_source=setup.source,
        notes=_notes(events, setup, alpha, n_events), tables=tuple(setup.tables),
        tried=tried, mode="quick" if quick else "search", delta=setup.delta,
    )  # fmt: skip


def _label(agent: Any) -> str:
    label = getattr(agent, "label", None)
    return label if isinstance(label, str) else repr(agent)


def _notes(events: list[EventBound], setup: _Setup, alpha: float, n_events: int) -> list[str]:
    """What the reader should know beside the numbers."""
    notes = []
    if not events:
        notes.append(
            "the actions after every changed step had the same law in the pilot runs on every "
            "table: nothing the agent did depended on the changed rewards, and the audit "
            "certifies nothing (try a longer horizon, other changed steps, or a table on which "
            "the agent makes a decision)"
        )
        return notes
    n = setup.plan.confirm_runs
    from dpbandits.audit.events import log_ratio_lower

    ceiling = float(log_ratio_lower(n, n, 0, n, alpha / n_events, setup.delta))
    if max(e.lower for e in events) >= ceiling - 1e-9:
        notes.append(
            f"an event happened in every held-out run on one table and in none on the other: "
            f"{ceiling:.3g} is the largest bound {n} held-out runs per table can give; the "
            "loss may be much larger (infinite for a deterministic agent)"
        )
    return notes
