"""Conformance kits: the contract of a selector (check_selector) and of an agent (check_agent).

.. code-block:: python

    from dpbandits.testing import check_selector
    report = check_selector(MySelector(epsilon=1.0))   # raises SelectorCheckError on failure
    print(report)

:func:`check_selector` accepts anything the library accepts as a selector: a
:class:`dpbandits.selectors.Selector` subclass implementing the public hook
:meth:`~dpbandits.selectors.Selector.select_batch`, a :func:`dpbandits.selectors.from_function`
wrapper, a duck-typed object with ``epsilon``, ``private``, ``name`` and
``select(q, d, rng)``, or a registered name. It runs these groups of checks (docs/selectors.md
states the contract they test; each group lives in its own module of this package):

``api`` (:mod:`~dpbandits.testing.contract`)
    attributes (``name``, ``private``, ``epsilon``, ``guarantee``), recognised by
    :func:`dpbandits.selectors.make`, picklable (worker processes), and -- if
    ``uses_sensitivities`` is False -- an output that does not depend on ``d``.
``shapes`` (:mod:`~dpbandits.testing.contract`)
    integer indices of shape ``q.shape[:-1]`` in ``[0, K)`` for leading shapes ``()``, ``(1,)``,
    ``(5,)``, ``(2, 3)``, ``(0,)`` and ``K = 1, 2, 7, 300``; ``K = 1`` gives 0; the hook
    ``select_batch`` itself returns ``R`` integer indices in a dtype that holds ``K - 1`` (a
    ``uint8`` wraps at ``K = 300`` before ``select`` casts it); a leading shape is only a
    reshape (same seed: ``q`` of shape ``(2, 3, K)`` gives the indices of ``q.reshape(6, K)``);
    every form of ``d`` (None, a scalar, ``(K,)``, the full shape) with the same values gives
    the same indices; inputs are not modified and may be read-only; extreme but valid scores
    and sensitivities give valid indices or a ValueError.
``batch`` (:mod:`~dpbandits.testing.randomness`)
    one independent draw per row: a batch of ``N`` identical rows has the law of ``N`` single
    calls; consecutive rows are independent; a row's law does not depend on the other rows
    (e.g. on another row's sensitivities). Chi-square tests, each failing a correct selector
    with probability at most :data:`P_MIN` = 1e-6.
``seeding`` (:mod:`~dpbandits.testing.randomness`)
    same seed, same output (an int and ``default_rng`` of it alike); different seeds, different
    output; a Generator passed twice gives fresh draws (it is advanced, not copied); numpy's and
    Python's global random states are neither used nor reseeded.
``symmetry`` (:mod:`~dpbandits.testing.symmetry`)
    the law treats candidates alike and depends on score differences only, as every selector
    of the paper does: listing the candidates in reverse order reverses the law (``K = 10``,
    with a tie for the maximum); all-equal scores give the uniform law (ties broken at random,
    also at scores ``+-1e4 * 2/eps``); adding ``+-1e4 * 2/eps`` to every score leaves the law
    unchanged (large and negative scores). Chi-square tests at :data:`P_MIN`.
``validation`` (:mod:`~dpbandits.testing.validation`)
    NaN/inf/complex/bool/str/None scores, a scalar or empty ``q``, ragged rows, non-positive,
    non-finite, complex, bool or str sensitivities, a ``d`` not broadcastable to ``q`` and a
    bad ``rng`` (nested lists and float64 arrays alike): each must raise ValueError or TypeError
    (naming ``q`` or ``d``), never return indices; the constructor (rebuilt from
    ``get_params``) refuses a bad ``epsilon`` (0, -1, NaN, inf, ``True``, ``"1"``, ``1j``,
    ``None``).
``epsilon`` (:mod:`~dpbandits.testing.epsilon`)
    ``with_epsilon`` (if present) returns a copy with the new eps, leaves the original alone,
    keeps the other parameters and rejects bad eps; ``get_params`` (if present) rebuilds a
    selector drawing the same indices.
``compiled`` (:mod:`~dpbandits.testing.compiled`)
    a selector with a compiled row kernel (``compiled_kernel``, docs/selectors.md): the kernel
    and ``select`` draw the same indices from the same seed, or else have the same law
    (chi-square two-sample test at :data:`P_MIN`); the kernel accepts valid input, returns
    indices in ``[0, K)`` and writes nothing into ``q`` or ``d``. Nothing to check without one.
``privacy`` (:mod:`~dpbandits.testing.privacy`)
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

Cost: about 1.6 million selections for the audit and 0.3 million for the other checks; the
built-in selectors take 0.3-2 s each. A selector that loops over rows in Python takes
longer; lower ``draws`` (and the power) or ``skip=("privacy",)`` while developing.

Reproducibility: every check draws from its own generator, derived from ``rng`` and the
check's name, so a report is reproducible and does not change when other checks are skipped.

Agents: :func:`check_agent` (:mod:`~dpbandits.testing.agent_kit`) checks an agent against the
agent protocol. The product audits -- of a selector, a top-k mechanism, a whole agent end to end
(:func:`dpbandits.audit.audit_agent`) -- are in :mod:`dpbandits.audit`; this package imports
nothing from the experiment engine. Their old names here (``dpbandits.testing.audit``,
``audit_agent``, ...) work for one more release, with a ``DeprecationWarning``
(:mod:`~dpbandits.testing.moved`).
"""

from typing import Any

from dpbandits.testing import moved
from dpbandits.testing.agent_kit import AGENT_CHECK_NAMES, AgentCheckError, AgentReport, check_agent
from dpbandits.testing.harness import P_MIN
from dpbandits.testing.kit import CHECK_NAMES, GROUPS, check_selector
from dpbandits.testing.report import CheckResult, SelectorCheckError, SelectorReport

moved.install()


def __getattr__(name: str) -> Any:
    if name in moved.MOVED_NAMES:
        return moved.moved_attribute(name)
    raise AttributeError(f"module 'dpbandits.testing' has no attribute {name!r}")


__all__ = [
    "AGENT_CHECK_NAMES",
    "AgentCheckError",
    "AgentReport",
    "CHECK_NAMES",
    "GROUPS",
    "P_MIN",
    "CheckResult",
    "SelectorCheckError",
    "SelectorReport",
    "check_agent",
    "check_selector",
]
