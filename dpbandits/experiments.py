"""The batched regret engine and :class:`Results` (DESIGN.md "Experiments, results, scale").

:func:`run` plays every agent against the same environment for ``n_runs`` independent
replications and ``horizon`` steps, and measures the dynamic pseudo-regret
``sum_t max_a mu_a(t) - mu_{a_t}(t)`` against the expected *clipped* reward (SPEC §5) that the
project's environments expose. This reproduces App. H / Fig. 9 of the paper in one call::

    from dpbandits.experiments import run
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
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import json
import math
import os
import pickle
import queue as queue_mod
import time
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "FIG9_LABELS",
    "Results",
    "SummaryTable",
    "chunk_seeds",
    "run",
    "shift_agents",
    "shift_env",
]

DEFAULT_CHUNK_SIZE = 100
DEFAULT_POINTS = 1000  # recorded points per curve when record_stride is not given
PROGRESS_EVERY = 1000  # steps between progress reports
_BLOCK = 8192  # steps per block when turning actions into regret after the loop


# ----------------------------------------------------------------------------------------------
# Seeds
# ----------------------------------------------------------------------------------------------
def chunk_seeds(seed: int, chunk: int, label: str) -> tuple[int, np.random.SeedSequence]:
    """The environment seed and the agent's seed sequence of one (chunk, agent) task.

    Chunk ``i`` owns ``SeedSequence(seed).spawn(n_chunks)[i] == SeedSequence(seed,
    spawn_key=(i,))``. Its child ``(i, 0)`` gives the integer passed to ``env.reset(seed=...)``
    -- the same for every agent (common random numbers) -- and its child
    ``(i, 1, crc32(label))`` is the agent's stream, passed to ``agent.reset(rng=...)`` as
    ``numpy.random.default_rng(seed_sequence)``. Tests use this to replay a run by hand.
    """
    env_ss = np.random.SeedSequence(seed, spawn_key=(chunk, 0))
    env_seed = int(env_ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    agent_ss = np.random.SeedSequence(seed, spawn_key=(chunk, 1, zlib.crc32(label.encode("utf-8"))))
    return env_seed, agent_ss


# ----------------------------------------------------------------------------------------------
# Environment handling
# ----------------------------------------------------------------------------------------------
def _ensure_registered(env_id: str) -> None:
    if env_id.startswith("dpbandits/"):
        import envs  # noqa: F401  (registers the project's ids)


def _env_spec(env: Any) -> dict[str, Any]:
    """Normalise ``env`` (id, config mapping or instance) to ``{"id": str, "kwargs": dict}``."""
    if isinstance(env, str):
        return {"id": env, "kwargs": {}}
    if isinstance(env, Mapping):
        cfg = dict(env)
        if "id" not in cfg or not isinstance(cfg["id"], str):
            raise ValueError(f"env config must have a string 'id', got keys {sorted(cfg)}")
        env_id = cfg.pop("id")
        kwargs = dict(cfg.pop("kwargs", {}))
        kwargs.update(cfg)
        return {"id": env_id, "kwargs": kwargs}
    spec = getattr(env, "spec", None)
    if spec is None or not getattr(spec, "id", None):
        raise TypeError(
            "env must be a registered id, a config {'id': ..., **kwargs} or an environment "
            f"made by gymnasium.make / make_vec; got {type(env).__name__} without a spec"
        )
    kwargs = dict(spec.kwargs or {})
    # make_vec records its own arguments in the spec; the engine chooses them per chunk.
    for key in ("num_envs", "vectorization_mode", "vector_kwargs", "wrappers"):
        kwargs.pop(key, None)
    return {"id": spec.id, "kwargs": kwargs}


def _make_single(spec: dict[str, Any]) -> Any:
    import gymnasium

    _ensure_registered(spec["id"])
    return gymnasium.make(spec["id"], **spec["kwargs"])


def _make_vector(spec: dict[str, Any], num_envs: int) -> Any:
    import gymnasium

    _ensure_registered(spec["id"])
    env_spec = gymnasium.spec(spec["id"])
    mode = "vector_entry_point" if env_spec.vector_entry_point is not None else "sync"
    return gymnasium.make_vec(
        spec["id"], num_envs=num_envs, vectorization_mode=mode, **spec["kwargs"]
    )


def _true_quantile_range(
    unwrapped: Any, steps0: NDArray[np.int64], levels: tuple[float, float]
) -> NDArray[np.float64] | None:
    """``Q(hi level) - Q(lo level)`` of each arm's reward at the 0-based ``steps0`` (Fig. 9c/d).

    For clipped Gaussian arms ``Q(p) = clip(m + s Phi^-1(p), lo, hi)``; for Bernoulli arms
    ``Q(p) = 1[p > 1 - m]``. ``None`` when the environment does not expose its parameters.
    """
    from scipy.special import ndtri

    means_table = getattr(unwrapped, "means_table", None)
    arm = getattr(unwrapped, "arm", None)
    if means_table is None or arm not in ("gaussian", "bernoulli"):
        return None
    m = np.asarray(means_table())[steps0]
    if arm == "gaussian":
        s = np.asarray(unwrapped.sds_table())[steps0]
        lo, hi = float(unwrapped.lo), float(unwrapped.hi)
        q_lo = np.clip(m + s * ndtri(levels[0]), lo, hi)
        q_hi = np.clip(m + s * ndtri(levels[1]), lo, hi)
    else:
        q_lo = (levels[0] > 1.0 - m).astype(float)
        q_hi = (levels[1] > 1.0 - m).astype(float)
    return np.asarray(q_hi - q_lo, dtype=np.float64)


# ----------------------------------------------------------------------------------------------
# Agents handling
# ----------------------------------------------------------------------------------------------
def _resolve_agents(agents_arg: Any) -> dict[str, Any]:
    import agents as agents_pkg

    if isinstance(agents_arg, Mapping):
        items = list(agents_arg.items())
    elif isinstance(agents_arg, Sequence) and not isinstance(agents_arg, str):
        items = []
        for a in agents_arg:
            base = a if isinstance(a, str) else str(getattr(a, "name", type(a).__name__))
            label, n = base, 1
            while label in {k for k, _ in items}:
                n += 1
                label = f"{base}-{n}"
            items.append((label, a))
    else:
        raise TypeError(
            "agents must map labels to agents (or agent names), e.g. {'UCB': 'ucb'}; "
            f"got {type(agents_arg).__name__}"
        )
    if not items:
        raise ValueError("agents must contain at least one agent")
    out: dict[str, Any] = {}
    for label, a in items:
        if not isinstance(label, str) or not label:
            raise TypeError(f"agent labels must be non-empty strings, got {label!r}")
        if isinstance(a, str):
            a = agents_pkg.make(a)
        elif isinstance(a, Mapping):
            params = dict(a)
            if "name" not in params:
                raise ValueError(f"agent config for {label!r} needs a 'name' key, got {params}")
            a = agents_pkg.make(params.pop("name"), **params)
        for method in ("reset", "act", "update"):
            if not callable(getattr(a, method, None)):
                raise TypeError(
                    f"agent {label!r} ({type(a).__name__}) has no {method}() method; "
                    "agents follow the protocol of agents.base.Agent"
                )
        out[label] = a
    return out


def _jsonable(x: Any) -> Any:
    """A JSON round-trippable copy of ``x`` (tuples become lists, unknown objects their repr)."""
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if x is None or isinstance(x, str):
        return x
    return repr(x)


def _agent_config(agent: Any) -> dict[str, Any]:
    get_params = getattr(agent, "get_params", None)
    params = get_params() if callable(get_params) else {}
    return {"class": type(agent).__name__, "repr": repr(agent), "params": _jsonable(params)}


def _is_private(agent: Any) -> bool:
    return callable(getattr(agent, "private_means", None))


# ----------------------------------------------------------------------------------------------
# One task: one agent, one chunk of replications
# ----------------------------------------------------------------------------------------------
@dataclass
class _Task:
    label: str
    agent: Any
    chunk: int
    n: int
    spec: dict[str, Any]
    horizon: int
    n_arms: int
    seed: int
    record_steps: NDArray[np.int64]
    trace_steps: NDArray[np.int64]
    table: NDArray[np.float64] | None
    change_point: int | None
    keep_actions: bool


_progress_queue: Any = None  # set in worker processes by _init_worker


def _init_worker(q: Any) -> None:
    global _progress_queue
    _progress_queue = q


def _queue_progress(n: int) -> None:
    if _progress_queue is not None:
        _progress_queue.put(n)


def _coerce_actions(a: Any, n: int, n_arms: int, label: str) -> NDArray[np.int64]:
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"agent {label!r} returned non-integer actions (dtype {arr.dtype})")
    if arr.shape != (n,):
        raise ValueError(f"agent {label!r} returned actions of shape {arr.shape}, expected ({n},)")
    return arr.astype(np.int64)


def _invalid_actions(a: NDArray[np.int64], n_arms: int, label: str, t: int) -> ValueError:
    bad = a[(a < 0) | (a >= n_arms)]
    return ValueError(
        f"agent {label!r} returned invalid actions at step {t}: {bad[:5].tolist()} "
        f"(actions must be integers in 0..{n_arms - 1})"
    )


def _run_task(task: _Task, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Play one chunk of replications of one agent; return its per-run arrays."""
    if progress is None:
        progress = _queue_progress
    cpu0 = time.process_time()
    n, T, K, label = task.n, task.horizon, task.n_arms, task.label
    venv = _make_vector(task.spec, n)
    env_seed, agent_ss = chunk_seeds(task.seed, task.chunk, label)
    venv.reset(seed=env_seed)
    agent = task.agent
    agent.reset(n, K, horizon=T, rng=np.random.default_rng(agent_ss))

    adtype = np.int8 if K <= 127 else (np.int16 if K <= 32767 else np.int64)
    actions = np.empty((T, n), dtype=adtype)
    reward_sum = np.zeros(n)
    rec = task.record_steps
    reward_curve = np.empty((rec.size, n))
    tr = task.trace_steps
    traced = tr.size > 0 and _is_private(agent)
    pm_trace = np.full((tr.size, n, K), np.nan) if traced else None
    sens_trace = np.full((tr.size, n, K), np.nan) if traced else None
    sens_fn = getattr(agent, "sensitivities", None) if traced else None

    act, update, step = agent.act, agent.update, venv.step
    shape = (n,)
    ri, next_rec = 0, int(rec[0])
    ti, next_tr = 0, (int(tr[0]) if traced else -1)
    next_prog = PROGRESS_EVERY
    for t in range(T):
        a = act()
        if type(a) is not np.ndarray or a.dtype != np.int64 or a.shape != shape:
            a = _coerce_actions(a, n, K, label)
        if a.view(np.uint64).max() >= K:
            venv.close()
            raise _invalid_actions(a, K, label, t)
        actions[t] = a
        r = step(a)[1]
        reward_sum += r  # before update: an agent may not keep r intact
        update(a, r)
        s = t + 1
        if s == next_rec:
            reward_curve[ri] = reward_sum
            ri += 1
            next_rec = int(rec[ri]) if ri < rec.size else -1
        if s == next_tr:
            pv = agent.private_means()
            if pv is not None:
                pm_trace[ti] = pv  # type: ignore[index]
            sv = sens_fn() if sens_fn is not None else None
            if sv is not None:
                sens_trace[ti] = sv  # type: ignore[index]
            ti += 1
            next_tr = int(tr[ti]) if ti < tr.size else -1
        if s == next_prog:
            progress(PROGRESS_EVERY * n)
            next_prog += PROGRESS_EVERY
    progress((T % PROGRESS_EVERY) * n)
    venv.close()

    out: dict[str, Any] = {"reward": reward_curve, "total_reward": reward_sum.copy()}
    out.update(_regret_from_actions(actions, task))
    out["action_counts"], out["action_freq"] = _action_frequencies(actions, K, rec)
    if traced:
        out["private_means"] = pm_trace
        if sens_trace is not None and not np.all(np.isnan(sens_trace)):
            out["sensitivities"] = sens_trace
    if task.keep_actions:
        out["actions"] = actions
    report_fn = getattr(agent, "privacy_report", None)
    out["privacy"] = _jsonable(report_fn()) if callable(report_fn) else None
    out["cpu_seconds"] = time.process_time() - cpu0
    return out


