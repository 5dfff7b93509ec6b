"""The batched regret engine: :func:`run` plays agents against an environment in lockstep.

:func:`run` plays every agent against the same environment for ``n_runs`` independent
replications and ``horizon`` steps, and measures the dynamic pseudo-regret
``sum_t max_a mu_a(t) - mu_{a_t}(t)`` against the expected *clipped* reward (App. H-1) that the
project's environments expose. This reproduces App. H / Fig. 9 of the paper in one call::

    from dpbandits.experiments.engine import run
    res = run("dpbandits/TwoArmedShift-v0", {"UCB": "ucb", "mGEM": agents.PrivateAgent("mgem")},
              n_runs=100, seed=0)
    print(res.summary())

How it runs
-----------
- **Lockstep.** All replications of one agent step together through the environment's native
  vector form (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``; environments
  without one fall back to ``"sync"``). The only Python loop is the one over time; a step is one
  ``act``, one ``VectorEnv.step``, one ``update`` and a couple of array writes. Actions are kept
  in a preallocated ``(T, R)`` int8/int16 array, and regret and reward curves are computed from
  it after the loop, in blocks, from the environment's expected-reward table.
- **Chunks and seeds.** Replications are split into chunks of ``chunk_size`` (default 100). A
  task is one (agent, chunk) pair; its randomness is fixed by :func:`chunk_seeds`:
  chunk ``i`` owns ``SeedSequence(seed).spawn(n_chunks)[i]``, i.e.
  ``SeedSequence(seed, spawn_key=(i,))``; its child ``(i, 0)`` seeds the environment and its
  child ``(i, 1, crc32(label))`` the agent. Results are therefore bit-identical whatever the
  number of workers, and an agent's results do not depend on which other agents are in the run.
- **Common random numbers.** Every agent gets the *same* environment seed for a chunk. The
  project's environments draw one standard normal per replication and step whichever arm is
  pulled, so all agents face the same reward noise; each agent's marginal behaviour is
  unchanged, but differences between agents have much smaller variance (the standard errors
  reported per agent remain the per-agent ones, which are conservative for comparisons).
- **Parallelism.** Tasks run on a ``concurrent.futures.ProcessPoolExecutor`` with ``n_jobs``
  workers (default ``os.cpu_count()``), the slowest (private) agents first. ``n_jobs=1`` runs
  in-process. The results are identical either way.

The pieces: :mod:`dpbandits.experiments.envspec` and :mod:`dpbandits.experiments.agentspec` turn
the arguments into
picklable specs and agents, :mod:`dpbandits.experiments.chunk` plays one task,
:mod:`dpbandits.experiments.regret` turns
its actions into regret, :mod:`dpbandits.experiments.parallel` runs the tasks, and this module
checks the
arguments, makes the tasks and merges their outputs into
:class:`~dpbandits.experiments.results.Results`.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import pickle
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.core.files import jsonable
from dpbandits.core.traits import cost_hint
from dpbandits.core.version import __version__
from dpbandits.experiments.agentspec import (
    agent_config,
    check_reward_family,
    is_private,
    probe_agent,
    resolve_agents,
)
from dpbandits.experiments.arm_laws import record_laws
from dpbandits.experiments.chunk import ChunkTask, chunk_seeds, run_chunk
from dpbandits.experiments.envspec import (
    env_spec,
    make_env,
    reward_bounds,
    reward_family,
    vector_class,
)
from dpbandits.experiments.memory import RunSizes, check_memory
from dpbandits.experiments.parallel import TaskTime, run_tasks
from dpbandits.experiments.results import Results
from dpbandits.experiments.trust_reports import convert_reports
from dpbandits.experiments.warmup import compile_notice, early_parts, print_line, warm_up
from dpbandits.trust.notions import check_delta
from envs.base import BanditVectorEnv

if TYPE_CHECKING:
    import concurrent.futures as cf

# chunk_seeds and resolve_agents have their homes in dpbandits.experiments.chunk and
# dpbandits.experiments.agentspec;
# they are part of the engine's API, so they are importable from here too.
__all__ = [
    "EnvironmentFacts",
    "check_run_arguments",
    "chunk_seeds",
    "make_tasks",
    "merge_outputs",
    "probe_environment",
    "recording_plan",
    "resolve_agents",
    "run",
    "run_config",
    "run_in_parallel",
]

DEFAULT_CHUNK_SIZE = 100
DEFAULT_POINTS = 1000  # recorded points per curve when record_stride is not given


def _record_steps(horizon: int, stride: int) -> NDArray[np.int64]:
    steps = np.arange(stride, horizon + 1, stride, dtype=np.int64)
    if steps.size == 0 or steps[-1] != horizon:
        steps = np.append(steps, np.int64(horizon))
    return steps


def _check_picklable(spec: dict[str, Any], agent_map: dict[str, Any], where: str) -> None:
    """Fail before any work when the environment or an agent cannot be sent to a worker."""
    for what, obj in [("the environment's arguments", spec)] + [
        (f"agent {label!r}", a) for label, a in agent_map.items()
    ]:
        try:
            pickle.dumps(obj)
        except Exception as exc:  # noqa: BLE001 (any pickling failure has the same fix)
            raise ValueError(
                f"{what} cannot be sent to worker processes ({where}): {exc}. Use picklable "
                "objects: module-level functions or classes, not a lambda or a local function; "
                "for drifting means the named profiles envs.linear_drift, "
                "envs.sinusoidal_drift, envs.step_drift, envs.piecewise_linear_drift (or "
                "{'profile': 'linear', ...} in a config); or run with n_jobs=1"
            ) from None


def _task_times(
    timeline: list[TaskTime], tasks: list[ChunkTask], outputs: dict[int, Any], t0: float
) -> list[dict[str, Any]]:
    """Per task, in the order they started: its agent and chunk, the worker that ran it, its
    start and end in seconds after ``t0`` and its CPU seconds."""
    rows = [
        {
            "label": tasks[tt.task].label,
            "chunk": tasks[tt.task].chunk,
            "worker": tt.worker,
            "start": tt.start - t0,
            "end": tt.end - t0,
            "cpu": outputs[tt.task]["cpu_seconds"],
        }
        for tt in timeline
    ]
    return sorted(rows, key=lambda r: r["start"])


def _merge_privacy(reports: list[Any]) -> Any:
    """Worst case over chunks: numbers take their maximum, everything else the first chunk's."""
    first = reports[0]
    if isinstance(first, dict) and all(isinstance(r, dict) for r in reports):
        return {k: _merge_privacy([r.get(k, first[k]) for r in reports]) for k in first}
    if isinstance(first, list) and all(
        isinstance(r, list) and len(r) == len(first) for r in reports
    ):
        return [_merge_privacy([r[i] for r in reports]) for i in range(len(first))]
    numeric = [r for r in reports if isinstance(r, (int, float)) and not isinstance(r, bool)]
    if len(numeric) == len(reports) and reports:
        return max(numeric)
    return first


