"""The epsilon checks of the kit: with_epsilon and get_params rebuild the selector faithfully."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dpbandits.testing.harness import Context, Failure, draw
from dpbandits.testing.problems import D_A, Q_A
from dpbandits.testing.validation import BAD_EPSILONS, epsilon_problems

__all__ = ["CHECKS"]


def _params_without_eps(sel: Any) -> dict[str, Any] | None:
    get = getattr(sel, "get_params", None)
    if not callable(get):
        return None
    params = dict(get())
    params.pop("epsilon", None)
    return params


def _epsilon_with_epsilon(ctx: Context) -> str:
    # a copy, so that a with_epsilon that mutates its selector cannot spoil the later checks
    try:
        sel = copy.deepcopy(ctx.sel)
    except Exception:
        sel = ctx.sel
    with_epsilon = getattr(sel, "with_epsilon", None)
    if not callable(with_epsilon):
        return (
            "no with_epsilon (optional): the selector runs at its own eps only; sweeps over "
            "eps and agents with another epsilon_select need it"
        )
    eps = float(sel.epsilon)
    new_eps = 2.0 * eps if math.isfinite(2.0 * eps) else eps / 2.0
    other = with_epsilon(new_eps)
    problems = []
    if type(other) is not type(sel):
        problems.append(f"returned a {type(other).__name__}, not a {type(sel).__name__}")
    if getattr(other, "epsilon", None) != new_eps:
        problems.append(f"with_epsilon({new_eps}).epsilon is {getattr(other, 'epsilon', None)!r}")
    if float(sel.epsilon) != eps:
        problems.append("with_epsilon changed the original selector's epsilon")
    for attr in ("name", "private"):
        if getattr(other, attr, None) != getattr(sel, attr, None):
            problems.append(f"with_epsilon changed {attr}")
    before, after = _params_without_eps(sel), _params_without_eps(other)
    if before is not None and before != after:
        problems.append(f"with_epsilon changed the other parameters: {before} -> {after}")
    problems += epsilon_problems(with_epsilon, "with_epsilon({})")
    if problems:
        raise Failure("; ".join(problems))
    return (
        f"with_epsilon({new_eps:g}) is a copy with the new eps (original unchanged); "
        f"rejects {', '.join(map(repr, BAD_EPSILONS))}"
    )


def _epsilon_get_params(ctx: Context) -> str:
    sel = ctx.sel
    get = getattr(sel, "get_params", None)
    if not callable(get):
        return "no get_params (optional)"
    params = dict(get())
    if "epsilon" in params and params["epsilon"] != sel.epsilon:
        raise Failure(f"get_params()['epsilon'] = {params['epsilon']!r} != {sel.epsilon!r}")
    rebuilt = type(sel)(**params)
    q = np.tile(Q_A * ctx.scale(), (100, 1))
    seed = ctx.seed("epsilon.get_params")
    if not np.array_equal(
        draw(sel, q, D_A, seed, "original"), draw(rebuilt, q, D_A, seed, "rebuilt")
    ):
        raise Failure("type(sel)(**sel.get_params()) draws other indices for the same seed")
    return f"type(sel)(**get_params()) rebuilds it ({', '.join(params)})"


CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    ("epsilon.with_epsilon", _epsilon_with_epsilon),
    ("epsilon.get_params", _epsilon_get_params),
]
