"""Every use of numba's (and llvmlite's) internals, in one module, for the numba versions tested.

The library's kernels (:mod:`dpbandits.core.jit`, docs/performance.md) lean on parts of numba
that are not its public API: the samplers read numpy's bit generator through numba's
``generator_core`` helpers and numba's copy of numpy's ziggurat tables; a Generator is rebuilt
inside a kernel from its address with numba's code-generation helpers and llvmlite, and so is a
tuple of numbers and arrays stored at an address in numba's data layout; the disk cache's key
is widened by subclassing numba's cache locators, and its files by subclassing numba's cache
file; a kernel's callee twin compiles into a code library of numba's that callers link and
that is never turned into machine code; numba's start-up BLAS probe is deferred. Any numba
release may rename or change these, and the failure would then be an obscure error at
``import agents`` or, worse, wrong numbers.
So they all live here, behind one check: importing this module with a numba outside
:data:`TESTED_NUMBA` raises an ``ImportError`` that says which versions work and how to
install one (the ``numba`` requirement in ``pyproject.toml`` has the same bounds). Setting the
environment variable ``DPBANDITS_UNTESTED_NUMBA=1`` skips the check with a warning, to try a
newer numba (what a CI job that tests the newest numba does).

Everything else the library does with numba is public API (``numba.njit``,
``numba.extending.intrinsic``, ``numba.extending.is_jitted``, numba's ``Generator`` methods).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, cast

import numba

# numba's own objects this module hands to the kernels (next_double, next_uint32,
# next_uint64, random_standard_exponential, random_standard_gamma, random_standard_normal,
# ziggurat) are importable from here but not part of the library's API: they are numba's.
__all__ = [
    "TESTED_NUMBA",
    "GENERATOR_TYPE",
    "add_compile_listener",
    "as_writable",
    "borrowable",
    "borrowed",
    "called_through",
    "call_bool_at",
    "call_none_at",
    "check_numba_version",
    "compiled_address",
    "defer_blas_probe",
    "float_bits",
    "generator_at",
    "host_cpu",
    "no_literal_calls",
    "install_cache_locators",
    "load_borrowed",
    "name_cache_files_by_key",
    "native_size",
    "on_compile",
    "store_borrowed",
]

#: The numba versions this module was tested with: ``(lowest, first untested)``, as
#: ``(major, minor)``; the ``numba`` requirement in ``pyproject.toml`` states the same range.
TESTED_NUMBA: tuple[tuple[int, int], tuple[int, int]] = ((0, 64), (0, 69))
#: Set (to anything but ``""`` or ``"0"``) to import with an untested numba, with a warning.
UNTESTED_ENV = "DPBANDITS_UNTESTED_NUMBA"


def _major_minor(version: str) -> tuple[int, int]:
    parts = version.split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return (0, 0)  # unparsable: outside every range


def check_numba_version(version: str | None = None) -> None:
    """Raise ``ImportError`` when numba's ``version`` (default: the installed one) is outside
    :data:`TESTED_NUMBA`, unless ``DPBANDITS_UNTESTED_NUMBA`` is set (then warn)."""
    version = numba.__version__ if version is None else version
    low, high = TESTED_NUMBA
    if low <= _major_minor(version) < high:
        return
    tested = f"numba>={low[0]}.{low[1]},<{high[0]}.{high[1]}"
    message = (
        f"dpbandits was tested with {tested}, but numba {version} is installed. Its compiled "
        "kernels use numba internals that a numba release may change "
        "(dpbandits.core.numba_compat). Install a tested numba: "
        f"python -m pip install '{tested}'"
    )
    if os.environ.get(UNTESTED_ENV, "") not in ("", "0"):
        warnings.warn(f"{message} ({UNTESTED_ENV} is set: trying anyway)", stacklevel=2)
        return
    raise ImportError(f"{message}; or set {UNTESTED_ENV}=1 to try this numba anyway")


check_numba_version()

# -- past the check: numba's internals --------------------------------------------------------
from llvmlite import binding, ir  # noqa: E402
from numba.core import caching, cgutils, event, types  # noqa: E402
from numba.core.codegen import JITCodeLibrary  # noqa: E402
from numba.core.compiler import Compiler  # noqa: E402
from numba.core.imputils import impl_ret_borrowed  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

# numba's objects the kernels import from here (re-exported, not this module's API)
from numba.np.random import _constants as ziggurat  # noqa: E402, F401
from numba.np.random.distributions import (  # noqa: E402, F401
    random_standard_exponential,
    random_standard_gamma,
    random_standard_normal,
)
from numba.np.random.generator_core import next_double, next_uint32, next_uint64  # noqa: E402, F401


# -- the disk cache ---------------------------------------------------------------------------
def _stamped_locator(base: Any, stamp: Callable[[Any], Any]) -> Any:
    """numba's cache locator ``base``, serving only the functions for which ``stamp(py_func)``
    is not None, with that value added to numba's source stamp (numba's own locators serve
    every other compiled function)."""

    class Locator(base):
        _extra_stamp: Any = None

        def get_source_stamp(self) -> Any:
            return (super().get_source_stamp(), self._extra_stamp)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            extra = stamp(py_func)
            if extra is None:
                return None
            self = super().from_function(py_func, py_file)
            if self is not None:
                # the module name too: one file imported under two names (a script run as
                # __main__ and imported by a test) must not load the other's entries, whose
                # code refers to a module this process may not have
                self._extra_stamp = (extra, getattr(py_func, "__module__", None))
            return self

    Locator.__name__ = Locator.__qualname__ = f"Library{base.__name__.lstrip('_')}"
    return Locator


def _directory_locator(base: Any, directory: Callable[[], str]) -> Any:
    """numba's user-wide cache locator ``base`` writing to ``directory()`` instead of numba's
    own user directory (``get_suitable_cache_subpath`` keeps numba's per-source-folder layout
    inside it)."""

    class Locator(base):
        def __init__(self, py_func: Any, py_file: str) -> None:
            super().__init__(py_func, py_file)
            self._cache_path = os.path.join(directory(), self.get_suitable_cache_subpath(py_file))

    Locator.__name__ = Locator.__qualname__ = "DirectoryCacheLocator"
    return Locator


def _no_locator(stamp: Callable[[Any], Any]) -> Any:
    """The last locator of a stamped function: none of the others could write its directory, so
    it is not cached (numba then raises ``RuntimeError`` at decoration, which
    ``dpbandits.core.jit`` answers by compiling without a cache) rather than cached next to its
    source file, inside the installed package."""

    class Locator:
        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if stamp(py_func) is not None:
                raise RuntimeError(f"no writable kernel cache directory for {py_func!r}")
            return None

    Locator.__name__ = Locator.__qualname__ = "LibraryNoCacheLocator"
    return Locator


def install_cache_locators(stamp: Callable[[Any], Any], directory: Callable[[], str]) -> None:
    """Key the disk cache of some compiled functions on more than their own source file, and
    keep it out of the source tree: a function ``py_func`` with ``stamp(py_func) is not None``
    is cached in ``NUMBA_CACHE_DIR`` when it is set, else in ``directory()`` (never next to its
    module: for an installed package that is site-packages, where pip does not know the files),
    under numba's source stamp and ``stamp(py_func)``, computed when it is decorated. Other
    compiled functions keep numba's own locators. Installed once per process."""
    # numba >= 0.61 names its locators without the underscore; both are looked up
    names = ("UserProvidedCacheLocator", "UserWideCacheLocator")
    provided, user_wide = (getattr(caching, n, None) or getattr(caching, "_" + n) for n in names)
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")  # noqa: B009
    if not any(getattr(c, "__name__", "").startswith("Library") for c in impl._locator_classes):
        impl._locator_classes = [
            _stamped_locator(provided, stamp),
            _stamped_locator(_directory_locator(user_wide, directory), stamp),
            _no_locator(stamp),
            *impl._locator_classes,
        ]


