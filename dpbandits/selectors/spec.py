"""Selector specs: the one way a selector is named anywhere (CLI, scenarios, maps, agents).

A *spec* is a registered name (``"mgem"``), a name with parameters
(``"mgem:beta=0.1"``, ``"rs:gamma=0.01"``), a selector object, or a plain function
``fn(q, d, epsilon, rng) -> indices``. :func:`resolve_selector` turns any of them into a
selector object.
"""

from __future__ import annotations

from typing import Any

from dpbandits import selectors

__all__ = ["parse_selector_spec", "parse_value", "resolve_selector"]


def parse_value(text: str) -> Any:
    """``"true"``/``"false"``/``"none"``, an int, a float, else the stripped string."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text.strip()


def parse_selector_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,key=value"`` into the name and keyword arguments."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"selector spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    kwargs: dict[str, Any] = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(
                    f"selector spec {spec!r}: expected 'name:key=value,...', got item {item!r}"
                )
            kwargs[key.strip()] = parse_value(value)
    return name.strip(), kwargs


def resolve_selector(spec: Any, epsilon: float | None = None, **params: Any) -> Any:
    """A selector object from a spec (see the module docstring).

    ``epsilon``: the selector's privacy parameter. Names and functions get it (default 1.0);
    an instance keeps its own unless ``epsilon`` is given, in which case its ``with_epsilon`` is
    used. ``params`` are extra keyword arguments for a selector given by name (they override
    the spec's own ``key=value`` items).
    """
    eps = 1.0 if epsilon is None else epsilon
    if isinstance(spec, str):
        name, kwargs = parse_selector_spec(spec)
        return selectors.make(name, epsilon=eps, **{**kwargs, **params})
    if params:
        raise ValueError(
            f"selector parameters {sorted(params)} only apply to a selector given by name; "
            "configure the selector instance instead"
        )
    if not callable(getattr(spec, "select", None)) and callable(spec):
        return selectors.from_function(spec, epsilon=eps)  # fn(q, d, epsilon, rng) -> indices
    sel = selectors.make(spec)  # an instance is returned as is; anything else is a TypeError
    if epsilon is not None and float(sel.epsilon) != float(epsilon):
        with_epsilon = getattr(sel, "with_epsilon", None)
        if not callable(with_epsilon):
            raise ValueError(
                f"epsilon={epsilon} differs from the selector's epsilon {sel.epsilon} and the "
                "selector has no with_epsilon(); configure the instance instead"
            )
        sel = with_epsilon(epsilon)
    return sel
