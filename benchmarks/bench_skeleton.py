"""Before/after of the compiled play skeleton (agents.skeleton): every built-in agent's numbers
and its CPU time per agent-step, in this tree and in a baseline tree.

For each agent name of ``agents.available()``, fresh processes importing each tree (alternating,
so that the load of a busy machine falls on both) run the engine on a two-armed Bernoulli
shift (``dpbandits/PiecewiseBandit-v0``, valid for every agent, Bernoulli-only ones included):

- a *fingerprint*: the SHA-256 of the total regret (as float hex) and the action counts of a
  short run (7 replications, 3 000 steps, seed 11) -- it must be the same in both trees
  (bit-identical results);
- the task CPU time per agent-step (``Results.timing``), minimum over ``--repeat`` runs, at
  R = 100 and at R = 1, and the ratio after / before (the skeleton's goal: <= 1.1).

With ``--arms K`` (K > 2) the environment is K Bernoulli arms with means spread over
``[0.2, 0.8]`` (e.g. Exp3's sum of 8 or more probabilities); ``--params`` passes constructor
arguments to every agent (a JSON object, e.g. ``'{"gamma": 0.1}'``).

Run:  python benchmarks/bench_skeleton.py --baseline DIR [--only ucb,adap_ucb] [--repeat 3]
      [--arms 10] [--params '{"gamma": 0.1}']
(``DIR`` a checkout of the version before, e.g. ``git archive <commit> | tar -x -C DIR``). Other
processes on the same cores slow every number down: compare the ratios of one run only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

_CHILD = """
import hashlib, json, sys
import numpy as np
import agents
from dpbandits.experiments import run
name, what = sys.argv[1], sys.argv[5]
runs, horizon, seed, arms = (int(v) for v in sys.argv[2:5] + sys.argv[6:7])
params = json.loads(sys.argv[7])
if arms == 2:
    env = {"id": "dpbandits/PiecewiseBandit-v0", "arm": "bernoulli", "horizon": horizon,
           "segments": [(0, [0.3, 0.7]), (int(horizon * 0.6), [0.7, 0.3])]}
else:
    env = {"id": "dpbandits/KArmedBernoulli-v0", "horizon": horizon,
           "means": np.linspace(0.2, 0.8, arms).tolist()}
res = run(env, {name: agents.make(name, **params)}, n_runs=runs, seed=seed, progress=False,
          trace=False, n_jobs=1, chunk_size=runs)
d = res.data[name]
if what == "fingerprint":
    h = hashlib.sha256(" ".join(float(x).hex() for x in d["total_regret"]).encode())
    h.update(np.ascontiguousarray(d["action_counts"]).tobytes())
    print(json.dumps(h.hexdigest()[:16]))
else:
    print(json.dumps(res.timing["cpu_seconds"][name] / (runs * horizon) * 1e9))
"""


def child(tree: str, name: str, runs: int, horizon: int, seed: int, what: str, arms: int = 2,
          params: str = "{}") -> object:  # fmt: skip
    """One engine run in a fresh process importing ``tree`` (its own numba cache)."""
    cache = "/tmp/numba-bench-" + "".join(c if c.isalnum() else "_" for c in tree)
    env = dict(os.environ, PYTHONPATH=tree, NUMBA_CACHE_DIR=cache)
    argv = [name, str(runs), str(horizon), str(seed), what, str(arms), params]
    out = subprocess.run([sys.executable, "-c", _CHILD, *argv], env=env, cwd=tree,
                         capture_output=True, text=True)  # fmt: skip
    if out.returncode:
        raise RuntimeError(f"{tree} {name}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="a checkout of the version before")
    parser.add_argument("--only", default="", help="comma-separated agent names (default: all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--arms", type=int, default=2, help="K Bernoulli arms (default: 2)")
    parser.add_argument("--params", default="{}", help="constructor arguments, a JSON object")
    args = parser.parse_args()
    extra = (args.arms, args.params)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    base = os.path.abspath(args.baseline)
    sys.path.insert(0, here)
    import agents

    names = args.only.split(",") if args.only else agents.available()
    print(f"before: {base}\nafter:  {here}\nCPU ns per agent-step, min of {args.repeat} "
          f"(T = {args.horizon}, K = {args.arms}, params {args.params}; load average "
          f"{os.getloadavg()[0]:.1f})")  # fmt: skip
    print(f"{'agent':14s} {'same numbers':>12s} {'R=100 before':>12s} {'after':>7s} {'x':>5s}"
          f" {'R=1 before':>10s} {'after':>7s} {'x':>5s}")  # fmt: skip
    worst = 0.0
    for name in names:
        prints = {tree: child(tree, name, 7, 3000, 11, "fingerprint", *extra)
                  for tree in (base, here)}  # fmt: skip
        best: dict[tuple[str, int], float] = {}
        for i in range(args.repeat):
            for tree in (base, here):
                for runs in (100, 1):
                    v = float(child(tree, name, runs, args.horizon, i, "ns", *extra))  # type: ignore[arg-type]
                    best[tree, runs] = min(best.get((tree, runs), math.inf), v)
        r100 = best[here, 100] / best[base, 100]
        r1 = best[here, 1] / best[base, 1]
        worst = max(worst, r100, r1)
        same = "yes" if prints[base] == prints[here] else "NO"
        print(f"{name:14s} {same:>12s} {best[base, 100]:12.1f} {best[here, 100]:7.1f} {r100:5.2f}"
              f" {best[base, 1]:10.1f} {best[here, 1]:7.1f} {r1:5.2f}", flush=True)  # fmt: skip
    print(f"largest ratio after / before: {worst:.2f}")


if __name__ == "__main__":
    main()