def _regret_from_actions(actions: NDArray[Any], task: _Task) -> dict[str, NDArray[np.float64]]:
    """Cumulative dynamic pseudo-regret per run from the actions and the expected-reward table."""
    T, n = actions.shape
    rec = task.record_steps
    if task.table is None:
        nan_runs = np.full(n, np.nan)
        return {
            "regret": np.full((rec.size, n), np.nan),
            "total_regret": nan_runs,
            "pre_change_regret": nan_runs.copy(),
            "post_change_regret": nan_runs.copy(),
        }
    table = task.table
    best = table.max(axis=1)
    curve = np.empty((rec.size, n))
    cum = np.zeros(n)
    pre = np.full(n, np.nan)
    cp = task.change_point
    for s0 in range(0, T, _BLOCK):
        s1 = min(s0 + _BLOCK, T)
        blk = actions[s0:s1].astype(np.intp)
        reg = best[s0:s1, None] - np.take_along_axis(table[s0:s1], blk, axis=1)
        creg = np.cumsum(reg, axis=0)
        creg += cum
        # recorded steps are 1-based counts: step s is row s - 1 - s0 of this block
        sel = (rec > s0) & (rec <= s1)
        curve[sel] = creg[rec[sel] - 1 - s0]
        if cp is not None and s0 < cp <= s1:
            pre = creg[cp - 1 - s0].copy()
        cum = creg[-1]
    total = cum.copy()
    post = total - pre if cp is not None else np.full(n, np.nan)
    if cp is None:
        pre = total.copy()
    return {"regret": curve, "total_regret": total, "pre_change_regret": pre,
            "post_change_regret": post}  # fmt: skip


