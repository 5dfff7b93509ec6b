"""Fixed reward tables, their neighbours, and an agent played on one (the agent audit's and
the agents' conformance kit's ground).

A *table* ``(T, K)`` fixes every reward: arm ``a`` at step ``t`` pays ``table[t, a]`` in every
replication. Its *reward tape* for ``R`` replications, ``reward_tape(table, R)``, is the
layout of the experiment engine's reward rows (``rows[t, a * R + r]``, App. H-1), which an
agent's block path ``play(rows, actions, rewards)`` reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.experiments.envspec import env_spec, make_vector_env
from envs.base import BanditVectorEnv
from envs.core import reward_tape

__all__ = [
    "BLOCK",
    "default_steps",
    "draw_table",
    "local_randomizer",
    "neighbour_table",
    "play_table",
    "reward_tape",
]

#: Steps per block of reward rows handed to ``play``.
BLOCK = 256


# -- tables -------------------------------------------------------------------------------------
def local_randomizer(env: Any) -> tuple[Any, Any]:
    """``(inner, randomizer)`` for an environment that privatizes its rewards at the user
    (``dpbandits/LocalDP-v0``, envs/local_dp.py): the wrapped environment's config, whose
    rewards make the table, and the randomizer each run applies afresh to every reward it
    gets (:func:`play_table`); ``(env, None)`` for any other environment."""
    if env is None:
        return env, None
    spec = env_spec(env)
    if spec["id"] != "dpbandits/LocalDP-v0":
        return env, None
    venv = make_vector_env(spec, 1)
    try:
        randomizer = venv.randomizer
    finally:
        venv.close()
    kwargs = dict(spec["kwargs"])
    inner = kwargs.get("env", "dpbandits/KArmedBernoulli-v0")
    inner = {"id": inner} if isinstance(inner, str) else dict(inner)
    if "horizon" in kwargs:
        inner["horizon"] = kwargs["horizon"]
    return inner, randomizer


def draw_table(
    env: Any, horizon: int, seed: int | None
) -> tuple[NDArray[np.float64], float, float]:
    """The first ``horizon`` rows of one copy of ``env``'s reward tape and its reward range
    ``(lo, hi)``.

    ``env`` is anything the experiment engine accepts (a registered id, a config mapping
    ``{"id": ..., **kwargs}``, an environment made by ``gymnasium.make``) whose vector form is
    one of the project's environments (:class:`envs.base.BanditVectorEnv`, which has a reward
    tape, App. H-1); ``seed`` seeds its ``reset``."""
    try:
        venv = make_vector_env(env_spec(env), 1)
    except gymnasium.error.Error as exc:  # an unknown id, namespace or version
        raise ValueError(f"env: {exc}") from None
    try:
        if not isinstance(venv, BanditVectorEnv):
            raise TypeError(
                f"env must be one of the project's environments (they have a reward tape), got "
                f"{type(venv).__name__}; give the rewards as table=(T, K) instead"
            )
        schedule = venv.schedule
        if schedule.horizon < horizon:
            raise ValueError(
                f"horizon {horizon} is longer than the environment's ({schedule.horizon})"
            )
        venv.reset(seed=seed)
        rows: list[NDArray[np.float64]] = []
        t = 0
        while t < horizon:  # reward_rows gives at most a block of the tape at a time
            rows.append(np.array(venv.reward_rows(horizon - t)))
            t += rows[-1].shape[0]
        return np.concatenate(rows), float(schedule.lo), float(schedule.hi)
    finally:
        venv.close()


def neighbour_table(
    table: NDArray[np.float64], step: int, lo: float, hi: float
) -> NDArray[np.float64]:
    """``table`` with every reward of ``step`` moved to the far end of ``[lo, hi]``: ``lo`` for a
    reward above the middle, else ``hi`` (a change of at least half the range; the whole range
    for 0/1 rewards)."""
    out = np.array(table, dtype=np.float64)
    out[step] = np.where(out[step] > 0.5 * (lo + hi), lo, hi)
    return out


def default_steps(horizon: int, n_arms: int) -> tuple[int, ...]:
    """The changed steps tried by default: ``0`` and ``K - 1``, the initial round (one reward is
    then a whole arm's mean, and the next decision depends on it most), ``2K`` (an arm's second
    or third reward) and ``horizon // 4`` (later decisions, and agents that decide at the end
    of phases or episodes)."""
    cand = (0, n_arms - 1, 2 * n_arms, horizon // 4)
    return tuple(sorted({s for s in cand if 0 <= s < horizon - 1}))


# -- running the agent --------------------------------------------------------------------------
def play_table(
    agent: Any,
    table: NDArray[np.float64],
    n_runs: int,
    rng: Any,
    out: NDArray[np.integer[Any]] | None = None,
    progress: Callable[[int], object] | None = None,
    randomizer: Any = None,
) -> NDArray[np.integer[Any]]:
    """The actions ``(n_runs, T)`` of ``n_runs`` replications of ``agent`` on ``table``.

    Every replication plays the same rewards: arm ``a`` at step ``t`` pays ``table[t, a]``. The
    agent is reset with ``rng`` and played through its block path (``agent.block_player()``,
    ``play(rows, actions, rewards)`` on the reward tape ``rows[i, a * R + r]``, as in the
    experiment engine) when it has one, else step by step (``act``/``update``). The actions are
    written into ``out`` when given. ``progress(k)`` is called after every ``k`` agent-steps.
    With a local ``randomizer`` (:func:`local_randomizer`) every reward a replication gets is
    its fresh report instead (drawn from a generator spawned from ``rng``), as on
    ``dpbandits/LocalDP-v0``."""
    horizon, n_arms = table.shape
    gen = checks.generator(rng)
    user = gen.spawn(1)[0] if randomizer is not None else None
    agent.reset(n_runs, n_arms, horizon=horizon, rng=gen)
    dtype = np.int8 if n_arms <= 127 else (np.int16 if n_arms <= 32767 else np.int64)
    actions = np.empty((horizon, n_runs), dtype=dtype)
    block_player = getattr(agent, "block_player", None)
    play = block_player() if callable(block_player) else None
    rewards = np.empty((BLOCK, n_runs))
    t = 0
    while t < horizon:
        m = min(BLOCK, horizon - t)
        if play is not None:
            rows = reward_tape(table[t : t + m], n_runs)
            if randomizer is not None:
                rows = randomizer.privatize(rows, user)
            rows.flags.writeable = False  # as the engine hands them: the same compiled loop
            play(rows, actions[t : t + m], rewards[:m])
            block = actions[t : t + m]
            if block.min() < 0 or block.max() >= n_arms:
                raise ValueError(f"{type(agent).__name__}.play played an arm outside "
                                 f"[0, {n_arms})")  # fmt: skip
        else:
            for i in range(t, t + m):
                a = checks.step_actions(agent.act(), n_runs, n_arms)
                actions[i] = a
                x = table[i, a]
                agent.update(a, x if randomizer is None else randomizer.privatize(x, user))
        t += m
        if progress is not None:
            progress(m * n_runs)
    if out is None:
        return np.ascontiguousarray(actions.T)
    out[...] = actions.T
    return out

