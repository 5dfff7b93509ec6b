"""``dpbandits audit-agent AGENT``: end-to-end empirical privacy audit of a whole bandit agent.

By default it searches, within about ten minutes: over reward tables (the environment's, its
arms reversed, constant tables, ties, near-ties, random means, a knife-edge gap), over the
changed step (every step of the horizon on a few pilot runs, a grid on many) and over events of
the action sequence (the action at every step, pull and switch counts in windows, switch times,
the last actions). Pilot runs pick the candidates, held-out runs bound them with Clopper-Pearson
intervals simultaneous over all of them, so an eps-DP agent fails with probability at most
--alpha (dpbandits.audit.agent; what it catches: docs/selectors.md#auditing-an-agent). The
bound is compared with the agent's claimed total eps, its privacy report's epsilon_total, or
--epsilon; the report names the table, step and event of the largest bound and the options that
re-check it. --quick is the seconds-long smoke test on two tables (the environment's and a
tie) and four steps. --delta audits (eps, delta)-DP (a rho-zCDP agent against its accountant
eps); an agent on dpbandits/LocalDP-v0 gets every reward through the local randomizer afresh in
every run.

AGENT is an agent kind with optional parameters, KIND[:key=value,...] (see `dpbandits list
agents`), a label of the Fig. 9 preset, or a plug-in's agent (--plugin):

    dpbandits audit-agent private:selector=krr,epsilon_select=4
    dpbandits audit-agent dp_ucb:epsilon=0.5 --quick
    dpbandits audit-agent mGEM --env dpbandits/TwoArmedShift-v0
    dpbandits audit-agent dp_se --table zeros --step 185

Exit status 0 when the bound is within the claim (or nothing is claimed), 1 when it exceeds it.
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
from typing import Any

from dpbandits.cli.options import (
    add_command,
    add_env_options,
    add_list_option,
    add_plugin_argument,
    check_writable_file,
    missing_name,
    positive_count,
    split_list,
)
from dpbandits.core.docs import docs_reference

HELP = "search for the largest privacy loss of a whole agent on neighbouring reward tables"

#: Defaults of the options (those of dpbandits.audit.agent.audit_agent).
HORIZON, ALPHA = 500, 1e-3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "audit-agent", HELP, __doc__)
    parser.add_argument(
        "agent", nargs="?", default=None, metavar="AGENT",
        help="KIND[:key=value,...] or a Fig. 9 label; without it, this help is shown",
    )  # fmt: skip
    add_env_options(parser, "environment the tables are built from (default: two Bernoulli "
                    "arms with means 0 and 1)")
    parser.add_argument("--quick", action="store_true",
                        help="the smoke test: the environment's table and zeros (a tie), steps "
                        "0, K-1, 2K, T/4, 20 000 runs each (seconds)")  # fmt: skip
    add_list_option(parser, "--table", metavar="KIND[:PARAM][@SEED]",
                    help="a table to search instead of the default ones (env, swapped, zeros, "
                    "ones, tie, near_tie, random, gap[:G])")  # fmt: skip
    parser.add_argument("--runs", type=positive_count, default=None,
                        help="--quick: runs on every table, half pick the events and half "
                        "bound them (20 000); search: twice the held-out runs per table "
                        "(20 000)")  # fmt: skip
    parser.add_argument("--budget", type=float, default=1.0,
                        help="the search's run counts times this (1: about 10 minutes)")
    parser.add_argument("--horizon", type=int, default=HORIZON,
                        help=f"steps of every run ({HORIZON})")  # fmt: skip
    add_list_option(parser, "--step", metavar="T",
                    help="a changed step to try (default: the search's; --quick: 0, K-1, 2K "
                    "and horizon/4)")  # fmt: skip
    parser.add_argument("--epsilon", type=float, default=None,
                        help="the eps to compare with (default: the agent's claim)")
    parser.add_argument("--delta", type=float, default=None,
                        help="audit (eps, delta)-DP at DELTA in (0, 1): every bound is of "
                        "log((P - DELTA) / P') and the claim is the accountant's eps at DELTA "
                        "(how a rho-zCDP agent is audited; "
                        f"{docs_reference('trust-models')})")  # fmt: skip
    parser.add_argument("--alpha", type=float, default=ALPHA,
                        help=f"overall error level of the bound ({ALPHA:g})")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--json", dest="json_path", default=None, metavar="PATH",
                        help="also write the result as JSON to PATH")  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_plugin_argument(parser)
    parser.set_defaults(func=run, print_help=parser.print_help)


def _agent(spec: str) -> Any:
    """The agent of ``KIND[:key=value,...]`` or of a Fig. 9 label (AGENT's two forms)."""
    import agents as agents_pkg
    from dpbandits.experiments.config import parse_assignments
    from dpbandits.experiments.presets import EXTRA_LABELS, FIG9_LABELS, shift_agents

    kind, colon, rest = spec.partition(":")
    kind = kind.strip()
    labels = {lab.lower(): lab for lab in FIG9_LABELS + EXTRA_LABELS}
    try:
        if kind.lower() in agents_pkg.available():
            params = parse_assignments([rest], "AGENT") if rest.strip() else {}
            return agents_pkg.make(kind, **params)
        if kind.lower() in labels and not colon:
            return shift_agents([kind])[kind]
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"AGENT {spec!r}: {exc}") from None
    raise ValueError(
        f"AGENT {spec!r}: unknown agent kind or label; kinds: {', '.join(agents_pkg.available())}"
        f"; Fig. 9 labels: {', '.join(FIG9_LABELS + EXTRA_LABELS)}"
    )