class _KeyNamedCacheFile(caching.IndexDataCacheFile):
    """numba's index-and-data cache file with each data file named by a hash of its entry's key
    instead of by the first number the index has free, and holding the source stamp it was
    compiled for.

    numba picks that number from the index it has just read, so two processes compiling two
    signatures of one function at the same time (the forked warm-up of
    ``dpbandits.experiments.warmup``, two test workers) both pick ``.1.nbc``; the last data
    written then sits under the other's index entry, and a later process loads machine code
    compiled for other argument types. Named by its key, a data file is only ever written with
    that key's code. Two such processes can still each save the index they read with their own
    entry added, the last save dropping the other's entry: so the data file is written before
    the index entry that points to it, the entry is re-read after the index is saved (to retry
    once), and a key missing from the index is looked up in the data file its name gives, which
    is used only if it holds the current source stamp (a lost index entry costs nothing, a data
    file left by older code is never loaded)."""

    #: The longest function part of a data file name: numba writes it as
    #: ``NAME.tmp.<16 hex>`` first, and a file name has at most 255 bytes.
    BASE_MAX = 255 - len(".nbc.tmp.") - 2 * 16 - 1
    #: The first item of a data file's tuple (then the source stamp, then numba's data): a file
    #: in another layout (numba's own, an older version's) is a miss.
    MARK = "dpbandits-stamped-1"

    def _key_data_name(self, key: Any) -> str:
        base = self._data_name_pattern[: -len(".{number:d}.nbc")]
        # the whole base in the hash: a long base is cut, the name stays unique
        digest = hashlib.sha256((base + repr(key)).encode()).hexdigest()[:16]
        return f"{base[: self.BASE_MAX]}.{digest}.nbc"

    def _load_index(self) -> dict[Any, str]:
        # numba raises when the index holds a key it cannot unpickle: a signature of a type
        # whose module this process cannot import (a plug-in selector's parameters, defined in
        # the user's file or a test module, compiled into the shared private loop by another
        # process). Every data file is also found by its key's name, so such an index is
        # read as empty (and rewritten at the next save) rather than failing the run.
        try:
            return cast(dict[Any, str], super()._load_index())
        except Exception:  # noqa: BLE001 (ImportError, AttributeError, a damaged pickle)
            return {}

    def save(self, key: Any, data: Any) -> None:
        data_name = self._key_data_name(key)
        self._save_data(data_name, (self.MARK, self._source_stamp, data))
        for _ in range(2):
            overloads = self._load_index()
            if overloads.get(key) == data_name:
                return
            overloads[key] = data_name
            self._save_index(overloads)

    def load(self, key: Any) -> Any:
        data_name = self._load_index().get(key) or self._key_data_name(key)
        try:
            stamped = self._load_data(data_name)
        except OSError:  # no such file (or removed since the index was read)
            return None
        except Exception:  # noqa: BLE001 (unreadable: a file of another version) -- a miss
            return None
        if not (isinstance(stamped, tuple) and len(stamped) == 3 and stamped[0] == self.MARK
                and stamped[1] == self._source_stamp):  # fmt: skip
            return None
        return stamped[2]


