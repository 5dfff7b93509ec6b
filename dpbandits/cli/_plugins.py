"""``--plugin``: load a user's file or module before a command runs (shared by every command).

A plug-in is ordinary Python that registers things at import time, e.g. a selector with
``dpbandits.selectors.register(name, factory)``; afterwards the name works everywhere a selector
name is accepted. (Installed packages can instead use the entry-point group
``dpbandits.selectors``, which needs no flag.)
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import sys
from collections.abc import Iterable
from pathlib import Path


def add_plugin_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin",
        dest="plugins",
        action="append",
        default=[],
        metavar="FILE.py|MODULE",
        help="import a Python file or module first, e.g. one that registers a selector with "
        "dpbandits.selectors.register(name, ...); repeatable",
    )


def load_plugins(items: Iterable[str] | None) -> None:
    """Import each item: a path to a ``.py`` file (run as a module) or an importable module."""
    for item in items or []:
        path = Path(item)
        if item.endswith(".py") or path.exists():
            if not path.is_file():
                raise ValueError(f"--plugin: no such file {item!r}")
            name = "dpbandits_plugin_" + re.sub(r"\W", "_", path.stem)
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ValueError(f"--plugin: cannot import {item!r}")
            module = importlib.util.module_from_spec(spec)
            # Kept in sys.modules so that worker processes can unpickle the plug-in's classes.
            sys.modules[name] = module
            spec.loader.exec_module(module)
        else:
            try:
                importlib.import_module(item)
            except ImportError as exc:
                raise ValueError(f"--plugin: cannot import module {item!r}: {exc}") from exc
