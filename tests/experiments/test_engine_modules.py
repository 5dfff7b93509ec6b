"""The engine's rooms: public import paths, regret from the right table, what a task carries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

import agents
import dpbandits.experiments.engine as engine
from dpbandits.experiments.regret import BLOCK, regret_from_actions

HORIZON = 300
CHANGE = 120
#: Expected reward of arm 0 and arm 1 before and after the change of the foreign environment.
BEFORE, AFTER = (0.2, 0.7), (0.9, 0.4)


class ForeignShift(gymnasium.Env[Any, Any]):
    """A third-party bandit with an expected-reward table but no vector form: the engine runs it
    through Gymnasium's SyncVectorEnv and sends its table with every task."""

    action_space = gymnasium.spaces.Discrete(2)
    observation_space = gymnasium.spaces.Discrete(1)
    horizon = HORIZON
    change_points = (CHANGE,)

    def expected_reward_table(self) -> np.ndarray:
        t = np.arange(HORIZON)[:, None]
        return np.where(t < CHANGE, np.array(BEFORE), np.array(AFTER))

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[int, dict]:
        super().reset(seed=seed)
        self._t = 0
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        p = self.expected_reward_table()[self._t, int(action)]
        self._t += 1
        reward = float(self.np_random.random() < p)
        return 0, reward, False, self._t >= HORIZON, {}


def _register_foreign() -> str:
    env_id = "test_dpbandits/ForeignShift-v0"
    if env_id not in gymnasium.registry:
        gymnasium.register(env_id, entry_point=ForeignShift)
    return env_id


