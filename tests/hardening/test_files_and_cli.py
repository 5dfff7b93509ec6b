"""Files that are never half-written, loads that say what is wrong, and a CLI that stops cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dpbandits.cli import main
from dpbandits.cli.options import INCOMPLETE_MARKER
from dpbandits.experiments import Results, ResultsFileError, run

ROOT = Path(__file__).resolve().parents[2]
ENV = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 50, "horizon": 100}


@pytest.fixture(scope="module")
def results() -> Results:
    return run(ENV, {"UCB": "ucb"}, n_runs=3, progress=False, n_jobs=1)


def test_save_is_atomic_and_round_trips(results, tmp_path):
    path = results.save(tmp_path / "r")
    assert path.name == "r.npz" and Results.load(path).equals(results)
    assert [p.name for p in tmp_path.iterdir()] == ["r.npz"]  # no temporary left behind


def test_interrupted_save_keeps_the_old_file(results, tmp_path, monkeypatch):
    path = results.save(tmp_path / "r.npz")
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", boom)
    with pytest.raises(KeyboardInterrupt):
        results.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.npz"]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"hello, I am text\n", "not a dpbandits results file"),
        (b"", "not a dpbandits results file"),
        (b"\x93NUMPY\x01\x00", "not a dpbandits results file"),
    ],
)
def test_load_of_other_files_raises_one_documented_error(tmp_path, content, message):
    p = tmp_path / "x.npz"
    p.write_bytes(content)
    with pytest.raises(ResultsFileError, match=message):
        Results.load(p)


def test_load_of_truncated_file(results, tmp_path):
    path = results.save(tmp_path / "r.npz")
    data = path.read_bytes()
    for cut in (len(data) // 3, len(data) - 10):
        path.write_bytes(data[:cut])
        with pytest.raises(ResultsFileError, match="truncated, corrupted"):
            Results.load(path)


def test_load_of_another_format_version(results, tmp_path):
    path = results.save(tmp_path / "r.npz")
    with np.load(path) as f:
        payload = {k: f[k] for k in f.files}
    meta = json.loads(str(payload["__meta__"]))
    meta["format"] = "dpbandits.Results/99"
    payload["__meta__"] = np.array(json.dumps(meta))
    np.savez_compressed(path, **payload)
    with pytest.raises(ResultsFileError, match="format 'dpbandits.Results/99'"):
        Results.load(path)


def test_load_of_a_zip_that_is_not_results(tmp_path):
    p = tmp_path / "other.npz"
    np.savez(p, a=np.arange(3))
    with pytest.raises(ResultsFileError, match="expected a .npz archive written by Results.save"):
        Results.load(p)


def test_load_of_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        Results.load(tmp_path / "nope.npz")


def test_bad_json_path_fails_before_any_work(tmp_path, capsys):
    (tmp_path / "adir").mkdir()
    t0 = time.perf_counter()
    code = main(["shift", "--json", str(tmp_path / "adir"), "--out", str(tmp_path / "o")])
    assert code == 2 and time.perf_counter() - t0 < 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--json" in err and "is a directory" in err


def test_out_that_is_a_file_fails_before_any_work(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["shift", "--out", str(tmp_path / "f")]) == 2
    assert "--out" in capsys.readouterr().err


@pytest.mark.parametrize(
    "source, message",
    [
        ("def broken(:\n", "has a syntax error"),
        ("raise RuntimeError('plugin exploded')\n", "RuntimeError: plugin exploded"),
    ],
)
def test_broken_plugin_is_one_line_before_any_work(tmp_path, capsys, source, message):
    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(source)
    assert main(["shift", "--plugin", str(plugin), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "my_plugin.py" in err
    assert not (tmp_path / "o").exists()


def test_bare_audit_shows_help(capsys):
    assert main(["audit"]) == 2
    out = capsys.readouterr().out
    assert "usage:" in out and "rnm" in out


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # it exited meanwhile
        return False


def _start_long_shift(out: Path, pipe: int) -> tuple[subprocess.Popen[str], list[int]]:
    """A long ``dpbandits shift`` on two workers, once its workers run (their pids)."""
    cmd = [sys.executable, "-m", "dpbandits", "shift", "--runs", "400", "--horizon", "50000",
           "--jobs", "2", "--no-progress", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=pipe, stderr=pipe, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        # SIGINT as in a terminal: a shell's background job (e.g. tests started with `&`)
        # ignores it, and its children would inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # a generous wait: on a cold kernel cache and a loaded machine the parent compiles for
    # a minute or more before it starts the workers (seen at load 25 on 2 cores)
    deadline = time.monotonic() + 600
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2 and proc.poll() is None:
        time.sleep(0.2)
        workers = _children(proc.pid)
    assert workers, f"the run never started its workers (exit code {proc.poll()})"
    time.sleep(0.5)
    return proc, workers


def _any_alive_after(pids: list[int], seconds: float) -> bool:
    """Whether any of ``pids`` is still alive ``seconds`` from now (polling, early exit)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return any(_alive(p) for p in pids)


