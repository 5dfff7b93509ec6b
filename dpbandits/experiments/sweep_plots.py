"""Figures of a parameter sweep: final regret against each swept value, regret curves per cell.

- :func:`plot_final_regret` -- mean final regret against one swept numeric key, one line per
  agent, with 95% confidence bands of the mean (``mean ± 1.96 SE``); a log x-axis for epsilons;
  one panel per combination of the other swept values;
- :func:`plot_cell_curves` -- cumulative regret over time of every agent of one cell (the
  figure of :func:`dpbandits.experiments.plotting.plot_cumulative`, titled with the cell's values);
- :func:`write_sweep_plots` -- both, for a whole sweep, written under ``out/plots``.

Functions return :class:`matplotlib.figure.Figure` objects (Agg canvas, no pyplot).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from dpbandits.core.files import atomic_open
from dpbandits.experiments.plotting import plot_cumulative
from dpbandits.experiments.results import Results
from dpbandits.theory import BOUND_LABELS


class SweepOutput(Protocol):
    """What the plots read of a sweep (:class:`dpbandits.experiments.sweep.SweepResult`): its
    output folder, cells and store keys, the failed cells, the summary rows and each cell's
    results file."""

    out: Path
    cells: list[Any]
    keys: list[str]
    failed: dict[int, str]
    rows: list[dict[str, Any]]

    def result_path(self, index: int) -> Path: ...

__all__ = ["APP_H", "MAX_AGENTS", "REFERENCE", "UNIFORM", "SweepOutput", "agent_families",
           "axis_label", "numeric_keys", "panels", "plot_cell_curves", "plot_final_regret",
           "privacy_key", "strongest_bound", "uniform_regret_curve", "write_sweep_plots"]

_Z = 1.96  # normal quantile of a 95% band


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)


def numeric_keys(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[str]:
    """The swept keys whose values are all numbers (``inf`` allowed: eps = inf)."""
    return [k for k in keys if rows and all(_is_number(r.get(k)) for r in rows)]


#: A privacy parameter at or above this is plotted at the "∞" position (the configs write
#: eps = inf as 1e6: Laplace scales of 1e-6, the algorithms' non-private limits).
INF_EPS = 1e6
#: The most agents drawn in one panel (more are split by family, then in groups).
MAX_AGENTS = 8
#: Words for the parameters a key path may end with.
_WORDS = {
    "epsilon": "ε", "epsilon_select": "ε_S (per action)", "epsilon_means": "ε_M",
    "epsilon_quantiles": "ε_p", "eps": "ε", "horizon": "horizon T", "n_runs": "runs",
    "window": "window", "gamma": "γ", "beta": "β", "t_shift": "shift step",
}  # fmt: skip


def privacy_key(key: str) -> bool:
    """Whether a swept key sets a privacy parameter, whatever its path (``agents.*.epsilon``,
    ``agents.*.epsilon|epsilon_select``, ``eps_select``)."""
    names = re.split(r"[.|]", key.lower())
    return any(n.startswith("eps") or "epsilon" in n for n in names)


def axis_label(key: str) -> str:
    """A swept key in words: ``agents.*.epsilon|epsilon_select`` -> ``ε / ε_S (per action)``,
    ``experiment.env_kwargs.horizon`` -> ``horizon T``."""
    last = key.rsplit(".", 1)[-1]
    words = [_WORDS.get(part, part.replace("_", " ")) for part in last.split("|")]
    return " / ".join(dict.fromkeys(words))


def _positions(key: str, xs: Sequence[float]) -> tuple[bool, dict[float, float], list[str]]:
    """(log axis, value -> x position, tick labels in the order of the sorted values): a
    privacy parameter on a log axis, eps = inf (:data:`INF_EPS` or more) as its own "∞"
    position a step beyond the largest finite value."""
    values = sorted(set(xs))
    log = privacy_key(key) and all(x > 0 for x in values)
    finite = [v for v in values if not (log and v >= INF_EPS)]
    pos = {v: float(v) for v in finite}
    if log and len(finite) < len(values):
        top = max(finite) if finite else 1.0
        step = (top / min(finite)) ** (1 / max(1, len(finite) - 1)) if len(finite) > 1 else 10.0
        for v in values[len(finite):]:
            pos[v] = top * max(step, 3.0)
    labels = [f"{v:g}" if v in finite else "∞" for v in values]
    return log, pos, labels


def agent_families(specs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """``label -> family`` from an experiment's agent specs: the App. H agents (a private
    selection, ``epsilon_select``), the eps-DP agents of the literature (``epsilon``), and the
    non-private references (drawn in every panel)."""
    out = {}
    for label, spec in specs.items():
        if spec.get("kind") == "private" or "epsilon_select" in spec:
            out[label] = APP_H
        elif any(k.startswith("epsilon") for k in spec):
            out[label] = "ε-DP agents of the literature"
        else:
            out[label] = REFERENCE
    return out


#: The regret axis is logarithmic when the largest value is more than this many times the
#: smallest: on a linear axis from 0 the smallest would sit in its bottom 5%, where agents that
#: differ by 2x (and the lower bounds) are one flat line.
LOG_SPAN = 20

#: The family of the non-private agents, drawn in every panel as references.
REFERENCE = "non-private"
#: The family of the App. H agents: x is their eps_S per action, not their run's eps.
APP_H = "App. H agents"
#: The legend label of uniform play's level on the regret-vs-parameter figures: the expected
#: regret of an agent that learns nothing (a reference level, not a bound).
UNIFORM = "uniform play (expected regret)"


def panels(agents: list[str], families: dict[str, str]) -> list[tuple[str, list[str]]]:
    """(title, agents) of each panel: each family with the references, at most
    :data:`MAX_AGENTS` agents per panel (a large family in several panels)."""
    refs = [a for a in agents if families.get(a) == REFERENCE]
    by_family: dict[str, list[str]] = {}
    for a in agents:
        if families.get(a, "agents") != REFERENCE:
            by_family.setdefault(families.get(a, "agents"), []).append(a)
    if not by_family:
        by_family = {REFERENCE: []}
    room = max(1, MAX_AGENTS - len(refs))
    panels = []
    for family, members in by_family.items():
        parts = [members[i:i + room] for i in range(0, len(members), room)] or [[]]
        for j, part in enumerate(parts):
            title = family if len(parts) == 1 else f"{family} ({j + 1}/{len(parts)})"
            panels.append((title, [*refs, *part][:max(MAX_AGENTS, len(refs))]))
    return panels


def plot_final_regret(
    rows: Sequence[dict[str, Any]],
    key: str,
    keys: Sequence[str] | None = None,
    families: dict[str, str] | None = None,
    bounds: dict[str, dict[float, float]] | None = None,
) -> Figure:
    """Final regret (``regret_mean``, ``summary.csv`` rows) against ``key``, one line per agent,
    with 95% bands; one row of panels per combination of the other swept ``keys``.

    A privacy parameter goes on a log axis with eps = inf as its own "∞" position; the regret
    axis is logarithmic when the values span more than :data:`LOG_SPAN` times. Agents are grouped by
    ``families`` (``label -> family``, :func:`agent_families`; :data:`REFERENCE` agents are
    drawn in every panel), at most :data:`MAX_AGENTS` per panel in distinct colours, with one
    legend per family. ``bounds`` (``name -> {eps: regret}``, eps = ``inf`` for a bound that
    does not depend on eps) draws lower bounds: a line against eps, or a level ("uniform
    play", the regret of an agent that learns nothing, dotted).
    """
    if not rows:
        raise ValueError("rows must not be empty")
    if not all(_is_number(r.get(key)) for r in rows):
        raise ValueError(f"key {key!r} must have a numeric value in every row")
    others = [k for k in (keys or []) if k != key]
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(repr(r.get(k)) for k in others), []).append(r)
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    groups_of_agents = panels(agents, families or {})
    nrows, ncols = len(groups), len(groups_of_agents)
    fig = Figure(figsize=(5.0 * ncols + 0.6, 3.9 * nrows + 1.4), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    from matplotlib import colormaps

    # 9 distinct colours (tab10 without its grey, the bounds' colour); a panel holds at most 8
    palette = [colormaps["tab10"](i) for i in range(10) if i != 7]
    ys = [r["regret_mean"] for r in rows if _is_number(r["regret_mean"])]
    positive = [y for y in ys if y > 0]
    log_y = bool(positive) and max(positive) > LOG_SPAN * min(positive)
    log_x, pos, tick_labels = _positions(key, [float(r[key]) for r in rows])
    for g, (gkey, grows) in enumerate(groups.items()):
        for c, (title, members) in enumerate(groups_of_agents):
            ax = axes[g, c]
            for i, agent in enumerate(members):
                pts = sorted((float(r[key]), r["regret_mean"], r.get("regret_se", math.nan))
                             for r in grows if r["agent"] == agent)  # fmt: skip
                if not pts:
                    continue
                x = np.array([pos[p[0]] for p in pts])
                y = np.array([p[1] for p in pts], dtype=float)
                se = np.array([p[2] for p in pts], dtype=float)
                color = palette[i % len(palette)]
                ref = (families or {}).get(agent) == REFERENCE
                ax.plot(x, y, marker="o", ms=3.5, color=color, label=agent,
                        linewidth=1.2 if ref else 1.6, linestyle="--" if ref else "-")  # fmt: skip
                ok = np.isfinite(se)
                if ok.any():
                    low = np.maximum((y - _Z * se)[ok], min(positive) / 2 if log_y else -np.inf)
                    ax.fill_between(x[ok], low, (y + _Z * se)[ok], color=color, alpha=0.15,
                                    linewidth=0)  # fmt: skip
            # an App. H agent's x is eps_S per action, not its run's eps: levels only there
            _draw_sweep_bounds(ax, bounds or {}, pos, against_x=not title.startswith(APP_H))
            if log_x:
                ax.set_xscale("log")
                ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticks([pos[v] for v in sorted(pos)], tick_labels)
            if log_y:
                ax.set_yscale("log")
            ax.set_xlabel(axis_label(key))
            head = title if g == 0 else ""
            if others:
                head += ("\n" if head else "") + ", ".join(
                    f"{axis_label(k)} = {v}" for k, v in zip(others, gkey, strict=True))
            ax.set_title(head, fontsize="small")
            ax.grid(alpha=0.3)
            if g == nrows - 1:  # one legend per family, under its column
                ax.legend(fontsize="x-small", ncol=2, loc="upper center",
                          bbox_to_anchor=(0.5, -0.16))  # fmt: skip
        axes[g, 0].set_ylabel("final regret (mean, 95% CI)")
    return fig


def _draw_sweep_bounds(ax: Any, bounds: dict[str, dict[float, float]], pos: dict[float, float],
                       against_x: bool = True) -> None:  # fmt: skip
    """Lower bounds: against eps where they depend on it (when ``against_x``: the x-axis is the
    eps of the agents' whole run), else a level."""
    for j, (name, values) in enumerate(bounds.items()):
        finite = sorted((e, v) for e, v in values.items()
                        if against_x and math.isfinite(e) and e in pos)  # fmt: skip
        style = {"color": "k", "linewidth": 3, "alpha": 0.25 + 0.2 * (j % 2), "label": name}
        if finite:
            ax.plot([pos[e] for e, _ in finite], [v for _, v in finite], **style)
        elif math.inf in values:  # uniform play dotted, a bound without eps dashed
            dotted = name == UNIFORM
            ax.axhline(values[math.inf], linestyle=":" if dotted else "--",
                       **{**style, "linewidth": 1.5 if dotted else 1.2,
                          "alpha": 0.8 if dotted else style["alpha"]})  # fmt: skip


def plot_cell_curves(results: Results, title: str = "",
                     bounds_epsilon: float | None = None) -> Figure:  # fmt: skip
    """Cumulative regret of every agent of one cell over time, 95% bands, change points; with
    ``bounds_epsilon``, the regret lower bounds (Lai--Robbins, and the eps-global-DP bounds at
    that eps when it is finite; ``plot_cumulative(..., bounds=True)``) where they apply to the
    arms (none when the means drift within segments)."""
    if bounds_epsilon is not None:
        eps = () if math.isinf(bounds_epsilon) else bounds_epsilon
        try:
            fig = plot_cumulative(results, what="regret", bounds=True, bounds_epsilon=eps)
        except ValueError:  # no stationary laws of the arms recorded: no bounds to draw
            fig = plot_cumulative(results, what="regret")
    else:
        fig = plot_cumulative(results, what="regret")
    if title:
        fig.suptitle(title, fontsize="small")
    return fig


def _slug(text: str, limit: int = 120) -> str:
    s = re.sub(r"[^A-Za-z0-9.=+-]+", "_", text.replace("*", "all")).strip("_")
    return s[:limit]


def _bounds_of(res: SweepOutput, key: str) -> dict[str, dict[float, float]]:
    """The levels and lower bounds at the horizon against the privacy parameter ``key``, from
    the first cell's results: uniform play's regret and Lai--Robbins as levels, the strongest
    eps-global-DP bound that applies to the arms against eps
    (:func:`dpbandits.experiments.bounds.bound_curves`); no bound when none applies (change
    points within segments, other arms). Labels say what each line is
    (:func:`~dpbandits.experiments.bounds.bound_label`)."""
    from dpbandits.experiments.bounds import bound_curves, bound_label

    done = [c for c in res.cells
            if c.index not in res.failed and res.result_path(c.index).is_file()]  # fmt: skip
    if not done:
        return {}
    results = Results.load(res.result_path(done[0].index))
    out: dict[str, dict[float, float]] = {}
    uniform = _uniform_regret(results)
    if uniform is not None:
        out[UNIFORM] = {math.inf: uniform}
    eps = sorted({float(r[key]) for r in res.rows if 0 < float(r[key]) < INF_EPS})
    try:
        curves = bound_curves(results, eps or [1.0])
    except (ValueError, KeyError):
        return out
    strongest = strongest_bound({c.key for c in curves})
    for c in curves:
        if c.key == "lai_robbins":
            out.setdefault(c.label, {})[math.inf] = float(c.values[-1])
        elif c.key == strongest:
            name = bound_label(BOUND_LABELS[c.key], c.segments, "ε on the x-axis")
            out.setdefault(name, {})[float(c.epsilon)] = float(c.values[-1])
    return out


def strongest_bound(keys: set[str]) -> str | None:
    """The strongest eps-global-DP lower bound among ``keys`` (names of
    :data:`dpbandits.theory.BOUND_LABELS` that apply to the arms): Azize et al. 2025 where it
    applies (Bernoulli arms), else Azize & Basu 2022; ``None`` when neither does."""
    return next((k for k in ("azize_2025", "azize_basu_2022") if k in keys), None)


def uniform_regret_curve(results: Results) -> np.ndarray | None:
    """The expected cumulative regret at ``results.steps`` of uniform play (each arm with
    probability 1/K at every step) in the environment of ``results``: the level of an agent
    that learns nothing, from the environment's expected reward table (``None`` when it has
    none)."""
    from dpbandits.experiments.envspec import make_env

    env = make_env(results.config["env"])
    try:
        table_fn = getattr(env.unwrapped, "expected_reward_table", None)
        if table_fn is None:
            return None
        table = np.asarray(table_fn(), dtype=float)
    finally:
        env.close()
    per_step = table.max(axis=1) - table.mean(axis=1)
    return np.cumsum(per_step)[np.asarray(results.steps) - 1]


def _uniform_regret(results: Results) -> float | None:
    """Uniform play's expected regret at the horizon (:func:`uniform_regret_curve`)."""
    curve = uniform_regret_curve(results)
    return None if curve is None else float(curve[-1])


def _cell_bounds_epsilon(params: dict[str, Any], families: dict[str, str]) -> float | None:
    """The eps at which a cell's curve figure draws the eps-global-DP lower bounds: the value
    of its swept privacy key when some agent's whole run is eps-DP at it (an agent of the
    literature; the App. H agents' swept value is eps_S per action, not their run's eps), inf
    (Lai--Robbins only) otherwise."""
    literature = any(f not in (REFERENCE, APP_H) for f in families.values())
    for key, value in params.items():
        if privacy_key(key) and _is_number(value) and literature:
            return math.inf if float(value) >= INF_EPS else float(value)
    return math.inf


def write_sweep_plots(res: SweepOutput, fmt: str = "png") -> list[Path]:
    """Write ``plots/regret_vs_<key>.<fmt>`` for each swept numeric key and
    ``plots/curves/<key>.<fmt>`` for every cell with results (named by the first 16 hex digits
    of the cell's store key, listed in ``cells.csv``); returns the paths.

    A cell's curve figure depends only on its stored results, so an existing one is kept: a
    re-run draws only the figures of new cells.
    """
    plots = res.out / "plots"
    (plots / "curves").mkdir(parents=True, exist_ok=True)
    keys = list(res.cells[0].params) if res.cells else []
    written: list[Path] = []
    specs = res.cells[0].experiment.agents if res.cells else {}
    families = agent_families(specs)
    for key in numeric_keys(res.rows, keys):
        bounds = _bounds_of(res, key) if privacy_key(key) else {}
        fig = plot_final_regret(res.rows, key, keys, families, bounds)
        p = plots / f"regret_vs_{_slug(key)}.{fmt}"
        with atomic_open(p, "wb") as f:
            fig.savefig(f, dpi=100, format=fmt)
        written.append(p)
    for cell in res.cells:
        if cell.index in res.failed:
            continue
        path = res.result_path(cell.index)
        if not path.is_file():
            continue
        p = plots / "curves" / f"{res.keys[cell.index][:16]}.{fmt}"
        written.append(p)
        if p.is_file():
            continue
        title = ", ".join(f"{k}={v}" for k, v in cell.params.items())
        fig = plot_cell_curves(Results.load(path), title,
                               _cell_bounds_epsilon(cell.params, families))  # fmt: skip
        with atomic_open(p, "wb") as f:
            fig.savefig(f, dpi=80, format=fmt)
    return written
