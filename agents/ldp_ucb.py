"""LDP-UCB (Ren, Zhou, Liu & Shroff 2020, "Multi-armed bandits with local differential
privacy", arXiv 2007.03121): index policies on rewards privatized at the user, eps-LDP.

Every reward is reported through an eps-LDP randomizer before anything learns
from it (:mod:`dpbandits.trust.randomizers`: the paper's curators), and the learner keeps only
the sums and counts of the reports. The agent applies the randomizer itself, as the first thing
it does with a reward -- the simulation of the user's device; no raw reward enters its state.
Whatever it outputs is post-processing of the reports, so the run is eps-LDP and eps-DP in the
global sense (:func:`dpbandits.accounting.local_dp_report`). Three of the paper's algorithms,
for rewards in ``[0, 1]``:

- :class:`LDPUCBL`, LDP-UCB-L: the Laplace curator CTL(eps), ``y = x + Lap(1 / eps)``
  (unbiased), and a UCB index widened for the heavier tails of the reports. Following the
  authors' code (github.com/WenboRen/Multi-armed-Bandits-with-Local-Differential-Privacy,
  ``DPclass.pull_CTL``): at round ``t`` (1-based) an arm with at most ``4 ln(t + 1)`` reports is
  played first (the lowest such arm), else the arm of largest
  ``mean_a + sqrt(2 ln t / n_a) + sqrt(32 ln t / (eps^2 n_a))``.
- :class:`LDPUCBB`, LDP-UCB-B: the Bernoulli curator CTB(eps), randomized response on a
  ``Bernoulli(x)`` coin; the report is a bit of mean ``q + (p - q) mu_a``
  (``p = e^eps / (1 + e^eps)``, ``q = 1 - p``), ordered like ``mu_a``, so plain UCB
  (``mean_a + sqrt(2 ln t / n_a)``, the authors' ``pull_CTB``) learns the best arm from the
  bits; the gaps shrink by ``p - q = (e^eps - 1) / (e^eps + 1)``.
- :class:`LDPKLUCBB`, LDP-KLUCB-B: KL-UCB (:class:`agents.KLUCB`) on the same bits: they are
  Bernoulli, so KL-UCB's index is exact for them.

For rewards of any real value (no known bound: a Gaussian arm, say), the paper's sigmoid
curators CTL-S(eps) and CTB-S(eps) (the definitions here are the authors' code's; the paper's
text could not be read, docs/trust-models.md, "Sources") first map the reward ``x`` to
``S(x) = 1 / (1 + e^-x)`` in ``(0, 1)`` and then report ``S(x)`` through CTL or CTB. The
report is eps-LDP whatever ``x`` is (``S(x)`` has range ``(0, 1)``, sensitivity 1), and the
learner learns ``E[S(X_a)]`` (LS; ``q + (p - q) E[S(X_a)]`` for BS), which orders the arms like
their means when they differ only by location (``X_a = mu_a + Z``, ``Z`` of one law for all
arms: ``E[S(mu + Z)]`` increases strictly with ``mu``), as for the Gaussian arms of variance 1
of the authors' code. For other arms it finds the arm of largest ``E[S(X_a)]``. Following
the authors' code (``ucb_bandit_gaussian.pull_CTL`` / ``pull_CTB``), the indices are
LDP-UCB-L's and LDP-UCB-B's on these reports:

- :class:`LDPUCBLS`, LDP-UCB-LS: ``S(x) + Lap(1 / eps)`` and LDP-UCB-L's index and forced
  exploration;
- :class:`LDPUCBBS`, LDP-UCB-BS: randomized response on a ``Bernoulli(S(x))`` coin and UCB1's
  index.

For rewards in a known ``[lo, hi]`` use ``dpbandits/LocalDP-v0`` with ``bounds`` and any agent.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.kl import sigmoid  # S(x) = 1 / (1 + e^-x), without overflow for any x
from agents.klucb import ARM, KLUCB, RUN
from agents.klucb import _arm as _klucb_arm
from agents.klucb import _record as _klucb_record
from agents.klucb import _round as _klucb_round
from agents.skeleton import IndexAgent, fields, one_based_round
from dpbandits.accounting import local_dp_report
from dpbandits.core import checks
from dpbandits.core.jit import inline_kernel
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits
from dpbandits.trust.randomizers import LAPLACE, RESPONSE, report, response_bias

__all__ = ["LDPKLUCBB", "LDPUCBB", "LDPUCBBS", "LDPUCBL", "LDPUCBLS"]

# -- the compiled step on the skeleton (agents.skeleton). The per-arm state is KL-UCB's layout
# (agents.klucb: report sum, count, and two fields only KL-UCB uses), so that LDP-KLUCB-B runs
# KL-UCB's own kernels on the reports. PAR: KL-UCB's c first (its kernels read it there), then
# the randomizer's parameters.
PAR = fields("c", "eps", "scale", "p", "q")


@inline_kernel
def _index_l(arms: Any, runs: Any, par: Any, r: int, a: int, t_round: float,
             bits: Any) -> float:  # fmt: skip
    """LDP-UCB-L's index (module docstring): ``+inf`` for an arm still in its forced
    exploration, so that the lowest such arm is played."""
    n = arms[r, a, ARM.count]
    if n <= 4.0 * math.log(t_round + 1.0):
        return math.inf
    lt = math.log(t_round)
    eps = par[PAR.eps]
    return (arms[r, a, ARM.sum] / n + math.sqrt(2.0 * lt / n)
            + math.sqrt(32.0 * lt / (eps * eps * n)))  # fmt: skip


@inline_kernel
def _index_b(arms: Any, runs: Any, par: Any, r: int, a: int, t_round: float,
             bits: Any) -> float:  # fmt: skip
    """LDP-UCB-B's index, UCB1's on the reports: ``mean_a + sqrt(2 ln t / n_a)``."""
    n = arms[r, a, ARM.count]
    return arms[r, a, ARM.sum] / n + math.sqrt(2.0 * math.log(t_round) / n)


@inline_kernel
def _add(arms: Any, r: int, a: int, y: float) -> None:
    """The learner adds report ``y`` to the arm's sum and count (all it keeps)."""
    arms[r, a, ARM.sum] += y
    arms[r, a, ARM.count] += 1.0


