"""Benchmark of the bandit-under-shift experiment (App. H, Fig. 9; issue 5 targets).

1. The full Fig. 9 configuration -- 7 agents x 100 replications x 50_000 steps -- through
   :func:`dpbandits.experiments.run` on all cores: wall time, CPU time and peak memory (largest
   resident set of this process and of its worker processes).
2. The same agents stepped one replication at a time through ``gymnasium.Env`` (a plain
   ``for t: a = agent.act(); env.step(a)`` loop with ``n_runs=1``) on a subsample of one
   replication (by default over the whole horizon), measured in the same run, expressed per
   agent-step (one agent, one replication, one step).
3. The speed-up per agent-step, engine vs the per-step Env loop, using CPU time on both sides
   (single-core work; the engine's wall-clock speed-up is larger by the number of cores used).

Targets: <= 30 s wall, <= 2 GB peak memory, >= 50x per agent-step.
Run:  python benchmarks/bench_shift.py [--runs 100] [--horizon 50000] [--loop-steps N]  (~1 min)
The machine's load is printed: other processes on the same cores slow every number down.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import gymnasium
import numpy as np

from dpbandits.experiments import run, shift_agents, shift_env


def env_loop_seconds_per_step(
    agent, n_steps: int, horizon: int, t_shift: int, seed: int = 0
) -> float:
    """CPU seconds per step of one replication through gymnasium.Env (the naive loop)."""
    env = gymnasium.make("dpbandits/TwoArmedShift-v0", horizon=horizon, t_shift=t_shift)
    env.reset(seed=seed)
    agent.reset(1, 2, horizon=horizon, rng=seed)
    reward = np.empty(1)
    t0 = time.process_time()
    for _ in range(n_steps):
        a = agent.act()
        _, r, _, _, _ = env.step(int(a[0]))
        reward[0] = r
        agent.update(a, reward.copy())
    return (time.process_time() - t0) / n_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--horizon", type=int, default=50_000)
    parser.add_argument("--t-shift", type=int, default=30_000)
    parser.add_argument(
        "--loop-steps",
        type=int,
        default=None,
        help="steps of the one-replication Env loop per agent (default: the whole horizon, "
        "so both sides cover the same phases of the run)",
    )
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    loop_steps = args.horizon if args.loop_steps is None else args.loop_steps

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}")
    agent_map = shift_agents()
    n_agents = len(agent_map)

    cpu0 = time.process_time()
    t0 = time.perf_counter()
    res = run(
        shift_env(t_shift=args.t_shift, horizon=args.horizon),
        agent_map,
        n_runs=args.runs,
        seed=0,
        progress=False,
        n_jobs=args.jobs,
    )
    wall = time.perf_counter() - t0
    self_usage = resource.getrusage(resource.RUSAGE_SELF)
    child_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_total = (time.process_time() - cpu0) + child_usage.ru_utime + child_usage.ru_stime
    peak_self_mb = self_usage.ru_maxrss / 1024
    peak_child_mb = child_usage.ru_maxrss / 1024
    agent_steps = n_agents * args.runs * args.horizon
    print(
        f"\n[1] engine: {n_agents} agents x {args.runs} runs x {args.horizon} steps "
        f"on {res.timing['n_jobs']} worker(s)"
    )
    print(f"    wall {wall:.1f} s (target <= 30 s); CPU {cpu_total:.1f} s")
    print(
        f"    peak RSS: main {peak_self_mb:.0f} MB, largest worker {peak_child_mb:.0f} MB; "
        f"all workers at once <= {peak_self_mb + res.timing['n_jobs'] * peak_child_mb:.0f} MB "
        "(target <= 2048 MB)"
    )

    print("\n[2] per agent-step (one agent, one replication, one step), microseconds (CPU)")
    print(f"    {'agent':6s} {'engine':>8s} {'Env loop':>9s} {'speed-up':>9s}")
    engine_total = loop_total = 0.0
    for label, agent in shift_agents().items():
        engine = res.timing["cpu_seconds"][label] / (args.runs * args.horizon)
        loop = env_loop_seconds_per_step(agent, loop_steps, args.horizon, args.t_shift)
        engine_total += engine
        loop_total += loop
        print(f"    {label:6s} {engine * 1e6:8.2f} {loop * 1e6:9.1f} {loop / engine:8.0f}x")
    print(
        f"    {'all':6s} {engine_total / n_agents * 1e6:8.2f} {loop_total / n_agents * 1e6:9.1f} "
        f"{loop_total / engine_total:8.0f}x   (target >= 50x)"
    )
    wall_per_step = wall / agent_steps
    print(
        f"\n[3] wall-clock per agent-step: engine {wall_per_step * 1e6:.2f} us "
        f"(all cores) vs Env loop {loop_total / n_agents * 1e6:.1f} us: "
        f"{loop_total / n_agents / wall_per_step:.0f}x"
    )
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
