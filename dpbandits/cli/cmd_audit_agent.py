"""``dpbandits audit-agent AGENT``: end-to-end empirical privacy audit of a whole bandit agent.

Fixes one reward table (drawn once from --env), changes the rewards of one step at a time, runs
the agent --runs times on the table and on every such neighbour, and bounds the privacy loss of
its action sequence from below with Clopper-Pearson intervals over events picked on half of
the runs and evaluated on the other half (dpbandits.audit.agent; how strong it is:
docs/selectors.md#auditing-an-agent). The bound is compared with the agent's claimed total
eps, its privacy report's epsilon_total, or --epsilon.

AGENT is an agent kind with optional parameters, KIND[:key=value,...] (see `dpbandits list
agents`), or a label of the Fig. 9 preset:

    dpbandits audit-agent private:selector=krr,epsilon_select=4
    dpbandits audit-agent dp_ucb:epsilon=0.5 --runs 40000
    dpbandits audit-agent mGEM --env dpbandits/TwoArmedShift-v0

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
    add_list_option,
    add_plugin_argument,
    check_writable_file,
    split_list,
)

HELP = "estimate a whole agent's privacy loss end to end on neighbouring reward tables"

#: Defaults of the options (those of dpbandits.audit.agent.audit_agent).
RUNS, HORIZON, ALPHA = 20_000, 500, 1e-3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "audit-agent", HELP, __doc__)
    parser.add_argument(
        "agent", nargs="?", default=None, metavar="AGENT",
        help="KIND[:key=value,...] or a Fig. 9 label; without it, this help is shown",
    )  # fmt: skip
    parser.add_argument("--env", default=None, metavar="ID",
                        help="environment the reward table is drawn from (default: two "
                        "Bernoulli arms with means 0 and 1)")  # fmt: skip
    parser.add_argument("--env-arg", dest="env_args", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="an environment argument (value in TOML syntax); repeatable, or "
                        "comma-separated")  # fmt: skip
    parser.add_argument("--runs", type=int, default=RUNS,
                        help=f"runs of the agent on every table, half to pick the events and "
                        f"half to bound them ({RUNS})")  # fmt: skip
    parser.add_argument("--horizon", type=int, default=HORIZON,
                        help=f"steps of every run ({HORIZON})")  # fmt: skip
    add_list_option(
        parser,
        "--step",
        metavar="T",
        help="a changed step to try (default: 0, K-1, 2K and horizon/4)",
    )
    parser.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help="the eps to compare with (default: the agent's claim)",
    )
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


def run(args: argparse.Namespace) -> int:
    from dpbandits.core.plugins import load_plugins

    load_plugins(args.plugins)
    if args.agent is None:
        import agents as agents_pkg

        args.print_help()
        print(f"\nagent kinds: {', '.join(agents_pkg.available())}", flush=True)
        raise ValueError("give the AGENT to audit, e.g. 'dpbandits audit-agent private'")
    # -- every option is checked before any work
    if args.runs < 4:
        raise ValueError(f"--runs must be >= 4, got {args.runs}")
    if args.horizon < 2:
        raise ValueError(f"--horizon must be >= 2, got {args.horizon}")
    if not 0 < args.alpha < 1:
        raise ValueError(f"--alpha must lie in (0, 1), got {args.alpha}")
    if args.epsilon is not None and not args.epsilon >= 0:
        raise ValueError(f"--epsilon must be >= 0, got {args.epsilon}")
    steps = None
    items = split_list(args.steps, "--step")
    if items is not None:
        try:
            steps = [int(s) for s in items]
        except ValueError:
            raise ValueError(f"--step values must be integers, got {' '.join(items)!r}") from None
        bad = [s for s in steps if not 0 <= s < args.horizon - 1]
        if bad:
            raise ValueError(f"--step values must lie in [0, horizon - 1) = [0, "
                             f"{args.horizon - 1}), got {bad}")  # fmt: skip
    env, n_arms = _env(args)
    check_writable_file(args.json_path, "--json")
    agent = _agent(args.agent)
    try:  # the agent's own parameters (most agents check them in reset)
        copy.deepcopy(agent).reset(1, n_arms, horizon=args.horizon, rng=0)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"AGENT {args.agent!r}: {exc}") from None

    from dpbandits.audit.agent import audit_agent

    result = audit_agent(agent, env, horizon=args.horizon, steps=steps, runs=args.runs,
                         alpha=args.alpha, epsilon=args.epsilon, rng=args.seed,
                         progress=not args.no_progress)  # fmt: skip
    print(result)
    if args.json_path:
        from dpbandits.core.files import write_json

        write_json(args.json_path, result.to_dict())
        print(f"\nWrote: {args.json_path}")
    sys.stdout.flush()
    return 1 if result.passed is False else 0


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
