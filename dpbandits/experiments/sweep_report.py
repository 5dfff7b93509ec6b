"""What a sweep of a privacy parameter shows, read back from its output folder: the tables and
the figures of docs/private-bandits.md (``dpbandits report DIR``).

- :func:`load_sweep` -- the cells of a ``dpbandits sweep`` output folder (``cells.csv`` and
  each cell's stored :class:`~dpbandits.experiments.results.Results`);
- :func:`comparison` / :func:`comparison_table` -- final regret (mean ± standard error over
  the runs) per agent and eps, with the late-run regret over uniform play's that says whether
  an agent learns or plays at random, uniform play's regret and the strongest eps-global-DP
  lower bound that applies to the arms (:mod:`dpbandits.experiments.bounds`);
- :func:`plot_curves` -- the regret over time of one cell's agents whose whole run is eps-DP
  at the swept value, with the lower bounds at that eps, at most
  :data:`~dpbandits.experiments.sweep_plots.MAX_AGENTS` agents per panel;
- :func:`threshold` / :func:`threshold_table` / :func:`plot_threshold` -- for a two-armed
  sweep over eps_S and the arms: the worse arm's share of the pulls late in the run against
  ``x = gap eps_S / d`` (App. H of the main paper: an App. H agent's noise has scale
  ``d / eps_S``, ``d`` the 0.1--0.9 quantile range of an arm's rewards), and where it first
  falls below the levels :data:`LEVELS`.

The regret of uniform play is that of an agent that pulls each arm with probability 1/K at
every step, from the environment's expected rewards. Functions return
:class:`matplotlib.figure.Figure` objects (Agg canvas, no pyplot).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from scipy.stats import norm

from dpbandits.experiments.arm_laws import laws_of
from dpbandits.experiments.bounds import bound_curves, bound_label
from dpbandits.experiments.results import Results
from dpbandits.experiments.sweep_plots import (
    APP_H,
    INF_EPS,
    REFERENCE,
    agent_families,
    panels,
    privacy_key,
    strongest_bound,
    uniform_regret_curve,
)
from dpbandits.theory import BOUND_LABELS

__all__ = ["LEARNS", "LEVELS", "RANDOM", "Comparison", "SweepCells", "Threshold", "comparison",
           "comparison_table", "describe_arms", "eps_key", "load_sweep", "plot_curves",
           "plot_threshold", "threshold", "threshold_table"]  # fmt: skip

#: Late-run regret over uniform play's below which the agent has learnt (it loses a tenth of
#: what random play loses, or less).
LEARNS = 0.1
#: Late-run regret over uniform play's above which the agent plays (nearly) at random.
RANDOM = 0.8
#: Levels of the worse arm's share of the pulls: 0.45 (no longer uniform play's 1/2) and 0.25
#: (halfway between 1/2 and 0).
LEVELS = (0.45, 0.25)
#: ``q_0.9 - q_0.1`` of N(0, 1): an unclipped Gaussian arm of sd ``s`` has ``d = 2.563 s``.
Q_RANGE = float(norm.ppf(0.9) - norm.ppf(0.1))


@dataclass
class SweepCells:
    """A sweep's output folder read back: the swept ``keys``, each cell's swept values (as
    ``cells.csv`` writes them) and its results, in the order of ``cells.csv``."""

    folder: Path
    keys: list[str]
    params: list[dict[str, str]]
    results: list[Results]


def load_sweep(folder: str | Path) -> SweepCells:
    """The cells of a ``dpbandits sweep`` output folder; a ``ValueError`` naming the folder
    when it is not one, or when a cell failed or has no stored results."""
    folder = Path(folder)
    table = folder / "cells.csv"
    if not table.is_file():
        raise ValueError(f"DIR {str(folder)!r} is not the output folder of a dpbandits sweep "
                         "(no cells.csv in it)")  # fmt: skip
    with open(table, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        columns = list(reader.fieldnames or [])
    if not rows or "cell" not in columns or "seed" not in columns:
        raise ValueError(f"DIR {str(folder)!r}: cells.csv has no cells")
    keys = columns[columns.index("cell") + 1:columns.index("seed")]
    params, results = [], []
    for row in rows:
        path = folder / row.get("result", "")
        if row.get("status") == "failed" or not row.get("result") or not path.is_file():
            raise ValueError(f"DIR {str(folder)!r}: cell {row['cell']} has no results (failed "
                             "or removed); re-run the sweep to compute it")  # fmt: skip
        params.append({k: row[k] for k in keys})
        results.append(Results.load(path))
    return SweepCells(folder, keys, params, results)


def eps_key(cells: SweepCells, key: str | None = None) -> str:
    """The swept privacy parameter: ``key`` (checked), else the one swept key that sets an eps
    with numeric values (a ``ValueError`` naming ``--key`` when there are none or several)."""
    if key is not None:
        if key not in cells.keys:
            raise ValueError(f"--key {key!r} is not a swept key of {str(cells.folder)!r} "
                             f"(swept: {', '.join(cells.keys) or 'none'})")  # fmt: skip
        _eps_values(cells, key)
        return key
    found = [k for k in cells.keys if privacy_key(k) and _numeric(cells, k)]
    if len(found) != 1:
        raise ValueError(f"--key: {str(cells.folder)!r} sweeps {len(found)} privacy "
                         f"parameters ({', '.join(found) or 'none'}); name the one to report "
                         "with --key")  # fmt: skip
    return found[0]


def _numeric(cells: SweepCells, key: str) -> bool:
    try:
        _eps_values(cells, key)
    except ValueError:
        return False
    return True


def _eps_values(cells: SweepCells, key: str) -> list[float]:
    try:
        values = [float(p[key]) for p in cells.params]
    except ValueError:
        raise ValueError(f"--key {key!r}: its values are not numbers") from None
    if not all(v > 0 for v in values):  # NaN too
        raise ValueError(f"--key {key!r}: its values must be > 0 (an eps)")
    return values


def second_half(curve: np.ndarray, steps: np.ndarray) -> float:
    """Regret accumulated over the second half of a run, from a cumulative curve at
    ``steps`` (from the recorded step nearest above ``T / 2``)."""
    half = int(np.searchsorted(steps, steps[-1] // 2))
    return float(curve[-1] - curve[half])


@dataclass
class Comparison:
    """Per agent (``agents``, in table order) and eps (``eps``, ascending): ``final[agent,
    eps] = (mean, SE)`` of the final regret over the runs and ``ratio[agent, eps]``, the
    second half's regret over uniform play's; ``uniform`` uniform play's final regret,
    ``bound[eps]`` the lower bound at T (the strongest eps-global-DP bound ``bound_key`` that
    applies; Lai--Robbins at eps = inf) and ``bound_name`` its row's label, ``results[eps]``
    each cell's results."""

    agents: list[str]
    eps: list[float]
    final: dict[tuple[str, float], tuple[float, float]] = field(default_factory=dict)
    ratio: dict[tuple[str, float], float] = field(default_factory=dict)
    uniform: float = math.nan
    bound_key: str | None = None
    bound: dict[float, float] = field(default_factory=dict)
    bound_name: str = ""
    results: dict[float, Results] = field(default_factory=dict)
    families: dict[str, str] = field(default_factory=dict)


