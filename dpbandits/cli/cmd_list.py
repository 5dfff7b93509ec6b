"""``dpbandits list``: the available selectors, their parameters and privacy guarantees."""

from __future__ import annotations

import argparse
import inspect

from dpbandits.cli.options import add_plugin_argument, load_plugins


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list the available DP selectors",
        description="List the available selectors (built-in, registered and plug-ins) with "
        "their parameters, defaults and privacy guarantee.",
    )
    add_plugin_argument(parser)
    parser.set_defaults(func=run)


def _describe(name: str) -> tuple[str, str, str, str]:
    from dpbandits import selectors

    try:
        sel = selectors.make(name)
    except Exception as exc:  # a plug-in may need arguments; still list it
        return name, f"(cannot build with defaults: {exc})", "?", "?"
    params = getattr(sel, "get_params", lambda: {"epsilon": sel.epsilon})()
    defaults = ", ".join(f"{k}={v!r}" for k, v in params.items())
    guarantee = str(getattr(sel, "guarantee", "?"))
    private = "yes" if sel.private else "no"
    summary = str(getattr(sel, "summary", "") or inspect.getdoc(type(sel)) or "").split("\n")[0]
    return name, defaults, f"{private}; {guarantee}", summary


def run(args: argparse.Namespace) -> int:
    from dpbandits import selectors

    load_plugins(args.plugins)

    rows = [_describe(name) for name in selectors.available()]
    header = ("selector", "parameters (defaults)", "private; guarantee", "definition")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    line = "  ".join(h.ljust(w) for h, w in zip(header[:3], widths, strict=True))
    print(f"{line}  {header[3]}")
    print("-" * (len(line) + 2 + len(header[3])))
    for row in rows:
        cells = "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True))
        print(f"{cells}  {row[3]}")
    print(
        "\neps is the privacy parameter; D = max_a d[a]; "
        "see §IV and `dpbandits audit SELECTOR` for an empirical check."
    )
    return 0
