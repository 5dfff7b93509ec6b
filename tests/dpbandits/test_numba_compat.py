"""numba's internals in one version-gated module (dpbandits.core.numba_compat): a numba outside
the tested range is refused with the fix, the requirement in pyproject.toml states the same
range, and no other module of the library reaches into numba's or llvmlite's internals."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numba
import pytest

from dpbandits.core import numba_compat

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_the_installed_numba_is_in_the_tested_range() -> None:
    numba_compat.check_numba_version()
    numba_compat.check_numba_version(numba.__version__)


@pytest.mark.parametrize("version", ["0.63.1", "0.69.0", "0.70.0rc1", "1.0", "garbage"])
def test_an_untested_numba_is_refused_with_the_fix(version, monkeypatch) -> None:
    monkeypatch.delenv(numba_compat.UNTESTED_ENV, raising=False)
    (low_major, low_minor), (high_major, high_minor) = numba_compat.TESTED_NUMBA
    tested = f"numba>={low_major}.{low_minor},<{high_major}.{high_minor}"
    with pytest.raises(ImportError) as info:
        numba_compat.check_numba_version(version)
    message = str(info.value)
    assert f"numba {version} is installed" in message
    assert f"python -m pip install '{tested}'" in message
    assert numba_compat.UNTESTED_ENV in message


def test_the_escape_hatch_warns_instead(monkeypatch) -> None:
    monkeypatch.setenv(numba_compat.UNTESTED_ENV, "1")
    with pytest.warns(UserWarning, match="trying anyway"):
        numba_compat.check_numba_version("0.70.0")
    monkeypatch.setenv(numba_compat.UNTESTED_ENV, "0")  # "0" is off
    with pytest.raises(ImportError):
        numba_compat.check_numba_version("0.70.0")


def test_pyproject_pins_numba_to_the_tested_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (low_major, low_minor), (high_major, high_minor) = numba_compat.TESTED_NUMBA
    pins = [d.replace(" ", "") for d in project["dependencies"] if d.startswith("numba")]
    assert pins == [f"numba>={low_major}.{low_minor},<{high_major}.{high_minor}"]


# numba's and llvmlite's internals: everything but the public ``numba`` namespace and
# ``numba.extending`` (is_jitted, intrinsic are public API)
_INTERNAL = re.compile(r"^\s*(from|import)\s+(llvmlite|numba\.(?!extending\b)\w+)", re.MULTILINE)


def test_only_numba_compat_touches_numba_internals() -> None:
    offenders = []
    for package in ("dpbandits", "agents", "envs"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "numba_compat.py":
                continue
            for match in _INTERNAL.finditer(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(ROOT)}: {match.group(0).strip()}")
    assert offenders == []


def _two_processes_cache_files(tmp_path, cls):
    """Two cache-file objects on one folder, as two processes see it: the second read its index
    before the first saved, so its index is stale (empty) for its whole save. Returns the names
    each wrote data to and a fresh reader."""
    from numba.core import caching

    args = {"cache_path": str(tmp_path), "filename_base": "f-1.py3", "source_stamp": ("s", 1)}
    first, second = cls(**args), cls(**args)
    second._load_index = lambda: {}  # never sees the first's entry
    written: dict[str, list[str]] = {"first": [], "second": []}
    for who, obj in (("first", first), ("second", second)):
        save = obj._save_data

        def record(name, data, save=save, who=who):
            written[who].append(name)
            save(name, data)

        obj._save_data = record
    first.save(("sig", "float64"), "code for float64")
    second.save(("sig", "int64"), "code for int64")
    reader_cls = cls if cls is numba_compat._KeyNamedCacheFile else caching.IndexDataCacheFile
    return written, reader_cls(**args)


def test_two_processes_never_write_one_data_file_for_two_signatures(tmp_path) -> None:
    """numba names a data file by the first number free in the index it read, so two processes
    compiling two signatures of one kernel at once both write ``.1.nbc`` and a later process can
    load one signature's machine code for the other; the library's cache files are named by
    their key (``name_cache_files_by_key``), and every key loads its own code, the one whose
    index entry the other process's save dropped too (the warm-up's processes compile the
    overloads of one kernel side by side)."""
    written, reader = _two_processes_cache_files(tmp_path, numba_compat._KeyNamedCacheFile)
    assert set(written["first"]).isdisjoint(written["second"])
    assert list(reader._load_index()) == [("sig", "int64")]  # the first's entry was dropped
    assert reader.load(("sig", "float64")) == "code for float64"
    assert reader.load(("sig", "int64")) == "code for int64"
    assert reader.load(("sig", "int32")) is None


def test_a_data_file_of_other_code_or_another_layout_is_never_loaded(tmp_path) -> None:
    """A key missing from the index is looked up in its data file only if that holds the
    current source stamp: the file an older version of the code wrote is a miss, and so is a
    data file in numba's own layout (no stamp)."""
    from numba.core import caching

    args = {"cache_path": str(tmp_path), "filename_base": "f-1.py3"}
    old = numba_compat._KeyNamedCacheFile(**args, source_stamp=("s", 1))
    old.save(("sig", "float64"), "old code")
    new = numba_compat._KeyNamedCacheFile(**args, source_stamp=("s", 2))
    assert new.load(("sig", "float64")) is None  # (the index is stale too: numba's own check)
    new.save(("sig", "float64"), "new code")
    assert new.load(("sig", "float64")) == "new code"
    assert old.load(("sig", "float64")) is None
    # a data file written by numba's own class under the name the key gives
    name = new._key_data_name(("sig", "int64"))
    caching.IndexDataCacheFile(**args, source_stamp=("s", 2))._save_data(name, "unstamped")
    assert new.load(("sig", "int64")) is None