def comparison(cells: SweepCells, key: str | None = None) -> Comparison:
    """The comparison of a sweep over one privacy parameter (``key``, see :func:`eps_key`):
    one cell per eps, the same agents in each. Agents in table order: the non-private
    references, the eps-DP agents of the literature, the App. H agents
    (:func:`~dpbandits.experiments.sweep_plots.agent_families`), each in the config's order."""
    key = eps_key(cells, key)
    others = [k for k in cells.keys if k != key]
    if others:
        raise ValueError(f"DIR {str(cells.folder)!r} also sweeps {', '.join(others)}: a table "
                         f"of one row per agent needs a sweep over {key!r} alone")  # fmt: skip
    eps_values = _eps_values(cells, key)
    first = cells.results[0]
    families = agent_families(_agent_specs(first))
    order = [REFERENCE, *sorted({f for f in families.values()} - {REFERENCE, APP_H}), APP_H]
    agents = [a for fam in order for a in first.labels if families.get(a) == fam]
    agents += [a for a in first.labels if a not in agents]
    out = Comparison(agents, sorted(eps_values), families=families)
    for eps, res in zip(eps_values, cells.results, strict=True):
        uniform = uniform_regret_curve(res)
        if uniform is None:
            raise ValueError(f"DIR {str(cells.folder)!r}: the environment does not give its "
                             "expected rewards (expected_reward_table), so uniform play's "
                             "regret is unknown")  # fmt: skip
        out.uniform = float(uniform[-1])
        for label in res.labels:
            total = res.data[label]["total_regret"]
            se = float(total.std(ddof=1) / math.sqrt(total.size)) if total.size > 1 else math.nan
            out.final[label, eps] = (float(total.mean()), se)
            late = second_half(res.data[label]["regret"].mean(axis=1), res.steps)
            out.ratio[label, eps] = late / second_half(uniform, res.steps)
        out.results[eps] = res
    _add_bounds(out)
    return out


