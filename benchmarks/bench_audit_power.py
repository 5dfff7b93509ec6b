"""Power of the agent audit's search: the planted leaks caught, the honest agents passing.

Runs ``audit_agent`` (its defaults but ``--budget``) on every planted leak of
``dpbandits.audit.leak_gallery`` and on every registered private agent (at its own claim), for
several seeds, and prints one markdown row per agent: the bound of each seed, how many seeds
caught it (bound above the claim), the table/step/event of the largest bound, and the CPU
seconds of one audit (process time: the wall clock of a shared machine says little; the
audit runs in one process). docs/selectors.md ("What the search catches") shows its output.

Usage: ``python benchmarks/bench_audit_power.py [--budget 1] [--seeds 0 1 2] [--only NAME ...]
[--no-honest] [--no-leaks]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import agents
from dpbandits.audit import audit_agent
from dpbandits.audit.leak_gallery import GALLERY


def _private_kinds() -> list[str]:
    """Every registered agent with a privacy report, the App. H agent once per selector."""
    out = []
    for name in agents.available():
        cls = agents.describe(name).cls
        if cls is not None and callable(getattr(cls, "privacy_report", None)):
            out.append(name)
    return [k for k in out if k != "private"] + [f"private:{s}" for s in
                                                 ("rnm", "mgem", "krr", "rs", "gem")]  # fmt: skip


def _make(name: str) -> Any:
    if name in GALLERY:
        return GALLERY[name]()
    kind, _, selector = name.partition(":")
    return agents.make(kind, selector=selector) if selector else agents.make(kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--only", nargs="+", default=None)
    parser.add_argument("--no-honest", action="store_true")
    parser.add_argument("--no-leaks", action="store_true")
    args = parser.parse_args()
    names = [] if args.no_leaks else list(GALLERY)
    names += [] if args.no_honest else _private_kinds()
    if args.only:
        names = [n for n in names if n in args.only]
    print(f"budget {args.budget}, seeds {args.seeds}\n")
    print("| agent | claim | bound per seed | caught | largest bound: table, step, event | "
          "CPU s |")
    print("|---|---|---|---|---|---|")
    for name in names:
        bounds, worst, cpu, claim = [], None, [], None
        for seed in args.seeds:
            t0 = time.process_time()
            r = audit_agent(_make(name), budget=args.budget, rng=seed)
            cpu.append(time.process_time() - t0)
            bounds.append(r.eps_lower)
            claim = r.epsilon
            if r.worst is not None and (worst is None or r.worst.lower > worst.lower):
                worst = r.worst
        caught = sum(b > (claim or 0) for b in bounds)
        where = f"{worst.table.split('@')[0]}, {worst.step}, `{worst.event}`" if worst else "-"
        print(f"| {name} | {claim:g} | {' / '.join(f'{b:.2f}' for b in bounds)} | "
              f"{caught}/{len(bounds)} | {where} | {max(cpu):.0f} |", flush=True)


if __name__ == "__main__":
    main()
