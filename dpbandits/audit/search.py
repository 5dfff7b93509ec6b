"""The agent audit's search: pilot runs pick (table, changed step, event) candidates, held-out
runs bound them (docs/selectors.md, "Auditing an agent").

1. *Tables* (:func:`dpbandits.audit.reward_tables.make_table`): the environment's, its arms
   reversed, constant tables, ties, near-ties, random means, and a knife-edge gap between the
   arms' means, picked on pilot runs as the gap at which the runs disagree most about the best
   arm (:func:`knife_edge_gap`), and the environment's with its arms reversed from a change
   point on.
2. *Changed steps*, per table: every step of the horizon with a few pilot runs each (the
   *screen*: a leak that makes one event near-certain on one table and rare on the other shows
   with a few dozen runs), and a grid with many pilot runs each (the *grid*: the whole horizon
   evenly, the initial round, the last step that can show, and the steps before the largest
   changes of the agent's behaviour on the base table's pilot runs).
3. *Events*: every event of every family (:mod:`dpbandits.audit.events`) that reads a
   step after the changed one, scored by its Clopper-Pearson bound on the pilot runs.
4. The best neighbours (half from the grid, half from the screen) and their best events are
   bounded on held-out runs with fresh seeds, the bounds simultaneous over all of them
   (Bonferroni): the pilot's data are never reused, so however many events it tried, an
   eps-DP agent gives a held-out bound above eps with probability at most ``alpha``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.audit.events import (
    Event,
    Layout,
    blocks,
    feature_codes,
    log_ratio_lower,
    scored_events,
)
from dpbandits.audit.reward_tables import make_table, neighbour_table, play_tables

__all__ = ["Candidate", "SearchPlan", "knife_edge_gap", "pilot", "confirm"]

#: The pilot level of each event's score (a ranking, not a claim).
PILOT_ALPHA = 0.01
#: Events kept per block and neighbour in the pilot.
KEEP = 2
#: Gaps tried for the knife-edge table, and the pilot runs per gap.
GAPS = (0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.8)
GAP_RUNS = 256


@dataclass(frozen=True)
class SearchPlan:
    """Sizes of the search (module docstring). ``screen_runs = 0``: no screen."""

    tables: tuple[str, ...]
    pilot_base: int
    screen_runs: int
    grid_runs: int
    grid_steps: int
    confirm_runs: int
    confirm_neighbours: int
    events_per_neighbour: int

    def scaled(self, budget: float) -> SearchPlan:
        """Every run count times ``budget`` (at least 4 runs)."""

        def sc(n: int) -> int:
            return 0 if n == 0 else max(4, int(round(n * budget)))

        return replace(self, pilot_base=sc(self.pilot_base), screen_runs=sc(self.screen_runs),
                       grid_runs=sc(self.grid_runs),
                       confirm_runs=sc(self.confirm_runs))  # fmt: skip


@dataclass
class Candidate:
    """A neighbour (table ``table``, changed ``step``) and its best pilot events."""

    table: str
    step: int
    tier: str
    events: list[Event]

    @property
    def score(self) -> float:
        return max(e.score for e in self.events)


class Runner:
    """Plays the agent in batches of at most ``chunk`` replications, each replication on one
    of a stack of tables, and reports agent-steps to ``progress``. With a local
    ``randomizer`` (``dpbandits/LocalDP-v0``;
    :func:`~dpbandits.audit.reward_tables.local_randomizer`) every reward a run gets is its
    fresh report."""

    def __init__(self, agent: Any, chunk: int, gen: np.random.Generator,
                 progress: Callable[[int], object] | None,
                 randomizer: Any = None) -> None:  # fmt: skip
        self.agent, self.chunk, self.gen, self.progress = agent, chunk, gen, progress
        self.randomizer = randomizer
        #: called after every batch (the audit reads the agent's claim, which may change)
        self.after_batch: Callable[[], object] | None = None

    def batches(
        self, tables: NDArray[np.float64], sizes: Sequence[int]
    ) -> Any:  # Iterator[(groups, acts)]
        """Runs ``sizes[g]`` replications on ``tables[g]``; yields ``(groups, acts)`` per batch."""
        groups = np.repeat(np.arange(len(sizes)), sizes)
        for start in range(0, groups.size, self.chunk):
            g = groups[start : start + self.chunk]
            used = np.unique(g)
            local = np.searchsorted(used, g)
            acts = play_tables(self.agent, tables[used], local, self.gen.spawn(1)[0],
                               progress=self.progress,
                               randomizer=self.randomizer)  # fmt: skip
            if self.after_batch is not None:
                self.after_batch()
            yield g, acts


def knife_edge_gap(runner: Runner, env_table: NDArray[np.float64], lo: float, hi: float,
                   seed: int) -> float:  # fmt: skip
    """The gap between the arms' means (:data:`GAPS`) at which the pilot runs disagree most
    about the best arm: the largest spread, over runs, of the share of the last half of the
    horizon spent on the best arm (a decision on a knife edge)."""
    horizon, n_arms = env_table.shape
    tabs = np.stack([make_table(f"gap:{g}@{seed}", env_table, lo, hi) for g in GAPS])
    spread = np.zeros(len(GAPS))
    for groups, acts in runner.batches(tabs, [GAP_RUNS] * len(GAPS)):
        share = (acts[:, horizon // 2 :] == n_arms - 1).mean(axis=1)
        for g in np.unique(groups):
            spread[g] = max(spread[g], float(share[groups == g].std()))
    return float(GAPS[int(np.argmax(spread))])


def _grid(horizon: int, n_arms: int, size: int, changes: NDArray[np.int64]) -> list[int]:
    """The grid's changed steps: ``size`` evenly over ``[0, T - 2]``, the initial round's last
    step and ``2K``, and the step before each of ``changes``."""
    even = np.rint(np.linspace(0, horizon - 2, max(size, 2))).astype(int)
    cand = set(even.tolist()) | {n_arms - 1, 2 * n_arms} | {int(t) - 1 for t in changes}
    return sorted(s for s in cand if 0 <= s <= horizon - 2)


def _behaviour_changes(acts: NDArray[np.integer[Any]], n_arms: int, k: int) -> NDArray[np.int64]:
    """The ``k`` steps ``t`` where the base table's pilot runs change most: the total variation
    between the action frequencies of ``t - 1`` and ``t``, plus the share of runs switching."""
    freq = np.stack([(acts == a).mean(axis=0) for a in range(n_arms)])
    change = np.abs(np.diff(freq, axis=1)).sum(axis=0) + (acts[:, 1:] != acts[:, :-1]).mean(0)
    return np.sort(np.argsort(-change, kind="stable")[:k] + 1)


#: Feature codes computed at a time (memory: 8 bytes each).
CODES_AT_ONCE = 2_000_000


def _slices(n_runs: int, layout: Layout) -> list[slice]:
    """Slices of the runs whose feature codes fit :data:`CODES_AT_ONCE`."""
    step = max(1, CODES_AT_ONCE // max(1, layout.n_features))
    return [slice(i, i + step) for i in range(0, n_runs, step)]


def _cell_counts(layout: Layout, acts: NDArray[np.integer[Any]], local: NDArray[np.int64],
                 n_groups: int) -> NDArray[np.int64]:  # fmt: skip
    """``(G, C)``: the cell counts of each group ``local[r]`` of the runs ``acts``."""
    total = np.zeros((n_groups, layout.block.size), dtype=np.int64)
    for sl in _slices(acts.shape[0], layout):
        used, inv = np.unique(local[sl], return_inverse=True)
        total[used] += layout.group_counts(feature_codes(acts[sl], layout.n_arms), inv,
                                           used.size)  # fmt: skip
    return total


def _base_pilot(runner: Runner, layout: Layout, table: NDArray[np.float64], n: int
                ) -> tuple[NDArray[np.int64], NDArray[np.integer[Any]]]:  # fmt: skip
    """Cell counts over ``n`` pilot runs on the base table, and the first batch's actions (for
    the grid's behaviour changes)."""
    total, first = None, None
    for _, acts in runner.batches(table[None], [n]):
        first = acts if first is None else first
        c = _cell_counts(layout, acts, np.zeros(acts.shape[0], dtype=np.int64), 1)[0]
        total = c if total is None else total + c
    assert total is not None and first is not None
    return total, first


