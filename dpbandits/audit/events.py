"""The events the agent audit bounds: families of integer features of an action sequence, their
histograms, and the search for the event of largest privacy loss (docs/selectors.md,
"Auditing an agent").

A run's actions ``a[0..T-1]`` are mapped to integer *features*, grouped in blocks of one
family and one value range, none depending on which step was changed (so the base table's
histograms are computed once for all its neighbours):

- ``actions``: the action at every step (nominal, ``K`` values);
- ``counts``: the pulls of every arm in windows of length ``h = 2, 4, 8, ...`` tiling the
  horizon, twice (aligned and shifted by ``h / 2``), and in the last ``h`` steps (ordinal);
- ``switches``: the number of arm switches ``a[t] != a[t-1]`` in the same windows (ordinal);
- ``timing``: the step of the ``j``-th switch, ``j = 1, 2, ...`` (run lengths, episode
  timing; ordinal, ``T`` when there is none);
- ``last``: the pattern of the last few actions (nominal);
- ``pulls``: the action right after the ``n``-th pull of arm ``a``, for every arm and ``n``
  (nominal, ``K`` when there is none): the runs aligned on the agent's own pull counts, not on
  the clock. On a table where arm ``a`` always pays the top of the range its raw reward sum is
  its pull count, so a leak triggered when a raw sum crosses a threshold shows at one feature
  of this family, whichever step each run crosses it at.

An *event* is one feature's value (``== v``, ``!= v``) for a nominal feature, or a threshold
(``<= v``, ``> v``) for an ordinal one, in one direction: a lower bound on
``log(P[E | x] / P[E | x'])`` (``P/P'``) or on the reverse (``P'/P``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

__all__ = [
    "FAMILIES",
    "Block",
    "Event",
    "Layout",
    "blocks",
    "feature_codes",
    "log_ratio_lower",
    "scored_events",
]

#: The event families, in the order they are reported.
FAMILIES = ("actions", "counts", "switches", "timing", "last", "pulls")
#: Switch times recorded (family ``timing``).
SWITCHES = 32
#: At most this many values for the pattern of the last actions (family ``last``).
PATTERN_VALUES = 256


@dataclass(frozen=True)
class Block:
    """Features of one family and one value range: ``codes`` ``(n, F)`` in ``[0, size)``;
    feature ``f`` reads the actions of steps ``first[f] .. last[f]`` (a feature that reads no
    step after the changed one has the same law on both tables)."""

    family: str
    names: tuple[str, ...]
    codes: NDArray[np.int64]
    size: int
    ordinal: bool
    last: NDArray[np.int64]


def _windows(horizon: int) -> Iterator[tuple[int, int]]:
    """``(start, length)`` of the windows of every length ``h = 2, 4, ...`` (up to the first
    ``>= horizon``): aligned at multiples of ``h``, shifted by ``h / 2``, and the last ``h``
    steps; each window clipped to the horizon and listed once."""
    seen: set[tuple[int, int]] = set()
    h = 2
    while True:
        starts = list(range(0, horizon, h)) + list(range(h // 2, horizon, h)) + [horizon - h]
        for s in starts:
            s = max(s, 0)
            w = (s, min(h, horizon - s))
            if w[1] >= 2 and w not in seen:
                seen.add(w)
                yield w
        if h >= horizon:
            return
        h *= 2


def _frozen(a: NDArray[Any]) -> NDArray[Any]:
    a.setflags(write=False)
    return a


@functools.lru_cache(maxsize=16)
def _count_layout(horizon: int, n_arms: int) -> tuple[Any, ...]:
    """Per window length ``h``: the windows' starts and ends, and the features' names and last
    steps of families ``counts`` and ``switches``. The same for every batch of runs of one
    horizon (cached: a search computes the features of thousands of batches, and naming them
    cost as much as counting)."""
    by_len: dict[int, list[int]] = {}
    for s, h in _windows(horizon):
        by_len.setdefault(h, []).append(s)
    out = []
    for h, wins in sorted(by_len.items()):
        starts = _frozen(np.array(wins))
        ends = _frozen(starts + h)
        names = tuple(f"N{a}[{s}..{s + h - 1}]" for a in range(n_arms) for s in starts)
        lasts = _frozen(np.concatenate([ends - 1] * n_arms))
        names_sw = tuple(f"switches[{s}..{s + h - 1}]" for s in starts)
        out.append((h, starts, ends, names, lasts, names_sw, _frozen(ends - 1)))
    return tuple(out)


@functools.lru_cache(maxsize=16)
def _names(horizon: int, n_arms: int) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The names of families ``actions``, ``timing`` and ``pulls`` (cached, as above)."""
    j_max = min(SWITCHES, horizon - 1)
    return (tuple(f"a[{t}]" for t in range(horizon)),
            tuple(f"switch #{j + 1} at step" for j in range(j_max)),
            tuple(f"a after pull #{j + 1} of arm {a}" for a in range(n_arms)
                  for j in range(horizon)))  # fmt: skip


