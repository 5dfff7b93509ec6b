"""An experiment as data: a TOML file or a dict, validated into an :class:`Experiment`.

A config describes one regret experiment (the environment, the agents, the runs) and optionally a
grid of values to sweep; docs/experiments.md is the reference of every key::

    [experiment]
    env = "dpbandits/PiecewiseBandit-v0"      # a registered id, or "module:Class"
    n_runs = 40
    seed = 7
    [experiment.env_kwargs]                   # passed to the environment
    horizon = 20000

    [agents.UCB]
    kind = "ucb"                              # a name of agents.available()
    [agents.mGEM]
    kind = "private"
    selector = "mgem"
    epsilon_select = 1.0
    beta = 0.05                               # selector parameters pass through

    [sweep]                                   # optional: the grid is the product of the lists
    "agents.mGEM.epsilon_select" = [0.5, 1.0, 4.0]

Everything is checked when the config is read, before any simulation: unknown keys, unknown
environments or agent kinds, wrong types and bad values raise :class:`ConfigError` (a
``ValueError``; :class:`ConfigTypeError` is also a ``TypeError``) whose message starts with the
key path, e.g. ``agents.mGEM.epsilon_select: must be > 0, got -1``. Every cell of a sweep is
checked the same way (its environment is built and its agents are reset once, for one run).
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import inspect
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from dpbandits.results import Results

__all__ = [
    "ConfigError",
    "ConfigTypeError",
    "Experiment",
    "canonical_json",
    "load_experiment",
    "parse_agent_option",
    "parse_value",
    "split_values",
    "resolve_env",
    "to_toml",
]

#: Keys of ``[experiment]`` and their defaults (``env`` is required).
EXPERIMENT_DEFAULTS: dict[str, Any] = {
    "env": None,
    "env_kwargs": {},
    "n_runs": 100,
    "seed": 0,
    "horizon": None,
    "chunk_size": 100,
    "record_stride": None,
    "trace": True,
    "name": None,
    "description": None,
}
SECTIONS = ("experiment", "agents", "sweep")


class ConfigError(ValueError):
    """A config that cannot run; the message starts with the key path (``a.b.c: rule, got x``)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.rule = message
        super().__init__(f"{path}: {message}" if path else message)


class ConfigTypeError(ConfigError, TypeError):
    """A config value of the wrong type (a :class:`ConfigError` and a ``TypeError``)."""


# ----------------------------------------------------------------------------------------------
# Small checks
# ----------------------------------------------------------------------------------------------
def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value, default=repr)


def _is_real(x: Any) -> bool:
    import numpy as np

    return not isinstance(x, (bool, np.bool_)) and isinstance(
        x, (int, float, np.integer, np.floating)
    )


