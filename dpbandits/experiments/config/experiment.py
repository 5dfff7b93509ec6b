"""One regret experiment as a validated value: read from a dict or TOML, checked, run."""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dpbandits.core.files import jsonable
from dpbandits.experiments.config.agent_spec import (
    build_agent,
    check_kind,
    check_rewards,
    probe_agent,
)
from dpbandits.experiments.config.environment import probe_env, resolve_env
from dpbandits.experiments.config.grid import (
    assign,
    canonical_json,
    cell_seed,
    check_key_path,
    grid_points,
    parse_sweep,
)
from dpbandits.experiments.config.schema import (
    EXPERIMENT_DEFAULTS,
    SECTIONS,
    ConfigError,
    ConfigTypeError,
    check_integer,
    check_number,
    check_string,
    check_table,
    show,
    unknown_key,
)
from dpbandits.experiments.config.toml_io import read_toml, to_toml
from dpbandits.experiments.engine import run as engine_run
from dpbandits.experiments.results import Results

__all__ = ["EXAMPLE_TOML", "Experiment"]

#: The documented shape of a config (docs/experiments.md is the reference of every key).
EXAMPLE_TOML = """\
[experiment]
env = "dpbandits/PiecewiseBandit-v0"      # any registered id, or "module:Class"
n_runs = 40
seed = 7
[experiment.env_kwargs]                   # passed to the environment
horizon = 20000
segments = [[0, [0.2, 0.8], [0.1, 0.1]], [8000, [0.8, 0.2], [0.1, 0.1]]]

[agents.UCB]
kind = "ucb"                              # a name of agents.available()
[agents.mGEM]
kind = "private"
selector = "mgem"
epsilon_select = 1.0
beta = 0.05                               # selector parameters pass through

[sweep]                                   # optional: the grid is the product of the lists
"agents.mGEM.epsilon_select" = [0.5, 1.0, 4.0]
"experiment.env_kwargs.horizon" = [10000, 20000]
"""