@inline_kernel
def _ctb(par: Any, x: float, bits: Any) -> float:
    """The user's CTB report: a bit by randomized response on a ``Bernoulli(x)`` coin."""
    return report(RESPONSE, x, 0.0, 1.0, 0.0, par[PAR.p], par[PAR.q], False, bits)


# (one learn kernel per randomizer: the randomizer is compiled in, not read from PAR per step)
@inline_kernel
def _learn_laplace(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
                   bits: Any) -> None:  # fmt: skip
    """The user reports ``x + Lap(1 / eps)`` (CTL); the learner adds the report."""
    _add(arms, r, a, report(LAPLACE, x, 0.0, 1.0, par[PAR.scale], 0.0, 0.0, False, bits))


@inline_kernel
def _learn_response(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
                    bits: Any) -> None:  # fmt: skip
    """The user reports a CTB bit; the learner adds it."""
    _add(arms, r, a, _ctb(par, x, bits))


@inline_kernel
def _learn_response_kl(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
                       bits: Any) -> None:  # fmt: skip
    """The user reports a CTB bit, learnt by KL-UCB's own update."""
    _klucb_record(arms, runs, par, r, t, a, _ctb(par, x, bits), bits)


@inline_kernel
def _learn_laplace_s(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
                     bits: Any) -> None:  # fmt: skip
    """CTL-S: the user reports ``S(x) + Lap(1 / eps)``; the learner adds the report."""
    y = report(LAPLACE, sigmoid(x), 0.0, 1.0, par[PAR.scale], 0.0, 0.0, False, bits)
    arms[r, a, ARM.sum] += y
    arms[r, a, ARM.count] += 1.0


@inline_kernel
def _learn_response_s(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
                      bits: Any) -> None:  # fmt: skip
    """CTB-S: the user reports a bit by randomized response on a ``Bernoulli(S(x))`` coin."""
    y = report(RESPONSE, sigmoid(x), 0.0, 1.0, 0.0, par[PAR.p], par[PAR.q], False, bits)
    arms[r, a, ARM.sum] += y
    arms[r, a, ARM.count] += 1.0


#: The paper's curators (Ren et al. 2020), as the privacy report states them: ``{x}`` the
#: rewards they take, ``{v}`` the value reported, ``{s}`` the sigmoid's definition (CTL-S, CTB-S).
_CURATORS = {
    "CTL": "each reward {x} reported as {v} + Lap(1/eps){s} ({name}, Ren et al. 2020)",
    "CTB": ("each reward {x} reported as one bit: randomized response on a Bernoulli({v}) "
            "coin{s}, kept with probability e^eps/(1+e^eps) ({name}, Ren et al. 2020)"),
}  # fmt: skip
_EPSILON_DOC = """
    epsilon:
        The eps of every report (> 0), hence of the whole run."""


