"""The audits' old names under ``dpbandits.testing`` still work for one release, and warn.

They moved to ``dpbandits.audit``; ``dpbandits.testing.moved`` hands them out."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

import dpbandits.audit
import dpbandits.testing
from dpbandits.testing.moved import MOVED_MODULES, MOVED_NAMES


def _forget(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Undo an earlier import of the old name (module and package attribute), for this test."""
    monkeypatch.delitem(sys.modules, f"dpbandits.testing.{name}", raising=False)
    if name in vars(dpbandits.testing):
        monkeypatch.delattr(dpbandits.testing, name)


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_an_old_module_name_imports_the_new_module_and_warns(old, monkeypatch):
    new = MOVED_MODULES[old]
    module = importlib.import_module(new)
    spec = module.__spec__
    _forget(monkeypatch, old.rpartition(".")[2])
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}") as record:
        __import__(old)  # as an import statement does (importlib.import_module adds a frame)
    assert sys.modules[old] is module
    assert module.__spec__ is spec and module.__name__ == new  # its own identity is kept
    assert record[0].filename == __file__  # the warning points at the importing line


def test_from_import_of_an_old_module_gives_its_names(monkeypatch):
    _forget(monkeypatch, "audit")
    with pytest.warns(DeprecationWarning, match="dpbandits.audit.selector"):
        from dpbandits.testing.audit import HARD_PAIRS, estimate_privacy_loss
    assert HARD_PAIRS is dpbandits.audit.HARD_PAIRS
    assert estimate_privacy_loss is dpbandits.audit.estimate_privacy_loss


@pytest.mark.parametrize("name", sorted(MOVED_NAMES))
def test_an_old_attribute_gives_the_new_object_and_warns(name, monkeypatch):
    _forget(monkeypatch, name)
    with pytest.warns(DeprecationWarning, match=f"dpbandits.testing.{name} moved to") as record:
        value = getattr(dpbandits.testing, name)
    expected = dpbandits.audit.selector if name == "audit" else getattr(dpbandits.audit, name)
    assert value is expected
    assert record[0].filename == __file__


def test_the_new_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from dpbandits.audit import AgentAuditResult, audit, audit_agent, audit_topk  # noqa: F401
        from dpbandits.testing import check_agent, check_selector  # noqa: F401


def test_unknown_names_are_still_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dpbandits.testing.nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dpbandits.audit.nope  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("dpbandits.testing.nope")
