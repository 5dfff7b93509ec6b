"""The shape of a config (its sections and keys) and :class:`ConfigError`, raised at a key path.

Every check of a config value goes through here, so that every error reads
``key.path: rule, got value``. Numbers follow the library's input policy
(:mod:`dpbandits.core.checks`): a real ``int``/``float`` or NumPy real scalar, never ``bool``,
``str`` or ``complex``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from dpbandits.core import checks

__all__ = [
    "EXPERIMENT_DEFAULTS",
    "SECTIONS",
    "ConfigError",
    "ConfigTypeError",
    "check_integer",
    "check_number",
    "check_positive",
    "check_string",
    "check_table",
    "at_key",
    "show",
    "unknown_key",
]

#: Keys of ``[experiment]`` and their defaults (``env`` is required).
EXPERIMENT_DEFAULTS: dict[str, Any] = {
    "env": None,
    "env_kwargs": {},
    "n_runs": 100,
    "seed": 0,
    "horizon": None,
    "chunk_size": 100,
    "record_stride": None,
    "trace": True,
    "name": None,
    "description": None,
    "delta": None,
}
#: The top-level tables of a config.
SECTIONS = ("experiment", "agents", "sweep")


class ConfigError(ValueError):
    """A config that cannot run; the message starts with the key path (``a.b.c: rule, got x``)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.rule = message
        super().__init__(f"{path}: {message}" if path else message)


class ConfigTypeError(ConfigError, TypeError):
    """A config value of the wrong type (a :class:`ConfigError` and a ``TypeError``)."""


def show(value: Any) -> str:
    """A value as the config writes it (JSON, strings quoted), for error messages."""
    return repr(value) if isinstance(value, str) else json.dumps(value, default=repr)


def check_integer(path: str, value: Any, minimum: int) -> int:
    """An integer ``>= minimum`` (:func:`dpbandits.core.checks.integer`), else a ConfigError."""
    try:
        return checks.integer(value, path, minimum=minimum)
    except TypeError as exc:
        raise ConfigTypeError(path, _rule(exc, path)) from None
    except ValueError as exc:
        raise ConfigError(path, _rule(exc, path)) from None


def check_number(path: str, value: Any) -> float:
    """A real number (:func:`dpbandits.core.checks.number`; infinities pass), else a ConfigError."""
    try:
        return checks.number(value, path, finite=False)
    except TypeError:
        raise ConfigTypeError(path, f"must be a number, got {show(value)}") from None
    except ValueError as exc:
        raise ConfigError(path, _rule(exc, path)) from None


def check_positive(path: str, value: Any) -> float:
    """A finite number ``> 0`` (:func:`dpbandits.core.checks.positive_number`), e.g. an epsilon."""
    x = check_number(path, value)
    try:
        return checks.positive_number(x, path)
    except ValueError:
        rule = "must be finite" if math.isinf(x) else "must be > 0"
        raise ConfigError(path, f"{rule}, got {show(value)}") from None


def check_string(path: str, value: Any) -> str:
    """A non-empty string, else a :class:`ConfigTypeError`."""
    if not isinstance(value, str) or not value:
        raise ConfigTypeError(path, f"must be a non-empty string, got {show(value)}")
    return value


def check_table(path: str, value: Any) -> dict[str, Any]:
    """A table (a mapping with string keys) as a new dict, else a :class:`ConfigTypeError`."""
    if not isinstance(value, Mapping):
        raise ConfigTypeError(path, f"must be a table, got {type(value).__name__} {show(value)}")
    for k in value:
        if not isinstance(k, str):
            raise ConfigTypeError(path, f"keys must be strings, got {k!r}")
    return dict(value)


def unknown_key(path: str, key: str, known: Any) -> ConfigError:
    """The error of a key that ``path`` does not have (listing the ones it has)."""
    where = f"{path}.{key}" if path else key
    return ConfigError(where, f"unknown key (known: {', '.join(sorted(known))})")


def at_key(exc: BaseException, path: str) -> ConfigError:
    """A constructor's error placed at the key of the parameter it names (``exc.param``, set
    by :class:`dpbandits.core.checks.ParameterError`), else at ``path``."""
    cls = ConfigTypeError if isinstance(exc, TypeError) else ConfigError
    param = getattr(exc, "param", None)
    msg = str(exc).strip()
    if isinstance(param, str) and param:
        rule = msg
        for lead in (param + ": ", param + " "):  # "x must be ...", "x: unknown ..."
            if msg.startswith(lead):
                rule = msg[len(lead) :]
                break
        return cls(f"{path}.{param}", rule)
    return cls(path, msg)


def _rule(exc: BaseException, path: str) -> str:
    # dpbandits.core.checks messages start with the name they were given: here, the key path
    msg = str(exc)
    return msg[len(path) :].lstrip() if msg.startswith(path) else msg
