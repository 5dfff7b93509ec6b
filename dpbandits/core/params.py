"""Parameter constraints: what each constructor argument of an agent may be, declared once.

A class declares ``parameter_constraints``, a mapping from each constructor argument to a
:class:`Param` (as scikit-learn's ``_parameter_constraints``). The one table serves every
reader: the agent's own check at ``reset`` (:func:`check_params`), the experiment configs
(a value checked before anything is built, its error placed at its key), ``dpbandits list``
and ``agents.describe`` (:meth:`Param.describe`), and the error messages, which name the
parameter (:class:`~dpbandits.core.checks.ParameterError` carries it as ``param``, so no
caller reads it back out of the text).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dpbandits.core import checks
from dpbandits.core.checks import ParameterError, ParameterTypeError

__all__ = ["Param", "check_params"]

Kind = Literal["number", "int", "bool", "str", "any"]


@dataclass(frozen=True)
class Param:
    """The constraint of one parameter.

    ``kind``: ``"number"`` (a real, checked by :func:`dpbandits.core.checks.number`), ``"int"``,
    ``"bool"``, ``"str"`` or ``"any"`` (checked by its owner only). ``low``/``high``: bounds of a
    number or int, excluded when ``low_open``/``high_open``; ``options``: the accepted strings;
    ``none``: ``None`` is accepted too (a default computed at ``reset``); ``doc``: one line for
    tables and ``--help``.
    """

    kind: Kind = "number"
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    options: tuple[str, ...] = ()
    none: bool = False
    doc: str = ""

    def check(self, name: str, value: Any) -> Any:
        """``value`` checked (numbers as float, ints as int), else a ``ParameterError`` or
        ``ParameterTypeError`` naming ``name``."""
        if value is None and self.none:
            return None
        if self.kind == "any":
            return value
        if self.kind == "bool":
            return checks.flag(value, name)
        if self.kind == "str":
            if not isinstance(value, str):
                raise ParameterTypeError(
                    f"{name} must be a string{self._options_text()}, got "
                    f"{type(value).__name__} {value!r}",
                    name,
                )
            if self.options and value not in self.options:
                raise ParameterError(f"{name} must be {self._options_text(' ')}, got {value!r}",
                                     name)  # fmt: skip
            return value
        if self.kind == "int":
            v: float = checks.integer(value, name)
        else:
            infinite = self.high == math.inf  # finite unless the bound says so
            v = checks.number(value, name, finite=not infinite)
        if not self._inside(v):
            raise ParameterError(f"{name} must be {self._range_text()}, got {value!r}", name)
        return v

    def _inside(self, v: float) -> bool:
        if math.isnan(v):
            return False
        if self.low is not None and (v <= self.low if self.low_open else v < self.low):
            return False
        return not (self.high is not None and (v >= self.high if self.high_open else v > self.high))

    def _range_text(self) -> str:
        # the wording of dpbandits.core.checks: "must be > 0", "must lie in (0, 1]"
        lo, hi = self.low, self.high
        if lo is not None and hi is not None:
            a, b = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"in {a}{lo:g}, {hi:g}{b}"
        if lo is not None:
            return f"{'>' if self.low_open else '>='} {lo:g}"
        if hi is not None:
            return f"{'<' if self.high_open else '<='} {hi:g}"
        return "finite"

    def _options_text(self, lead: str = ": ") -> str:
        if not self.options:
            return ""
        return lead + " or ".join(repr(o) for o in self.options)

    @property
    def annotation(self) -> str:
        """The type a constructor declares for the parameter: ``"float"``, ``"int | None"``."""
        text = {"number": "float", "any": "Any"}.get(self.kind, self.kind)
        return text + (" | None" if self.none else "")

    def describe(self) -> str:
        """The rule in a few words: ``"number > 0"``, ``"'T' or 't'"``, ``"int >= 1 or None"``."""
        if self.kind == "bool":
            text = "true or false"
        elif self.kind == "str":
            text = self._options_text("").strip() if self.options else "a string"
        elif self.kind == "any":
            text = "see the docstring"
        else:
            text = ("int " if self.kind == "int" else "number ") + self._range_text()
        return text + (" or None" if self.none else "")


def check_params(owner: Any, constraints: Mapping[str, Param]) -> dict[str, Any]:
    """Check every parameter of ``owner`` (its attributes of the same names) against
    ``constraints``; return the checked values by name."""
    return {name: c.check(name, getattr(owner, name)) for name, c in constraints.items()}