def _action_frequencies(
    actions: NDArray[Any], K: int, rec: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Per-run pull counts ``(R, K)`` and, per recorded interval, the fraction of pulls of each
    arm over all runs ``(P, K)``."""
    T, n = actions.shape
    counts = np.zeros((n, K), dtype=np.int64)
    freq = np.zeros((rec.size, K))
    offsets = np.arange(n, dtype=np.int64) * K
    interval = np.searchsorted(rec, np.arange(1, T + 1), side="left")  # (T,) recorded interval
    for s0 in range(0, T, _BLOCK):
        s1 = min(s0 + _BLOCK, T)
        blk = actions[s0:s1].astype(np.int64)
        counts += np.bincount((blk + offsets).ravel(), minlength=n * K).reshape(n, K)
        cell = (interval[s0:s1, None] * K + blk).ravel()
        freq += np.bincount(cell, minlength=rec.size * K).reshape(rec.size, K)
    lengths = np.diff(np.concatenate([[0], rec]))
    freq /= (lengths * n)[:, None]
    return counts, freq


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


# ----------------------------------------------------------------------------------------------
# run
# ----------------------------------------------------------------------------------------------
def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return int(value)


def _record_steps(horizon: int, stride: int) -> NDArray[np.int64]:
    steps = np.arange(stride, horizon + 1, stride, dtype=np.int64)
    if steps.size == 0 or steps[-1] != horizon:
        steps = np.append(steps, np.int64(horizon))
    return steps


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
        ``{"name": ..., **params}``. A sequence of agents is labelled by their names. Agent
        objects are copied for every chunk, never mutated.
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
    """
    n_runs = _positive_int(n_runs, "n_runs")
    chunk_size = _positive_int(chunk_size, "chunk_size")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    seed = int(seed)
    if n_jobs is None:
        n_jobs = os.cpu_count() or 1
    n_jobs = _positive_int(n_jobs, "n_jobs")

    spec = _env_spec(env)
    if horizon is not None:
        horizon = _positive_int(horizon, "horizon")
    probe = _make_single(spec)
    unwrapped = probe.unwrapped
    env_horizon = getattr(unwrapped, "horizon", None)
    if (
        horizon is not None
        and env_horizon is not None
        and horizon != env_horizon
        and spec["id"].startswith("dpbandits/")
        and "horizon" not in spec["kwargs"]
    ):
        spec["kwargs"]["horizon"] = horizon
        probe.close()
        probe = _make_single(spec)
        unwrapped = probe.unwrapped
        env_horizon = unwrapped.horizon
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
    n_arms = int(n_arms)

    table: NDArray[np.float64] | None = None
    if callable(getattr(unwrapped, "expected_reward_table", None)):
        table = np.ascontiguousarray(unwrapped.expected_reward_table()[:horizon], dtype=float)
    elif callable(getattr(unwrapped, "expected_rewards", None)):
        table = np.array([unwrapped.expected_rewards(t) for t in range(horizon)], dtype=float)
    change_points = [int(c) for c in getattr(unwrapped, "change_points", ()) if 0 < c < horizon]
    change_point = change_points[0] if change_points else None

    stride = (
        max(1, horizon // DEFAULT_POINTS)
        if record_stride is None
        else _positive_int(record_stride, "record_stride")
    )
    rec = _record_steps(horizon, stride)
    tstride = stride if trace_stride is None else _positive_int(trace_stride, "trace_stride")
    trace_steps = _record_steps(horizon, tstride) if trace else np.zeros(0, dtype=np.int64)
    expected_at = table[rec - 1] if table is not None else np.full((rec.size, n_arms), np.nan)
    qrange = _true_quantile_range(unwrapped, trace_steps - 1, quantile_levels) if trace else None
    probe.close()

    agent_map = _resolve_agents(agents)
    labels = list(agent_map)
    chunks = [(i, min(chunk_size, n_runs - i * chunk_size))
              for i in range(math.ceil(n_runs / chunk_size))]  # fmt: skip
    tasks = [
        _Task(label, copy.deepcopy(agent_map[label]), i, n, spec, horizon, n_arms, seed,
              rec, trace_steps, table, change_point, keep_actions)
        for label in labels
        for i, n in chunks
    ]  # fmt: skip

    # Longest first (LPT scheduling): agents may declare a relative ``cost_hint`` (UCB ~ 1);
    # private agents cost several times a UCB step.
    def cost(j: int) -> float:
        hint = getattr(tasks[j].agent, "cost_hint", None)
        return float(hint) if isinstance(hint, (int, float)) else 1.0

    order = sorted(range(len(tasks)), key=lambda j: (-cost(j), j))

    workers = min(n_jobs, len(tasks))
    if executor is not None:
        if not isinstance(executor, cf.Executor):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}"
            )
    elif workers > 1:
        try:
            pickle.dumps(agent_map)
        except Exception as exc:  # noqa: BLE001 (any pickling failure means: run in-process)
            warnings.warn(
                f"agents cannot be sent to worker processes ({exc}); running with n_jobs=1",
                UserWarning,
                stacklevel=2,
            )
            workers = 1

    total_steps = len(labels) * n_runs * horizon
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total_steps, unit="step", unit_scale=True, desc="dpbandits run",
                   mininterval=0.5)  # fmt: skip

    def advance(k: int) -> None:
        if bar is not None:
            bar.update(k)

    t_start = time.perf_counter()
    outputs: dict[int, dict[str, Any]] = {}
    try:
        if executor is not None:
            outputs = _run_executor(executor, tasks, order, advance)
        elif workers == 1:
            for j in order:
                outputs[j] = _run_task(tasks[j], advance)
        else:
            outputs = _run_pool(tasks, order, workers, advance if progress else None)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t_start

    import dpbandits

    data: dict[str, dict[str, NDArray[Any]]] = {}
    privacy: dict[str, Any] = {}
    for label in labels:
        parts = [outputs[j] for j, tk in enumerate(tasks) if tk.label == label]
        d: dict[str, NDArray[Any]] = {}
        for key in ("regret", "reward", "private_means", "sensitivities", "actions"):
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

    import gymnasium

    config = {
        "env": spec,
        "n_runs": n_runs,
        "horizon": horizon,
        "seed": seed,
        "chunk_size": chunk_size,
        "record_stride": stride,
        "trace_stride": tstride if trace else None,
        "n_arms": n_arms,
        "change_points": change_points,
        "agents": {label: _agent_config(agent_map[label]) for label in labels},
        "quantile_levels": list(quantile_levels),
        "versions": {
            "dpbandits": dpbandits.__version__,
            "numpy": np.__version__,
            "gymnasium": gymnasium.__version__,
        },
    }
    arrays: dict[str, NDArray[Any]] = {
        "steps": rec,
        "expected_rewards": expected_at,
        "trace_steps": trace_steps,
    }
    if qrange is not None:
        arrays["true_quantile_range"] = qrange
    return Results(
        config=_jsonable(config),
        labels=labels,
        arrays=arrays,
        data=data,
        privacy=_jsonable(privacy),
        timing={
            "wall_seconds": wall,
            "n_jobs": workers if executor is None else type(executor).__name__,
            "cpu_seconds": {
                label: sum(
                    outputs[j]["cpu_seconds"] for j, tk in enumerate(tasks) if tk.label == label
                )
                for label in labels
            },
        },
    )


