"""Every size a user can pass is checked against memory before any work (issue 30, item 4).

The machine's memory is set by the tests (``checks.physical_memory``), so that the outcome does
not depend on where they run; building an environment's tables is made to fail, so that a check
that comes too late fails the test instead of allocating gigabytes.
"""

from __future__ import annotations

import argparse
import tracemalloc
import warnings
from dataclasses import replace

import numpy as np
import pytest

import agents
from dpbandits.cli import main
from dpbandits.cli.options import count
from dpbandits.core import checks
from dpbandits.core.checks import MemoryWarning
from dpbandits.experiments import memory, run, shift_agents, shift_env
from dpbandits.experiments.memory import RunSizes, check_memory, memory_estimate, option_names
from envs.core import Schedule

GIB = 2**30


@pytest.fixture
def machine(monkeypatch):
    """A machine of 16 GiB, 12 GiB of it available, on which no environment may be built."""
    monkeypatch.setattr(checks, "physical_memory", lambda: 16 * GIB)
    monkeypatch.setattr(memory, "physical_memory", lambda: 16 * GIB)
    monkeypatch.setattr(memory, "available_memory", lambda: 12 * GIB)

    def refuse(self: object, *args: object, **kwargs: object) -> None:
        raise AssertionError("an environment was built: the check came too late")

    monkeypatch.setattr(Schedule, "__init__", refuse)


@pytest.mark.parametrize(("argv", "option"), [
    (["shift", "--horizon", "2e8"], "lower --horizon to at most"),
    (["shift", "--runs", "1e8", "--horizon", "1000", "--t-shift", "500"],
     "lower --runs to at most"),
    (["run", "--env", "dpbandits/TwoArmedShift-v0", "--env-arg", "t_shift=10,horizon=200000000",
      "--agent", "UCB=ucb"], "lower experiment.env_kwargs.horizon to at most"),
    (["run", "--env", "dpbandits/TwoArmedShift-v0", "--env-arg", "t_shift=10,horizon=1000",
      "--agent", "UCB=ucb", "--runs", "1e9", "--set", "experiment.record_stride=1"],
     "lower --runs to at most"),
    (["sweep", "--env", "dpbandits/TwoArmedShift-v0", "--env-arg", "t_shift=10",
      "--agent", "UCB=ucb", "--grid", "experiment.env_kwargs.horizon=1000,500000000"],
     "lower experiment.env_kwargs.horizon to at most"),
])  # fmt: skip
def test_the_command_line_refuses_what_cannot_fit_before_any_work(machine, tmp_path, capsys,
                                                                 argv, option):  # fmt: skip
    """One line: the sizes as given, the estimate by part, the option that lowers it with the
    largest value that fits; exit 2; no output directory."""
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpbandits: error: ") and "\n" not in err
    assert "of memory (" in err and "more than this machine's 16 GiB" in err
    assert option in err
    assert not out.exists()


def test_the_python_api_refuses_what_cannot_fit_before_any_work(machine):
    with pytest.raises(ValueError, match=r"horizon 200,000,000 .* lower horizon to at most"):
        run(shift_env(t_shift=10, horizon=200_000_000), {"UCB": agents.UCB()}, n_runs=100)
    with pytest.raises(ValueError, match=r"n_runs 100,000,000, .*lower n_runs to at most"):
        run(shift_env(t_shift=10, horizon=1000), {"UCB": agents.UCB()}, n_runs=100_000_000,
            record_stride=1)  # fmt: skip


def test_the_largest_value_said_to_fit_does_and_the_next_does_not(machine):
    sizes = RunSizes(100, 200_000_000, 2, 7, 5, workers=2)
    with pytest.raises(ValueError, match="at most ([0-9,]+) fits|to at most ([0-9,]+)") as info:
        check_memory(sizes)
    best = int(str(info.value).rsplit("at most ", 1)[1].split()[0].replace(",", ""))
    assert memory_estimate(replace(sizes, horizon=best)).total <= 16 * GIB
    assert memory_estimate(replace(sizes, horizon=best + 1)).total > 16 * GIB


def test_a_large_run_is_announced_with_the_option_that_lowers_it(machine):
    """A run of 2e7 steps with traces (issue 30: 3.6 GB and no word) fits, with a warning."""
    with option_names({"horizon": "--horizon"}), pytest.warns(MemoryWarning) as caught:
        est = check_memory(RunSizes(100, 20_000_000, 2, 7, 5, workers=2))
    text = str(caught[0].message)
    assert est.sizes.trace and est.total > memory.WARN_BYTES
    assert "the run needs about" in text and "--horizon" in text and "GiB available now" in text


