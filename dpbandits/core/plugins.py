"""User plug-ins: a Python file or module imported before a command runs (``--plugin``).

A plug-in registers its own names (a selector with ``dpbandits.selectors.register``, an agent
with ``agents.register``) when imported. The CLI imports them first; a sweep imports them again
in every worker process (a Dask worker starts empty).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Iterable
from pathlib import Path

__all__ = ["load_plugins"]


def load_plugins(items: Iterable[str] | None) -> None:
    """Import each item: a path to a ``.py`` file (run as a module) or an importable module.

    Any error a plug-in raises while being imported (a syntax error, an exception) becomes one
    ``ValueError`` naming the plug-in, its file and line: the command stops before any work.
    """
    for item in items or []:
        path = Path(item)
        try:
            if item.endswith(".py") or path.exists():
                if not path.is_file():
                    raise ValueError(f"--plugin: no such file {item!r}")
                name = "dpbandits_plugin_" + re.sub(r"\W", "_", path.stem)
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None:
                    raise ValueError(f"--plugin: cannot import {item!r}")
                module = importlib.util.module_from_spec(spec)
                # Kept in sys.modules so that worker processes can unpickle its classes.
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    sys.modules.pop(name, None)
                    raise
            else:
                importlib.import_module(item)
        except ValueError as exc:
            if str(exc).startswith("--plugin"):
                raise
            raise ValueError(_plugin_error(item, exc)) from None
        except (Exception, SystemExit) as exc:  # noqa: BLE001 (a plug-in can raise anything)
            raise ValueError(_plugin_error(item, exc)) from None


def _plugin_error(item: str, exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}, line {exc.lineno}"
        return f"--plugin {item!r} has a syntax error ({where}): {exc.msg}"
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "importlib" not in f.filename and "dpbandits" not in f.filename]
    where = f" ({own[-1].filename}, line {own[-1].lineno})" if own else ""
    return f"--plugin {item!r} failed to import{where}: {type(exc).__name__}: {exc}"
