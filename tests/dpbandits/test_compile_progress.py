"""A notice on stderr when the library's kernels compile, from any entry point (a selector's
first use, the course checker), not only from the engine (dpbandits.core.compile_progress)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from dpbandits.core import compile_progress

KERNELS = """
from dpbandits.core.jit import kernel


@kernel
def twice(x):
    return 2.0 * x


@kernel
def plus_twice(x):
    return x + twice(x)
"""


def _fresh_kernels(tmp_path: Path, name: str):  # type: ignore[no-untyped-def]
    path = tmp_path / f"{name}.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_compilation_of_a_process_is_announced_once(tmp_path, monkeypatch,
                                                              capsys) -> None:  # fmt: skip
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(compile_progress.ENV, raising=False)
    monkeypatch.setitem(compile_progress._state, "announced", False)
    before = compile_progress.compiled_count()
    module = _fresh_kernels(tmp_path, "fresh_kernels_a")
    assert module.plus_twice(1.5) == 4.5
    err = capsys.readouterr().err
    assert err.count("dpbandits: compiling kernels at their first use") == 1, err
    assert str(tmp_path / "cache") in err
    assert compile_progress.compiled_count() - before == 2  # plus_twice and the twice it calls
    other = _fresh_kernels(tmp_path, "fresh_kernels_b")
    assert other.twice(1.0) == 2.0
    assert "compiling" not in capsys.readouterr().err  # once per process


def test_quiet_and_the_environment_variable_silence_it(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(compile_progress._state, "announced", False)
    with compile_progress.quiet():
        assert _fresh_kernels(tmp_path, "fresh_kernels_c").twice(1.0) == 2.0
    monkeypatch.setenv(compile_progress.ENV, "0")
    assert _fresh_kernels(tmp_path, "fresh_kernels_d").twice(1.0) == 2.0
    assert "compiling" not in capsys.readouterr().err
    assert not compile_progress._state["announced"] and sys.stderr is not None


def test_the_notice_is_shown_when_stderr_is_silenced_into_a_string(tmp_path, monkeypatch,
                                                                   capfd) -> None:  # fmt: skip
    """The course checker runs a student's code with stderr redirected into a string buffer:
    the compile notice still reaches the terminal (the process's own stderr)."""
    import contextlib
    import io

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(compile_progress.ENV, raising=False)
    monkeypatch.setitem(compile_progress._state, "announced", False)
    buffer = io.StringIO()
    with contextlib.redirect_stderr(buffer):
        assert _fresh_kernels(tmp_path, "fresh_kernels_e").twice(2.0) == 4.0
    assert "compiling kernels" not in buffer.getvalue()
    assert "dpbandits: compiling kernels at their first use" in capfd.readouterr().err
