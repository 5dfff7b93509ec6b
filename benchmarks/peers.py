"""Peer benchmark: dpbandits against the bandit libraries that are installed, side by side.

Same problems for every library: stationary Bernoulli bandits with K = 2 (means 0.4, 0.6) and
K = 10 (means 0.1 .. 0.9), T steps (default 10 000), R independent runs (1, 20, 100), with

- UCB1: index ``mean + sqrt(2 ln t / N)`` (dpbandits ``UCB(log="t")``, pymab ``UCBPolicy``
  (``c = 2``), SMPyBandits ``UCB``, MABWiser ``LearningPolicy.UCB1(alpha=1)``);
- Thompson sampling with Beta(1, 1) priors (dpbandits ``ThompsonSampling(model="bernoulli")``,
  pymab ``BernoulliThompsonSamplingPolicy``, SMPyBandits ``Thompson``, MABWiser
  ``LearningPolicy.ThompsonSampling()``).

Each library runs through its own documented API: dpbandits ``run``; pymab ``Experiment`` (its
Rust core when available); SMPyBandits and MABWiser through their policy objects in a plain
per-step loop (``choice/getReward``, ``predict/partial_fit``) with numpy Bernoulli draws -- they
have no batched mode, so their cost per agent-step does not depend on R and they are measured
on ``--loop-runs`` runs only. Printed: CPU microseconds per agent-step (``time.process_time``
of the whole call, minimum over ``--repeat``), each peer's time relative to dpbandits (> 1:
dpbandits is faster), and a check that the regrets agree: the mean pseudo-regret
``sum_t max(mu) - mu[a_t]`` over all runs of a library against dpbandits', z-test (|z| < 3).

A library that is not installed, or fails to import, is skipped with a note. Install them with
``pip install ".[peers]"`` in a clone (or ``pip install pymab SMPyBandits mabwiser``).
Known incompatibility worked around here (never in the library): SMPyBandits 0.9.7 imports
``scipy.special.btdtri``, removed from SciPy 1.12+; it is the inverse regularised incomplete
beta function, i.e. ``scipy.special.betaincinv``, which is patched in before the import.

Run:  python benchmarks/peers.py [--horizon 10000] [--runs 1,20,100] [--repeat 2]
Other processes on the same cores slow every number down: the load average is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import agents
from dpbandits.experiments import run

ALGS = ("UCB1", "TS")
KS = (2, 10)


def means_for(k: int) -> np.ndarray:
    return np.array([0.4, 0.6]) if k == 2 else np.linspace(0.1, 0.9, k)


def pseudo_regret(actions: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Total pseudo-regret per run from actions of shape (R, T)."""
    return (means.max() - means[actions]).sum(axis=1)


# ----------------------------------------------------------------------------------------------
# the libraries: each returns (CPU seconds, total pseudo-regret per run)
# ----------------------------------------------------------------------------------------------
def run_dpbandits(alg: str, means: np.ndarray, runs: int, horizon: int, seed: int
                  ) -> tuple[float, np.ndarray]:  # fmt: skip
    env = {"id": "dpbandits/PiecewiseBandit-v0", "segments": [(0, means.tolist())],
           "arm": "bernoulli", "horizon": horizon}  # fmt: skip
    agent = agents.UCB(log="t") if alg == "UCB1" else agents.ThompsonSampling(model="bernoulli")
    t0 = time.process_time()
    res = run(env, {alg: agent}, n_runs=runs, seed=seed, progress=False, trace=False,
              n_jobs=1, chunk_size=runs)  # fmt: skip
    return time.process_time() - t0, res.data[alg]["total_regret"]


def import_pymab() -> Any:
    import pymab
    from pymab.policies.thompson_sampling import BernoulliThompsonSamplingPolicy
    from pymab.policies.ucb import UCBPolicy

    return pymab, UCBPolicy, BernoulliThompsonSamplingPolicy


