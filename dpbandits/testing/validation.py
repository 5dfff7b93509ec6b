"""The validation checks of the kit: bad q, d, rng and epsilon are refused with a clear error."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from dpbandits.testing.harness import Context, Failure, describe_exc, show

__all__ = ["BAD_EPSILONS", "CHECKS", "epsilon_problems"]

#: Values every eps-taking constructor and ``with_epsilon`` must refuse.
BAD_EPSILONS: tuple[Any, ...] = (0.0, -1.0, math.nan, math.inf, True, "1", 1 + 0j, None)

_Q_OK = [[0.0, 1.0, 2.0], [1.0, 0.5, 0.0]]

# name -> (q, d, rng, argument the message must name)
_BAD_INPUTS: dict[str, tuple[Any, Any, Any, str | None]] = {
    "q_nan": ([[0.0, 1.0, 2.0], [1.0, 0.5, np.nan]], 1.0, 0, "q"),
    "q_inf": ([[0.0, np.inf, 2.0], [1.0, 0.5, 0.0]], 1.0, 0, "q"),
    "q_neginf": ([[0.0, 1.0, 2.0], [-np.inf, 0.5, 0.0]], 1.0, 0, "q"),
    "q_complex": (np.array(_Q_OK) + 1j, 1.0, 0, "q"),
    "q_complex_zero_imag": (np.array(_Q_OK, dtype=complex), 1.0, 0, "q"),
    "q_bool": (np.array([[True, False, True], [False, True, False]]), 1.0, 0, "q"),
    "q_str": (np.array([["0", "1", "2"], ["1", "0.5", "0"]]), 1.0, 0, "q"),
    "q_none": ([[0.0, None, 2.0], [1.0, 0.5, 0.0]], 1.0, 0, "q"),
    "q_ragged": ([[0.0, 1.0, 2.0], [1.0, 0.5]], 1.0, 0, "q"),
    "q_scalar": (1.0, 1.0, 0, "q"),
    "q_no_candidates": (np.zeros((3, 0)), 1.0, 0, "q"),
    "d_zero": (_Q_OK, [1.0, 0.0, 1.0], 0, "d"),
    "d_negative": (_Q_OK, [[1.0, 1.0, 1.0], [-1.0, 1.0, 1.0]], 0, "d"),
    "d_nan": (_Q_OK, [1.0, np.nan, 1.0], 0, "d"),
    "d_inf": (_Q_OK, np.inf, 0, "d"),
    "d_complex": (_Q_OK, np.array([1.0, 1.0, 1.0]) + 0.5j, 0, "d"),
    "d_bool": (_Q_OK, True, 0, "d"),
    "d_str": (_Q_OK, np.array(["1", "1", "1"]), 0, "d"),
    "d_shape": (_Q_OK, [1.0, 1.0, 1.0, 1.0], 0, "d"),
    "rng_str": (_Q_OK, 1.0, "seed", None),
}


def _as_float_arrays(q: Any, d: Any) -> tuple[Any, Any] | None:
    """``q`` and ``d`` with their nested lists as float64 arrays (the form agents pass), or None
    if there is no list to convert: a selector must not validate lists only."""

    def convert(x: Any) -> tuple[Any, bool]:
        if not isinstance(x, list):
            return x, False
        try:
            return np.array(x, dtype=np.float64), True
        except (TypeError, ValueError):  # ragged rows, None: only the list form exists
            return x, False

    (q2, q_done), (d2, d_done) = convert(q), convert(d)
    return (q2, d2) if q_done or d_done else None


def _forms(q: Any, d: Any) -> Iterator[tuple[str, Any, Any]]:
    yield "", q, d
    arrays = _as_float_arrays(q, d)
    if arrays is not None:
        yield " (as float64 arrays)", *arrays


def _validation(case: str) -> Callable[[Context], str]:
    q, d, rng, argument = _BAD_INPUTS[case]

    def refused(ctx: Context, form: str, q: Any, d: Any) -> str:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = ctx.sel.select(q, d, rng)
            except (ValueError, TypeError) as exc:
                message = str(exc)
                if argument is not None and not re.search(rf"\b{argument}\b", message):
                    raise Failure(
                        f"raised {type(exc).__name__}{form} without naming {argument!r}: "
                        f"{message!r}"
                    ) from exc
                return f"{type(exc).__name__}: {message}"[:200]
            except Exception as exc:
                raise Failure(
                    f"raised {describe_exc(exc)}{form}; expected ValueError or TypeError"
                ) from exc
        how = f" ({caught[0].category.__name__}: {caught[0].message})" if caught else ""
        raise Failure(
            f"accepted it{form}{how} and returned {show(out)}; expected ValueError/TypeError"
        )

    def check(ctx: Context) -> str:
        return [refused(ctx, *form) for form in _forms(q, d)][0]

    check.__doc__ = f"bad input {case}"
    return check


def epsilon_problems(factory: Callable[[Any], Any], call: str) -> list[str]:
    """How ``factory(eps)`` mishandles each of :data:`BAD_EPSILONS` (empty: all refused with
    ValueError/TypeError); ``call`` is the call's text with ``{}`` where eps goes."""
    problems = []
    for bad in BAD_EPSILONS:
        try:
            factory(bad)
        except (ValueError, TypeError):
            continue
        except Exception as exc:
            problems.append(f"{call.format(repr(bad))} raised {describe_exc(exc)}")
            continue
        problems.append(f"{call.format(repr(bad))} was accepted")
    return problems


def _validation_epsilon(ctx: Context) -> str:
    get = getattr(ctx.sel, "get_params", None)
    if not callable(get):
        return "no get_params (optional): the constructor's check of epsilon is not tested"
    params = dict(get())
    if "epsilon" not in params:
        return "get_params() has no 'epsilon': the constructor's check of epsilon is not tested"
    cls = type(ctx.sel)
    try:
        cls(**params)
    except Exception as exc:
        return f"{cls.__name__}(**get_params()) raised {describe_exc(exc)}: not tested"
    problems = epsilon_problems(
        lambda eps: cls(**{**params, "epsilon": eps}), f"{cls.__name__}(epsilon={{}}, ...)"
    )
    if problems:
        raise Failure(
            "; ".join(problems) + ": validate epsilon when the selector is built "
            "(super().__init__(epsilon), or dpbandits.core.checks.positive_number), not inside "
            "a run"
        )
    return f"{cls.__name__}(epsilon=...) rejects {', '.join(map(repr, BAD_EPSILONS))}"


CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    *((f"validation.{case}", _validation(case)) for case in _BAD_INPUTS),
    ("validation.epsilon", _validation_epsilon),
]