def test_an_index_with_a_key_of_a_module_gone_loads_by_key(tmp_path, monkeypatch) -> None:
    """A process that compiled a kernel for a type of its own (a plug-in selector's
    parameters, from the user's file or a test module) writes that type into the kernel's
    index; a process that cannot import that module could not read the index (numba raised
    ModuleNotFoundError and the run failed: the quickstart, after the tests had run). It now
    finds every data file by its key, and saves a fresh index."""
    import importlib

    module_dir = tmp_path / "mods"
    module_dir.mkdir()
    (module_dir / "ghost_params.py").write_text("class Params:\n    pass\n")
    monkeypatch.syspath_prepend(str(module_dir))
    ghost = importlib.import_module("ghost_params")
    args = {"cache_path": str(tmp_path), "filename_base": "f-1.py3", "source_stamp": ("s", 1)}
    writer = numba_compat._KeyNamedCacheFile(**args)
    writer.save(("sig", "float64"), "library code")
    writer.save(("sig", ghost.Params), "plug-in code")
    # the other process: no such module
    monkeypatch.delitem(sys.modules, "ghost_params")
    (module_dir / "ghost_params.py").unlink()
    importlib.invalidate_caches()
    reader = numba_compat._KeyNamedCacheFile(**args)
    with pytest.raises(ImportError):
        super(numba_compat._KeyNamedCacheFile, reader)._load_index()  # numba's own reading
    assert reader._load_index() == {}
    assert reader.load(("sig", "float64")) == "library code"
    assert reader.load(("sig", "int64")) is None
    reader.save(("sig", "int64"), "more library code")
    assert reader.load(("sig", "int64")) == "more library code"
    assert list(reader._load_index()) == [("sig", "int64")]


