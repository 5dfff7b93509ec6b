"""A config from the command line: ``--agent``/``--set`` values parsed, applied over a file."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import agents as agents_pkg
from dpbandits.experiments.config.experiment import Experiment
from dpbandits.experiments.config.grid import assign, check_key_path
from dpbandits.experiments.config.schema import ConfigError, ConfigTypeError, show
from dpbandits.experiments.config.toml_io import parse_value, read_toml
from dpbandits.experiments.results import Results

__all__ = ["load_config", "parse_agent_option", "parse_assignments", "split_values"]


def split_values(text: str) -> list[str]:
    """Split at commas outside brackets, braces and quotes."""
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_assignments(items: list[str] | None, option: str) -> dict[str, Any]:
    """``["a=1", "b=[1,2],c=x"]`` -> ``{"a": 1, "b": [1, 2], "c": "x"}``."""
    out: dict[str, Any] = {}
    for item in items or []:
        for part in split_values(item):
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"{option}: expected KEY=VALUE, got {part!r}")
            out[key.strip()] = parse_value(value)
    return out


def parse_agent_option(items: list[str] | None) -> dict[str, dict[str, Any]]:
    """``--agent`` values -> ``{label: {"kind": ..., **params}}``.

    One agent is ``LABEL=KIND:key=value,key=value``, ``LABEL=KIND`` or ``KIND`` (labelled by
    its kind). Several may share one occurrence, separated by commas:
    ``UCB=ucb,mGEM=private:selector=mgem,epsilon_select=2`` (an item ``LABEL=KIND`` whose
    ``KIND`` is a registered agent starts a new agent).
    """
    kinds = set(agents_pkg.available())
    out: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for item in items or []:
        for part in split_values(item):
            head, colon, rest = part.partition(":")
            label, eq, kind = head.partition("=")
            starts_agent = (
                bool(colon and eq)
                or (not eq and not colon)
                or (eq and kind.strip().lower() in kinds and not colon)
            )
            if starts_agent:
                label, kind = (label.strip(), kind.strip()) if eq else (head.strip(), head.strip())
                if not label or not kind:
                    raise ValueError(f"--agent: expected LABEL=KIND:key=value,..., got {part!r}")
                if kind.lower() not in kinds:  # before any other option's complaint
                    raise _unknown_kind(part, kind, kinds)
                if label in out:
                    raise ValueError(f"--agent: label {label!r} given twice")
                current = out[label] = {"kind": kind}
                if rest.strip():
                    current.update(parse_assignments([rest], "--agent"))
            elif current is None:
                # LABEL=KIND with a KIND that is not an agent: most likely a typo in the kind
                raise _unknown_kind(part, kind, kinds)
            else:
                current.update(parse_assignments([part], "--agent"))
    return out


def _unknown_kind(part: str, kind: str, kinds: set[str]) -> ValueError:
    """The error of an ``--agent`` item ``part`` whose ``kind`` is not an agent, with the close
    match."""
    close = difflib.get_close_matches(kind.strip().lower(), sorted(kinds), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return ValueError(
        f"--agent {part!r}: unknown agent kind {kind.strip()!r} ({hint}available: "
        f"{', '.join(sorted(kinds))}); the form is LABEL=KIND:key=value,..."
    )


def load_config(
    source: str | os.PathLike[str] | None = None,
    *,
    env: str | None = None,
    env_args: Mapping[str, Any] | None = None,
    agents: Mapping[str, Mapping[str, Any]] | None = None,
    n_runs: int | None = None,
    seed: int | None = None,
    sets: Mapping[str, Any] | None = None,
    grid: Mapping[str, list[Any]] | None = None,
    check: bool = True,
) -> Experiment:
    """A config file (or none) with the command line's quick flags applied, validated once.

    ``source`` is a TOML file, or a results file (``.npz``) written from a config: its
    experiment, with the seed it ran with.

    ``env``/``env_args``/``agents``/``n_runs``/``seed`` replace or add to the file's values;
    ``sets`` assigns any key path; ``grid`` adds sweep lists.
    """
    cfg: dict[str, Any]
    if source is not None and str(source).endswith(".npz"):
        # a results file: the experiment that produced it
        if not Path(source).is_file():
            raise ConfigError("", f"no results file {str(source)!r}")
        cfg = Experiment.from_results(Results.load(source)).to_dict()
    elif source is not None:
        cfg = read_toml(source)
    else:
        cfg = {}
        if env is None:
            raise ValueError("give a CONFIG.toml file or --env ID (with --agent ...)")
    exp = cfg.setdefault("experiment", {})
    if not isinstance(exp, dict):
        raise ConfigTypeError("experiment", f"must be a table, got {show(exp)}")
    if env is not None:
        if "env" in exp and exp["env"] != env:
            exp["env_kwargs"] = {}  # another environment: the file's arguments do not apply
        exp["env"] = env
    if env_args:
        kw = exp.setdefault("env_kwargs", {})
        if not isinstance(kw, dict):
            raise ConfigTypeError("experiment.env_kwargs", f"must be a table, got {show(kw)}")
        kw.update(env_args)
    if n_runs is not None:
        exp["n_runs"] = n_runs
    if seed is not None:
        exp["seed"] = seed
    if agents:
        cfg["agents"] = {k: dict(v) for k, v in agents.items()}
    if "agents" not in cfg and source is None:
        raise ValueError("give at least one --agent LABEL=KIND:key=value,... (or a CONFIG.toml)")
    for key, value in (sets or {}).items():
        check_key_path(key, exp, cfg.get("agents", {}), "--set")
        assign(cfg, key, value)
    if grid:
        sweep = cfg.setdefault("sweep", {})
        sweep.update({k: list(v) for k, v in grid.items()})
    return Experiment.from_dict(cfg, check=check)
