"""The ``dpbandits`` console script.

Subcommands are discovered, not listed: every module ``dpbandits/cli/cmd_<name>.py`` defines

.. code-block:: python

    def register(subparsers: argparse._SubParsersAction) -> None:
        parser = options.add_command(subparsers, "<name>", HELP, __doc__)
        ...  # options.add_common_options, add_list_option, add_epsilon_option: docs/cli.md
        parser.set_defaults(func=run)

    def run(args: argparse.Namespace) -> int: ...

Heavy imports belong inside ``run`` so that ``dpbandits --help`` stays fast. The options every
command shares, and how outputs are checked and written, live in :mod:`dpbandits.cli.options`.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import pkgutil
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

from dpbandits import __version__
from dpbandits.core.checks import MemoryWarning
from dpbandits.core.signals import Terminated, handle_termination


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpbandits",
        description="Differentially private selection inside bandit learners.",
    )
    parser.add_argument("--version", action="version", version=f"dpbandits {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    package_path = __path__
    for info in sorted(pkgutil.iter_modules(package_path), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            module.register(subparsers)
    return parser


def console_main() -> int:
    """The ``dpbandits`` console script: :func:`main` in a process of its own.

    The process is ours, so it skips the garbage collections of the interpreter's final
    clean-up: once numba has loaded kernels, collecting the reference cycles of its typing and
    lowering machinery at exit costs 0.2-0.5 s on a loaded 2-core machine
    (docs/performance.md, "Fig. 9 fixed costs"). ``gc.freeze()`` as an exit handler moves every
    object out of the collector's reach first; the memory goes back to the system with the
    process. Explicit clean-ups (exit handlers, ``weakref.finalize``, files closed by reference
    counting) still run. :func:`main` called from Python changes nothing of the caller's
    process.
    """
    atexit.register(gc.freeze)
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the console script; returns the exit status.

    Bad input (``ValueError``/``TypeError`` from a command) prints one line and exits 2.
    Ctrl-C exits 130 and SIGTERM 143, each with one line: worker processes are stopped and an
    output directory that was being written keeps its ``INCOMPLETE.txt`` marker. Any other
    error (a file that cannot be written, a plug-in failing mid-run) is one line and exit 1;
    ``DPBANDITS_TRACEBACK=1`` shows its traceback instead.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        sys.stdout.flush()
        print("dpbandits: error: give a COMMAND (listed above)", file=sys.stderr)
        return 2
    try:
        with handle_termination(), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(func(args) or 0)
    except BaseException as exc:  # noqa: BLE001 (each outcome is one line: see _OUTCOMES)
        outcome = next((o for o in _OUTCOMES if isinstance(exc, o[0])), None)
        if outcome is not None:
            status, text = outcome[1], outcome[2].format(exc=exc)
        else:  # any other error, e.g. a plug-in's selector failing mid-run
            if os.environ.get("DPBANDITS_TRACEBACK") or not isinstance(exc, Exception):
                raise
            status = 1
            text = (f"dpbandits: error: {type(exc).__name__}: {exc}{_where(exc)} (set "
                    "DPBANDITS_TRACEBACK=1 for the traceback)")  # fmt: skip
        if isinstance(exc, BrokenPipeError):
            # The reader of our output went away (``dpbandits list | head``): stop quietly, and
            # point stdout at devnull so that the interpreter's final flush does not fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        elif text:
            print(text, file=sys.stderr)
        return status


#: How ``main`` ends on an exception: (exception types, exit status, the one line it prints);
#: the first match wins (``BrokenPipeError`` is an ``OSError``; :class:`Terminated` is SIGTERM).
_OUTCOMES: tuple[tuple[tuple[type[BaseException], ...], int, str], ...] = (
    ((ValueError, TypeError), 2, "dpbandits: error: {exc}"),  # bad user input
    # numpy names the array it could not allocate: the sizes asked for are too large
    ((MemoryError,), 1, "dpbandits: error: not enough memory ({exc}); use smaller sizes"),
    ((KeyboardInterrupt,), 130, "dpbandits: interrupted (outputs left incomplete)"),
    ((BrokenPipeError,), 141, ""),
    # a file that cannot be read or written (disk full, permissions)
    ((OSError,), 1, "dpbandits: error: {exc}"),
    ((Terminated,), 143, "dpbandits: terminated (outputs left incomplete)"),
)


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:  # fmt: skip
    """Show the library's own warnings to a user of the command line as one line,
    ``dpbandits: warning: ...`` (a run that takes much memory: ``MemoryWarning``); others as
    Python shows them."""
    if issubclass(category, MemoryWarning):
        print(f"dpbandits: warning: {message}", file=sys.stderr if file is None else file,
              flush=True)  # fmt: skip
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def _where(exc: BaseException) -> str:
    """`` at FILE, line N``: the innermost frame of ``exc`` outside the standard library."""
    import sysconfig
    import traceback

    stdlib = sysconfig.get_paths()["stdlib"]
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(stdlib)]  # fmt: skip
    return f" at {frames[-1].filename}, line {frames[-1].lineno}" if frames else ""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
