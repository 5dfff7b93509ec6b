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
    "TABLE_KINDS",
    "default_steps",
    "draw_table",
    "local_randomizer",
    "make_table",
    "neighbour_table",
    "parse_table_spec",
    "play_table",
    "play_tables",
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


# -- families of tables ------------------------------------------------------------------------
#: The table families the agent audit searches (:func:`make_table`): the environment's table,
#: its arms reversed, constant tables, ties, near-ties, random means, a gap between the
#: arms' means (``gap:G``; the audit's pilot picks the knife-edge gap), and the environment's
#: table with its arms reversed from a change point on (``shift[:F]``, a non-stationary table).
TABLE_KINDS = ("env", "swapped", "zeros", "ones", "tie", "near_tie", "random", "gap", "shift")
#: Where the ``shift`` table's change point lies by default (a fraction of the horizon).
SHIFT_AT = 0.5


def parse_table_spec(spec: str) -> tuple[str, float | None, int | None]:
    """``KIND[:PARAM][@SEED]`` -> ``(kind, param, seed)`` (:data:`TABLE_KINDS`); a
    ``ValueError`` naming ``table`` for anything else."""
    if not isinstance(spec, str):
        raise TypeError(f"table must be a (T, K) array or a table name, got {type(spec).__name__}")
    rest, _, seed_s = spec.partition("@")
    kind, _, param_s = rest.partition(":")
    kind = kind.strip().lower()
    if kind not in TABLE_KINDS:
        raise ValueError(f"table {spec!r}: unknown table kind {kind!r}; kinds: "
                         f"{', '.join(TABLE_KINDS)} (KIND[:PARAM][@SEED])")  # fmt: skip
    try:
        param = float(param_s) if param_s else None
        seed = int(seed_s) if seed_s else None
    except ValueError:
        raise ValueError(f"table {spec!r}: PARAM must be a number and SEED an integer") from None
    if kind == "gap" and param is not None and not 0 <= param <= 1:
        raise ValueError(f"table {spec!r}: gap:G needs a gap G in [0, 1] between the arms' means")
    if kind == "shift" and param is not None and not 0 < param < 1:
        raise ValueError(f"table {spec!r}: shift:F needs the change point F in (0, 1), a "
                         "fraction of the horizon")  # fmt: skip
    if kind not in ("gap", "shift") and param is not None:
        raise ValueError(f"table {spec!r}: {kind} takes no PARAM")
    if seed is not None and seed < 0:
        raise ValueError(f"table {spec!r}: SEED must be >= 0")
    return kind, param, seed