def name_cache_files_by_key(dispatcher: Any) -> None:
    """Make ``dispatcher``'s disk cache (if it has numba's) name its data files by key
    (:class:`_KeyNamedCacheFile`): no two processes ever write one data file for two keys."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if type(cache_file) is caching.IndexDataCacheFile:
        cache_file.__class__ = _KeyNamedCacheFile


@contextlib.contextmanager
def on_compile(callback: Callable[[Any], None]) -> Iterator[None]:
    """While the block runs, call ``callback(py_func)`` when numba starts compiling a function
    (in any thread; not when it loads one from its disk cache), through numba's event API."""

    class Listener(event.Listener):
        def on_start(self, e: Any) -> None:
            dispatcher = e.data.get("dispatcher")
            callback(getattr(dispatcher, "py_func", dispatcher))

        def on_end(self, e: Any) -> None:
            pass

    with event.install_listener("numba:compile", Listener()):
        yield


def add_compile_listener(on_start: Callable[[Any], None], on_end: Callable[[Any], None]) -> None:
    """For the rest of the process, call ``on_start(py_func)`` when numba starts compiling a
    function and ``on_end(py_func)`` when it is done (not when it loads one from its disk
    cache), through numba's event API."""

    class Listener(event.Listener):
        def on_start(self, e: Any) -> None:
            dispatcher = e.data.get("dispatcher")
            on_start(getattr(dispatcher, "py_func", dispatcher))

        def on_end(self, e: Any) -> None:
            dispatcher = e.data.get("dispatcher")
            on_end(getattr(dispatcher, "py_func", dispatcher))

    event.register("numba:compile", Listener())