def test_a_long_kernel_name_still_fits_a_file_name(tmp_path) -> None:
    """A specialisation's name can use most of the 255 bytes numba's own ``.1.nbc.tmp.<16>``
    leaves; the key's hash must not push the temporary file past the limit."""
    base = "skeleton._play__" + "x" * 202 + "-177.py311"  # 228: numba's own .1.nbc.tmp fits
    assert len(base) + len(".1.nbc.tmp.") + 16 == 255
    cache_file = numba_compat._KeyNamedCacheFile(str(tmp_path), base, ("s", 1))
    cache_file.save(("sig", "float64"), "code")
    (name,) = [p.name for p in tmp_path.glob("*.nbc")]
    assert len(name) + len(".tmp.") + 16 <= 255
    assert cache_file.load(("sig", "float64")) == "code"
    other = numba_compat._KeyNamedCacheFile(str(tmp_path), base + "y", ("s", 1))
    other.save(("sig", "float64"), "other code")  # same cut base, another function
    assert cache_file.load(("sig", "float64")) == "code"


def test_numbas_own_naming_has_the_race_this_module_closes(tmp_path) -> None:
    """The check above fails with numba's own class: both write the same data file."""
    from numba.core import caching

    written, _ = _two_processes_cache_files(tmp_path, caching.IndexDataCacheFile)
    assert not set(written["first"]).isdisjoint(written["second"])


def test_library_kernels_use_key_named_cache_files() -> None:
    from dpbandits.core.jit import kernel

    def add_one(x):
        return x + 1

    compiled = kernel(add_one)
    assert compiled(1.5) == 2.5 and compiled(1) == 2  # two signatures, two data files
    cache_file = compiled._cache._cache_file
    assert type(cache_file) is numba_compat._KeyNamedCacheFile
    names = sorted(
        p.name for p in Path(cache_file._cache_path).glob(f"{cache_file._index_name[:-4]}.*.nbc")
    )
    assert len(names) == 2 and all(len(n.split(".")[-2]) == 16 for n in names)  # key hashes


#: the kernel _caller calls: set by the test (numba reads globals when it compiles _caller)
_twinned: object = None


def _twin_callee(x):  # type: ignore[no-untyped-def]
    return x + 1


def _twin_caller(x):  # type: ignore[no-untyped-def]
    return _twinned(x) * 2


def _has_python_wrapper(cres: object) -> bool:
    fndesc, library = cres.fndesc, cres.library  # type: ignore[attr-defined]
    return bool(library.get_pointer_to_function(fndesc.llvm_cpython_wrapper_name))


def test_kernels_call_the_twin_without_a_python_wrapper_and_python_calls_the_kernel() -> None:
    """called_through: a kernel calling another links its twin (no CPython wrapper: numba
    makes and compiles none); Python calls the kernel itself (with its wrapper); the twin
    takes a signature the kernel compiled first instead of compiling it again."""
    global _twinned
    from numba.core import types

    made: list[object] = []

    def make() -> object:
        made.append(numba.njit(no_cpython_wrapper=True)(_twin_callee))
        return made[-1]

    _twinned = numba_compat.called_through(numba.njit(_twin_callee), make)
    assert not made  # made at the first call from a kernel only
    assert numba.njit(_twin_caller)(3) == 8
    (twin,) = made
    assert list(twin.overloads) == [(types.int64,)]  # type: ignore[attr-defined]
    assert not _has_python_wrapper(twin.overloads[(types.int64,)])  # type: ignore[attr-defined]
    assert not _twinned.overloads  # type: ignore[attr-defined]
    assert _twinned.signatures == [(types.int64,)]  # type: ignore[attr-defined]
    assert _twinned(3) == 4  # type: ignore[operator]
    assert _has_python_wrapper(_twinned.overloads[(types.int64,)])  # type: ignore[attr-defined]
    # compiled by the kernel first (a Python call): the twin takes it
    assert _twinned(2.5) == 3.5  # type: ignore[operator]
    assert numba.njit(_twin_caller)(2.5) == 7.0
    f8 = (types.float64,)
    assert twin.overloads[f8] is _twinned.overloads[f8]  # type: ignore[attr-defined]
    assert _twinned.signatures == [(types.int64,), f8]  # type: ignore[attr-defined]
    # the twin's own compilation is only linked (no machine code); the one it took is the
    # kernel's, which Python runs
    link_only = numba_compat._LinkOnlyLibrary
    assert isinstance(twin.overloads[(types.int64,)].library, link_only)  # type: ignore[attr-defined]
    assert not isinstance(twin.overloads[f8].library, link_only)  # type: ignore[attr-defined]


