"""Figures of paper 002's experiments (Figs. 1-8) and of k-slates on the scenarios.

Every function takes the records of :mod:`dpbandits.topk.experiments` (or
:func:`dpbandits.topk.slates.evaluate_slates`) and returns a :class:`matplotlib.figure.Figure`
built without ``pyplot`` (no global state; ``fig.savefig(path)`` renders with Agg).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

__all__ = [
    "plot_accuracy",
    "plot_differences",
    "plot_figure1",
    "plot_order_metrics",
    "plot_slates",
]

Records = Sequence[dict[str, Any]]

_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"]


def plot_figure1(records: Records) -> Figure:
    """Figure 1: how often each feature is selected, SIS vs two-stage, W1 and W1/W2."""
    designs = list(dict.fromkeys(r["design"] for r in records))
    methods = list(dict.fromkeys(r["method"] for r in records))
    fig = Figure(figsize=(6.5 * len(designs), 3.6), layout="constrained")
    axes = fig.subplots(1, len(designs), squeeze=False)[0]
    for ax, design in zip(axes, designs, strict=True):
        for mi, m in enumerate(methods):
            rows = [r for r in records if r["design"] == design and r["method"] == m]
            f = np.array([r["feature"] for r in rows])
            c = np.array([r["count"] for r in rows])
            ax.bar(f + (mi - 0.5) * 0.4, c, width=0.4, color=_COLOURS[mi], label=m)
        reps = records[0]["reps"] if records else 0
        ax.axhline(reps, color="0.5", lw=0.8, ls=":")
        ax.set_title(f"{design} ({reps} repetitions, k = 5)")
        ax.set_xlabel("feature n")
        ax.set_ylabel("times selected")
        ax.legend(frameon=False)
    return fig


def _groups(records: Records) -> list[tuple[str, int]]:
    return list(dict.fromkeys((r["dataset"], int(r["k"])) for r in records))


def _panels(n: int) -> tuple[Figure, list[Any]]:
    """A figure with ``n`` panels, at most 4 per row (data sets x k can be many)."""
    cols = min(4, max(1, n))
    rows = -(-max(1, n) // cols)
    fig = Figure(figsize=(5.0 * cols, 3.8 * rows), layout="constrained")
    axes = list(fig.subplots(rows, cols, squeeze=False).flat)
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes


def plot_accuracy(records: Records) -> Figure:
    """Figures 2-5: top-k accuracy against eps, one panel per (data set, k), +-2 s.e. bands.

    Non-private references (``epsilon = inf``) are dashed horizontal lines.
    """
    groups = _groups(records)
    fig, axes = _panels(len(groups))
    for ax, (ds, k) in zip(axes, groups, strict=False):
        rows = [r for r in records if r["dataset"] == ds and int(r["k"]) == k]
        labels = list(dict.fromkeys((r["method"], r["mechanism"]) for r in rows))
        for li, (method, mech) in enumerate(labels):
            sub = sorted(
                (r for r in rows if r["method"] == method and r["mechanism"] == mech),
                key=lambda r: r["epsilon"],
            )
            colour = _COLOURS[li % len(_COLOURS)]
            if math.isinf(sub[0]["epsilon"]):
                ax.axhline(sub[0]["accuracy"], color=colour, ls="--", lw=1.2, label=f"{method}")
                continue
            e = np.array([r["epsilon"] for r in sub])
            a = np.array([r["accuracy"] for r in sub])
            se = np.nan_to_num(np.array([r["accuracy_se"] for r in sub]))
            label = method if mech in ("canonical_lipschitz", "none") else f"{method} [{mech}]"
            ax.plot(e, a, marker="o", ms=3, color=colour, label=label)
            ax.fill_between(e, a - 2 * se, a + 2 * se, color=colour, alpha=0.15, lw=0)
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("epsilon")
        ax.set_ylabel(f"top-{k} accuracy")
        ax.set_title(f"{ds}, k = {k}")
        ax.legend(frameon=False, fontsize=8)
    return fig


def plot_order_metrics(records: Records, method: str = "DP-SIS") -> Figure:
    """Figure 8: TOP / GREAT / GOOD of ``method`` against eps, one panel per (data set, k)."""
    rows_all = [r for r in records if r["method"] == method and not math.isinf(r["epsilon"])]
    groups = _groups(rows_all)
    fig, axes = _panels(len(groups))
    for ax, (ds, k) in zip(axes, groups, strict=False):
        rows = [r for r in rows_all if r["dataset"] == ds and int(r["k"]) == k]
        mechs = list(dict.fromkeys(r["mechanism"] for r in rows))
        for mi, mech in enumerate(mechs):
            sub = sorted((r for r in rows if r["mechanism"] == mech), key=lambda r: r["epsilon"])
            e = [r["epsilon"] for r in sub]
            suffix = "" if len(mechs) == 1 else f" [{mech}]"
            for metric, ls in (("top", "-"), ("great", "--"), ("good", ":")):
                ax.plot(
                    e,
                    [r[metric] for r in sub],
                    ls=ls,
                    marker="o",
                    ms=3,
                    color=_COLOURS[mi % len(_COLOURS)],
                    label=metric.upper() + suffix,
                )
            ax.plot(
                e,
                [r["accuracy"] for r in sub],
                color="0.4",
                lw=0.8,
                label="top-k accuracy" + suffix,
            )
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("epsilon")
        ax.set_ylabel("fraction of trials")
        ax.set_title(f"{method} on {ds}, k = {k}")
        ax.legend(frameon=False, fontsize=8)
    return fig


def plot_slates(records: Records) -> Figure:
    """Top-k accuracy and slate regret against eps of each mechanism on a scenario."""
    fig = Figure(figsize=(10, 3.8), layout="constrained")
    ax_acc, ax_reg = fig.subplots(1, 2)
    mechs = list(dict.fromkeys(r["mechanism"] for r in records))
    for mi, mech in enumerate(mechs):
        sub = sorted((r for r in records if r["mechanism"] == mech), key=lambda r: r["epsilon"])
        e = [r["epsilon"] for r in sub]
        style = {"color": _COLOURS[mi % len(_COLOURS)], "marker": "o", "ms": 3}
        if not sub[0]["private"]:
            style["ls"] = "--"
        ax_acc.plot(e, [r["accuracy"] for r in sub], label=mech, **style)
        ax_reg.plot(e, [r["regret"] for r in sub], label=mech, **style)
    if records:
        r0 = records[0]
        fig.suptitle(
            f"k-slates on scenario {r0['scenario']} (k = {r0['k']}, {r0['trials']} trials)"
        )
    for ax, name in ((ax_acc, "top-k accuracy"), (ax_reg, "regret per slot")):
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(name)
    ax_acc.legend(frameon=False, fontsize=8)
    return fig


def plot_differences(records: Records, title: str = "") -> Figure:
    """Figures 6-7: heat map of DP-SIS minus two-stage top-k accuracy, data sets x eps.

    ``records`` from :func:`dpbandits.topk.real_data.accuracy_differences` (one k per data
    set); cells with ``|z| > 2`` are marked with a dot.
    """
    names = list(dict.fromkeys(r["dataset"] for r in records))
    eps = sorted({float(r["epsilon"]) for r in records})
    grid = np.full((len(names), len(eps)), np.nan)
    sig = np.zeros_like(grid, dtype=bool)
    for r in records:
        i, j = names.index(r["dataset"]), eps.index(float(r["epsilon"]))
        grid[i, j], sig[i, j] = r["difference"], r["significant"]
    fig = Figure(
        figsize=(2.5 + 0.55 * max(1, len(eps)), 1.5 + 0.3 * max(1, len(names))),
        layout="constrained",
    )
    ax = fig.subplots()
    im = ax.imshow(grid, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    ii, jj = np.nonzero(sig)
    ax.plot(jj, ii, "k.", ms=4)
    ax.set_xticks(range(len(eps)), [f"{e:.2g}" for e in eps], rotation=90, fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_xlabel("epsilon")
    ks = sorted({int(r["k"]) for r in records})
    ax.set_title(title or f"DP-SIS minus two-stage accuracy (k = {', '.join(map(str, ks))})")
    fig.colorbar(im, ax=ax, label="accuracy difference")
    return fig