def run(
    env: Any,
    agents: Any,
    n_runs: int,
    seed: int | None = 0,
    horizon: int | None = None,
    progress: bool = True,
    record_stride: int | None = None,
    trace: bool = True,
    n_jobs: int | None = None,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    trace_stride: int | None = None,
    keep_actions: bool = False,
    quantile_levels: tuple[float, float] = (0.1, 0.9),
    executor: cf.Executor | None = None,
    delta: float | None = None,
) -> Results:
    """Run every agent for ``n_runs`` replications of ``horizon`` steps; return :class:`Results`.

    Parameters
    ----------
    env:
        A registered id (``"dpbandits/TwoArmedShift-v0"``), a config mapping
        ``{"id": ..., **kwargs}`` (e.g. ``{"id": ..., "t_shift": 300, "horizon": 500}``) or an
        environment made by ``gymnasium.make``/``make_vec`` (its spec's id and kwargs are used to
        build the vector form).
    agents:
        Mapping ``label -> agent``, where an agent is an object following the protocol of
        :class:`agents.Agent`, a name for :func:`agents.make`, or a mapping
        ``{"kind": ..., **params}`` (the dialect of experiment configs). A sequence of agents is
        labelled by their names. Agent objects are copied for every chunk, never mutated.
    n_runs:
        Number of independent replications per agent (>= 1).
    seed:
        Root seed of the run (see :func:`chunk_seeds`). ``None`` draws fresh entropy and records
        it in ``config["seed"]``.
    horizon:
        Number of steps. ``None`` uses the environment's ``horizon``. For the project's
        environments (``dpbandits/...``) a different horizon is passed to the environment
        unless the config sets one; otherwise it must not exceed the environment's.
    progress:
        Show a ``tqdm`` progress bar (updated every 1000 steps).
    record_stride:
        Steps between recorded points of the per-run curves (default ``horizon // 1000``, at
        least 1); the last step is always recorded.
    trace:
        Record traces of the agents' private means and sensitivities (agents with a
        ``private_means()`` hook) every ``trace_stride`` steps (default ``record_stride``).
        When the traces alone would not fit in memory the run goes without them, with a
        :class:`~dpbandits.core.checks.MemoryWarning`.
    n_jobs:
        Worker processes (default ``os.cpu_count()``); 1 runs in this process. Results do not
        depend on it. Ignored when ``executor`` is given.
    chunk_size:
        Replications per task (part of the run's identity: changing it changes the draws).
    keep_actions:
        Keep every action, ``(horizon, n_runs)`` per agent, in the results.
    quantile_levels:
        Levels of the "true" quantile range stored for the sensitivity plots (Fig. 9c/d).
    executor:
        Any :class:`concurrent.futures.Executor` to run the (agent, chunk) tasks on instead of
        the local process pool, e.g. a Dask cluster's
        ``distributed.Client(...).get_executor()``. Every task carries its own seeds, so the
        results are bit-identical to a local run; the progress bar advances per finished task.
    delta:
        With a ``delta`` in ``(0, 1)``, every privacy report also states its guarantee as
        (eps, delta) at this delta, converted by Google's ``dp-accounting`` (the extra
        ``accounting``; without it the report says what to install), and ``config["delta"]``
        records it (docs/trust-models.md).

    The results' ``timing`` says where the wall time went: ``wall_seconds`` (the tasks),
    ``cpu_seconds`` per agent, ``n_jobs``, ``started_at`` (``time.time()`` of the call),
    ``setup_seconds`` (checks and probes before the first task), ``tasks`` (per task: agent,
    chunk, worker process, start and end in seconds after the call, CPU seconds) and
    ``merge_seconds`` (building the results after the last task).

    Memory is checked before any work (:mod:`dpbandits.experiments.memory`): a run that would
    not fit in this machine's memory raises ``ValueError`` (the sizes, the estimate by part, the
    argument that lowers it), one that takes much of it warns (``MemoryWarning``).

    The steps: :func:`check_run_arguments`, :func:`probe_environment`, the agents' probe
    (:func:`~dpbandits.experiments.agentspec.probe_agent`: each agent reset once, which checks
    it and measures its state for the memory check), :func:`recording_plan`,
    :func:`make_tasks`, the warm-up (:mod:`dpbandits.experiments.warmup`),
    :func:`run_in_parallel`, :func:`merge_outputs`, :func:`run_config`.
    """
    t_enter = time.time()
    n_runs, chunk_size, seed, n_jobs = check_run_arguments(n_runs, chunk_size, seed, n_jobs)
    delta = None if delta is None else check_delta(delta)
    spec = env_spec(env)
    # memory (dpbandits.experiments.memory): what is known before building the environment,
    # then everything, before any task is made: refused, run without traces, or announced
    sizes = RunSizes(n_runs, 1, 1, len(agents) if isinstance(agents, (Mapping, list, tuple))
                     else 1, 0, record_stride, trace, trace_stride, chunk_size,
                     0 if executor is not None else n_jobs, keep_actions)  # fmt: skip
    known = horizon if horizon is not None else spec["kwargs"].get("horizon")
    if isinstance(known, (int, np.integer)) and not isinstance(known, bool) and known > 0:
        check_memory(replace(sizes, horizon=int(known)), at_least=True)
    agent_map = resolve_agents(agents)
    # the set-up compiles what the run needs (warmup.py): on a machine with an empty kernel
    # cache, one line says so first, and the workers start with the compiled code
    jobs = n_jobs if executor is None else 1
    with contextlib.ExitStack() as stack:
        notice = stack.enter_context(
            compile_notice(agent_map, jobs, print_line if progress else None)
        )
        facts = probe_environment(spec, horizon, trace, quantile_levels)
        early = stack.enter_context(early_parts(agent_map, facts.n_arms, notice))
        sizes = replace(
            sizes, horizon=facts.horizon, n_arms=facts.n_arms, n_agents=len(agent_map),
            n_traced=sum(is_private(a) for a in agent_map.values()),
            n_segments=len(facts.change_points) + 1,
            # the one reset of each agent before the work: checks it, and measures its state
            agent_bytes_per_run=max(probe_agent(label, a, facts.n_arms, facts.horizon)
                                    for label, a in agent_map.items()),
        )  # fmt: skip
        trace = check_memory(sizes).sizes.trace  # False: the traces alone do not fit
        plan = recording_plan(facts, record_stride, trace_stride, trace)
        tasks = make_tasks(agent_map, spec, facts, plan, n_runs, chunk_size, seed, keep_actions)
        warm_up(tasks, jobs, notice, early)
    t_start = time.time()
    outputs, timeline, workers = run_in_parallel(
        tasks, agent_map, spec, n_jobs, executor, progress, len(agent_map) * n_runs * facts.horizon
    )
    t_end = time.time()
    labels = list(agent_map)
    data, privacy = merge_outputs(labels, tasks, outputs)
    privacy = convert_reports(privacy, delta)
    config = run_config(spec, facts, plan, agent_map, n_runs, seed, chunk_size, quantile_levels)
    if delta is not None:
        config["delta"] = delta
    arrays: dict[str, NDArray[Any]] = {
        "steps": plan.steps,
        "expected_rewards": plan.expected_at,
        "trace_steps": plan.trace_steps,
    }
    if plan.quantile_range is not None:
        arrays["true_quantile_range"] = plan.quantile_range
    timing = {
        "wall_seconds": t_end - t_start,
        "n_jobs": type(executor).__name__ if executor is not None else workers,
        "cpu_seconds": {
            label: sum(outputs[j]["cpu_seconds"] for j, tk in enumerate(tasks) if tk.label == label)
            for label in labels
        },
        # where the wall time went (docs/performance.md): when run() was called (time.time()),
        # the checks and probes before the first task, every task's worker and times (seconds
        # after the call), the merge after
        "started_at": t_enter,
        "setup_seconds": t_start - t_enter,
        "tasks": _task_times(timeline, tasks, outputs, t_enter),
    }
    results = Results(
        config=jsonable(config), labels=labels, arrays=arrays, data=data,
        privacy=jsonable(privacy), timing=timing,
    )  # fmt: skip
    timing["merge_seconds"] = time.time() - t_end
    return results


