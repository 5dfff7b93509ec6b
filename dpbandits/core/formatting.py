"""Numbers in text and markdown tables: one place for how the library prints a value."""

from __future__ import annotations

import math

__all__ = ["fixed", "significant"]


def fixed(x: float | None, digits: int = 1) -> str:
    """``1,234.5``-style fixed point with thousands separators; ``-`` for a missing value
    (``None``, NaN or infinite: e.g. the post-change regret of a run without a change)."""
    if x is None or not math.isfinite(float(x)):
        return "-"
    return f"{float(x):,.{digits}f}"


def significant(x: float, digits: int) -> str:
    """A small error (an MSE, a probability) with ``digits`` decimals, or ``digits``
    significant digits when it is smaller than ``10**-digits``; ``0`` for zero."""
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) >= 10 ** (-digits):
        return f"{x:.{digits}f}" if abs(x) < 1e4 else f"{x:.3g}"
    return f"{x:.{digits}g}" if digits > 1 else f"{x:.1g}"
