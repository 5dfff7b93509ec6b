"""numba's internals in one version-gated module (dpbandits.core.numba_compat): a numba outside
the tested range is refused with the fix, the requirement in pyproject.toml states the same
range, and no other module of the library reaches into numba's or llvmlite's internals."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numba
import pytest

from dpbandits.core import numba_compat

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_the_installed_numba_is_in_the_tested_range() -> None:
    numba_compat.check_numba_version()
    numba_compat.check_numba_version(numba.__version__)


@pytest.mark.parametrize("version", ["0.63.1", "0.69.0", "0.70.0rc1", "1.0", "garbage"])
def test_an_untested_numba_is_refused_with_the_fix(version, monkeypatch) -> None:
    monkeypatch.delenv(numba_compat.UNTESTED_ENV, raising=False)
    (low_major, low_minor), (high_major, high_minor) = numba_compat.TESTED_NUMBA
    tested = f"numba>={low_major}.{low_minor},<{high_major}.{high_minor}"
    with pytest.raises(ImportError) as info:
        numba_compat.check_numba_version(version)
    message = str(info.value)
    assert f"numba {version} is installed" in message
    assert f"python -m pip install '{tested}'" in message
    assert numba_compat.UNTESTED_ENV in message


def test_the_escape_hatch_warns_instead(monkeypatch) -> None:
    monkeypatch.setenv(numba_compat.UNTESTED_ENV, "1")
    with pytest.warns(UserWarning, match="trying anyway"):
        numba_compat.check_numba_version("0.70.0")
    monkeypatch.setenv(numba_compat.UNTESTED_ENV, "0")  # "0" is off
    with pytest.raises(ImportError):
        numba_compat.check_numba_version("0.70.0")


def test_pyproject_pins_numba_to_the_tested_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (low_major, low_minor), (high_major, high_minor) = numba_compat.TESTED_NUMBA
    pins = [d.replace(" ", "") for d in project["dependencies"] if d.startswith("numba")]
    assert pins == [f"numba>={low_major}.{low_minor},<{high_major}.{high_minor}"]


# numba's and llvmlite's internals: everything but the public ``numba`` namespace and
# ``numba.extending`` (is_jitted, intrinsic are public API)
_INTERNAL = re.compile(r"^\s*(from|import)\s+(llvmlite|numba\.(?!extending\b)\w+)", re.MULTILINE)


def test_only_numba_compat_touches_numba_internals() -> None:
    offenders = []
    for package in ("dpbandits", "agents", "envs"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "numba_compat.py":
                continue
            for match in _INTERNAL.finditer(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(ROOT)}: {match.group(0).strip()}")
    assert offenders == []


#: the kernel _caller calls: set by the test (numba reads globals when it compiles _caller)
_compiled_callee: object = None


def _callee(x, i):  # type: ignore[no-untyped-def]
    return x * 10 + i


def _caller(x):  # type: ignore[no-untyped-def]
    # i is Literal[int](0) until inference has seen i += 1; 7 is a literal at its call site
    i, s = 0, 0
    while i < 3:
        s += _compiled_callee(x, i)
        i += 1
    return s + _compiled_callee(x, 7)


def test_a_constant_argument_compiles_the_callee_for_its_type_not_its_value() -> None:
    """no_literal_calls: a kernel called with constants (and with a loop variable first set to
    a constant) is compiled once, for int64; without it numba compiles it for Literal[int](0)
    and Literal[int](7) too."""
    global _compiled_callee
    from numba.core import types

    _compiled_callee = numba_compat.no_literal_calls(numba.njit(_callee))
    caller = numba.njit(_caller)
    assert caller(2) == (20 + 21 + 22) + 27
    assert _compiled_callee.signatures == [(types.int64, types.int64)]
    # the same functions without it: the literal versions are compiled (what this prevents)
    _compiled_callee = numba.njit(_callee)
    numba.njit(_caller)(2)
    assert len(_compiled_callee.signatures) > 1
