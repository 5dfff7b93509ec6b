"""End-to-end empirical privacy audit of a whole bandit agent (docs/selectors.md, "Auditing an
agent").

An agent is eps-DP -- eps-global differential privacy for bandits (Shariff & Sheffet, NeurIPS
2018; Azize & Basu, "When Privacy Meets Partial Information", NeurIPS 2022, whose reward-table
model this follows) -- when, for any two reward tables that differ in the rewards of one step,
the law of everything it outputs changes by a factor of at most ``e^eps`` on every event.
:func:`audit_agent` checks the action sequence, from the outside, through the agent protocol
only (:mod:`agents.base`):

1. It fixes one reward table ``x`` of shape ``(T, K)`` (drawn once from an environment with a
   seed, or given) and builds neighbours ``x'``, each changing the rewards of one step ``t0``:
   every arm's reward moves to the far end of the reward range (``lo`` if it is above the
   middle, else ``hi``), the largest change a neighbour can make. Several steps are tried
   (:func:`default_steps`).
2. It runs the agent ``runs`` times on ``x`` and on every ``x'``, in batches of replications
   (through the block path ``play(rows, actions, rewards)`` where the agent has one), with the
   agent's own randomness only: every replication sees the same table.
3. It bounds the privacy loss from below with exact Clopper-Pearson intervals over events of the
   action sequence, in three families (:data:`FAMILIES`): (a) ``actions``: the action at each of
   the 16 steps after ``t0``, and the pattern of the next few (events: unions of values in the
   order of their likelihood ratio); (b) ``counts``: the pull counts of every arm in the windows
   ``t0 + 1 .. t0 + h``, ``h = 1, 2, 4, ...`` up to the end, and the first step after ``t0`` at
   which each arm is played (events: thresholds); (c) ``learned``: a distinguisher, Fisher's
   linear discriminant on the first actions and all the counts, fitted by the auditor
   (events: thresholds on its score).

The runs are split in two halves with independent seeds. On the *selection* half the auditor
picks, per family, the ``events_per_family`` events (each with its neighbour and direction,
at most one per feature) of largest Clopper-Pearson lower bound; only these are evaluated on
the *evaluation* half, so the choice does not bias the bound. ``eps_lower`` is the largest of
these held-out bounds, all of them simultaneous (Bonferroni over the ``2 * 3 *
events_per_family`` one-sided bounds): an eps-DP agent gives ``eps_lower > eps`` with
probability at most ``alpha``. The claimed eps is the agent's own,
``privacy_report()["epsilon_total"]`` (:class:`dpbandits.accounting.PrivacyLedger`).

The replications of a batch must be independent (the agent protocol's rule); the halves are
independent in any case, as they never share a batch.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

import agents as agents_pkg
from dpbandits.audit.agent_result import AgentAuditResult, EventBound
from dpbandits.audit.reward_tables import (
    default_steps,
    draw_table,
    local_randomizer,
    neighbour_table,
    play_table,
)
from dpbandits.audit.selector import clopper_pearson
from dpbandits.core import checks
from dpbandits.core.docs import docs_reference
from dpbandits.trust.notions import approx_dp, check_delta, native_guarantee

__all__ = [
    "DEFAULT_ENV",
    "FAMILIES",
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
#: The event families, in the order they are reported.
FAMILIES = ("actions", "counts", "learned")

#: Steps after the changed step whose actions are features (family ``actions``).
ACTION_STEPS = 16
#: At most this many values for the pattern of the next actions (family ``actions``).
PATTERN_VALUES = 256
#: Steps after the changed step whose actions the learned distinguisher reads.
LEARNED_STEPS = 8
#: Bins of the learned distinguisher's score (quantiles of the selection half).
SCORE_BINS = 64
#: Replications per batch (memory: the agent's per-replication state, e.g. the noise blocks
#: of the App. H agents' private means, ~8 KB per replication at T = 500).
CHUNK = 2048


def claimed_epsilon(agent: Any, delta: float | None = None) -> float | None:
    """The total eps ``agent`` claims (after its last run): ``privacy_report()["epsilon_total"]``.

    That entry of the agent's privacy report is the eps of global DP of everything the agent
    outputs, for reward tables that differ in one step's rewards (``inf`` when its design
    supports no finite total). An agent without ``privacy_report`` claims nothing (``None``);
    one whose report lacks ``epsilon_total`` is refused with a ``ValueError``."""
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


# -- features and events ------------------------------------------------------------------------
@dataclass
class _Feature:
    """An integer feature of the runs, codes in ``[0, size)``: the base table's runs first,
    then the neighbour's. ``ordinal`` codes are ordered; others are ranked by likelihood."""

    family: str
    step: int
    name: str
    codes: NDArray[np.int64]
    size: int
    ordinal: bool
    label: Callable[[int], str] | None = None


