"""Benchmark of the continual-release layer (App. H); not part of the test suite.

Prints, all measured in this run:

1. time to draw the hybrid noise table for R=100, K=2, n_max=50_000 (vectorised) against the
   streaming :class:`HybridMechanism` advancing the same 200 streams 50_000 times;
2. per-step cost of ``PrivateMeans.update + means`` and ``WindowedSensitivity.update`` at
   R=100, K=2 over a 50_000-step bandit-like action sequence;
3. the agents' hot path ``PrivateMeans.update_flat + means(copy=False)`` (compiled kernels,
   ``dpbandits.core.jit``) at R in {1, 100} and K in {2, 10}: CPU ns per step and per row, block
   refills included, next to one tiny numpy call; and the private agent
   ``PrivateAgent(selector="krr")`` through ``dpbandits.experiments.run`` on the two-armed
   shift (T = 20_000) at R = 1 and R = 100;
4. RMSE of the released sum at n = 50_000 (and averaged over all n <= 50_000) for the hybrid
   mechanism, the binary mechanism with known T = 50_000, and naive fresh Laplace per release
   with eps/T (``Lap(T b / eps)``): Monte Carlo next to the closed forms.

Usage: ``python benchmarks/bench_continual.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpbandits.continual import HybridMechanism, PrivateMeans, binary_noise, hybrid_noise
from dpbandits.quantiles import WindowedSensitivity


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def hybrid_var(n: int, eps: float = 1.0, b: float = 1.0) -> float:
    k = n.bit_length() - 1
    return (k + 1) * 2 * (2 * b / eps) ** 2 + bin(n - 2**k).count("1") * 2 * (2 * k * b / eps) ** 2


def binary_var(n: int, horizon: int, eps: float = 1.0, b: float = 1.0) -> float:
    return bin(n).count("1") * 2 * (horizon.bit_length() * b / eps) ** 2


def cpu_per_call(fn, calls: int) -> float:
    """CPU seconds per call of ``fn(i)``, i = 0..calls-1 (process time: robust to load)."""
    t0 = time.process_time()
    for i in range(calls):
        fn(i)
    return (time.process_time() - t0) / calls


def means_step(runs: int, arms: int, n_max: int | None, flat: np.ndarray, x: np.ndarray):
    """Step ``i`` of a fresh PrivateMeans: ``update_flat(flat[i], x[i])``, ``means(copy=False)``."""
    pm = PrivateMeans(runs, arms, 1.0, n_max=n_max, rng=2)

    def step(i: int) -> None:
        pm.update_flat(flat[i], x[i])
        pm.means(copy=False)

    return step


def hot_path(quick: bool) -> None:
    steps = 5_000 if quick else 20_000
    print(f"== 3. the agents' hot path, {steps} steps (CPU time)")
    rng = np.random.default_rng(5)
    ref = np.zeros(2)
    t_op = cpu_per_call(lambda i: np.add(ref, 1.0), steps)
    print(f"  one tiny numpy call (reference)   : {t_op * 1e9:8.0f} ns")
    for runs in (1, 100):
        for arms in (2, 10):
            # bandit-like: one arm most of the time; every arm pulled now and then
            acts = np.where(
                rng.random((steps, runs)) < 0.8, 0, rng.integers(0, arms, (steps, runs))
            )
            flat = acts + np.arange(runs) * arms
            x = rng.random((steps, runs))
            for n_max in (None, steps):
                cpu_per_call(means_step(runs, arms, n_max, flat, x), min(steps, 200))  # compile
                t = cpu_per_call(means_step(runs, arms, n_max, flat, x), steps)
                print(
                    f"  R={runs:<3d} K={arms:<2d} n_max={str(n_max):5s} update_flat+means: "
                    f"{t * 1e9:8.0f} ns/step {t * 1e9 / runs:7.0f} ns/row "
                    f"({t / t_op:5.1f} numpy calls)"
                )
    import gymnasium as gym

    import agents
    import envs  # noqa: F401  (registers the environments)
    from dpbandits.experiments import run

    horizon = 5_000 if quick else 20_000
    env = gym.make("dpbandits/TwoArmedShift-v0", horizon=horizon, t_shift=horizon * 3 // 5)
    for runs in (1, 100):
        best = np.inf
        for _ in range(2):  # the first run may compile
            t0 = time.process_time()
            run(env, {"krr": agents.PrivateAgent(selector="krr")}, n_runs=runs, seed=0,
                progress=False, n_jobs=1)  # fmt: skip
            best = min(best, time.process_time() - t0)
        print(
            f"  private agent (krr) through run, R={runs:<3d}: {best / horizon * 1e6:8.2f} us/step "
            f"{best / horizon / runs * 1e9:7.0f} ns/agent-step"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and samples")
    args = parser.parse_args()
    n_max, runs, arms = 50_000, 100, 2
    steps = 10_000 if args.quick else 50_000

    print("== 1. hybrid noise table, R=100, K=2, n_max=50_000")
    t_table = best_of(lambda: hybrid_noise(n_max, 1.0, size=(runs, arms), rng=0))
    zeros = np.zeros((runs, arms))
    HybridMechanism(1.0, size=(runs, arms), rng=0).add(zeros)  # load the compiled step first
    mech = HybridMechanism(1.0, size=(runs, arms), rng=0)
    t0 = time.perf_counter()
    for _ in range(steps):
        mech.add(zeros)
    t_stream = (time.perf_counter() - t0) * n_max / steps
    print(
        f"  vectorised table      : {t_table:8.3f} s  "
        f"({t_table / (runs * arms * n_max) * 1e9:.1f} ns/entry)"
    )
    print(
        f"  streaming object      : {t_stream:8.3f} s  (extrapolated from {steps} steps)"
        if steps < n_max
        else f"  streaming object      : {t_stream:8.3f} s"
    )
    print(f"  speed-up              : {t_stream / t_table:8.1f} x")

    print(f"== 2. per-step cost at R={runs}, K={arms}, {steps} steps")
    rng = np.random.default_rng(1)
    # bandit-like: arm 0 most of the time, arm 1 now and then
    actions = (rng.random((steps, runs)) < 0.1).astype(np.int64)
    rewards = np.clip(rng.normal(0.5, 0.2, size=(steps, runs)), 0.0, 1.0)

    def per_step(make, means: bool) -> float:
        """Seconds per step of update (+ means), after a short warm-up on another object."""
        for timed in (False, True):
            obj = make()
            n = steps if timed else min(steps, 2_000)
            t0 = time.perf_counter()
            for t in range(n):
                obj.update(actions[t], rewards[t])
                if means:
                    obj.means()
        return (time.perf_counter() - t0) / steps

    t_pm = per_step(lambda: PrivateMeans(runs, arms, 1.0, rng=2), True)
    t_pm_known = per_step(lambda: PrivateMeans(runs, arms, 1.0, n_max=steps, rng=2), True)
    t_ws = per_step(lambda: WindowedSensitivity(runs, arms, 1.0, rng=3), False)

    class StreamingPeer:
        """The same private means from the streaming HybridMechanism with a mask (peer)."""

        def __init__(self) -> None:
            self.mech = HybridMechanism(1.0, size=(runs, arms), rng=4)
            self.onehot = np.eye(arms, dtype=bool)

        def update(self, a: np.ndarray, r: np.ndarray) -> None:
            self.rel = self.mech.add(r[:, None], mask=self.onehot[a])

        def means(self) -> np.ndarray:
            return self.rel / np.maximum(self.mech.counts, 1)

    t_peer = per_step(StreamingPeer, True)
    pm = PrivateMeans(runs, arms, 1.0, rng=2)
    t0 = time.perf_counter()
    for t in range(steps):
        np.add(actions[t], 1)
    t_op = (time.perf_counter() - t0) / steps
    print(f"  one tiny numpy op (reference)          : {t_op * 1e6:6.2f} us")
    print(
        f"  PrivateMeans.update + means            : {t_pm * 1e6:6.2f} us/step "
        f"({t_pm * 50_000:.2f} s per 50_000 steps)"
    )
    print(f"  PrivateMeans (n_max={steps}) update+means: {t_pm_known * 1e6:6.2f} us/step")
    print(
        f"  peer: masked HybridMechanism + divide  : {t_peer * 1e6:6.2f} us/step "
        f"(PrivateMeans {t_peer / t_pm:.1f} x faster)"
    )
    print(
        f"  WindowedSensitivity.update (w=200)     : {t_ws * 1e6:6.2f} us/step "
        f"({t_ws * 50_000:.2f} s per 50_000 steps)"
    )
    print(
        f"  noise memory of PrivateMeans           : {pm.noise_nbytes / 1e6:.1f} MB "
        f"(full float64 table would be {runs * arms * n_max * 8 / 1e6:.0f} MB)"
    )

    hot_path(args.quick)

    print("== 4. RMSE of the released sum at n = 50_000 (eps = 1, b = 1)")
    samples = 400 if args.quick else 2_000
    chunk = 200
    z_h, z_b = [], []
    for i in range(samples // chunk):
        z_h.append(hybrid_noise(n_max, 1.0, size=chunk, rng=100 + i)[:, -1])
        z_b.append(binary_noise(n_max, 1.0, size=chunk, rng=200 + i)[:, -1])
    z_naive = np.random.default_rng(4).laplace(scale=n_max / 1.0, size=samples)
    rows = [
        ("hybrid (unknown T)", np.concatenate(z_h), hybrid_var(n_max)),
        ("binary, known T", np.concatenate(z_b), binary_var(n_max, n_max)),
        ("naive Lap(T b/eps)", z_naive, 2.0 * n_max**2),
    ]
    ns = np.arange(1, n_max + 1)
    avg = {
        "hybrid (unknown T)": np.mean([np.sqrt(hybrid_var(int(n))) for n in ns]),
        "binary, known T": np.mean([np.sqrt(binary_var(int(n), n_max)) for n in ns]),
        "naive Lap(T b/eps)": np.sqrt(2.0) * n_max,
    }
    print(
        f"  {'mechanism':22s} {'MC RMSE':>10s} {'closed form':>12s} {'mean-RMSE':>11s} "
        f"{'mean over n<=T':>15s}"
    )
    for name, z, var in rows:
        rmse = float(np.sqrt(np.mean(z**2)))
        print(
            f"  {name:22s} {rmse:10.1f} {np.sqrt(var):12.1f} {rmse / n_max:11.2e} {avg[name]:15.1f}"
        )
    print(f"  ({samples} Monte Carlo samples; 'mean-RMSE' = RMSE of the released mean, sum / n)")


if __name__ == "__main__":
    main()
