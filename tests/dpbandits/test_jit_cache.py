"""The kernels' disk cache is keyed on every kernel module of the library (dpbandits.core.jit): a
kernel holds the code of the kernels it calls from other modules, which numba's own key (the
kernel's file) does not see."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.private_loop import play_loop
from agents.ucb import UCB
from dpbandits.core import jit
from dpbandits.selectors.gem import gem_rows


@pytest.mark.parametrize(
    "fn", [jit.beats, UCB.compiled_loop().play, play_loop, gem_rows]
)
def test_library_kernels_are_cached_under_the_library_stamp(fn) -> None:
    locator = fn._cache._impl._locator
    assert type(locator).__name__.startswith("Library")
    assert locator.get_source_stamp()[1][0] == jit.library_stamp()  # (stamp, module)


def test_the_library_stamp_covers_the_installed_kernel_modules() -> None:
    """The stamp reads the real package tree (it read none when jit.py moved one level down,
    and no change to a kernel invalidated the cache), numba_compat's intrinsics included."""
    modules = {p.relative_to(jit._ROOT).as_posix() for p in jit._kernel_modules()}
    assert {"agents/private_loop.py", "dpbandits/core/jit.py", "dpbandits/core/numba_compat.py",
            "dpbandits/selectors/noisy_max.py"} <= modules  # fmt: skip
    assert jit.library_stamp() != hashlib.sha256().hexdigest()


PLUGIN = """
from dpbandits.core.jit import kernel, kernel_template, specialise


def _step(x):
    raise NotImplementedError


@kernel_template
def loop(x, n):
    for _ in range(n):
        x = _step(x)
    return x


@kernel
def double(x):
    return 2.0 * x


@kernel
def add_one(x):
    return x + 1.0
"""


def _module(path: Path, name: str, text: str):  # type: ignore[no-untyped-def]
    path.write_text(text)
    namespace: dict = {"__name__": name}
    exec(compile(text, str(path), "exec"), namespace)
    return namespace


def test_a_specialisation_per_binding_named_and_keyed_on_the_bound_code(tmp_path) -> None:
    """specialise compiles a template once per binding, under a name of its own, and keys its
    cache on the library stamp and the text of a bound function's file outside the library."""
    ns = _module(tmp_path / "user_loop.py", "user_loop", PLUGIN)
    loop, double, add_one = ns["loop"], ns["double"], ns["add_one"]
    a, b = jit.specialise(loop, _step=double), jit.specialise(loop, _step=add_one)
    assert jit.specialise(loop, _step=double) is a  # made once per process
    assert (a(1.0, 3), b(1.0, 3)) == (8.0, 4.0)
    names = a.py_func.__qualname__, b.py_func.__qualname__
    assert names[0] != names[1] and "user_loop_double" in names[0], names
    stamp = a._cache._impl._locator.get_source_stamp()[1][0]  # (stamp, module name)
    digest = hashlib.sha256((tmp_path / "user_loop.py").read_bytes()).hexdigest()
    assert stamp == (jit.library_stamp(), digest)
    # a binding from the library is keyed on the library stamp alone
    library = jit.specialise(loop, _step=jit.beats)
    assert library._cache._impl._locator.get_source_stamp()[1][0] == jit.library_stamp()


def test_a_binding_without_a_file_gives_an_uncached_specialisation(tmp_path) -> None:
    ns = _module(tmp_path / "user_loop2.py", "user_loop2", PLUGIN)
    typed: dict = {}
    exec(compile("import numba\n@numba.njit\ndef half(x):\n    return x / 2.0\n", "<stdin>",
                 "exec"), typed)  # fmt: skip
    spec = jit.specialise(ns["loop"], _step=typed["half"])
    assert spec(8.0, 2) == 2.0
    assert not hasattr(spec._cache, "_impl")  # numba's NullCache: nothing written


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
    assert mine.get_source_stamp()[1][0] == jit.library_stamp()
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
        [sys.executable, "-c", BLAS_CHECK],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    ).stdout.splitlines()
    assert out == ["after kernel False False", "numba's check True True", "dot 3.0 True"]


@pytest.mark.slow  # runs the example script in a fresh interpreter
def test_one_file_under_two_module_names_does_not_share_cached_code(tmp_path):
    """A plug-in imported under one name (``--plugin``, a test) and then run as a script
    (``__main__``): the second process must not load the first one's cached kernels, whose
    code refers to a module it does not have (seen: ``No module named
    'custom_selector_example'`` from the example script after the kit's test).

    The cache starts as a copy of this session's kernel cache without any entry of the
    plug-in's file (the library's kernels warm, as in a user's cache: the test pays for the
    plug-in, not for compiling the library twice); the first process runs only the kit's
    checks of the compiled kernel, the ones that compile and cache the plug-in's kernel."""
    import shutil
    from pathlib import Path

    from dpbandits.core.kernel_cache import kernel_cache_dir
    from dpbandits.testing.kit import GROUPS

    example = Path(__file__).resolve().parents[2] / "examples" / "custom_selector.py"
    cache = tmp_path / "cache"
    if kernel_cache_dir().is_dir():
        # without the plug-in's kernels and any library specialisation bound to them (named
        # after the plug-in's file): a cached one would spare the first process the plug-in's
        # compile, and the test would check nothing
        shutil.copytree(kernel_cache_dir(), cache, ignore=lambda folder, names: [
            n for n in names if example.stem in n])  # fmt: skip
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "MPLBACKEND": "Agg"}
    skip = [g for g in GROUPS if g != "compiled"]
    first = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('custom_selector_example',\n"
        f"    {str(example)!r})\n"
        "m = importlib.util.module_from_spec(spec); sys.modules[spec.name] = m\n"
        "spec.loader.exec_module(m)\n"
        "from dpbandits.testing import check_selector\n"
        f"check_selector(m.SoftmaxEM(epsilon=1.0), skip={skip!r})\n"
    )
    subprocess.run([sys.executable, "-c", first], check=True, env=env, cwd=tmp_path,
                   capture_output=True)  # fmt: skip
    assert any(p.name.startswith(example.stem) for p in cache.rglob("*.nbi")), (
        "the first process cached no kernel of the plug-in: the test checks nothing")
    out = subprocess.run([sys.executable, str(example)], env=env, cwd=tmp_path,
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip()  # the example's own test (tests/test_docs.py) is this run