def _label(template: str, offset: int = 0) -> Callable[[int], str]:
    """``v -> template.format(v + offset)``: how an event names a value of a feature."""

    def label(v: int) -> str:
        return template.format(v + offset)

    return label


def _windows(span: int) -> list[int]:
    """Window lengths ``1, 2, 4, ...`` and ``span`` itself."""
    out, h = [], 1
    while h < span:
        out.append(h)
        h *= 2
    return out + [span]


def _features(
    acts: NDArray[np.integer[Any]], step: int, n_arms: int
) -> tuple[list[_Feature], NDArray[np.float64]]:
    """Families ``actions`` and ``counts`` for the neighbour changing ``step``, and the real
    features the learned distinguisher reads. ``acts``: ``(2n, T)`` actions of the runs on both
    tables. The actions up to ``step`` have the same law on both tables (the reward of ``step``
    is seen after its action): only the later ones are used."""
    after = acts[:, step + 1 :]
    span = after.shape[1]
    j_max = min(ACTION_STEPS, span)
    first = after[:, :j_max].astype(np.int64)
    feats: list[_Feature] = []
    for j in range(j_max):
        feats.append(_Feature("actions", step, f"a[{step + 1 + j}]", first[:, j], n_arms, False,
                              _label(f"a[{step + 1 + j}]={{}}")))  # fmt: skip
    m = 1
    while m < j_max and n_arms ** (m + 1) <= PATTERN_VALUES:
        m += 1
    if m >= 2:
        code = np.zeros(after.shape[0], dtype=np.int64)
        for j in range(m):
            code = code * n_arms + first[:, j]

        def pattern(v: int, m: int = m) -> str:
            digits = []
            for _ in range(m):
                v, d = divmod(v, n_arms)
                digits.append(str(d))
            sep = "" if n_arms <= 10 else ","
            return f"a[{step + 1}..{step + m}]={sep.join(reversed(digits))}"

        feats.append(_Feature("actions", step, "pattern", code, n_arms**m, False, pattern))
    columns = [np.eye(n_arms)[first[:, j]] for j in range(min(LEARNED_STEPS, j_max))]
    windows = _windows(span)
    for a in range(n_arms):
        pulled = after == a
        # the first step after the change at which arm a is played (span: never); with a noisy
        # selector the evidence is in the tail of this waiting time
        wait = np.where(pulled.any(axis=1), pulled.argmax(axis=1), span).astype(np.int64)
        feats.append(_Feature("counts", step, f"wait{a}", wait, span + 1, True,
                              _label(f"first {a} at step {{}}", step + 1)))  # fmt: skip
        columns.append((wait / span)[:, None])
        counts = np.zeros(after.shape[0], dtype=np.int64)
        prev = 0
        for h in windows:
            counts = counts + np.count_nonzero(pulled[:, prev:h], axis=1)
            prev = h
            feats.append(_Feature("counts", step, f"N{a}[{step + 1}..{step + h}]", counts, h + 1,
                                  True))  # fmt: skip
            columns.append((counts / h)[:, None])
    return feats, np.hstack(columns)


