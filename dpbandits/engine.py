"""The batched regret engine: :func:`run` plays agents against an environment in lockstep.

:func:`run` plays every agent against the same environment for ``n_runs`` independent
replications and ``horizon`` steps, and measures the dynamic pseudo-regret
``sum_t max_a mu_a(t) - mu_{a_t}(t)`` against the expected *clipped* reward (App. H-1) that the
project's environments expose. This reproduces App. H / Fig. 9 of the paper in one call::

    from dpbandits.engine import run
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

import copy
import math
import os
import pickle
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.envspec import env_spec, make_env, make_vector_env
from dpbandits.files import jsonable
from dpbandits.parallel import report_progress, run_tasks

if TYPE_CHECKING:
    import concurrent.futures as cf

    from dpbandits.results import Results

__all__ = ["chunk_seeds", "resolve_agents", "run"]

DEFAULT_CHUNK_SIZE = 100
DEFAULT_POINTS = 1000  # recorded points per curve when record_stride is not given
PROGRESS_EVERY = 1000  # steps between progress reports
_BLOCK = 8192  # steps per block when turning actions into regret after the loop
_INT64 = np.dtype(np.int64)
_UINT64 = np.dtype(np.uint64)


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
# Agents handling
# ----------------------------------------------------------------------------------------------
def resolve_agents(agents_arg: Any) -> dict[str, Any]:
    import agents as agents_pkg

    if isinstance(agents_arg, Mapping):
        items = list(agents_arg.items())
    elif isinstance(agents_arg, Sequence) and not isinstance(agents_arg, str):
        items = []
        for a in agents_arg:
            base = _default_label(a)
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


def _default_label(agent: Any) -> str:
    """The label of an agent given in a list: its registered name (a string, or the ``name`` of
    a config mapping) or, for an object, its ``name`` attribute or class name."""
    if isinstance(agent, str):
        return agent
    if isinstance(agent, Mapping):
        name = agent.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"agent config needs a 'name' key (a registered agent), got {dict(agent)}"
            )
        return name
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


def _agent_config(agent: Any) -> dict[str, Any]:
    get_params = getattr(agent, "get_params", None)
    params = get_params() if callable(get_params) else {}
    return {"class": type(agent).__name__, "repr": repr(agent), "params": jsonable(params)}


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
    #: Every change point in ``(0, horizon)``, sorted: segment ``j`` is the steps
    #: ``[c_j, c_{j+1})`` with ``c_0 = 0`` and a last bound ``horizon``.
    change_points: tuple[int, ...] = ()


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


def _check_stored_actions(
    actions: NDArray[Any], s0: int, s1: int, K: int, label: str, venv: Any
) -> None:
    """Raise the invalid-action error for the first step in ``s0 .. s1 - 1`` whose stored
    actions are negative (with ``pull``, larger ones already raised IndexError)."""
    block = actions[s0:s1]
    if block.size and block.min() < 0:
        t = s0 + int(np.argmax((block < 0).any(axis=1)))
        venv.close()
        raise _invalid_actions(actions[t].astype(np.int64), K, label, t)


def _run_task(task: _Task, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Play one chunk of replications of one agent; return its per-run arrays."""
    if progress is None:
        progress = report_progress
    cpu0 = time.process_time()
    n, T, K, label = task.n, task.horizon, task.n_arms, task.label
    venv = make_vector_env(task.spec, n)
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

    act, update = agent.act, agent.update
    # The project's vector environments have ``pull`` (rewards only, no info dict): the hot
    # path. Any other VectorEnv goes through ``step``.
    from envs.base import BanditVectorEnv

    pull: Callable[[NDArray[np.int64]], Any] | None = (
        venv.pull if isinstance(venv, BanditVectorEnv) else None
    )
    # Actions are checked at every step, except with ``pull``: there an action >= K or < -K
    # makes its index fall outside the reward tape (IndexError, turned into the error below at
    # once) and one in [-K, -1] is stored exactly in ``actions`` and found by the check of each
    # block of PROGRESS_EVERY steps -- one reduction per block instead of two numpy calls per
    # step, and no result is ever returned from an invalid action.
    check_each_step = not callable(pull)
    if check_each_step:
        step = venv.step

        def step_rewards(a: NDArray[np.int64]) -> Any:
            return step(a)[1]

        pull = step_rewards
    assert pull is not None

    shape = (n,)
    umax = np.maximum.reduce
    u64, i64 = _UINT64, _INT64
    ri, next_rec = 0, int(rec[0])
    ti, next_tr = 0, (int(tr[0]) if traced else -1)
    next_prog = PROGRESS_EVERY
    # One comparison per step: the next step at which something is recorded or reported.
    next_event = min(x for x in (next_rec, next_tr, next_prog) if x > 0)
    for t in range(T):
        a = act()
        if type(a) is not np.ndarray or a.dtype is not i64 or a.shape != shape:
            a = _coerce_actions(a, n, K, label)
        # one reduction checks both ends: negative actions are huge as unsigned
        if check_each_step and umax(a.view(u64)) >= K:
            venv.close()
            raise _invalid_actions(a, K, label, t)
        actions[t] = a
        try:
            r = pull(a)
        except IndexError:
            venv.close()
            raise _invalid_actions(a, K, label, t) from None
        reward_sum += r  # before update: an agent may not keep r intact
        update(a, r)
        if t + 1 != next_event:
            continue
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
            if not check_each_step:
                _check_stored_actions(actions, s - PROGRESS_EVERY, s, K, label, venv)
            progress(PROGRESS_EVERY * n)
            next_prog += PROGRESS_EVERY
        next_event = min((x for x in (next_rec, next_tr, next_prog) if x > s), default=-1)
    if not check_each_step:
        _check_stored_actions(actions, T - T % PROGRESS_EVERY, T, K, label, venv)
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
    out["privacy"] = jsonable(report_fn()) if callable(report_fn) else None
    out["cpu_seconds"] = time.process_time() - cpu0
    return out