def run_pymab(alg: str, means: np.ndarray, runs: int, horizon: int, seed: int
              ) -> tuple[float, np.ndarray]:  # fmt: skip
    pymab, ucb, ts = import_pymab()
    k = means.size
    policy = ucb(n_arms=k, c=2.0) if alg == "UCB1" else ts(n_arms=k)
    t0 = time.process_time()
    env = pymab.BanditEnvironment(means=means, reward_model=pymab.BernoulliReward())
    cfg = pymab.ExperimentConfig(horizon=horizon, n_replicates=runs, seed=seed)
    res = pymab.Experiment(environment=env, policies={alg: policy}, config=cfg).run()
    cpu = time.process_time() - t0
    return cpu, pseudo_regret(np.asarray(res.actions)[:, :, 0], means)


def import_smpybandits() -> Any:
    import scipy.special

    if not hasattr(scipy.special, "btdtri"):  # removed in SciPy 1.12; same function
        scipy.special.btdtri = scipy.special.betaincinv
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it prints warnings about optional modules
        from SMPyBandits.Policies import UCB, Thompson
    return UCB, Thompson


def run_smpybandits(alg: str, means: np.ndarray, runs: int, horizon: int, seed: int
                    ) -> tuple[float, np.ndarray]:  # fmt: skip
    ucb, thompson = import_smpybandits()
    rng = np.random.default_rng(seed)
    actions = np.empty((runs, horizon), dtype=np.int64)
    mu = means.tolist()
    t0 = time.process_time()
    for i in range(runs):
        policy = ucb(means.size) if alg == "UCB1" else thompson(means.size)
        policy.startGame()
        u = rng.random(horizon).tolist()
        row = actions[i]
        for t in range(horizon):
            a = policy.choice()
            policy.getReward(a, 1.0 if u[t] < mu[a] else 0.0)
            row[t] = a
    return time.process_time() - t0, pseudo_regret(actions, means)


def import_mabwiser() -> Any:
    from mabwiser.mab import MAB, LearningPolicy

    return MAB, LearningPolicy


def run_mabwiser(alg: str, means: np.ndarray, runs: int, horizon: int, seed: int
                 ) -> tuple[float, np.ndarray]:  # fmt: skip
    mab_cls, lp = import_mabwiser()
    rng = np.random.default_rng(seed)
    k = means.size
    actions = np.empty((runs, horizon), dtype=np.int64)
    mu = means.tolist()
    t0 = time.process_time()
    for i in range(runs):
        policy = lp.UCB1(alpha=1) if alg == "UCB1" else lp.ThompsonSampling()
        mab = mab_cls(arms=list(range(k)), learning_policy=policy, seed=seed + i)
        u = rng.random(horizon).tolist()
        first = list(range(k))  # every arm once, as the other libraries do
        mab.fit(decisions=first, rewards=[1.0 if u[t] < mu[t] else 0.0 for t in first])
        actions[i, :k] = first
        row = actions[i]
        for t in range(k, horizon):
            a = mab.predict()
            mab.partial_fit([a], [1.0 if u[t] < mu[a] else 0.0])
            row[t] = a
    return time.process_time() - t0, pseudo_regret(actions, means)


PEERS: dict[str, tuple[Callable[[], Any], Callable[..., tuple[float, np.ndarray]], bool]] = {
    # name: (import check, runner, batched: measured at every R)
    "pymab": (import_pymab, run_pymab, True),
    "SMPyBandits": (import_smpybandits, run_smpybandits, False),
    "MABWiser": (import_mabwiser, run_mabwiser, False),
}


