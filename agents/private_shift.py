"""eps-global-DP agents for piecewise-stationary bandits: capped episodes, a sliding window over
the releases, a private change test and restarts (docs/private-shift.md).

The agents of Azize & Basu (NeurIPS 2022, AdaP-UCB/KLUCB, Algorithm 1) and Azize et al. (2025,
DP-KLUCB, DP-IMED) cut each arm's rewards into batches whose length doubles with the arm's pull
count and release each batch's sum once, with ``Lap(1 / eps)`` noise. They never forget: the
batches grow to half the horizon. The agents here keep that release mechanism and change what
is done with the releases:

1. *capped episodes*: a batch of arm ``a`` that starts after ``N_a`` pulls since the last restart
   has ``min(N_a, cap)`` rewards (1 for the first pull), so releases keep coming;
2. *a private sliding window*: an arm's estimate pools its last ``window`` releases only,
   ``m_a = (S~_1 + .. + S~_k) / (n_1 + .. + n_k)``;
3. *change detection and restarts* (the ``CD-`` agents): after each release of an arm, the test
   of :mod:`agents.private_change` on its windowed releases; when it fires, every arm forgets
   everything (a global restart, as in M-UCB and GLR-klUCB) and is pulled once again;
4. *forced exploration* on a data-independent schedule: with ``P = floor(K / forced)``, step
   ``t`` (0-based, counted from the start of the run) plays arm ``t mod P`` when that is below
   ``K`` (M-UCB's and GLR-klUCB's schedule), so every arm keeps producing releases.

An episode (Algorithm 1 of Azize & Basu) plays the arm of largest index until that arm's batch
is complete; forced steps interrupt it, and their rewards join the batch of the arm they pull.

Privacy (eps-global DP, Azize & Basu 2022, Definition 2: reward tables that differ in one
step's rewards are neighbours). What is released: for every completed batch, the sum of its
rewards plus an independent ``Lap(1 / eps)`` variable. Which rewards each release covers: the
rewards of one arm's consecutive pulls, from the first pull after its previous release (or
after a restart) to the pull that completes the batch. Which rewards a batch holds is fixed by
the actions before it, and the actions are functions of the earlier releases and of the
data-independent forced schedule only: the batch lengths ``min(N_a, cap)`` depend on pull
counts, the episode boundaries on batch completions, the restarts on the test, which reads
releases. No raw reward decides anything. So every reward is in at most one release (exactly
one, except the rewards of a batch cut short by a restart or by the end of the run, which are
never released), each release has sensitivity 1 for rewards in ``[0, 1]`` and is eps-DP, and
their sequence is eps-DP by parallel composition over disjoint batches chosen adaptively
(Azize & Basu 2022, Lemma 1 and Theorem 6). Everything else -- the window, the estimates, the
indices, the change test, the restarts, which releases are kept or forgotten, the actions --
is post-processing of the releases and costs nothing: the whole run is eps-DP for any horizon,
and ``privacy_report()["epsilon_total"]`` is ``epsilon``.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import variant
from agents.episodes import LaplaceBatchAgent
from agents.kl import d_eps, d_eps_upper_logit, kink_level, kl_upper_logit, neg_entropy
from agents.private_change import detect_change, minimum_cap
from agents.skeleton import fields
from dpbandits.accounting import global_dp_report
from dpbandits.core import checks
from dpbandits.core.checks import ParameterError
from dpbandits.core.jit import beats, kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace
from dpbandits.core.traits import AgentTraits

__all__ = [
    "CDAdaPKLUCB",
    "CDAdaPUCB",
    "CDDPIMED",
    "CDDPKLUCB",
    "SWAdaPKLUCB",
    "SWAdaPUCB",
    "SWDPIMED",
    "SWDPKLUCB",
]

_UCB, _KLUCB, _DP_KLUCB, _DP_IMED = range(4)

# -- the compiled step on the skeleton (agents.skeleton). Per (replication, arm): pulls since the
# last restart, the current batch's reward sum, its length so far and the length that completes
# it, the window's noisy sum, its number of rewards and of releases, the ring's oldest slot, the
# window mean (for reports) and the number of releases of the whole run; after these named
# fields, the ring of the window's releases: ``window`` pairs ``(S~, n)`` from ``RING`` on
# (circular, the oldest at ``head``; allocated by ``init_state``). Per replication: the arm of
# the current episode (-1: none), the step after the last restart and the number of restarts.
# The Laplace draws are made in the order of the step protocol.
ARM = fields("count", "b_sum", "b_len", "b_end", "w_sum", "w_n", "w_k", "head", "private",
             "releases")  # fmt: skip
RING = len(ARM)
RUN = fields("cur", "tau", "restarts")
# the index (kind), the largest batch, the test's delta (0: no test), the forced period P (0:
# none), the confidence exponent and the ring's size
PAR = fields("eps", "scale", "kind", "cap", "delta", "period", "alpha", "window")


@kernel
def _index(arms: Any, par: Any, r: int, a: int, f: float) -> float:
    """The index of arm ``a`` from its window (larger is better): ``f = alpha ln(t')``, ``t'``
    the 1-based round since the last restart. The noise bonus of ``k`` releases pooled over
    ``N`` rewards is ``b (sqrt(2 k f) + f) / N`` (a sub-exponential deviation of the sum of
    ``k`` Laplace variables; AdaP's ``f / (eps N)`` for one)."""
    kind, b, eps = np.int64(par[PAR.kind]), par[PAR.scale], par[PAR.eps]
    n = arms[r, a, ARM.w_n]
    m = arms[r, a, ARM.w_sum] / n
    k = arms[r, a, ARM.w_k]
    if kind == _UCB:
        return m + math.sqrt(f / (2.0 * n)) + b * (math.sqrt(2.0 * k * f) + f) / n
    if kind == _KLUCB:
        p = min(max(m + b * (math.sqrt(2.0 * k * f) + f) / n, 0.0), 1.0)
        return kl_upper_logit(p, neg_entropy(p), f / n, math.nan)
    # DP-KLUCB: d_eps accounts for one Laplace variable; the bonus covers the k - 1 others
    x = min(max(m + b * math.sqrt(2.0 * (k - 1.0) * f) / n, 0.0), 1.0)
    return d_eps_upper_logit(x, neg_entropy(x), kink_level(x, eps), f / n, eps, math.nan)


@kernel
def _best(arms: Any, par: Any, r: int, f: float) -> int:
    """The arm of largest index (DP-IMED: of smallest ``N d_eps(x_a, x*) + ln N``); ties: the
    lowest arm."""
    n_arms = arms.shape[1]
    if np.int64(par[PAR.kind]) == _DP_IMED:
        top = -math.inf
        for a in range(n_arms):
            top = max(top, min(max(arms[r, a, ARM.w_sum] / arms[r, a, ARM.w_n], 0.0), 1.0))
        best_a, best = 0, math.inf
        for a in range(n_arms):
            n = arms[r, a, ARM.w_n]
            x = min(max(arms[r, a, ARM.w_sum] / n, 0.0), 1.0)
            v = n * d_eps(x, top, par[PAR.eps]) + math.log(n)
            if v < best:
                best_a, best = a, v
        return best_a
    best_a = 0
    best = _index(arms, par, r, 0, f)
    for a in range(1, n_arms):
        v = _index(arms, par, r, a, f)
        if beats(v, best):
            best_a, best = a, v
    return best_a


@kernel
def _arm(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """The arm replication ``r`` plays at step ``t >= K`` (0-based): an arm not pulled since the
    last restart (the lowest), else the forced schedule's, else the episode's, else a new
    episode's (the arm of best index)."""
    n_arms = arms.shape[1]
    for a in range(n_arms):
        if arms[r, a, ARM.count] == 0.0:
            return a
    period = np.int64(par[PAR.period])
    if period > 0:
        j = t % period
        if j < n_arms:
            return j
    if runs[r, RUN.cur] >= 0.0:
        return np.int64(runs[r, RUN.cur])
    a = _best(arms, par, r, par[PAR.alpha] * math.log(t - runs[r, RUN.tau] + 1.0))
    runs[r, RUN.cur] = a
    return a


@kernel
def _restart(arms: Any, runs: Any, r: int, t: int) -> None:
    """Forget everything (a global restart after step ``t``): no pulls, batches or windows (the
    rewards of open batches are never released)."""
    for a in range(arms.shape[1]):
        arms[r, a, ARM.count] = 0.0
        arms[r, a, ARM.b_sum] = 0.0
        arms[r, a, ARM.b_len] = 0.0
        arms[r, a, ARM.b_end] = 1.0
        arms[r, a, ARM.w_sum] = 0.0
        arms[r, a, ARM.w_n] = 0.0
        arms[r, a, ARM.w_k] = 0.0
        arms[r, a, ARM.head] = 0.0
    runs[r, RUN.cur] = -1.0
    runs[r, RUN.tau] = t + 1.0
    runs[r, RUN.restarts] += 1.0


@kernel
def _pull(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
          bits: Any) -> None:  # fmt: skip
    """Replication ``r`` got reward ``x`` from arm ``a`` at step ``t``. A completed batch releases
    its sum plus ``Lap(1 / eps)`` into the arm's window (the oldest release leaves a full
    window), ends the episode if it was the episode's arm, and is tested for a change."""
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.b_sum] += x
    arms[r, a, ARM.b_len] += 1.0
    if arms[r, a, ARM.b_len] < arms[r, a, ARM.b_end]:
        return
    released = arms[r, a, ARM.b_sum] + standard_laplace(bits) * par[PAR.scale]
    length = arms[r, a, ARM.b_len]
    size = np.int64(par[PAR.window])
    head = np.int64(arms[r, a, ARM.head])
    k = np.int64(arms[r, a, ARM.w_k])
    if k == size:  # the oldest release leaves the window
        arms[r, a, ARM.w_sum] -= arms[r, a, RING + 2 * head]
        arms[r, a, ARM.w_n] -= arms[r, a, RING + 2 * head + 1]
        head = head + 1 if head + 1 < size else 0
        arms[r, a, ARM.head] = head
        k -= 1
    slot = head + k if head + k < size else head + k - size
    arms[r, a, RING + 2 * slot] = released
    arms[r, a, RING + 2 * slot + 1] = length
    k += 1
    arms[r, a, ARM.w_k] = k
    arms[r, a, ARM.w_sum] += released
    arms[r, a, ARM.w_n] += length
    arms[r, a, ARM.private] = arms[r, a, ARM.w_sum] / arms[r, a, ARM.w_n]
    arms[r, a, ARM.releases] += 1.0
    arms[r, a, ARM.b_sum] = 0.0
    arms[r, a, ARM.b_len] = 0.0
    arms[r, a, ARM.b_end] = min(arms[r, a, ARM.count], par[PAR.cap])
    if runs[r, RUN.cur] == a:
        runs[r, RUN.cur] = -1.0
    if par[PAR.delta] > 0.0 and detect_change(
        arms, r, a, RING, size, head, k, arms[r, a, ARM.w_sum], arms[r, a, ARM.w_n],
        par[PAR.scale], par[PAR.delta]
    ):  # fmt: skip
        _restart(arms, runs, r, t)


class _PrivateShift(LaplaceBatchAgent):
    """Capped episodes, a window of releases and forced exploration, with the index of
    ``_kind`` (module docstring): the ``SW-`` agents; the ``CD-`` family (:class:`_CD`) adds the
    change test and restarts (``_detect``)."""

    _kind = _UCB
    _detect = False
    delta = 0.0
    _family = "SW"  # the prefix of ``algorithm``
    batches = "batch"
    citation = "Azize & Basu 2022, Lemma 1 and Theorem 6; docs/private-shift.md"
    cost_hint = 4.0
    ARM, RUN, PAR = ARM, RUN, PAR
    ARM_START = {"b_end": 1.0}  # the first pull is a batch of one
    RUN_START = {"cur": -1.0}  # no episode
    arm_kernel, learn_kernel = _arm, _pull
    parameter_constraints = {
        **LaplaceBatchAgent.parameter_constraints,
        "cap": Param("int", low=1, none=True,
                     doc="largest batch length (None: max(16, 2 minimum_cap))"),
        "window": Param("int", low=2, doc="releases per arm in the window"),
        "forced": Param(low=0, high=1, doc="fraction of forced-exploration steps"),
        "alpha": Param(low=0, low_open=True, doc="confidence exponent of the index"),
    }  # fmt: skip

    def __init__(
        self,
        epsilon: float = 1.0,
        cap: int | None = None,
        window: int = 8,
        forced: float = 0.01,
        alpha: float = 1.0,
    ) -> None:
        super().__init__(epsilon)
        self.cap = cap
        self.window = window
        self.forced = forced
        self.alpha = alpha

    def __init_subclass__(cls, kind: int | None = None, **kwargs: Any) -> None:
        """An agent of the family names the index it runs (``kind``); its ``algorithm``,
        ``name``, traits and the docstring's parameters (after the class's own title) follow
        from the two."""
        super().__init_subclass__(**kwargs)
        if kind is None:  # a family (_CD), not an agent
            return
        label, _, bernoulli_only = _KINDS[kind]
        cls._kind = kind
        cls.algorithm = f"{cls._family}-{label}"
        cls.name = cls.algorithm.lower().replace("-", "_")
        if bernoulli_only:
            cls.traits = AgentTraits(rewards="bernoulli", private=True, compiled=True)
        cls.__doc__ = _doc(cls.__doc__ or cls.algorithm, kind, cls._detect)

    def parameters(self) -> dict[str, float]:
        """The ``PAR`` values; a cap below :func:`agents.private_change.minimum_cap` (with the
        test) is refused, naming ``cap``."""
        base = super().parameters()
        eps = base["eps"]
        window = int(self.window)
        checks.memory(2 * self.n_runs * self.n_arms * window,
                      f"n_runs * n_arms * 2 window = {self.n_runs} * {self.n_arms} * 2 * "
                      f"{window} (the windows of releases)")  # fmt: skip
        delta = float(self.delta) if self._detect else 0.0
        # the test's minimum (for an agent without a test, the CD agents' default test's)
        least = minimum_cap(eps, delta, int(self.window)) if self._detect else minimum_cap(
            eps, 0.01, 64)  # fmt: skip
        cap = max(16, 2 * least) if self.cap is None else int(self.cap)
        if self._detect:
            if cap < least:
                raise ParameterError(
                    f"cap must be at least {least} for the change test to detect anything at "
                    f"epsilon = {eps:g}, window = {self.window}, delta = {delta:g} "
                    f"(docs/private-shift.md), got {cap}", "cap")  # fmt: skip
        forced = float(self.forced)
        period = math.floor(self.n_arms / forced) if forced > 0.0 else 0
        return {**base, "kind": float(self._kind), "cap": float(cap), "delta": delta,
                "period": float(period), "alpha": float(self.alpha),
                "window": float(self.window)}  # fmt: skip

    def init_state(self) -> None:
        # the ring of releases after the named fields (the skeleton allocates those only)
        ring = np.zeros((self.n_runs, self.n_arms, 2 * int(self.window)))
        self.arms = np.concatenate([self.arms, ring], axis=2)

    def check_step(self, actions: NDArray[np.int64]) -> None:
        if self.t < self.n_arms:
            return
        expected = np.empty(self.n_runs, dtype=np.int64)
        self._loop.choose(self.arms.copy(), self.runs.copy(), self.par, self._address, self.t,
                          expected)  # fmt: skip
        if not np.array_equal(actions, expected):
            raise ValueError(
                f"{self.algorithm} plays the arm of its episode or of its forced schedule "
                "(docs/private-shift.md): update() needs the actions act() returned"
            )

    @property
    def restarts(self) -> NDArray[np.int64]:
        """The ``(R,)`` numbers of restarts so far (post-processing of the releases); a
        property, as on the non-private change-detection agents (M-UCB, CUSUM-UCB,
        GLR-klUCB)."""
        return self.run_field("restarts").astype(np.int64)

    def releases(self, r: int, a: int) -> NDArray[np.float64]:
        """The releases ``(S~, n)`` in the window of arm ``a`` of replication ``r``, oldest
        first, ``(k, 2)``."""
        size, k = int(self.window), int(self.arms[r, a, ARM.w_k])
        head = int(self.arms[r, a, ARM.head])
        ring = self.arms[r, a, RING:].reshape(size, 2)
        return ring[(head + np.arange(k)) % size].copy()

    def privacy_report(self) -> dict[str, Any]:
        """The privacy spent by the whole run (:func:`dpbandits.accounting.global_dp_report`):
        ``epsilon_total`` is ``epsilon`` whatever the horizon (module docstring);
        ``releases_per_arm`` the largest number of releases of each arm over the replications;
        for the ``CD-`` agents ``restarts_max``, the most restarts of any replication (a largest
        value, like ``releases_per_arm``, so that the engine's merge of chunks, which keeps each
        number's maximum, gives the whole run's; :attr:`restarts` has every replication's)."""
        counts = self.arm_field("releases").astype(np.int64)
        per_arm = [int(c) for c in counts.max(axis=0, initial=0)]
        restarts = "" if not self._detect else (
            "; the change test and its restarts read the releases only")  # fmt: skip
        report = global_dp_report(
            self.algorithm,
            self._eps_value(),
            f"per arm, the reward sum of each completed batch (at most cap rewards) plus "
            f"Lap(1/eps) (releases per arm, largest over the replications: {per_arm})",
            "every reward is in at most one released sum (a batch cut by a restart or by the "
            "end of the run is never released), of sensitivity 1 (rewards in [0, 1]), and the "
            "batches are fixed by the actions before them: parallel composition, eps "
            f"({self.citation}){restarts}",
        )
        report["releases_per_arm"] = per_arm
        report["total_releases"] = int(sum(per_arm))
        if self._detect:
            report["restarts_max"] = int(self.restarts.max(initial=0))
        return report

    def _eps_value(self) -> float:
        return float(self.par[self.PAR.eps])


@variant(window=64, delta=0.01, before="alpha")
class _CD(_PrivateShift):
    """The ``CD-`` family: the change test after every release, with global restarts; its
    constructor is the ``SW-`` family's with ``delta`` and a longer default window."""

    _detect = True
    _family = "CD"
    parameter_constraints = {
        **_PrivateShift.parameter_constraints,
        "delta": Param(low=0, high=1, low_open=True, high_open=True,
                       doc="confidence of the change test"),
    }  # fmt: skip


_PARAMS_DOC = """
    Parameters
    ----------
    epsilon:
        The privacy budget of the whole run (> 0).
    cap:
        The largest batch length; ``None``: twice :func:`agents.private_change.minimum_cap`
        and at least 16 (16 at eps >= 0.5, 56 at eps = 0.1, 510 at eps = 0.01; measured in
        docs/private-shift.md: shorter batches detect sooner, longer ones carry less noise per
        reward).{cap_extra}
    window:
        The releases of each arm its estimate pools (the private sliding window){window_extra}.
    forced:
        The fraction of forced-exploration steps (default 0.01; 0: none): step ``t`` plays arm
        ``t mod floor(K / forced)`` when that is below ``K``.{delta_doc}
    alpha:
        The confidence exponent of the index, ``f = alpha ln(t')`` with ``t'`` the round since
        the last restart (default 1).

    The index of an arm whose window pools ``k`` releases over ``N`` rewards with noisy mean
    ``m``: {index}. The noise bonus ``b (sqrt(2 k f) + f) / N``, ``b = 1 / eps``, is a deviation
    bound of the sum of ``k`` Laplace variables (AdaP's ``f / (eps N)`` for ``k = 1``).
    Rewards {rewards} raise ``ValueError`` at the first such step, before anything is learnt
    from it. Anytime: no horizon needed. ``update`` must get the actions ``act`` returned.
"""

_CD_INTRO = """Capped episodes, a window of the last ``window`` releases of each arm, forced
    exploration, and the private change test of :mod:`agents.private_change` after every
    release, with a global restart when it fires (:mod:`agents.private_shift`, which states the
    privacy argument: eps-global DP for the whole run; docs/private-shift.md)."""
_SW_INTRO = """Capped episodes, a window of the last ``window`` releases of each arm (the
    private sliding window: forgetting without a test) and forced exploration
    (:mod:`agents.private_shift`, which states the privacy argument: eps-global DP for the
    whole run; docs/private-shift.md)."""
_INDEX = {
    _UCB: "``m + sqrt(f / (2 N)) + b (sqrt(2 k f) + f) / N`` (AdaP-UCB's, Azize & Basu 2022, "
          "eq. (7), on the window)",
    _KLUCB: "``max{q : N kl(clip(m + bonus), q) <= f}`` (AdaP-KLUCB's on the window)",
    _DP_KLUCB: "``max{q : d_eps(x, q) <= f / N}`` (DP-KLUCB's, Azize et al. 2025), ``x`` the "
               "mean clipped to ``[0, 1]`` after adding the bonus of the ``k - 1`` Laplace "
               "variables beyond the one ``d_eps`` accounts for",
    _DP_IMED: "smallest ``N d_eps(x, x*) + ln N`` (DP-IMED's, Azize et al. 2025), ``x`` the "
              "window mean clipped to ``[0, 1]``, ``x*`` the largest",
}  # fmt: skip


def _doc(title: str, kind: int, detect: bool) -> str:
    bern = kind in (_DP_KLUCB, _DP_IMED)
    return (
        f"{title}\n\n    " + (_CD_INTRO if detect else _SW_INTRO) + "\n"
        + _PARAMS_DOC.format(
            cap_extra=(" Must be at least :func:`agents.private_change.minimum_cap` (below it "
                       "the test cannot fire)." if detect else ""),
            window_extra=("; the test looks at the same releases (default 64)" if detect
                          else " (default 8)"),
            delta_doc=("\n    delta:\n        The confidence of the change test, in (0, 1) "
                       "(default 0.01; :mod:`agents.private_change`)." if detect else ""),
            index=_INDEX[kind],
            rewards="other than 0 or 1" if bern else "outside ``[0, 1]``",
        )
    )  # fmt: skip


#: Each index: its name, its paper and whether it is defined for Bernoulli rewards only.
_KINDS = {
    _UCB: ("AdaP-UCB", "Azize & Basu 2022", False),
    _KLUCB: ("AdaP-KLUCB", "Azize & Basu 2022", False),
    _DP_KLUCB: ("DP-KLUCB", "Azize et al. 2025", True),
    _DP_IMED: ("DP-IMED", "Azize et al. 2025", True),
}


def _agents(family: type[_PrivateShift], what: str) -> list[type[_PrivateShift]]:
    """The agents of ``family`` (``CD-`` or ``SW-``), one per index of :data:`_KINDS`, in its
    order: classes ``CDAdaPUCB``, ``CDAdaPKLUCB``, ... of this module, titled ``"CD-AdaP-UCB:
    AdaP-UCB (Azize & Basu 2022) " + what`` (the rest of the docstring follows from the
    index)."""
    made = []
    for kind, (label, paper, bernoulli_only) in _KINDS.items():
        name = family._family + label.replace("-", "")
        title = f"{family._family}-{label}: {label} ({paper}) {what}" + (
            ", for Bernoulli\n    bandits." if bernoulli_only else ".")  # fmt: skip
        body = {"__doc__": title, "__module__": __name__, "__qualname__": name}
        made.append(types.new_class(name, (family,), {"kind": kind}, _filler(body)))
    return made


def _filler(body: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """The class body of :func:`types.new_class`: ``body``'s names."""
    return lambda namespace: namespace.update(body)


CDAdaPUCB, CDAdaPKLUCB, CDDPKLUCB, CDDPIMED = _agents(_CD, "with private change detection")
SWAdaPUCB, SWAdaPKLUCB, SWDPKLUCB, SWDPIMED = _agents(
    _PrivateShift, "on a sliding window of releases")