def test_a_run_whose_traces_alone_do_not_fit_runs_summary_only(monkeypatch):
    """The traces of many arms at every step would not fit, the rest does: the run goes
    without them and says so."""
    sizes = RunSizes(8, 3000, 2, 1, 1, record_stride=1, chunk_size=4, workers=1,
                     n_segments=2)  # fmt: skip
    full, lean = memory_estimate(sizes).total, memory_estimate(replace(sizes, trace=False)).total
    assert lean < full
    limit = (lean + full) // 2
    for module in (checks, memory):
        monkeypatch.setattr(module, "physical_memory", lambda: limit)
    monkeypatch.setattr(memory, "available_memory", lambda: limit)
    monkeypatch.setattr(memory, "WARN_BYTES", limit)
    # a private agent's state counts as little as the estimate above assumes (none)
    monkeypatch.setattr(memory, "agent_state_bytes", lambda *a: 0)
    from dpbandits.experiments import agentspec

    monkeypatch.setattr(agentspec, "state_bytes", lambda *a: 0)
    env = shift_env(t_shift=1500, horizon=3000)
    with pytest.warns(MemoryWarning, match="running without them"):
        res = run(env, {"mGEM": agents.PrivateAgent("mgem")}, n_runs=8, record_stride=1,
                  chunk_size=4, n_jobs=1, progress=False)  # fmt: skip
    assert "private_means" not in res.data["mGEM"] and res.data["mGEM"]["regret"].shape[0] == 3000


def test_the_estimate_covers_what_a_run_allocates():
    """``tracemalloc`` sees numpy's allocations: the peak of a small run in this process stays
    below the estimate the engine checks."""
    amap = {label: a for label, a in shift_agents().items() if label in ("UCB", "mGEM")}
    env = shift_env(t_shift=100_000, horizon=200_000)
    run(shift_env(t_shift=100, horizon=200), amap, n_runs=2, n_jobs=1, progress=False)  # warm
    checked: list[int] = []
    real = memory.check_memory

    def spy(sizes: RunSizes, **kwargs: object) -> memory.MemoryEstimate:
        est = real(sizes, **kwargs)  # type: ignore[arg-type]
        checked.append(est.total)
        return est

    from dpbandits.experiments import engine

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "check_memory", spy)
        tracemalloc.start()
        try:
            run(env, amap, n_runs=50, n_jobs=1, progress=False)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert checked and checked[-1] >= peak


def test_option_names_apply_within_their_block_only():
    sizes = RunSizes(100, 200_000_000, 2, 7, workers=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with option_names({"horizon": "--horizon"}), pytest.raises(ValueError, match="--horizon"):
            check_memory(replace(sizes, horizon=10**12))
        with pytest.raises(ValueError, match=r"horizon 1,000,000,000,000 .*lower horizon"):
            check_memory(replace(sizes, horizon=10**12))


@pytest.mark.parametrize(("text", "value"), [("200000000", 200_000_000), ("2e8", 200_000_000),
                                             ("200_000", 200_000), ("-3", -3), ("1E3", 1000)])
def test_sizes_on_the_command_line_may_be_written_2e8(text, value):
    assert count(text) == value


@pytest.mark.parametrize("text", ["2.5", "1e-3", "inf", "nan", "ten", ""])
def test_sizes_that_are_not_whole_numbers_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected an integer"):
        count(text)


def test_agent_state_is_counted_per_run():
    per_run = memory.agent_state_bytes(agents.PrivateAgent("mgem"), 2, 50_000)
    ucb = memory.agent_state_bytes(agents.UCB(), 2, 50_000)
    # the private means' noise blocks: 2 arms x 2 slots x 2048 float64 at least
    assert per_run >= 2 * 2 * 2048 * 8 > ucb > 0
    assert memory.agent_state_bytes(object(), 2, 10) == 0  # not an agent: the probe says so
    assert np.isfinite(per_run)


def test_the_command_line_shows_the_warning_as_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(memory, "WARN_BYTES", 1)  # every run is "large"
    argv = ["run", "--env", "dpbandits/TwoArmedShift-v0", "--env-arg", "t_shift=100,horizon=200",
            "--agent", "UCB=ucb", "--runs", "2", "--jobs", "1", "--no-plots", "--no-progress",
            "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "warning" in ln]
    assert len(lines) == 1 and lines[0].startswith(
        "dpbandits: warning: --runs 2, experiment.env_kwargs.horizon 200 (1 agent, 2 arms): "
        "the run needs about"
    )