def _checked_steps(args: argparse.Namespace) -> list[int] | None:
    """``--step`` as integers in ``[0, horizon - 1)``."""
    items = split_list(args.steps, "--step")
    if items is None:
        return None
    try:
        steps = [int(s) for s in items]
    except ValueError:
        raise ValueError(f"--step values must be integers, got {' '.join(items)!r}") from None
    bad = [s for s in steps if not 0 <= s < args.horizon - 1]
    if bad:
        raise ValueError(f"--step values must lie in [0, horizon - 1) = [0, "
                         f"{args.horizon - 1}), got {bad}")  # fmt: skip
    return steps


def run(args: argparse.Namespace) -> int:
    from dpbandits.core.plugins import load_plugins

    load_plugins(args.plugins)
    if args.agent is None:
        import agents as agents_pkg

        raise missing_name(args, "agent kinds", agents_pkg.available,
                           "give the AGENT to audit, e.g. 'dpbandits audit-agent private'")
    # -- every option is checked before any work
    if args.runs is not None and args.runs < 4:
        raise ValueError(f"--runs must be >= 4, got {args.runs}")
    if not args.budget > 0 or not math.isfinite(args.budget):
        raise ValueError(f"--budget must be a positive number, got {args.budget}")
    if args.horizon < 2:
        raise ValueError(f"--horizon must be >= 2, got {args.horizon}")
    if not 0 < args.alpha < 1:
        raise ValueError(f"--alpha must lie in (0, 1), got {args.alpha}")
    if args.delta is not None and not 0 < args.delta < 1:
        raise ValueError(f"--delta must lie in (0, 1), got {args.delta}")
    if args.epsilon is not None and not args.epsilon >= 0:
        raise ValueError(f"--epsilon must be >= 0, got {args.epsilon}")
    steps = _checked_steps(args)
    tables = split_list(args.tables, "--table")
    if tables is not None:
        from dpbandits.audit.reward_tables import parse_table_spec

        for spec in tables:
            try:
                parse_table_spec(spec)
            except ValueError as exc:
                raise ValueError(f"--{exc}") from None
    env, n_arms = _env(args)
    check_writable_file(args.json_path, "--json")
    agent = _agent(args.agent)
    try:  # the agent's own parameters (most agents check them in reset)
        copy.deepcopy(agent).reset(1, n_arms, horizon=args.horizon, rng=0)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"AGENT {args.agent!r}: {exc}") from None

    from dpbandits.audit.agent import audit_agent

    result = audit_agent(agent, env, table=tables, horizon=args.horizon, steps=steps,
                         quick=args.quick, runs=args.runs, budget=args.budget, alpha=args.alpha,
                         epsilon=args.epsilon, rng=args.seed, progress=not args.no_progress,
                         delta=args.delta)  # fmt: skip
    print(str(result).replace("audit-agent AGENT", f"audit-agent {args.agent}"
                              + (" " + " ".join(_context(args)) if _context(args) else "")))
    if args.json_path:
        from dpbandits.core.files import write_json

        write_json(args.json_path, result.to_dict())
        print(f"\nWrote: {args.json_path}")
    sys.stdout.flush()
    return 1 if result.passed is False else 0


def _context(args: argparse.Namespace) -> list[str]:
    """The options a re-check must repeat: the environment, horizon, delta, plug-ins and
    seed."""
    out = []
    if args.env is not None:
        out += ["--env", args.env]
    out += [f"--env-arg {a}" for a in args.env_args]
    if args.horizon != HORIZON:
        out.append(f"--horizon {args.horizon}")
    if args.delta is not None:
        out.append(f"--delta {args.delta:g}")
    out += [f"--plugin {p}" for p in (args.plugins or [])]
    return out + [f"--seed {args.seed}"]


def _env(args: argparse.Namespace) -> tuple[Any, int]:
    """The environment config of ``--env``/``--env-arg`` (``None``: the audit's default) and
    its number of arms, its horizon checked against ``--horizon``, before any work."""
    from dpbandits.audit.agent import DEFAULT_ENV
    from dpbandits.experiments.config import parse_assignments
    from dpbandits.experiments.envspec import env_spec, make_env

    kwargs = parse_assignments(args.env_args, "--env-arg")
    env: dict[str, Any] = dict(DEFAULT_ENV) if args.env is None else {"id": args.env}
    env.update(kwargs)
    try:
        single = make_env(env_spec(env))
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"--env {env['id']!r}: {exc}") from None
    try:
        horizon = getattr(single.unwrapped, "horizon", math.inf)
        n_arms = int(single.action_space.n)
    finally:
        single.close()
    if horizon < args.horizon:
        raise ValueError(f"--horizon {args.horizon} is longer than the environment's "
                         f"({horizon}); give --env-arg horizon={args.horizon}")  # fmt: skip
    return env, n_arms