def _regret_from_actions(actions: NDArray[Any], task: _Task) -> dict[str, NDArray[np.float64]]:
    """Cumulative dynamic pseudo-regret per run from the actions and the expected-reward table.

    Besides the curve and the total: ``segment_regret`` (S, n), the regret accumulated in each
    segment between consecutive change points (S = number of change points + 1; the rows sum to
    the total), and for back-compatibility ``pre_change_regret`` / ``post_change_regret``, the
    split at the first change point.
    """
    T, n = actions.shape
    rec = task.record_steps
    cps = [c for c in (task.change_points or
                       ((task.change_point,) if task.change_point is not None else ()))
           if 0 < c < T]  # fmt: skip
    if task.table is None:
        nan_runs = np.full(n, np.nan)
        return {
            "regret": np.full((rec.size, n), np.nan),
            "total_regret": nan_runs,
            "pre_change_regret": nan_runs.copy(),
            "post_change_regret": nan_runs.copy(),
            "segment_regret": np.full((len(cps) + 1, n), np.nan),
        }
    table = task.table
    best = table.max(axis=1)
    curve = np.empty((rec.size, n))
    cum = np.zeros(n)
    # cumulative regret after c steps, for every change point c
    at_change = np.zeros((len(cps), n))
    cp_arr = np.asarray(cps, dtype=np.int64)
    for s0 in range(0, T, _BLOCK):
        s1 = min(s0 + _BLOCK, T)
        blk = actions[s0:s1].astype(np.intp)
        reg = best[s0:s1, None] - np.take_along_axis(table[s0:s1], blk, axis=1)
        creg = np.cumsum(reg, axis=0)
        creg += cum
        # recorded steps are 1-based counts: step s is row s - 1 - s0 of this block
        sel = (rec > s0) & (rec <= s1)
        curve[sel] = creg[rec[sel] - 1 - s0]
        csel = (cp_arr > s0) & (cp_arr <= s1)
        if csel.any():
            at_change[csel] = creg[cp_arr[csel] - 1 - s0]
        cum = creg[-1]
    total = cum.copy()
    bounds = np.concatenate([np.zeros((1, n)), at_change, total[None, :]])
    segments = np.diff(bounds, axis=0)
    if cps:
        pre, post = at_change[0].copy(), total - at_change[0]
    else:
        pre, post = total.copy(), np.full(n, np.nan)
    return {"regret": curve, "total_regret": total, "pre_change_regret": pre,
            "post_change_regret": post, "segment_regret": segments}  # fmt: skip


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