class _LDP(IndexAgent):
    """What the LDP agents share: ``epsilon``, the randomizer's parameters, the hooks.

    An agent names its curator in its class statement, ``class LDPUCBB(_LDP, curator="CTB")``
    (``sigmoid=True``: the curator's ``-S`` form, for rewards of any real value); its
    ``curator`` text, ``name`` (from ``algorithm``), traits and the docstring's ``epsilon``
    follow."""

    algorithm = ""
    #: What the user reports, for the privacy report.
    curator = ""
    traits = AgentTraits(rewards="unit", private=True, compiled=True)
    ARM, RUN, PAR = ARM, RUN, PAR
    round_kernel = one_based_round
    cost_hint = 2.0
    parameter_constraints = {
        "epsilon": Param(low=0, low_open=True, doc="eps of every report (eps-LDP)"),
    }

    def __init__(self, epsilon: float = 1.0) -> None:
        self.epsilon = epsilon

    def __init_subclass__(cls, curator: str = "", sigmoid: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not curator:  # a subclass of an LDP agent keeps its base's curator
            return
        cls.name = cls.algorithm.lower().replace("-", "_")
        cls.curator = _CURATORS[curator].format(
            x="x (any real)" if sigmoid else "x in [0, 1]",
            v="S(x)" if sigmoid else "x",
            s=", S(x) = 1/(1+e^-x)" if sigmoid else "",
            name=f"{curator}-S" if sigmoid else curator,
        )
        if sigmoid:
            cls.traits = AgentTraits(rewards="real", private=True, compiled=True)
        # the docstring's Parameters section (after the summary) starts with epsilon
        doc, header = cls.__doc__ or "", "\n    Parameters\n    ----------"
        if header not in doc:
            summary, _, rest = doc.partition("\n\n")
            doc = f"{summary.rstrip()}\n{header}\n" + (f"\n{rest}" if rest else "    ")
        cls.__doc__ = doc.replace(header, header + _EPSILON_DOC, 1)

    def parameters(self) -> dict[str, float]:
        eps = float(self.epsilon)
        scale = checks.noise_scale(1.0, eps, f"{self.algorithm}'s Laplace reports")
        p, q = response_bias(eps)
        return {"c": 0.0, "eps": eps, "scale": scale, "p": p, "q": q}

    def private_means(self) -> NDArray[np.float64]:
        """The ``(R, K)`` means of the reports so far (all the learner knows); NaN for an arm
        not pulled yet."""
        counts = self.arm_field("count")
        out = np.full(counts.shape, np.nan)
        np.divide(self.arm_field("sum"), counts, out=out, where=counts > 0)
        return out

    def privacy_report(self) -> dict[str, Any]:
        """eps-LDP per report, eps-DP for the whole run (module docstring)."""
        return local_dp_report(self.algorithm, float(self.epsilon), self.curator)


class LDPUCBL(_LDP, curator="CTL"):
    """LDP-UCB-L (Ren, Zhou, Liu & Shroff 2020): Laplace reports ``x + Lap(1 / eps)`` and the
    widened UCB index of the module docstring; eps-LDP for rewards in ``[0, 1]``.

    Choices (tested): each arm is pulled once first (App. H; the authors' code instead starts
    every arm at one phantom report of 0); rewards outside ``[0, 1]`` raise ``ValueError`` at
    the first such step, before anything is learnt from it; ties go to the lowest arm.
    """

    algorithm = "LDP-UCB-L"
    index_kernel, learn_kernel = _index_l, _learn_laplace


class LDPUCBB(_LDP, curator="CTB"):
    """LDP-UCB-B (Ren, Zhou, Liu & Shroff 2020): randomized-response bits (CTB) and UCB1's
    index on them (module docstring); eps-LDP for rewards in ``[0, 1]``.
    """

    algorithm = "LDP-UCB-B"
    index_kernel, learn_kernel = _index_b, _learn_response


class LDPKLUCBB(_LDP, curator="CTB"):
    """LDP-KLUCB-B (Ren, Zhou, Liu & Shroff 2020): randomized-response bits (CTB) learnt by
    KL-UCB (:class:`agents.KLUCB`, exploration ``ln t + c ln ln t``); eps-LDP for rewards in
    ``[0, 1]``.

    Parameters
    ----------
    c:
        KL-UCB's ``c`` (0, as in Garivier & Cappé's experiments).
    """

    algorithm = "LDP-KLUCB-B"
    round_kernel, arm_kernel, learn_kernel = _klucb_round, _klucb_arm, _learn_response_kl
    ARM_START = KLUCB.ARM_START  # KL-UCB's warm start: none yet
    cost_hint = 7.0
    parameter_constraints = {
        **_LDP.parameter_constraints,
        "c": KLUCB.parameter_constraints["c"],
    }

    def __init__(self, epsilon: float = 1.0, c: float = 0.0) -> None:
        self.epsilon = epsilon
        self.c = c

    def parameters(self) -> dict[str, float]:
        return {**super().parameters(), "c": float(self.c)}


class LDPUCBLS(_LDP, curator="CTL", sigmoid=True):
    """LDP-UCB-LS (Ren, Zhou, Liu & Shroff 2020): the sigmoid-Laplace curator CTL-S, reports
    ``S(x) + Lap(1 / eps)`` with ``S(x) = 1 / (1 + e^-x)``, and LDP-UCB-L's index on them
    (module docstring); eps-LDP for rewards of any real value.

    It learns ``E[S(X_a)]``, which ranks the arms as their means when they differ by location
    only (module docstring). The choices of :class:`LDPUCBL` (the initial pulls, ties) hold.
    """

    algorithm = "LDP-UCB-LS"
    index_kernel, learn_kernel = _index_l, _learn_laplace_s


class LDPUCBBS(_LDP, curator="CTB", sigmoid=True):
    """LDP-UCB-BS (Ren, Zhou, Liu & Shroff 2020): the sigmoid-Bernoulli curator CTB-S,
    randomized response on a ``Bernoulli(S(x))`` coin with ``S(x) = 1 / (1 + e^-x)``, and
    UCB1's index on the bits (module docstring); eps-LDP for rewards of any real value.
    """

    algorithm = "LDP-UCB-BS"
    index_kernel, learn_kernel = _index_b, _learn_response_s