def _learned_feature(step: int, x: NDArray[np.float64], n_sel: int) -> _Feature:
    """Family ``learned``: Fisher's linear discriminant between the runs on the base table and
    those on the neighbour, ``w = (S + I)^-1 (m - m')`` on standardised features (``S`` the
    pooled covariance, ``m``, ``m'`` the two means), fitted on the selection half (the first
    ``n_sel`` runs of each table); its score, cut at the selection half's quantiles."""
    half = x.shape[0] // 2
    base, nb = x[:n_sel], x[half : half + n_sel]
    sd = np.concatenate([base, nb]).std(axis=0)
    sd[sd == 0] = 1.0
    zb, zn = base / sd, nb / sd
    cb, cn = zb - zb.mean(axis=0), zn - zn.mean(axis=0)
    # einsum, not a BLAS product: a threaded BLAS stalls on tall thin products on a busy machine
    cov = (np.einsum("ni,nj->ij", cb, cb) + np.einsum("ni,nj->ij", cn, cn)) / (2 * n_sel)
    w = np.linalg.solve(cov + np.eye(cov.shape[0]), zb.mean(axis=0) - zn.mean(axis=0))
    score = np.einsum("ni,i->n", x / sd, w)
    cuts = np.unique(np.quantile(score[:n_sel], np.linspace(0, 1, SCORE_BINS + 1)[1:-1]))
    codes = np.searchsorted(cuts, score, side="right").astype(np.int64)
    return _Feature("learned", step, "score", codes, cuts.size + 1, True)


def _log_ratio_lower(
    k: NDArray[np.int64], k_prime: NDArray[np.int64], n: int, alpha: float, delta: float = 0.0
) -> NDArray[np.float64]:
    """Lower bound on ``log((P - delta) / P')`` from ``k`` of ``n`` and ``k'`` of ``n`` draws:
    the one-sided Clopper-Pearson lower bound on ``P``, less ``delta``, over the upper bound on
    ``P'``, each at level ``alpha``. An (eps, delta)-DP agent has ``P <= e^eps P' + delta`` on
    every event, so this bounds its eps from below (``-inf`` when ``P`` may be below
    ``delta``); ``delta = 0`` is pure DP."""
    lower, _ = clopper_pearson(k, n, alpha)
    _, upper = clopper_pearson(k_prime, n, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.maximum(lower - delta, 0.0)) - np.log(upper)


def _log_ratio(k: int, k_prime: int) -> float:
    """The plug-in ``log(k / k')`` (``inf`` when only ``k`` is positive, 0 when neither is)."""
    if k == 0 or k_prime == 0:
        return 0.0 if k == k_prime else (math.inf if k_prime == 0 else -math.inf)
    return math.log(k / k_prime)


@dataclass
class _Event:
    """``rank(code) <= rank`` (or ``>``, the complement) for one feature's ranking of codes;
    ``swap``: the bound is on ``log(P' / P)``."""

    feature: _Feature
    ranks: NDArray[np.int64]
    rank: int
    complement: bool
    swap: bool
    score: float

    def member(self, codes: NDArray[np.int64]) -> NDArray[np.bool_]:
        inside = self.ranks[codes] <= self.rank
        return ~inside if self.complement else inside

    def describe(self) -> str:
        f = self.feature
        if f.ordinal and f.label is None:
            return f"{f.name} {'>' if self.complement else '<='} {self.rank}"
        if f.ordinal:
            assert f.label is not None
            text = f.label(self.rank + (1 if self.complement else 0))
            return text.replace(" at ", " at >= " if self.complement else " at <= ")
        label = f.label or str
        order = np.argsort(self.ranks)
        chosen = order[self.rank + 1 :] if self.complement else order[: self.rank + 1]
        shown = " or ".join(label(int(v)) for v in chosen[:2])
        return shown + (f" (+{len(chosen) - 2} more)" if len(chosen) > 2 else "")