@functools.lru_cache(maxsize=16)
def _feature_plan(horizon: int, n_arms: int) -> tuple[Any, ...]:
    """The blocks of :func:`blocks`, in order, as ``(family, names, size, ordinal, last)``
    (their features side by side are the columns of :func:`feature_codes`); the running-sum
    columns (:func:`feature_codes`) whose differences are families ``counts`` and
    ``switches``; the switch times and the last actions recorded (cached, as above)."""
    width = horizon + 1  # a running sum: its value before each step, and after the last
    names_actions, names_timing, names_pulls = _names(horizon, n_arms)
    specs: list[tuple[Any, ...]] = [("actions", names_actions, n_arms, False,
                                     np.arange(horizon))]  # fmt: skip
    ends_at, starts_at = [], []
    for h, starts, ends, names, lasts, names_sw, last_sw in _count_layout(horizon, n_arms):
        specs.append(("counts", names, h + 1, True, lasts))
        ends_at += [a * width + ends for a in range(n_arms)]
        starts_at += [a * width + starts for a in range(n_arms)]
        # switches inside the window: between its steps, not into its first one
        specs.append(("switches", names_sw, h, True, last_sw))
        ends_at.append(n_arms * width + ends)
        starts_at.append(n_arms * width + starts + 1)
    j_max = min(SWITCHES, horizon - 1)
    specs.append(("timing", names_timing, horizon + 1, True, np.full(j_max, horizon - 1)))
    m = 1
    while m < horizon and n_arms ** (m + 1) <= PATTERN_VALUES:
        m += 1
    specs.append(("last", (f"a[{horizon - m}..{horizon - 1}]",), n_arms**m, False,
                  np.array([horizon - 1])))  # fmt: skip
    # pulls: it may read any step, so every feature counts for every changed step
    specs.append(("pulls", names_pulls, n_arms + 1, False, np.full(n_arms * horizon,
                                                                   horizon - 1)))  # fmt: skip
    return (tuple(specs), _frozen(np.concatenate(ends_at)), _frozen(np.concatenate(starts_at)),
            j_max, m)  # fmt: skip


def feature_codes(acts: NDArray[np.integer[Any]], n_arms: int) -> NDArray[np.int64]:
    """``(n, F)``: every feature of the runs ``acts`` ``(n, T)``, the blocks of :func:`blocks`
    side by side (one matrix: the search counts them into cells at once)."""
    n, horizon = acts.shape
    specs, ends_at, starts_at, j_max, m = _feature_plan(horizon, n_arms)
    codes = np.empty((n, sum(len(spec[1]) for spec in specs)), dtype=np.int64)
    codes[:, :horizon] = acts
    at = horizon
    # running sums, before each step: every arm's pulls, then the switches a[t] != a[t - 1]
    width = horizon + 1
    cum = np.zeros((n, (n_arms + 1) * width), dtype=np.int32)
    for a in range(n_arms):
        np.cumsum(acts == a, axis=1, out=cum[:, a * width + 1 : (a + 1) * width])
    switched = acts[:, 1:] != acts[:, :-1]
    order = cum[:, n_arms * width + 2 :]  # the switches up to each step (from step 1)
    np.cumsum(switched, axis=1, out=order)
    np.subtract(cum.take(ends_at, axis=1), cum.take(starts_at, axis=1),
                out=codes[:, at : at + ends_at.size])  # fmt: skip
    at += ends_at.size
    # timing: the step of the j-th switch (horizon: none)
    times = codes[:, at : at + j_max]
    times[...] = horizon
    rows, cols = np.nonzero(switched & (order <= j_max))
    times[rows, order[rows, cols] - 1] = cols + 1
    at += j_max
    code = np.zeros(n, dtype=np.int64)
    for t in range(horizon - m, horizon):
        code = code * n_arms + acts[:, t]
    codes[:, at] = code
    at += 1
    # pulls: feature a * T + k - 1 is the action right after arm a's k-th pull (K: none, or
    # that pull was the last step); the pull at step t is its arm's number (pulls before t) + 1
    codes[:, at:] = n_arms
    arm = acts[:, :-1].astype(np.intp)
    before = np.take_along_axis(cum.reshape(n, n_arms + 1, width)[:, :, : horizon - 1],
                                arm[:, None, :], axis=1)[:, 0]  # fmt: skip
    codes.ravel()[(np.arange(n) * codes.shape[1] + at)[:, None] + arm * horizon + before] = (
        acts[:, 1:])  # fmt: skip
    return codes


