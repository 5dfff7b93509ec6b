"""Conformance kit for selector authors: the selector contract and the privacy audit in one call.

.. code-block:: python

    from dpbandits.testing import check_selector
    report = check_selector(MySelector(epsilon=1.0))   # raises SelectorCheckError on failure
    print(report)

:func:`check_selector` accepts anything the library accepts as a selector: a
:class:`dpbandits.selectors.Selector` subclass implementing the public hook
:meth:`~dpbandits.selectors.Selector.select_batch`, a :func:`dpbandits.selectors.from_function`
wrapper, a duck-typed object with ``epsilon``, ``private``, ``name`` and
``select(q, d, rng)``, or a registered name. It runs these groups of checks (docs/selectors.md
states the contract they test):

``api``
    attributes (``name``, ``private``, ``epsilon``, ``guarantee``), recognised by
    :func:`dpbandits.selectors.make`, picklable (worker processes), and -- if
    ``uses_sensitivities`` is False -- an output that does not depend on ``d``.
``shapes``
    integer indices of shape ``q.shape[:-1]`` in ``[0, K)`` for leading shapes ``()``, ``(1,)``,
    ``(5,)``, ``(2, 3)``, ``(0,)`` and ``K = 1, 2, 7, 300``; ``K = 1`` gives 0; a leading shape
    is only a reshape (same seed: ``q`` of shape ``(2, 3, K)`` gives the indices of
    ``q.reshape(6, K)``); every form of ``d`` (None, a scalar, ``(K,)``, the full shape) with
    the same values gives the same indices; inputs are not modified and may be read-only;
    extreme but valid scores and sensitivities give valid indices or a ValueError.
``batch``
    one independent draw per row: a batch of ``N`` identical rows has the law of ``N`` single
    calls; consecutive rows are independent; a row's law does not depend on the other rows
    (e.g. on another row's sensitivities). Chi-square tests, each failing a correct selector
    with probability at most :data:`P_MIN` = 1e-6.
``seeding``
    same seed, same output (an int and ``default_rng`` of it alike); different seeds, different
    output; a Generator passed twice gives fresh draws (it is advanced, not copied).
``validation``
    NaN/inf/complex/bool/str/None scores, a scalar or empty ``q``, ragged rows, non-positive,
    non-finite, complex, bool or str sensitivities, a ``d`` not broadcastable to ``q`` and a
    bad ``rng``: each must raise ValueError or TypeError (naming ``q`` or ``d``), never
    return indices.
``epsilon``
    ``with_epsilon`` (if present) returns a copy with the new eps, leaves the original alone,
    keeps the other parameters and rejects bad eps; ``get_params`` (if present) rebuilds a
    selector drawing the same indices.
``privacy``
    :func:`dpbandits.audit.audit` on the hard neighbouring pairs
    (:data:`dpbandits.audit.HARD_PAIRS`, including the §IV-A and App. A/B constructions of the
    paper). For a selector with ``private = False`` a failure is expected: it is reported, but
    it does not make the report fail.

Power of the privacy audit. With ``n`` draws per input, the audit fails when the exact
Clopper-Pearson lower bound on the loss at some outcome exceeds eps. For an outcome with
probabilities ``p`` and ``p'`` on the two inputs the estimated log-ratio has standard error
``s ~ sqrt((1-p)/(n p) + (1-p')/(n p'))`` and the bound sits about ``z s`` below it, with
``z ~ 5.5`` (``alpha = 1e-6`` shared by the ``4K`` one-sided bounds). A true loss of ``2 eps``
is therefore caught with probability ``1 - 1e-6`` once ``eps >= (z + 4.75) s``, i.e. for
``n min(p, p') >= 2 (10.3 / eps)^2``: with the default ``n = 100_000`` and eps = 1 every
outcome of probability ``>= 0.0021`` under both inputs. On the tight pairs the built-in
mechanisms (``shift2``, ``swap``, ``one_up``) have outcome probabilities ``>= 0.05``, so a
selector that uses half the noise it should (loss ``2 eps``) fails with lower bounds near
``1.9 eps`` (the tests check RNM with scale ``D/eps`` and kRR with ``e^{2 eps}``).

Cost: about 1.6 million selections for the audit and 0.1 million for the other checks; the
built-in selectors take 0.3-1.7 s each. A selector that loops over rows in Python takes
longer; lower ``draws`` (and the power) or ``skip=("privacy",)`` while developing.

Reproducibility: every check draws from its own generator, derived from ``rng`` and the
check's name, so a report is reproducible and does not change when other checks are skipped.
"""

