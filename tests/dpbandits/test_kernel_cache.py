"""The kernels' disk cache lives in a per-user cache directory (dpbandits.core.kernel_cache),
never inside the installed package or the clone: numba's files next to the modules survived
``pip uninstall`` and shadowed the package afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpbandits.cli import main
from dpbandits.core import jit, kernel_cache
from dpbandits.core.version import __version__

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("system", "environ", "expected"),
    [
        ("Linux", {"HOME": "/h"}, "/h/.cache/dpbandits"),
        ("Linux", {"HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/x/dpbandits"),
        ("Linux", {"HOME": "/h", "XDG_CACHE_HOME": "rel"}, "/h/.cache/dpbandits"),  # invalid
        ("FreeBSD", {"HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/x/dpbandits"),
        ("Darwin", {"HOME": "/h"}, "/h/Library/Caches/dpbandits"),
        ("Windows", {"USERPROFILE": "/u", "LOCALAPPDATA": "/l"}, "/l/dpbandits/Cache"),
        ("Windows", {"USERPROFILE": "/u"}, "/u/AppData/Local/dpbandits/Cache"),
    ],
)
def test_the_user_cache_root_per_platform(system, environ, expected) -> None:
    assert kernel_cache.user_cache_root(environ, system) == Path(expected)


def test_numba_cache_dir_wins_else_a_folder_per_version_and_cpu(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert kernel_cache.kernel_cache_dir() == (tmp_path / "mine").resolve()
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    directory = kernel_cache.kernel_cache_dir()
    if sys.platform.startswith("linux"):
        assert directory.parent == tmp_path / "xdg" / "dpbandits"
    key = directory.name
    assert key == kernel_cache.cache_key() and key.startswith(f"{__version__}-py")
    assert len(key.split("-")) >= 4, key  # version, python, cpu name, cpu features hash


@pytest.mark.parametrize("fn", [jit.beats, jit.pairwise_sum])
def test_library_kernels_are_never_cached_inside_the_package(fn) -> None:
    locator = fn._cache._impl._locator
    path = Path(locator.get_cache_path()).resolve()
    assert not path.is_relative_to(ROOT), path
    assert path.is_relative_to(kernel_cache.kernel_cache_dir()), path


def _numba_files(root: Path) -> set[Path]:
    return {p for pkg in ("dpbandits", "agents", "envs") for suffix in ("*.nbi", "*.nbc")
            for p in (root / pkg).rglob(suffix)}  # fmt: skip


RUN_KERNELS = """
import numpy as np
from dpbandits.core import jit, kernel_cache
from agents.ucb import UCB
assert jit.pairwise_sum(np.arange(300.0), 0, 300) == np.arange(300.0).sum()
print(kernel_cache.kernel_cache_dir())
"""


def test_running_kernels_writes_only_the_user_cache(tmp_path) -> None:
    """A fresh process with no NUMBA_CACHE_DIR and an empty per-user cache compiles kernels:
    numba's files land under the per-user directory, none under the package folders."""
    before = _numba_files(ROOT)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"),
               LOCALAPPDATA=str(tmp_path / "local"), PYTHONPATH=str(ROOT))  # fmt: skip
    out = subprocess.run([sys.executable, "-c", RUN_KERNELS], env=env, cwd=tmp_path,
                         capture_output=True, text=True, check=True)  # fmt: skip
    directory = Path(out.stdout.strip().splitlines()[-1])
    assert directory.is_relative_to(tmp_path), directory
    written = list(directory.rglob("*.nbi"))
    assert written and list(directory.rglob("*.nbc")), directory
    assert _numba_files(ROOT) == before  # nothing new inside the clone / installed package
    # and `dpbandits cache` sees them, and clears them
    info = subprocess.run([sys.executable, "-m", "dpbandits", "cache"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert str(directory) in info and f"{len(written)}" in info, info
    subprocess.run([sys.executable, "-m", "dpbandits", "cache", "clear"], env=env,
                   cwd=tmp_path, capture_output=True, check=True)  # fmt: skip
    assert not directory.exists()


def test_cache_clear_under_numba_cache_dir_removes_numba_files_only(tmp_path, monkeypatch,
                                                                    capsys) -> None:  # fmt: skip
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    (tmp_path / "sub").mkdir()
    for name in ("a.nbi", "a.1.nbc", "keep.txt"):
        (tmp_path / "sub" / name).write_text("x")
    assert main(["cache"]) == 0
    assert "2 files" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["keep.txt"]
    assert main(["cache", "info", "--all"]) == 2  # --all only with clear
