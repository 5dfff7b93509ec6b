"""The interface checks of the kit: attributes, registry, pickling, shapes, input handling."""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from dpbandits import selectors
from dpbandits.core import checks
from dpbandits.selectors.base import _kernel_batch, prepare_inputs
from dpbandits.testing.harness import Context, Failure, describe_exc, draw, indices, show
from dpbandits.testing.problems import D_A, D_B, Q_A

__all__ = ["CHECKS"]


def _api_attributes(ctx: Context) -> str:
    sel = ctx.sel
    problems = []
    name = getattr(sel, "name", None)
    if not isinstance(name, str) or not name:
        problems.append(f"name must be a non-empty str, got {name!r}")
    private = getattr(sel, "private", None)
    if not isinstance(private, bool):
        problems.append(f"private must be a bool, got {private!r}")
    eps: Any = getattr(sel, "epsilon", None)
    try:
        checks.positive_number(eps, "epsilon")  # the library's one input policy
    except (TypeError, ValueError) as exc:
        problems.append(str(exc))
    guarantee = getattr(sel, "guarantee", "")
    if not isinstance(guarantee, str):
        problems.append(f"guarantee must be a str, got {guarantee!r}")
    if not callable(getattr(sel, "select", None)):
        problems.append("select(q, d, rng) is missing")
    try:
        text = repr(sel)
    except Exception as exc:
        problems.append(f"repr raised {describe_exc(exc)}")
        text = "?"
    if problems:
        raise Failure("; ".join(problems))
    return f"name={name!r}, private={private}, epsilon={eps!r}, guarantee={guarantee!r}; {text}"


def _api_protocol(ctx: Context) -> str:
    try:
        made = selectors.make(ctx.sel)
    except Exception as exc:
        raise Failure(f"dpbandits.selectors.make rejects it: {describe_exc(exc)}") from exc
    if made is not ctx.sel:
        raise Failure("dpbandits.selectors.make(sel) did not return the selector itself")
    return "accepted by dpbandits.selectors.make (usable by agents, scenarios, the auditor)"


def _api_pickle(ctx: Context) -> str:
    try:
        copy = pickle.loads(pickle.dumps(ctx.sel))
    except Exception as exc:
        raise Failure(
            f"cannot be pickled ({describe_exc(exc)}): runs with worker processes (jobs > 1) "
            "need a module-level class or function"
        ) from exc
    q = np.tile(Q_A * ctx.scale(), (50, 1))
    seed = ctx.seed("api.pickle")
    a = draw(ctx.sel, q, D_A, seed, "original")
    b = draw(copy, q, D_A, seed, "unpickled copy")
    if not np.array_equal(a, b):
        raise Failure("the unpickled copy draws other indices for the same seed")
    return "a pickled copy draws the same indices for the same seed"


def _api_uses_sensitivities(ctx: Context) -> str:
    if getattr(ctx.sel, "uses_sensitivities", True) is not False:
        return "uses_sensitivities is not False: nothing to check"
    q = np.tile(Q_A * ctx.scale(), (200, 1))
    seed = ctx.seed("api.uses_sensitivities")
    a = draw(ctx.sel, q, None, seed, "d = None")
    b = draw(ctx.sel, q, np.tile(D_B, (200, 1)), seed, "other d")
    if not np.array_equal(a, b):
        raise Failure("uses_sensitivities = False, but other sensitivities change the output")
    return "uses_sensitivities = False and the output does not depend on d"


# ----------------------------------------------------------------------------------------------
# shapes
# ----------------------------------------------------------------------------------------------
_BATCH_SHAPES: tuple[tuple[int, ...], ...] = ((), (1,), (5,), (2, 3), (0,))
_KS = (1, 2, 7, 300)


def _shapes_output(ctx: Context) -> str:
    gen = ctx.rng("shapes.output")
    done = 0
    for k in _KS:
        for batch in _BATCH_SHAPES:
            q = gen.normal(size=(*batch, k)) * ctx.scale()
            d = gen.uniform(0.5, 2.0, size=k)
            out = draw(ctx.sel, q, d, ctx.seed("shapes.output", done), f"q {q.shape}, K = {k}")
            if k == 1 and np.any(out != 0):
                raise Failure(f"K = 1 must give index 0, got {show(out)}")
            done += 1
    # array-likes and rng = None are accepted too
    draw(ctx.sel, [[0.0, 1.0, 2.0]], [1.0, 1.0, 1.0], None, "nested lists, rng=None")
    return (
        f"integer indices of shape q.shape[:-1] in [0, K) for {done} shapes "
        f"(batch {', '.join(map(str, _BATCH_SHAPES))}; K = {', '.join(map(str, _KS))})"
    )


def _shapes_select_batch(ctx: Context) -> str:
    """The raw output of the public hook, before ``Selector.select`` casts it to int64."""
    select_batch = getattr(ctx.sel, "select_batch", None)
    if not callable(select_batch):
        return "no select_batch (a duck-typed selector): its select output is checked above"
    gen = ctx.rng("shapes.select_batch")
    rows = 5
    for k in _KS[1:]:  # the hook is called with K >= 2 only
        q, d, _ = prepare_inputs(gen.normal(size=(rows, k)) * ctx.scale(), gen.uniform(0.5, 2.0, k))
        # as ``select`` hands them: read-only and C-contiguous (``d`` is broadcast from one row
        # here; a strided view would compile each row kernel once more, for this check alone)
        q, d = _kernel_batch(q, d)
        what = f"select_batch on q {q.shape}"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = np.asarray(select_batch(q, d, np.random.default_rng(ctx.seed(what))))
            except Exception as exc:
                raise Failure(f"{what}: raised {describe_exc(exc)} on valid input") from exc
        if caught:
            raise Failure(f"{what}: emitted {caught[0].category.__name__}: {caught[0].message}")
        # a dtype that cannot hold K - 1 (uint8 at K = 300) has wrapped before select's cast
        indices(out, (rows,), k, what)
    return (
        f"the hook select_batch returns R integer indices in [0, K) (shape (R,), a dtype "
        f"holding K - 1) for K = {', '.join(map(str, _KS[1:]))}"
    )