def blocks(acts: NDArray[np.integer[Any]], n_arms: int) -> list[Block]:
    """Every feature block of the runs ``acts`` ``(n, T)`` (module docstring)."""
    codes = feature_codes(acts, n_arms)
    out, at = [], 0
    for family, names, size, ordinal, last in _feature_plan(acts.shape[1], n_arms)[0]:
        out.append(Block(family, names, codes[:, at : at + len(names)], size, ordinal, last))
        at += len(names)
    return out


@dataclass(frozen=True)
class Event:
    """One event of one block's feature: ``value`` and ``complement`` say which set of values
    (``== value`` / ``!= value`` for a nominal feature, ``<= value`` / ``> value`` for an
    ordinal one); ``swap``: the bound is on ``log(P' / P)``; ``score`` its pilot bound."""

    family: str
    feature: str
    index: int
    block: int
    value: int
    complement: bool
    ordinal: bool
    swap: bool
    score: float

    def member(self, bl: Block) -> NDArray[np.bool_]:
        """Whether each run of the block's runs is in the event."""
        c = bl.codes[:, self.index]
        inside = c <= self.value if self.ordinal else c == self.value
        return ~inside if self.complement else inside

    def describe(self, n_arms: int = 2) -> str:
        op = (">" if self.complement else "<=") if self.ordinal else (
            "!=" if self.complement else "==")  # fmt: skip
        value = str(self.value)
        if self.family == "last":  # the pattern's digits, base K, the first step first
            first, last = self.feature[2:-1].split("..")
            digits, v = [], self.value
            for _ in range(int(last) - int(first) + 1):
                v, d = divmod(v, n_arms)
                digits.append(str(d))
            value = ("" if n_arms <= 10 else ",").join(reversed(digits))
        return f"{self.feature} {op} {value}"


