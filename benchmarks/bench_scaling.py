"""Scaling benchmark of the engine: CPU per agent-step across T, R and K, fixed per-step cost.

Prints, for every built-in agent, the CPU time per agent-step (one agent, one replication, one
step; ``time.process_time`` of the task, minimum over ``--repeat`` repetitions) measured through
:func:`dpbandits.experiments.engine.run` in this process (``n_jobs=1``, one chunk holding all runs):

1. per agent at R = 100 (the Fig. 9 chunk), with a plain per-step Python loop over
   ``gymnasium.Env`` (``n_runs=1``) of the same agent measured in the same run, and their ratio;
2. the fixed per-step cost ``c0`` and the marginal cost per run ``c1`` of the model
   ``time per step = c0 + c1 R``, fitted on R = 1 and R = 100 (issue "fast at every scale");
3. the cost across T, R (10 .. 10 000) and K (2 .. 1000) for a few agents; a log-log slope of
   the *total* time above 1.15 between the two largest values is flagged as super-linear;
4. the peak resident memory of a summary-only run (``--big``: 10 000 runs x 100 000 steps of
   UCB, minutes of CPU; off by default);
5. with ``--baseline DIR`` (a checkout of another version, e.g. ``git worktree add /tmp/old
   <commit>``): before/after at R = 100 and R = 1 per agent, both versions measured the same
   way in fresh processes, alternating, minimum over ``--repeat`` -- the table of
   docs/performance.md.

Run:  python benchmarks/bench_scaling.py [--quick] [--repeat 3] [--only UCB,TS]
Other processes on the same cores slow every number down: the load average is printed, and
only ratios measured in the same run should be compared across machines.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_shift import env_loop_seconds_per_step  # this directory: python benchmarks/...

import agents
import dpbandits  # noqa: F401  (registers the environments)
from dpbandits.core.traits import traits_of
from dpbandits.experiments import run, shift_agents, shift_env

# the eps-global-DP agents of the literature (agents.make name and parameters); the others are
# shift_agents' labels. DP-UCB-INT at eps = 1/4, where its releases are lazy (f = 4).
LITERATURE_AGENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "DP-UCB": ("dp_ucb", {}),
    "DP-UCB-Bound": ("dp_ucb_bound", {}),
    "DP-UCB-Hybrid": ("dp_ucb_hybrid", {}),
    "DP-UCB-INT": ("dp_ucb_int", {"epsilon": 0.25}),
    "DP-SE": ("dp_se", {}),
    "KL-UCB": ("klucb", {}),
    "AdaP-UCB": ("adap_ucb", {}),
    "AdaP-KLUCB": ("adap_klucb", {}),
    "DP-KLUCB": ("dp_klucb", {}),
    "DP-IMED": ("dp_imed", {}),
    "DP-TS": ("dp_ts", {}),
}
ALL_AGENTS = ("UCB", "TS", "kRR", "RNM", "RS", "GEM", "mGEM",
              "UCB1", "TS-Beta", "SW-UCB", "D-UCB", "Exp3") + tuple(LITERATURE_AGENTS)  # fmt: skip


def bench_agents(label: str) -> dict[str, Any]:
    """``{label: agent}``: a literature agent, or one of :func:`shift_agents`' labels."""
    if label in LITERATURE_AGENTS:
        name, params = LITERATURE_AGENTS[label]
        return {label: agents.make(name, **params)}
    return shift_agents([label])


def bench_env(label: str, horizon: int) -> dict[str, Any]:
    """Fig. 9's shift environment, with Bernoulli arms (the same means) for an agent defined for
    Bernoulli bandits only (DP-KLUCB, DP-IMED)."""
    if traits_of(bench_agents(label)[label]).rewards != "bernoulli":
        return shift_env(t_shift=int(horizon * 0.6), horizon=horizon)
    segments = [(0, [0.2, 0.8]), (int(horizon * 0.6), [0.8, 0.2])]
    return {"id": "dpbandits/PiecewiseBandit-v0", "segments": segments, "arm": "bernoulli",
            "horizon": horizon}  # fmt: skip


def stationary_env(k: int, horizon: int) -> dict[str, Any]:
    """A stationary K-armed clipped-Gaussian bandit with means spread over [0.2, 0.8]."""
    means = np.linspace(0.2, 0.8, k).tolist()
    sds = [0.2] * k
    return {"id": "dpbandits/PiecewiseBandit-v0", "segments": [(0, means, sds)],
            "horizon": horizon}  # fmt: skip