_LINKED_KERNELS = {
    "kernels_a.py": """
from dpbandits.core.jit import kernel


@kernel
def triple(x):
    if x < 0.0:
        raise ValueError("negative", x)  # (an exception with a value: needs the environment)
    return 3.0 * x + 0.1


@kernel
def first_caller(x):
    return triple(x) + 1.0
""",
    "kernels_b.py": """
from dpbandits.core.jit import kernel
from kernels_a import triple


@kernel
def second_caller(x):
    return triple(x) * 2.0
""",
    "run.py": """
import json, sys
from dpbandits.core import numba_compat

compiled = []
numba_compat.add_compile_listener(lambda f: compiled.append(f.__qualname__), lambda f: None)
import kernels_a

out = {}
for name in sys.argv[1:]:
    caller = getattr(__import__("kernels_b") if name == "second" else kernels_a, name + "_caller")
    out[name] = caller(2.0)
    try:
        caller(-1.0)
    except ValueError as e:
        out[name + " raised"] = list(e.args)
twin = numba_compat._twin(kernels_a.triple)
out["twin"] = [type(cres.library).__name__ for cres in twin.overloads.values()]
out["compiled"] = sorted(compiled)
print(json.dumps(out))
""",
}


def test_a_link_only_twin_round_trips_the_disk_cache(tmp_path) -> None:
    """A twin is compiled only to be linked (_link_only: no machine code of its own), yet it is
    saved to the disk cache with its kernel's callers and a caller compiled in a later process
    links the twin loaded from there: process 1 compiles a kernel calling ``triple`` (and so
    ``triple``'s twin), process 2 a new kernel calling it (the twin loads, only the new kernel
    compiles), process 3 runs both and compiles nothing. The values, and an exception raised
    inside the twin with a value, are the same in each."""
    import json
    import os
    import subprocess

    for name, text in _LINKED_KERNELS.items():
        (tmp_path / name).write_text(text)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run(*callers: str) -> dict:
        done = subprocess.run([sys.executable, "run.py", *callers], cwd=tmp_path, env=env,
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return dict(json.loads(done.stdout.splitlines()[-1]))

    first, second = 3.0 * 2.0 + 0.1 + 1.0, (3.0 * 2.0 + 0.1) * 2.0
    raised = ["negative", -1.0]
    out = run("first")  # the twin compiled, link-only
    assert out == {"first": first, "first raised": raised, "twin": ["_LinkOnlyLibrary"],
                   "compiled": ["first_caller", "triple__callee"]}  # fmt: skip
    out = run("second")  # the twin loaded from the cache, linked into a new kernel
    assert (out["second"], out["second raised"], out["twin"], out["compiled"]) == (
        second, raised, ["JITCodeLibrary"], ["second_caller"])  # fmt: skip
    out = run("first", "second")  # warm: the callers load, nothing compiles
    assert out == {"first": first, "first raised": raised, "second": second,
                   "second raised": raised, "twin": [], "compiled": []}  # fmt: skip


_compiled_callee: object = None


def _callee(x, i):  # type: ignore[no-untyped-def]
    return x * 10 + i


def _caller(x):  # type: ignore[no-untyped-def]
    # i is Literal[int](0) until inference has seen i += 1; 7 is a literal at its call site
    i, s = 0, 0
    while i < 3:
        s += _compiled_callee(x, i)
        i += 1
    return s + _compiled_callee(x, 7)


def test_a_constant_argument_compiles_the_callee_for_its_type_not_its_value() -> None:
    """no_literal_calls: a kernel called with constants (and with a loop variable first set to
    a constant) is compiled once, for int64; without it numba compiles it for Literal[int](0)
    and Literal[int](7) too."""
    global _compiled_callee
    from numba.core import types

    _compiled_callee = numba_compat.no_literal_calls(numba.njit(_callee))
    caller = numba.njit(_caller)
    assert caller(2) == (20 + 21 + 22) + 27
    assert _compiled_callee.signatures == [(types.int64, types.int64)]
    # the same functions without it: the literal versions are compiled (what this prevents)
    _compiled_callee = numba.njit(_callee)
    numba.njit(_caller)(2)
    assert len(_compiled_callee.signatures) > 1


def _pick(params, q, out):  # type: ignore[no-untyped-def]
    if params < 0:
        raise ValueError("params must be >= 0")
    out[0] = q.shape[0] + params
    return q.shape[0] > 1


def _via_address(address, token, params, q, out):  # type: ignore[no-untyped-def]
    return numba_compat.call_bool_at(address, token, (params, q, out))


def test_a_kernel_called_by_address_is_the_kernel_and_a_wrong_token_raises() -> None:
    """call_bool_at: a kernel called by its address (compiled_address) returns what it returns
    and raises what it raises; an address with the token of other argument types (a wrong
    address) raises instead of calling."""
    import numpy as np

    t = numba.types
    pick = numba.njit(_pick)
    argtypes = (t.int64, t.Array(t.float64, 1, "C"), t.Array(t.int64, 1, "C"))
    address, token = numba_compat.compiled_address(pick, argtypes)
    assert numba_compat.compiled_address(pick, argtypes) == (address, token)
    via = numba.njit(_via_address)
    q, out = np.ones(3), np.zeros(1, dtype=np.int64)
    assert via(address, token, 4, q, out) is True and out[0] == 7
    assert via(address, token, 4, q[:1], out) is False and out[0] == 5
    with pytest.raises(ValueError, match="params must be >= 0"):
        via(address, token, -1, q, out)
    with pytest.raises(RuntimeError, match="other types"):
        via(address, token ^ 1, 4, q, out)
    other, other_token = numba_compat.compiled_address(pick, (t.int32, *argtypes[1:]))
    assert other_token != token
    with pytest.raises(RuntimeError, match="other types"):
        via(other, other_token, 4, q, out)  # (an int64 argument here)


def test_a_tuple_of_numbers_and_arrays_stored_at_an_address_reads_back_borrowed() -> None:
    """store_borrowed / load_borrowed (the private loop's selector parameters): the same values,
    arrays of any layout as views of the caller's (same memory, nothing copied or freed); a
    named tuple, a string or a list is not storable (those go by value)."""
    from collections import namedtuple

    import numpy as np

    from dpbandits.core.jit import kernel

    ints = np.arange(12).reshape(3, 4)[:, ::2]  # (not contiguous)
    floats = np.arange(5.0)
    floats.flags.writeable = False
    params = (0.5, 7, True, (floats, ints))
    typ = numba.typeof(params)
    assert numba_compat.borrowable(typ)
    for other in (namedtuple("P", "x")(1.0), ("a",), ([1.0],)):
        assert not numba_compat.borrowable(numba.typeof(other))
    stored = np.zeros(-(-numba_compat.native_size(typ) // 8), dtype=np.int64)

    @kernel
    def store(p, at):
        numba_compat.store_borrowed(at, p)

    store(params, stored.ctypes.data)
    load = numba.njit(lambda at: numba_compat.load_borrowed(at, typ))
    x, n, flag, (f, i) = load(stored.ctypes.data)
    assert (x, n, flag) == (0.5, 7, True)
    assert np.shares_memory(f, floats) and np.shares_memory(i, ints)
    np.testing.assert_array_equal(i, ints)
    np.testing.assert_array_equal(f, floats)