def _captured_tasks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record the tasks the engine hands to ``run_tasks``."""
    seen: list[Any] = []
    original = engine.run_tasks

    def spy(fn: Any, tasks: Any, **kwargs: Any) -> Any:
        seen.extend(tasks)
        return original(fn, tasks, **kwargs)

    monkeypatch.setattr(engine, "run_tasks", spy)
    return seen


def _regret_by_hand(table: np.ndarray, actions: np.ndarray) -> np.ndarray:
    gap = table.max(axis=1, keepdims=True) - table
    return np.cumsum(np.take_along_axis(gap, actions.astype(np.intp), axis=1), axis=0)


def test_public_import_paths_of_the_engine() -> None:
    from dpbandits import experiments
    from dpbandits.experiments import agentspec, chunk

    assert engine.chunk_seeds is chunk.chunk_seeds is experiments.chunk_seeds
    assert engine.resolve_agents is agentspec.resolve_agents
    assert experiments.run is engine.run
    labels = list(engine.resolve_agents(["ucb", {"kind": "ucb", "alpha": 1.0}, "exp3"]))
    assert labels == ["ucb", "ucb-2", "exp3"]


def test_project_env_tasks_carry_no_table_and_regret_is_exact(monkeypatch) -> None:
    tasks = _captured_tasks(monkeypatch)
    env = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 200, "horizon": 500}
    res = engine.run(env, {"UCB": agents.UCB()}, n_runs=5, seed=4, n_jobs=1, progress=False,
                     keep_actions=True, chunk_size=3, record_stride=1)  # fmt: skip
    assert len(tasks) == 2 and all(t.table is None for t in tasks)
    table = gymnasium.make("dpbandits/TwoArmedShift-v0", t_shift=200, horizon=500)
    cum = _regret_by_hand(table.unwrapped.expected_reward_table(), res.data["UCB"]["actions"])
    # one block of steps: the engine's cumulative sums are the same operations, bit for bit
    assert 500 < BLOCK
    np.testing.assert_array_equal(res.data["UCB"]["regret"], cum)
    np.testing.assert_array_equal(res.data["UCB"]["pre_change_regret"], cum[199])


def test_foreign_env_task_carries_its_table_and_regret_is_exact(monkeypatch) -> None:
    tasks = _captured_tasks(monkeypatch)
    env_id = _register_foreign()
    res = engine.run(env_id, {"UCB": agents.UCB()}, n_runs=4, seed=2, n_jobs=1, progress=False,
                     keep_actions=True, record_stride=1)  # fmt: skip
    table = ForeignShift().expected_reward_table()
    assert len(tasks) == 1 and np.array_equal(tasks[0].table, table)
    d = res.data["UCB"]
    cum = _regret_by_hand(table, d["actions"])
    np.testing.assert_array_equal(d["regret"], cum)
    np.testing.assert_array_equal(d["segment_regret"], [cum[CHANGE - 1], cum[-1] - cum[CHANGE - 1]])
    assert res.config["segments"] == [[0, CHANGE], [CHANGE, HORIZON]]


def test_regret_from_actions_closed_form_and_missing_table() -> None:
    # arm 1 is best for 3 steps (gap 0.5), then arm 0 (gap 0.25); runs always pull arm 0 / arm 1
    table = np.array([[0.25, 0.75]] * 3 + [[0.5, 0.25]] * 2)
    gaps = table.max(axis=1, keepdims=True) - table
    actions = np.array([[0, 1]] * 5, dtype=np.int8)
    out = regret_from_actions(actions, np.array([2, 5]), gaps, (3,))
    np.testing.assert_array_equal(out["total_regret"], [1.5, 0.5])
    np.testing.assert_array_equal(out["regret"], [[1.0, 0.0], [1.5, 0.5]])
    np.testing.assert_array_equal(out["segment_regret"], [[1.5, 0.0], [0.0, 0.5]])
    missing = regret_from_actions(actions, np.array([2, 5]), None, (3,))
    assert all(np.isnan(v).all() for v in missing.values())
    assert missing["segment_regret"].shape == (2, 2)


def test_timing_tells_where_every_task_ran() -> None:
    env = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 60, "horizon": 100}
    res = engine.run(env, {"UCB": "ucb", "TS": "thompson"}, n_runs=5, chunk_size=2, seed=0,
                     n_jobs=1, progress=False)  # fmt: skip
    timing = res.timing
    rows = timing["tasks"]
    # one row per (agent, chunk), in the order they started, inside the run's own time
    assert sorted((r["label"], r["chunk"]) for r in rows) == [
        (label, c) for label in ("TS", "UCB") for c in range(3)
    ]
    starts = [r["start"] for r in rows]
    assert starts == sorted(starts) and starts[0] >= timing["setup_seconds"] >= 0
    assert all(r["start"] <= r["end"] for r in rows)
    assert rows[-1]["end"] <= timing["setup_seconds"] + timing["wall_seconds"]
    assert {r["worker"] for r in rows} == {os.getpid()}
    for label in ("UCB", "TS"):  # the per-agent CPU is the sum of its tasks'
        cpu = sum(r["cpu"] for r in rows if r["label"] == label)
        assert timing["cpu_seconds"][label] == pytest.approx(cpu, rel=1e-12)
    assert timing["merge_seconds"] >= 0 and timing["started_at"] <= time.time()


#: A Fig. 9 run (every paper agent, a short horizon) in a fresh interpreter: which modules it
#: imported and how many exit handlers each run added.
_FRESH_RUN = """
import atexit, json, sys
import envs
after_envs = sorted(sys.modules)
from dpbandits.experiments import run, shift_agents, shift_env
handlers = [atexit._ncallbacks()]
for _ in range(2):
    run(shift_env(t_shift=30, horizon=50), shift_agents(), n_runs=2, seed=0, progress=False,
        trace=False, n_jobs=1)
    handlers.append(atexit._ncallbacks())
print(json.dumps({"after_envs": after_envs, "after_run": sorted(sys.modules),
                  "handlers": handlers}))
"""


def test_a_fig9_run_imports_only_what_it_needs() -> None:
    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    out = subprocess.run([sys.executable, "-c", _FRESH_RUN], check=True, capture_output=True,
                         text=True, env=env, cwd=root)  # fmt: skip
    seen = json.loads(out.stdout.splitlines()[-1])

    def heavy(modules: list[str]) -> list[str]:
        # scipy.stats alone is about a second of imports; plots, tables and progress bars are
        # imported by the functions that use them
        return [m for m in modules if m.split(".")[0] in ("matplotlib", "pandas", "tqdm")
                or m == "scipy.stats" or m.startswith("envs.recommendation")]  # fmt: skip

    assert heavy(seen["after_envs"]) == []
    assert heavy(seen["after_run"]) == []
    # nor the modules of the environments and agents it does not play
    unused = ("envs.drifting", "envs.k_armed", "agents.exp3", "agents.nonstationary")
    assert [m for m in seen["after_run"] if m in unused] == []
    # run() leaves the caller's process alone: it registers no exit handler of its own (the
    # console script skips the final collections, dpbandits.cli.console_main); a second run
    # adds none (the first may, through a library imported on first use)
    first, after_one, after_two = seen["handlers"]
    assert after_two == after_one