@pytest.mark.skipif(sys.platform != "linux", reason="uses ps and /proc")
@pytest.mark.parametrize("sig, code, word", [(signal.SIGTERM, 143, "terminated"),
                                             (signal.SIGINT, 130, "interrupted")])  # fmt: skip
def test_signal_stops_workers_and_marks_output_incomplete(tmp_path, sig, code, word):
    out = tmp_path / "out"
    proc, workers = _start_long_shift(out, subprocess.PIPE)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert err.strip().count("\n") == 0 and word in err, err
    assert not _any_alive_after(workers, 5)
    assert (out / INCOMPLETE_MARKER).exists()
    assert not (out / "results.npz").exists()


def test_completed_output_has_no_marker(tmp_path):
    out = tmp_path / "o"
    argv = ["shift", "--runs", "2", "--horizon", "200", "--t-shift", "100", "--agent", "UCB",
            "--no-plots", "--no-progress", "--jobs", "1", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert (out / "results.npz").exists() and not (out / INCOMPLETE_MARKER).exists()


FOREIGN = {
    "agents": "# the agents package of another distribution\nAgent = object\n",
    "envs": "# the envs package of another distribution\n",
}


@pytest.mark.parametrize("name", ["agents", "envs"])
def test_a_foreign_sibling_package_is_an_import_error(tmp_path, name):
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text(FOREIGN[name])
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        try:
            import dpbandits
        except ImportError as exc:
            print("IMPORTERROR", exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path.parent,
    )  # fmt: skip
    assert "IMPORTERROR" in out.stdout, out.stdout + out.stderr
    assert f"'{name}'" in out.stdout and "separate virtual environment" in out.stdout
    assert str(tmp_path / name) in out.stdout


def test_check_passes_for_our_own_packages():
    from dpbandits.core.sibling_packages import check_sibling_packages

    check_sibling_packages()


def test_fresh_interpreter_makes_envs_prefixed_id(tmp_path):
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('envs:dpbandits/TwoArmedShift-v0', horizon=10, t_shift=5)\n"
        "env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, env.step(1)[4]['expected_rewards'].shape)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True,
    )  # fmt: skip
    assert out.stdout.split() == ["TwoArmedShift", "(2,)"]


def test_import_dpbandits_registers_the_ids(tmp_path):
    code = (
        "import gymnasium as gym, dpbandits\n"
        "print(gym.make('dpbandits/PiecewiseBandit-v0').unwrapped.n_arms)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True,
    )  # fmt: skip
    assert out.stdout.strip().isdigit()


def test_broken_pipe_is_quiet(tmp_path):
    proc = subprocess.run(
        f"'{sys.executable}' -m dpbandits list | head -1", shell=True, capture_output=True,
        text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="parent-death signal is Linux-only")
def test_sigkill_of_the_main_process_leaves_no_worker(tmp_path):
    proc, workers = _start_long_shift(tmp_path / "out", subprocess.DEVNULL)
    proc.kill()
    proc.wait(timeout=10)
    assert not _any_alive_after(workers, 10)