def _run_executor(
    executor: cf.Executor,
    tasks: list[_Task],
    order: list[int],
    advance: Callable[[int], None],
) -> dict[int, dict[str, Any]]:
    """Run the tasks on a user's executor (e.g. Dask); progress is counted per finished task."""
    futures = {executor.submit(_run_task, tasks[j]): j for j in order}
    outputs: dict[int, dict[str, Any]] = {}
    try:
        for f in cf.as_completed(futures):
            j = futures[f]
            outputs[j] = f.result()  # re-raises a worker's error
            advance(tasks[j].n * tasks[j].horizon)
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    return outputs


def _run_pool(
    tasks: list[_Task],
    order: list[int],
    workers: int,
    advance: Callable[[int], None] | None,
) -> dict[int, dict[str, Any]]:
    import multiprocessing as mp

    ctx = mp.get_context()
    q = ctx.Queue() if advance is not None else None
    outputs: dict[int, dict[str, Any]] = {}
    with cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=(q,)
    ) as ex:
        futures = {ex.submit(_run_task, tasks[j]): j for j in order}
        pending = set(futures)
        try:
            while pending:
                done, pending = cf.wait(pending, timeout=0.25, return_when=cf.FIRST_COMPLETED)
                if q is not None and advance is not None:
                    while True:
                        try:
                            advance(q.get_nowait())
                        except queue_mod.Empty:
                            break
                for f in done:
                    outputs[futures[f]] = f.result()  # re-raises a worker's error
        except BaseException:
            for f in pending:
                f.cancel()
            raise
    return outputs