def _probe_agent(label: str, agent: Any, n_arms: int, horizon: int) -> None:
    """Reset a copy of ``agent`` for one replication in this process, so that a bad parameter
    (agents store their constructor arguments and validate them in ``reset``) fails here, before
    any work is sent to a worker, with the agent's label in the message."""
    try:
        copy.deepcopy(agent).reset(1, n_arms, horizon=horizon, rng=0)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"agent {label!r}: {exc}") from None


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

    spec = env_spec(env)
    if horizon is not None:
        horizon = _positive_int(horizon, "horizon")
    probe = make_env(spec)
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
        probe = make_env(spec)
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
    qrange = None
    if trace and callable(getattr(unwrapped, "quantile_range_table", None)):
        qrange = unwrapped.quantile_range_table(trace_steps - 1, quantile_levels)
    probe.close()

    agent_map = resolve_agents(agents)
    labels = list(agent_map)
    for label, agent in agent_map.items():
        _probe_agent(label, agent, n_arms, horizon)
    chunks = [(i, min(chunk_size, n_runs - i * chunk_size))
              for i in range(math.ceil(n_runs / chunk_size))]  # fmt: skip
    tasks = [
        _Task(label, copy.deepcopy(agent_map[label]), i, n, spec, horizon, n_arms, seed,
              rec, trace_steps, table, change_point, keep_actions, tuple(change_points))
        for label in labels
        for i, n in chunks
    ]  # fmt: skip

    # Longest first (LPT scheduling): agents may declare a relative ``cost_hint`` (UCB ~ 1);
    # private agents cost several times a UCB step.
    def cost(j: int) -> float:
        hint = getattr(tasks[j].agent, "cost_hint", None)
        return float(hint) if isinstance(hint, (int, float)) else 1.0

    order = sorted(range(len(tasks)), key=lambda j: (-cost(j), j))

    workers = 1 if executor is not None else min(n_jobs, len(tasks))
    if executor is not None or workers > 1:
        _check_picklable(spec, agent_map, "a Dask/executor run" if executor else f"n_jobs={n_jobs}")

    total_steps = len(labels) * n_runs * horizon
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total_steps, unit="step", unit_scale=True, desc="dpbandits run",
                   mininterval=0.5)  # fmt: skip

    def advance(k: int) -> None:
        if bar is not None:
            bar.update(k)

    def task_done(j: int, out: dict[str, Any]) -> None:
        if executor is not None:  # remote tasks cannot report as they go: count whole tasks
            advance(tasks[j].n * tasks[j].horizon)

    t_start = time.perf_counter()
    try:
        outputs = run_tasks(
            _run_task,
            tasks,
            order=order,
            n_jobs=workers,
            executor=executor,
            on_done=task_done,
            progress=advance if progress else None,
        )
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
        "segments": [[a, b] for a, b in zip([0, *change_points], [*change_points, horizon],
                                            strict=True)],  # fmt: skip
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
    from dpbandits.results import Results

    return Results(
        config=jsonable(config),
        labels=labels,
        arrays=arrays,
        data=data,
        privacy=jsonable(privacy),
        timing={
            "wall_seconds": wall,
            "n_jobs": type(executor).__name__ if executor is not None else workers,
            "cpu_seconds": {
                label: sum(
                    outputs[j]["cpu_seconds"] for j, tk in enumerate(tasks) if tk.label == label
                )
                for label in labels
            },
        },
    )

