"""Private learning under shift: targets of the eps-DP agents for change (docs/private-shift.md).

Not part of the test suite. Every agent plays the same runs (one seed, one engine call per
setting), so the ratios compare like with like:

1. four settings at eps = 1, each agent's mean pseudo-regret at T (± SE), the non-private
   anchors beside them:
   - ``fig9``: ``dpbandits/TwoArmedShift-v0`` with its defaults (App. H, Fig. 9);
   - ``fig9-bernoulli``: the same shift on Bernoulli arms, means (0.2, 0.8) swapped at 30 000;
   - ``piecewise-k5``: five Bernoulli arms, T = 100 000, four change points where the best arm
     changes (gaps >= 0.2), every one a drop of the best arm;
   - ``silent-k5``: five Bernoulli arms, T = 100 000, four change points, two of them *silent*
     (an arm the agent does not play rises above the best one, which stays): only forced
     exploration can see them; no target, the hard case of docs/private-shift.md;
   - ``no-change``: Bernoulli (0.3, 0.7), T = 20 000;
   and the targets: the best private shift agent's regret at most a third of the best stationary
   private agent's (fig9, fig9-bernoulli, piecewise-k5); with no change, each shift agent's
   regret at most 1.5 times AdaP-UCB's, and the most restarts (false alarms) in a run;
2. ``--sweep``: regret against eps (0.1 .. 10) of the shift agents and the non-private anchors
   on fig9-bernoulli and piecewise-k5: ``--figure PATH`` draws it (docs/img/private_shift_eps.png);
3. speed: CPU nanoseconds per agent-step of each shift agent's block path (``play``) at R = 100
   and R = 1, K = 2 and 5, and UCB's in the same run (the ratio is what carries across
   machines; the targets are <= 200 ns at R = 100 and <= 2 us at R = 1).

Run:  python benchmarks/bench_private_shift.py [--runs 20] [--sweep] [--figure PATH] [--json PATH]
(``--replot JSON --figure PATH`` redraws the figure of an earlier run.)
Other processes on the same cores slow the timings down (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any

import numpy as np

import agents
from dpbandits.core.traits import traits_of
from dpbandits.experiments import run

PIECEWISE_K5 = [
    [0, [0.9, 0.7, 0.5, 0.3, 0.1]],
    [20_000, [0.3, 0.9, 0.1, 0.5, 0.7]],
    [40_000, [0.7, 0.1, 0.9, 0.3, 0.5]],
    [60_000, [0.1, 0.5, 0.3, 0.9, 0.7]],
    [80_000, [0.5, 0.3, 0.7, 0.1, 0.9]],
]
SILENT_K5 = [
    [0, [0.5, 0.3, 0.3, 0.3, 0.1]],
    [20_000, [0.5, 0.8, 0.3, 0.3, 0.1]],
    [40_000, [0.5, 0.2, 0.3, 0.3, 0.1]],
    [60_000, [0.5, 0.2, 0.3, 0.8, 0.1]],
    [80_000, [0.5, 0.2, 0.3, 0.2, 0.1]],
]
SETTINGS: dict[str, dict[str, Any]] = {
    "fig9": {"id": "dpbandits/TwoArmedShift-v0"},
    "fig9-bernoulli": {"id": "dpbandits/PiecewiseBandit-v0", "arm": "bernoulli",
                       "horizon": 50_000, "segments": [[0, [0.2, 0.8]], [30_000, [0.8, 0.2]]]},
    "piecewise-k5": {"id": "dpbandits/PiecewiseBandit-v0", "arm": "bernoulli",
                     "horizon": 100_000, "segments": PIECEWISE_K5},
    "silent-k5": {"id": "dpbandits/PiecewiseBandit-v0", "arm": "bernoulli",
                  "horizon": 100_000, "segments": SILENT_K5},
    "no-change": {"id": "dpbandits/KArmedBernoulli-v0", "means": [0.3, 0.7], "horizon": 20_000},
}  # fmt: skip
GAUSSIAN = ("fig9",)
SHIFT = ("cd_adap_ucb", "cd_adap_klucb", "cd_dp_klucb", "cd_dp_imed",
         "sw_adap_ucb", "sw_adap_klucb", "sw_dp_klucb", "sw_dp_imed")  # fmt: skip
STATIONARY = ("adap_ucb", "adap_klucb", "dp_klucb", "dp_imed", "dp_ts", "dp_ucb_hybrid", "dp_se")
#: non-private references; the change-detection anchors are added when registered
ANCHORS = ("ucb", "klucb", "sw_ucb", "glr_klucb", "cusum_ucb", "m_ucb")
TARGET_SETTINGS = ("fig9", "fig9-bernoulli", "piecewise-k5")


def agent_map(setting: str, eps: float, with_stationary: bool = True) -> dict[str, Any]:
    """``{name: config}`` of the agents run on ``setting`` (the Bernoulli-only ones left out
    of the Gaussian setting)."""
    names = list(SHIFT) + (list(STATIONARY) if with_stationary else [])
    out: dict[str, Any] = {}
    for name in names:
        cls = agents.describe(name).cls
        if setting in GAUSSIAN and traits_of(cls).rewards == "bernoulli":
            continue
        out[name] = {"kind": name, "epsilon": eps}
    for name in ANCHORS:
        if name in agents.available():
            cls = agents.describe(name).cls
            if setting in GAUSSIAN and traits_of(cls).rewards == "bernoulli":
                continue
            out[name] = {"kind": name}
    return out


def regret_table(runs: int, eps: float = 1.0) -> dict[str, Any]:
    """Regret at T (mean, SE) and restarts of every agent on every setting."""
    table: dict[str, Any] = {}
    for setting, env in SETTINGS.items():
        t0 = time.time()
        res = run(env, agent_map(setting, eps), n_runs=runs, seed=0, progress=False, trace=False)
        rows = {}
        for label in res.labels:
            x = res.data[label]["total_regret"]
            report = res.privacy.get(label) or {}
            rows[label] = {"mean": float(x.mean()), "se": float(x.std(ddof=1) / math.sqrt(x.size)),
                           "restarts": report.get("restarts_max")}  # fmt: skip
        table[setting] = rows
        print(f"[{setting}: {time.time() - t0:.0f} s]", flush=True)
    return table


def targets(table: dict[str, Any]) -> list[str]:
    """The lines that say whether each target holds."""
    lines = []
    for setting in TARGET_SETTINGS:
        rows = table[setting]
        shift = min((n for n in rows if n in SHIFT), key=lambda n: rows[n]["mean"])
        stat = min((n for n in rows if n in STATIONARY), key=lambda n: rows[n]["mean"])
        ratio = rows[shift]["mean"] / rows[stat]["mean"]
        lines.append(f"{setting}: best shift agent {shift} {rows[shift]['mean']:,.0f} / best "
                     f"stationary {stat} {rows[stat]['mean']:,.0f} = {ratio:.3f} "
                     f"({'OK' if ratio <= 1 / 3 else 'MISSED'}: target <= 1/3)")  # fmt: skip
    rows = table["no-change"]
    ref = rows["adap_ucb"]["mean"]
    for name in SHIFT:
        ratio = rows[name]["mean"] / ref
        lines.append(f"no-change: {name} {rows[name]['mean']:,.0f} / AdaP-UCB {ref:,.0f} = "
                     f"{ratio:.2f} ({'OK' if ratio <= 1.5 else 'MISSED'}: target <= 1.5); "
                     f"most restarts in a run {rows[name]['restarts']}")  # fmt: skip
    return lines


def markdown(table: dict[str, Any]) -> str:
    settings = list(table)
    names = list(dict.fromkeys(n for s in settings for n in table[s]))
    head = "| agent | " + " | ".join(settings) + " |"
    lines = [head, "|---" * (len(settings) + 1) + "|"]
    for name in names:
        cells = []
        for s in settings:
            row = table[s].get(name)
            cells.append("-" if row is None else f"{row['mean']:,.0f} ± {row['se']:,.0f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep(runs: int, epsilons: list[float]) -> dict[str, Any]:
    """Regret at T against eps on fig9-bernoulli and piecewise-k5 (shift agents), with the
    non-private anchors (run once)."""
    out: dict[str, Any] = {}
    for setting in ("fig9-bernoulli", "piecewise-k5"):
        env = SETTINGS[setting]
        curves: dict[str, list[float]] = {}
        for eps in epsilons:
            res = run(env, agent_map(setting, eps, with_stationary=False) | {
                "adap_klucb": {"kind": "adap_klucb", "epsilon": eps}},
                n_runs=runs, seed=0, progress=False, trace=False)  # fmt: skip
            for label in res.labels:
                curves.setdefault(label, []).append(float(res.data[label]["total_regret"].mean()))
        out[setting] = curves
        print(f"[sweep {setting} done]", flush=True)
    return out


def oracle_references(setting: str, epsilons: list[float]) -> dict[str, list[float]]:
    """The stationary lower bounds summed over the segments, ``sum_s c(means_s) ln(T_s)``: the
    asymptotic bound of an agent told the change points, restarting at each -- Lai & Robbins
    (no privacy) and Azize et al. (2025, Theorem 1) at each eps. A reference curve, not a
    bound for piecewise-stationary bandits (none is known under privacy)."""
    from dpbandits.theory import azize_2025, lai_robbins

    env = SETTINGS[setting]
    starts = [int(seg[0]) for seg in env["segments"]] + [int(env["horizon"])]
    means = [seg[1] for seg in env["segments"]]
    spans = [b - a for a, b in zip(starts[:-1], starts[1:], strict=True)]
    plain = sum(float(lai_robbins(m, n)) for m, n in zip(means, spans, strict=True))
    private = [sum(float(azize_2025(m, eps, n)) for m, n in zip(means, spans, strict=True))
               for eps in epsilons]  # fmt: skip
    return {"oracle-restart Lai-Robbins (not private)": [plain] * len(epsilons),
            "oracle-restart Azize et al. 2025": private}  # fmt: skip


def figure(sw: dict[str, Any], epsilons: list[float], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(sw), figsize=(6.5 * len(sw), 5.6))
    anchor_colors = dict(zip(ANCHORS, ("black", "grey", "tab:brown", "tab:olive", "tab:cyan",
                                       "tab:pink"), strict=True))  # fmt: skip
    for ax, (setting, curves) in zip(np.atleast_1d(axes), sw.items(), strict=True):
        for label, ys in oracle_references(setting, epsilons).items():
            ax.plot(epsilons, ys, ls=":", lw=2, color="black" if "Azize" in label else "grey",
                    label=label)  # fmt: skip
        for label, ys in curves.items():
            if label in ANCHORS:  # a non-private anchor: one value, drawn across
                ax.axhline(ys[0], ls="--", lw=1.2, color=anchor_colors[label],
                           label=f"{label} (not private)")  # fmt: skip
            else:
                ax.plot(epsilons, ys, marker="o" if label.startswith("cd_") else "s",
                        ls="-" if label.startswith("cd_") else "-.", label=label)  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("eps")
        ax.set_ylabel("regret at T")
        ax.set_title(setting)
    handles, labels = np.atleast_1d(axes)[-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8)
    fig.subplots_adjust(bottom=0.3)
    fig.savefig(path, dpi=110)
    print(f"figure: {path}")


def false_alarms(runs: int, epsilons: list[float]) -> dict[str, Any]:
    """Restarts without any change (false alarms): stationary Bernoulli bandits, K = 2 (0.3, 0.7)
    and K = 5 (0.9, 0.7, 0.5, 0.3, 0.1), T = 100 000, every CD agent at each eps: the mean
    number of restarts per run and the fraction of runs with at least one."""
    out: dict[str, Any] = {}
    T, block = 100_000, 4096
    for means in ([0.3, 0.7], [0.9, 0.7, 0.5, 0.3, 0.1]):
        p = np.repeat(np.asarray(means), runs)  # column a * R + r
        for eps in epsilons:
            for name in (n for n in SHIFT if n.startswith("cd_")):
                agent = agents.make(name, epsilon=eps)
                agent.reset(runs, len(means), rng=0)
                rng = np.random.default_rng(1)
                actions = np.empty((block, runs), dtype=np.int64)
                rewards = np.empty((block, runs))
                for t in range(0, T, block):
                    m = min(block, T - t)
                    rows = (rng.random((m, p.size)) < p).astype(np.float64)
                    agent.play(rows, actions[:m], rewards[:m])
                restarts = agent.restarts
                out[f"K={len(means)} eps={eps:g} {name}"] = {
                    "restarts_per_run": float(restarts.mean()),
                    "runs_with_a_restart": float((restarts > 0).mean())}  # fmt: skip
    return out


def tune(runs: int) -> dict[str, Any]:
    """The constants' effect, one changed at a time from the defaults (cap ``max(16, 2
    minimum_cap)``, forced 0.01, window 64, delta 0.01): CD-AdaP-KLUCB's regret at eps = 0.1
    and 1 on fig9-bernoulli, piecewise-k5, silent-k5 and no-change."""
    from agents.private_change import minimum_cap

    variants: dict[str, dict[str, Any]] = {
        "defaults": {}, "cap x 1/2": {"cap": 0.5}, "cap x 4": {"cap": 4.0},
        "forced 0.005": {"forced": 0.005}, "forced 0.02": {"forced": 0.02},
        "forced 0.05": {"forced": 0.05}, "window 16": {"window": 16},
        "delta 0.1": {"delta": 0.1}, "delta 0.001": {"delta": 0.001},
    }  # fmt: skip
    out: dict[str, Any] = {}
    for eps in (0.1, 1.0):
        for setting in ("fig9-bernoulli", "piecewise-k5", "silent-k5", "no-change"):
            ags = {}
            for label, params in variants.items():
                params = dict(params)
                if "cap" in params:  # a multiple of the default
                    default = max(16, 2 * minimum_cap(eps, 0.01, 64))
                    params["cap"] = math.ceil(params["cap"] * default)
                ags[label] = {"kind": "cd_adap_klucb", "epsilon": eps, **params}
            res = run(SETTINGS[setting], ags, n_runs=runs, seed=0, progress=False, trace=False)
            for label in res.labels:
                out[f"eps={eps:g} {setting} {label}"] = float(
                    res.data[label]["total_regret"].mean())
            print(f"[tune eps={eps:g} {setting} done]", flush=True)
    return out


def speed(repeat: int = 3) -> dict[str, Any]:
    """CPU ns per agent-step of ``play`` (R = 100 and R = 1, K = 2 and 5), UCB beside."""
    out: dict[str, Any] = {}
    rng = np.random.default_rng(0)
    for K in (2, 5):
        means = np.linspace(0.2, 0.8, K)
        for R, T in ((100, 20_000), (1, 200_000)):
            table = (rng.random((T, K)) < means).astype(np.float64)
            rows = np.repeat(table, R, axis=1)  # column a * R + r
            for name in ("ucb",) + SHIFT:
                best = math.inf
                for _ in range(repeat):
                    agent = agents.make(name) if name == "ucb" else agents.make(name, epsilon=1.0)
                    agent.reset(R, K, horizon=T, rng=1)
                    actions = np.empty((T, R), dtype=np.int64)
                    rewards = np.empty((T, R))
                    agent.play(rows[:100], actions[:100], rewards[:100])  # compile, warm up
                    t0 = time.process_time()
                    step = 2048
                    for i in range(100, T, step):
                        j = min(i + step, T)
                        agent.play(rows[i:j], actions[i:j], rewards[i:j])
                    best = min(best, (time.process_time() - t0) / ((T - 100) * R) * 1e9)
                out[f"K={K} R={R} {name}"] = best
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sweep", action="store_true", help="regret against eps too")
    parser.add_argument("--sweep-runs", type=int, default=10)
    parser.add_argument("--figure", default=None, help="where to draw the sweep's figure")
    parser.add_argument("--no-table", action="store_true", help="skip the eps = 1 table")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--tune", type=int, default=0, metavar="RUNS",
                        help="also vary the constants one at a time, on RUNS runs")
    parser.add_argument("--false-alarms", type=int, default=0, metavar="RUNS",
                        help="also count restarts without a change, on RUNS runs")
    parser.add_argument("--json", default=None, help="write every number to this file")
    parser.add_argument("--replot", default=None, metavar="JSON",
                        help="only draw --figure from the sweep of an earlier --json")
    args = parser.parse_args()
    if args.replot:
        with open(args.replot) as fh:
            sw = dict(json.load(fh)["sweep"])
        epsilons = sw.pop("epsilons")
        figure(sw, epsilons, args.figure or "private_shift_eps.png")
        return
    print(f"load average {os.getloadavg()}")
    result: dict[str, Any] = {}
    if not args.no_table:
        table = regret_table(args.runs)
        result["table"] = table
        print(markdown(table))
        print("\n".join(targets(table)))
    if args.sweep:
        epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
        sw = sweep(args.sweep_runs, epsilons)
        result["sweep"] = {"epsilons": epsilons, **sw}
        for setting, curves in sw.items():
            print(setting)
            for label, ys in {**curves, **oracle_references(setting, epsilons)}.items():
                print(f"  {label:16s} " + "  ".join(f"{y:9,.0f}" for y in ys))
        if args.figure:
            figure(sw, epsilons, args.figure)
    if args.tune:
        tn = tune(args.tune)
        result["tune"] = tn
        for key, v in tn.items():
            print(f"{key:44s} {v:9,.0f}")
    if args.false_alarms:
        fa = false_alarms(args.false_alarms, [0.1, 1.0, 10.0])
        result["false_alarms"] = fa
        for key, v in fa.items():
            print(f"{key:32s} restarts per run {v['restarts_per_run']:.3f}, runs with a "
                  f"restart {v['runs_with_a_restart']:.2f}")  # fmt: skip
    if not args.no_speed:
        sp = speed()
        result["speed_ns"] = sp
        for key, ns in sp.items():
            print(f"{key:28s} {ns:8.1f} ns per agent-step")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
