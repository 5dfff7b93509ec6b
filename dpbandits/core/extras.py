"""How to install what an optional feature needs, in a command that works as written.

dpbandits is not published on PyPI, so ``pip install "dpbandits[pandas]"`` fails ("No matching
distribution"); in a clone of the repository ``pip install ".[pandas]"`` works. A message
raised at run time cannot know where the user is, so it names the packages themselves:
:func:`install_hint` reads an extra's requirements from this installation's metadata, whose
one source is ``[project.optional-dependencies]`` of ``pyproject.toml``. The extras are listed
in the README ("Set-up").
"""

from __future__ import annotations

import re
from importlib import metadata

__all__ = ["extra_requirements", "install_hint"]

#: The marker that ties a requirement to an extra: ``pandas>=1.5; extra == "pandas"``.
_EXTRA = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")


def extra_requirements(extra: str) -> list[str]:
    """The requirements of dpbandits' optional extra ``extra`` (``["pandas>=1.5"]``), from the
    installed distribution's metadata; ``[]`` when it is not installed (run from a checkout
    without ``pip install``)."""
    try:
        requires = metadata.requires("dpbandits") or []
    except metadata.PackageNotFoundError:
        return []
    out = []
    for line in requires:
        requirement, _, marker = line.partition(";")
        m = _EXTRA.search(marker)
        if m is not None and m.group(1) == extra:
            out.append(requirement.strip().replace(" ", ""))
    return out


def install_hint(extra: str) -> str:
    """A command that installs what the extra ``extra`` needs, wherever the user is:
    ``pip install "pandas>=1.5"`` (each requirement quoted for the shell); without the
    metadata, the clone's form ``pip install ".[pandas]"`` (run in the repository)."""
    requirements = extra_requirements(extra)
    if not requirements:
        return f'pip install ".[{extra}]" (in a clone of the dpbandits repository)'
    return "pip install " + " ".join(f'"{r}"' for r in requirements)
