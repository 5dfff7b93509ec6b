"""The warm-up before a run's tasks (dpbandits.experiments.warmup): every agent is played for a
few steps in this process first, so that the tasks find their kernels compiled; one line says
so before the first compilation, and the progress bar only starts afterwards."""

from __future__ import annotations

import types

import numba
import numpy as np
import pytest

import agents
from dpbandits.experiments import run, shift_agents, shift_env
from dpbandits.experiments import warmup as warmup_module
from dpbandits.experiments.engine import make_tasks, probe_environment, recording_plan
from dpbandits.experiments.envspec import env_spec
from dpbandits.experiments.warmup import compile_estimate, compile_notice, warm_up, warm_up_task


class FreshlyCompiled(agents.Agent):
    """Greedy on the sums, through a numba function made for each instance: its first call
    always compiles (nothing cached), like a kernel on a machine with an empty cache."""

    name = "fresh"

    def setup(self) -> None:
        self._sums = np.zeros((self.n_runs, self.n_arms))
        self._argmax = numba.njit(lambda s: np.argmax(s))

    def choose(self):  # type: ignore[no-untyped-def]
        return np.array([self._argmax(row) for row in self._sums], dtype=np.int64)

    def observe(self, actions, rewards) -> None:  # type: ignore[no-untyped-def]
        self._sums[np.arange(self.n_runs), actions] += rewards


def _tasks(agent_map, n_runs=3):  # type: ignore[no-untyped-def]
    spec = env_spec(shift_env(t_shift=300, horizon=500))
    facts = probe_environment(spec, None, True, (0.1, 0.9))
    plan = recording_plan(facts, None, None, True)
    return make_tasks(agent_map, spec, facts, plan, n_runs, 2, 0, False)


def test_a_warm_up_task_is_the_task_cut_short_with_its_own_agent() -> None:
    task = _tasks({"mGEM": agents.PrivateAgent("mgem")})[0]
    mini = warm_up_task(task)
    assert mini.horizon == task.n_arms + warmup_module.WARM_UP_STEPS < task.horizon
    assert mini.agent is not task.agent and mini.n == task.n
    assert list(mini.record_steps) == list(mini.trace_steps) == [mini.horizon]
    warmup_module._play(mini)
    assert mini.agent.t == mini.horizon and not hasattr(task.agent, "t")


def test_one_line_before_the_first_compilation_and_none_when_nothing_compiles() -> None:
    agent_map = {"UCB": agents.UCB(), "fresh": FreshlyCompiled()}
    tasks = _tasks(agent_map)
    lines: list[str] = []
    with compile_notice(agent_map, announce=lines.append) as notice:
        warm_up(tasks, notice=notice)  # UCB first (cheapest), then the fresh agent
    assert len(lines) == 1 and notice.compiled >= 1 and notice.pending == {}
    assert lines[0].startswith("compiling kernels for ") and lines[0].endswith(" s)…")
    assert "fresh (first run on this machine, ~" in lines[0]  # (with UCB if it compiled)
    again: list[str] = []
    ucb = [t for t in tasks if t.label == "UCB"]
    with compile_notice({"UCB": ucb[0].agent}, announce=again.append) as notice:
        warm_up(ucb, notice=notice)
    assert again == [] and notice.compiled == 0


def test_run_announces_compiling_before_the_progress_bar_starts(capsys) -> None:
    run(shift_env(t_shift=300, horizon=500), {"fresh": FreshlyCompiled()}, n_runs=2,
        progress=True, n_jobs=1)  # fmt: skip
    err = capsys.readouterr().err
    assert 0 <= err.index("compiling kernels for fresh") < err.index("dpbandits run")


def _sent_jobs(monkeypatch, agent_map, compiled_before=0, early=None):  # type: ignore[no-untyped-def]
    """What a warm-up of ``agent_map`` with 2 jobs hands to the compiling processes (one
    ``run_tasks`` call recorded, not run), ``compiled_before`` compilations counted first."""
    sent = []
    monkeypatch.setattr(warmup_module, "run_tasks",
                        lambda fn, tasks, **kw: sent.append((fn, tasks, kw)))  # fmt: skip
    tasks = _tasks(agent_map)  # (probing the environment may compile: not counted)
    with compile_notice(agent_map) as notice:
        notice.compiled = compiled_before
        warm_up(tasks, n_jobs=2, notice=notice, early=early)
    assert len(sent) == 1
    fn, items, kw = sent[0]
    assert fn is warmup_module._run_item and kw["n_jobs"] == 2
    # (the job waiting for the early process: "_after_early")
    names = [it.label if hasattr(it, "label") else it[0].__name__ for it in items]
    after = {names[i]: sorted(names[j] for j in kw["after"][i]) for i in range(len(items))}
    return items, names, after, [names[i] for i in kw["order"]]


def test_loops_are_compiled_in_parallel_once_per_compile_key(monkeypatch) -> None:
    """With a compilation in the first agent and several jobs, the other agents' loops go to
    forked processes, one job per compile key (GEM and mGEM share theirs), each after the
    kernels it calls: the private means' noise refill and the window update of Smith's method
    (once for RNM, GEM and mGEM) come first, TS needs neither."""
    from agents.private_loop import compile_loop, compile_windows

    agent_map = {"fresh": FreshlyCompiled(), **shift_agents(["GEM", "mGEM", "TS", "RNM"])}
    items, names, after, order = _sent_jobs(monkeypatch, agent_map)
    assert (compile_windows, ("smith",)) in items and "fresh" not in names  # (played here)
    assert (compile_loop, ()) in items  # (once: the private agents share their loop)
    shared = ["refill_noise_blocks", "compile_loop", "compile_windows", "TS", "RNM"]
    assert sorted(names) in (sorted([*shared, "GEM"]), sorted([*shared, "mGEM"]))
    assert after["TS"] == []
    assert after["RNM"] == ["compile_loop", "compile_windows", "refill_noise_blocks"]
    # the longest chains: the loop and the window update, then RNM
    assert sorted(order[:2]) == ["compile_loop", "compile_windows"]
    loops = [it.agent for it in items if hasattr(it, "agent")]
    assert compile_estimate(loops, 2) < compile_estimate(loops, 1)


