"""The trust models side by side (docs/trust-models.md): regret of the central (AdaP-UCB,
eps-DP), concentrated (AdaC-UCB, rho-zCDP) and local (LDP-UCB-L, LDP-UCB-B, LDP-KLUCB-B,
eps-LDP) agents at matched guarantees -- rho = eps^2 / 2, what eps-DP implies -- and AdaC-UCB's
cost per agent-step against AdaP-UCB's, measured in the same runs.

    python benchmarks/bench_trust_models.py                # the targets (eps = 1)
    python benchmarks/bench_trust_models.py --table        # + regret against eps, both settings
    python benchmarks/bench_trust_models.py --sigmoid      # + the sigmoid curators, Gaussian arms

Targets (Bernoulli (0.3, 0.7), T = 20 000): LDP-UCB at eps = 1 below a quarter of uniform
play's regret (4 000 / 4 = 1 000); AdaC-UCB at rho = 0.5 within 1.2x AdaP-UCB's at eps = 1;
AdaC-UCB within 2x AdaP-UCB's CPU time per agent-step (task CPU seconds of one run, both agents
in it: the load of a busy machine falls on both; still noisy on the 2 shared cores).
"""

from __future__ import annotations

import argparse

import agents
from dpbandits.experiments import run

BERNOULLI = {"id": "dpbandits/KArmedBernoulli-v0", "means": [0.3, 0.7], "horizon": 20_000}
FIG9 = {"id": "dpbandits/TwoArmedShift-v0", "means": [0.2, 0.8], "sds": [0.1, 0.3],
        "t_shift": 30_000, "horizon": 50_000}  # fmt: skip
GAUSSIAN = {"id": "dpbandits/KArmedGaussian-v0", "means": [0.0, 0.5], "sds": 1.0, "lo": -100.0,
            "hi": 100.0, "horizon": 20_000}  # fmt: skip


def matched(eps: float) -> dict[str, object]:
    """The agents at one privacy level: eps-DP, rho = eps^2 / 2 zCDP, eps-LDP."""
    return {
        "AdaP-UCB (eps-DP)": agents.AdaPUCB(epsilon=eps),
        "AdaC-UCB (rho-zCDP)": agents.AdaCUCB(rho=eps * eps / 2),
        "LDP-UCB-L (eps-LDP)": agents.LDPUCBL(epsilon=eps),
        "LDP-UCB-B (eps-LDP)": agents.LDPUCBB(epsilon=eps),
        "LDP-KLUCB-B (eps-LDP)": agents.LDPKLUCBB(epsilon=eps),
    }


def targets(runs: int) -> None:
    res = run(BERNOULLI, {**matched(1.0), "UCB (not private)": agents.UCB()}, n_runs=runs,
              seed=0, progress=False, trace=False)  # fmt: skip
    reg = {lab: float(res.data[lab]["total_regret"].mean()) for lab in res.labels}
    se = {lab: float(res.data[lab]["total_regret"].std(ddof=1) / runs**0.5) for lab in res.labels}
    print(f"Bernoulli (0.3, 0.7), T = 20 000, {runs} runs; uniform play: 4000 (target <= 1000)")
    for lab in res.labels:
        print(f"  {lab:<24} regret {reg[lab]:8.1f} +- {se[lab]:5.1f}")
    ratio = reg["AdaC-UCB (rho-zCDP)"] / reg["AdaP-UCB (eps-DP)"]
    print(f"AdaC-UCB (rho=0.5) / AdaP-UCB (eps=1) regret: {ratio:.3f} (target <= 1.2)")
    cpu = res.timing["cpu_seconds"]
    steps = runs * BERNOULLI["horizon"]
    for lab in ("AdaP-UCB (eps-DP)", "AdaC-UCB (rho-zCDP)", "LDP-UCB-L (eps-LDP)"):
        print(f"  {lab:<24} {cpu[lab] / steps * 1e9:6.1f} ns per agent-step")
    print(f"AdaC-UCB / AdaP-UCB CPU per agent-step: "
          f"{cpu['AdaC-UCB (rho-zCDP)'] / cpu['AdaP-UCB (eps-DP)']:.2f} (target <= 2)")  # fmt: skip


def sigmoid(runs: int, eps_values: list[float]) -> None:
    """LDP-UCB-LS and LDP-UCB-BS (any real reward) on the shipped ``trust_gaussian`` setting."""
    print(f"\nGaussian arms (0, 0.5), sd 1, T = 20 000, {runs} runs: final regret (mean +- SE); "
          "uniform play: 5000")  # fmt: skip
    print("| eps | UCB (not private) | LDP-UCB-LS (eps-LDP) | LDP-UCB-BS (eps-LDP) |")
    print("|---|---|---|---|")
    for eps in eps_values:
        res = run(GAUSSIAN, {"UCB": agents.UCB(), "LS": agents.LDPUCBLS(epsilon=eps),
                             "BS": agents.LDPUCBBS(epsilon=eps)},
                  n_runs=runs, seed=0, progress=False, trace=False)  # fmt: skip
        cells = []
        for lab in res.labels:
            x = res.data[lab]["total_regret"]
            cells.append(f"{x.mean():.0f} ± {x.std(ddof=1) / runs**0.5:.0f}")
        print(f"| {eps:g} | " + " | ".join(cells) + " |")


def table(runs: int, eps_values: list[float]) -> None:
    for name, env in (("Bernoulli (0.3, 0.7), T = 20 000", BERNOULLI),
                      ("Fig. 9 (shift at 30 000), T = 50 000", FIG9)):  # fmt: skip
        print(f"\n{name}, {runs} runs: final regret (mean +- SE)")
        header = None
        for eps in eps_values:
            res = run(env, matched(eps), n_runs=runs, seed=0, progress=False, trace=False)
            if header is None:
                header = "| eps (rho = eps^2/2) | " + " | ".join(res.labels) + " |"
                print(header)
                print("|" + "---|" * (len(res.labels) + 1))
            cells = []
            for lab in res.labels:
                x = res.data[lab]["total_regret"]
                cells.append(f"{x.mean():.0f} ± {x.std(ddof=1) / runs**0.5:.0f}")
            print(f"| {eps:g} ({eps * eps / 2:g}) | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--table", action="store_true", help="regret against eps, both settings")
    parser.add_argument(
        "--sigmoid",
        action="store_true",
        help="the sigmoid curators (LDP-UCB-LS, -BS) on Gaussian arms",
    )
    parser.add_argument("--eps", default="0.25,0.5,1,2,4", help="eps values of --table")
    args = parser.parse_args()
    targets(args.runs)
    if args.table:
        table(args.runs, [float(e) for e in args.eps.split(",")])
    if args.sigmoid:
        sigmoid(args.runs, [float(e) for e in args.eps.split(",")])


if __name__ == "__main__":
    main()