def make_table(
    spec: str, env_table: NDArray[np.float64], lo: float, hi: float
) -> NDArray[np.float64]:
    """The table ``spec`` names (:func:`parse_table_spec`), of the shape of ``env_table`` (the
    environment's, kind ``env``), its rewards ``lo`` or ``hi`` (so that a neighbour moves them
    across the whole range) but for ``env``/``swapped``:

    - ``zeros``/``ones``: every reward ``lo``/``hi`` (a raw statistic is then a function of the
      pull counts alone, and one changed reward moves it for every arm alike);
    - ``tie``: every reward an independent fair coin; ``near_tie``: arm ``a``'s coins have
      mean ``0.45 + 0.1 a / (K - 1)``; ``random``: each arm's mean uniform on ``(0, 1)``;
      ``gap:G``: means spread evenly over ``0.5 -+ G / 2`` (arm 0 the worst);
    - ``shift:F``: ``env`` until step ``round(F T)`` (default :data:`SHIFT_AT`), ``swapped``
      from there on: an abrupt change of the best arm, for agents (or leaks) that behave
      differently once the rewards change (a change detector, a restart).
    The coins come from ``SEED`` (default 0)."""
    kind, param, seed = parse_table_spec(spec)
    if kind == "gap" and param is None:
        raise ValueError(f"table {spec!r}: gap:G needs the gap G between the arms' means")
    horizon, n_arms = env_table.shape
    if kind == "env":
        return np.array(env_table, dtype=np.float64)
    if kind == "swapped":
        return np.array(env_table[:, ::-1], dtype=np.float64)
    if kind == "shift":
        out = np.array(env_table, dtype=np.float64)
        at = int(round((SHIFT_AT if param is None else param) * horizon))
        out[at:] = out[at:, ::-1]
        return out
    if kind in ("zeros", "ones"):
        return np.full((horizon, n_arms), lo if kind == "zeros" else hi)
    gen = np.random.default_rng(seed or 0)
    spread = np.linspace(-0.5, 0.5, n_arms) if n_arms > 1 else np.zeros(1)
    means: NDArray[np.float64]
    if kind == "tie":
        means = np.full(n_arms, 0.5)
    elif kind == "near_tie":
        means = 0.5 + 0.1 * spread
    elif kind == "random":
        means = np.asarray(gen.random(n_arms), dtype=np.float64)
    else:
        means = 0.5 + float(param or 0.0) * spread
    return np.where(gen.random((horizon, n_arms)) < means, hi, lo)


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
    """The actions ``(n_runs, T)`` of ``n_runs`` replications of ``agent`` on ``table``: every
    replication plays the same rewards, arm ``a`` at step ``t`` pays ``table[t, a]``
    (:func:`play_tables` with one table; through a local ``randomizer`` if given)."""
    groups = np.zeros(n_runs, dtype=np.int64)
    return play_tables(agent, table[None], groups, rng, out=out, progress=progress,
                       randomizer=randomizer)  # fmt: skip


def play_tables(
    agent: Any,
    tables: NDArray[np.float64],
    groups: NDArray[np.int64],
    rng: Any,
    out: NDArray[np.integer[Any]] | None = None,
    progress: Callable[[int], object] | None = None,
    randomizer: Any = None,
) -> NDArray[np.integer[Any]]:
    """The actions ``(n, T)`` of ``n = len(groups)`` replications of ``agent``, replication
    ``r`` on table ``tables[groups[r]]`` (``tables`` ``(G, T, K)``).

    The agent is reset with ``rng`` and played through its block path (``agent.block_player()``,
    ``play(rows, actions, rewards)`` on the reward tape ``rows[i, a * R + r]``, as in the
    experiment engine) when it has one, else step by step (``act``/``update``). The actions are
    written into ``out`` when given. ``progress(k)`` is called after every ``k`` agent-steps.
    With a local ``randomizer`` (:func:`local_randomizer`) every reward a replication gets is
    its fresh report instead (drawn from a generator spawned from ``rng``), as on
    ``dpbandits/LocalDP-v0``."""
    _, horizon, n_arms = tables.shape
    n_runs = len(groups)
    gen = checks.generator(rng)
    user = gen.spawn(1)[0] if randomizer is not None else None
    agent.reset(n_runs, n_arms, horizon=horizon, rng=gen)
    dtype = np.int8 if n_arms <= 127 else (np.int16 if n_arms <= 32767 else np.int64)
    actions = np.empty((horizon, n_runs), dtype=dtype)
    block_player = getattr(agent, "block_player", None)
    play = block_player() if callable(block_player) else None
    rewards = np.empty((BLOCK, n_runs))
    one = tables.shape[0] == 1
    # (T, K, G): a block's tape is one gather along the last axis (column a * R + r)
    by_step = None if one or play is None else np.ascontiguousarray(tables.transpose(1, 2, 0))
    t = 0
    while t < horizon:
        m = min(BLOCK, horizon - t)
        if play is not None:
            if one:
                rows = reward_tape(tables[0, t : t + m], n_runs)
            else:
                assert by_step is not None
                rows = by_step[t : t + m].take(groups, axis=2).reshape(m, n_arms * n_runs)
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
                x = tables[0, i, a] if one else tables[groups, i, a]
                agent.update(a, x if randomizer is None else randomizer.privatize(x, user))
        t += m
        if progress is not None:
            progress(m * n_runs)
    if out is None:
        return np.ascontiguousarray(actions.T)
    out[...] = actions.T
    return out

