"""``dpbandits audit SELECTOR``: empirical privacy-loss check on hard neighbouring pairs.

Draws the selector many times on each neighbouring pair of ``dpbandits.audit.selector.HARD_PAIRS``
and
compares the estimated privacy loss ``max_a |log P[a|D] - log P[a|D']|`` (with a
Clopper-Pearson lower confidence bound) with eps. Exit status 0 if every pair passes, 1
otherwise.
"""

from __future__ import annotations

import argparse

from dpbandits.cli.options import add_command, add_plugin_argument
from dpbandits.core.plugins import load_plugins

HELP = "estimate a selector's privacy loss on hard neighbouring inputs"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "audit", HELP, __doc__)
    parser.add_argument(
        "selector", nargs="?", default=None,
        help="selector name (see `dpbandits list`); without it, this help is shown",
    )  # fmt: skip
    parser.add_argument("--epsilon", type=float, default=1.0, help="privacy parameter (1.0)")
    parser.add_argument(
        "--draws", type=int, default=100_000, help="draws per input of each pair (100000)"
    )
    parser.add_argument("--alpha", type=float, default=1e-6, help="error level (1e-6)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument(
        "--pairs",
        action="extend",
        nargs="+",
        default=None,
        metavar="PAIR",
        help="pairs to use (default: all)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra selector parameter, e.g. --param beta=0.1 (repeatable)",
    )
    add_plugin_argument(parser)
    parser.set_defaults(func=run, print_help=parser.print_help)


def run(args: argparse.Namespace) -> int:
    from dpbandits import selectors
    from dpbandits.audit.selector import HARD_PAIRS, audit
    from dpbandits.selectors.spec import parse_value

    load_plugins(args.plugins)
    if args.selector is None:
        args.print_help()
        print(f"\nselectors: {', '.join(selectors.available())}", flush=True)
        raise ValueError("give the SELECTOR to audit, e.g. 'dpbandits audit rnm'")

    params: dict[str, object] = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param must look like KEY=VALUE, got {item!r}")
        params[key] = parse_value(value)  # as in 'name:key=value' selector specs
    sel = selectors.make(args.selector, epsilon=args.epsilon, **params)
    pairs = None
    if args.pairs is not None:
        unknown = [p for p in args.pairs if p not in HARD_PAIRS]
        if unknown:
            raise ValueError(f"unknown pair(s) {unknown}; available: {', '.join(HARD_PAIRS)}")
        pairs = [HARD_PAIRS[p] for p in args.pairs]
    results = audit(sel, pairs, draws=args.draws, alpha=args.alpha, rng=args.seed)
    print(f"{sel!r}: private={sel.private}, guarantee: {sel.guarantee}")
    print(f"{args.draws} draws per input; lower bound at family-wise level {args.alpha:g}\n")
    header = f"{'pair':<12} {'K':>3} {'loss':>9} {'lower':>9} {'upper':>9} {'eps':>7}  verdict"
    print(header)
    print("-" * len(header))
    for r in results:
        verdict = "PASS" if r.passed else "FAIL"
        print(
            f"{r.pair:<12} {r.counts.size:>3} {r.loss:>9.4f} {r.loss_lower:>9.4f} "
            f"{r.loss_upper:>9.4f} {r.epsilon:>7g}  {verdict}"
        )
    ok = all(r.passed for r in results)
    note = "" if sel.private else " (this selector does not claim DP)"
    print(f"\n{'PASS' if ok else 'FAIL'}: estimated loss {'within' if ok else 'exceeds'} eps{note}")
    return 0 if ok else 1