def _agent_specs(res: Results) -> dict[str, dict[str, Any]]:
    """The agents' specs of the cell's config (``kind``, ``epsilon``...; none recorded: every
    agent in one family)."""
    specs = (res.config.get("experiment_config") or {}).get("agents")
    return specs if isinstance(specs, dict) else {label: {} for label in res.labels}


def _add_bounds(out: Comparison) -> None:
    """The bound row: the strongest eps-global-DP bound at T at each finite eps, Lai--Robbins
    at eps = inf (none when the arms' laws are not recorded, e.g. drifting means)."""
    res = out.results[out.eps[0]]
    finite = [e for e in out.eps if e < INF_EPS]
    try:
        curves = bound_curves(res, finite or [1.0])
    except ValueError:
        return
    out.bound_key = strongest_bound({c.key for c in curves})
    if out.bound_key is not None:
        name = BOUND_LABELS[out.bound_key]
        if any(e >= INF_EPS for e in out.eps):  # that column's bound is another one: say so
            name += f" (ε = inf: {BOUND_LABELS['lai_robbins']})"
        out.bound_name = bound_label(name, curves[0].segments)
    for c in curves:
        if c.key == out.bound_key and c.epsilon in finite:
            out.bound[c.epsilon] = float(c.values[-1])
        elif c.key == "lai_robbins":
            for e in out.eps:
                if e >= INF_EPS:
                    out.bound[e] = float(c.values[-1])


def comparison_table(data: Comparison, labels: dict[str, str] | None = None) -> str:
    """The markdown table of :func:`comparison`: final regret ``mean ± SE`` per agent (a row,
    renamed by ``labels``) and eps (a column; eps >= 1e6, how configs write inf, is "inf");
    **bold** where the agent has learnt (ratio < :data:`LEARNS`), † where it plays at random
    (ratio > :data:`RANDOM`); then uniform play's regret and the lower bound."""
    labels = labels or {}
    eps = data.eps
    head = "| agent | " + " | ".join("inf" if e >= INF_EPS else f"{e:g}" for e in eps) + " |"
    lines = [head, "|---" * (len(eps) + 1) + "|"]
    for agent in data.agents:
        row = []
        for e in eps:
            m, se = data.final[agent, e]
            r = data.ratio[agent, e]
            mark = "**" if r < LEARNS else ""
            row.append(f"{mark}{m:,.0f} ± {se:,.0f}{mark}" + (" †" if r > RANDOM else ""))
        lines.append(f"| {labels.get(agent, agent)} | " + " | ".join(row) + " |")
    lines.append(f"| *uniform play* | {data.uniform:,.0f} |" + " |" * (len(eps) - 1))
    if data.bound_key is not None:
        lines.append(f"| *{data.bound_name}* | "
                     + " | ".join(f"{data.bound[e]:,.0f}" if e in data.bound else ""
                                  for e in eps) + " |")  # fmt: skip
    return "\n".join(lines)


_COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
           "tab:pink", "tab:olive", "tab:cyan"]  # fmt: skip  (tab10 without its grey)


def describe_arms(res: Results) -> str:
    """The bandit of ``res`` in words, from its recorded arms' laws: ``2 Bernoulli arms, means
    (0.6, 0.4)``; the environment's id when the laws are not recorded."""
    try:
        laws = laws_of(res)
    except ValueError:
        return str(res.config.get("env", "")).split("/")[-1]
    seg = laws.segments[0]
    arms = f"{seg.means.size} {'Bernoulli' if laws.arm == 'bernoulli' else 'clipped Gaussian'} arms"
    if len(laws.segments) > 1:
        return f"{arms}, {len(laws.segments)} stationary segments"
    means = f"means ({', '.join(f'{m:g}' for m in seg.means)})"
    sds = "" if seg.sds is None else f", sd {'/'.join(f'{v:g}' for v in sorted(set(seg.sds)))}"
    return f"{arms}, {means}{sds}"


def plot_curves(data: Comparison, epsilon: float, key: str = "eps", title: str = "",
                labels: dict[str, str] | None = None) -> Figure:  # fmt: skip
    """Regret over time (mean of the runs, log axis) of the cell at eps = ``epsilon``: the
    non-private references (dashed) and the agents whose whole run is eps-DP at ``epsilon``
    (not the App. H agents, whose swept value is eps_S per action), at most
    :data:`~dpbandits.experiments.sweep_plots.MAX_AGENTS` per panel, with the lower bounds at
    that eps (:func:`~dpbandits.experiments.bounds.bound_curves`, the curves of
    ``plot_cumulative(..., bounds=True)``); ``labels`` renames agents in the legends, ``title``
    (default: :func:`describe_arms`) heads the figure."""
    labels = labels or {}
    if not isinstance(epsilon, (int, float)) or isinstance(epsilon, bool):
        raise TypeError(f"--curves must be a number, got {type(epsilon).__name__}")
    if epsilon not in data.results:
        raise ValueError(f"--curves {epsilon:g} is not a swept value of {key!r} (swept: "
                         f"{', '.join(f'{e:g}' for e in data.eps)})")  # fmt: skip
    res = data.results[epsilon]
    shown = [a for a in data.agents if data.families.get(a) != APP_H]
    groups = panels(shown, data.families)
    try:
        bounds = bound_curves(res, [epsilon] if epsilon < INF_EPS else [])
    except ValueError:  # no stationary laws of the arms recorded: no bounds to draw
        bounds = []
    fig = Figure(figsize=(5.2 * len(groups) + 0.4, 5.4), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(groups), squeeze=False, sharey=True)[0]
    for ax, (family, members) in zip(axes, groups, strict=True):
        for i, label in enumerate(members):
            ref = data.families.get(label) == REFERENCE
            ax.plot(res.steps, res.mean(label), color=_COLORS[i % len(_COLORS)],
                    label=labels.get(label, label),
                    lw=1.2 if ref else 1.6, ls="--" if ref else "-")  # fmt: skip
        for j, b in enumerate(bounds):
            ax.plot(res.steps, b.values, color="k", lw=1.8 - 0.3 * (j % 4),
                    ls=["-", ":", "-.", (0, (5, 1))][j % 4], label=b.label)  # fmt: skip
        ax.set_yscale("log")
        ax.set_ylim(1, None)
        ax.set_xlabel("step t")
        ax.set_title(family, fontsize="small")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small", ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    axes[0].set_ylabel(f"cumulative regret (mean of {res.n_runs} runs)")
    eps_text = "∞" if epsilon >= INF_EPS else f"{epsilon:g}"
    fig.suptitle(f"{title or describe_arms(res)}: regret over time at ε = {eps_text}, with the "
                 "lower bounds at that ε", fontsize="medium")  # fmt: skip
    return fig