@dataclass(frozen=True)
class Experiment:
    """One regret experiment (and optionally a sweep grid), validated.

    Build it with :meth:`from_dict` / :meth:`from_toml` (or
    :func:`dpbandits.experiments.config.load_config`); run it with :meth:`run`; :meth:`to_toml`
    prints
    it back. ``sweep`` maps key paths (``"agents.mGEM.epsilon_select"``,
    ``"experiment.env_kwargs.horizon"``; ``agents.*.key`` sets ``key`` of every agent that has
    it) to lists of values; :meth:`cells` expands it. :data:`EXAMPLE_TOML` shows every section.
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
    #: With a delta in (0, 1), each privacy report also states (eps, delta) at it
    #: (docs/trust-models.md).
    delta: float | None = None
    sweep: dict[str, list[Any]] = field(default_factory=dict)
    #: The agents :meth:`check` built and probed, by label: :meth:`run` runs these (each agent
    #: is built once and reset once before any work).
    built: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # -- reading --------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, config: Mapping[str, Any], *, check: bool = True) -> Experiment:
        """Validate ``{"experiment": {...}, "agents": {...}, "sweep": {...}}``.

        ``check=True`` (default) also builds the environment and resets every agent for one
        run, for every cell of the sweep, so that a bad value fails here and not in a worker.
        """
        top = check_table("", config) if config is not None else {}
        for key in top:
            if key not in SECTIONS:
                raise unknown_key("", key, SECTIONS)
        if "experiment" not in top:
            raise ConfigError("experiment", "missing table [experiment] (with at least env)")
        exp = check_table("experiment", top["experiment"])
        for key in exp:
            if key not in EXPERIMENT_DEFAULTS:
                raise unknown_key("experiment", key, EXPERIMENT_DEFAULTS)
        if "env" not in exp:
            raise ConfigError("experiment.env", "missing (a registered id or 'module:Class')")
        if "agents" not in top:
            raise ConfigError("agents", "missing: define at least one [agents.LABEL] table")
        agents_tbl = check_table("agents", top["agents"])
        if not agents_tbl:
            raise ConfigError("agents", "must define at least one agent ([agents.LABEL])")
        agents_out: dict[str, dict[str, Any]] = {}
        for label, spec in agents_tbl.items():
            if not label.strip() or label == "*" or "." in label:
                raise ConfigError(
                    f"agents.{label}",
                    "agent labels must be non-empty names without '.' (key paths use it)",
                )
            spec = check_table(f"agents.{label}", spec)
            if "kind" not in spec:
                raise ConfigError(f"agents.{label}.kind", "missing (a name of agents.available())")
            agents_out[label] = spec
        sweep = parse_sweep(top.get("sweep", {}), exp, agents_out)
        obj = cls._from_tables(exp, agents_out, sweep)
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
                    where = ", ".join(f"{k}={show(v)}" for k, v in cell.params.items())
                    raise type(exc)(exc.path, f"{exc.rule} (in the sweep cell {where})") from None
        elif check:
            obj.check()
        else:
            obj._check_fields()
        return obj

    @classmethod
    def _from_tables(
        cls,
        exp: Mapping[str, Any],
        agents: Mapping[str, Mapping[str, Any]],
        sweep: Mapping[str, list[Any]] | None = None,
    ) -> Experiment:
        """The experiment of already-parsed tables, defaults filled in, nothing checked."""
        return cls(
            env=exp["env"],
            agents=copy.deepcopy({k: dict(v) for k, v in agents.items()}),
            env_kwargs=copy.deepcopy(exp.get("env_kwargs", {})),
            n_runs=exp.get("n_runs", EXPERIMENT_DEFAULTS["n_runs"]),
            seed=exp.get("seed", EXPERIMENT_DEFAULTS["seed"]),
            horizon=exp.get("horizon"),
            chunk_size=exp.get("chunk_size", EXPERIMENT_DEFAULTS["chunk_size"]),
            record_stride=exp.get("record_stride"),
            trace=exp.get("trace", EXPERIMENT_DEFAULTS["trace"]),
            name=exp.get("name"),
            description=exp.get("description"),
            delta=exp.get("delta"),
            sweep=copy.deepcopy(dict(sweep or {})),
        )

    @classmethod
    def from_toml(cls, source: str | os.PathLike[str], *, check: bool = True) -> Experiment:
        """Read a TOML file (a path) or TOML text (a string containing a newline or ``=``)."""
        return cls.from_dict(read_toml(source), check=check)

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
                    "description", "delta"):  # fmt: skip
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
        check_string("experiment.env", self.env)
        if resolve:
            resolve_env(self.env)
        check_table("experiment.env_kwargs", self.env_kwargs)
        check_integer("experiment.n_runs", self.n_runs, 1)
        check_integer("experiment.seed", self.seed, 0)
        if self.horizon is not None:
            check_integer("experiment.horizon", self.horizon, 1)
        check_integer("experiment.chunk_size", self.chunk_size, 1)
        if self.record_stride is not None:
            check_integer("experiment.record_stride", self.record_stride, 1)
        if self.delta is not None:
            d = check_number("experiment.delta", self.delta)
            if not 0.0 < d < 1.0:
                raise ConfigError("experiment.delta", f"must lie in (0, 1), got {show(self.delta)}")
        if not isinstance(self.trace, bool):
            raise ConfigTypeError("experiment.trace", f"must be true or false, got {self.trace!r}")
        for key in ("name", "description"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise ConfigTypeError(f"experiment.{key}", f"must be a string, got {value!r}")
        for label, spec in self.agents.items():
            check_kind(label, spec)

    def check(self, probes: dict[str, Any] | None = None) -> None:
        """Check every value: build the environment and reset each agent for one run.

        ``probes`` caches built environments by their config (used across sweep cells).
        """
        if self.sweep:
            raise ValueError("check() applies to one cell; from_dict checks every sweep cell")
        self._check_fields()
        probes = {} if probes is None else probes
        n_arms, horizon, arm, bounds = probe_env(self.env, self.env_kwargs, self.horizon, probes)
        for label, spec in self.agents.items():
            key = canonical_json(["agent", label, spec, n_arms, horizon])
            if key not in probes:  # sweep cells with the same agent table share one probe
                agent = build_agent(label, spec)
                probe_agent(label, agent, n_arms, horizon)
                probes[key] = agent
            self.built[label] = probes[key]
            check_rewards(label, self.built[label], self.env, arm, bounds, self.env_kwargs)

    # -- sweeps ---------------------------------------------------------------------------
    def cells(self, *, check: bool = True) -> list[Cell]:
        """The grid: one :class:`Cell` per combination of the sweep's
        values (in the order given, the last key varying fastest); a single cell without
        ``[sweep]``."""
        base = self.to_dict()
        base.pop("sweep", None)
        out = []
        for i, (params, cfg) in enumerate(grid_points(base, self.sweep)):
            if check:
                exp = Experiment.from_dict(cfg, check=False)
            else:
                exp = Experiment._from_tables(cfg["experiment"], cfg["agents"])
            out.append(
                Cell(index=i, params=params, experiment=exp, seed=cell_seed(exp.seed, params))
            )
        return out

    def with_values(self, values: Mapping[str, Any]) -> Experiment:
        """A copy with key paths set (``{"agents.mGEM.epsilon_select": 2.0}``), validated."""
        cfg = self.to_dict()
        for key, value in values.items():
            check_key_path(key, cfg["experiment"], cfg["agents"], "--set")
            assign(cfg, key, copy.deepcopy(value))
        return Experiment.from_dict(cfg)

    # -- running --------------------------------------------------------------------------
    def agent_objects(self) -> dict[str, Any]:
        """``{label: agent}``: the agents :meth:`check` built, else new ones built from the
        config. The engine copies them for every chunk and never mutates them."""
        return {label: self.built.get(label) or build_agent(label, spec)
                for label, spec in self.agents.items()}  # fmt: skip

    def env_config(self) -> dict[str, Any]:
        """``{"id": ..., **env_kwargs}`` as :func:`dpbandits.experiments.engine.run` takes it."""
        return {"id": resolve_env(self.env), **copy.deepcopy(self.env_kwargs)}

    def run(
        self,
        *,
        seed: int | None = None,
        n_jobs: int | None = None,
        progress: bool = True,
        executor: Any = None,
    ) -> Results:
        """Run the experiment (no sweep) with :func:`dpbandits.experiments.engine.run`.

        The results carry this config in ``results.config["experiment_config"]``. ``seed``
        overrides the config's (a sweep cell's derived seed).
        """
        if self.sweep:
            raise ValueError("this experiment has a [sweep] table: run it with "
                             "dpbandits.sweep (or `dpbandits sweep`)")  # fmt: skip
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
            delta=self.delta,
        )
        results.config["experiment_config"] = jsonable(self.to_dict())
        return results


@dataclass(frozen=True)
class Cell:
    """One point of a sweep grid: the swept values, the resolved experiment and its seed."""

    index: int
    params: dict[str, Any]
    experiment: Experiment
    seed: int
