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

__all__ = ["SweepOutput", "numeric_keys", "plot_cell_curves", "plot_final_regret",
"write_sweep_plots"]

_Z = 1.96  # normal quantile of a 95% band


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def numeric_keys(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[str]:
    """The swept keys whose values are all finite numbers."""
    return [k for k in keys if rows and all(_is_number(r.get(k)) for r in rows)]


def _log_x(key: str, xs: Sequence[float]) -> bool:
    last = key.rsplit(".", 1)[-1].lower()
    return (last.startswith("eps") or "epsilon" in last) and all(x > 0 for x in xs)


def plot_final_regret(
    rows: Sequence[dict[str, Any]], key: str, keys: Sequence[str] | None = None
) -> Figure:
    """Final regret (``regret_mean``, ``summary.csv`` rows) against ``key``, one line per agent,
    with 95% bands; one panel per combination of the other swept ``keys``."""
    if not rows:
        raise ValueError("rows must not be empty")
    if not all(_is_number(r.get(key)) for r in rows):
        raise ValueError(f"key {key!r} must have a numeric value in every row")
    others = [k for k in (keys or []) if k != key]
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(repr(r.get(k)) for k in others), []).append(r)
    n = len(groups)
    ncols = min(n, 3)
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(5.2 * ncols + 1.3, 3.8 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    from matplotlib import colormaps

    agents = list(dict.fromkeys(r["agent"] for r in rows))
    cmap = colormaps["tab10" if len(agents) <= 10 else "tab20"]
    ncolors = 10 if len(agents) <= 10 else 20
    for ax, (gkey, grows) in zip(axes, groups.items(), strict=False):
        for i, agent in enumerate(agents):
            pts = sorted((r[key], r["regret_mean"], r.get("regret_se", math.nan))
                         for r in grows if r["agent"] == agent)  # fmt: skip
            if not pts:
                continue
            x, y, se = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
            color = cmap(i % ncolors)
            ax.plot(x, y, marker="o", color=color, label=agent, linewidth=1.5)
            ok = np.isfinite(se)
            if ok.any():
                ax.fill_between(x[ok], (y - _Z * se)[ok], (y + _Z * se)[ok], color=color,
                                alpha=0.2, linewidth=0)  # fmt: skip
        xs = sorted({float(r[key]) for r in grows})
        if _log_x(key, xs):
            ax.set_xscale("log")
            # the swept values as ticks, plainly written (no crowded minor labels)
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticks(xs, [f"{v:g}" for v in xs])
        ax.set_xlabel(key)
        ax.set_ylabel("final regret (mean, 95% CI)")
        if others:
            ax.set_title(", ".join(f"{k}={v}" for k, v in zip(others, gkey, strict=True)),
                         fontsize="small")  # fmt: skip
        ax.grid(alpha=0.3)
    for ax in axes[n:]:
        ax.set_visible(False)
    axes[min(n, ncols) - 1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1))
    return fig


def plot_cell_curves(results: Results, title: str = "") -> Figure:
    """Cumulative regret of every agent of one cell over time, 95% bands, change points."""
    fig = plot_cumulative(results, what="regret")
    if title:
        fig.suptitle(title, fontsize="small")
    return fig


def _slug(text: str, limit: int = 120) -> str:
    s = re.sub(r"[^A-Za-z0-9.=+-]+", "_", text.replace("*", "all")).strip("_")
    return s[:limit]


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
    for key in numeric_keys(res.rows, keys):
        fig = plot_final_regret(res.rows, key, keys)
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
        fig = plot_cell_curves(Results.load(path), title)
        with atomic_open(p, "wb") as f:
            fig.savefig(f, dpi=80, format=fmt)
    return written
