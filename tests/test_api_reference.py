"""The API reference covers every public name, and the course pages hold no solution.

The reference pages are generated (``docs/_tools/reference.py``) from the packages' ``__all__``;
these tests check what they generate against an independent walk of the packages: every public
module has a ``:::`` directive, and every name of every ``__all__`` is either a member of its
module's directive or a row of its module's re-export table that links to a directive listing
the same object. ``mkdocs build --strict`` then checks that mkdocstrings renders each directive
and that every link resolves.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_tools"))
import reference  # noqa: E402

_DIRECTIVE = re.compile(r"^::: (\S+)\n    options:\n((?:      .*\n)+)", re.M)
_REEXPORT = re.compile(r"^\| `(\w+)` \| (?:the module )?\[`[\w.]+`\]\[([\w.]+)\] \|$", re.M)


def _public_modules() -> list[str]:
    """Every module of the three packages with no ``_``-prefixed part, found independently."""
    names = []
    for package in ("dpbandits", "agents", "envs"):
        names.append(package)
        pkg = importlib.import_module(package)
        for info in pkgutil.walk_packages(pkg.__path__, package + "."):
            if not any(p.startswith("_") for p in info.name.split(".")):
                names.append(info.name)
    return names


def _directives() -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
    """From the generated pages: module -> its members; module -> {re-exported name: target}."""
    members: dict[str, list[str]] = {}
    reexports: dict[str, dict[str, str]] = {}
    for text in reference.pages().values():
        for block in re.split(r"(?=^::: )", text, flags=re.M):
            match = _DIRECTIVE.match(block)
            if match is None:
                continue
            module, options = match.groups()
            listed = re.findall(r"^        - (\S+)$", options, flags=re.M)
            assert listed or "members: false" in options, f"{module}: no members option"
            members[module] = listed
            reexports[module] = dict(_REEXPORT.findall(block))
    return members, reexports


def _object(path: str) -> object:
    module, _, name = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ImportError:
        return getattr(importlib.import_module(module), name)


def test_every_public_module_has_a_directive():
    members, _ = _directives()
    assert sorted(members) == sorted(_public_modules())


def test_every_name_of_every_all_is_in_the_reference():
    members, reexports = _directives()
    missing = []
    for name in _public_modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            if attr in members[name]:
                continue
            target = reexports[name].get(attr)
            if target is None:
                missing.append(f"{name}.{attr}")
                continue
            # the link must lead to a directive that documents this very object in full
            obj = getattr(module, attr)
            if isinstance(obj, types.ModuleType):
                assert target == obj.__name__ and target in members, (name, attr, target)
            else:
                home, _, home_name = target.rpartition(".")
                assert home_name in members.get(home, []), (name, attr, target)
                assert _object(target) is obj, (name, attr, target)
    assert not missing, f"public names missing from the API reference: {missing}"


def test_a_name_dropped_from_the_pages_is_caught(monkeypatch):
    # The check above can fail: remove one documented member from the generated pages.
    pages = reference.pages()
    path, text = next((p, t) for p, t in pages.items() if "        - run\n" in t)
    monkeypatch.setattr(reference, "pages", lambda: {**pages, path: text.replace(
        "        - run\n", "", 1)})  # fmt: skip
    with pytest.raises(AssertionError, match=r"\brun\b"):
        test_every_name_of_every_all_is_in_the_reference()


def _undocumented(obj: object) -> bool:
    doc = inspect.getdoc(obj) if not inspect.isclass(obj) else obj.__doc__
    if inspect.isclass(obj) and doc and doc.startswith(f"{obj.__name__}("):
        return True  # the signature a dataclass writes for itself is not a docstring
    return not (doc and doc.strip())


def test_public_functions_and_classes_have_docstrings():
    members, _ = _directives()
    bare = []
    for module, names in members.items():
        for name in names:
            obj = getattr(importlib.import_module(module), name)
            callable_kind = inspect.isclass(obj) or inspect.isfunction(obj) or hasattr(
                obj, "py_func")  # fmt: skip  (a compiled kernel)
            if callable_kind and _undocumented(obj):
                bare.append(f"{module}.{name}")
    assert not bare, f"public functions and classes without a docstring: {bare}"


def test_course_pages_show_no_solution():
    pytest.importorskip("jupytext")  # in the dev and docs extras
    import course_pages

    from dpbandits.course import exercises

    pages = course_pages.pages()
    checked = 0
    for ex in exercises():  # every exercise against its reference solution
        page = pages[course_pages.page_path(ex.filename)]
        assert "NotImplementedError" in page  # the tasks are there, as stubs
        solution = ex.solution_path().read_text(encoding="utf-8")  # examples/course-solutions
        starter = set(ex.starter_path().read_text(encoding="utf-8").splitlines())
        skip = ("#", "def ", '"""', "import ", "from ")  # shared with the starter, or comments
        solved = [line.strip() for line in solution.splitlines()
                  if line not in starter and len(line.strip()) > 12
                  and not line.strip().startswith(skip)]  # fmt: skip
        shown = [line for line in solved if line in page]
        assert not shown, f"{ex.filename}: the page shows solution lines {shown[:3]}"
        checked += 1
    assert checked == len(exercises()) >= 6
