"""Figures of the recommendation experiments (matplotlib; each function returns the Figure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure

__all__ = [
    "plot_appg",
    "plot_auction_sweep",
    "plot_disutility",
    "plot_epsilon_sweep",
    "plot_gamma_sweep",
    "plot_pricing",
]

_LABELS = {"rr": "RR", "snm_scaled": "scaled SNM", "snm_clipped": "clipped SNM"}


def _label(row: dict[str, Any]) -> str:
    name = _LABELS.get(row["mechanism"], row["mechanism"])
    if row["mechanism"] == "snm_clipped":
        name += f" (Δ/2={row['bound']:g})"
    return name


def _series(
    rows: Sequence[dict[str, Any]], x: str
) -> dict[str, tuple[list[float], list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float], list[float]]] = {}
    for r in rows:
        xs, ys, es = out.setdefault(_label(r), ([], [], []))
        xs.append(r[x])
        ys.append(r["ctr"])
        es.append(r["se"])
    return out


def _ctr_axes(ax: Any, rows: Sequence[dict[str, Any]], x: str) -> None:
    for name, (xs, ys, es) in _series(rows, x).items():
        ax.errorbar(xs, ys, yerr=[2 * e for e in es], marker="o", ms=3, capsize=2, label=name)
    ax.axhline(rows[0]["ctr_nonpersonalised"], color="k", ls="--", lw=1, label="non-personalised")
    ax.axhline(rows[0]["ctr_greedy"], color="grey", ls=":", lw=1, label="greedy (non-private)")
    ax.set_ylabel("engagement (mean pClick_device)")


def plot_epsilon_sweep(rows: Sequence[dict[str, Any]], title: str = "") -> Figure:
    """Engagement against eps per mechanism (paper 001, Fig. 3), ±2 s.e. bars."""
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    _ctr_axes(ax, rows, "epsilon")
    ax.set_xscale("log")
    ax.set_xlabel("ε (local DP)")
    ax.set_title(title or "RR vs scaled vs clipped SNM against ε")
    ax.legend(fontsize=7)
    return fig


def plot_gamma_sweep(rows: Sequence[dict[str, Any]], title: str = "") -> Figure:
    """Engagement against the cut-off gamma (paper 001, Fig. 4), ±2 s.e. bars."""
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    _ctr_axes(ax, rows, "gamma")
    ax.set_xlabel("cut-off γ (keep s_server ≥ (1-γ) max s_server)")
    ax.set_title(title or f"engagement against γ at ε = {rows[0]['epsilon']:g}")
    ax.legend(fontsize=7)
    return fig


def plot_appg(rows: Sequence[dict[str, Any]]) -> Figure:
    """Fraction of the gap to the greedy limit closed, one panel per App. G cell."""
    cells: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((r["n_candidates"], r["extremeness"], r["informativeness"]), []).append(r)
    keys = sorted(cells)
    ncols = min(4, len(keys))
    nrows = -(-len(keys) // ncols)
    fig = Figure(figsize=(3.2 * ncols, 2.7 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, key in zip(axes.flat, keys, strict=False):
        for name, (xs, _, _) in _series(cells[key], "epsilon").items():
            ys = [r["gap_closed"] for r in cells[key] if _label(r) == name]
            ax.plot(xs, ys, marker="o", ms=3, label=name)
        ax.axhline(0.0, color="k", ls="--", lw=1)
        ax.set_xscale("log")
        ax.set_title(f"K={key[0]}, extreme={key[1]:.2g}, inform.={key[2]:g}", fontsize=8)
        ax.set_xlabel("ε", fontsize=8)
        ax.set_ylabel("gap closed", fontsize=8)
    for ax in list(axes.flat)[len(keys) :]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=6)
    return fig


def plot_disutility(rows: Sequence[dict[str, Any]], metric: str = "d_i") -> Figure:
    """Mean dis-utility against eta, one panel per k, one line per algorithm (paper 004,
    Figs. 6 and 9), ±2 s.e. bars."""
    ks = sorted({int(r["k"]) for r in rows})
    algos: list[str] = []
    for r in rows:
        if r["algorithm"] not in algos:
            algos.append(r["algorithm"])
    fig = Figure(figsize=(3.3 * len(ks), 3.4), layout="constrained")
    axes = fig.subplots(1, len(ks), squeeze=False, sharey=True)[0]
    colours = {a: f"C{i}" for i, a in enumerate(algos)}
    for ax, k in zip(axes, ks, strict=True):
        for a in algos:
            pts = sorted(
                (r["eta"], r[metric], r[metric + "_se"])
                for r in rows
                if r["algorithm"] == a and int(r["k"]) == k
            )
            if pts:
                xs, ys, es = zip(*pts, strict=True)
                ax.errorbar(
                    xs,
                    ys,
                    yerr=[2 * e for e in es],
                    marker="o",
                    ms=3,
                    capsize=2,
                    color=colours[a],
                    label=a,
                )
        ax.set_title(f"k = {k}", fontsize=9)
        ax.set_xlabel("η (1/η-geographic DP)")
    axes[0].set_ylabel(f"mean dis-utility {metric}")
    axes[0].legend(fontsize=7)
    return fig


_METRICS = (("ctr", "CTR"), ("surplus", "advertiser surplus"), ("revenue", "platform revenue"))


def plot_auction_sweep(rows: Sequence[dict[str, Any]], x: str = "epsilon") -> Figure:
    """CTR, surplus and revenue against ``x`` (``"epsilon"``: paper 001 Figs. 3 and 7 a-c,
    with one clipped-SNM line per bound for d-f; ``"gamma"``: Figs. 4 and 8), ±2 s.e. bars,
    with the non-personalised baseline and the non-private greedy limit."""
    fig = Figure(figsize=(13.5, 3.8), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax, (key, name) in zip(axes, _METRICS, strict=True):
        series: dict[str, tuple[list[float], list[float], list[float]]] = {}
        for r in rows:
            xs, ys, es = series.setdefault(_label(r), ([], [], []))
            xs.append(r[x])
            ys.append(r[key])
            es.append(r[f"{key}_se"])
        for label, (xs, ys, es) in series.items():
            ax.errorbar(xs, ys, yerr=[2 * e for e in es], marker="o", ms=3, capsize=2, label=label)
        ax.axhline(
            rows[0][f"{key}_nonpersonalised"], color="k", ls="--", lw=1, label="non-personalised"
        )
        ax.axhline(rows[0][f"{key}_greedy"], color="grey", ls=":", lw=1, label="greedy")
        if x == "epsilon":
            ax.set_xscale("log")
        ax.set_xlabel("ε (local DP)" if x == "epsilon" else "cut-off γ")
        ax.set_ylabel(f"{name} per auction")
    axes[0].legend(fontsize=7)
    return fig


def plot_pricing(rows: Sequence[dict[str, Any]]) -> Figure:
    """RQ1 (paper 001 Figs. 2 and 6): revenue and surplus lifts of each pricing model relative
    to full-information pricing, greedy selection."""
    fig = Figure(figsize=(6.4, 3.6), layout="constrained")
    ax = fig.subplots()
    names = [r["pricing"] for r in rows]
    xs = range(len(rows))
    for off, (key, colour) in ((-0.2, ("revenue", "C0")), (0.2, ("surplus", "C3"))):
        ax.bar(
            [i + off for i in xs],
            [100 * r[f"{key}_lift"] for r in rows],
            width=0.4,
            color=colour,
            label=key,
        )
    ax.set_xticks(list(xs), [f"pClick_{n}" for n in names])
    ax.axhline(0, color="k", lw=0.8)
    ax.set_ylabel("lift vs full-information pricing [%]")
    ax.set_title(f"pricing without private data (pay per {rows[0]['payment']})")
    ax.legend(fontsize=8)
    return fig