def _candidate(spec: str, step: int, tier: str, events: list[Event], keep: int
               ) -> Candidate | None:  # fmt: skip
    """The neighbour's ``keep`` best pilot events, the best of each family first."""
    if not events:
        return None
    events = sorted(events, key=lambda e: -e.score)
    chosen: list[Event] = []
    for e in events:
        if all(c.family != e.family for c in chosen):
            chosen.append(e)
    chosen = chosen[:keep]
    chosen += [e for e in events if e not in chosen][: keep - len(chosen)]
    return Candidate(spec, step, tier, chosen)


def pilot(runner: Runner, spec: str, table: NDArray[np.float64], lo: float, hi: float,
          plan: SearchPlan, steps: Sequence[int] | None,
          delta: float = 0.0) -> tuple[list[Candidate], int]:
    """Every neighbour of one table scored on pilot runs (module docstring, steps 2-3): those
    with an event of positive pilot bound (of ``log((P - delta) / P')``), and the number
    scored; with ``steps`` given, those steps only, each with the grid's runs."""  # fmt: skip
    horizon, n_arms = table.shape
    layout = Layout(horizon, n_arms)
    base, first = _base_pilot(runner, layout, table, plan.pilot_base)
    if steps is not None:
        grid, screen = sorted(steps), []
    else:
        grid = _grid(horizon, n_arms, plan.grid_steps, _behaviour_changes(first, n_arms, 4))
        screen = [] if plan.screen_runs == 0 else sorted(set(range(horizon - 1)) - set(grid))
    plan_steps = [(s, "grid", plan.grid_runs) for s in grid]
    plan_steps += [(s, "screen", plan.screen_runs) for s in screen]
    tables = np.stack([neighbour_table(table, s, lo, hi) for s, _, _ in plan_steps])
    sizes = np.array([n for _, _, n in plan_steps])
    # per neighbour whose runs began in an earlier slice, its cell counts so far
    partial: dict[int, NDArray[np.int64]] = {}
    done = np.zeros(len(sizes), dtype=np.int64)
    out = []
    for groups_all, acts_all in runner.batches(tables, sizes.tolist()):
        for sl in _slices(acts_all.shape[0], layout):
            used, local = np.unique(groups_all[sl], return_inverse=True)
            counts = layout.group_counts(feature_codes(acts_all[sl], n_arms), local, used.size)
            done[used] += np.bincount(local, minlength=used.size)
            for j, g in enumerate(used.tolist()):
                if g in partial:
                    counts[j] += partial.pop(g)
                if done[g] < sizes[g]:
                    partial[g] = counts[j].copy()
            rows = np.flatnonzero(done[used] == sizes[used])
            if not rows.size:
                continue
            # the runs come group after group: the complete ones are the first rows (a view)
            nb = counts[: rows.size] if rows[-1] == rows.size - 1 else counts[rows]
            complete = used[rows].tolist()
            steps_c = np.array([plan_steps[g][0] for g in complete])
            found = scored_events(layout, base, plan.pilot_base, nb, sizes[complete], steps_c,
                                  PILOT_ALPHA, KEEP, delta)  # fmt: skip
            for g, events in zip(complete, found, strict=True):
                s, tier, _ = plan_steps[g]
                cand = _candidate(spec, s, tier, events, plan.events_per_neighbour)
                if cand is not None:
                    out.append(cand)
    return out, len(plan_steps)


