"""Benchmark of a selector plug-in with a compiled kernel (docs/selectors.md, "A compiled kernel").

The plug-in is report noisy max with exponential noise (eq. (3)), written in this file as a user
writes one: a ``Selector`` whose ``select_batch`` calls its kernel, and whose
``compiled_kernel`` hands the kernel to the private agent's compiled loop. It draws what the
built-in ``rnm`` draws, so the three private agents below play the same actions (checked):

- ``built-in``: ``PrivateAgent("rnm")``, the built-in selector in the compiled loop;
- ``plug-in``: ``PrivateAgent(PluginRNM())``, the plug-in's kernel in the compiled loop;
- ``step path``: the plug-in without its kernel, ``select_batch`` called from Python at every
  step (what every plug-in cost before the protocol).

Each plays the paper's two-armed shift environment (App. H) through the engine, in this process
(``n_jobs=1``), at R = 100 and R = 1 replications; the time is the tasks' wall time
(``Results.timing["wall_seconds"]``: compiling is done before, by the run's warm-up), per
replication and step, the best of ``--repeat`` runs; the ratios come from this one run. Target:
the plug-in within 1.5x of the built-in at both R.

Run:  python benchmarks/bench_compiled_plugin.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import agents
from dpbandits import selectors
from dpbandits.core.jit import kernel
from dpbandits.experiments import run, shift_env
from dpbandits.selectors.compiled import CompiledKernel


@kernel
def plugin_rnm_kernel(params, q, d, rng, out):  # type: ignore[no-untyped-def]
    """argmax(q + z), z ~ Exp(scale 2 D / eps), D = max d of the row (eq. (2), (3)): the gaps
    ``(q - max q) eps / (2 D)`` plus standard exponentials drawn in order, the first maximum."""
    epsilon = params[0]
    for r in range(q.shape[0]):
        q_max, d_max = q[r, 0], d[r, 0]
        for a in range(1, q.shape[1]):
            q_max, d_max = max(q_max, q[r, a]), max(d_max, d[r, a])
        lam = epsilon / (2.0 * d_max)
        best, best_a = -np.inf, 0
        for a in range(q.shape[1]):
            v = (q[r, a] - q_max) * lam + rng.standard_exponential()
            best_a = a if v > best else best_a
            best = max(v, best)
        out[r] = best_a
    return True


class PluginRNM(selectors.Selector):
    """RNM with exponential noise as a plug-in (eq. (3)); eps-DP."""

    name = "plugin_rnm"

    def select_batch(self, q, d, rng):  # type: ignore[no-untyped-def]
        out = np.empty(q.shape[0], dtype=np.int64)
        plugin_rnm_kernel((float(self.epsilon),), q, d, rng, out)
        return out

    def compiled_kernel(self, n_candidates):  # type: ignore[no-untyped-def]
        return CompiledKernel(plugin_rnm_kernel, (float(self.epsilon),))


class PluginRNMStepByStep(PluginRNM):
    """The same plug-in without its kernel: the agent calls ``select_batch`` every step."""

    def compiled_kernel(self, n_candidates):  # type: ignore[no-untyped-def]
        return None


def timed(selector: object, n_runs: int, horizon: int, repeat: int) -> tuple[float, float]:
    """Best nanoseconds per replication and step over ``repeat`` runs, and the total regret."""
    best, regret = np.inf, np.nan
    for _ in range(repeat):
        res = run(shift_env(t_shift=horizon * 3 // 5, horizon=horizon),
                  {"agent": agents.PrivateAgent(selector, quantile_method="smith")},
                  n_runs=n_runs, seed=0, progress=False, trace=False, n_jobs=1)  # fmt: skip
        best = min(best, res.timing["wall_seconds"] / (n_runs * horizon) * 1e9)
        regret = float(res.data["agent"]["total_regret"].sum())
    return best, regret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (best kept)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    cases = {"built-in": "rnm", "plug-in": PluginRNM(), "step path": PluginRNMStepByStep()}
    print(f"{'R':>4} {'horizon':>8} " + " ".join(f"{c:>14}" for c in cases)
          + "   plug-in/built-in   step/built-in")  # fmt: skip
    for n_runs, horizon in [(100, 20_000), (1, 100_000)]:
        ns, regrets = {}, {}
        for label, selector in cases.items():
            repeat = args.repeat if label != "step path" else 1
            ns[label], regrets[label] = timed(selector, n_runs, horizon, repeat)
        same = len(set(regrets.values())) == 1
        print(f"{n_runs:>4} {horizon:>8} "
              + " ".join(f"{ns[c]:>11.0f} ns" for c in cases)
              + f"   {ns['plug-in'] / ns['built-in']:>16.2f}x   "
              f"{ns['step path'] / ns['built-in']:>12.1f}x"
              + ("" if same else "   (actions differ!)"), flush=True)  # fmt: skip
    print("(ns per replication and step, tasks' wall time; the three play the same actions)")


if __name__ == "__main__":
    main()
