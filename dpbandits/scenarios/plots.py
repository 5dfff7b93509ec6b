"""Figures of the selection scenarios and two-candidate maps (Figs. 1, 2, 5, 6, 7, 10-13).

Every function returns a :class:`matplotlib.figure.Figure` built without ``pyplot`` (no global
state, no GUI backend; ``fig.savefig(path)`` renders with Agg). Layout follows the paper:

- :func:`plot_evaluations` -- one column per scenario; top row the candidates (mean clipped
  score as a dot, the clipping range -- whose length is the sensitivity -- as a vertical line),
  bottom row MSE against eps on log-log axes with +-2 standard-error bands (Figs. 1, 5, 6, 7);
- :func:`plot_sweeps` -- MSE against the proportion of high scores at one eps (Fig. 13);
- :func:`plot_hg` -- heatmaps of ``HG(M, M')`` over ``(d_1, d_2)``, blue where ``M`` (RNM in
  the paper) is better, red where ``M'`` is (Figs. 2, 10-12).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dpbandits.scenarios.evaluation import Evaluation, Sweep
from dpbandits.scenarios.two_candidate import HGMap

__all__ = ["plot_evaluations", "plot_sweeps", "plot_hg", "selector_style"]

# Fixed colours so a selector looks the same in every figure.
_COLOURS = {
    "uniform": "#7f7f7f",
    "krr": "#8c564b",
    "rnm": "#1f77b4",
    "rnmh": "#17becf",
    "rs": "#ff7f0e",
    "rs_tnb": "#bcbd22",
    "gem": "#d62728",
    "mgem": "#2ca02c",
    "combined_gem": "#9467bd",
    "greedy": "#000000",
    "exponential_mechanism": "#e377c2",
    "permute_and_flip": "#aec7e8",
}
_EXTRA = ["#e377c2", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#dbdb8d", "#9edae5"]


def selector_style(label: str, private: bool | None = True, index: int = 0) -> dict[str, Any]:
    """Line style of a selector: fixed colour by base name; dashed when not DP."""
    base = label.split(":")[0].split("#")[0]
    colour = _COLOURS.get(base, _EXTRA[index % len(_EXTRA)])
    if label.startswith("rs_tnb"):
        colour = _COLOURS["rs_tnb"]
    return {"color": colour, "linestyle": "-" if private in (True, None) else "--"}


def _plot_candidates(ax: Axes, ev: Evaluation) -> None:
    c = ev.candidates
    d = c["sensitivities"]
    groups = [k for k in ("group0_mean", "group1_mean") if k in c]
    if groups:
        x = np.arange(d.size)
        for k, colour in zip(groups, ("#7b3294", "#008837"), strict=False):
            ax.plot(x, c[k], ".", color=colour, ms=4, label=k.replace("_mean", ""))
        ax.vlines(x, c["lower"], c["upper"], color="#9ecae1", lw=1, zorder=0)
        ax.legend(fontsize=6, loc="best")
        ax.set_xlabel("candidate a")
    else:
        order = np.argsort(c["mean_scores"], kind="stable")
        x = np.arange(d.size)
        ax.vlines(x, c["lower"][order], c["upper"][order], color="#c2a5cf", lw=1.2, zorder=0)
        ax.plot(x, c["mean_scores"][order], ".", color="#40004b", ms=4)
        ax.set_xlabel("candidates, sorted by mean score")
    ax.set_ylabel("score, clipping range (= sensitivity)")
    extra = f", {ev.positive_fraction:.0%} of trials >= 0" if groups else ""
    ax.set_title(
        f"{ev.title}\nSpearman {ev.spearman:+.2f}{extra}, weighted {ev.weighted_correlation:+.2f}",
        fontsize=8,
    )


def _plot_mse(ax: Axes, ev: Evaluation, bands: bool = True) -> None:
    # A zero MSE (every trial found a best candidate) cannot be drawn on a log axis: the line
    # stops there instead of plunging to the bottom of the panel.
    positive = []
    for i, lab in enumerate(ev.mse):
        style = selector_style(lab, ev.private.get(lab), i)
        m = np.where(ev.mse[lab] > 0, ev.mse[lab], np.nan)
        s = ev.se[lab]
        ax.plot(ev.epsilons, m, marker=".", ms=3, label=lab, **style)
        if bands:
            # +-2 se, floored at m/3 so that a wide band does not stretch the log axis.
            lo = np.maximum(m - 2 * s, m / 3)
            ax.fill_between(ev.epsilons, lo, m + 2 * s, color=style["color"], alpha=0.15, lw=0)
        positive.extend(m[np.isfinite(m)].tolist())
    ax.set_xscale("log")
    ax.set_yscale("log")
    if positive:
        ax.set_ylim(bottom=min(positive) / 2)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("MSE")
    ax.grid(True, which="major", alpha=0.3)


def plot_evaluations(
    evaluations: Evaluation | Sequence[Evaluation],
    *,
    suptitle: str | None = None,
    column_width: float = 3.6,
) -> Figure:
    """Paper layout: top row scores and sensitivities, bottom row MSE vs eps (log axes)."""
    evs = [evaluations] if isinstance(evaluations, Evaluation) else list(evaluations)
    if not evs:
        raise ValueError("evaluations must not be empty")
    n = len(evs)
    fig = Figure(figsize=(column_width * n + 1.6, 6.4), layout="constrained")
    axes = fig.subplots(2, n, squeeze=False)
    for j, ev in enumerate(evs):
        _plot_candidates(axes[0, j], ev)
        _plot_mse(axes[1, j], ev)
    handles, labels = axes[1, 0].get_legend_handles_labels()
    seen = set(labels)
    for ax in axes[1, 1:]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in seen:
                handles.append(h)
                labels.append(lab)
                seen.add(lab)
    fig.legend(handles, labels, loc="outside right center", fontsize=8)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def plot_sweeps(sweeps: Sweep | Sequence[Sweep], *, suptitle: str | None = None) -> Figure:
    """MSE against the swept parameter at one eps, one panel per sweep (Fig. 13)."""
    sws = [sweeps] if isinstance(sweeps, Sweep) else list(sweeps)
    if not sws:
        raise ValueError("sweeps must not be empty")
    fig = Figure(figsize=(3.8 * len(sws) + 1.6, 3.4), layout="constrained")
    axes = fig.subplots(1, len(sws), squeeze=False)[0]
    for ax, sw in zip(axes, sws, strict=True):
        for i, lab in enumerate(sw.mse):
            style = selector_style(lab, sw.private.get(lab), i)
            ax.errorbar(
                sw.x, sw.mse[lab], yerr=2 * sw.se[lab], marker=".", ms=3, label=lab, **style
            )
        ax.set_xlabel(sw.parameter)
        ax.set_ylabel(f"MSE at eps = {sw.epsilon:g}")
        ax.set_title(sw.title, fontsize=8)
        ax.grid(True, alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=8)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def plot_hg(
    maps: HGMap | Sequence[HGMap],
    *,
    ncols: int | None = None,
    titles: Sequence[str] | None = None,
    suptitle: str | None = None,
    shared_scale: bool = True,
) -> Figure:
    """Heatmaps of ``HG(M, M')`` over ``(d_1, d_2)``; blue: M better, red: M' better."""
    ms = [maps] if isinstance(maps, HGMap) else list(maps)
    if not ms:
        raise ValueError("maps must not be empty")
    ncols = min(len(ms), 4) if ncols is None else int(ncols)
    if ncols <= 0:
        raise ValueError(f"ncols must be > 0, got {ncols}")
    nrows = math.ceil(len(ms) / ncols)
    fig = Figure(figsize=(3.3 * ncols + 0.8, 2.9 * nrows + 0.4), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    vmax_all = max(float(np.max(np.abs(m.hg))) for m in ms) or 1e-12
    for k, ax in enumerate(axes.flat):
        if k >= len(ms):
            ax.set_visible(False)
            continue
        m = ms[k]
        v = vmax_all if shared_scale else (float(np.max(np.abs(m.hg))) or 1e-12)
        mesh = ax.pcolormesh(m.d1, m.d2, m.hg, shading="nearest", cmap="RdBu_r", vmin=-v, vmax=v)
        lo = max(m.d1.min(), m.d2.min())
        hi = min(m.d1.max(), m.d2.max())
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.6)
        ax.set_xlabel("Δ1 (lower score)")
        ax.set_ylabel("Δ2 (higher score)")
        ax.set_title(titles[k] if titles is not None else m.title, fontsize=8)
        if not shared_scale:
            fig.colorbar(mesh, ax=ax, shrink=0.8)
    if shared_scale:
        fig.colorbar(mesh, ax=axes, shrink=0.8, label="HG(M, M')")
    if suptitle:
        fig.suptitle(suptitle)
    return fig