def log_ratio_lower(k: Any, n: Any, k_prime: Any, n_prime: Any, alpha: float,
                    delta: float = 0.0) -> Any:  # fmt: skip
    """Lower bound on ``log((P - delta) / P')`` from ``k`` of ``n`` and ``k'`` of ``n'``
    draws: the one-sided Clopper-Pearson lower bound on ``P``, less ``delta``, over the upper
    bound on ``P'``, each at level ``alpha`` (``-inf`` when ``k = 0`` or ``P`` may be below
    ``delta``). An (eps, delta)-DP agent has ``P <= e^eps P' + delta`` on every event, so this
    bounds its eps from below; ``delta = 0`` is pure DP. Vectorised; real counts allowed. The
    bounds are the Beta quantiles of :func:`dpbandits.audit.selector.clopper_pearson`
    (``betaincinv``: the same numbers without ``scipy.stats``' per-call checks)."""
    k, n = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    kp, np_ = np.asarray(k_prime, dtype=np.float64), np.asarray(n_prime, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(k > 0, special.betaincinv(np.maximum(k, 1e-9), n - k + 1, alpha), 0.0)
        upper = np.where(kp < np_, special.betaincinv(kp + 1, np.maximum(np_ - kp, 1e-9),
                                                      1 - alpha), 1.0)  # fmt: skip
        return np.log(np.maximum(lower - delta, 0.0)) - np.log(upper)


class Layout:
    """Every event of every block as one flat vector of *cells*, the families contiguous:
    cell ``c`` is value ``value[c]`` of feature ``feature[c]`` of block ``block[c]``; its count
    is the runs with ``== value`` (nominal) or ``<= value`` (ordinal)."""

    def __init__(self, horizon: int, n_arms: int) -> None:
        self.n_arms = n_arms
        self.skeleton = blocks(np.zeros((1, horizon), dtype=np.int8), n_arms)
        self.order = sorted(range(len(self.skeleton)),
                            key=lambda i: FAMILIES.index(self.skeleton[i].family))  # fmt: skip
        parts: list[list[NDArray[np.int64]]] = [[], [], [], []]
        self.ranges: dict[str, tuple[int, int]] = {}
        #: per block (in the order of ``skeleton``), its first cell
        self.offset = np.zeros(len(self.skeleton), dtype=np.int64)
        at = 0
        for i in self.order:
            bl = self.skeleton[i]
            n_feat = bl.codes.shape[1]
            f, v = np.divmod(np.arange(n_feat * bl.size), bl.size)
            for part, arr in zip(parts, (np.full(f.size, i), f, v, bl.last[f]), strict=True):
                part.append(arr)
            lo, _ = self.ranges.get(bl.family, (at, at))
            self.offset[i] = at
            at += f.size
            self.ranges[bl.family] = (lo, at)
        self.block, self.feature, self.value, self.last = (np.concatenate(p) for p in parts)
        #: the cells by their last step read, and those steps (the cells of a changed step
        #: that read no step after it are a prefix)
        self.by_last = np.argsort(self.last, kind="stable")
        self.last_sorted = self.last[self.by_last]
        #: features per run (all blocks)
        self.n_features = sum(b.codes.shape[1] for b in self.skeleton)
        #: per feature (the blocks' features side by side, in the order of ``skeleton``), the
        #: cell of its value 0: a run's feature of code ``v`` falls in cell ``first + v``
        self.first = np.concatenate([self.offset[i] + bl.size * np.arange(bl.codes.shape[1])
                                     for i, bl in enumerate(self.skeleton)])  # fmt: skip
        #: the ordinal blocks' cells, as contiguous ranges ``(lo, hi)``, and the first cell
        #: of each of their features but the range's first (:meth:`group_counts`)
        self.ordinal: list[tuple[int, int, NDArray[np.int64]]] = []
        for i in self.order:
            bl = self.skeleton[i]
            if not bl.ordinal:
                continue
            lo = int(self.offset[i])
            hi = lo + bl.codes.shape[1] * bl.size
            firsts = np.arange(lo, hi, bl.size)
            if self.ordinal and self.ordinal[-1][1] == lo:  # the range goes on
                lo0, _, before = self.ordinal.pop()
                self.ordinal.append((lo0, hi, np.concatenate([before, firsts])))
            else:
                self.ordinal.append((lo, hi, firsts[1:]))

    def group_counts(self, codes: NDArray[np.int64], local: NDArray[np.int64], n_groups: int
                     ) -> NDArray[np.int64]:  # fmt: skip
        """``(G, C)``: the cell counts of each group ``local[r]`` of the runs whose features are
        ``codes`` (:func:`feature_codes`; overwritten), counted in one pass into the cells (no
        per-block histograms: at a few runs per group,
        ``G x C`` is much larger than the runs' codes, and each pass over it cost as much as
        the counting)."""
        n_cells = self.block.size
        flat = codes
        flat += self.first
        flat += (local * n_cells)[:, None]
        out = np.bincount(flat.ravel(), minlength=n_groups * n_cells).reshape(n_groups, n_cells)
        # ordinal cells count the runs with ``<= value``: the histogram's running sum along a
        # whole range of features at once (a long axis: summing each feature's few values
        # apart cost more than the counting), less the group's runs at each feature's first
        # cell but the first (every run has one value of each feature)
        runs = np.bincount(local, minlength=n_groups)[:, None]
        for lo, hi, firsts in self.ordinal:
            out[:, firsts] -= runs
            np.cumsum(out[:, lo:hi], axis=1, out=out[:, lo:hi])
        return out

    def event(self, c: int, kind: int, score: float) -> Event:
        """Cell ``c`` as an event: kind 0/1 the cell's set in direction ``P/P'``/``P'/P``, 2/3
        its complement."""
        i, f = int(self.block[c]), int(self.feature[c])
        bl = self.skeleton[i]
        return Event(bl.family, bl.names[f], f, i, int(self.value[c]), kind >= 2, bl.ordinal,
                     kind % 2 == 1, score)  # fmt: skip


def scored_events(
    layout: Layout, base: NDArray[np.int64], n_base: int, nb: NDArray[np.int64],
    n_nb: NDArray[np.int64], steps: NDArray[np.int64], alpha: float, per_family: int,
    delta: float = 0.0,
) -> list[list[Event]]:  # fmt: skip
    """Per neighbour ``g`` (cell counts ``nb[g]`` of ``n_nb[g]`` pilot runs on the neighbour
    changing ``steps[g]``; ``base``: of ``n_base`` runs on the base table), the
    ``per_family`` events of each family of largest pilot bound at level ``alpha`` (only
    positive bounds; only features that read a step after the changed one: the others have
    the same law on both tables; bounds of ``log((P - delta) / P')``,
    :func:`log_ratio_lower`). Cells are screened by their plug-in log-ratio (half a run
    added to each count) before the exact bound; a few neighbours at a time (memory)."""
    out: list[list[Event]] = []
    for start in range(0, nb.shape[0], 16):
        sl = slice(start, start + 16)
        out += _scored(layout, base, n_base, nb[sl], n_nb[sl], steps[sl], alpha, per_family,
                       delta)  # fmt: skip
    return out


def _plugin(p_b: Any, p_n: Any, q_b: Any, q_n: Any, delta: float) -> list[Any]:
    """The plug-in ``log((P - delta) / P')`` of the four events of a cell (kinds 0-3, as in
    :func:`_best_kind`) from the base table's and the neighbour's frequencies of the cell's set
    (``p_b``, ``p_n``) and of its complement (``q_b``, ``q_n``)."""
    if not delta:
        d1, d2 = np.log(p_b) - np.log(p_n), np.log(q_b) - np.log(q_n)
        return [d1, -d1, d2, -d2]
    with np.errstate(divide="ignore"):

        def less(p: Any) -> Any:
            return np.log(np.maximum(p - np.float32(delta), 0))

        return [less(p_b) - np.log(p_n), less(p_n) - np.log(p_b),
                less(q_b) - np.log(q_n), less(q_n) - np.log(q_b)]  # fmt: skip


def _best_kind_direct(base: NDArray[np.int64], n_base: int, nb: NDArray[np.int64],
                      n_nb: NDArray[np.int64], live: Any, delta: float
                      ) -> tuple[NDArray[np.float32], NDArray[np.int8]]:  # fmt: skip
    """:func:`_best_kind` cell by cell: the plug-in log-ratios of the four events of each cell
    (``base`` ``(C,)`` or ``(B, 1)``, ``nb`` ``(G, C)`` or ``(1, N)``), the best that is live
    and has two runs in its set, and its kind (ties: the smaller kind)."""
    n_b = np.float32(n_base)
    kb = base.astype(np.float32)
    n_n = n_nb.astype(np.float32)[:, None]
    kn = nb.astype(np.float32)
    v0, v1, v2, v3 = _plugin((kb + 0.5) / n_b, (kn + 0.5) / n_n, (n_b - kb + 0.5) / n_b,
                             (n_n - kn + 0.5) / n_n, delta)  # fmt: skip
    shape = np.broadcast_shapes(kb.shape, kn.shape)
    best = np.where(live & (kb >= 2), v0, -np.inf).astype(np.float32)
    if best.shape != shape:
        best = np.broadcast_to(best, shape).copy()
    kind = np.zeros(shape, dtype=np.int8)
    for k, (val, ok) in enumerate([(v1, kn >= 2), (v2, n_b - kb >= 2), (v3, n_n - kn >= 2)]):
        better = live & ok & (val > best)
        best[better] = np.broadcast_to(val, shape)[better]
        kind[better] = k + 1
    return best, kind


#: The largest table of :func:`_kind_table` (entries): larger ones (many runs per neighbour,
#: few neighbours) are not worth it, their cells are scored one by one.
KIND_TABLE_MAX = 1 << 19


@functools.lru_cache(maxsize=4)
def _kind_table(n_base: int, n_nb: int, delta: float
                ) -> tuple[NDArray[np.float32], NDArray[np.int8]]:  # fmt: skip
    """The negated best plug-in log-ratio and its kind (:func:`_best_kind`) of a live cell
    counted in ``k`` of the base table's ``n_base`` pilot runs and ``k'`` of the neighbour's
    ``n_nb``, at ``k * (n_nb + 1) + k'``. A cell's score is a function of its two
    counts alone, and a neighbour with a few runs has a few counts: looking them up is a
    fraction of the arithmetic and logarithms of every cell (the same float32 operations on
    the same numbers, so the same bits)."""
    kb = np.arange(n_base + 1)[:, None]
    kn = np.arange(n_nb + 1)[None, :]
    best, kind = _best_kind_direct(kb, n_base, kn, np.array([n_nb]), True, delta)
    return _frozen(-best.ravel()), _frozen(kind.ravel())


def _best_kind(layout: Layout, base: NDArray[np.int64], n_base: int, nb: NDArray[np.int64],
               n_nb: NDArray[np.int64], steps: NDArray[np.int64], delta: float = 0.0
               ) -> tuple[NDArray[np.float32], NDArray[np.int8]]:  # fmt: skip
    """``(G, C)``: the best plug-in log-ratio (of ``(P - delta) / P'``) of each cell over its
    four events (kinds 0/1: the cell's set, direction ``P/P'``/``P'/P``; 2/3: its complement),
    negated (the order :func:`_scored` ranks in), and that kind; ``+inf`` (kind 0) for a cell
    that reads no step after the changed one or has fewer than two runs in each event."""
    neg = np.empty(nb.shape, dtype=np.float32)
    kind = np.empty(nb.shape, dtype=np.int8)
    idx = np.empty(nb.shape[1], dtype=np.int64)
    for n in np.unique(n_nb):
        rows = np.flatnonzero(n_nb == n)
        n = int(n)
        if (n_base + 1) * (n + 1) > KIND_TABLE_MAX:
            live = layout.last[None, :] > steps[rows, None]
            best, kind[rows] = _best_kind_direct(base, n_base, nb[rows], n_nb[rows], live, delta)
            neg[rows] = -best
            continue
        table, kinds = _kind_table(n_base, n, float(delta))
        at_base = base * (n + 1)
        for g in rows:
            np.add(at_base, nb[g], out=idx)
            np.take(table, idx, out=neg[g])
            np.take(kinds, idx, out=kind[g])
            dead = layout.by_last[: np.searchsorted(layout.last_sorted, steps[g], "right")]
            neg[g, dead] = np.inf
            kind[g, dead] = 0
    return neg, kind


def _scored(layout: Layout, base: NDArray[np.int64], n_base: int, nb: NDArray[np.int64],
            n_nb: NDArray[np.int64], steps: NDArray[np.int64], alpha: float, per_family: int,
            delta: float = 0.0) -> list[list[Event]]:  # fmt: skip
    """:func:`scored_events` for a few neighbours."""
    neg, kind = _best_kind(layout, base, n_base, nb, n_nb, steps, delta)
    picks = []
    for lo, hi in layout.ranges.values():
        m = min(per_family * 4, hi - lo)
        picks.append(np.argpartition(neg[:, lo:hi], m - 1, axis=1)[:, :m] + lo)
    cells = np.hstack(picks)  # (G, M)
    g_idx = np.broadcast_to(np.arange(nb.shape[0])[:, None], cells.shape)
    k = kind[g_idx, cells].astype(np.int64)
    kbc = base[cells].astype(np.float64)
    knc = nb[g_idx, cells].astype(np.float64)
    nn = np.broadcast_to(n_nb.astype(np.float64)[:, None], cells.shape)
    nb_ = np.full(cells.shape, float(n_base))
    num = np.choose(k, [kbc, knc, nb_ - kbc, nn - knc])
    den = np.choose(k, [knc, kbc, nn - knc, nb_ - kbc])
    n_num = np.choose(k, [nb_, nn, nb_, nn])
    n_den = np.choose(k, [nn, nb_, nn, nb_])
    ok = neg[g_idx, cells] < 0
    score = np.full(cells.shape, -np.inf)  # the exact bound of the cells screened in only
    score[ok] = log_ratio_lower(num[ok], n_num[ok], den[ok], n_den[ok], alpha, delta)
    out = []
    for g in range(nb.shape[0]):
        events, at = [], 0
        for part in picks:
            m = part.shape[1]
            sc = score[g, at : at + m]
            for j in np.argsort(-sc, kind="stable")[:per_family]:
                if sc[j] > 0:
                    events.append(layout.event(int(cells[g, at + j]), int(k[g, at + j]),
                                               float(sc[j])))  # fmt: skip
            at += m
        out.append(events)
    return out