# -- calls between kernels: compiled without the wrappers only Python calls need ------------
_TWIN, _MAKE_TWIN = "_dpbandits_callee", "_dpbandits_make_callee"
_TWIN_CLASSES: dict[type, type] = {}


def _twin(dispatcher: Any) -> Any:
    """``dispatcher``'s callee twin (:func:`called_through`), made at the first use."""
    twin = dispatcher.__dict__.get(_TWIN)
    if twin is None:
        make = dispatcher.__dict__.get(_MAKE_TWIN)
        if make is None:  # (a dispatcher rebuilt from a pickle: no twin)
            return None
        twin = dispatcher.__dict__[_TWIN] = _reuse_compiled(dispatcher, _link_only(make()))
    return twin


def _twin_class(base: type) -> type:
    """``base`` (a dispatcher class) whose instances, as a value inside a kernel, are typed as
    their callee twin (:func:`called_through`), and list their twin's signatures too."""
    known = _TWIN_CLASSES.get(base)
    if known is None:

        class Twinned(base):
            @property
            def _numba_type_(self) -> Any:
                twin = _twin(self)
                return types.Dispatcher(self if twin is None else twin)

            @property
            def signatures(self) -> list[Any]:
                own = list(self.overloads)
                twin = self.__dict__.get(_TWIN)
                return own + [s for s in (twin.overloads if twin else ()) if s not in own]

        Twinned.__name__ = Twinned.__qualname__ = f"Twinned{base.__name__}"
        known = _TWIN_CLASSES[base] = Twinned
    return known


def _reuse_compiled(dispatcher: Any, twin: Any) -> Any:
    """``twin``, made to take a signature ``dispatcher`` has compiled (or loaded) in this
    process instead of compiling it again."""
    from numba.core import sigutils

    base_compile = twin.compile

    def compile(sig: Any) -> Any:
        args = tuple(sigutils.normalize_signature(sig)[0])
        done = dispatcher.overloads.get(args)
        if done is not None and args not in twin.overloads:
            twin.add_overload(done)
            return done.entry_point
        return base_compile(sig)

    twin.compile = compile
    return twin


class _LinkOnlyLibrary(JITCodeLibrary):
    """A callee twin's compiled code (:func:`_link_only`): optimised for its callers to link,
    by numba's first module pipeline only (each caller runs the full one on the whole it
    links); what goes to the JIT, and to the disk cache as machine code, is only its
    environment pointers (numba's common globals, which each compiled function reads through a
    global of its own name and ``set_env`` fills in): a few bytes of machine code."""

    def _optimize_final_module(self) -> None:
        mpm, mpb = self._codegen._module_pass_manager(
            loop_vectorize=self._codegen._loopvect, slp_vectorize=False,
            opt=self._codegen._opt_level, cost="cheap")  # fmt: skip
        mpm.run(self._final_module, mpb)

    def _finalize_final_module(self) -> None:
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        linked = self._final_module
        stub = self._codegen._create_empty_module(self.name)
        for gv in linked.global_variables:
            if gv.linkage == binding.Linkage.common:
                env = ir.GlobalVariable(stub, cgutils.voidptr_t, name=gv.name)
                env.linkage, env.initializer = "common", cgutils.get_null_value(cgutils.voidptr_t)
        self._final_module = binding.parse_assembly(str(stub))
        super()._finalize_final_module()  # the stub, to the JIT (and its hooks)
        self._final_module = linked  # what callers link, and what inspection shows


