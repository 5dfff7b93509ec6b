"""Evaluate DP selectors on the synthetic selection scenarios (§VI-a; §VI, App. H).

``evaluate(scenario, selectors, epsilons, n_trials, seed)`` draws the scenario's N trials once
(shared by every selector and eps, so differences between selectors can be tested with paired
statistics), then calls each selector **once per eps on the whole (n_trials, K) batch** -- the
selectors are batch-first -- and reports, per selector and eps, the mean squared error

    MSE = mean over trials of (max_a q_a - q_selected)^2        (§VI-a, on the clipped scores)

with its standard error ``std(squared errors) / sqrt(N)``.

Selectors are given as registered names (``"mgem"``, ``"rs_tnb:eta=0"`` -- ``name:key=value,..``
passes keyword arguments to :func:`dpbandits.selectors.make`), as instances following the
selector protocol (``select``, ``with_epsilon``, ``name``, ``private``), as a mapping
``label -> spec``, or as a list mixing these. Plug-ins registered with
:func:`dpbandits.selectors.register` or through the ``dpbandits.selectors`` entry point are
names like any other.

Randomness: with an int ``seed`` the trials are exactly ``scenario.sample(n_trials, seed)``;
the selector of label ``L`` at the ``i``-th eps draws from
``SeedSequence(seed, spawn_key=(1, crc32(L), i))``, so its results do not depend on which other
selectors are evaluated alongside it.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import scenarios as _scenarios
from dpbandits import selectors
from dpbandits.core import checks
from dpbandits.core.extras import install_hint
from dpbandits.core.files import write_csv
from dpbandits.core.formatting import significant
from dpbandits.scenarios import PAPER_EPSILONS, Scenario, ScenarioData
from dpbandits.selectors.spec import resolve_selector

__all__ = [
    "DEFAULT_SELECTORS",
    "Evaluation",
    "Sweep",
    "evaluate",
    "proportion_sweep",
    "resolve_selectors",
    "check_epsilons",
]

#: The mechanisms of the paper's scenario figures (Figs. 1, 5, 6, 13): random selection, kRR,
#: RNM, RNMH (not DP, reference), RS_gamma, improved RS_gamma (``rs_tnb``, eta = 0 by
#: default), GEM and mGEM.
DEFAULT_SELECTORS: tuple[str, ...] = (
    "uniform",
    "krr",
    "rnm",
    "rnmh",
    "rs",
    "rs_tnb",
    "gem",
    "mgem",
)


# --------------------------------------------------------------------------------------------
# Input normalisation
# --------------------------------------------------------------------------------------------


def check_epsilons(epsilons: ArrayLike | float | None) -> NDArray[np.float64]:
    """Validate an eps grid: a non-empty 1-d array of finite values > 0 (``None``: the paper's)."""
    if epsilons is None:
        return PAPER_EPSILONS.copy()
    try:  # the input policy: True and "1" are not numbers
        eps = np.atleast_1d(checks.real_array(epsilons, "epsilons", finite=False))
    except TypeError:
        raise TypeError(f"epsilons must be real numbers, got {epsilons!r}") from None
    if eps.ndim != 1:
        raise ValueError(f"epsilons must be a 1-d grid, got shape {eps.shape}")
    if eps.size == 0:
        raise ValueError("epsilons must not be empty")
    bad = ~(np.isfinite(eps) & (eps > 0))
    if bad.any():
        raise ValueError(f"epsilons must be finite and > 0, got {eps[bad][0]!r}")
    return eps


def resolve_selectors(
    selectors: str | Any | Sequence[Any] | Mapping[str, Any] | None,
) -> list[tuple[str, Any]]:
    """Turn the ``selectors`` argument of :func:`evaluate` into ``[(label, selector), ...]``.

    Labels are the names the user gave (the spec string for a name, ``sel.name`` for an
    instance); duplicates get a ``#2``, ``#3`` suffix so that no result is overwritten.
    """
    if selectors is None:
        selectors = DEFAULT_SELECTORS
    items: list[tuple[str | None, Any]]
    if isinstance(selectors, Mapping):
        items = [(str(k), v) for k, v in selectors.items()]
    elif isinstance(selectors, str) or callable(getattr(selectors, "select", None)):
        items = [(None, selectors)]
    elif isinstance(selectors, Iterable):
        items = [(None, s) for s in selectors]
    else:
        items = [(None, selectors)]
    if not items:
        raise ValueError("selectors must not be empty")
    out: list[tuple[str, Any]] = []
    seen: dict[str, int] = {}
    for label, spec in items:
        sel = resolve_selector(spec)
        if not callable(getattr(sel, "select", None)):
            raise TypeError(f"selector {spec!r} has no select(q, d, rng) method")
        if not callable(getattr(sel, "with_epsilon", None)):
            raise TypeError(
                f"selector {spec!r} has no with_epsilon(eps) method, needed to sweep eps"
            )
        if label is None:
            label = spec.strip() if isinstance(spec, str) else str(getattr(sel, "name", spec))
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        out.append((label, sel))
    return out


def _root_entropy(seed: Any) -> tuple[Any, np.random.SeedSequence]:
    """Return ``(seed for scenario.sample, SeedSequence root)`` from int | SeedSequence | ..."""
    if isinstance(seed, np.random.Generator):
        # Derive a fixed integer seed, so data and selector streams are reproducible from it.
        seed = int(seed.integers(2**63))
    if isinstance(seed, np.random.SeedSequence):
        return seed, seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"seed must be an int, a SeedSequence, a Generator or None, got {seed!r}")
    if seed is not None and seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    root = np.random.SeedSequence(seed)
    return root, root


