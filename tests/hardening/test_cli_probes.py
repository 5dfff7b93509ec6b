"""Regression tests of the adversarial CLI, file and interruption probes that went wrong.

Each probe must end in one line ``dpbandits: error: ...`` (exit 2) before any work, or in a
correct result: no traceback, no NaN in a table, no file written where it should not be, no
partial output that looks complete, no worker left behind.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dpbandits.cli import main
from dpbandits.cli.options import INCOMPLETE_MARKER
from dpbandits.experiments.results import Results, ResultsFileError

ROOT = Path(__file__).resolve().parents[2]

SMALL_TOML = """\
[experiment]
env = "dpbandits/TwoArmedShift-v0"
n_runs = 2
seed = 1
[experiment.env_kwargs]
horizon = 120
t_shift = 60
[agents.UCB]
kind = "ucb"
[agents.RNM]
kind = "private"
selector = "rnm"
epsilon_select = 1.0
window = 20
"""
SWEEP_TOML = SMALL_TOML + '[sweep]\n"agents.RNM.epsilon_select" = [0.5, 1.0, 2.0]\n'


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The single stderr line of a refused command (asserted to be exactly one)."""
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("dpbandits: error: "), err
    return lines[0]


@pytest.mark.parametrize("argv", [[], ["audit"], ["course"]])
def test_a_bare_command_shows_help_and_one_error_line(argv, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert "usage:" in out
    assert err.strip().startswith("dpbandits: error: ") and err.count("\n") == 1


SHIFT = ["shift", "--runs", "2", "--horizon", "100", "--t-shift", "50", "--jobs", "1",
         "--no-plots", "--no-progress"]  # fmt: skip
TOPK = ["topk", "--reps", "2", "--trials", "2", "--epsilon", "1", "--no-plots", "--no-progress"]
RECOMMEND = ["recommend", "--requests", "50", "--epsilon", "1", "--no-plots", "--no-progress"]
MULTISELECT = ["multiselect", "--users", "5", "--items", "30", "--no-plots", "--no-progress"]
TWO = ["two-candidate", "--draws", "50", "--no-plots"]
SCENARIOS = ["scenarios", "--trials", "20", "--epsilon", "1", "--no-plots", "--no-progress"]


@pytest.mark.parametrize(
    "argv, option",
    [
        # an empty list option used to mean "the default"
        ([*SHIFT, "--agent", ""], "--agent"),
        ([*TOPK, "--k", ""], "--k"),
        ([*MULTISELECT, "--k", ""], "--k"),
        ([*RECOMMEND, "--bound", ""], "--bound"),
        ([*TWO, "--m2", ""], "--m2"),
        ([*SCENARIOS, "--selector", ""], "--selector"),
        # raw "invalid literal for int()" / "could not convert string to float"
        ([*MULTISELECT, "--k", "1,x"], "--k"),
        ([*RECOMMEND, "--bound", "abc"], "--bound"),
        ([*RECOMMEND, "--bound", "inf"], "--bound"),
        # checked only inside the computation, after the output directory was made, or never
        ([*RECOMMEND, "--gamma-epsilon", "0"], "--gamma-epsilon"),
        ([*RECOMMEND, "--cutoff", "nan"], "--cutoff"),
        ([*SCENARIOS, "--sweep-epsilon", "nan"], "--sweep-epsilon"),
        # ignored by a paper figure, or named after an internal variable ("d1")
        ([*TWO, "--gap", "nan"], "--gap"),
        ([*TWO, "--figure", "2", "--epsilon", "-1"], "--epsilon"),
        ([*TWO, "--grid", "0,1"], "--grid"),
    ],
)
def test_bad_values_are_one_line_errors_before_any_work(argv, option, capsys, tmp_path):
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 2
    assert option in one_error_line(capsys)
    assert not out.exists()


def test_two_candidate_table_has_no_nan_for_a_one_point_grid(capsys, tmp_path):
    assert main([*TWO, "--grid", "0.5", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "hg_fig2.md").read_text()
    assert "nan" not in table.lower() and "| - | - |" in table


@pytest.mark.parametrize(
    "command, option",
    [("shift", "--out"), ("run", "--out"), ("sweep", "--out"), ("shift", "--json"),
     ("run", "--json")],
)  # fmt: skip
def test_empty_output_paths_are_refused(command, option, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "c.toml"
    config.write_text(SWEEP_TOML if command == "sweep" else SMALL_TOML)
    argv = SHIFT if command == "shift" else [command, str(config), "--no-plots", "--no-progress"]
    extra = [option, ""] if option == "--out" else ["--out", "o", option, ""]
    assert main([*argv, *extra]) == 2
    assert option.lstrip("-") in one_error_line(capsys)
    assert sorted(os.listdir(tmp_path)) == ["c.toml"]  # nothing written in the current directory


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a read-only /proc")
def test_json_path_that_cannot_be_written_fails_before_the_run(capsys, tmp_path):
    # /proc refuses new files even for the super-user, for whom permission bits say "writable"
    config = tmp_path / "c.toml"
    config.write_text(SMALL_TOML)
    out = tmp_path / "out"
    argv = ["run", str(config), "--no-plots", "--out", str(out), "--json", "/proc/x.json"]
    assert main(argv) == 2
    assert "--json" in one_error_line(capsys)
    assert not out.exists()


def test_interrupted_run_leaves_its_output_marked_incomplete(capsys, tmp_path, monkeypatch):
    config = tmp_path / "c.toml"
    config.write_text(SMALL_TOML)
    out = tmp_path / "out"
    argv = ["run", str(config), "--no-plots", "--no-progress", "--jobs", "1", "--out", str(out)]
    assert main(argv) == 0
    assert (out / "results.npz").is_file() and not (out / INCOMPLETE_MARKER).exists()

    from dpbandits.experiments.config import Experiment

    def interrupted(self, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Experiment, "run", interrupted)
    assert main(argv) == 130
    # the old files are still there, but the directory no longer looks complete
    assert (out / INCOMPLETE_MARKER).is_file()


def test_out_of_memory_is_one_line(capsys, tmp_path, monkeypatch):
    # a horizon no machine holds is refused before any work (exit 2, tests/experiments/
    # test_memory.py); an allocation that fails all the same is one line too, exit 1
    argv = ["shift", "--runs", "1", "--horizon", str(10**14), "--t-shift", "10", "--jobs", "1",
            "--agent", "UCB", "--no-plots", "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 2
    assert "lower --horizon to at most" in one_error_line(capsys)
    from dpbandits.experiments import engine

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError("Unable to allocate 7.28 TiB for an array with shape (10**14, 1)")

    monkeypatch.setattr(engine, "run", no_memory)
    argv[4] = "1000"
    assert main(argv) == 1
    assert "not enough memory" in one_error_line(capsys)


@pytest.mark.parametrize("command", ["shift", "run", "sweep"])
def test_more_runs_than_memory_can_hold_are_refused(command, capsys, tmp_path):
    # before: the engine started, its memory grew without bound (3 GB within 20 s) and it ran
    # until killed
    config = tmp_path / "c.toml"
    config.write_text(SWEEP_TOML if command == "sweep" else SMALL_TOML)
    out = tmp_path / "out"
    argv = SHIFT if command == "shift" else [command, str(config), "--no-plots"]
    assert main([*argv, "--runs", str(10**13), "--out", str(out)]) == 2
    assert "--runs" in one_error_line(capsys)
    assert not out.exists()


RAISING_SELECTOR = """\
from dpbandits import selectors


class Raising(selectors.Selector):
    name = "raising_probe"
    private = True
    guarantee = "eps-DP"
    uses_sensitivities = False
    summary = "raises when used"

    def select_batch(self, q, d, rng):
        raise RuntimeError("broken inside select")


selectors.register("raising_probe", Raising, overwrite=True)
"""


def test_a_plugin_failing_mid_run_is_one_line_and_leaves_output_incomplete(
    capsys, tmp_path, monkeypatch
):
    plugin = tmp_path / "raising_plugin.py"
    plugin.write_text(RAISING_SELECTOR)
    out = tmp_path / "out"
    argv = [*SCENARIOS, "--plugin", str(plugin), "--selector", "raising_probe", "--out", str(out)]
    monkeypatch.delenv("DPBANDITS_TRACEBACK", raising=False)
    assert main(argv) == 1
    line = one_error_line(capsys)
    assert "RuntimeError: broken inside select" in line and "raising_plugin.py" in line
    assert (out / INCOMPLETE_MARKER).is_file()
    monkeypatch.setenv("DPBANDITS_TRACEBACK", "1")
    with pytest.raises(RuntimeError, match="broken inside select"):
        main(argv)


def test_a_directory_given_as_the_config_file_says_so(capsys, tmp_path):
    assert main(["run", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "is a directory" in one_error_line(capsys)


def sweep_argv(tmp_path: Path) -> list[str]:
    config = tmp_path / "s.toml"
    config.write_text(SWEEP_TOML)
    return ["sweep", str(config), "--no-plots", "--no-progress", "--scheduler", "serial",
            "--out", str(tmp_path / "sw")]  # fmt: skip


def test_sweep_recomputes_corrupt_or_foreign_store_entries(capsys, tmp_path):
    argv = sweep_argv(tmp_path)
    assert main(argv) == 0
    files = sorted((tmp_path / "sw" / "store").glob("*/*.npz"))
    assert len(files) == 3
    capsys.readouterr()
    files[0].write_bytes(b"")  # zero bytes
    files[1].write_text("not a results file\n")  # another kind of file
    # a complete results file of another experiment, copied under this key: must not be reused
    other = tmp_path / "other"
    config = tmp_path / "o.toml"
    config.write_text(SMALL_TOML.replace("seed = 1", "seed = 7"))
    assert main(["run", str(config), "--no-plots", "--no-progress", "--out", str(other)]) == 0
    files[2].write_bytes((other / "results.npz").read_bytes())
    capsys.readouterr()
    assert main(argv) == 0
    assert "3 computed, 0 reused" in capsys.readouterr().out
    assert main(argv) == 0
    assert "0 computed, 3 reused" in capsys.readouterr().out


def test_sweep_store_entry_that_is_a_directory_is_one_line(capsys, tmp_path):
    argv = sweep_argv(tmp_path)
    assert main(argv) == 0
    first = sorted((tmp_path / "sw" / "store").glob("*/*.npz"))[0]
    first.unlink()
    first.mkdir()
    capsys.readouterr()
    assert main(argv) == 2
    assert "is a directory" in one_error_line(capsys)


def test_interrupted_sweep_is_marked_incomplete_and_resumes(capsys, tmp_path, monkeypatch):
    import dpbandits.experiments.sweep as sweep_module

    real = sweep_module.run_cell
    calls = []

    def interrupt_second(task):
        calls.append(task)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(task)

    argv = sweep_argv(tmp_path)
    out = tmp_path / "sw"
    monkeypatch.setattr(sweep_module, "run_cell", interrupt_second)
    assert main(argv) == 130
    assert (out / INCOMPLETE_MARKER).is_file() and not (out / "summary.csv").exists()
    monkeypatch.setattr(sweep_module, "run_cell", real)
    capsys.readouterr()
    assert main(argv) == 0
    assert "2 computed, 1 reused" in capsys.readouterr().out
    assert not (out / INCOMPLETE_MARKER).exists() and (out / "summary.csv").is_file()


@pytest.fixture(scope="module")
def results_file(tmp_path_factory) -> Path:
    from dpbandits.experiments.engine import run
    from dpbandits.experiments.presets import shift_agents, shift_env

    res = run(shift_env(t_shift=30, horizon=60), shift_agents(["UCB"]), n_runs=2, seed=0,
              progress=False, n_jobs=1)  # fmt: skip
    return res.save(tmp_path_factory.mktemp("res") / "r.npz")


def rewrite(src: Path, dst: Path, change) -> Path:
    """A copy of results file ``src`` whose arrays (a dict, ``__meta__`` decoded) are changed."""
    with np.load(src) as f:
        payload = {k: f[k] for k in f.files}
    meta = json.loads(str(payload["__meta__"]))
    change(meta, payload)
    payload["__meta__"] = np.array(json.dumps(meta))
    buf = io.BytesIO()
    np.savez(buf, **payload)
    dst.write_bytes(buf.getvalue())
    return dst


def _bad_fields(meta, payload):
    meta.update(config=None, privacy=7, timing="x")


def _text_array(meta, payload):
    key = next(k for k in payload if k.startswith("agent0__"))
    payload[key] = np.array(["a", "b"])


def _labels_not_strings(meta, payload):
    meta["labels"] = [1]
    meta["data_keys"] = {"1": meta["data_keys"]["UCB"]}


@pytest.mark.parametrize(
    "change, message",
    [(_bad_fields, "metadata"), (_text_array, "expected numbers"),
     (_labels_not_strings, "labels")],
)  # fmt: skip
def test_load_refuses_malformed_results(results_file, tmp_path, change, message):
    path = rewrite(results_file, tmp_path / "bad.npz", change)
    with pytest.raises(ResultsFileError, match=message):
        Results.load(path)


def test_load_of_a_directory_says_so(tmp_path):
    with pytest.raises(ResultsFileError, match="is a directory"):
        Results.load(tmp_path)


def test_load_of_a_zip_with_a_corrupted_member(results_file, tmp_path):
    data = bytearray(results_file.read_bytes())
    with zipfile.ZipFile(results_file) as z:
        info = max(z.infolist(), key=lambda i: i.compress_size)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF  # the middle of the largest member's data
    bad = tmp_path / "flipped.npz"
    bad.write_bytes(bytes(data))
    with pytest.raises(ResultsFileError, match="dpbandits results file"):
        Results.load(bad)


def _group_members(pgid: int) -> list[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,pgid=,stat="], capture_output=True, text=True)
    return [int(p) for p, g, s in (line.split() for line in out.stdout.splitlines())
            if int(g) == pgid and not s.startswith("Z")]  # fmt: skip


@pytest.mark.skipif(sys.platform != "linux", reason="uses ps process groups")
def test_sigterm_to_a_process_pool_sweep_leaves_nothing_and_resumes(tmp_path):
    config = tmp_path / "s.toml"
    config.write_text(
        SWEEP_TOML.replace("horizon = 120", "horizon = 20000")
        .replace("t_shift = 60", "t_shift = 10000")
        .replace("[0.5, 1.0, 2.0]", "[0.25, 0.5, 1.0, 2.0, 4.0, 8.0]")
    )  # fmt: skip
    out = tmp_path / "sw"
    cmd = [sys.executable, "-m", "dpbandits", "sweep", str(config), "--jobs", "2", "--no-plots",
           "--no-progress", "--scheduler", "processes", "--out", str(out)]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 30
    while not list(out.glob("store/*/*.npz")) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    if proc.returncode in (0, -signal.SIGTERM) and (out / "summary.csv").is_file():
        # finished before the signal, or during the interpreter's exit after it finished
        pytest.skip("the sweep finished before the signal")
    assert proc.returncode == 143
    assert err.strip().splitlines()[-1] == "dpbandits: terminated (outputs left incomplete)"
    deadline = time.monotonic() + 5
    while _group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _group_members(proc.pid) == []
    assert (out / INCOMPLETE_MARKER).is_file() and not (out / "summary.csv").exists()
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "reused" in again.stdout and " 0 reused" not in again.stdout
    assert not (out / INCOMPLETE_MARKER).exists()