# ----------------------------------------------------------------------------------------------
# The paper's configuration (App. H, Fig. 9, SPEC §6)
# ----------------------------------------------------------------------------------------------
SHIFT_ENV_ID = "dpbandits/TwoArmedShift-v0"
#: Legend labels of Fig. 9, in the paper's order.
FIG9_LABELS = ("UCB", "TS", "kRR", "RNM", "RS", "GEM", "mGEM")
#: Extra labels understood by :func:`shift_agents` (beyond the paper).
EXTRA_LABELS = ("UCB1", "TS-Beta", "SW-UCB", "D-UCB", "Exp3", "cGEM", "PF", "RNM-Gumbel")


def shift_env(t_shift: int = 30_000, horizon: int = 50_000) -> dict[str, Any]:
    """Config of the paper's two-armed shift environment (SPEC §5/§6): use as ``run(env=...)``."""
    return {"id": SHIFT_ENV_ID, "t_shift": t_shift, "horizon": horizon}


def shift_agents(
    labels: Sequence[str] | None = None,
    *,
    epsilon_means: float = 1.0,
    epsilon_select: float = 1.0,
    epsilon_quantiles: float = 1.0,
    epsilon_krr: float = 4.0,
    window: int = 200,
    levels: tuple[float, float] = (0.1, 0.9),
) -> dict[str, Any]:
    """The agents of Fig. 9 (App. H, SPEC §6) by their legend labels.

    ``UCB`` (ln T, alpha = sqrt 2), ``TS`` (Gaussian), and private agents with ``kRR``
    (``eps_S = epsilon_krr = 4``), ``RNM``, ``RS`` (gamma 0.05), ``GEM`` and ``mGEM``
    (beta 0.05); all private agents use ``eps_M``, ``eps_p``, ``w = 200`` and the 0.1/0.9
    quantiles. Labels are matched case-insensitively; :data:`EXTRA_LABELS` adds UCB1, Beta TS,
    SW-UCB, D-UCB, Exp3, combined GEM (cGEM), permute-and-flip (PF) and Gumbel RNM, and
    ``private:<selector>`` builds a private agent on any registered selector.
    """
    import agents as agents_pkg

    chosen = list(FIG9_LABELS) if labels is None else list(labels)
    if not chosen:
        raise ValueError("labels must name at least one agent")

    def private(selector: str, eps_s: float = epsilon_select, **params: Any) -> Any:
        # App. H's quantile mechanism (Smith's): the Fig. 9 rewards are continuous, where it is
        # the more accurate one (docs/quantiles.md); agents built elsewhere default to "grid"
        return agents_pkg.PrivateAgent(
            selector, epsilon_select=eps_s, epsilon_means=epsilon_means,
            epsilon_quantiles=epsilon_quantiles, window=window, levels=levels,
            quantile_method="smith", **params,
        )  # fmt: skip

    builders: dict[str, Callable[[], Any]] = {
        "ucb": lambda: agents_pkg.UCB(),
        "ts": lambda: agents_pkg.ThompsonSampling(),
        "krr": lambda: private("krr", epsilon_krr),
        "rnm": lambda: private("rnm"),
        "rs": lambda: private("rs", gamma=0.05),
        "gem": lambda: private("gem", beta=0.05),
        "mgem": lambda: private("mgem", beta=0.05),
        "ucb1": lambda: agents_pkg.UCB(log="t"),
        "ts-beta": lambda: agents_pkg.ThompsonSampling(model="bernoulli"),
        "sw-ucb": lambda: agents_pkg.SlidingWindowUCB(),
        "d-ucb": lambda: agents_pkg.DiscountedUCB(),
        "exp3": lambda: agents_pkg.Exp3(),
        "cgem": lambda: private("combined_gem", beta=0.05),
        "pf": lambda: private("permute_and_flip"),
        "rnm-gumbel": lambda: private("rnm", noise="gumbel"),
    }
    out: dict[str, Any] = {}
    for label in chosen:
        key = label.strip().lower()
        if key.startswith("private:"):
            out[label.strip()] = private(label.strip().split(":", 1)[1])
        elif key in builders:
            out[label.strip()] = builders[key]()
        else:
            known = ", ".join(FIG9_LABELS + EXTRA_LABELS)
            raise ValueError(
                f"unknown agent label {label!r}; known labels: {known}, or private:<selector>"
            )
    return out


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------
def _fmt(x: float, digits: int = 1) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{x:,.{digits}f}"


