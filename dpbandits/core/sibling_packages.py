"""Check that the import names ``agents`` and ``envs`` are dpbandits' own packages.

The project installs three import packages, ``dpbandits``, ``agents`` and ``envs``. The last two
are common names: another distribution (``openai-agents`` installs ``agents``; the PyPI package
``envs`` installs ``envs``), or a folder of that name in the working directory, can take their
place, and the library would then fail far from the cause. :func:`check_sibling_packages` runs
on ``import dpbandits`` and turns such a clash into one ``ImportError`` that names what is there
instead and how to fix it. :func:`lazy_attributes` is the two packages' lazy imports.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["MARKER", "check_sibling_packages", "lazy_attributes"]

#: Every ``__init__.py`` of the project's sibling packages defines this name.
MARKER = "__dpbandits_package__"


def _owners(name: str) -> list[str]:
    """Installed distributions that ship a top-level package ``name`` (other than ours)."""
    try:
        from importlib.metadata import packages_distributions

        return sorted({d for d in packages_distributions().get(name, []) if d != "dpbandits"})
    except Exception:  # noqa: BLE001 (metadata is a hint for the message only)
        return []


def check_sibling_packages(names: tuple[str, ...] = ("agents", "envs")) -> None:
    """Raise ``ImportError`` if an import name of ``names`` resolves to a package that is not
    dpbandits' own. Imports nothing: it reads the first lines of each package's ``__init__``."""
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None)
        if spec is None:
            problem = "is not installed"
        elif origin in (None, "namespace") or not Path(origin).is_file():
            locations = list(getattr(spec, "submodule_search_locations", None) or [])
            problem = f"resolves to a namespace package at {locations}"
        else:
            try:
                head = Path(origin).read_text(encoding="utf-8", errors="replace")[:4000]
            except OSError:
                head = ""
            if MARKER in head:
                continue
            problem = f"resolves to {origin}, which is not dpbandits' package"
        owners = _owners(name)
        by = f" (installed by: {', '.join(owners)})" if owners else ""
        raise ImportError(
            f"dpbandits needs its own top-level package {name!r}, but {name!r} {problem}{by}. "
            f"Another distribution or a local folder named {name!r} is shadowing or has "
            "overwritten it. Fix: install dpbandits in a separate virtual environment "
            "(python -m venv .venv && .venv/bin/python -m pip install PATH/TO/dpbandits, the "
            "folder of your clone), without the other package, and do not run from a "
            f"directory that contains a folder {name!r}."
        )


def lazy_attributes(
    package: str, lazy: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``package``: a name of ``lazy`` (name -> module)
    is imported from its module on first use and kept in ``namespace`` (the package's
    ``globals()``); any other name is an ``AttributeError``. A name that is the module's own
    last component and not one of its attributes (``"selectors": "dpbandits.selectors"``)
    is the module itself."""

    def __getattr__(name: str) -> Any:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        mod = importlib.import_module(module)
        value = getattr(mod, name, mod if module.rpartition(".")[2] == name else None)
        if value is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    return __getattr__