class _LinkOnlyCompiler(Compiler):
    def compile_extra(self, func: Any) -> Any:
        if self.state.library is None:
            library = _LinkOnlyLibrary(self.state.targetctx.codegen(), func.__qualname__)
            library.enable_object_caching()
            self.state.library = library
        return super().compile_extra(func)


def _link_only(twin: Any) -> Any:
    """``twin`` (:func:`called_through`), compiling code that its callers link and nothing runs.

    numba links a callee's optimised code into every caller and optimises the caller's whole
    module again; the callee's own machine code is only run when Python calls it, which no one
    does for a twin (its entry from Python is null: no wrapper). numba still generated it, and
    ran its full module optimisation, whose work each caller redoes: ~3.5 of the ~20 CPU-s of
    compiling of a cold ``dpbandits shift`` (docs/performance.md, "Cold start: callee twins
    are link-only"). The twin's compilations (not the signatures it takes from its kernel,
    :func:`_reuse_compiled`) go to a library that skips both (:class:`_LinkOnlyLibrary`); its
    disk cache entry holds the code callers link, as before."""
    compiler_ = getattr(twin, "_compiler", None)
    if getattr(compiler_, "pipeline_class", None) is Compiler:
        cast(Any, compiler_).pipeline_class = _LinkOnlyCompiler
    return twin


def called_through(dispatcher: Any, make_twin: Callable[[], Any]) -> Any:
    """Make every kernel that calls ``dispatcher`` call ``make_twin()`` instead (made at the
    first such call): the same Python function (a copy under another name, so that it has its
    own disk cache) compiled with ``no_cpython_wrapper=True``. Returns ``dispatcher``, which
    Python code still calls, as before.

    numba compiles, beside every function, the wrapper through which Python calls it (unboxing
    each argument, boxing the result) and generates machine code for it; a kernel that only
    other kernels call never uses it (numba compiles its own ``@overload`` implementations
    without it). The twin takes a signature that ``dispatcher`` has already compiled in this
    process: a kernel called from Python and from kernels is not compiled twice for it."""
    dispatcher.__class__ = _twin_class(type(dispatcher))
    dispatcher.__dict__[_MAKE_TWIN] = make_twin
    return dispatcher


# -- calls between kernels: one compiled version per argument type, never per value ----------
def no_literal_calls(dispatcher: Any) -> Any:
    """Make the compiled function ``dispatcher`` compile for the plain type of a constant
    argument (``int64``), never for its value, when another compiled function calls it.

    numba types a constant at a call site as its value (``Literal[int](0)``), and a variable
    first set to a constant is that literal until type inference has seen its other values: a
    call in a loop such as ``i = 0 ... f(x, i) ... i += 1`` compiles ``f`` for
    ``Literal[int](0)`` and then again for ``int64``, once more for every other constant. No
    kernel of the library specialises on a value, so the first compile was wasted: ~3 of the
    49 CPU-s of compiling of a cold ``dpbandits shift`` (docs/performance.md, "Cold start:
    fewer compilations"). Here
    the dispatcher is asked for the call's types without their values; a literal argument
    then converts to the compiled ``int64`` as any ``int64`` does. Returns ``dispatcher``."""
    from numba.core import types

    base = dispatcher.get_call_template

    def get_call_template(args: Any, kws: Any) -> Any:
        return base(tuple(types.unliteral(a) for a in args),
                    {k: types.unliteral(v) for k, v in kws.items()})  # fmt: skip

    dispatcher.get_call_template = get_call_template
    return dispatcher


# -- the CPU numba compiles for --------------------------------------------------------------
def host_cpu() -> tuple[str, str]:
    """The host CPU's name and feature string as LLVM sees them (what numba compiles for; the
    kernel cache is keyed on both)."""
    from llvmlite import binding

    return binding.get_host_cpu_name(), binding.get_host_cpu_features().flatten()