def check_run_arguments(
    n_runs: Any, chunk_size: Any, seed: Any, n_jobs: Any
) -> tuple[int, int, int, int]:
    """The scalar arguments of :func:`run`, checked; ``seed=None`` draws fresh entropy and
    ``n_jobs=None`` is the number of cores."""
    n_runs = checks.positive_int(n_runs, "n_runs")
    chunk_size = checks.positive_int(chunk_size, "chunk_size")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    seed = checks.integer(seed, "seed", minimum=0)  # a bool is a TypeError, as everywhere
    n_jobs = checks.positive_int(os.cpu_count() or 1 if n_jobs is None else n_jobs, "n_jobs")
    return n_runs, chunk_size, seed, n_jobs


@dataclass
class EnvironmentFacts:
    """What the engine learns from one environment built in this process before any work:
    the horizon, the number of arms, the expected-reward table ``(T, K)`` (``None`` when the
    environment does not expose one), the change points, the quantile levels of the traces and
    the arms' reward family (:func:`~dpbandits.experiments.envspec.reward_family`: ``None``
    when the environment does not say)."""

    unwrapped: Any
    horizon: int
    n_arms: int
    table: NDArray[np.float64] | None
    change_points: list[int]
    quantile_levels: tuple[float, float]
    arm: str | None = None