from __future__ import annotations

import copy
import math
import pickle
import re
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from dpbandits import audit as _audit
from dpbandits import selectors as _selectors
from dpbandits.selectors.base import RNGLike

__all__ = [
    "CHECK_NAMES",
    "GROUPS",
    "P_MIN",
    "CheckResult",
    "SelectorCheckError",
    "SelectorReport",
    "check_selector",
]

#: The groups of checks, in the order they run (``skip`` takes group or check names).
GROUPS: tuple[str, ...] = ("api", "shapes", "batch", "seeding", "validation", "epsilon", "privacy")

#: A statistical check fails when its p-value is below this (a correct selector: 1e-6 per test).
P_MIN = 1e-6

#: Rows per statistical batch check (per sample).
_N_ROWS = 20_000
#: Single calls compared with one batch of identical rows (each single call is a Python call).
_N_SINGLE = 1_000


@dataclass(frozen=True)
class CheckResult:
    """One check: its ``name`` (``group.check``), verdict and a readable ``message``.

    ``required = False`` marks a check whose failure is expected and does not fail the report
    (the privacy audit of a selector that declares ``private = False``).
    """

    name: str
    passed: bool
    message: str
    required: bool = True
    seconds: float = 0.0

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def ok(self) -> bool:
        """Passed, or failed where a failure is expected."""
        return self.passed or not self.required

    def __str__(self) -> str:
        if self.passed:
            verdict = "PASS"
        elif self.required:
            verdict = "FAIL"
        else:
            verdict = "FAIL (expected)"
        return f"{verdict:<15} {self.name}: {self.message}"