# -- numba's start-up BLAS probe --------------------------------------------------------------
def defer_blas_probe() -> None:
    """Load numba's array math without its start-up BLAS probe, which imports scipy.linalg.

    When ``numba.np.arraymath`` first loads (at the first compilation or cache load of a
    process), it asks whether a BLAS is there for ``np.dot``-style functions by importing
    ``scipy.linalg.cython_blas`` (``_check_blas``): 0.2 s, a fifth of a run's start-up
    (docs/performance.md), for functions no kernel of the library calls. This loads the module
    with the probe answered by whether scipy is installed, and gives it numba's own check back:
    a kernel that does call BLAS imports scipy.linalg and runs numba's checks when it is
    compiled, as before. Skipped when something loaded the module already.
    """
    if "numba.np.arraymath" in sys.modules:
        return
    from numba.np import linalg

    probe = linalg.ensure_blas

    def not_yet() -> None:
        raise ImportError("BLAS probe deferred by dpbandits.core.numba_compat")

    linalg.ensure_blas = not_yet
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = probe
    arraymath.ensure_blas = probe
    arraymath._HAVE_BLAS = importlib.util.find_spec("scipy") is not None


# -- inside a kernel: a Generator by address, the bits of a float ------------------------------
@intrinsic
def _generator_at(typingctx: Any, address: Any) -> Any:
    """Inside a kernel: the numba ``Generator`` drawing from the bit generator at ``address``
    (``dpbandits.core.jit.generator_address``). Its fields are read from numpy's ``bitgen_t``
    (``state``, ``next_uint64``, ``next_uint32``, ``next_double``, in that order: numpy's
    documented C interface of its bit generators), exactly what numba's own unboxing of a
    Generator reads through ctypes; no reference to the Python object is kept."""
    if not isinstance(address, types.Integer):
        return None
    sig = types.NumPyRandomGeneratorType("rng")(address)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        uintp = context.get_value_type(types.uintp)
        words = builder.inttoptr(args[0], uintp.as_pointer())

        def word(i: int) -> Any:
            return builder.load(builder.gep(words, [ir.Constant(ir.IntType(32), i)]))

        bit_gen_type = types.NumPyRandomBitGeneratorType("bit_generator")
        bit_gen = cgutils.create_struct_proxy(bit_gen_type)(context, builder)
        bit_gen.state_address = word(0)
        bit_gen.state = word(0)
        bit_gen.fnptr_next_uint64 = word(1)
        bit_gen.fnptr_next_uint32 = word(2)
        bit_gen.fnptr_next_double = word(3)
        bit_gen.bit_generator = builder.ptrtoint(words, uintp)
        gen = cgutils.create_struct_proxy(signature.return_type)(context, builder)
        gen.bit_generator = bit_gen._getvalue()  # meminfo and parent stay null: not owned
        return gen._getvalue()

    return sig, codegen


@intrinsic
def _float_bits(typingctx: Any, x: Any) -> Any:
    """Inside a kernel: the IEEE 754 bits of the float64 ``x`` as an int64 (a bit cast, no
    instruction; ``math.frexp`` is a library call of ~8 ns). Sign at bit 63, biased exponent
    at bits 52-62, mantissa below."""
    if not (isinstance(x, types.Float) and x.bitwidth == 64):
        return None
    sig = types.int64(x)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