def test_on_an_empty_cache_the_first_agent_compiles_beside_the_shared_kernels(monkeypatch):  # type: ignore[no-untyped-def]
    """When the set-up already compiled something (an empty kernel cache), the first agent's
    few steps (the environment's and the engine's kernels) are a job of the compiling processes
    too, with no prerequisite, and every agent's loop comes after it."""
    agent_map = {"UCB": agents.UCB(), **shift_agents(["TS", "kRR", "RS"])}
    items, names, after, order = _sent_jobs(monkeypatch, agent_map, compiled_before=1)
    assert after["UCB"] == after["compile_windows"] == after["refill_noise_blocks"] == []
    assert after["compile_loop"] == []
    assert after["TS"] == ["UCB"]
    assert after["kRR"] == ["UCB", "compile_loop", "refill_noise_blocks"]
    assert after["RS"] == ["UCB", "compile_loop", "compile_windows", "refill_noise_blocks"]
    # the three longest chains
    assert sorted(order[:3]) == ["UCB", "compile_loop", "compile_windows"]


def test_the_warm_up_compiles_the_noise_refill_of_any_block_size() -> None:
    """The private means' refill kernels are compiled in the parent (refill_noise_blocks), with
    the argument types a run's own refill uses: a later refill with other sizes compiles
    nothing new (each worker compiled them mid-run before)."""
    from dpbandits.continual import PrivateMeans
    from dpbandits.continual.tree_noise import block_store
    from dpbandits.core.samplers import fill_standard_laplace
    from dpbandits.experiments.warmup import refill_noise_blocks

    refill_noise_blocks()
    before = (len(block_store.signatures), len(fill_standard_laplace.signatures))
    assert before[0] >= 1 and before[1] >= 1
    means = PrivateMeans(7, 3, 0.5, block=64, rng=1)
    for _ in range(70):  # past the first block of 64 counts: a refill
        means.update(np.zeros(7, dtype=np.intp), np.full(7, 0.5))
    assert (len(block_store.signatures), len(fill_standard_laplace.signatures)) == before


def test_on_an_empty_cache_the_shared_kernels_start_before_the_agents_are_probed(monkeypatch):  # type: ignore[no-untyped-def]
    """With an empty kernel cache and several jobs, the kernels several loops call (the window
    update of Smith's method, once for RNM and RS, and their loop) start compiling in a forked
    process before the agents are probed (early_parts); one job of the compiling processes then
    waits for that process (end-of-file on its pipe) and loads what it wrote, before the
    agents' own kernels."""
    from agents.private_loop import compile_loop, compile_windows

    agent_map = shift_agents(["TS", "RNM", "RS"])
    with compile_notice(agent_map, n_jobs=1) as notice:  # one job: nothing to start
        assert not notice.empty_cache
        with warmup_module.early_parts(agent_map, 2, notice) as early:
            assert early is None
    monkeypatch.setattr(warmup_module, "_cache_is_empty", lambda: True)
    parts = [(compile_loop, ()), (compile_windows, ("smith",))]
    with compile_notice(agent_map, n_jobs=2) as notice:
        assert notice.empty_cache
        with warmup_module.early_parts(agent_map, 2, notice) as early:
            assert early is not None and early.parts == parts
            early.wait()
    assert early.process.exitcode == 0
    fake = types.SimpleNamespace(parts=early.parts, fd=-1, wait=lambda: None)
    items, names, after, _ = _sent_jobs(monkeypatch, agent_map, compiled_before=1, early=fake)
    assert (warmup_module._after_early, (-1, parts)) in items  # (one job waits for both)
    assert not any(part in items for part in parts)  # (compiled once: by the early process)
    assert after["RNM"] == after["RS"] == ["TS", "_after_early", "refill_noise_blocks"]


class _RefusesItsReset(agents.UCB):
    def reset(self, n_runs, n_arms, *, horizon=None, rng=None):  # type: ignore[no-untyped-def]
        raise ValueError("refused")


def test_a_probe_that_fails_stops_the_early_process(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An agent whose probe fails (its reset refuses a parameter) stops the run with its own
    error, after the early process started for the window update (an empty kernel cache) is
    stopped and reaped: no process is left behind."""
    import multiprocessing

    monkeypatch.setattr(warmup_module, "_cache_is_empty", lambda: True)
    started = []
    real = warmup_module.EarlyParts
    monkeypatch.setattr(warmup_module, "EarlyParts",
                        lambda parts: started.append(real(parts)) or started[-1])  # fmt: skip
    agent_map = {**shift_agents(["RNM"]), "bad": _RefusesItsReset()}
    with pytest.raises(ValueError, match="agent 'bad': refused"):
        run(shift_env(t_shift=300, horizon=500), agent_map, n_runs=2, n_jobs=2, progress=False)
    assert len(started) == 1 and started[0].process.exitcode is not None
    assert multiprocessing.active_children() == []
