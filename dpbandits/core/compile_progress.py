"""Visible progress while the library's kernels compile, from every entry point.

numba compiles a kernel at its first call and caches it (:mod:`dpbandits.core.kernel_cache`),
so the first use of the library on a machine spends seconds to tens of seconds compiling: in
``dpbandits.run`` and the command line, but also at a selector's first ``select_batch`` or in
the course checker. So that this never looks like a hang, a listener of numba's compile events
(installed by :mod:`dpbandits.core.jit` for the library's kernels only) shows, on stderr:

- once per process, before the first compilation, one line: what is happening and where the
  result is cached;
- while a kernel compiles, a progress bar (``tqdm``, on a terminal only) counting the kernels
  compiled so far, with the name of the one being compiled.

A caller that shows its own account of the compilation (the engine's warm-up,
``dpbandits.experiments.warmup``) silences this one with :func:`quiet`; so does
``DPBANDITS_COMPILE_NOTICE=0``.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["ENV", "compiled_count", "install", "quiet"]

#: Set to ``0`` to silence the notice and the bar.
ENV = "DPBANDITS_COMPILE_NOTICE"

_lock = threading.Lock()
_state: dict[str, Any] = {"quiet": 0, "depth": 0, "count": 0, "announced": False, "bar": None}


def compiled_count() -> int:
    """How many of the library's kernels this process has compiled (not loaded from the cache)."""
    return int(_state["count"])


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No notice and no bar from this module in the block (a caller reports compilation)."""
    with _lock:
        _state["quiet"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["quiet"] -= 1


def _silent() -> bool:
    return bool(_state["quiet"]) or os.environ.get(ENV, "") == "0"


def _stream() -> Any:
    """Where the notice goes: stderr, or the process's own stderr when stderr is a string
    buffer (output silenced by ``contextlib.redirect_stderr(io.StringIO())``, as the course
    checker does around a student's code: the wait is still shown)."""
    if isinstance(sys.stderr, io.StringIO) and sys.__stderr__ is not None:
        return sys.__stderr__
    return sys.stderr


def _name(py_func: Any) -> str:
    qualname = getattr(py_func, "__qualname__", None) or repr(py_func)
    module = (getattr(py_func, "__module__", None) or "").rsplit(".", 1)[-1]
    return f"{module}.{qualname.split('__', 1)[0]}" if module else qualname


def _started(py_func: Any) -> None:
    with _lock:
        _state["depth"] += 1
        if _silent():
            return
        if not _state["announced"]:
            _state["announced"] = True
            from dpbandits.core.kernel_cache import kernel_cache_dir

            print(f"dpbandits: compiling kernels at their first use on this machine (seconds "
                  f"each, once: cached in {kernel_cache_dir()})…", file=_stream(),
                  flush=True)  # fmt: skip
        bar = _state["bar"]
        if bar is None:
            from tqdm.auto import tqdm

            # on a terminal only (disable=None): a log gets the line above, not bar redraws
            bar = _state["bar"] = tqdm(desc="compiling kernels", unit=" kernels",
                                       initial=_state["count"], file=_stream(), leave=False,
                                       disable=None, dynamic_ncols=True)  # fmt: skip
        bar.set_postfix_str(_name(py_func), refresh=True)


def _ended(py_func: Any) -> None:
    with _lock:
        _state["depth"] = max(0, _state["depth"] - 1)
        _state["count"] += 1
        bar = _state["bar"]
        if bar is None:
            return
        bar.update(1)
        if _state["depth"] == 0:  # the outermost compilation is over: clear the bar
            bar.close()
            _state["bar"] = None


def install(
    is_kernel: Callable[[Any], bool],
    register: Callable[[Callable[[Any], None], Callable[[Any], None]], None],
) -> None:
    """Report the compilations of the functions for which ``is_kernel(py_func)`` holds, through
    ``register(on_start, on_end)`` (numba's compile events, ``numba_compat``)."""

    def start(py_func: Any) -> None:
        if is_kernel(py_func):
            _started(py_func)

    def end(py_func: Any) -> None:
        if is_kernel(py_func):
            _ended(py_func)

    register(start, end)