def _best_event(feat: _Feature, n_sel: int, alpha_each: float,
                delta: float = 0.0) -> _Event | None:  # fmt: skip
    """The event of one feature with the largest lower bound on the selection half (the first
    ``n_sel`` runs of each table): ``rank <= j`` or its complement, in either direction, the
    codes ranked in their order (ordinal) or by their likelihood ratio on the selection half
    (the Neyman-Pearson order; ``None`` when the feature never varies)."""
    half = feat.codes.size // 2
    c = np.bincount(feat.codes[:n_sel], minlength=feat.size)
    cp = np.bincount(feat.codes[half : half + n_sel], minlength=feat.size)
    if feat.ordinal:
        ranks = np.arange(feat.size, dtype=np.int64)
    else:
        order = np.argsort(np.log(cp + 0.5) - np.log(c + 0.5), kind="stable")
        ranks = np.empty(feat.size, dtype=np.int64)
        ranks[order] = np.arange(feat.size)
    by_rank, by_rank_p = np.zeros_like(c), np.zeros_like(cp)
    by_rank[ranks], by_rank_p[ranks] = c, cp
    k, kp = np.cumsum(by_rank)[:-1], np.cumsum(by_rank_p)[:-1]
    # thresholds between two values seen: the others repeat an event
    useful = np.flatnonzero((by_rank + by_rank_p)[:-1] > 0)
    useful = useful[(k[useful] + kp[useful] > 0) & (k[useful] + kp[useful] < 2 * n_sel)]
    if useful.size == 0:
        return None
    k, kp = k[useful], kp[useful]
    scores = np.stack([
        _log_ratio_lower(k, kp, n_sel, alpha_each, delta),
        _log_ratio_lower(kp, k, n_sel, alpha_each, delta),
        _log_ratio_lower(n_sel - k, n_sel - kp, n_sel, alpha_each, delta),
        _log_ratio_lower(n_sel - kp, n_sel - k, n_sel, alpha_each, delta),
    ])  # fmt: skip
    kind, i = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return _Event(feat, ranks, int(useful[i]), bool(kind >= 2), bool(kind % 2 == 1),
                  float(scores[kind, i]))  # fmt: skip


