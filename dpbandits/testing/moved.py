"""Where the audits were: their old names under ``dpbandits.testing``, for one release.

The product audits moved to :mod:`dpbandits.audit` (the conformance kits stay here). Until the
next release the old names still work and warn (``DeprecationWarning``): the modules
``dpbandits.testing.audit``, ``.topk_audit``, ``.agent_audit``, ``.agent_audit_result`` and
``.reward_tables`` (an import finder hands out the new module under the old name), and the
package attributes ``dpbandits.testing.audit``, ``audit_agent`` and ``AgentAuditResult``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from typing import Any

__all__ = ["MOVED_MODULES", "MOVED_NAMES", "install", "moved_attribute"]

#: Old module -> new module.
MOVED_MODULES = {
    "dpbandits.testing.audit": "dpbandits.audit.selector",
    "dpbandits.testing.topk_audit": "dpbandits.audit.topk",
    "dpbandits.testing.agent_audit": "dpbandits.audit.agent",
    "dpbandits.testing.agent_audit_result": "dpbandits.audit.agent_result",
    "dpbandits.testing.reward_tables": "dpbandits.audit.reward_tables",
}
#: Old attribute of ``dpbandits.testing`` -> the module that now holds it (``audit``: the
#: module itself, as ``from dpbandits.testing import audit`` gave it).
MOVED_NAMES = {
    "audit": "dpbandits.audit.selector",
    "audit_agent": "dpbandits.audit.agent",
    "AgentAuditResult": "dpbandits.audit.agent_result",
}


def _warn(old: str, new: str, stacklevel: int) -> None:
    """Warn at the user's line (``stacklevel`` counts from the caller of ``_warn``; the import
    system's own frames are not counted)."""
    warnings.warn(
        f"{old} moved to {new}; the old name will be removed in the next release",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module name as its new module (the same object, under both names)."""

    def __init__(self) -> None:
        self._own_specs: dict[str, Any] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = MOVED_MODULES[spec.name]
        _warn(spec.name, new, stacklevel=2)
        module = importlib.import_module(new)
        self._own_specs[new] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system gave the module the old name's spec: it keeps its own (pickling,
        # reload).
        module.__spec__ = self._own_specs[module.__name__]


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())


def moved_attribute(name: str) -> Any:
    """The value of the old attribute ``dpbandits.testing.<name>``, with the warning."""
    new = MOVED_NAMES[name]
    _warn(f"dpbandits.testing.{name}", new if name == "audit" else f"{new}.{name}", stacklevel=3)
    module = importlib.import_module(new)
    return module if name == "audit" else getattr(module, name)
