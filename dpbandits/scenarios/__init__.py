"""The paper's synthetic selection scenarios (§VI, App. E, App. F; §VI, App. H).

A *scenario* is a recipe for the pairs ``{(q_a, Delta_a)}`` of K candidates. Following the
experimental design of §VI-a, each candidate ``a`` has a score distribution ``P_a``; ``N``
trials draw one score per candidate each; the sensitivity ``Delta_a`` is the spread between two
quantiles (default the 10th and 90th, §VI-a; the short version uses 5th/95th) of candidate a's
``N`` sampled scores, and every score is clipped to that range. The error of a trial is then
``max_a q_a - q_selected`` on the clipped scores (see :mod:`dpbandits.scenarios.evaluation`).

Scenarios, numbered as in the paper:

=====================  =======================================================  ============
name                   score distribution (K = 100)                             correlation
=====================  =======================================================  ============
``1``                  bimodal: high scores 1 with Delta 1.8, low -1 with 1     positive
``2``                  bimodal: high scores 1 with Delta 1, low -1 with 1.8     negative
``3``                  bimodal: each group half Delta 1.8, half Delta 1         none
``4``                  ``N(log a, sigma_a^2)``, ``sigma`` sorted truncated      positive
``5``                  ``N(0.1 a, (2.3 - 0.02 a)^2)``                           negative
``6``                  ``N(mu_a, sigma_a^2)``, ``mu ~ U[0,1]``, sigma trunc.   none
``7`` / ``8``          two user groups with opposite slopes, sigma 0.5 / 3     mixed
``corr:t=<t>``         increasing-correlation family of Fig. 6                 sign of t
``<k>:p=<p>``          bimodal scenario k in {1,2,3} with a fraction p of high  as k
                       scores (App. E, Fig. 13)
=====================  =======================================================  ============

Every generator is deterministic given its seed: ``scenario.sample(n_trials, seed)`` first draws
the scenario's own random parameters (e.g. the ``sigma_a`` of scenario 4) and then the scores,
from one :class:`numpy.random.Generator`; so the parameters do not depend on ``n_trials``.

Choices where the paper is open are stated in each class's docstring. This module is the
catalogue (names, figure groups, lookup); each family has its own module:
:mod:`~dpbandits.scenarios.base` (what a scenario is), :mod:`~dpbandits.scenarios.bimodal`,
:mod:`~dpbandits.scenarios.gaussian`, :mod:`~dpbandits.scenarios.groups` and
:mod:`~dpbandits.scenarios.exceptional`; their classes are importable from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

import numpy as np
from numpy.typing import NDArray

from dpbandits.scenarios.base import (
    ConstantScenario,
    Correlation,
    Scenario,
    ScenarioData,
    check_quantiles,
)
from dpbandits.scenarios.bimodal import BIMODAL_KIND, Bimodal
from dpbandits.scenarios.exceptional import Exceptional
from dpbandits.scenarios.gaussian import (
    GaussianScenario,
    IncreasingCorrelation,
    NumberedGaussian,
    Scenario4,
    Scenario5,
    Scenario6,
)
from dpbandits.scenarios.groups import PAPER_GROUPS, TwoGroups

__all__ = [
    "PAPER_EPSILONS",
    "CORRELATION_FAMILY_T",
    "FIG13_PROPORTIONS",
    "FIGURES",
    "ConstantScenario",
    "Correlation",
    "Scenario",
    "ScenarioData",
    "Bimodal",
    "Exceptional",
    "GaussianScenario",
    "NumberedGaussian",
    "Scenario4",
    "Scenario5",
    "Scenario6",
    "IncreasingCorrelation",
    "TwoGroups",
    "check_quantiles",
    "get",
    "available",
    "figure_scenarios",
    "register",
]

#: The paper's eps grid: 12 values, log-spaced from 0.01 to 16 (§VI, App. H).
PAPER_EPSILONS: NDArray[np.float64] = np.geomspace(0.01, 16.0, 12)
#: The values of t of the increasing-correlation family (§VI-d, Fig. 6).
CORRELATION_FAMILY_T: tuple[float, ...] = (-5.0, -0.8, -0.3, 0.0, 0.3, 0.8, 5.0)
#: Fractions of high scores for the proportion sweep (App. E, Fig. 13; the paper gives no grid).
FIG13_PROPORTIONS: tuple[float, ...] = (
    0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99,
)  # fmt: skip

#: The paper's numbered scenarios 1-8.
_NUMBERED: dict[str, Callable[[], Scenario]] = {
    **{str(k): partial(Bimodal, kind=kind) for kind, k in BIMODAL_KIND.items()},  # type: ignore[arg-type]
    **{sc.number: sc for sc in (Scenario4, Scenario5, Scenario6)},
    **{number: partial(TwoGroups, sigma=sigma) for sigma, (number, _) in PAPER_GROUPS.items()},
}

#: Scenario groups of the paper's figures, usable wherever a scenario list is expected.
FIGURES: dict[str, tuple[str, ...]] = {
    "fig1": ("1", "2", "3"),
    "fig5": ("4", "5", "6"),
    "fig6": tuple(f"corr:t={t:g}" for t in CORRELATION_FAMILY_T),
    "fig7": ("7", "8"),
    "fig4": ("exc1", "exc2"),
    "fig18": ("exc1", "exc2"),
}

_CORR_RE = re.compile(r"^corr:t=(?P<t>[-+0-9.eE]+)$")
_PROP_RE = re.compile(r"^(?P<k>[123]):p=(?P<p>[-+0-9.eE]+)$")
_GROUPS_RE = re.compile(r"^groups:sigma=(?P<s>[-+0-9.eE]+)$")


#: Named scenarios beyond the numbered ones: the exceptional scenarios of §V-B (Figs. 4, 18),
#: then those added with :func:`register`.
_REGISTERED: dict[str, Callable[[], Scenario]] = {
    "exc1": partial(Exceptional, kind=1),
    "exc2": partial(Exceptional, kind=2),
}


def available() -> list[str]:
    """Names accepted by :func:`get` (besides the parametrised ``corr:t=``, ``k:p=`` forms)."""
    return list(_NUMBERED) + list(FIGURES["fig6"]) + list(_REGISTERED)


def register(name: str, factory: Callable[[], Scenario]) -> None:
    """Make ``get(name)`` return ``factory()`` (a lower-case name that is not yet taken)."""
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise ValueError(f"name must be a non-empty lower-case string, got {name!r}")
    if name in _NUMBERED or name in _REGISTERED:
        raise ValueError(f"scenario {name!r} is already defined")
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    _REGISTERED[name] = factory


def get(scenario: int | str | Scenario) -> Scenario:
    """Return a scenario from its paper number (1-8), its name, or the object itself.

    Names: ``"1"`` .. ``"8"`` (also ``"scenario3"``), ``"corr:t=0.3"`` (Fig. 6 family, any
    finite t), ``"2:p=0.1"`` (bimodal scenario 2 with 10% high scores, Fig. 13),
    ``"groups:sigma=1.5"`` (App. F generator with another sigma).
    """
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, bool):
        raise TypeError("scenario must be an int 1-8, a name or a Scenario, got bool")
    if isinstance(scenario, (int, np.integer)):
        key = str(int(scenario))
        if key not in _NUMBERED:
            raise ValueError(f"unknown scenario {int(scenario)}: the paper's scenarios are 1-8")
        return _NUMBERED[key]()
    if not isinstance(scenario, str):
        raise TypeError(
            f"scenario must be an int 1-8, a name or a Scenario, got {type(scenario).__name__}"
        )
    key = scenario.strip().lower().replace(" ", "")
    key = key.removeprefix("scenario")
    if key in _NUMBERED:
        return _NUMBERED[key]()
    if key in _REGISTERED:
        return _REGISTERED[key]()
    try:
        if m := _CORR_RE.match(key):
            return IncreasingCorrelation(t=float(m["t"]))
        if m := _PROP_RE.match(key):
            kind = {str(k): kind for kind, k in BIMODAL_KIND.items()}[m["k"]]
            return Bimodal(kind=kind, proportion=float(m["p"]))  # type: ignore[arg-type]
        if m := _GROUPS_RE.match(key):
            return TwoGroups(sigma=float(m["s"]))
    except ValueError as exc:
        raise ValueError(f"scenario {scenario!r}: {exc}") from None
    raise ValueError(
        f"unknown scenario {scenario!r}: use 1-8, 'corr:t=<t>', '<1|2|3>:p=<proportion>', "
        f"'groups:sigma=<s>' or a figure group {sorted(FIGURES)}"
    )


def figure_scenarios(spec: str) -> list[Scenario]:
    """Expand a figure group (``fig1``, ``fig5``, ``fig6``, ``fig7``) or a single name."""
    if not isinstance(spec, str):  # a number or a Scenario: one scenario, checked by get()
        return [get(spec)]
    key = spec.strip().lower()
    if key in FIGURES:
        return [get(s) for s in FIGURES[key]]
    if key == "all":
        return [get(s) for s in (*_NUMBERED, *FIGURES["fig6"], *_REGISTERED)]
    return [get(spec)]