# -- the audit ----------------------------------------------------------------------------------
def audit_agent(
    agent: Any,
    env: Any = None,
    *,
    table: ArrayLike | None = None,
    reward_range: tuple[float, float] | None = None,
    horizon: int = 500,
    steps: Sequence[int] | None = None,
    runs: int = 20_000,
    alpha: float = 1e-3,
    epsilon: float | None = None,
    events_per_family: int = 2,
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
        The environment the reward table is drawn from, a registered id or a config
        ``{"id": ..., **kwargs}``; default :data:`DEFAULT_ENV`.
    table, reward_range:
        Or the ``(T, K)`` reward table itself, and the range ``(lo, hi)`` its rewards may take
        (default ``(0, 1)``), within which the neighbours move them.
    horizon:
        Steps of every run, when the table is drawn from ``env``.
    steps:
        The changed steps to try, each ``< T - 1``; default :func:`default_steps`.
    runs:
        Runs of the agent on every table (the base table and each neighbour): half select the
        events, half evaluate them. The cost is ``runs * T * (1 + len(steps))`` agent-steps.
    alpha:
        The level: an agent that is eps-DP fails (``eps_lower > eps``) with probability at most
        ``alpha``.
    epsilon:
        The eps to compare with; default the agent's claim (:func:`claimed_epsilon`).
    events_per_family:
        Events per family evaluated on the held-out half (their bounds share ``alpha``).
    rng:
        A seed or Generator: the drawn table and every run come from it (same seed, same result).
    chunk:
        Replications per batch (memory: the agent's state for ``chunk`` replications). Other
        batches draw other numbers, so the result depends on it; every value gives a valid
        bound.
    progress:
        Show a ``tqdm`` progress bar over the agent-steps.
    delta:
        Audit (eps, delta)-DP at this ``delta`` in ``(0, 1)``: each event bounds
        ``log((P - delta) / P')``, and the claim is the eps of the agent's guarantee at
        ``delta`` (:func:`claimed_epsilon`; how rho-zCDP agents are audited,
        docs/trust-models.md). ``None``: pure eps-DP.

    An ``env`` that privatizes its rewards at the user (``dpbandits/LocalDP-v0``) is audited
    with any agent: the table is drawn from the wrapped environment, every run reports each
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
    runs = checks.integer(runs, "runs", minimum=4)
    alpha = checks.probability(alpha, "alpha")
    events_per_family = checks.positive_int(events_per_family, "events_per_family")
    chunk = checks.positive_int(chunk, "chunk")
    checks.flag(progress, "progress")
    if delta is not None:
        delta = check_delta(delta)
    if epsilon is not None:
        epsilon = checks.number(epsilon, "epsilon", finite=False)
        if epsilon < 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    gen = checks.generator(rng)
    randomizer = None  # a local randomizer at the user (dpbandits/LocalDP-v0), applied per run
    if table is not None:
        if env is not None:
            raise ValueError("give env or table, not both")
        tab = checks.real_array(table, "table")
        if tab.ndim != 2 or tab.shape[0] < 2 or tab.shape[1] < 1:
            raise ValueError(f"table must have shape (T, K) with T >= 2, got {tab.shape}")
        lo, hi = checks.bounds(*(reward_range if reward_range is not None else (0.0, 1.0)))
        if tab.min() < lo or tab.max() > hi:
            raise ValueError(f"table values must lie in reward_range [{lo}, {hi}], got "
                             f"[{tab.min()}, {tab.max()}]")  # fmt: skip
        source = "a given table"
    else:
        if reward_range is not None:
            raise ValueError("reward_range goes with a given table (an env has its own range)")
        horizon = checks.integer(horizon, "horizon", minimum=2)
        env = DEFAULT_ENV if env is None else env
        seed = int(gen.integers(2**31))
        inner, randomizer = local_randomizer(env)
        tab, lo, hi = draw_table(inner, horizon, seed)
        name = env if isinstance(env, str) else (env.get("id") if isinstance(env, Mapping)
                                                 else type(env).__name__)  # fmt: skip
        source = f"a table drawn from {name} (seed {seed})"
    horizon, n_arms = tab.shape
    if steps is None:
        steps_t = default_steps(horizon, n_arms)
    else:
        steps_t = tuple(sorted({checks.integer(s, "steps", minimum=0) for s in steps}))
        if not steps_t:
            raise ValueError("steps must name at least one step")
        if steps_t[-1] >= horizon - 1:
            raise ValueError(f"steps must be < T - 1 = {horizon - 1}, got {steps_t[-1]}")
    if not steps_t:
        raise ValueError(f"T = {horizon} leaves no step to change")
    n_tables = 1 + len(steps_t)
    half = runs // 2
    checks.memory(n_tables * 2 * half * horizon, "runs * T * tables", itemsize=1)
    agent = copy.deepcopy(agent)
    # the agent's parameters and its claim are checked on one replication, before the runs
    agent.reset(1, n_arms, horizon=horizon, rng=0)
    claims = [] if epsilon is not None else [claimed_epsilon(agent, delta)]
    local_claim = None
    if randomizer is not None:  # the reports are eps-LDP whatever the agent does
        local_claim = (randomizer.epsilon if delta is None
                       else approx_dp("local", randomizer.epsilon, delta)["epsilon"])  # fmt: skip

    tables = [tab] + [neighbour_table(tab, s, lo, hi) for s in steps_t]
    dtype = np.int8 if n_arms <= 127 else (np.int16 if n_arms <= 32767 else np.int64)
    acts = np.empty((n_tables, 2 * half, horizon), dtype=dtype)
    # one seed per table and half, in a fixed order: the halves never share a batch
    seeds = gen.spawn(2 * n_tables)
    bar: Any = None
    if progress:
        from tqdm.auto import tqdm  # only when shown (its import costs start-up time)

        bar = tqdm(total=n_tables * 2 * half * horizon, unit="step", unit_scale=True,
                   desc="dpbandits audit-agent", mininterval=0.5)  # fmt: skip
    try:
        for i, tb in enumerate(tables):
            for h in range(2):
                for done in range(0, half, chunk):
                    n = min(chunk, half - done)
                    start = h * half + done
                    play_table(agent, tb, n, seeds[2 * i + h].spawn(1)[0],
                               out=acts[i, start : start + n],
                               progress=None if bar is None else bar.update,
                               randomizer=randomizer)  # fmt: skip
                    if epsilon is None:
                        claims.append(claimed_epsilon(agent, delta))
    finally:
        if bar is not None:
            bar.close()
    known = [c for c in claims if c is not None]
    claimed = epsilon if epsilon is not None else (max(known) if known else None)
    source_claim = "given" if epsilon is not None else "privacy_report()['epsilon_total']"
    if epsilon is None and local_claim is not None and (claimed is None or local_claim < claimed):
        claimed, source_claim = local_claim, "the local randomizer's eps"
    if delta is not None and epsilon is None and claimed is not None:
        source_claim += f", as (eps, delta) at delta={delta:g} by dp-accounting"

    # -- the selection half picks each family's events; the evaluation half bounds them
    alpha_each = alpha / (2 * len(FAMILIES) * events_per_family)
    found: dict[str, list[_Event]] = {f: [] for f in FAMILIES}
    for k, s in enumerate(steps_t):
        feats, x = _features(np.concatenate([acts[0], acts[k + 1]]), s, n_arms)
        feats.append(_learned_feature(s, x, half))
        for f in feats:
            ev = _best_event(f, half, alpha_each, delta or 0.0)
            if ev is not None:
                found[f.family].append(ev)
    events: list[EventBound] = []
    notes: list[str] = []
    if not any(found.values()):
        notes.append(
            "the actions after every changed step were the same in every run on every table: "
            "nothing the agent did depended on the changed rewards, and the audit certifies "
            "nothing (try a longer horizon, other changed steps, or a table on which the agent "
            "makes a decision)"
        )
    for fam in FAMILIES:
        for ev in sorted(found[fam], key=lambda e: -e.score)[:events_per_family]:
            inside = ev.member(ev.feature.codes)
            total = inside.size // 2
            k_base = int(inside[half:total].sum())
            k_nb = int(inside[total + half :].sum())
            k1, k2 = (k_nb, k_base) if ev.swap else (k_base, k_nb)
            lower = float(_log_ratio_lower(np.array([k1]), np.array([k2]), half, alpha_each,
                                           delta or 0.0)[0])  # fmt: skip
            events.append(EventBound(
                family=fam, step=ev.feature.step, event=ev.describe(),
                direction="P'/P" if ev.swap else "P/P'", count=k_base, count_prime=k_nb, n=half,
                lower=max(0.0, lower),
                estimate=_log_ratio(k1, k2),
                selection_lower=max(0.0, ev.score),
            ))  # fmt: skip
    ceiling = float(_log_ratio_lower(np.array([half]), np.array([0]), half, alpha_each,
                                     delta or 0.0)[0])  # fmt: skip
    if events and max(e.lower for e in events) >= ceiling - 1e-9:
        notes.append(
            f"an event happened in every held-out run on one table and in none on the other: "
            f"{ceiling:.3g} is the largest bound {half} held-out runs per table can give; the "
            "loss may be much larger (infinite for a deterministic agent)"
        )
    label = getattr(agent, "label", None)
    return AgentAuditResult(
        agent=label if isinstance(label, str) else repr(agent), epsilon=claimed,
        epsilon_source=source_claim if claimed is not None else "none (no privacy_report)",
        eps_lower=max((e.lower for e in events), default=0.0), alpha=alpha, runs=2 * half,
        horizon=horizon, n_arms=n_arms, steps=steps_t, events=events,
        seconds=time.perf_counter() - t_start, table_source=source, notes=notes,
        delta=delta or 0.0,
    )  # fmt: skip