@dataclass
class SelectorReport:
    """The outcome of :func:`check_selector`: one :class:`CheckResult` per check.

    ``report.passed`` is True when every required check passed; ``report["privacy"]`` is one
    check; ``report.audit`` holds the :class:`dpbandits.audit.AuditResult` of each pair.
    """

    selector: str
    epsilon: float
    private: bool
    checks: list[CheckResult] = field(default_factory=list)
    audit: list[_audit.AuditResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        """Required checks that failed."""
        return [c for c in self.checks if not c.ok]

    @property
    def expected_failures(self) -> list[CheckResult]:
        """Checks that failed where a failure is expected (privacy of a non-private selector)."""
        return [c for c in self.checks if not c.passed and not c.required]

    @property
    def privacy_passed(self) -> bool | None:
        """The verdict of the privacy audit (None if it was skipped)."""
        found = [c for c in self.checks if c.name == "privacy"]
        return found[0].passed if found else None

    def names(self) -> list[str]:
        return [c.name for c in self.checks]

    def group(self, name: str) -> list[CheckResult]:
        """The checks of one group (``"shapes"``, ``"validation"``, ...)."""
        return [c for c in self.checks if c.group == name]

    def __getitem__(self, name: str) -> CheckResult:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check named {name!r}; checks: {', '.join(self.names())}")

    def __iter__(self) -> Iterator[CheckResult]:
        return iter(self.checks)

    def __len__(self) -> int:
        return len(self.checks)

    def summary(self) -> str:
        """One line: the verdict and the failed checks."""
        verdict = "PASSED" if self.passed else "FAILED"
        line = (
            f"check_selector({self.selector}): {verdict}, {len(self.checks)} checks, "
            f"{len(self.failures)} failed"
        )
        if self.expected_failures:
            line += f", {len(self.expected_failures)} expected failure(s)"
        if self.failures:
            line += ": " + ", ".join(c.name for c in self.failures)
        return line + f" ({self.seconds:.1f} s)"

    def __str__(self) -> str:
        lines = [self.summary()]
        lines += [f"  {c}" for c in self.checks]
        return "\n".join(lines)


class SelectorCheckError(AssertionError):
    """Raised by :func:`check_selector` when a required check fails; ``.report`` has them all."""

    def __init__(self, report: SelectorReport) -> None:
        self.report = report
        details = "\n".join(f"  {c}" for c in report.failures)
        super().__init__(f"{report.summary()}\n{details}")


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------
class _Failure(Exception):
    """A check's verdict: the selector broke the contract (the message says how)."""


def _describe_exc(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _show(x: Any) -> str:
    text = np.array2string(x, threshold=8, edgeitems=3) if isinstance(x, np.ndarray) else repr(x)
    return text if len(text) <= 120 else text[:117] + "..."


def _call(sel: Any, q: ArrayLike, d: ArrayLike | None, rng: Any) -> Any:
    """``sel.select(q, d, rng)``; a warning on valid input is a failure (a NaN on its way)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = sel.select(q, d, rng)
        except Exception as exc:
            raise _Failure(f"select raised {_describe_exc(exc)} on valid input") from exc
    if caught:
        w = caught[0]
        raise _Failure(f"select emitted {w.category.__name__}: {w.message} on valid input")
    return out


def _indices(out: Any, batch_shape: tuple[int, ...], k: int, what: str) -> NDArray[np.int64]:
    """Check the output contract (integer array of shape ``batch_shape`` in ``[0, K)``)."""
    if batch_shape == () and isinstance(out, (int, np.integer)) and not isinstance(out, bool):
        out = np.asarray(out)
    if not isinstance(out, np.ndarray):
        raise _Failure(f"{what}: returned {type(out).__name__}, expected a numpy.ndarray")
    if not np.issubdtype(out.dtype, np.integer):
        raise _Failure(f"{what}: returned dtype {out.dtype}, expected integers (int64)")
    if out.shape != batch_shape:
        raise _Failure(f"{what}: returned shape {out.shape}, expected {batch_shape}")
    bad = (out < 0) | (out >= k)
    if np.any(bad):
        value = int(np.asarray(out)[bad].ravel()[0])
        raise _Failure(f"{what}: returned index {value} outside [0, {k}) for K = {k}")
    return out.astype(np.int64, copy=False)


def _select(sel: Any, q: ArrayLike, d: ArrayLike | None, rng: Any, what: str) -> NDArray[np.int64]:
    qa = np.asarray(q)
    return _indices(_call(sel, q, d, rng), qa.shape[:-1], qa.shape[-1], what)


def _pool_rare_columns(table: NDArray[np.float64]) -> NDArray[np.float64]:
    """Merge the columns with an expected count below 5 into one (the chi-square condition);
    drop that column if it is still below 5 (the test then compares the other columns)."""

    def rare(t: NDArray[np.float64]) -> NDArray[np.bool_]:
        n = t.sum()
        return t.sum(axis=1).min() * t.sum(axis=0) / max(n, 1.0) < 5.0

    if table.size == 0:
        return table
    small = rare(table)
    if not small.any():
        return table
    pooled = np.column_stack([table[:, ~small], table[:, small].sum(axis=1)])
    return pooled if not rare(pooled)[-1] else pooled[:, :-1]


def _chi2_p(table: NDArray[np.float64]) -> float:
    """p-value of the chi-square test of independence of a contingency table's rows and columns.

    Rare columns and rows are pooled first; a table left with one row or column gives 1.
    """
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    table = _pool_rare_columns(table)
    table = _pool_rare_columns(table[table.sum(axis=1) > 0].T).T
    if min(table.shape) < 2:
        return 1.0
    return float(stats.chi2_contingency(table)[1])


def _two_sample_p(a: NDArray[np.int64], b: NDArray[np.int64], k: int) -> float:
    """Chi-square test that two samples of indices in ``[0, K)`` have one law (p-value)."""
    return _chi2_p(np.vstack([np.bincount(a, minlength=k), np.bincount(b, minlength=k)]))


def _independence_p(x: NDArray[np.int64], y: NDArray[np.int64], k: int) -> float:
    """Chi-square test of independence of paired indices ``(x[i], y[i])`` (p-value)."""
    table = np.zeros((k, k))
    np.add.at(table, (x, y), 1)
    return _chi2_p(table)


def _real_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)
    )


class _Guarded:
    """The selector with its outputs checked, for the audit (an index out of range says so)."""

    def __init__(self, sel: Any) -> None:
        self.sel = sel
        self.name = getattr(sel, "name", type(sel).__name__)
        self.epsilon = sel.epsilon
        self.private = bool(getattr(sel, "private", True))

    def select(self, q: ArrayLike, d: ArrayLike | None, rng: Any) -> NDArray[np.int64]:
        qa = np.asarray(q)
        return _indices(self.sel.select(q, d, rng), qa.shape[:-1], qa.shape[-1], "audit")


@dataclass
class _Context:
    sel: Any
    epsilon: float
    private: bool
    root: int
    draws: int
    alpha: float
    pairs: list[_audit.NeighbouringPair] | None
    audit: list[_audit.AuditResult] = field(default_factory=list)

    def rng(self, name: str, i: int = 0) -> np.random.Generator:
        """A generator of the kit's own, fixed by ``rng`` and the check's name."""
        return np.random.default_rng([self.root, zlib.crc32(name.encode()), i])

    def seed(self, name: str, i: int = 0) -> int:
        """An int seed passed to the selector, fixed by ``rng`` and the check's name."""
        return int(self.rng(name, i).integers(2**62))

    def scale(self) -> float:
        """Scores in units of 2/eps, so that the laws tested are not degenerate at any eps."""
        return 2.0 / self.epsilon if math.isfinite(2.0 / self.epsilon) else 1.0


# Two K = 4 problems: A with a tie (so that greedy is random too), B with other scores and much
# larger/smaller sensitivities (a selector mixing rows would change A's law).
_Q_A = np.array([0.0, 1.0, 1.0, 0.5])
_D_A = np.array([1.0, 0.5, 1.0, 2.0])
_Q_B = np.array([3.0, -1.0, 0.0, 2.0])
_D_B = np.array([10.0, 10.0, 0.1, 5.0])


# ----------------------------------------------------------------------------------------------
# api
# ----------------------------------------------------------------------------------------------
def _api_attributes(ctx: _Context) -> str:
    sel = ctx.sel
    problems = []
    name = getattr(sel, "name", None)
    if not isinstance(name, str) or not name:
        problems.append(f"name must be a non-empty str, got {name!r}")
    private = getattr(sel, "private", None)
    if not isinstance(private, bool):
        problems.append(f"private must be a bool, got {private!r}")
    eps: Any = getattr(sel, "epsilon", None)
    if not _real_number(eps) or not (math.isfinite(float(eps)) and float(eps) > 0):
        problems.append(f"epsilon must be a finite real number > 0, got {eps!r}")
    guarantee = getattr(sel, "guarantee", "")
    if not isinstance(guarantee, str):
        problems.append(f"guarantee must be a str, got {guarantee!r}")
    if not callable(getattr(sel, "select", None)):
        problems.append("select(q, d, rng) is missing")
    try:
        text = repr(sel)
    except Exception as exc:
        problems.append(f"repr raised {_describe_exc(exc)}")
        text = "?"
    if problems:
        raise _Failure("; ".join(problems))
    return f"name={name!r}, private={private}, epsilon={eps!r}, guarantee={guarantee!r}; {text}"


def _api_protocol(ctx: _Context) -> str:
    try:
        made = _selectors.make(ctx.sel)
    except Exception as exc:
        raise _Failure(f"dpbandits.selectors.make rejects it: {_describe_exc(exc)}") from exc
    if made is not ctx.sel:
        raise _Failure("dpbandits.selectors.make(sel) did not return the selector itself")
    return "accepted by dpbandits.selectors.make (usable by agents, scenarios, the auditor)"


def _api_pickle(ctx: _Context) -> str:
    try:
        copy = pickle.loads(pickle.dumps(ctx.sel))
    except Exception as exc:
        raise _Failure(
            f"cannot be pickled ({_describe_exc(exc)}): runs with worker processes (jobs > 1) "
            "need a module-level class or function"
        ) from exc
    q = np.tile(_Q_A * ctx.scale(), (50, 1))
    seed = ctx.seed("api.pickle")
    a = _select(ctx.sel, q, _D_A, seed, "original")
    b = _select(copy, q, _D_A, seed, "unpickled copy")
    if not np.array_equal(a, b):
        raise _Failure("the unpickled copy draws other indices for the same seed")
    return "a pickled copy draws the same indices for the same seed"


def _api_uses_sensitivities(ctx: _Context) -> str:
    if getattr(ctx.sel, "uses_sensitivities", True) is not False:
        return "uses_sensitivities is not False: nothing to check"
    q = np.tile(_Q_A * ctx.scale(), (200, 1))
    seed = ctx.seed("api.uses_sensitivities")
    a = _select(ctx.sel, q, None, seed, "d = None")
    b = _select(ctx.sel, q, np.tile(_D_B, (200, 1)), seed, "other d")
    if not np.array_equal(a, b):
        raise _Failure("uses_sensitivities = False, but other sensitivities change the output")
    return "uses_sensitivities = False and the output does not depend on d"


# ----------------------------------------------------------------------------------------------
# shapes
# ----------------------------------------------------------------------------------------------
_BATCH_SHAPES: tuple[tuple[int, ...], ...] = ((), (1,), (5,), (2, 3), (0,))
_KS = (1, 2, 7, 300)


def _shapes_output(ctx: _Context) -> str:
    gen = ctx.rng("shapes.output")
    done = 0
    for k in _KS:
        for batch in _BATCH_SHAPES:
            q = gen.normal(size=(*batch, k)) * ctx.scale()
            d = gen.uniform(0.5, 2.0, size=k)
            out = _select(ctx.sel, q, d, ctx.seed("shapes.output", done), f"q {q.shape}")
            if k == 1 and np.any(out != 0):
                raise _Failure(f"K = 1 must give index 0, got {_show(out)}")
            done += 1
    # array-likes and rng = None are accepted too
    _select(ctx.sel, [[0.0, 1.0, 2.0]], [1.0, 1.0, 1.0], None, "nested lists, rng=None")
    return (
        f"integer indices of shape q.shape[:-1] in [0, K) for {done} shapes "
        f"(batch {', '.join(map(str, _BATCH_SHAPES))}; K = {', '.join(map(str, _KS))})"
    )


def _shapes_reshape(ctx: _Context) -> str:
    gen = ctx.rng("shapes.reshape")
    q = gen.normal(size=(2, 3, 5)) * ctx.scale()
    d = gen.uniform(0.5, 2.0, size=5)
    seed = ctx.seed("shapes.reshape")
    a = _select(ctx.sel, q, d, seed, "q (2, 3, 5)")
    b = _select(ctx.sel, q.reshape(6, 5), d, seed, "q (6, 5)")
    if not np.array_equal(a.reshape(6), b):
        raise _Failure(
            f"same seed: q of shape (2, 3, 5) gave {_show(a.reshape(6))}, its reshape (6, 5) "
            f"gave {_show(b)}; the leading shape must only be a reshape"
        )
    one = _select(ctx.sel, q[0, 0], d, seed, "q (5,)")
    row = _select(ctx.sel, q[0, :1], d, seed, "q (1, 5)")
    if int(one) != int(row[0]):
        raise _Failure(f"same seed: q of shape (5,) gave {int(one)}, q[None] gave {int(row[0])}")
    return "same seed: (2, 3, K) == (6, K) reshaped, and (K,) == a batch of one row"


def _shapes_d_forms(ctx: _Context) -> str:
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
    ref = _select(ctx.sel, q, None, seed, "d = None")
    for label, d in forms[1:]:
        out = _select(ctx.sel, q, d, seed, f"d = {label}")
        if not np.array_equal(out, ref):
            raise _Failure(f"same seed and unit sensitivities: d = {label} differs from d = None")
    return f"unit sensitivities given as {', '.join(f[0] for f in forms)}: same indices"


def _shapes_inputs(ctx: _Context) -> str:
    gen = ctx.rng("shapes.inputs")
    q = gen.normal(size=(30, 4)) * ctx.scale()
    d = gen.uniform(0.5, 2.0, size=(30, 4))
    q0, d0 = q.copy(), d.copy()
    _select(ctx.sel, q, d, ctx.seed("shapes.inputs"), "writable q, d")
    if not (np.array_equal(q, q0) and np.array_equal(d, d0)):
        raise _Failure("select modified its input q or d in place")
    q.setflags(write=False)
    d.setflags(write=False)
    _select(ctx.sel, q, d, ctx.seed("shapes.inputs", 1), "read-only q, d")
    _select(ctx.sel, np.broadcast_to(q0[0], (30, 4)), 1.0, 1, "broadcast (read-only) q")
    return "inputs left unchanged; read-only and broadcast inputs accepted"


def _shapes_extreme(ctx: _Context) -> str:
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
                refused.append(f"{label} ({_describe_exc(exc)})")
                continue
            except Exception as exc:
                raise _Failure(f"{label}: raised {_describe_exc(exc)}") from exc
        if caught:
            w = caught[0]
            raise _Failure(f"{label}: emitted {w.category.__name__}: {w.message}")
        _indices(out, (50,), 3, label)
    msg = f"{len(cases) - len(refused)} extreme valid inputs give valid indices"
    return msg + (f"; refused with ValueError: {'; '.join(refused)}" if refused else "")


# ----------------------------------------------------------------------------------------------
# batch
# ----------------------------------------------------------------------------------------------
def _batch_identical_rows(ctx: _Context) -> str:
    q = _Q_A * ctx.scale()
    batch = _select(ctx.sel, np.tile(q, (_N_SINGLE, 1)), _D_A, ctx.seed("batch.law"), "batch")
    gen = ctx.rng("batch.law", 1)
    single = np.array(
        [int(_select(ctx.sel, q, _D_A, gen, "single row")) for _ in range(_N_SINGLE)],
        dtype=np.int64,
    )
    p = _two_sample_p(batch, single, q.size)
    counts = f"batch {np.bincount(batch, minlength=4)}, single {np.bincount(single, minlength=4)}"
    if p < P_MIN:
        raise _Failure(
            f"{_N_SINGLE} identical rows in one batch and {_N_SINGLE} single calls have "
            f"different laws (chi-square p = {p:.2g}): {counts}"
        )
    return f"a batch of identical rows has the law of single calls (p = {p:.2g}; {counts})"


def _batch_rows_independent(ctx: _Context) -> str:
    q = np.tile(_Q_A * ctx.scale(), (_N_ROWS, 1))
    out = _select(ctx.sel, q, _D_A, ctx.seed("batch.independent"), "batch")
    p = _independence_p(out[0::2], out[1::2], 4)
    if p < P_MIN:
        raise _Failure(
            f"consecutive rows of a batch are dependent (chi-square p = {p:.2g} on "
            f"{_N_ROWS // 2} pairs): each row needs its own noise"
        )
    return f"consecutive rows independent (chi-square p = {p:.2g}, {_N_ROWS // 2} pairs)"


def _batch_rows_separate(ctx: _Context) -> str:
    s = ctx.scale()
    qa, qb = _Q_A * s, _Q_B * s
    n = _N_ROWS
    mixed_q = np.empty((2 * n, 4))
    mixed_d = np.empty((2 * n, 4))
    mixed_q[0::2], mixed_q[1::2] = qa, qb
    mixed_d[0::2], mixed_d[1::2] = _D_A, _D_B
    mixed = _select(ctx.sel, mixed_q, mixed_d, ctx.seed("batch.separate"), "mixed batch")
    only_a = _select(ctx.sel, np.tile(qa, (n, 1)), _D_A, ctx.seed("batch.separate", 1), "A rows")
    only_b = _select(ctx.sel, np.tile(qb, (n, 1)), _D_B, ctx.seed("batch.separate", 2), "B rows")
    p_a = _two_sample_p(mixed[0::2], only_a, 4)
    p_b = _two_sample_p(mixed[1::2], only_b, 4)
    if min(p_a, p_b) < P_MIN:
        which = "A" if p_a < p_b else "B"
        raise _Failure(
            f"the law of rows {which} changes when rows with other scores and sensitivities "
            f"share the batch (chi-square p = {min(p_a, p_b):.2g}): the selection of a row "
            "must depend on that row only (e.g. D = max d per row, not over the batch)"
        )
    return f"a row's law does not depend on the other rows (p = {p_a:.2g}, {p_b:.2g})"


# ----------------------------------------------------------------------------------------------
# seeding
# ----------------------------------------------------------------------------------------------
def _seeding_inputs(ctx: _Context) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    q = np.vstack([np.tile(_Q_A * ctx.scale(), (32, 1)), np.zeros((32, 4))])
    return q, np.tile(_D_A, (64, 1))


def _seeding_same_seed(ctx: _Context) -> str:
    q, d = _seeding_inputs(ctx)
    seed = ctx.seed("seeding.same_seed")
    a = _select(ctx.sel, q, d, seed, "first call")
    b = _select(ctx.sel, q, d, seed, "second call")
    if not np.array_equal(a, b):
        raise _Failure(
            "two calls with the same seed gave different indices: the selector draws from a "
            "source other than rng (np.random, an unseeded default_rng(), ...)"
        )
    c = _select(ctx.sel, q, d, np.random.default_rng(seed), "default_rng(seed)")
    if not np.array_equal(a, c):
        raise _Failure("rng=seed and rng=numpy.random.default_rng(seed) gave different indices")
    return "same seed, same indices (an int seed and default_rng(seed) alike)"


def _seeding_different_seeds(ctx: _Context) -> str:
    q, d = _seeding_inputs(ctx)
    a = _select(ctx.sel, q, d, ctx.seed("seeding.different", 1), "seed 1")
    b = _select(ctx.sel, q, d, ctx.seed("seeding.different", 2), "seed 2")
    if np.array_equal(a, b):
        raise _Failure(
            "two different seeds gave identical indices on 64 rows with ties: the selector "
            "ignores rng (a fixed internal seed?)"
        )
    return "different seeds, different indices"


def _seeding_generator_advances(ctx: _Context) -> str:
    q, d = _seeding_inputs(ctx)
    gen = np.random.default_rng(ctx.seed("seeding.advances"))
    a = _select(ctx.sel, q, d, gen, "first call")
    b = _select(ctx.sel, q, d, gen, "second call")
    if np.array_equal(a, b):
        raise _Failure(
            "two calls with the same Generator gave identical indices: the selector must draw "
            "from the generator it is given (not a copy or a re-seeded one)"
        )
    return "a Generator passed twice gives fresh draws"


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------
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


def _validation(case: str) -> Callable[[_Context], str]:
    q, d, rng, argument = _BAD_INPUTS[case]

    def check(ctx: _Context) -> str:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = ctx.sel.select(q, d, rng)
            except (ValueError, TypeError) as exc:
                message = str(exc)
                if argument is not None and not re.search(rf"\b{argument}\b", message):
                    raise _Failure(
                        f"raised {type(exc).__name__} without naming {argument!r}: {message!r}"
                    ) from exc
                return f"{type(exc).__name__}: {message}"[:200]
            except Exception as exc:
                raise _Failure(
                    f"raised {_describe_exc(exc)}; expected ValueError or TypeError"
                ) from exc
        how = f" ({caught[0].category.__name__}: {caught[0].message})" if caught else ""
        raise _Failure(f"accepted it{how} and returned {_show(out)}; expected ValueError/TypeError")

    check.__doc__ = f"bad input {case}"
    return check


# ----------------------------------------------------------------------------------------------
# epsilon
# ----------------------------------------------------------------------------------------------
_BAD_EPSILONS: tuple[Any, ...] = (0.0, -1.0, math.nan, math.inf, True, "1", 1 + 0j, None)


def _params_without_eps(sel: Any) -> dict[str, Any] | None:
    get = getattr(sel, "get_params", None)
    if not callable(get):
        return None
    params = dict(get())
    params.pop("epsilon", None)
    return params


def _epsilon_with_epsilon(ctx: _Context) -> str:
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
    for bad in _BAD_EPSILONS:
        try:
            with_epsilon(bad)
        except (ValueError, TypeError):
            continue
        except Exception as exc:
            problems.append(f"with_epsilon({bad!r}) raised {_describe_exc(exc)}")
            continue
        problems.append(f"with_epsilon({bad!r}) was accepted")
    if problems:
        raise _Failure("; ".join(problems))
    return (
        f"with_epsilon({new_eps:g}) is a copy with the new eps (original unchanged); "
        f"rejects {', '.join(map(repr, _BAD_EPSILONS))}"
    )


def _epsilon_get_params(ctx: _Context) -> str:
    sel = ctx.sel
    get = getattr(sel, "get_params", None)
    if not callable(get):
        return "no get_params (optional)"
    params = dict(get())
    if "epsilon" in params and params["epsilon"] != sel.epsilon:
        raise _Failure(f"get_params()['epsilon'] = {params['epsilon']!r} != {sel.epsilon!r}")
    rebuilt = type(sel)(**params)
    q = np.tile(_Q_A * ctx.scale(), (100, 1))
    seed = ctx.seed("epsilon.get_params")
    if not np.array_equal(
        _select(sel, q, _D_A, seed, "original"), _select(rebuilt, q, _D_A, seed, "rebuilt")
    ):
        raise _Failure("type(sel)(**sel.get_params()) draws other indices for the same seed")
    return f"type(sel)(**get_params()) rebuilds it ({', '.join(params)})"


# ----------------------------------------------------------------------------------------------
# privacy
# ----------------------------------------------------------------------------------------------
def _privacy(ctx: _Context) -> str:
    guarded: Any = _Guarded(ctx.sel)  # duck-typed selector: audit accepts it like make() does
    results = _audit.audit(
        guarded, ctx.pairs, draws=ctx.draws, alpha=ctx.alpha, rng=ctx.rng("privacy")
    )
    ctx.audit = results
    failed = [r for r in results if not r.passed]
    worst = max(results, key=lambda r: r.loss_lower)
    head = f"{len(results)} hard neighbouring pairs, {ctx.draws} draws per input"
    if failed:
        lines = "; ".join(
            f"{r.pair}: loss {r.loss:.3g}, lower bound {r.loss_lower:.3g} > eps {r.epsilon:g}"
            for r in failed
        )
        note = "" if ctx.private else " (the selector declares private = False)"
        raise _Failure(f"privacy loss above eps on {len(failed)} of {head}{note}: {lines}")
    return (
        f"{head}: every lower bound <= eps {ctx.epsilon:g} (worst {worst.pair}: loss "
        f"{worst.loss:.3g}, lower bound {worst.loss_lower:.3g})"
    )


# ----------------------------------------------------------------------------------------------
# the kit
# ----------------------------------------------------------------------------------------------
_CHECKS: list[tuple[str, Callable[[_Context], str]]] = [
    ("api.attributes", _api_attributes),
    ("api.protocol", _api_protocol),
    ("api.pickle", _api_pickle),
    ("api.uses_sensitivities", _api_uses_sensitivities),
    ("shapes.output", _shapes_output),
    ("shapes.reshape", _shapes_reshape),
    ("shapes.d_forms", _shapes_d_forms),
    ("shapes.inputs", _shapes_inputs),
    ("shapes.extreme", _shapes_extreme),
    ("batch.identical_rows", _batch_identical_rows),
    ("batch.rows_independent", _batch_rows_independent),
    ("batch.rows_separate", _batch_rows_separate),
    ("seeding.same_seed", _seeding_same_seed),
    ("seeding.different_seeds", _seeding_different_seeds),
    ("seeding.generator_advances", _seeding_generator_advances),
    *((f"validation.{case}", _validation(case)) for case in _BAD_INPUTS),
    ("epsilon.with_epsilon", _epsilon_with_epsilon),
    ("epsilon.get_params", _epsilon_get_params),
    ("privacy", _privacy),
]

#: Every check name, in order.
CHECK_NAMES: tuple[str, ...] = tuple(name for name, _ in _CHECKS)


def _check_positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def _resolve(selector: Any, epsilon: Any) -> Any:
    if isinstance(selector, str):
        sel = _selectors.make(selector)
    elif callable(getattr(selector, "select", None)):
        sel = selector  # missing attributes are reported by api.attributes / api.protocol
    else:
        raise TypeError(
            f"selector must be a name or an object with select(q, d, rng), got "
            f"{type(selector).__name__}"
        )
    if epsilon is None:
        return sel
    if not _real_number(epsilon) or not (math.isfinite(float(epsilon)) and float(epsilon) > 0):
        raise ValueError(f"epsilon must be a finite real number > 0, got {epsilon!r}")
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
        Run the empirical privacy audit (:func:`dpbandits.audit.audit`).
    draws, alpha, pairs:
        Draws per input, family-wise error per pair and the neighbouring pairs of the audit
        (default: every pair of :data:`dpbandits.audit.HARD_PAIRS`); see the module docstring
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
    draws = _check_positive_int(draws, "draws")
    if not _real_number(alpha) or not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be a real number in (0, 1), got {alpha!r}")
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
    ctx = _Context(
        sel=sel,
        epsilon=float(eps) if _real_number(eps) else math.nan,
        private=bool(getattr(sel, "private", True)),
        root=int(np.random.default_rng(rng).integers(2**62)),
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
        except _Failure as exc:
            passed, message = False, str(exc)
        except Exception as exc:  # the selector broke in a way no check anticipated
            passed, message = False, f"raised {_describe_exc(exc)}"
        if name == "privacy" and not ctx.private and passed:
            message = "the selector declares private = False; " + message
        report.checks.append(CheckResult(name, passed, message, required, time.perf_counter() - t0))
    report.audit = ctx.audit
    report.seconds = time.perf_counter() - start
    if raise_on_failure and not report.passed:
        raise SelectorCheckError(report)
    return report