def probe_environment(
    spec: dict[str, Any], horizon: int | None, trace: bool, quantile_levels: tuple[float, float]
) -> EnvironmentFacts:
    """Build the environment once, settle the horizon (passed on to the project's
    environments, else at most the environment's) and read its facts. ``spec`` is updated in
    place when the horizon is passed on."""
    if horizon is not None:
        horizon = checks.positive_int(horizon, "horizon")
    probe = make_env(spec)
    env_horizon = getattr(probe.unwrapped, "horizon", None)
    if (
        horizon is not None
        and env_horizon is not None
        and horizon != env_horizon
        and spec["id"].startswith("dpbandits/")
        and "horizon" not in spec["kwargs"]
    ):
        spec["kwargs"]["horizon"] = horizon
        probe.close()
        probe = make_env(spec)
        env_horizon = probe.unwrapped.horizon
    if horizon is None:
        if env_horizon is None:
            raise ValueError("horizon must be given: the environment has no 'horizon' attribute")
        horizon = int(env_horizon)
    if env_horizon is not None and horizon > env_horizon:
        raise ValueError(
            f"horizon must be <= the environment's horizon {env_horizon}, got {horizon}"
        )
    n_arms = getattr(probe.action_space, "n", None)
    if n_arms is None:
        raise TypeError(
            f"the environment's action space must be Discrete, got {probe.action_space}"
        )
    unwrapped = probe.unwrapped
    arm = reward_family(probe)  # (behind a local randomizer: its reports)
    table: NDArray[np.float64] | None = None
    if callable(getattr(unwrapped, "expected_reward_table", None)):
        table = np.ascontiguousarray(unwrapped.expected_reward_table()[:horizon], dtype=float)
    elif callable(getattr(unwrapped, "expected_rewards", None)):
        table = np.array([unwrapped.expected_rewards(t) for t in range(horizon)], dtype=float)
    change_points = [int(c) for c in getattr(unwrapped, "change_points", ()) if 0 < c < horizon]
    probe.close()
    return EnvironmentFacts(unwrapped, horizon, int(n_arms), table, change_points,
                            tuple(quantile_levels),  # type: ignore[arg-type]
                            arm)  # fmt: skip


