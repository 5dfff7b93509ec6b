"""One task of the engine: one agent playing one chunk of replications in lockstep (App. H)."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.core.arms import action_dtype
from dpbandits.core.files import jsonable
from dpbandits.core.jit import kernel
from dpbandits.core.signals import check_signals
from dpbandits.core.traits import traits_of
from dpbandits.experiments.agentspec import is_private
from dpbandits.experiments.envspec import make_vector_env
from dpbandits.experiments.parallel import report_progress
from dpbandits.experiments.regret import action_frequencies, regret_from_actions
from dpbandits.experiments.trust_reports import run_report
from envs.base import BanditVectorEnv

__all__ = ["PROGRESS_EVERY", "ChunkTask", "chunk_seeds", "run_chunk"]

PROGRESS_EVERY = 1000  # steps between progress reports
_INT64 = np.dtype(np.int64)
_UINT64 = np.dtype(np.uint64)


def chunk_seeds(seed: int, chunk: int, label: str) -> tuple[int, np.random.SeedSequence]:
    """The environment seed and the agent's seed sequence of one (chunk, agent) task.

    Chunk ``i`` owns ``SeedSequence(seed).spawn(n_chunks)[i] == SeedSequence(seed,
    spawn_key=(i,))``. Its child ``(i, 0)`` gives the integer passed to ``env.reset(seed=...)``
    -- the same for every agent (common random numbers) -- and its child
    ``(i, 1, crc32(label))`` is the agent's stream, passed to ``agent.reset(rng=...)`` as
    ``numpy.random.default_rng(seed_sequence)``. Tests use this to replay a run by hand.
    """
    seed = checks.integer(seed, "seed", minimum=0)
    chunk = checks.integer(chunk, "chunk", minimum=0)
    if not isinstance(label, str):
        raise TypeError(f"label must be a str, got {type(label).__name__} {label!r}")
    env_ss = np.random.SeedSequence(seed, spawn_key=(chunk, 0))
    env_seed = int(env_ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    agent_ss = np.random.SeedSequence(seed, spawn_key=(chunk, 1, zlib.crc32(label.encode("utf-8"))))
    return env_seed, agent_ss


@dataclass
class ChunkTask:
    """Everything a worker needs to play ``n`` replications of one agent (picklable)."""

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
    #: The ``(horizon, K)`` expected-reward table, sent only for environments whose vector form
    #: cannot give its own (the project's vector environments build it with their schedule);
    #: ``None`` there and for environments without one (their regret is NaN).
    table: NDArray[np.float64] | None
    keep_actions: bool
    #: Every change point in ``(0, horizon)``, sorted: segment ``j`` is the steps
    #: ``[c_j, c_{j+1})`` with ``c_0 = 0`` and a last bound ``horizon``.
    change_points: tuple[int, ...] = ()


def _coerce_actions(a: Any, n: int, label: str) -> NDArray[np.int64]:
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


def _regret_table(venv: Any, native: bool, task: ChunkTask) -> NDArray[np.float64] | None:
    """``regret[t, a] = max_b mu_b(t) - mu_a(t)`` for the first ``horizon`` steps: the project's
    vector environment's own table (built once, with its schedule), else derived from the
    expected-reward table the task carries, else ``None``."""
    if native:
        return np.asarray(venv.regret_table())[: task.horizon]
    if task.table is None:
        return None
    return task.table.max(axis=1, keepdims=True) - task.table


@kernel
def _add_rewards(t0: int, rewards: Any, reward_sum: Any, rec: Any, ri: int, curve: Any) -> int:
    """``reward_sum += rewards[j]`` for the steps ``t0 + 1 .. t0 + m`` in turn, ``curve[ri]``
    taking the sums after ``rec[ri]`` steps while ``rec[ri]`` is among them; returns the next
    ``ri``."""
    for j in range(rewards.shape[0]):
        for r in range(reward_sum.shape[0]):
            reward_sum[r] += rewards[j, r]
        if ri < rec.shape[0] and rec[ri] == t0 + j + 1:
            for r in range(reward_sum.shape[0]):
                curve[ri, r] = reward_sum[r]
            ri += 1
    return ri


class _Events:
    """What happens between two steps of a chunk: the reward curve at the record steps, the
    private agent's traces at the trace steps, and a progress report every PROGRESS_EVERY
    steps. :attr:`next` is the next step (number of steps done) with an event, -1 when none
    is left: one comparison per step."""

    def __init__(self, task: ChunkTask, agent: Any, n: int, K: int, traced: bool,
                 progress: Callable[[int], None]) -> None:  # fmt: skip
        self.rec, self.tr = task.record_steps, task.trace_steps
        self.agent, self.n, self.progress = agent, n, progress
        self.reward_curve = np.empty((self.rec.size, n))
        self.pm_trace = np.full((self.tr.size, n, K), np.nan) if traced else None
        self.sens_trace = np.full((self.tr.size, n, K), np.nan) if traced else None
        self.sens_fn = agent.sensitivities if traced and traits_of(agent).sensitivities else None
        self.ri, self.next_rec = 0, int(self.rec[0])
        self.ti, self.next_tr = 0, (int(self.tr[0]) if traced else -1)
        self.next_prog = PROGRESS_EVERY
        self.next = min(x for x in (self.next_rec, self.next_tr, self.next_prog) if x > 0)

    def add_rewards(
        self, t0: int, rewards: NDArray[np.float64], reward_sum: NDArray[np.float64]
    ) -> None:
        """Add the ``(m, R)`` rewards of steps ``t0 + 1 .. t0 + m`` to ``reward_sum``, recording
        the recorded steps among them: a running sum, step after step, so every value is the
        one the step loop's ``reward_sum += r`` gives."""
        self.ri = _add_rewards(t0, rewards, reward_sum, self.rec, self.ri, self.reward_curve)
        self.next_rec = int(self.rec[self.ri]) if self.ri < self.rec.size else -1

    def at(self, s: int, reward_sum: NDArray[np.float64]) -> int:
        """Record what is due after ``s`` steps; return the next event's step (-1: none)."""
        if s == self.next_rec:
            self.reward_curve[self.ri] = reward_sum
            self.ri += 1
            self.next_rec = int(self.rec[self.ri]) if self.ri < self.rec.size else -1
        if s == self.next_tr:
            pv = self.agent.private_means()
            if pv is not None:
                self.pm_trace[self.ti] = pv  # type: ignore[index]
            sv = self.sens_fn() if self.sens_fn is not None else None
            if sv is not None:
                self.sens_trace[self.ti] = sv  # type: ignore[index]
            self.ti += 1
            self.next_tr = int(self.tr[self.ti]) if self.ti < self.tr.size else -1
        if s == self.next_prog:
            self.progress(PROGRESS_EVERY * self.n)
            self.next_prog += PROGRESS_EVERY
        nxt = (self.next_rec, self.next_tr, self.next_prog)
        self.next = min((x for x in nxt if x > s), default=-1)
        return self.next


