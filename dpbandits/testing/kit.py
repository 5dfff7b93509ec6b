"""check_selector: every check of the kit in order, gathered into a report."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from dpbandits import selectors
from dpbandits.audit import selector as _audit
from dpbandits.core import checks
from dpbandits.selectors.base import RNGLike
from dpbandits.testing import compiled, contract, privacy, randomness, symmetry, validation
from dpbandits.testing import epsilon as epsilon_group  # check_selector has an epsilon argument
from dpbandits.testing.harness import Context, Failure, describe_exc, is_real_number
from dpbandits.testing.report import CheckResult, SelectorCheckError, SelectorReport

__all__ = ["CHECK_NAMES", "GROUPS", "check_selector"]

_CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    *contract.CHECKS,
    *randomness.CHECKS,
    *symmetry.CHECKS,
    *validation.CHECKS,
    *epsilon_group.CHECKS,
    *compiled.CHECKS,
    *privacy.CHECKS,
]

#: Every check name, in order.
CHECK_NAMES: tuple[str, ...] = tuple(name for name, _ in _CHECKS)

#: The groups of checks, in the order they run (``skip`` takes group or check names).
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(name.split(".", 1)[0] for name in CHECK_NAMES))


def _resolve(selector: Any, epsilon: Any) -> Any:
    if isinstance(selector, str):
        sel = selectors.make(selector)
    elif isinstance(selector, type):
        raise TypeError(
            f"selector must be a name or a selector object, got the class {selector.__name__}; "
            f"pass an instance, e.g. {selector.__name__}(epsilon=1.0)"
        )
    elif callable(getattr(selector, "select", None)):
        sel = selector  # missing attributes are reported by api.attributes / api.protocol
    else:
        raise TypeError(
            f"selector must be a name or an object with select(q, d, rng), got "
            f"{type(selector).__name__}"
        )
    if epsilon is None:
        return sel
    epsilon = checks.positive_number(epsilon, "epsilon")
    if float(getattr(sel, "epsilon", math.nan)) == float(epsilon):
        return sel
    with_epsilon = getattr(sel, "with_epsilon", None)
    if not callable(with_epsilon):
        raise ValueError(
            f"epsilon={epsilon!r} differs from the selector's epsilon {sel.epsilon!r} and the "
            "selector has no with_epsilon(); build it with the eps to check"
        )
    return with_epsilon(epsilon)


def check_selector(
    selector: Any,
    *,
    epsilon: float | None = None,
    rng: RNGLike = 0,
    audit: bool = True,
    draws: int = 100_000,
    alpha: float = 1e-6,
    pairs: Iterable[_audit.NeighbouringPair | str] | None = None,
    skip: Sequence[str] = (),
    raise_on_failure: bool = True,
) -> SelectorReport:
    """Run the selector contract and the privacy audit on ``selector`` (docs/selectors.md).

    Parameters
    ----------
    selector:
        A :class:`~dpbandits.selectors.Selector`, a ``from_function`` wrapper, a duck-typed
        object with ``epsilon``, ``private``, ``name`` and ``select(q, d, rng)``, or a
        registered name.
    epsilon:
        Check ``selector.with_epsilon(epsilon)`` instead (default: the selector's own eps).
    rng:
        Seed of the kit's own randomness (the seeds given to the selector and the audit's draws);
        the default makes the report reproducible.
    audit:
        Run the empirical privacy audit (:func:`dpbandits.audit.selector.audit`).
    draws, alpha, pairs:
        Draws per input, family-wise error per pair and the neighbouring pairs of the audit
        (default: every pair of :data:`dpbandits.audit.selector.HARD_PAIRS`); see the package
        docstring
        for the power.
    skip:
        Group names (:data:`GROUPS`) or check names (:data:`CHECK_NAMES`) not to run.
    raise_on_failure:
        Raise :class:`SelectorCheckError` (an ``AssertionError``) when a required check fails.
        The privacy audit of a selector with ``private = False`` is reported, never raised.

    Returns
    -------
    SelectorReport
        One :class:`CheckResult` per check; ``report.passed``; ``str(report)`` is readable.
    """
    draws = checks.positive_int(draws, "draws")
    alpha = checks.probability(alpha, "alpha")
    audit = checks.flag(audit, "audit")
    raise_on_failure = checks.flag(raise_on_failure, "raise_on_failure")
    gen = checks.generator(rng)
    if isinstance(skip, str):
        skip = (skip,)
    unknown = [s for s in skip if s not in GROUPS and s not in CHECK_NAMES]
    if unknown:
        raise ValueError(f"skip: unknown check(s) {unknown}; groups: {', '.join(GROUPS)}")
    chosen_pairs = None
    if pairs is not None:
        chosen_pairs = []
        for p in pairs:
            if isinstance(p, str):
                if p not in _audit.HARD_PAIRS:
                    raise ValueError(
                        f"unknown pair {p!r}; available: {', '.join(_audit.HARD_PAIRS)}"
                    )
                p = _audit.HARD_PAIRS[p]
            chosen_pairs.append(p)
    sel = _resolve(selector, epsilon)
    eps = getattr(sel, "epsilon", math.nan)
    ctx = Context(
        sel=sel,
        epsilon=float(eps) if is_real_number(eps) else math.nan,
        private=bool(getattr(sel, "private", True)),
        root=int(gen.integers(2**62)),
        draws=draws,
        alpha=float(alpha),
        pairs=chosen_pairs,
    )
    try:
        label = repr(sel)
    except Exception:
        label = type(sel).__name__
    report = SelectorReport(selector=label, epsilon=ctx.epsilon, private=ctx.private)
    start = time.perf_counter()
    for name, fn in _CHECKS:
        if name in skip or name.split(".", 1)[0] in skip or (name == "privacy" and not audit):
            continue
        if name == "privacy" and not (ctx.epsilon > 0 and math.isfinite(ctx.epsilon)):
            report.checks.append(CheckResult(name, False, "no valid epsilon to audit"))
            continue
        required = not (name == "privacy" and not ctx.private)
        t0 = time.perf_counter()
        try:
            passed, message = True, fn(ctx)
        except Failure as exc:
            passed, message = False, str(exc)
        except Exception as exc:  # the selector broke in a way no check anticipated
            passed, message = False, f"raised {describe_exc(exc)}"
        if name == "privacy" and not ctx.private and passed:
            message = "the selector declares private = False; " + message
        report.checks.append(CheckResult(name, passed, message, required, time.perf_counter() - t0))
    report.audit = ctx.audit
    report.seconds = time.perf_counter() - start
    if raise_on_failure and not report.passed:
        raise SelectorCheckError(report)
    return report