def r_cell(runs: int, horizon: int) -> tuple[dict[str, Any], int, int]:
    """R runs of about ``100 * horizon / R`` steps: the same number of agent-steps."""
    h = max(horizon * 100 // runs, 500)
    return shift_env(int(h * 0.6), h), runs, h


def engine_ns(label: str, env: dict[str, Any], runs: int, horizon: int, repeat: int) -> float:
    """Minimum over ``repeat`` runs of the task CPU time per agent-step, in ns."""
    best = math.inf
    for i in range(repeat):
        res = run(env, bench_agents(label), n_runs=runs, seed=i, horizon=horizon,
                  progress=False, trace=False, n_jobs=1, chunk_size=runs)  # fmt: skip
        best = min(best, res.timing["cpu_seconds"][label] / (runs * horizon))
    return best * 1e9


def loop_ns(label: str, horizon: int, steps: int, repeat: int) -> float:
    """CPU ns per step of the plain loop ``a = agent.act(); env.step(a); agent.update`` (the
    loop of bench_shift.py, a fresh agent each repetition), minimum over ``repeat``."""
    best = min(
        env_loop_seconds_per_step(bench_agents(label)[label], steps, horizon,
                                  int(horizon * 0.6), seed=i)
        for i in range(repeat)
    )  # fmt: skip
    return best * 1e9


_CHILD = """
import json, sys
from dpbandits.experiments import run, shift_agents, shift_env
label, runs, horizon, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
res = run(shift_env(t_shift=int(horizon * 0.6), horizon=horizon), shift_agents([label]),
          n_runs=runs, seed=seed, progress=False, trace=False, n_jobs=1, chunk_size=runs)
print(json.dumps(res.timing["cpu_seconds"][label] / (runs * horizon)))
"""


def child_ns(tree: str, label: str, runs: int, horizon: int, seed: int) -> float:
    """CPU ns per agent-step of one engine run in a fresh process importing ``tree``."""
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", _CHILD, label, str(runs), str(horizon),
                          str(seed)], env=env, cwd=tree, capture_output=True, text=True,
                         check=True)  # fmt: skip
    return float(json.loads(out.stdout.strip().splitlines()[-1])) * 1e9


