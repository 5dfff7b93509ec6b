"""The tables, the regret curves and the threshold figure of docs/private-bandits.md, from the
outputs of its sweeps (the comparison figures are the sweeps' own figures, drawn by
``dpbandits sweep``: the page says which file each one is).

Run the six sweeps of the page first (``dpbandits sweep examples/configs/private_NAME.toml
--out DIR/private_NAME``), then::

    python docs/_tools/private_bandits.py DIR --img docs/img > tables.md

It prints the page's markdown tables (final regret, mean +- standard error over the runs, per
agent and eps; where each agent learns or plays at random; the App. H agents' thresholds) and
writes ``private_curves.png`` (the literature's agents' regret over time at eps = 0.1 with the
lower bounds, ``plot_cumulative(..., bounds=True)``) and ``private_threshold.png`` (the App. H
agents' fraction of pulls of the worse arm against ``gap x eps_S / d``).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from scipy.stats import norm

from dpbandits.experiments.bounds import bound_curves
from dpbandits.experiments.envspec import make_env
from dpbandits.experiments.results import Results
from dpbandits.theory import BOUND_LABELS

ENVS = {  # sweep folder -> title
    "private_bernoulli2": "Bernoulli, K = 2, means (0.6, 0.4)",
    "private_bernoulli10": "Bernoulli, K = 10, means 0.75, 0.70, ..., 0.30",
    "private_gaussian": "clipped Gaussian, K = 5, means 0.3, ..., 0.7, sd 0.2",
    "private_shift": "Fig. 9 shift (clipped Gaussian, swap at 30 000)",
    "private_piecewise": "Bernoulli, K = 3, change points at 15 000 and 30 000",
}
EPS_KEY = "agents.*.epsilon|epsilon_select"
INF = 1e6  # how the configs write eps = inf
BASELINES = ("UCB", "KL-UCB", "TS")
APP_H = ("kRR", "RNM", "RS", "GEM", "mGEM")
LITERATURE = ("DP-UCB", "DP-UCB-Bound", "DP-UCB-Hybrid", "DP-UCB-Int", "DP-SE", "AdaP-UCB",
              "AdaP-KLUCB", "DP-KLUCB", "DP-IMED", "DP-TS")  # fmt: skip
#: the name a table shows for a config label: ``dp_ts`` is Lazy-DP-TS (Hu & Hegde 2022, Alg. 2);
#: the marks refer to the notes under the page's first table (DP-UCB: eps per arm tree, not
#: Mishra & Thakurta's eps/K; DP-UCB-Int: this library's hybrid-release variant)
SHOWN = {"DP-TS": "Lazy-DP-TS", "DP-UCB": "DP-UCB ¹", "DP-UCB-Int": "DP-UCB-Int ²"}
#: second-half regret over uniform play's: below LEARNS the agent learns, above RANDOM it
#: plays (nearly) at random
LEARNS, RANDOM = 0.1, 0.8
#: the thresholds' levels of the fraction of pulls of the worse arm: 0.45 (no longer uniform
#: play's 1/2) and 0.25 (halfway between 1/2 and 0)
LEVELS = (0.45, 0.25)
HALF = LEVELS[1]
#: distinct colours, none grey (the bounds are grey-black)
COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
          "tab:olive", "tab:cyan", "navy"]  # fmt: skip
#: the eps of the regret curves' figure
CURVES_EPS = 0.1
Q_RANGE = norm.ppf(0.9) - norm.ppf(0.1)  # q_0.9 - q_0.1 of N(0, 1): d = 2.563 s


def cells(folder: Path) -> list[tuple[dict[str, str], Results]]:
    """``(cells.csv row, results)`` of every cell of a sweep's output folder."""
    with open(folder / "cells.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [(row, Results.load(folder / row["result"])) for row in rows]


def uniform_regret(res: Results) -> np.ndarray:
    """The expected regret of uniform play at ``res.steps`` (from the expected rewards)."""
    table = _expected_table(res)
    per_step = table.max(axis=1) - table.mean(axis=1)
    return np.cumsum(per_step)[res.steps - 1]


def _expected_table(res: Results) -> np.ndarray:
    env = make_env(res.config["env"])
    try:
        return np.asarray(env.unwrapped.expected_reward_table(), dtype=float)
    finally:
        env.close()


def second_half(curve: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Regret accumulated over the second half of the run, from a curve at ``steps``."""
    half = int(np.searchsorted(steps, steps[-1] // 2))
    return curve[-1] - curve[half]


def comparison(folder: Path) -> dict[str, Any]:
    """Per agent and eps: final regret (mean, SE), second-half regret over uniform play's;
    the uniform play, the lower bounds at T, the horizon."""
    out: dict[str, Any] = {"final": {}, "ratio": {}, "eps": []}
    for row, res in cells(folder):
        eps = float(row[EPS_KEY])
        out["eps"].append(eps)
        uni = uniform_regret(res)
        out["uniform"] = float(uni[-1])
        for label in res.labels:
            total = res.data[label]["total_regret"]
            out["final"][label, eps] = (
                float(total.mean()),
                float(total.std(ddof=1) / math.sqrt(total.size)),
            )
            late = second_half(res.data[label]["regret"].mean(axis=1), res.steps)
            out["ratio"][label, eps] = float(late / second_half(uni, res.steps))
        out["T"] = int(res.steps[-1])
        out["results"] = res if eps == CURVES_EPS else out.get("results")
        out["n_runs"] = res.n_runs
        bounds = bound_curves(res, [e for e in out["eps"] if e != INF] or [1.0])
        out["bounds"] = {(b.key, b.epsilon): float(b.values[-1]) for b in bounds}
        out["arm"] = res.config["arms"]["arm"]
    return out


def strongest(data: dict[str, Any]) -> str:
    """The strongest eps-global-DP lower bound that applies to the arms: Azize et al. 2025 for
    Bernoulli arms, Azize & Basu 2022 for clipped Gaussian ones (docs/private-bandits.md)."""
    return "azize_2025" if data["arm"] == "bernoulli" else "azize_basu_2022"


def plot_curves(res: Results) -> Figure:
    """Regret over time of the non-private agents and the literature's at eps =
    :data:`CURVES_EPS`, with the lower bounds at that eps
    (:func:`dpbandits.experiments.bounds.bound_curves`, the curves of
    ``plot_cumulative(..., bounds=True)``)."""
    fig = Figure(figsize=(8, 4.8), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    labels = [a for a in (*BASELINES, *LITERATURE) if a in res.labels]
    for i, label in enumerate(labels):
        ax.plot(res.steps, res.mean(label), color=(COLORS + COLORS[::-1])[i % 20], lw=1.3,
                ls="--" if label in BASELINES else "-", label=label)  # fmt: skip
    for j, b in enumerate(bound_curves(res, [CURVES_EPS])):
        ax.plot(res.steps, b.values, color="k", lw=1.8 - 0.3 * j, ls=["-", ":", "-.", "--"][j],
                label=b.label)  # fmt: skip
    ax.set_yscale("log")
    ax.set_ylim(1, None)
    ax.set_xlabel("step t")
    ax.set_ylabel(f"cumulative regret (mean of {res.n_runs} runs)")
    ax.set_title(f"Two Bernoulli arms (0.6, 0.4), eps = {CURVES_EPS:g}: the literature's agents "
                 "and the lower bounds", fontsize=10)  # fmt: skip
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    return fig


def table(name: str, data: dict[str, Any]) -> str:
    """The markdown table of final regret, mean +- SE, per agent and eps."""
    eps = sorted(data["eps"])
    head = "| agent | " + " | ".join("inf" if e >= INF else f"{e:g}" for e in eps) + " |"
    lines = [head, "|---" * (len(eps) + 1) + "|"]
    for agent in (*BASELINES, *LITERATURE, *APP_H):
        if (agent, eps[0]) not in data["final"]:
            continue
        cells_ = []
        for e in eps:
            m, se = data["final"][agent, e]
            r = data["ratio"][agent, e]
            mark = "**" if r < LEARNS else ""
            cells_.append(f"{mark}{m:,.0f} ± {se:,.0f}{mark}" + (" †" if r > RANDOM else ""))
        lines.append(f"| {SHOWN.get(agent, agent)} | " + " | ".join(cells_) + " |")
    lines.append(f"| *uniform play* | {data['uniform']:,.0f} |" + " |" * (len(eps) - 1))
    key = strongest(data)
    lines.append(f"| *lower bound: {BOUND_LABELS[key]}* | "
                 + " | ".join(f"{data['bounds'][key, e]:,.0f}" if e < INF else
                              f"{data['bounds']['lai_robbins', math.inf]:,.0f}" for e in eps)
                 + " |")  # fmt: skip
    return "\n".join(lines)


def threshold(folder: Path) -> tuple[dict[str, list[tuple[float, float, float, float, float]]],
                                     dict[str, dict[Any, Any]]]:  # fmt: skip
    """Per agent, the points ``(x, f, gap, s, eps_S)``: ``f`` the fraction of pulls of the worse
    arm over the second half, ``x = gap eps_S / d``; and per agent and level of
    :data:`LEVELS`, over the ``(gap, s)`` series, the ``x`` and ``eps_S`` where ``f`` first
    falls below the level (log-linear interpolation; median, min, max, number of series that
    reach it), and the smallest ``f`` of any cell."""
    points: dict[str, list[tuple[float, float, float, float, float]]] = {}
    for row, res in cells(folder):
        means = [float(v) for v in row["experiment.env_kwargs.means"].strip("[]").split(",")]
        gap, s = abs(means[0] - means[1]), float(row["experiment.env_kwargs.sds"])
        eps = float(row["agents.*.epsilon_select"])
        d = Q_RANGE * s
        half = res.steps[-1] - res.steps[int(np.searchsorted(res.steps, res.steps[-1] // 2))]
        for label in res.labels:
            late = second_half(res.data[label]["regret"].mean(axis=1), res.steps)
            points.setdefault(label, []).append((gap * eps / d, float(late / (gap * half)),
                                                 gap, s, eps))  # fmt: skip
    found: dict[str, dict[Any, Any]] = {}
    for label, pts in points.items():
        found[label] = {"min_f": min(p[1] for p in pts)}
        for level in LEVELS:
            xs, es = [], []
            for gap, s in sorted({(p[2], p[3]) for p in pts}):
                series = sorted((p for p in pts if p[2] == gap and p[3] == s),
                                key=lambda p: p[4])  # fmt: skip
                for a, b in zip(series, series[1:], strict=False):
                    if a[1] >= level > b[1]:
                        w = (a[1] - level) / (a[1] - b[1])
                        xs.append(math.exp((1 - w) * math.log(a[0]) + w * math.log(b[0])))
                        es.append(math.exp((1 - w) * math.log(a[4]) + w * math.log(b[4])))
                        break
            found[label][level] = None if not xs else {
                "median": float(np.median(xs)), "min": min(xs), "max": max(xs), "n": len(xs),
                "eps_median": float(np.median(es)), "eps_min": min(es), "eps_max": max(es),
                "series": len({(p[2], p[3]) for p in pts})}  # fmt: skip
    return points, found


def plot_threshold(points: dict[str, list[tuple[float, float, float, float, float]]],
                   found: dict[str, dict[Any, Any]]) -> Figure:  # fmt: skip
    fig = Figure(figsize=(13, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(points), sharey=True)
    gaps = sorted({p[2] for pts in points.values() for p in pts})
    sds = sorted({p[3] for pts in points.values() for p in pts})
    cmap = colormaps["viridis"]
    for ax, (label, pts) in zip(axes, points.items(), strict=True):
        for gap in gaps:
            for k, s in enumerate(sds):
                series = sorted((p for p in pts if p[2] == gap and p[3] == s), key=lambda p: p[4])
                ax.plot(
                    [p[0] for p in series],
                    [p[1] for p in series],
                    marker="os^"[k],
                    ms=3,
                    lw=0.8,
                    color=cmap(gaps.index(gap) / max(len(gaps) - 1, 1)),
                    label=f"gap {gap:g}, sd {s:g}" if label == "kRR" else None,
                )
        ax.axhline(0.5, color="k", ls=":", lw=1)
        ax.axhline(HALF, color="0.5", ls="--", lw=0.8)
        if found[label][HALF] is not None:
            ax.axvline(found[label][HALF]["median"], color="r", lw=1)
        ax.set_xscale("log")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("gap x eps_S / d")
    axes[0].set_ylabel("fraction of pulls of the worse arm, 2nd half")
    axes[0].legend(fontsize=6, ncol=1)
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="folder holding the six sweeps' outputs")
    parser.add_argument("--img", type=Path, default=Path("docs/img"))
    args = parser.parse_args(argv)
    args.img.mkdir(parents=True, exist_ok=True)
    out = sys.stdout
    for name in ENVS:
        if not (args.runs / name / "cells.csv").is_file():
            print(f"(no sweep {name} in {args.runs})", file=sys.stderr)
            continue
        data = comparison(args.runs / name)
        out.write(f"\n### {ENVS[name]}\n\n{table(name, data)}\n")
        if name == "private_bernoulli2" and data["results"] is not None:
            plot_curves(data["results"]).savefig(args.img / "private_curves.png", dpi=110)
    folder = args.runs / "private_threshold"
    if (folder / "cells.csv").is_file():
        points, found = threshold(folder)
        plot_threshold(points, found).savefig(args.img / "private_threshold.png", dpi=110)
        out.write(
            "\n### Thresholds: x = gap eps_S / d where the worse arm's share of the "
            "second half first falls below a level\n\n"
            "| agent | level | median x | range of x | series reaching it | median eps_S | "
            "range of eps_S | smallest share |\n|---|---|---|---|---|---|---|---|\n"
        )
        for label, t in found.items():
            for level in LEVELS:
                v = t[level]
                if v is None:
                    out.write(f"| {label} | {level:g} | never | | 0 | | | {t['min_f']:.2f} |\n")
                    continue
                out.write(
                    f"| {label} | {level:g} | {v['median']:.2g} | {v['min']:.2g} - "
                    f"{v['max']:.2g} | {v['n']} of {v['series']} | "
                    f"{v['eps_median']:.2g} | {v['eps_min']:.2g} - {v['eps_max']:.2g} | "
                    f"{t['min_f']:.2f} |\n"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