def _int(path: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigTypeError(
            path, f"must be an integer, got {type(value).__name__} {_show(value)}"
        )
    if value < minimum:
        raise ConfigError(path, f"must be >= {minimum}, got {value}")
    return value


def _str(path: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigTypeError(path, f"must be a non-empty string, got {_show(value)}")
    return value


def _table(path: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigTypeError(path, f"must be a table, got {type(value).__name__} {_show(value)}")
    for k in value:
        if not isinstance(k, str):
            raise ConfigTypeError(path, f"keys must be strings, got {k!r}")
    return dict(value)


def _unknown(path: str, key: str, known: Any) -> ConfigError:
    where = f"{path}.{key}" if path else key
    return ConfigError(where, f"unknown key (known: {', '.join(sorted(known))})")


def canonical_json(x: Any) -> str:
    """Sorted-key, compact JSON: the text hashed for cell seeds and store keys."""
    from dpbandits.files import jsonable

    return json.dumps(jsonable(x), sort_keys=True, separators=(",", ":"), allow_nan=True)


# ----------------------------------------------------------------------------------------------
# Values from the command line
# ----------------------------------------------------------------------------------------------
def parse_value(text: str) -> Any:
    """A command-line value as TOML: ``2`` -> int, ``0.5`` -> float, ``true``, ``[0.2, 0.8]``,
    ``"x"``; anything that is not a TOML value is the string itself (``mgem``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


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
    import agents as agents_pkg

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
                label, kind = (label.strip(), kind.strip()) if eq else (head.strip(),
                                                                        head.strip())
                if not label or not kind:
                    raise ValueError(f"--agent: expected LABEL=KIND:key=value,..., got {part!r}")
                if label in out:
                    raise ValueError(f"--agent: label {label!r} given twice")
                current = out[label] = {"kind": kind}
                if rest.strip():
                    current.update(parse_assignments([rest], "--agent"))
            elif current is None:
                raise ValueError(
                    f"--agent: expected LABEL=KIND:key=value,..., got {part!r} (a parameter "
                    "before any agent)"
                )
            else:
                current.update(parse_assignments([part], "--agent"))
    return out


# ----------------------------------------------------------------------------------------------
# Environments
# ----------------------------------------------------------------------------------------------
def resolve_env(env: str, path: str = "experiment.env") -> str:
    """The Gymnasium id to build ``env`` with, registering a ``"module:Class"`` environment.

    ``env`` is a registered id (``"dpbandits/TwoArmedShift-v0"``), ``"module:Id"`` (a module
    that registers ``Id`` when imported, Gymnasium's convention) or ``"module:Class"`` (a
    ``gymnasium.Env`` subclass, registered here under the id ``"module.Class"``). Called again
    in every worker process, so that a Dask worker registers the class too.
    """
    import gymnasium

    import dpbandits  # noqa: F401  (registers the project's ids)

    if env in gymnasium.registry:
        return env
    if ":" in env:
        mod_name, _, attr = env.partition(":")
        try:
            module = importlib.import_module(mod_name)
        except ImportError as exc:
            raise ConfigError(path, f"cannot import module {mod_name!r} ({exc})") from None
        if attr in gymnasium.registry:
            return env
        obj = getattr(module, attr, None)
        if isinstance(obj, type) and issubclass(obj, gymnasium.Env):
            env_id = f"{mod_name}.{attr}"
            if env_id not in gymnasium.registry:
                vec = getattr(obj, "vector_entry_point", None)
                gymnasium.register(
                    id=env_id,
                    entry_point=env,
                    vector_entry_point=vec if isinstance(vec, str) else None,
                )
            return env_id
        raise ConfigError(
            path,
            f"{attr!r} is neither a gymnasium.Env subclass of module {mod_name!r} nor an id it "
            "registers",
        )
    ours = sorted(k for k in gymnasium.registry if k.startswith("dpbandits/"))
    raise ConfigError(
        path,
        f"unknown environment {env!r}; registered here: {', '.join(ours)} (or any Gymnasium "
        "id, or 'module:Class')",
    )


def _env_signature(env_id: str) -> tuple[set[str], bool] | None:
    """Accepted keyword names of an environment's constructor and whether it takes ``**kw``."""
    import gymnasium

    try:
        ep: Any = gymnasium.spec(env_id).entry_point
        if isinstance(ep, str):
            mod, _, attr = ep.partition(":")
            ep = getattr(importlib.import_module(mod), attr)
        params = inspect.signature(ep).parameters.values()
    except Exception:  # noqa: BLE001 (unknown shape: let the constructor decide)
        return None
    names = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    return names - {"self"}, any(p.kind == p.VAR_KEYWORD for p in params)


def _reword(exc: BaseException, prefix: str, names: Any, aliases: Mapping[str, str]) -> ConfigError:
    """A constructor's error with the key path of the parameter it names."""
    msg = str(exc).strip()
    cls = ConfigTypeError if isinstance(exc, TypeError) else ConfigError
    m = re.search(r"unknown parameter\(s\) \['([^']+)'", msg) or re.search(
        r"unexpected keyword argument '([^']+)'", msg
    )
    if m:
        return cls(f"{prefix}.{m.group(1)}", msg)
    if msg.startswith("unknown selector") and "selector" in names:
        return cls(f"{prefix}.selector", msg)
    first = re.match(r"([A-Za-z_]\w*) (.*)", msg, flags=re.S)
    if first:
        name = aliases.get(first.group(1), first.group(1))
        if name in names:
            return cls(f"{prefix}.{name}", first.group(2))
    return cls(prefix, msg)


# ----------------------------------------------------------------------------------------------
# The experiment
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Experiment:
    """One regret experiment (and optionally a sweep grid), validated.

    Build it with :meth:`from_dict` / :meth:`from_toml` (or :func:`load_experiment`); run it
    with :meth:`run`; :meth:`to_toml` prints it back. ``sweep`` maps key paths
    (``"agents.mGEM.epsilon_select"``, ``"experiment.env_kwargs.horizon"``; ``agents.*.key``
    sets ``key`` of every agent that has it) to lists of values; :meth:`cells` expands it.
    """

    env: str
    agents: dict[str, dict[str, Any]]
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    n_runs: int = 100
    seed: int = 0
    horizon: int | None = None
    chunk_size: int = 100
    record_stride: int | None = None
    trace: bool = True
    name: str | None = None
    description: str | None = None
    sweep: dict[str, list[Any]] = field(default_factory=dict)

    # -- reading --------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, config: Mapping[str, Any], *, check: bool = True) -> Experiment:
        """Validate ``{"experiment": {...}, "agents": {...}, "sweep": {...}}``.

        ``check=True`` (default) also builds the environment and resets every agent for one
        run, for every cell of the sweep, so that a bad value fails here and not in a worker.
        """
        top = _table("", config) if config is not None else {}
        for key in top:
            if key not in SECTIONS:
                raise _unknown("", key, SECTIONS)
        if "experiment" not in top:
            raise ConfigError("experiment", "missing table [experiment] (with at least env)")
        exp = _table("experiment", top["experiment"])
        for key in exp:
            if key not in EXPERIMENT_DEFAULTS:
                raise _unknown("experiment", key, EXPERIMENT_DEFAULTS)
        if "env" not in exp:
            raise ConfigError("experiment.env", "missing (a registered id or 'module:Class')")
        if "agents" not in top:
            raise ConfigError("agents", "missing: define at least one [agents.LABEL] table")
        agents_tbl = _table("agents", top["agents"])
        if not agents_tbl:
            raise ConfigError("agents", "must define at least one agent ([agents.LABEL])")
        agents_out: dict[str, dict[str, Any]] = {}
        for label, spec in agents_tbl.items():
            if not label.strip() or label == "*" or "." in label:
                raise ConfigError(
                    f"agents.{label}",
                    "agent labels must be non-empty names without '.' (key paths use it)",
                )
            spec = _table(f"agents.{label}", spec)
            if "kind" not in spec:
                raise ConfigError(f"agents.{label}.kind", "missing (a name of agents.available())")
            agents_out[label] = copy.deepcopy(spec)
        sweep = _parse_sweep(top.get("sweep", {}), exp, agents_out)
        obj = cls(
            env=exp["env"],
            agents=agents_out,
            env_kwargs=copy.deepcopy(exp.get("env_kwargs", {})),
            n_runs=exp.get("n_runs", EXPERIMENT_DEFAULTS["n_runs"]),
            seed=exp.get("seed", EXPERIMENT_DEFAULTS["seed"]),
            horizon=exp.get("horizon"),
            chunk_size=exp.get("chunk_size", EXPERIMENT_DEFAULTS["chunk_size"]),
            record_stride=exp.get("record_stride"),
            trace=exp.get("trace", True),
            name=exp.get("name"),
            description=exp.get("description"),
            sweep=sweep,
        )
        if obj.sweep:
            obj._check_fields(resolve=False)
            probes: dict[str, Any] = {}
            for cell in obj.cells(check=False):
                try:
                    if check:
                        cell.experiment.check(probes=probes)
                    else:
                        cell.experiment._check_fields()
                except ConfigError as exc:
                    where = ", ".join(f"{k}={_show(v)}" for k, v in cell.params.items())
                    raise type(exc)(exc.path, f"{exc.rule} (in the sweep cell {where})") from None
        elif check:
            obj.check()
        else:
            obj._check_fields()
        return obj

    @classmethod
    def from_toml(cls, source: str | os.PathLike[str], *, check: bool = True) -> Experiment:
        """Read a TOML file (a path) or TOML text (a string containing a newline or ``=``)."""
        text, where = _read_toml_source(source)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("", f"{where} is not valid TOML: {exc}") from None
        return cls.from_dict(data, check=check)

    @classmethod
    def from_results(cls, results: Results) -> Experiment:
        """The experiment that produced ``results`` (``results.config["experiment_config"]``),
        with the seed the engine used (a sweep cell's derived seed): running it again gives the
        same numbers."""
        cfg = results.config.get("experiment_config")
        if not isinstance(cfg, Mapping):
            raise ValueError("these results were not produced from an experiment config")
        cfg = copy.deepcopy(dict(cfg))
        cfg["experiment"]["seed"] = int(results.config["seed"])
        return cls.from_dict(cfg, check=False)

    # -- writing --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The config as plain data (every ``[experiment]`` key, defaults filled in)."""
        exp: dict[str, Any] = {"env": self.env}
        for key in ("n_runs", "seed", "horizon", "chunk_size", "record_stride", "trace", "name",
                    "description"):  # fmt: skip
            value = getattr(self, key)
            if value is not None:
                exp[key] = value
        exp["env_kwargs"] = copy.deepcopy(self.env_kwargs)
        out: dict[str, Any] = {"experiment": exp, "agents": copy.deepcopy(self.agents)}
        if self.sweep:
            out["sweep"] = copy.deepcopy(self.sweep)
        return out

    def to_toml(self) -> str:
        """The config as TOML text (read back by :meth:`from_toml` to an equal experiment)."""
        return to_toml(self.to_dict())

    # -- validation -----------------------------------------------------------------------
    def _check_fields(self, resolve: bool = True) -> None:
        _str("experiment.env", self.env)
        if resolve:
            resolve_env(self.env)
        _table("experiment.env_kwargs", self.env_kwargs)
        _int("experiment.n_runs", self.n_runs, 1)
        _int("experiment.seed", self.seed, 0)
        if self.horizon is not None:
            _int("experiment.horizon", self.horizon, 1)
        _int("experiment.chunk_size", self.chunk_size, 1)
        if self.record_stride is not None:
            _int("experiment.record_stride", self.record_stride, 1)
        if not isinstance(self.trace, bool):
            raise ConfigTypeError("experiment.trace", f"must be true or false, got {self.trace!r}")
        for key in ("name", "description"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise ConfigTypeError(f"experiment.{key}", f"must be a string, got {value!r}")
        import agents as agents_pkg

        kinds = agents_pkg.available()
        for label, spec in self.agents.items():
            kind = spec.get("kind")
            if not isinstance(kind, str) or kind.lower() not in kinds:
                raise ConfigError(
                    f"agents.{label}.kind",
                    f"unknown agent kind {kind!r}; available: {', '.join(kinds)}",
                )

    def check(self, probes: dict[str, Any] | None = None) -> None:
        """Check every value: build the environment and reset each agent for one run.

        ``probes`` caches built environments by their config (used across sweep cells).
        """
        if self.sweep:
            raise ValueError("check() applies to one cell; from_dict checks every sweep cell")
        self._check_fields()
        probes = {} if probes is None else probes
        n_arms, horizon = self._probe_env(probes)
        for label, spec in self.agents.items():
            key = canonical_json(["agent", label, spec, n_arms, horizon])
            if key in probes:
                continue
            agent = self._build_agent(label)
            try:
                agent.reset(1, n_arms, horizon=horizon, rng=0)
            except (ValueError, TypeError) as exc:
                raise _reword(exc, f"agents.{label}", spec, self._aliases(label)) from None
            probes[key] = True

    def _probe_env(self, probes: dict[str, Any]) -> tuple[int, int]:
        from dpbandits.envspec import make_env

        key = canonical_json([self.env, self.env_kwargs, self.horizon])
        if key in probes:
            return probes[key]
        env_id = resolve_env(self.env)
        sig = _env_signature(env_id)
        if sig is not None:
            names, var_kw = sig
            for k in self.env_kwargs:
                if not var_kw and k not in names:
                    raise ConfigError(
                        f"experiment.env_kwargs.{k}",
                        f"unknown argument of {self.env} (accepted: {', '.join(sorted(names))})",
                    )
        kwargs = copy.deepcopy(self.env_kwargs)
        if self.horizon is not None and env_id.startswith("dpbandits/"):
            # as the engine does: the project's environments take the run's horizon
            kwargs.setdefault("horizon", self.horizon)
        try:
            env = make_env({"id": env_id, "kwargs": kwargs})
        except (ValueError, TypeError) as exc:
            raise _reword(exc, "experiment.env_kwargs", self.env_kwargs, {}) from None
        try:
            n = getattr(env.action_space, "n", None)
            if n is None:
                raise ConfigError("experiment.env", f"the action space must be Discrete, got "
                                  f"{env.action_space}")  # fmt: skip
            env_h = getattr(env.unwrapped, "horizon", None)
        finally:
            env.close()
        horizon = self.horizon if self.horizon is not None else env_h
        if horizon is None:
            raise ConfigError("experiment.horizon", "missing: the environment has no horizon")
        if env_h is not None and self.horizon is not None and self.horizon > env_h and (
            "horizon" in self.env_kwargs or not env_id.startswith("dpbandits/")
        ):
            raise ConfigError(
                "experiment.horizon", f"must be <= the environment's horizon {env_h}, got "
                f"{self.horizon}"
            )  # fmt: skip
        probes[key] = (int(n), int(horizon))
        return probes[key]

    def _aliases(self, label: str) -> dict[str, str]:
        # a private agent's selector reports its own argument name, "epsilon"
        kind = str(self.agents[label].get("kind", "")).lower()
        return {"epsilon": "epsilon_select"} if kind == "private" else {}

    def _build_agent(self, label: str) -> Any:
        import agents as agents_pkg

        spec = dict(self.agents[label])
        kind = spec.pop("kind")
        path = f"agents.{label}"
        params: dict[str, inspect.Parameter] = {}
        var_kw = True
        try:
            # the signature of the kind's class, from an instance with its defaults (a kind
            # whose constructor needs arguments is checked by the constructor alone)
            sig = inspect.signature(type(agents_pkg.make(kind)))
            params = {p.name: p for p in sig.parameters.values()
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}  # fmt: skip
            var_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
        except Exception:  # noqa: BLE001
            pass
        for key, value in spec.items():
            where = f"{path}.{key}"
            if params and not var_kw and key not in params:
                raise ConfigError(where, f"unknown parameter of agent kind {kind!r} (accepted: "
                                  f"{', '.join(params)})")  # fmt: skip
            if key.startswith("epsilon"):
                if not _is_real(value):
                    raise ConfigTypeError(where, f"must be a number, got {_show(value)}")
                if not (math.isfinite(float(value)) and value > 0):
                    raise ConfigError(where, f"must be > 0, got {_show(value)}")
            default = params[key].default if key in params else inspect.Parameter.empty
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ConfigTypeError(where, f"must be true or false, got {_show(value)}")
            elif _is_real(default) and not _is_real(value):
                raise ConfigTypeError(where, f"must be a number, got {_show(value)}")
            elif isinstance(default, str) and key != "selector" and not isinstance(value, str):
                raise ConfigTypeError(where, f"must be a string, got {_show(value)}")
        try:
            return agents_pkg.make(kind, **copy.deepcopy(spec))
        except (ValueError, TypeError) as exc:
            raise _reword(exc, path, spec, self._aliases(label)) from None

    # -- sweeps ---------------------------------------------------------------------------
    def cells(self, *, check: bool = True) -> list[Cell]:
        """The grid: one :class:`Cell` per combination of the sweep's values (in the order
        given, the last key varying fastest); a single cell without ``[sweep]``."""
        keys = list(self.sweep)
        base = self.to_dict()
        base.pop("sweep", None)
        out = []
        for i, values in enumerate(itertools.product(*(self.sweep[k] for k in keys))):
            params = dict(zip(keys, values, strict=True))
            cfg = copy.deepcopy(base)
            for key, value in params.items():
                _assign(cfg, key, copy.deepcopy(value))
            exp = Experiment.from_dict(cfg, check=False) if check else _unchecked(cfg)
            out.append(Cell(index=i, params=params, experiment=exp, seed=cell_seed(exp, params)))
        return out

    def with_values(self, values: Mapping[str, Any]) -> Experiment:
        """A copy with key paths set (``{"agents.mGEM.epsilon_select": 2.0}``), validated."""
        cfg = self.to_dict()
        for key, value in values.items():
            _check_key_path(key, cfg["experiment"], cfg["agents"], "--set")
            _assign(cfg, key, copy.deepcopy(value))
        return Experiment.from_dict(cfg)

    # -- running --------------------------------------------------------------------------
    def agent_objects(self) -> dict[str, Any]:
        """``{label: agent}``, new objects built from the config."""
        return {label: self._build_agent(label) for label in self.agents}

    def env_config(self) -> dict[str, Any]:
        """``{"id": ..., **env_kwargs}`` as :func:`dpbandits.engine.run` takes it."""
        return {"id": resolve_env(self.env), **copy.deepcopy(self.env_kwargs)}

    def run(
        self,
        *,
        seed: int | None = None,
        n_jobs: int | None = None,
        progress: bool = True,
        executor: Any = None,
    ) -> Results:
        """Run the experiment (no sweep) with :func:`dpbandits.engine.run`.

        The results carry this config in ``results.config["experiment_config"]``. ``seed``
        overrides the config's (a sweep cell's derived seed).
        """
        if self.sweep:
            raise ValueError("this experiment has a [sweep] table: run it with dpbandits.sweep "
                             "(or `dpbandits sweep`)")  # fmt: skip
        from dpbandits.engine import run as engine_run

        results = engine_run(
            self.env_config(),
            self.agent_objects(),
            n_runs=self.n_runs,
            seed=self.seed if seed is None else seed,
            horizon=self.horizon,
            progress=progress,
            record_stride=self.record_stride,
            trace=self.trace,
            n_jobs=n_jobs,
            chunk_size=self.chunk_size,
            executor=executor,
        )
        from dpbandits.files import jsonable

        results.config["experiment_config"] = jsonable(self.to_dict())
        return results


@dataclass(frozen=True)
class Cell:
    """One point of a sweep grid: the swept values, the resolved experiment and its seed."""

    index: int
    params: dict[str, Any]
    experiment: Experiment
    seed: int


def _unchecked(cfg: dict[str, Any]) -> Experiment:
    exp = cfg["experiment"]
    return Experiment(
        env=exp["env"], agents=cfg["agents"], env_kwargs=exp.get("env_kwargs", {}),
        n_runs=exp.get("n_runs", 100), seed=exp.get("seed", 0), horizon=exp.get("horizon"),
        chunk_size=exp.get("chunk_size", 100), record_stride=exp.get("record_stride"),
        trace=exp.get("trace", True), name=exp.get("name"), description=exp.get("description"),
    )  # fmt: skip


def cell_seed(exp: Experiment, params: Mapping[str, Any]) -> int:
    """The seed of a sweep cell: derived from the root seed and the cell's swept values (not
    its position in the grid), so adding a value to a list leaves every other cell unchanged.

    Without swept values (or sweeping the seed alone) it is the experiment's own seed.
    """
    others = {k: v for k, v in params.items() if k != "experiment.seed"}
    if not others:
        return exp.seed
    blob = canonical_json({"seed": exp.seed, "params": others}).encode("utf-8")
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") >> 1


def _check_key_path(
    key: str, exp: Mapping[str, Any], agents: Mapping[str, Any], where: str
) -> None:
    parts = key.split(".")
    if parts[0] == "experiment":
        if len(parts) < 2 or parts[1] not in EXPERIMENT_DEFAULTS:
            raise ConfigError(f"{where}.{key}" if where == "sweep" else key,
                              "not a key of [experiment] (known: "
                              f"{', '.join(sorted(EXPERIMENT_DEFAULTS))})")  # fmt: skip
        if parts[1] != "env_kwargs" and len(parts) > 2:
            raise ConfigError(key, f"experiment.{parts[1]} has no sub-keys")
        if parts[1] == "env_kwargs" and len(parts) < 3:
            raise ConfigError(key, "name an argument: experiment.env_kwargs.NAME")
    elif parts[0] == "agents":
        if len(parts) != 3:
            raise ConfigError(key, "agent keys are agents.LABEL.PARAMETER (or agents.*.PARAMETER)")
        if parts[1] != "*" and parts[1] not in agents:
            raise ConfigError(key, f"no agent {parts[1]!r} (agents: {', '.join(agents)})")
        if parts[1] == "*" and not any(parts[2] in spec for spec in agents.values()):
            raise ConfigError(key, f"no agent sets {parts[2]!r} (agents.* sets the key of every "
                              "agent that has it)")  # fmt: skip
    else:
        raise ConfigError(key, "keys start with 'experiment.' or 'agents.'")


def _assign(cfg: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    if parts[0] == "agents" and parts[1] == "*":
        for spec in cfg["agents"].values():
            if parts[2] in spec:
                spec[parts[2]] = copy.deepcopy(value)
        return
    node = cfg
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value


def _parse_sweep(
    sweep: Any, exp: Mapping[str, Any], agents: Mapping[str, Any]
) -> dict[str, list[Any]]:
    table = _table("sweep", sweep)
    out: dict[str, list[Any]] = {}
    for key, values in table.items():
        path = f"sweep.{key}" if "." not in key else f'sweep."{key}"'
        try:
            _check_key_path(key, exp, agents, "sweep")
        except ConfigError as exc:
            raise type(exc)(path, exc.rule) from None
        if not isinstance(values, list):
            raise ConfigTypeError(path, f"must be a list of values, got {_show(values)}")
        if not values:
            raise ConfigError(path, "must list at least one value")
        seen = [canonical_json(v) for v in values]
        if len(set(seen)) != len(seen):
            raise ConfigError(path, f"values must be distinct, got {_show(values)}")
        out[key] = copy.deepcopy(values)
    return out


def _read_toml_source(source: str | os.PathLike[str]) -> tuple[str, str]:
    if isinstance(source, str) and ("\n" in source or "=" in source) and not os.path.isfile(
        source
    ):
        return source, "the config text"
    p = Path(source)
    if not p.is_file():
        raise ConfigError("", f"no config file {str(p)!r}")
    try:
        return p.read_text(encoding="utf-8"), str(p)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("", f"cannot read {str(p)!r}: {exc}") from None


def load_experiment(
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
        from dpbandits.results import Results

        if not Path(source).is_file():
            raise ConfigError("", f"no results file {str(source)!r}")
        cfg = Experiment.from_results(Results.load(source)).to_dict()
    elif source is not None:
        text, where = _read_toml_source(source)
        try:
            cfg = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("", f"{where} is not valid TOML: {exc}") from None
    else:
        cfg = {}
        if env is None:
            raise ValueError("give a CONFIG.toml file or --env ID (with --agent ...)")
    exp = cfg.setdefault("experiment", {})
    if not isinstance(exp, dict):
        raise ConfigTypeError("experiment", f"must be a table, got {_show(exp)}")
    if env is not None:
        if "env" in exp and exp["env"] != env:
            exp["env_kwargs"] = {}  # another environment: the file's arguments do not apply
        exp["env"] = env
    if env_args:
        kw = exp.setdefault("env_kwargs", {})
        if not isinstance(kw, dict):
            raise ConfigTypeError("experiment.env_kwargs", f"must be a table, got {_show(kw)}")
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
        _check_key_path(key, exp, cfg.get("agents", {}), "--set")
        _assign(cfg, key, value)
    if grid:
        sweep = cfg.setdefault("sweep", {})
        sweep.update({k: list(v) for k, v in grid.items()})
    return Experiment.from_dict(cfg, check=check)


# ----------------------------------------------------------------------------------------------
# TOML output
# ----------------------------------------------------------------------------------------------
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k, ensure_ascii=False)


def _toml_value(v: Any) -> str:
    import numpy as np

    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        inner = ", ".join(f"{_toml_key(str(k))} = {_toml_value(x)}" for k, x in v.items())
        return "{" + inner + "}"
    if hasattr(v, "to_dict"):
        return _toml_value(v.to_dict())
    raise TypeError(f"cannot write {type(v).__name__} {v!r} as TOML")


def to_toml(config: Mapping[str, Any]) -> str:
    """TOML text of a config dict (tables for sections and agents, inline tables below)."""
    lines: list[str] = []

    def table(header: str, items: Mapping[str, Any], nested: tuple[str, ...] = ()) -> None:
        if lines:
            lines.append("")
        lines.append(f"[{header}]")
        for k, v in items.items():
            if k not in nested:
                lines.append(f"{_toml_key(str(k))} = {_toml_value(v)}")
        for k in nested:
            if k in items:
                table(f"{header}.{_toml_key(k)}", items[k])

    if "experiment" in config:
        table("experiment", config["experiment"], ("env_kwargs",))
    for label, spec in config.get("agents", {}).items():
        table(f"agents.{_toml_key(label)}", spec)
    if config.get("sweep"):
        table("sweep", config["sweep"])
    return "\n".join(lines) + "\n"
