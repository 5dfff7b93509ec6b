"""How often the correlation heuristic picks the best of GEM, mGEM and RNM (docs/scenarios.md).

Not part of the test suite. For every selection scenario of the paper (1-8, the Fig. 6 family,
and the Fig. 4 scenarios exc1/exc2), :func:`dpbandits.selectors.recommend` is applied to the
candidates' mean clipped scores and their sensitivities (a domain expert's expectation of the
problem) with each correlation measure, and compared with the selector of lowest MSE among
GEM, mGEM and RNM at eps = 1 (paper-size trials, seed 0). Prints one row per scenario and the
hit count (a ratio) per measure: strict (the recommended selector has the lowest MSE) and
within noise (its MSE exceeds the lowest by less than 2 paired standard errors).

Usage: ``python benchmarks/bench_advisor.py [--trials N] [--epsilon 1]``.
"""

from __future__ import annotations

import argparse

from dpbandits import scenarios, selectors
from dpbandits.scenarios.evaluation import evaluate

MEASURES = ("pearson", "spearman", "weighted")
NAMES = (
    *map(str, range(1, 9)),
    *scenarios.FIGURES["fig6"],
    *scenarios.FIGURES["fig4"],
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=None, help="default: the paper's")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    hits = dict.fromkeys(MEASURES, 0)
    close = dict.fromkeys(MEASURES, 0)
    print(f"# eps = {args.epsilon:g}, seed {args.seed}; lowest MSE among gem / mgem / rnm")
    print()
    print(
        "| scenario | MSE gem / mgem / rnm | best (= within 2 SE) | Pearson | Spearman | weighted |"
    )
    print("|---|---|---|---|---|---|")
    for name in NAMES:
        sc = scenarios.get(name)
        ev = evaluate(
            sc, ["gem", "mgem", "rnm"], [args.epsilon], args.trials, args.seed, keep_errors=True
        )
        data = sc.sample(ev.n_trials, seed=args.seed)
        mse = {lab: float(ev.mse[lab][0]) for lab in ("gem", "mgem", "rnm")}
        best = min(mse, key=mse.__getitem__)
        tied = set()
        for lab in mse:
            diff, se = ev.difference(lab, best)
            if lab == best or diff[0] < 2 * se[0]:
                tied.add(lab)
        rec = selectors.recommend(data.scores.mean(axis=0), data.sensitivities)
        rhos = {"pearson": rec.pearson, "spearman": rec.spearman, "weighted": rec.weighted}
        cells = []
        for m in MEASURES:
            choice = rec.by_measure[m]
            ok = choice == best
            hits[m] += ok
            close[m] += choice in tied
            mark = " ✓" if ok else (" ≈" if choice in tied else "")
            cells.append(f"{rhos[m]:+.2f} → {choice}{mark}")
        best_cell = " = ".join(sorted(tied, key=mse.__getitem__))
        print(
            f"| {name} | {mse['gem']:.3g} / {mse['mgem']:.3g} / {mse['rnm']:.3g} | {best_cell} | "
            + " | ".join(cells)
            + " |"
        )
    n = len(NAMES)
    print()
    print(
        "hits: "
        + ", ".join(f"{m} {hits[m]}/{n} ({hits[m] / n:.0%})" for m in MEASURES)
        + f"; threshold |rho| <= {selectors.advisor.DEFAULT_THRESHOLD} -> rnm"
    )
    print("within 2 SE of the best: " + ", ".join(f"{m} {close[m]}/{n}" for m in MEASURES))


if __name__ == "__main__":
    main()