def _privacy_short(report: Any) -> str:
    """One-cell description of the privacy spent by an agent (from its privacy report)."""
    if not isinstance(report, dict):
        return "none (not private)"

    def get(*keys: str) -> Any:
        x: Any = report
        for k in keys:
            x = x.get(k) if isinstance(x, dict) else None
        return x

    parts = []
    eps_m = get("means", "epsilon")
    if isinstance(eps_m, (int, float)):
        parts.append(f"eps_M={eps_m:g}")
    eps_p = get("quantiles", "epsilon_per_pair")
    if isinstance(eps_p, (int, float)):
        paper = get("quantiles", "paper_count")
        extra = f" (paper: {paper:g})" if isinstance(paper, (int, float)) else ""
        parts.append(f"eps_p={eps_p:g}{extra}")
    eps_s = get("selection", "epsilon_per_action")
    if isinstance(eps_s, (int, float)):
        parts.append(f"eps_S={eps_s:g}/action")
    if report.get("selector_private") is False:
        parts.append("selector NOT DP")
    return ", ".join(parts) if parts else "see privacy report"


class SummaryTable:
    """The summary of a run: one row (a dict) per agent; ``str()`` is an aligned text table."""

    columns = (
        ("agent", "agent"),
        ("regret", "total regret (mean ± SE)"),
        ("pre_change_regret", "pre-change"),
        ("post_change_regret", "post-change"),
        ("reward_mean", "final cum. reward"),
        ("privacy", "privacy spent"),
    )

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, label: str) -> dict[str, Any]:
        for row in self.rows:
            if row["agent"] == label:
                return row
        raise KeyError(label)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{label: {regret_mean, regret_se, pre_change_regret, ...}}`` (JSON-able)."""
        return {r["agent"]: {k: v for k, v in r.items() if k != "agent"} for r in self.rows}

    def _cells(self, r: dict[str, Any]) -> list[str]:
        return [
            r["agent"],
            f"{_fmt(r['regret_mean'])} ± {_fmt(r['regret_se'])}",
            _fmt(r["pre_change_regret"]),
            _fmt(r["post_change_regret"]),
            _fmt(r["reward_mean"]),
            r["privacy"],
        ]

    def __str__(self) -> str:
        head = [title for _, title in self.columns]
        body = [self._cells(r) for r in self.rows]
        widths = [max(len(str(c)) for c in col) for col in zip(head, *body, strict=True)]
        right = [False, True, True, True, True, False]

        def line(cells: list[str]) -> str:
            return "  ".join(
                c.rjust(w) if rj else c.ljust(w)
                for c, w, rj in zip(cells, widths, right, strict=True)
            ).rstrip()

        sep = "  ".join("-" * w for w in widths)
        return "\n".join([line(head), sep] + [line(b) for b in body])

    def to_markdown(self) -> str:
        head = [title for _, title in self.columns]
        out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
        out += ["| " + " | ".join(self._cells(r)) + " |" for r in self.rows]
        return "\n".join(out)

    __repr__ = __str__


@dataclass(eq=False)
class Results:
    """What :func:`run` returns; saved and loaded exactly (``.npz`` + JSON metadata).

    Attributes
    ----------
    config:
        The run's identity and parameters (JSON-able): env, n_runs, horizon, seed, chunk size,
        strides, agents (class, params, repr), change points, library versions.
    labels:
        Agent labels, in order.
    arrays:
        Shared arrays: ``steps`` (P,) recorded step counts (1-based: after ``steps[i]`` steps),
        ``expected_rewards`` (P, K) true expected rewards at those steps, ``trace_steps`` (Q,),
        ``true_quantile_range`` (Q, K) the true quantile range of the clipped reward at the
        trace steps (when the environment exposes its parameters).
    data:
        Per label: ``regret`` and ``reward`` (P, R) per-run cumulative dynamic pseudo-regret and
        realised reward at ``steps``; ``total_regret``, ``total_reward``, ``pre_change_regret``
        (steps before the first change point), ``post_change_regret`` (R,) (without a change
        point: pre = total and post = NaN, "not applicable"; an environment without expected
        rewards gives NaN regret, which the summary shows as "-"); ``action_counts``
        (R, K); ``action_freq`` (P, K) fraction of pulls of each arm in each recorded interval;
        for private agents ``private_means`` and ``sensitivities`` (Q, R, K); ``actions`` (T, R)
        when ``keep_actions``.
    privacy:
        Per label, the agent's privacy report (``None`` for non-private agents).
    timing:
        Wall time and workers of the run (not part of equality).
    """

    config: dict[str, Any]
    labels: list[str]
    arrays: dict[str, NDArray[Any]]
    data: dict[str, dict[str, NDArray[Any]]]
    privacy: dict[str, Any]
    timing: dict[str, Any] = field(default_factory=dict)

    # -- curves ---------------------------------------------------------------------------
    @property
    def steps(self) -> NDArray[np.int64]:
        return self.arrays["steps"]

    @property
    def n_runs(self) -> int:
        return int(self.config["n_runs"])

    def _check_label(self, label: str) -> None:
        if label not in self.data:
            raise ValueError(f"unknown agent label {label!r}; labels: {', '.join(self.labels)}")

    def mean(self, label: str, what: str = "regret") -> NDArray[np.float64]:
        """Mean over runs of the cumulative ``what`` (``"regret"`` or ``"reward"``) at ``steps``."""
        self._check_label(label)
        return np.asarray(self.data[label][what].mean(axis=1))

    def se(self, label: str, what: str = "regret") -> NDArray[np.float64]:
        """Standard error over runs (NaN with a single run: it is undefined)."""
        self._check_label(label)
        x = self.data[label][what]
        if x.shape[1] < 2:
            return np.full(x.shape[0], np.nan)
        return np.asarray(x.std(axis=1, ddof=1) / math.sqrt(x.shape[1]))

    # -- tables ---------------------------------------------------------------------------
    def summary(self) -> SummaryTable:
        """Per agent: total regret mean ± SE, pre-/post-change regret, final cumulative reward,
        privacy spent."""
        rows = []
        for label in self.labels:
            d = self.data[label]
            tot = d["total_regret"]
            n = tot.size
            rows.append(
                {
                    "agent": label,
                    "regret_mean": float(tot.mean()),
                    "regret_se": float(tot.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan,
                    "pre_change_regret": float(d["pre_change_regret"].mean()),
                    "post_change_regret": float(d["post_change_regret"].mean()),
                    "reward_mean": float(d["total_reward"].mean()),
                    "reward_se": float(d["total_reward"].std(ddof=1) / math.sqrt(n))
                    if n > 1
                    else math.nan,
                    "privacy": _privacy_short(self.privacy.get(label)),
                }
            )
        return SummaryTable(rows)

    def privacy_text(self) -> str:
        """The privacy report of every private agent as readable text."""
        out = []
        for label in self.labels:
            rep = self.privacy.get(label)
            if not isinstance(rep, dict):
                continue
            text = rep.get("text") or json.dumps(rep, indent=2)
            out.append(f"[{label}]\n{text}")
        return "\n\n".join(out) if out else "no private agents"

    def to_json(self) -> dict[str, Any]:
        """``{"config", "agents": {label: summary row}, "privacy"}`` (the CLI's ``--json``).

        Strict JSON: undefined numbers (the standard error of a single run) become ``None``.
        """

        def strict(x: Any) -> Any:
            if isinstance(x, dict):
                return {k: strict(v) for k, v in x.items()}
            if isinstance(x, list):
                return [strict(v) for v in x]
            if isinstance(x, float) and not math.isfinite(x):
                return None
            return x

        return strict(
            {"config": self.config, "agents": self.summary().to_dict(), "privacy": self.privacy}
        )

    def to_frame(self, kind: str = "curves") -> Any:
        """A tidy ``pandas.DataFrame`` (pandas is imported only here).

        ``kind="curves"``: one row per (agent, step) with mean and SE of cumulative regret and
        reward. ``kind="runs"``: one row per (agent, run) with the per-run totals.
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError("to_frame() needs pandas: pip install 'dpbandits[pandas]'") from exc
        frames = []
        for label in self.labels:
            if kind == "curves":
                frames.append(
                    pd.DataFrame(
                        {
                            "agent": label,
                            "step": self.steps,
                            "regret_mean": self.mean(label, "regret"),
                            "regret_se": self.se(label, "regret"),
                            "reward_mean": self.mean(label, "reward"),
                            "reward_se": self.se(label, "reward"),
                        }
                    )
                )
            elif kind == "runs":
                d = self.data[label]
                frames.append(
                    pd.DataFrame(
                        {
                            "agent": label,
                            "run": np.arange(d["total_regret"].size),
                            "total_regret": d["total_regret"],
                            "pre_change_regret": d["pre_change_regret"],
                            "post_change_regret": d["post_change_regret"],
                            "total_reward": d["total_reward"],
                        }
                    )
                )
            else:
                raise ValueError(f"kind must be 'curves' or 'runs', got {kind!r}")
        return pd.concat(frames, ignore_index=True)

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write one ``.npz`` file (arrays + JSON metadata); returns its path.

        ``.npz`` is appended to the name if missing. :meth:`load` restores an equal object.
        """
        p = Path(path)
        if p.suffix != ".npz":
            p = p.with_name(p.name + ".npz")
        meta = {
            "format": "dpbandits.Results/1",
            "config": self.config,
            "labels": self.labels,
            "privacy": self.privacy,
            "timing": self.timing,
            "array_keys": sorted(self.arrays),
            "data_keys": {label: sorted(self.data[label]) for label in self.labels},
        }
        payload: dict[str, Any] = {"__meta__": np.array(json.dumps(meta))}
        for key, arr in self.arrays.items():
            payload[f"shared__{key}"] = arr
        for j, label in enumerate(self.labels):
            for key, arr in self.data[label].items():
                payload[f"agent{j}__{key}"] = arr
        p.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(p, **payload)
        return p

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Results:
        """Read a file written by :meth:`save`."""
        p = Path(path)
        if not p.exists() and p.with_name(p.name + ".npz").exists():
            p = p.with_name(p.name + ".npz")
        with np.load(p, allow_pickle=False) as f:
            meta = json.loads(str(f["__meta__"]))
            if meta.get("format") != "dpbandits.Results/1":
                raise ValueError(f"{p} is not a dpbandits Results file")
            arrays = {k: f[f"shared__{k}"] for k in meta["array_keys"]}
            data = {
                label: {k: f[f"agent{j}__{k}"] for k in meta["data_keys"][label]}
                for j, label in enumerate(meta["labels"])
            }
        return cls(
            config=meta["config"],
            labels=list(meta["labels"]),
            arrays=arrays,
            data=data,
            privacy=meta["privacy"],
            timing=meta.get("timing", {}),
        )

    def equals(self, other: Results) -> bool:
        """Exact equality of everything but ``timing`` (arrays bit for bit, NaN equal to NaN)."""

        def same(a: NDArray[Any], b: NDArray[Any]) -> bool:
            return (
                a.dtype == b.dtype
                and a.shape == b.shape
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
            )

        if (self.config, self.labels, self.privacy) != (other.config, other.labels, other.privacy):
            return False
        if sorted(self.arrays) != sorted(other.arrays):
            return False
        if not all(same(self.arrays[k], other.arrays[k]) for k in self.arrays):
            return False
        for label in self.labels:
            a, b = self.data[label], other.data.get(label, {})
            if sorted(a) != sorted(b) or not all(same(a[k], b[k]) for k in a):
                return False
        return True

    def __repr__(self) -> str:
        return (
            f"Results(env={self.config.get('env', {}).get('id')!r}, agents={self.labels}, "
            f"n_runs={self.config.get('n_runs')}, horizon={self.config.get('horizon')}, "
            f"seed={self.config.get('seed')})"
        )