def _shapes_reshape(ctx: Context) -> str:
    gen = ctx.rng("shapes.reshape")
    q = gen.normal(size=(2, 3, 5)) * ctx.scale()
    d = gen.uniform(0.5, 2.0, size=5)
    seed = ctx.seed("shapes.reshape")
    a = draw(ctx.sel, q, d, seed, "q (2, 3, 5)")
    b = draw(ctx.sel, q.reshape(6, 5), d, seed, "q (6, 5)")
    if not np.array_equal(a.reshape(6), b):
        raise Failure(
            f"same seed: q of shape (2, 3, 5) gave {show(a.reshape(6))}, its reshape (6, 5) "
            f"gave {show(b)}; the leading shape must only be a reshape"
        )
    one = draw(ctx.sel, q[0, 0], d, seed, "q (5,)")
    row = draw(ctx.sel, q[0, :1], d, seed, "q (1, 5)")
    if int(one) != int(row[0]):
        raise Failure(f"same seed: q of shape (5,) gave {int(one)}, q[None] gave {int(row[0])}")
    return "same seed: (2, 3, K) == (6, K) reshaped, and (K,) == a batch of one row"


def _shapes_d_forms(ctx: Context) -> str:
    q = np.random.default_rng(ctx.seed("shapes.d_forms", 1)).normal(size=(40, 3)) * ctx.scale()
    seed = ctx.seed("shapes.d_forms")
    forms: list[tuple[str, Any]] = [
        ("None", None),
        ("1.0", 1.0),
        ("1", 1),
        ("np.float64(1)", np.float64(1.0)),
        ("[1, 1, 1]", [1.0, 1.0, 1.0]),
        ("ones(K)", np.ones(3)),
        ("ones(q.shape)", np.ones(q.shape)),
        ("ones((1, K))", np.ones((1, 3))),
    ]
    ref = draw(ctx.sel, q, None, seed, "d = None")
    for label, d in forms[1:]:
        out = draw(ctx.sel, q, d, seed, f"d = {label}")
        if not np.array_equal(out, ref):
            raise Failure(f"same seed and unit sensitivities: d = {label} differs from d = None")
    return f"unit sensitivities given as {', '.join(f[0] for f in forms)}: same indices"


def _shapes_inputs(ctx: Context) -> str:
    gen = ctx.rng("shapes.inputs")
    q = gen.normal(size=(30, 4)) * ctx.scale()
    d = gen.uniform(0.5, 2.0, size=(30, 4))
    q0, d0 = q.copy(), d.copy()
    draw(ctx.sel, q, d, ctx.seed("shapes.inputs"), "writable q, d")
    if not (np.array_equal(q, q0) and np.array_equal(d, d0)):
        raise Failure("select modified its input q or d in place")
    q.setflags(write=False)
    d.setflags(write=False)
    draw(ctx.sel, q, d, ctx.seed("shapes.inputs", 1), "read-only q, d")
    draw(ctx.sel, np.broadcast_to(q0[0], (30, 4)), 1.0, 1, "broadcast (read-only) q")
    return "inputs left unchanged; read-only and broadcast inputs accepted"


def _shapes_extreme(ctx: Context) -> str:
    """Extreme but valid inputs: valid indices, or a clear refusal (ValueError)."""
    big, tiny = 1e300, 1e-300
    cases: list[tuple[str, Any, Any]] = [
        ("scores +-1e308", [[1e308, -1e308, 0.0]], 1.0),
        ("scores 1e300 with a gap of 1", [[big, big - 1.0, big]], 1.0),
        ("tiny sensitivities 1e-300", [[0.0, 1.0, 0.5]], tiny),
        ("huge sensitivities 1e300", [[0.0, 1.0, 0.5]], big),
        ("sensitivities 1e-300 to 1e300", [[0.0, 1.0, 0.5]], [tiny, 1.0, big]),
        ("scores 5e-324 apart", [[0.0, 5e-324, 0.0]], 1.0),
    ]
    refused = []
    for label, q, d in cases:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = ctx.sel.select(np.array(q * 50), d, ctx.seed("shapes.extreme"))
            except ValueError as exc:
                refused.append(f"{label} ({describe_exc(exc)})")
                continue
            except Exception as exc:
                raise Failure(f"{label}: raised {describe_exc(exc)}") from exc
        if caught:
            w = caught[0]
            raise Failure(f"{label}: emitted {w.category.__name__}: {w.message}")
        indices(out, (50,), 3, label)
    msg = f"{len(cases) - len(refused)} extreme valid inputs give valid indices"
    return msg + (f"; refused with ValueError: {'; '.join(refused)}" if refused else "")


CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    ("api.attributes", _api_attributes),
    ("api.protocol", _api_protocol),
    ("api.pickle", _api_pickle),
    ("api.uses_sensitivities", _api_uses_sensitivities),
    ("shapes.output", _shapes_output),
    ("shapes.select_batch", _shapes_select_batch),
    ("shapes.reshape", _shapes_reshape),
    ("shapes.d_forms", _shapes_d_forms),
    ("shapes.inputs", _shapes_inputs),
    ("shapes.extreme", _shapes_extreme),
]