@dataclass
class RecordingPlan:
    """The steps at which curves and traces are recorded, and what is known there in advance:
    the expected rewards at the recorded steps and the true quantile ranges at the trace
    steps (Fig. 9c/d)."""

    stride: int
    steps: NDArray[np.int64]
    trace_stride: int | None
    trace_steps: NDArray[np.int64]
    expected_at: NDArray[np.float64]
    quantile_range: NDArray[np.float64] | None


def recording_plan(
    facts: EnvironmentFacts, record_stride: int | None, trace_stride: int | None, trace: bool
) -> RecordingPlan:
    """Where :func:`run` records (``record_stride`` default ``horizon // 1000``, at least 1;
    the last step always)."""
    horizon, n_arms = facts.horizon, facts.n_arms
    stride = (
        max(1, horizon // DEFAULT_POINTS)
        if record_stride is None
        else checks.positive_int(record_stride, "record_stride")
    )
    rec = _record_steps(horizon, stride)
    tstride = stride if trace_stride is None else checks.positive_int(trace_stride, "trace_stride")
    trace_steps = _record_steps(horizon, tstride) if trace else np.zeros(0, dtype=np.int64)
    table = facts.table
    expected_at = table[rec - 1] if table is not None else np.full((rec.size, n_arms), np.nan)
    qrange = None
    if trace and callable(getattr(facts.unwrapped, "quantile_range_table", None)):
        qrange = facts.unwrapped.quantile_range_table(trace_steps - 1, facts.quantile_levels)
    return RecordingPlan(stride, rec, tstride if trace else None, trace_steps, expected_at,
                         qrange)  # fmt: skip


def make_tasks(
    agent_map: dict[str, Any],
    spec: dict[str, Any],
    facts: EnvironmentFacts,
    plan: RecordingPlan,
    n_runs: int,
    chunk_size: int,
    seed: int,
    keep_actions: bool,
) -> list[ChunkTask]:
    """One task per (agent, chunk of ``chunk_size`` replications), each agent probed once
    first (:func:`~dpbandits.experiments.agentspec.probe_agent`: a bad parameter fails here,
    not in a worker) and checked against the environment's rewards (an agent for Bernoulli
    bandits only on other arms, one for rewards in ``[0, 1]`` on wider clipped Gaussian arms:
    :func:`~dpbandits.experiments.agentspec.check_reward_family`)."""
    for label, agent in agent_map.items():
        probe_agent(label, agent, facts.n_arms, facts.horizon)
        check_reward_family(label, agent, facts.arm, spec["id"], reward_bounds(facts.unwrapped))
    chunks = [(i, min(chunk_size, n_runs - i * chunk_size))
              for i in range(math.ceil(n_runs / chunk_size))]  # fmt: skip
    # The project's vector environments build their own expected-reward table with their
    # schedule: sending a copy with every task would only cost pickling and memory.
    vcls = vector_class(spec)
    sent_table = None if vcls is not None and issubclass(vcls, BanditVectorEnv) else facts.table
    return [
        ChunkTask(label, copy.deepcopy(agent), i, n, spec, facts.horizon, facts.n_arms, seed,
                  plan.steps, plan.trace_steps, sent_table, keep_actions,
                  tuple(facts.change_points))
        for label, agent in agent_map.items()
        for i, n in chunks
    ]  # fmt: skip


def run_in_parallel(
    tasks: list[ChunkTask],
    agent_map: dict[str, Any],
    spec: dict[str, Any],
    n_jobs: int,
    executor: cf.Executor | None,
    progress: bool,
    total_steps: int,
) -> tuple[dict[int, Any], list[TaskTime], int]:
    """Run the tasks, longest first, on ``n_jobs`` local processes or ``executor``, with a
    progress bar over ``total_steps``; return the outputs by task index, the timeline and the
    number of workers used."""

    # Longest first (LPT scheduling): agents may declare a relative ``cost_hint`` (UCB ~ 1);
    # private agents cost several times a UCB step.
    def cost(j: int) -> float:
        return cost_hint(tasks[j].agent)

    order = sorted(range(len(tasks)), key=lambda j: (-cost(j), j))
    workers = 1 if executor is not None else min(n_jobs, len(tasks))
    if executor is not None or workers > 1:
        _check_picklable(spec, agent_map, "a Dask/executor run" if executor else f"n_jobs={n_jobs}")
    bar = None
    if progress:
        from tqdm.auto import tqdm  # tqdm's import costs start-up time: only when shown

        bar = tqdm(total=total_steps, unit="step", unit_scale=True, desc="dpbandits run",
                   mininterval=0.5)  # fmt: skip

    def advance(k: int) -> None:
        if bar is not None:
            bar.update(k)

    def task_done(j: int, out: dict[str, Any]) -> None:
        if executor is not None:  # remote tasks cannot report as they go: count whole tasks
            advance(tasks[j].n * tasks[j].horizon)

    timeline: list[TaskTime] = []
    try:
        outputs = run_tasks(
            run_chunk,
            tasks,
            order=order,
            n_jobs=workers,
            executor=executor,
            on_done=task_done,
            progress=advance if progress else None,
            timeline=timeline,
        )
    finally:
        if bar is not None:
            bar.close()
    return outputs, timeline, workers


def merge_outputs(
    labels: list[str], tasks: list[ChunkTask], outputs: dict[int, Any]
) -> tuple[dict[str, dict[str, NDArray[Any]]], dict[str, Any]]:
    """Join the chunks of every agent, in chunk order: per-run arrays concatenated, action
    frequencies averaged with the chunks' weights, privacy reports merged worst-case."""
    data: dict[str, dict[str, NDArray[Any]]] = {}
    privacy: dict[str, Any] = {}
    for label in labels:
        parts = [outputs[j] for j, tk in enumerate(tasks) if tk.label == label]
        d: dict[str, NDArray[Any]] = {}
        for key in ("regret", "reward", "private_means", "sensitivities", "actions",
                    "segment_regret"):  # fmt: skip
            if all(key in p for p in parts):
                d[key] = np.concatenate([p[key] for p in parts], axis=1)
        for key in ("total_regret", "total_reward", "pre_change_regret", "post_change_regret",
                    "action_counts"):  # fmt: skip
            d[key] = np.concatenate([p[key] for p in parts], axis=0)
        weights = np.array([p["total_reward"].size for p in parts], dtype=float)
        d["action_freq"] = np.tensordot(
            weights / weights.sum(), np.stack([p["action_freq"] for p in parts]), axes=1
        )
        data[label] = d
        reports = [p["privacy"] for p in parts]
        privacy[label] = _merge_privacy(reports) if reports[0] is not None else None
    return data, privacy


def run_config(
    spec: dict[str, Any],
    facts: EnvironmentFacts,
    plan: RecordingPlan,
    agent_map: dict[str, Any],
    n_runs: int,
    seed: int,
    chunk_size: int,
    quantile_levels: tuple[float, float],
) -> dict[str, Any]:
    """What the results record of the run: enough to run it again (``Results.config``)."""
    horizon, change_points = facts.horizon, facts.change_points
    return {
        "env": spec,
        "n_runs": n_runs,
        "horizon": horizon,
        "seed": seed,
        "chunk_size": chunk_size,
        "record_stride": plan.stride,
        "trace_stride": plan.trace_stride,
        "n_arms": facts.n_arms,
        "change_points": change_points,
        "segments": [[a, b] for a, b in zip([0, *change_points], [*change_points, horizon],
                                            strict=True)],  # fmt: skip
        # the arms' laws per segment (dpbandits.experiments.arm_laws), for the lower bounds
        "arms": record_laws(facts.unwrapped, horizon, change_points),
        "agents": {label: agent_config(agent) for label, agent in agent_map.items()},
        "quantile_levels": list(quantile_levels),
        "versions": {
            "dpbandits": __version__,
            "numpy": np.__version__,
            "gymnasium": gymnasium.__version__,
        },
    }
