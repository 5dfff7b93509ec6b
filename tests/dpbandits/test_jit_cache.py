"""The kernels' disk cache is keyed on every kernel module of the library (dpbandits.core.jit): a
kernel holds the code of the kernels it calls from other modules, which numba's own key (the
kernel's file) does not see."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.private import _play as private_play
from agents.ucb import _play as ucb_play
from dpbandits.core import jit
from dpbandits.selectors.gem import gem_rows


@pytest.mark.parametrize("fn", [jit.beats, ucb_play, private_play, gem_rows])
def test_library_kernels_are_cached_under_the_library_stamp(fn) -> None:
    locator = fn._cache._impl._locator
    assert type(locator).__name__.startswith("Library")
    assert locator.get_source_stamp()[1] == jit.library_stamp()


A_MODULE = '''"""A module."""
from dpbandits.core.jit import kernel

LIMIT = 8


@kernel
def step(
    v: float,
) -> float:
    return v + 1.0


def helper() -> int:
    return 1


class Agent:
    def act(self) -> None:
        self.x = 1
'''


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_stamp_changes_with_any_kernel_module_and_only_with_them(tmp_path, monkeypatch):
    _tree(tmp_path, {
        "dpbandits/core/jit.py": "def kernel(f): return f\n",
        "dpbandits/a.py": A_MODULE,
        "agents/b.py": "from dpbandits.core.jit import kernel\n",
        "envs/c.py": "x = 1\n",  # no kernel: not part of the stamp
        "tests/d.py": "from dpbandits.core.jit import kernel\n",  # not the library
    })  # fmt: skip
    monkeypatch.setattr(jit, "_ROOT", tmp_path)
    stamp = jit.library_stamp.__wrapped__
    assert [p.relative_to(tmp_path).as_posix() for p in jit._kernel_modules()] == [
        "dpbandits/a.py", "dpbandits/core/jit.py", "agents/b.py"]  # fmt: skip
    before = stamp()
    # a method, a Python function, a comment between them: no kernel changes
    a = tmp_path / "dpbandits/a.py"
    a.write_text(A_MODULE.replace("return 1", "return 2").replace("self.x", "self.y"))
    assert stamp() == before
    a.write_text(A_MODULE.replace("LIMIT = 8", "LIMIT = 9"))  # a constant a kernel may read
    assert stamp() != before
    a.write_text(A_MODULE.replace("v + 1.0", "v + 2.0"))  # a kernel
    assert stamp() != before
    a.write_text(A_MODULE)
    assert stamp() == before
    (tmp_path / "envs/c.py").write_text("x = 2\n")
    (tmp_path / "tests/d.py").write_text("from dpbandits.core.jit import kernel  # changed\n")
    assert stamp() == before
    (tmp_path / "agents/b.py").write_text("from dpbandits.core.jit import kernel  # changed\n")
    assert stamp() != before


def test_only_kernels_get_the_library_locator(tmp_path) -> None:
    """A user's kernel (made with dpbandits.core.jit.kernel) holds library code too: it is keyed on
    the library stamp; a plain numba function keeps numba's own locator."""
    module = tmp_path / "user_kernels.py"
    module.write_text(
        "import numba\nfrom dpbandits.core.jit import kernel\n\n"
        "@kernel\ndef mine(x):\n    return x + 1\n\n"
        "@numba.njit(cache=True)\ndef plain(x):\n    return x + 1\n"
    )  # fmt: skip
    namespace: dict = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    mine = namespace["mine"]._cache._impl._locator
    plain = namespace["plain"]._cache._impl._locator
    assert type(mine).__name__.startswith("Library")
    assert mine.get_source_stamp()[1] == jit.library_stamp()
    assert not type(plain).__name__.startswith("Library")


BLAS_CHECK = """
import sys
import numba
import numpy as np
import dpbandits.core.jit
from dpbandits.continual.tree_noise import laplace_unit
from numba.np import arraymath, linalg

laplace_unit(np.random.default_rng(0), 3)  # a library kernel: numba's target is set up
print("after kernel", "scipy.linalg" in sys.modules, "scipy.special" in sys.modules)
print("numba's check", arraymath.ensure_blas is linalg.ensure_blas, arraymath._HAVE_BLAS)

@numba.njit
def inner(a, b):
    return np.dot(a, b)

print("dot", inner(np.arange(3.0), np.ones(3)), "scipy.linalg" in sys.modules)
"""


def test_numba_blas_probe_is_deferred_not_lost() -> None:
    """Loading a kernel imports neither scipy.linalg (numba's start-up BLAS probe, 0.2 s) nor
    scipy.special; numba's own check is back in place, and a kernel that calls BLAS still
    compiles, importing scipy.linalg then (a fresh process: the probe runs once per process)."""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", BLAS_CHECK], capture_output=True, text=True, check=True, cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    ).stdout.splitlines()
    assert out == ["after kernel False False", "numba's check True True", "dot 3.0 True"]