def compare(baseline: str, labels: list[str], horizon: int, repeat: int) -> None:
    """Before/after per agent at R = 100 and R = 1, alternating the two trees."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(f"\n[5] before ({baseline}) / after ({here}); CPU per agent-step, min of {repeat}")
    print(
        f"    {'agent':8s} {'R=100 before':>12s} {'after':>7s} {'x':>5s}   "
        f"{'R=1 us before':>13s} {'after':>7s} {'x':>5s}   {'c0 us before':>12s} {'after':>6s}"
    )
    for label in labels:
        best: dict[tuple[str, int], float] = {}
        for i in range(repeat):
            for tree in (baseline, here):
                for runs, h in ((100, horizon), (1, max(horizon // 2, 5000))):
                    v = child_ns(tree, label, runs, h, i)
                    best[tree, runs] = min(best.get((tree, runs), math.inf), v)
        b100, a100 = best[baseline, 100], best[here, 100]
        b1, a1 = best[baseline, 1], best[here, 1]
        c0b = b1 - max((b100 * 100 - b1) / 99, 0.0)
        c0a = a1 - max((a100 * 100 - a1) / 99, 0.0)
        print(
            f"    {label:8s} {b100:12.0f} {a100:7.0f} {b100 / a100:5.2f}   {b1 / 1e3:13.2f} "
            f"{a1 / 1e3:7.2f} {b1 / a1:5.2f}   {c0b / 1e3:12.2f} {c0a / 1e3:6.2f}",
            flush=True,
        )


def slope(xs: list[float], ys: list[float]) -> float:
    """Log-log slope of total cost between the two largest x."""
    return math.log(ys[-1] / ys[-2]) / math.log(xs[-1] / xs[-2])


def sweep(
    label: str,
    name: str,
    values: list[int],
    cell: Callable[[int], tuple[dict[str, Any], int, int]],
    repeat: int,
) -> None:
    """CPU ns per agent-step at each value; ``cell(v) -> (env, runs, horizon)``."""
    ns = []
    for v in values:
        env, runs, horizon = cell(v)
        ns.append(engine_ns(label, env, runs, horizon, repeat))
    # T and R: the number of agent-steps grows like v, so the total cost is ns x v; K: the
    # work of one agent-step may grow like K (it is linear if ns itself grows at most like K)
    totals = ns if name == "K" else [n * v for v, n in zip(values, ns, strict=True)]
    s = slope([float(v) for v in values], totals)
    flag = "  SUPER-LINEAR" if s > 1.15 else ""
    cells = "  ".join(f"{v}: {n:7.0f}" for v, n in zip(values, ns, strict=True))
    what = "per agent-step" if name == "K" else "total"
    print(f"    {name:4s} {cells}   (log-log slope of {what} {s:.2f}){flag}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=",".join(ALL_AGENTS))
    parser.add_argument("--quick", action="store_true", help="fewer points, shorter runs")
    parser.add_argument(
        "--big",
        action="store_true",
        help="also run 10 000 runs x 100 000 steps of UCB (peak memory)",
    )
    parser.add_argument("--no-sweeps", action="store_true")
    parser.add_argument("--no-table", action="store_true", help="skip [1] and [2]")
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="DIR",
        help="another version's source tree: print the before/after table",
    )
    args = parser.parse_args()
    labels = [s.strip() for s in args.only.split(",") if s.strip()]
    T = 5000 if args.quick else args.horizon
    rep = 1 if args.quick else args.repeat
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}; "
          f"T = {T}, min of {rep}", flush=True)  # fmt: skip
    env = shift_env(t_shift=int(T * 0.6), horizon=T)

    print("\n[1] CPU ns per agent-step at R = 100; plain per-step Env loop (R = 1); ratio")
    print("[2] fixed per-step cost c0 (us) and marginal cost per run c1 (ns): t = c0 + c1 R")
    print(f"    {'agent':13s} {'R=100':>8s} {'loop':>9s} {'ratio':>7s} {'R=1 us':>8s} "
          f"{'c0 us':>7s} {'c1 ns':>7s}")  # fmt: skip
    loop_steps = min(T, 5000)
    for label in [] if args.no_table else labels:
        env_l = bench_env(label, T)
        e100 = engine_ns(label, env_l, 100, T, rep)
        e1 = engine_ns(label, env_l, 1, T, rep)
        # (the plain loop runs Fig. 9's Gaussian arms, which a Bernoulli-only agent refuses)
        lp = loop_ns(label, T, loop_steps, rep) if env_l["id"] == env["id"] else math.nan
        c1 = max((e100 * 100 - e1) / 99, 0.0)
        c0 = e1 - c1
        print(f"    {label:13s} {e100:8.0f} {lp:9.0f} {lp / e100:6.0f}x {e1 / 1e3:8.2f} "
              f"{c0 / 1e3:7.2f} {c1:7.0f}", flush=True)  # fmt: skip

    if not args.no_sweeps:
        sweep_agents = [a for a in ("UCB", "TS", "mGEM", "RS") if a in labels]
        print("\n[3] CPU ns per agent-step; a total-cost slope > 1.15 is flagged")
        ts = [2000, 8000, 32000] if args.quick else [5000, 20000, 80000]
        rs = [10, 100, 1000] if args.quick else [10, 100, 1000, 10000]
        ks = [2, 10, 100] if args.quick else [2, 10, 100, 1000]
        for label in sweep_agents:
            print(f"  {label}")
            sweep(label, "T", ts, lambda t: (shift_env(int(t * 0.6), t), 100, t), rep)
            sweep(label, "R", rs, lambda r: r_cell(r, T), rep)
            sweep(label, "K", ks, lambda k: (stationary_env(k, T // 2), 100, T // 2), rep)

    if args.baseline:
        compare(os.path.abspath(args.baseline), labels, T, rep)

    if args.big:
        t0 = time.perf_counter()
        res = run(shift_env(60_000, 100_000), shift_agents(["UCB"]), n_runs=10_000, seed=0,
                  progress=False, trace=False)  # fmt: skip
        wall = time.perf_counter() - t0
        print(
            f"\n[4] 10 000 runs x 100 000 steps of UCB: wall {wall:.0f} s, "
            f"mean regret {res.data['UCB']['total_regret'].mean():.1f}"
        )
    self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\npeak RSS: this process {self_mb:.0f} MB, largest worker {child_mb:.0f} MB")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
