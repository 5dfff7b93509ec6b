"""Config files as TOML: reading a file or text into a dict, and writing a dict back as TOML."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpbandits.experiments.config.schema import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["parse_value", "read_toml", "to_toml"]


def parse_value(text: str) -> Any:
    """A command-line value as TOML: ``2`` -> int, ``0.5`` -> float, ``true``, ``[0.2, 0.8]``,
    ``"x"``; anything that is not a TOML value is the string itself (``mgem``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def read_toml(source: str | os.PathLike[str]) -> dict[str, Any]:
    """The tables of a TOML file (a path) or TOML text (a string containing a newline or ``=``
    that is not a file's name); a :class:`ConfigError` if it cannot be read or parsed."""
    if isinstance(source, str) and ("\n" in source or "=" in source) and not os.path.isfile(source):
        text, where = source, "the config text"
    else:
        p = Path(source)
        if p.is_dir():
            raise ConfigError("", f"{str(p)!r} is a directory, expected a config file (.toml)")
        if not p.is_file():
            raise ConfigError("", f"no config file {str(p)!r}")
        try:
            text, where = p.read_text(encoding="utf-8"), str(p)
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError("", f"cannot read {str(p)!r}: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("", f"{where} is not valid TOML: {exc}") from None


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k, ensure_ascii=False)


def _toml_value(v: Any) -> str:
    import numpy as np

    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        inner = ", ".join(f"{_toml_key(str(k))} = {_toml_value(x)}" for k, x in v.items())
        return "{" + inner + "}"
    if hasattr(v, "to_dict"):
        return _toml_value(v.to_dict())
    raise TypeError(f"cannot write {type(v).__name__} {v!r} as TOML")


def to_toml(config: Mapping[str, Any]) -> str:
    """TOML text of a config dict (tables for sections and agents, inline tables below)."""
    lines: list[str] = []

    def table(header: str, items: Mapping[str, Any], nested: tuple[str, ...] = ()) -> None:
        if lines:
            lines.append("")
        lines.append(f"[{header}]")
        for k, v in items.items():
            if k not in nested:
                lines.append(f"{_toml_key(str(k))} = {_toml_value(v)}")
        for k in nested:
            if k in items:
                table(f"{header}.{_toml_key(k)}", items[k])

    if "experiment" in config:
        table("experiment", config["experiment"], ("env_kwargs",))
    for label, spec in config.get("agents", {}).items():
        table(f"agents.{_toml_key(label)}", spec)
    if config.get("sweep"):
        table("sweep", config["sweep"])
    return "\n".join(lines) + "\n"
