"""``dpbandits list``: the available selectors, agents and environments with their parameters.

Lists the available DP selectors (built-in, registered and plug-ins) with their parameters,
defaults and privacy guarantee, the bandit agents (``agents.make`` names) and the Gymnasium
environments (``dpbandits/...`` ids) with their constructor parameters and defaults.
"""

from __future__ import annotations

import argparse
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

from dpbandits.cli.options import add_command, add_plugin_argument
from dpbandits.core.docs import docs_reference
from dpbandits.core.plugins import load_plugins

SECTIONS = ("selectors", "agents", "envs")
#: Prefix of the project's Gymnasium ids (plug-ins may register more under it).
ENV_PREFIX = "dpbandits/"
HELP = "list the available selectors, agents and environments"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "list", HELP, __doc__)
    parser.add_argument(
        "what",
        nargs="?",
        choices=SECTIONS,
        default=None,
        help="list only this section (default: all)",
    )
    add_plugin_argument(parser)
    parser.set_defaults(func=run)


def _summary(obj: Any) -> str:
    """First line of a docstring, without reST markup."""
    return (inspect.getdoc(obj) or "").split("\n")[0].replace("``", "")


def _value(v: Any) -> str:
    if callable(v):  # e.g. a drift profile: show the function that built it, not an address
        name = getattr(v, "__qualname__", type(v).__name__).split(".<locals>")[0]
        return f"{name}(...)"
    return repr(v)


def _signature_params(
    factory: Callable[..., Any], overrides: dict[str, Any], rules: Any = None
) -> str:
    """``name=default, ...`` of a constructor (``overrides`` replace defaults); with ``rules``
    (a class's ``parameter_constraints``), each declared parameter's rule in brackets."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return "(parameters unknown)"
    parts = []
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        if p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        elif p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
        elif p.name in overrides:
            parts.append(f"{p.name}={_value(overrides[p.name])}")
        elif p.default is p.empty:
            parts.append(p.name)
        else:
            parts.append(f"{p.name}={_value(p.default)}")
        if rules and p.name in rules and parts:
            parts[-1] += f" [{rules[p.name].describe()}]"
    return ", ".join(parts) or "(none)"


def _describe_selector(name: str) -> tuple[str, str, str, str]:
    from dpbandits import selectors

    try:
        sel = selectors.make(name)
    except Exception as exc:  # a plug-in may need arguments; still list it
        return name, f"(cannot build with defaults: {exc})", "?", "?"
    params = getattr(sel, "get_params", lambda: {"epsilon": sel.epsilon})()
    defaults = ", ".join(f"{k}={v!r}" for k, v in params.items())
    guarantee = str(getattr(sel, "guarantee", "?"))
    private = "yes" if sel.private else "no"
    summary = str(getattr(sel, "summary", "") or _summary(type(sel)))
    return name, defaults, f"{private}; {guarantee}", summary


def _agents() -> list[tuple[str, str, str]]:
    """(name, class: summary, parameters) of every name of ``agents.available()``, learnt from
    the classes (``agents.describe``: nothing is built). The summary, the first line of the
    class's docstring, names the paper's algorithm it implements (e.g. Lazy-DP-TS, Hu & Hegde
    2022, Alg. 2) or says it is a variant made here (DP-UCB-Int)."""
    import agents

    rows = []
    for name in agents.available():
        kind = agents.describe(name)  # the registry's one description of a kind
        if kind.error:  # a plug-in that fails to load: listed with its error
            rows.append((name, "?", f"({kind.error})"))
            continue
        target: Any = kind.cls if kind.cls is not None else kind.factory
        title = getattr(target, "__name__", repr(target))
        rows.append((name, f"{title}: {_summary(target)}",
                     _signature_params(target, {}, kind.constraints or None)))  # fmt: skip
    return rows


def _envs() -> list[tuple[str, str, str]]:
    """(id, class: summary, parameters) of every registered ``dpbandits/...`` Gymnasium id."""
    import gymnasium
    from gymnasium.envs.registration import load_env_creator

    rows = []
    for env_id in sorted(i for i in gymnasium.registry if i.startswith(ENV_PREFIX)):
        spec = gymnasium.spec(env_id)
        try:
            entry = spec.entry_point
            creator = load_env_creator(entry) if isinstance(entry, str) else entry
        except Exception as exc:  # a plug-in's environment may fail to import; still list it
            rows.append((env_id, "?", f"(cannot load {spec.entry_point!r}: {exc})"))
            continue
        if creator is None:
            rows.append((env_id, "?", "(no entry point)"))
            continue
        title = f"{getattr(creator, '__name__', str(creator))}: {_summary(creator)}"
        rows.append((env_id, title, _signature_params(creator, dict(spec.kwargs or {}))))
    return rows


def _print_selectors() -> None:
    from dpbandits import selectors

    rows = [_describe_selector(name) for name in selectors.available()]
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
        f"see {docs_reference('selectors')}\nand `dpbandits audit SELECTOR` for an empirical check."
    )


def _print_blocks(title: str, usage: str, rows: list[tuple[str, str, str]]) -> None:
    """One block per row: the name and its class, then the parameters, wrapped and indented."""
    width = max([len(title), *(len(r[0]) for r in rows)])
    print(f"{title.ljust(width)}  class: definition / parameters (defaults)")
    print("-" * 100)
    for name, what, params in rows:
        print(f"{name.ljust(width)}  {what}")
        indent = " " * (width + 2)
        print(textwrap.fill(params, 100, initial_indent=indent, subsequent_indent=indent + "  "))
    print(f"\n{usage}")


def run(args: argparse.Namespace) -> int:
    load_plugins(args.plugins)
    what = getattr(args, "what", None)
    sections: list[Callable[[], None]] = []
    if what in (None, "selectors"):
        sections.append(_print_selectors)
    if what in (None, "agents"):
        sections.append(
            lambda: _print_blocks(
                "agent",
                "agents.make(NAME, **params) builds one; PrivateAgent's extra keyword arguments "
                "go to its selector.",
                _agents(),
            )
        )
    if what in (None, "envs"):
        sections.append(
            lambda: _print_blocks(
                "environment",
                "gymnasium.make(ID, **params) builds one (after `import dpbandits`); "
                f"{docs_reference('environments')} describes them.",
                _envs(),
            )
        )
    for i, show in enumerate(sections):
        if i:
            print()
        show()
    return 0