def choose(cands: list[Candidate], n: int) -> list[Candidate]:
    """The ``n`` neighbours to confirm: half the best of the grid, half the best of the screen
    (the rest from the other tier when one has fewer)."""
    ranked = {t: sorted((c for c in cands if c.tier == t), key=lambda c: -c.score)
              for t in ("grid", "screen")}  # fmt: skip
    n_grid = min(len(ranked["grid"]), max(n - len(ranked["screen"]), (n + 1) // 2))
    return ranked["grid"][:n_grid] + ranked["screen"][: n - n_grid]


@dataclass(frozen=True)
class Bound:
    """A candidate event's held-out bound: runs in the event on the base table and on the
    neighbour (of ``n`` each), the bound and the plug-in log-ratio."""

    candidate: Candidate
    event: Event
    count: int
    count_prime: int
    n: int
    lower: float
    estimate: float


def confirm(runner: Runner, chosen: list[Candidate], tables: dict[str, NDArray[np.float64]],
            lo: float, hi: float, n: int, alpha_each: float,
            delta: float = 0.0) -> list[Bound]:  # fmt: skip
    """Every chosen event bounded on ``n`` fresh runs of its base table and of its neighbour
    (a bound of ``log((P - delta) / P')``)."""
    keys = sorted({(c.table, None) for c in chosen} | {(c.table, c.step) for c in chosen},
                  key=lambda k: (k[0], -1 if k[1] is None else k[1]))  # fmt: skip
    stack = np.stack([tables[spec] if s is None else neighbour_table(tables[spec], s, lo, hi)
                      for spec, s in keys])  # fmt: skip
    layout = Layout(stack.shape[1], stack.shape[2])
    counts = {id(e): [0, 0] for c in chosen for e in c.events}
    for groups_all, acts_all in runner.batches(stack, [n] * len(keys)):
        for sl in _slices(acts_all.shape[0], layout):
            groups, bls = groups_all[sl], blocks(acts_all[sl], layout.n_arms)
            for c in chosen:
                base_g, nb_g = keys.index((c.table, None)), keys.index((c.table, c.step))
                for e in c.events:
                    inside = e.member(bls[e.block])
                    counts[id(e)][0] += int(inside[groups == base_g].sum())
                    counts[id(e)][1] += int(inside[groups == nb_g].sum())
    out = []
    for c in chosen:
        for e in c.events:
            k_base, k_nb = counts[id(e)]
            k1, k2 = (k_nb, k_base) if e.swap else (k_base, k_nb)
            lower = float(log_ratio_lower(k1, n, k2, n, alpha_each, delta))
            if k1 and k2:
                est = float(np.log(k1 / k2))
            else:
                est = 0.0 if k1 == k2 else (np.inf if k1 else -np.inf)
            out.append(Bound(c, e, k_base, k_nb, n, max(0.0, lower), est))
    return out