def _strip_owners(context: Any, builder: Any, typ: Any, value: Any) -> Any:
    """``value`` with the owner of each of its arrays (numba's meminfo, the Python array) set to
    null: numba then neither counts references to it nor frees it, as for a constant array."""
    if isinstance(typ, types.Array):
        array = context.make_array(typ)(context, builder, value=value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        array.parent = cgutils.get_null_value(array.parent.type)
        return array._getvalue()
    if isinstance(typ, types.BaseTuple):
        for i, item in enumerate(cast(Any, typ).types):
            part = _strip_owners(context, builder, item, builder.extract_value(value, i))
            value = builder.insert_value(value, part, i)
    return value


@intrinsic
def _borrowed(typingctx: Any, value: Any) -> Any:
    """Inside a kernel: ``value`` (an array, or a tuple of arrays and scalars) with each array's
    reference left out: the same data, shape and strides, a null ``meminfo`` and ``parent``
    (numba's array structure, :func:`_strip_owners`), as the bit generator of
    :func:`_generator_at`. numba counts no references to such an array (an increment or
    decrement of a null reference compiles to nothing), where it passes the array on to inlined
    kernels too. Valid while the caller holds ``value``."""
    if not isinstance(value, (types.Array, types.BaseTuple)):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return _strip_owners(context, builder, value, args[0])

    return value(value), codegen


@intrinsic
def _as_writable(typingctx: Any, arr: Any) -> Any:
    """Inside a kernel: the array ``arr`` typed as writable (the same array: a read-only and a
    writable array have one data model, only numba's type differs). For a caller that hands
    a read-only array to a function compiled for writable ones and never writes into it: one
    compiled version of the callee for both (``dpbandits.selectors.compiled``)."""
    if not isinstance(arr, types.Array):
        return None
    sig = arr.copy(readonly=False)(arr)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])

    return sig, codegen


#: ``generator_at(address)`` inside a kernel (see :func:`_generator_at`).
generator_at = cast(Callable[[int], Any], _generator_at)

#: ``float_bits(x)`` inside a kernel (see :func:`_float_bits`).
float_bits = cast(Callable[[float], int], _float_bits)

#: ``borrowed(value)`` inside a kernel (see :func:`_borrowed`).
borrowed = cast(Callable[[Any], Any], _borrowed)

#: ``as_writable(arr)`` inside a kernel (see :func:`_as_writable`).
as_writable = cast(Callable[[Any], Any], _as_writable)


# -- a call by address: a kernel calls another without linking (and optimising again) its code
#: The type of ``generator_at(address)`` inside a kernel (an argument type of a kernel called by
#: address, :func:`compiled_address`).
GENERATOR_TYPE = types.NumPyRandomGeneratorType("rng")

_ADDRESSES: dict[Any, tuple[int, int]] = {}


def _signature_token(argtypes: tuple[Any, ...], restype: Any) -> int:
    """A 63-bit digest of a signature, the same in every process (a literal return type as its
    plain type: the same data model)."""
    text = f"{types.unliteral(restype)}({', '.join(map(str, argtypes))})"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def compiled_address(dispatcher: Any, argtypes: tuple[Any, ...]) -> tuple[int, int]:
    """The address of ``dispatcher`` compiled (or loaded from the disk cache) for the numba
    types ``argtypes``, in numba's own calling convention, and its signature's token: the
    arguments of :func:`call_bool_at` / :func:`call_none_at` (once per process and types).

    A kernel that calls another directly links the callee's code into its own, and LLVM
    optimises the whole again when it compiles the caller (1-2.5 CPU-s for a private agent's
    loop and its selection, docs/performance.md "Cold start"); a call by address does not."""
    key = (dispatcher, tuple(argtypes))
    known = _ADDRESSES.get(key)
    if known is None:
        dispatcher.compile(tuple(argtypes))
        cres = dispatcher.overloads[tuple(argtypes)]
        address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
        if not address:  # pragma: no cover - numba always defines it
            raise RuntimeError(f"no compiled {cres.fndesc.llvm_func_name}")
        known = _ADDRESSES[key] = (
            address,
            _signature_token(tuple(argtypes), cres.signature.return_type),
        )
    return known


