"""Helpers shared by the ``scenarios`` and ``hg`` subcommands (argument parsing, plug-ins)."""

from __future__ import annotations

import re

import numpy as np
from numpy.typing import NDArray


def parse_float_grid(text: str, name: str) -> NDArray[np.float64]:
    """``"0.1,1,3"`` or ``"geom:LO:HI:N"`` / ``"lin:LO:HI:N"`` -> 1-d array (``"paper"`` too)."""
    from dpbandits.scenarios import PAPER_EPSILONS

    t = text.strip().lower()
    if t == "paper":
        return PAPER_EPSILONS.copy()
    m = re.fullmatch(r"(geom|lin):([^:]+):([^:]+):(\d+)", t)
    try:
        if m:
            lo, hi, n = float(m[2]), float(m[3]), int(m[4])
            if n < 1:
                raise ValueError
            return np.geomspace(lo, hi, n) if m[1] == "geom" else np.linspace(lo, hi, n)
        values = [float(v) for v in t.replace(" ", ",").split(",") if v]
    except ValueError:
        raise ValueError(
            f"{name}: expected numbers 'a,b,c', 'geom:LO:HI:N' or 'lin:LO:HI:N', got {text!r}"
        ) from None
    if not values:
        raise ValueError(f"{name} must not be empty")
    return np.asarray(values, dtype=np.float64)


def split_list(values: list[str] | None) -> list[str] | None:
    """Flatten ``["a,b", "c"]`` into ``["a", "b", "c"]`` (commas inside ``name:k=v,k2=v`` specs
    are kept when the next item contains ``=`` but no ``:``)."""
    if values is None:
        return None
    out: list[str] = []
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if not part:
                continue
            if out and "=" in part and ":" not in part and ":" in out[-1]:
                out[-1] += "," + part  # another keyword of the previous spec
            else:
                out.append(part)
    return out


def slug(name: str) -> str:
    """A file-name friendly version of a scenario or figure name."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", name).strip("_")