@dataclass
class Threshold:
    """Per agent, ``points[agent]``: ``(x, f, series, eps_S)`` of every cell, ``f`` the worse
    arm's share of the pulls over the second half, ``x = gap eps_S / d``, ``series`` the
    cell's other swept values in words; ``found[agent][level]``: over the series, the ``x``
    and eps_S where ``f`` first falls below ``level`` (log-linear interpolation: median, min,
    max, number of series reaching it; ``None`` when none does); ``min_f[agent]`` the smallest
    ``f`` of any cell."""

    points: dict[str, list[tuple[float, float, str, float]]]
    found: dict[str, dict[float, dict[str, float] | None]]
    min_f: dict[str, float]
    n_series: int
    gaps: dict[str, float]


def _spread(laws: Any) -> tuple[float, float, str]:
    """``(gap, d, words)`` of a stationary two-armed problem: the gap of the means and ``d``,
    the larger 0.1--0.9 quantile range of the two arms' reward laws."""
    if len(laws.segments) != 1 or laws.segments[0].means.size != 2:
        raise ValueError("DIR: a threshold needs two stationary arms in every cell")
    seg = laws.segments[0]
    m = seg.means
    gap = abs(float(m[0] - m[1]))
    if laws.arm == "bernoulli":  # q_0.1 = 0 iff P(0) >= 0.1, q_0.9 = 1 iff P(0) < 0.9
        d = max(float(0.1 < p <= 0.9) for p in m)
        return gap, d, f"gap {gap:g}"
    assert seg.sds is not None
    ranges = []
    for mean, s in zip(m, seg.sds, strict=True):
        lo, hi = mean + norm.ppf(0.1) * s, mean + norm.ppf(0.9) * s
        clipped = lo < laws.lo or hi > laws.hi  # the clipped law's quantiles are clipped too
        ranges.append(min(hi, laws.hi) - max(lo, laws.lo) if clipped else Q_RANGE * float(s))
    sds = sorted({float(s) for s in seg.sds})
    return gap, max(ranges), f"gap {gap:g}, sd {'/'.join(f'{s:g}' for s in sds)}"