def run_chunk(task: ChunkTask, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Play one chunk of replications of one agent; return its per-run arrays.

    The steps: the environment and the agent reset with the chunk's seeds
    (:func:`chunk_seeds`), the play -- :func:`_play_blocks` for a compiled agent on one of the
    project's environments, else :func:`_play_steps` -- and :func:`_outputs`."""
    if progress is None:
        progress = report_progress
    cpu0 = time.process_time()
    n, T, K, label = task.n, task.horizon, task.n_arms, task.label
    venv = make_vector_env(task.spec, n)
    env_seed, agent_ss = chunk_seeds(task.seed, task.chunk, label)
    venv.reset(seed=env_seed)
    agent = task.agent
    agent.reset(n, K, horizon=T, rng=np.random.default_rng(agent_ss))

    actions = np.empty((T, n), dtype=action_dtype(K))
    reward_sum = np.zeros(n)
    traced = task.trace_steps.size > 0 and is_private(agent)
    # The project's vector environments have ``pull`` (rewards only, no info dict): the hot
    # path. Any other VectorEnv goes through ``step``.
    native = isinstance(venv, BanditVectorEnv)

    # A compiled agent (its traits; ``Agent.block_player``) plays every stretch of steps up to
    # the next event in one call, against the environment's reward tape: the same draws and the
    # same results as the step loop, without a Python call per step.
    play = agent.block_player() if native and traits_of(agent).compiled else None
    events = _Events(task, agent, n, K, traced, progress)
    if play is not None:
        _play_blocks(play, venv, actions, reward_sum, events)
    else:
        _play_steps(agent, venv, native, actions, reward_sum, events, K, label)
    progress((T % PROGRESS_EVERY) * n)
    regret = _regret_table(venv, native, task)
    env_report_fn = getattr(venv, "privacy_report", None)  # a local randomizer at the user
    env_report = env_report_fn() if callable(env_report_fn) else None
    venv.close()
    return _outputs(task, agent, events, actions, reward_sum, regret, traced, cpu0, env_report)


def _play_blocks(
    play: Callable[..., Any],
    venv: BanditVectorEnv,
    actions: NDArray[np.integer[Any]],
    reward_sum: NDArray[np.float64],
    events: _Events,
) -> None:
    """A compiled agent's play: one call of ``play`` per stretch of steps up to the next event
    that is not a recorded step, on the environment's reward tape."""
    T, n = actions.shape
    block_rewards = np.empty((PROGRESS_EVERY, n))
    t = 0
    while t < T:
        # recorded steps inside a block are read off its rewards: stop only for the others
        stop = min((x for x in (events.next_tr, events.next_prog) if x > t), default=T)
        rows = venv.reward_rows(min(stop, T) - t)
        m = rows.shape[0]
        play(rows, actions[t : t + m], block_rewards[:m])
        events.add_rewards(t, block_rewards[:m], reward_sum)
        t += m
        if t == stop:
            events.at(t, reward_sum)
            check_signals()  # a Ctrl-C dropped in a destructor (dpbandits.core.signals)


def _play_steps(
    agent: Any,
    venv: Any,
    native: bool,
    actions: NDArray[np.integer[Any]],
    reward_sum: NDArray[np.float64],
    events: _Events,
    K: int,
    label: str,
) -> None:
    """Any agent's play, step by step: ``act``, the environment's rewards, ``update``."""
    T, n = actions.shape
    act, update = agent.act, agent.update
    pull: Callable[[NDArray[np.int64]], Any] | None = venv.pull if native else None
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

    next_event = events.next
    shape = (n,)
    umax = np.maximum.reduce
    u64, i64 = _UINT64, _INT64
    for t in range(T):
        a = act()
        if type(a) is not np.ndarray or a.dtype is not i64 or a.shape != shape:
            a = _coerce_actions(a, n, label)
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
        if t + 1 == next_event:
            check_signals()
            s = t + 1
            if s % PROGRESS_EVERY == 0 and not check_each_step:
                _check_stored_actions(actions, s - PROGRESS_EVERY, s, K, label, venv)
            next_event = events.at(s, reward_sum)
    if not check_each_step:
        _check_stored_actions(actions, T - T % PROGRESS_EVERY, T, K, label, venv)


def _outputs(task: ChunkTask, agent: Any, events: _Events, actions: NDArray[np.integer[Any]],
             reward_sum: NDArray[np.float64], regret: NDArray[np.float64] | None, traced: bool,
             cpu0: float, env_report: Any = None) -> dict[str, Any]:  # fmt: skip
    """The chunk's per-run arrays: rewards, regret, pull counts and frequencies, the traces,
    the actions when kept, the privacy report (the agent's, inside the environment's when it
    privatizes the rewards at the user: :func:`run_report`) and the CPU time."""
    rec = task.record_steps
    out: dict[str, Any] = {"reward": events.reward_curve, "total_reward": reward_sum.copy()}
    out.update(regret_from_actions(actions, rec, regret, task.change_points))
    out["action_counts"], out["action_freq"] = action_frequencies(actions, task.n_arms, rec)
    if traced:
        out["private_means"] = events.pm_trace
        sens_trace = events.sens_trace
        if sens_trace is not None and not np.all(np.isnan(sens_trace)):
            out["sensitivities"] = sens_trace
    if task.keep_actions:
        out["actions"] = actions
    report = agent.privacy_report() if traits_of(agent).reports else None
    out["privacy"] = jsonable(run_report(report, env_report))
    out["cpu_seconds"] = time.process_time() - cpu0
    return out