def z_score(ref: np.ndarray, other: np.ndarray) -> float:
    """z of the difference of means, with the variance of the (larger) dpbandits sample for
    both: under agreement the two regret distributions are the same, and the loop peers have
    only a few runs (too few for their own variance estimate)."""
    se2 = ref.var(ddof=1) * (1.0 / ref.size + 1.0 / other.size)
    return float((ref.mean() - other.mean()) / math.sqrt(se2)) if se2 > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizon", type=int, default=10_000)
    parser.add_argument("--runs", default="1,20,100", help="comma-separated R values")
    parser.add_argument("--repeat", type=int, default=2, help="minimum over this many timings")
    parser.add_argument(
        "--loop-runs",
        type=int,
        default=3,
        help="runs measured for the per-step-loop peers (SMPyBandits, MABWiser)",
    )
    parser.add_argument("--peer", default=",".join(PEERS), help="peers to try")
    args = parser.parse_args()
    rs = [int(x) for x in args.runs.split(",")]
    T = args.horizon

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}; T = {T}")
    peers: dict[str, tuple[Callable[..., tuple[float, np.ndarray]], bool]] = {}
    for name in [p.strip() for p in args.peer.split(",") if p.strip()]:
        check, runner, batched = PEERS[name]
        try:
            check()
        except Exception as exc:  # noqa: BLE001 (any import failure: skip with a note)
            print(f"note: {name} skipped ({type(exc).__name__}: {exc})")
            continue
        try:  # a tiny run: a peer that imports but is broken is skipped too
            runner("UCB1", means_for(2), 1, 50, 0)
        except Exception as exc:  # noqa: BLE001
            print(f"note: {name} skipped, it fails on a small run ({type(exc).__name__}: {exc})")
            continue
        peers[name] = (runner, batched)
    names = list(peers)
    head = "".join(f" {n:>12s} {'ratio':>6s}" for n in names)
    print(f"\nus per agent-step (CPU), ratio = peer time / dpbandits time\n"
          f"{'problem':22s} {'dpbandits':>10s}{head}")  # fmt: skip
    regrets: dict[tuple[str, int, str], list[np.ndarray]] = {}
    loop_cache: dict[tuple[str, int, str], tuple[float, np.ndarray]] = {}
    for k in KS:
        means = means_for(k)
        for alg in ALGS:
            for r in rs:
                best, reg = math.inf, None
                for i in range(args.repeat):
                    cpu, reg_i = run_dpbandits(alg, means, r, T, seed=i)
                    best = min(best, cpu / (r * T))
                    reg = reg_i if reg is None else reg
                regrets.setdefault(("dpbandits", k, alg), []).append(reg)  # type: ignore[arg-type]
                cells = ""
                for name in names:
                    runner, batched = peers[name]
                    key = (name, k, alg)
                    if batched:
                        pb, preg = math.inf, None
                        for i in range(args.repeat):
                            cpu, p_i = runner(alg, means, r, T, 100 + i)
                            pb = min(pb, cpu / (r * T))
                            preg = p_i if preg is None else preg
                        regrets.setdefault(key, []).append(preg)  # type: ignore[arg-type]
                    else:  # per-step loop: cost per agent-step independent of R
                        if key not in loop_cache:
                            cpu, preg = runner(alg, means, args.loop_runs, T, 100)
                            loop_cache[key] = (cpu / (args.loop_runs * T), preg)
                            regrets.setdefault(key, []).append(preg)
                        pb = loop_cache[key][0]
                    cells += f" {pb * 1e6:12.2f} {pb / best:6.1f}"
                print(f"{alg + f', K={k}, R={r}':22s} {best * 1e6:10.2f}{cells}", flush=True)

    print("\nregret agreement (mean total pseudo-regret over all runs; z vs dpbandits)")
    ok = True
    for k in KS:
        for alg in ALGS:
            ref = np.concatenate(regrets[("dpbandits", k, alg)])
            se = ref.std(ddof=1) / math.sqrt(ref.size)
            line = f"  {alg}, K={k}: dpbandits {ref.mean():8.1f} +- {se:5.1f}"
            for name in names:
                other = np.concatenate(regrets[(name, k, alg)])
                z = z_score(ref, other)
                agree = abs(z) < 3.0
                ok &= agree
                mark = "" if agree else " DISAGREE"
                line += f" | {name} {other.mean():8.1f} (n={other.size}, z={z:+.1f}{mark})"
            print(line)
    print("all regrets agree" if ok else "SOME REGRETS DISAGREE (|z| >= 3)")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