def _stream(root: np.random.SeedSequence, label: str, i: int) -> np.random.Generator:
    key = (*root.spawn_key, 1, zlib.crc32(label.encode()), i)
    return np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=key))


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass
class Evaluation:
    """MSE of each selector against eps on one scenario (one panel of Figs. 1, 5, 6, 7).

    Attributes
    ----------
    scenario, title:
        Scenario name (``"1"``, ``"corr:t=0.3"``, ...) and description.
    epsilons:
        ``(E,)`` the eps grid.
    mse, se:
        ``label -> (E,)`` mean squared error and its standard error.
    n_trials, n_candidates, seed:
        Size of the run and the seed it came from.
    spearman, weighted_correlation:
        Mean over trials of the per-trial Spearman correlation (:func:`selectors.spearman`) and
        weighted correlation (App. I eq. (17)) between scores and sensitivities -- what a
        selector sees in one trial.
    spearman_of_means, weighted_of_means:
        The same correlations between each candidate's mean clipped score and its sensitivity
        (the top-row view of the paper's figures). NaN when the mean scores are all equal.
    positive_fraction:
        Fraction of trials whose Spearman correlation is >= 0 (the bit combined GEM reports).
    private:
        ``label -> bool``: whether the selector claims differential privacy.
    timings:
        ``label -> seconds`` spent in the selector's ``select`` over the whole eps grid.
    candidates:
        ``dict`` with ``centers``, ``lower``, ``upper``, ``sensitivities``, ``mean_scores``
        (each ``(K,)``) for the top-row plot.
    sq_errors:
        ``label -> (E, n_trials)`` squared errors per trial (when ``keep_errors``), used for
        paired comparisons (:meth:`difference`).
    """

    scenario: str
    title: str
    epsilons: NDArray[np.float64]
    mse: dict[str, NDArray[np.float64]]
    se: dict[str, NDArray[np.float64]]
    n_trials: int
    n_candidates: int
    seed: Any
    spearman: float
    weighted_correlation: float
    spearman_of_means: float
    weighted_of_means: float
    positive_fraction: float
    private: dict[str, bool] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    candidates: dict[str, NDArray[np.float64]] = field(default_factory=dict, repr=False)
    sq_errors: dict[str, NDArray[np.float64]] | None = field(default=None, repr=False)

    @property
    def labels(self) -> list[str]:
        return list(self.mse)

    def difference(self, a: str, b: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Paired difference ``MSE_a - MSE_b`` per eps and its standard error.

        Trials are shared between selectors, so the standard error is that of the per-trial
        differences of squared errors (smaller than the unpaired one when the scenario's own
        randomness dominates). Needs ``keep_errors=True``.
        """
        if self.sq_errors is None:
            raise ValueError("difference needs the per-trial errors: evaluate(keep_errors=True)")
        for lab in (a, b):
            if lab not in self.sq_errors:
                raise ValueError(f"unknown selector label {lab!r}; have {self.labels}")
        diff = self.sq_errors[a] - self.sq_errors[b]
        n = diff.shape[1]
        se = diff.std(axis=1, ddof=1) / math.sqrt(n) if n > 1 else np.full(diff.shape[0], np.inf)
        return diff.mean(axis=1), se

    def z(self, a: str, b: str) -> NDArray[np.float64]:
        """``(MSE_a - MSE_b) / se`` per eps (paired); +inf/-inf when se is 0 and they differ."""
        diff, se = self.difference(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.sign(diff) * np.inf)
        return np.where((se == 0) & (diff == 0), 0.0, z)

    def records(self) -> list[dict[str, Any]]:
        """Tidy rows: one per (selector, eps)."""
        rows = []
        for lab in self.mse:
            for i, eps in enumerate(self.epsilons):
                rows.append(
                    {
                        "scenario": self.scenario,
                        "selector": lab,
                        "private": self.private.get(lab),
                        "epsilon": float(eps),
                        "mse": float(self.mse[lab][i]),
                        "se": float(self.se[lab][i]),
                        "n_trials": self.n_trials,
                    }
                )
        return rows

    def to_frame(self) -> Any:
        """A tidy :class:`pandas.DataFrame` (columns scenario, selector, private, epsilon, mse,
        se, n_trials). Needs pandas (:func:`dpbandits.core.extras.install_hint` says how to get
        it: ``pip install ".[pandas]"`` in a clone of the repository)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            hint = install_hint("pandas")
            raise ImportError(f"Evaluation.to_frame needs pandas: {hint}") from exc
        return pd.DataFrame.from_records(self.records())

    def to_csv(self, path: str) -> None:
        """Write :meth:`records` as CSV (no pandas needed), atomically."""
        write_csv(path, self.records())

    def to_markdown(self, digits: int = 3) -> str:
        """A markdown table: one row per eps, one column per selector, ``MSE ± se``."""
        labels = self.labels
        head = "| eps | " + " | ".join(
            lab + ("" if self.private.get(lab, True) else " (not DP)") for lab in labels
        )
        lines = [
            f"**{self.title}** — {self.n_trials} trials, {self.n_candidates} candidates; "
            f"Spearman {self.spearman:+.3f} (of means {self.spearman_of_means:+.3f}), "
            f"weighted {self.weighted_correlation:+.3f}",
            "",
            head + " |",
            "|" + "---|" * (len(labels) + 1),
        ]
        for i, eps in enumerate(self.epsilons):
            best = min(labels, key=lambda lab: self.mse[lab][i])
            cells = []
            for lab in labels:
                txt = f"{significant(self.mse[lab][i], digits)} ± {significant(self.se[lab][i], 1)}"
                cells.append(f"**{txt}**" if lab == best else txt)
            lines.append(f"| {eps:.3g} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The evaluation
# --------------------------------------------------------------------------------------------


def _correlations(
    q: NDArray[np.float64], d: NDArray[np.float64], constant_rows: bool
) -> tuple[float, float, float, float, float]:
    rows = q[:1] if constant_rows else q
    dd = np.broadcast_to(d, rows.shape)
    sp = np.asarray(selectors.spearman(rows, dd), dtype=np.float64).reshape(-1)
    wc = np.asarray(selectors.weighted_correlation(rows, dd), dtype=np.float64).reshape(-1)
    means = q.mean(axis=0)
    if np.ptp(means) > 0:
        sp_m = float(np.asarray(selectors.spearman(means, d)))
        wc_m = float(np.asarray(selectors.weighted_correlation(means, d)))
    else:
        sp_m = wc_m = float("nan")
    # A constant-score trial has an undefined correlation; combined GEM counts it as >= 0.
    pos = float(np.mean(np.nan_to_num(sp, nan=0.0) >= 0))
    return _nanmean(sp), _nanmean(wc), sp_m, wc_m, pos


def _nanmean(x: NDArray[np.float64]) -> float:
    """Mean over the trials where the correlation is defined; NaN (no warning) if none is."""
    ok = np.isfinite(x)
    return float(x[ok].mean()) if ok.any() else float("nan")


def _draw_data(
    scenario: int | str | Scenario | ScenarioData, n_trials: int | None, data_seed: Any
) -> tuple[ScenarioData, bool]:
    """The trials of :func:`evaluate`: ``scenario``'s data as given, or ``n_trials`` drawn from
    it; and whether every trial has the same scores (the bimodal scenarios)."""
    if isinstance(scenario, ScenarioData):
        if n_trials is not None and n_trials != scenario.n_trials:
            raise ValueError(
                f"n_trials={n_trials} does not match the {scenario.n_trials} trials of the data"
            )
        return scenario, False
    sc = _scenarios.get(scenario)
    if n_trials is not None:
        n_trials = checks.positive_int(n_trials, "n_trials")
    return sc.sample(n_trials, np.random.default_rng(data_seed)), isinstance(sc, _scenarios.Bimodal)


def _squared_errors(
    label: str,
    base: Any,
    q: NDArray[np.float64],
    d: NDArray[np.float64],
    eps_grid: NDArray[np.float64],
    root: Any,
    chunk: int,
    keep: bool,
    bar: Any,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None, float]:
    """One selector over the eps grid: the MSE of each eps, its standard error, the per-trial
    squared errors ``(E, N)`` when ``keep``, and the seconds spent selecting."""
    n, k = q.shape
    best = q.max(axis=1)
    rows = np.arange(n)
    m = np.empty(eps_grid.size)
    s = np.empty(eps_grid.size)
    errs = np.empty((eps_grid.size, n)) if keep else None
    elapsed = 0.0
    for i, eps in enumerate(eps_grid):
        sel = base.with_epsilon(float(eps))
        rng = _stream(root, label, i)
        t0 = time.perf_counter()
        parts = [sel.select(q[j : j + chunk], d, rng) for j in range(0, n, chunk)]
        elapsed += time.perf_counter() - t0
        idx = np.concatenate([np.asarray(p).reshape(-1) for p in parts])
        if idx.shape != (n,) or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(
                f"selector {label!r} returned {idx.dtype} indices of shape {idx.shape}, "
                f"expected integers of shape ({n},)"
            )
        if idx.size and (idx.min() < 0 or idx.max() >= k):
            raise ValueError(f"selector {label!r} returned an index outside [0, {k})")
        sq = np.square(best - q[rows, idx])
        m[i] = sq.mean()
        s[i] = sq.std(ddof=1) / math.sqrt(n) if n > 1 else float("inf")
        if errs is not None:
            errs[i] = sq
        if bar is not None:
            bar.update(1)
    return m, s, errs, elapsed


def evaluate(
    scenario: int | str | Scenario | ScenarioData,
    selectors: Any = None,
    epsilons: ArrayLike | None = None,
    n_trials: int | None = None,
    seed: int | np.random.SeedSequence | np.random.Generator | None = 0,
    *,
    keep_errors: bool = True,
    batch_size: int | None = None,
    progress: bool = False,
) -> Evaluation:
    """Run ``selectors`` on ``scenario`` over the eps grid; see the module docstring.

    Parameters
    ----------
    scenario:
        A paper scenario number 1-8, a name understood by :func:`dpbandits.scenarios.get`
        (``"corr:t=0.3"``, ``"2:p=0.1"``, ...), a :class:`~dpbandits.scenarios.Scenario`, or
        already drawn :class:`~dpbandits.scenarios.ScenarioData` (then ``n_trials`` must be
        ``None`` or equal to its number of trials).
    selectors:
        Names, instances, plug-ins, a mapping ``label -> spec`` (default
        :data:`DEFAULT_SELECTORS`).
    epsilons:
        The eps grid (default: the paper's 12 values from 0.01 to 16).
    n_trials:
        Number of trials N (default: the scenario's, 10_000 or 5_000 for scenarios 7-8).
    seed:
        Seed of the trials and of the selectors' noise.
    keep_errors:
        Keep the per-trial squared errors for paired comparisons (``8 * E * N`` bytes per
        selector).
    batch_size:
        Call ``select`` on chunks of this many trials (bounds the memory of selectors whose
        work is ``O(K^2)`` per trial, such as GEM); ``None`` = one call on the whole batch.
    progress:
        Show a tqdm progress bar over (selector, eps).
    """
    eps_grid = check_epsilons(epsilons)
    if batch_size is not None and (
        isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
    ):
        raise TypeError(f"batch_size must be an int or None, got {batch_size!r}")
    if batch_size is not None and batch_size <= 0:
        raise ValueError(f"batch_size must be > 0, got {batch_size}")
    keep_errors = checks.flag(keep_errors, "keep_errors")
    checks.flag(progress, "progress")
    data_seed, root = _root_entropy(seed)
    resolved = resolve_selectors(selectors)  # before sampling: a bad name fails at once
    data, constant = _draw_data(scenario, n_trials, data_seed)
    q = np.ascontiguousarray(data.scores, dtype=np.float64)
    d = np.asarray(data.sensitivities, dtype=np.float64)
    n, k = q.shape
    chunk = n if batch_size is None else int(batch_size)

    mse: dict[str, NDArray[np.float64]] = {}
    se: dict[str, NDArray[np.float64]] = {}
    private: dict[str, bool] = {}
    timings: dict[str, float] = {}
    kept: dict[str, NDArray[np.float64]] | None = {} if keep_errors else None

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(resolved) * eps_grid.size, desc=f"scenario {data.name}")
    for label, base in resolved:
        mse[label], se[label], errs, timings[label] = _squared_errors(
            label, base, q, d, eps_grid, root, chunk, kept is not None, bar
        )
        private[label] = bool(getattr(base, "private", True))
        if kept is not None and errs is not None:
            kept[label] = errs
    if bar is not None:
        bar.close()

    sp, wc, sp_m, wc_m, pos = _correlations(q, d, constant)
    candidates = {**data.candidate_arrays(), "mean_scores": q.mean(axis=0)}
    if data.groups is not None:
        for g in np.unique(data.groups):
            candidates[f"group{int(g)}_mean"] = q[data.groups == g].mean(axis=0)
    return Evaluation(
        scenario=data.name,
        title=data.title,
        epsilons=eps_grid,
        mse=mse,
        se=se,
        n_trials=n,
        n_candidates=k,
        seed=seed if not isinstance(seed, np.random.Generator) else data_seed,
        spearman=sp,
        weighted_correlation=wc,
        spearman_of_means=sp_m,
        weighted_of_means=wc_m,
        positive_fraction=pos,
        private=private,
        timings=timings,
        candidates=candidates,
        sq_errors=kept,
    )


# --------------------------------------------------------------------------------------------
# Sweeps over a scenario parameter at one eps (App. E, Fig. 13)
# --------------------------------------------------------------------------------------------


@dataclass
class Sweep:
    """MSE against a scenario parameter ``x`` at a fixed eps (Fig. 13)."""

    title: str
    parameter: str
    x: NDArray[np.float64]
    epsilon: float
    mse: dict[str, NDArray[np.float64]]
    se: dict[str, NDArray[np.float64]]
    n_trials: int
    private: dict[str, bool] = field(default_factory=dict)

    def records(self) -> list[dict[str, Any]]:
        return [
            {
                "sweep": self.title,
                self.parameter: float(x),
                "selector": lab,
                "epsilon": self.epsilon,
                "mse": float(self.mse[lab][i]),
                "se": float(self.se[lab][i]),
                "n_trials": self.n_trials,
            }
            for lab in self.mse
            for i, x in enumerate(self.x)
        ]

    def to_markdown(self, digits: int = 3) -> str:
        labels = list(self.mse)
        lines = [
            f"**{self.title}** — eps = {self.epsilon:g}, {self.n_trials} trials",
            "",
            f"| {self.parameter} | " + " | ".join(labels) + " |",
            "|" + "---|" * (len(labels) + 1),
        ]
        for i, x in enumerate(self.x):
            cells = [
                f"{significant(self.mse[lab][i], digits)} ± {significant(self.se[lab][i], 1)}"
                for lab in labels
            ]
            lines.append(f"| {x:g} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def proportion_sweep(
    kind: int | str = 1,
    proportions: Sequence[float] | None = None,
    selectors: Any = None,
    epsilon: float = 2.0,
    n_trials: int = 10_000,
    seed: int = 0,
) -> Sweep:
    """Bimodal scenario ``kind`` (1, 2, 3 or positive/negative/none) with a varying fraction of
    high scores, at one eps (App. E, Fig. 13: eps = 2)."""
    kinds = {1: "positive", 2: "negative", 3: "none"}
    if isinstance(kind, (int, np.integer)) and not isinstance(kind, bool):
        if int(kind) not in kinds:
            raise ValueError(f"kind must be 1, 2 or 3, got {kind}")
        kind_name = kinds[int(kind)]
    elif isinstance(kind, str) and kind in kinds.values():
        kind_name = kind
    else:
        raise ValueError(f"kind must be 1, 2, 3, 'positive', 'negative' or 'none', got {kind!r}")
    props = np.asarray(
        _scenarios.FIG13_PROPORTIONS if proportions is None else proportions, dtype=np.float64
    )
    if props.ndim != 1 or props.size == 0:
        raise ValueError("proportions must be a non-empty 1-d sequence")
    eps = check_epsilons([epsilon])
    resolved = resolve_selectors(selectors)
    mse = {lab: np.empty(props.size) for lab, _ in resolved}
    se = {lab: np.empty(props.size) for lab, _ in resolved}
    private: dict[str, bool] = {}
    for j, p in enumerate(props):
        sc = _scenarios.Bimodal(kind=kind_name, proportion=float(p))  # type: ignore[arg-type]
        # One seed per proportion (spawn key j), the same for every selector.
        ev = evaluate(
            sc,
            dict(resolved),
            eps,
            n_trials,
            np.random.SeedSequence(seed, spawn_key=(2, j)),
            keep_errors=False,
        )
        for lab in ev.mse:
            mse[lab][j] = ev.mse[lab][0]
            se[lab][j] = ev.se[lab][0]
        private.update(ev.private)
    num = {v: k for k, v in kinds.items()}[kind_name]
    return Sweep(
        title=f"Scenario {num} ({kind_name} correlation): proportion of high scores",
        parameter="proportion",
        x=props,
        epsilon=float(eps[0]),
        mse=mse,
        se=se,
        n_trials=int(n_trials),
        private=private,
    )