def _call_at(restype: Any) -> Any:
    @intrinsic
    def call_at(typingctx: Any, address: Any, token: Any, args: Any) -> Any:
        """Inside a kernel: call the function at ``address`` (:func:`compiled_address`) with
        the tuple ``args``; raise if ``token`` is not its signature's (the types of ``args``
        and the return type), which a wrong address would be."""
        if not (isinstance(address, types.Integer) and isinstance(token, types.Integer)
                and isinstance(args, types.BaseTuple)):  # fmt: skip
            return None
        argtypes = tuple(cast(Any, args).types)
        expected = _signature_token(argtypes, restype)

        def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
            addr, tok, tup = llargs
            wrong = builder.icmp_unsigned("!=", tok, ir.Constant(tok.type, expected))
            with builder.if_then(wrong, likely=False):
                context.call_conv.return_user_exc(
                    builder, RuntimeError, ("a kernel called by address with other types",)
                )
            fnty = context.call_conv.get_function_type(restype, argtypes)
            fn = builder.inttoptr(addr, fnty.as_pointer())
            values = [builder.extract_value(tup, i) for i in range(len(argtypes))]
            status, out = context.call_conv.call_function(builder, fn, restype, argtypes,
                                                          values)  # fmt: skip
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            return context.get_dummy_value() if restype == types.none else out

        return restype(address, token, args), codegen

    return call_at


#: ``call_bool_at(address, token, args)`` inside a kernel: a kernel returning a bool, called by
#: address (:func:`compiled_address`).
call_bool_at = cast(Callable[..., bool], _call_at(types.boolean))
#: ``call_none_at(address, token, args)``: the same for a kernel that returns nothing.
call_none_at = cast(Callable[..., None], _call_at(types.none))


# -- a value by address: a kernel reads a tuple of numbers and arrays that another one stored ---
def borrowable(typ: Any) -> bool:
    """Whether a value of the numba type ``typ`` can be stored at an address and read back by
    :func:`store_borrowed` / :func:`load_borrowed`: a number, a boolean, an array of numbers or
    booleans, or a plain tuple of these (nested or not)."""
    if isinstance(typ, (types.Number, types.Boolean)):
        return True
    if isinstance(typ, types.Array):
        return isinstance(typ.dtype, (types.Number, types.Boolean))
    if isinstance(typ, (types.Tuple, types.UniTuple)):  # (not a named tuple: its class's)
        return all(borrowable(t) for t in typ.types)
    return False


def native_size(typ: Any) -> int:
    """The bytes a value of the numba type ``typ`` takes at an address (:func:`store_borrowed`)."""
    from numba.core.registry import cpu_target

    context = cpu_target.target_context
    return int(context.get_abi_sizeof(context.data_model_manager[typ].get_data_type()))


@intrinsic
def _store_borrowed(typingctx: Any, address: Any, value: Any) -> Any:
    """Inside a kernel: write ``value`` (:func:`borrowable`) at ``address``, in numba's data
    layout, its arrays borrowed (:func:`_strip_owners`): whoever reads it must keep the arrays
    alive (they are the caller's)."""
    if not (isinstance(address, types.Integer) and borrowable(value)):
        return None
    sig = types.none(address, value)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        at, val = args
        pointer = builder.inttoptr(at, context.get_data_type(value).as_pointer())
        context.pack_value(builder, value, _strip_owners(context, builder, value, val), pointer)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _load_borrowed(typingctx: Any, address: Any, typeref: Any) -> Any:
    """Inside a kernel: the value of the numba type ``typeref`` (a type given as a global)
    stored at ``address`` by :func:`store_borrowed`."""
    typ = getattr(typeref, "instance_type", None)
    if not (isinstance(address, types.Integer) and typ is not None and borrowable(typ)):
        return None
    sig = typ(address, typeref)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        pointer = builder.inttoptr(args[0], context.get_data_type(typ).as_pointer())
        return context.unpack_value(builder, typ, pointer)  # (no owners: nothing to count)

    return sig, codegen


#: ``store_borrowed(address, value)`` inside a kernel (see :func:`_store_borrowed`).
store_borrowed = cast(Callable[[int, Any], None], _store_borrowed)
#: ``load_borrowed(address, numba_type)`` inside a kernel (see :func:`_load_borrowed`).
load_borrowed = cast(Callable[[int, Any], Any], _load_borrowed)