def threshold(cells: SweepCells, key: str | None = None) -> Threshold:
    """The threshold of a sweep over eps_S (``key``, see :func:`eps_key`) and the arms (the
    other swept keys: each combination is a series) on two stationary arms (module doc)."""
    key = eps_key(cells, key)
    eps_values = _eps_values(cells, key)
    points: dict[str, list[tuple[float, float, str, float]]] = {}
    gaps: dict[str, float] = {}
    for eps, res in zip(eps_values, cells.results, strict=True):
        gap, d, words = _spread(laws_of(res))
        if gap <= 0 or d <= 0:
            raise ValueError(f"DIR {str(cells.folder)!r}: a cell has equal arms or rewards "
                             "without spread (gap or d = 0): x = gap eps_S / d is undefined")
        gaps[words] = gap
        steps = res.steps
        half = float(steps[-1] - steps[int(np.searchsorted(steps, steps[-1] // 2))])
        for label in res.labels:
            late = second_half(res.data[label]["regret"].mean(axis=1), steps)
            points.setdefault(label, []).append((gap * eps / d, late / (gap * half), words, eps))
    series_names = sorted(gaps, key=lambda w: (gaps[w], w))
    found: dict[str, dict[float, dict[str, float] | None]] = {}
    min_f = {}
    for label, pts in points.items():
        min_f[label] = min(p[1] for p in pts)
        found[label] = {}
        for level in LEVELS:
            xs, es = [], []
            for name in series_names:
                series = sorted((p for p in pts if p[2] == name), key=lambda p: p[3])
                for a, b in zip(series, series[1:], strict=False):
                    if a[1] >= level > b[1]:
                        w = (a[1] - level) / (a[1] - b[1])
                        xs.append(math.exp((1 - w) * math.log(a[0]) + w * math.log(b[0])))
                        es.append(math.exp((1 - w) * math.log(a[3]) + w * math.log(b[3])))
                        break
            found[label][level] = None if not xs else {
                "median": float(np.median(xs)), "min": min(xs), "max": max(xs), "n": len(xs),
                "eps_median": float(np.median(es)), "eps_min": min(es), "eps_max": max(es)}
    return Threshold(points, found, min_f, len(series_names), gaps)


def threshold_table(data: Threshold) -> str:
    """The markdown table of :func:`threshold`: per agent and level of :data:`LEVELS`, where
    the worse arm's share first falls below it (x and eps_S: median and range over the
    series), how many series reach it, and the smallest share of the whole grid."""
    lines = ["| agent | level | median x | range of x | series reaching it | median eps_S | "
             "range of eps_S | smallest share |", "|---|---|---|---|---|---|---|---|"]
    for label, levels in data.found.items():
        for level in LEVELS:
            v = levels[level]
            if v is None:
                lines.append(f"| {label} | {level:g} | never | | 0 of {data.n_series} | | | "
                             f"{data.min_f[label]:.2f} |")  # fmt: skip
                continue
            lines.append(
                f"| {label} | {level:g} | {v['median']:.2g} | {v['min']:.2g} - {v['max']:.2g} "
                f"| {v['n']} of {data.n_series} | {v['eps_median']:.2g} | {v['eps_min']:.2g} - "
                f"{v['eps_max']:.2g} | {data.min_f[label]:.2f} |"
            )
    return "\n".join(lines)


def plot_threshold(data: Threshold) -> Figure:
    """One panel per agent: the worse arm's share of the pulls over the second half against
    ``x = gap eps_S / d`` (log axis), one line per series (colour: the gap, marker: the rest),
    uniform play's 1/2 (dotted), the level 1/4 (dashed) and the median x where the share
    first falls below it (red)."""
    import matplotlib

    agents = list(data.points)
    ncols = min(len(agents), 5)
    nrows = math.ceil(len(agents) / ncols)
    fig = Figure(figsize=(2.7 * ncols + 0.6, 3.4 * nrows + 0.9), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    names = sorted(data.gaps, key=lambda w: (data.gaps[w], w))
    gap_values = sorted(set(data.gaps.values()))
    cmap = matplotlib.colormaps["viridis"]
    markers = "os^Dv<>p*h"
    for ax, label in zip(axes, agents, strict=False):
        for name in names:
            series = sorted((p for p in data.points[label] if p[2] == name), key=lambda p: p[3])
            same_gap = [n for n in names if data.gaps[n] == data.gaps[name]]
            color = cmap(0.85 * gap_values.index(data.gaps[name]) / max(len(gap_values) - 1, 1))
            ax.plot([p[0] for p in series], [p[1] for p in series], lw=0.8, ms=3.5,
                    marker=markers[same_gap.index(name) % len(markers)], color=color,
                    label=name)  # fmt: skip
        ax.axhline(0.5, color="k", ls=":", lw=1, label="uniform play (1/2)")
        ax.axhline(LEVELS[1], color="0.5", ls="--", lw=0.8, label=f"level {LEVELS[1]:g}")
        hit = data.found[label][LEVELS[1]]
        if hit is not None:
            ax.axvline(hit["median"], color="r", lw=1, label=f"median x at {LEVELS[1]:g}")
        ax.set_xscale("log")
        ax.set_title(label, fontsize="small")
        ax.set_xlabel("x = gap · ε_S / d")
        ax.grid(alpha=0.3)
    for ax in axes[len(agents):]:
        ax.set_visible(False)
    for ax in axes[::ncols]:
        ax.set_ylabel("worse arm's share of pulls, 2nd half")
    handles, texts = axes[0].get_legend_handles_labels()
    fig.legend(handles, texts, fontsize="x-small", ncol=min(len(texts), 8), loc="outside lower "
               "center")  # fmt: skip
    return fig
