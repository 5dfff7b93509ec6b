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
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import in_bernoulli, in_unit_interval
from agents.episodes import LaplaceBatchAgent
from agents.kl import d_eps, d_eps_upper_logit, kink_level, kl_upper_logit, neg_entropy
from agents.private_change import detect_change, minimum_cap
from dpbandits.core.checks import ParameterError
from dpbandits.core.jit import beats, generator_address, generator_at, kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace

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

# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play.
# Per (replication, arm), ``arms[r, a, :]``: pulls since the last restart, the current batch's
# reward sum, its length so far and the length that completes it, the window's noisy sum, its
# number of rewards and of releases, the ring's oldest slot, the window mean (for reports) and
# the number of releases of the whole run. Per replication, ``runs[r, :]``: the arm of the
# current episode (-1: none), the step of the last restart and the number of restarts.
# ``ring[r, a, i, :]`` holds a release ``(S~, n)``; the window is the ``W_K`` releases from
# ``HEAD`` on (circular). The Laplace draws are made in the order of the step protocol.
(COUNT, B_SUM, B_LEN, B_END, W_SUM, W_N, W_K, HEAD, PRIVATE, RELEASES) = range(10)
N_ARM_FIELDS = 10
CUR, TAU, RESTARTS = range(3)
N_RUN_FIELDS = 3
# parameters, in one float array: the noise scale 1/eps, eps, the cap, the test's delta (0: no
# test), the forced period P (0: none) and the confidence exponent alpha
SCALE, EPS, CAP, DELTA, PERIOD, ALPHA = range(6)


@kernel
def _index(kind: int, arms: Any, r: int, a: int, f: float, b: float, eps: float) -> float:
    """The index of arm ``a`` (larger is better; DP-IMED's is negated) from its window: ``f =
    alpha ln(t')``, ``t'`` the 1-based round since the last restart. The noise bonus of ``k``
    releases pooled over ``N`` rewards is ``b (sqrt(2 k f) + f) / N`` (a sub-exponential
    deviation of the sum of ``k`` Laplace variables; AdaP's ``f / (eps N)`` for one)."""
    n = arms[r, a, W_N]
    m = arms[r, a, W_SUM] / n
    bonus = b * (math.sqrt(2.0 * arms[r, a, W_K] * f) + f) / n
    if kind == _UCB:
        return m + math.sqrt(f / (2.0 * n)) + bonus
    if kind == _KLUCB:
        p = min(max(m + bonus, 0.0), 1.0)
        return kl_upper_logit(p, neg_entropy(p), f / n, math.nan)
    # DP-KLUCB: d_eps accounts for one Laplace variable per phase; the others of the window
    # are covered by the part of the bonus beyond the first
    extra = b * math.sqrt(2.0 * (arms[r, a, W_K] - 1.0) * f) / n
    x = min(max(m + extra, 0.0), 1.0)
    return d_eps_upper_logit(x, neg_entropy(x), kink_level(x, eps), f / n, eps, math.nan)


@kernel
def _best(kind: int, arms: Any, r: int, f: float, b: float, eps: float) -> int:
    """The arm of largest index (DP-IMED: of smallest ``N d_eps(x_a, x*) + ln N``); ties: the
    lowest arm."""
    n_arms = arms.shape[1]
    if kind == _DP_IMED:
        top = -math.inf
        for a in range(n_arms):
            top = max(top, min(max(arms[r, a, W_SUM] / arms[r, a, W_N], 0.0), 1.0))
        best_a, best = 0, math.inf
        for a in range(n_arms):
            n = arms[r, a, W_N]
            x = min(max(arms[r, a, W_SUM] / n, 0.0), 1.0)
            v = n * d_eps(x, top, eps) + math.log(n)
            if v < best:
                best_a, best = a, v
        return best_a
    best_a = 0
    best = _index(kind, arms, r, 0, f, b, eps)
    for a in range(1, n_arms):
        v = _index(kind, arms, r, a, f, b, eps)
        if beats(v, best):
            best_a, best = a, v
    return best_a


@kernel
def _arm(kind: int, arms: Any, runs: Any, r: int, t: int, par: Any) -> int:
    """The arm replication ``r`` plays at step ``t`` (0-based): an arm not pulled since the last
    restart (the lowest), else the forced schedule's, else the episode's, else a new episode's
    (the arm of best index)."""
    n_arms = arms.shape[1]
    for a in range(n_arms):
        if arms[r, a, COUNT] == 0.0:
            return a
    period = np.int64(par[PERIOD])
    if period > 0:
        j = t % period
        if j < n_arms:
            return j
    if runs[r, CUR] >= 0.0:
        return np.int64(runs[r, CUR])
    f = par[ALPHA] * math.log(t - runs[r, TAU] + 1.0)
    a = _best(kind, arms, r, f, par[SCALE], par[EPS])
    runs[r, CUR] = a
    return a


@kernel
def _restart(arms: Any, runs: Any, r: int, t: int) -> None:
    """Forget everything (a global restart after step ``t``): no pulls, batches or windows."""
    for a in range(arms.shape[1]):
        arms[r, a, COUNT] = 0.0
        arms[r, a, B_SUM] = 0.0
        arms[r, a, B_LEN] = 0.0
        arms[r, a, B_END] = 1.0
        arms[r, a, W_SUM] = 0.0
        arms[r, a, W_N] = 0.0
        arms[r, a, W_K] = 0.0
        arms[r, a, HEAD] = 0.0
    runs[r, CUR] = -1.0
    runs[r, TAU] = t + 1.0
    runs[r, RESTARTS] += 1.0


@kernel
def _pull(arms: Any, runs: Any, ring: Any, r: int, a: int, t: int, x: float, par: Any,
          bits: Any) -> None:  # fmt: skip
    """Replication ``r`` got reward ``x`` from arm ``a`` at step ``t``. A completed batch releases
    its sum plus ``Lap(1 / eps)`` into the arm's window (the oldest release leaves a full
    window), ends the episode if it was the episode's arm, and is tested for a change."""
    arms[r, a, COUNT] += 1.0
    arms[r, a, B_SUM] += x
    arms[r, a, B_LEN] += 1.0
    if arms[r, a, B_LEN] < arms[r, a, B_END]:
        return
    released = arms[r, a, B_SUM] + standard_laplace(bits) * par[SCALE]
    length = arms[r, a, B_LEN]
    size = ring.shape[2]
    head = np.int64(arms[r, a, HEAD])
    k = np.int64(arms[r, a, W_K])
    if k == size:  # the oldest release leaves the window
        arms[r, a, W_SUM] -= ring[r, a, head, 0]
        arms[r, a, W_N] -= ring[r, a, head, 1]
        head = head + 1 if head + 1 < size else 0
        arms[r, a, HEAD] = head
        k -= 1
    slot = head + k if head + k < size else head + k - size
    ring[r, a, slot, 0] = released
    ring[r, a, slot, 1] = length
    k += 1
    arms[r, a, W_K] = k
    arms[r, a, W_SUM] += released
    arms[r, a, W_N] += length
    arms[r, a, PRIVATE] = arms[r, a, W_SUM] / arms[r, a, W_N]
    arms[r, a, RELEASES] += 1.0
    arms[r, a, B_SUM] = 0.0
    arms[r, a, B_LEN] = 0.0
    arms[r, a, B_END] = min(arms[r, a, COUNT], par[CAP])
    if runs[r, CUR] == a:
        runs[r, CUR] = -1.0
    if par[DELTA] > 0.0 and detect_change(ring, r, a, head, k, arms[r, a, W_SUM],
                                          arms[r, a, W_N], par[SCALE], par[DELTA]):  # fmt: skip
        _restart(arms, runs, r, t)


@kernel
def _choose(kind: int, arms: Any, runs: Any, t: int, par: Any, out: Any) -> None:
    for r in range(out.shape[0]):
        out[r] = _arm(kind, arms, runs, r, t, par)


@kernel
def _observe(arms: Any, runs: Any, ring: Any, actions: Any, t: int, x: Any, par: Any,
             address: int) -> None:  # fmt: skip
    bits = generator_at(address).bit_generator
    for r in range(x.shape[0]):
        _pull(arms, runs, ring, r, actions[r], t, x[r], par, bits)


@kernel
def _play(kind: int, bernoulli: bool, arms: Any, runs: Any, ring: Any, par: Any,
          address: int, t0: int, rows: Any, actions: Any, rewards: Any, chosen: Any,
          x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if a step met a reward the agent refuses (its arms are
    chosen, nothing is learnt from it)."""
    bits = generator_at(address).bit_generator
    n_runs = arms.shape[0]
    for i in range(rows.shape[0]):
        t = t0 + i
        for r in range(n_runs):
            chosen[r] = _arm(kind, arms, runs, r, t, par)
            x[r] = rows[i, chosen[r] * n_runs + r]
        ok = in_bernoulli(x) if bernoulli else in_unit_interval(x)
        if not ok:
            return i
        for r in range(n_runs):
            actions[i, r] = chosen[r]
            rewards[i, r] = x[r]
            _pull(arms, runs, ring, r, chosen[r], t, x[r], par, bits)
    return rows.shape[0]


class _PrivateShift(LaplaceBatchAgent):
    """Capped episodes, a window of releases and forced exploration, with the index of
    ``_kind``; the change test and restarts when ``_detect`` (module docstring)."""

    _kind = _UCB
    _detect = True
    _default_window = 64
    batches = "batch"
    private_field, releases_field = PRIVATE, RELEASES
    citation = "Azize & Basu 2022, Lemma 1 and Theorem 6; docs/private-shift.md"
    cost_hint = 4.0
    parameter_constraints = {
        **LaplaceBatchAgent.parameter_constraints,
        "cap": Param("int", low=1, none=True,
                     doc="largest batch length (None: ceil(16 / min(epsilon, 1)))"),
        "window": Param("int", low=2, doc="releases per arm in the window"),
        "forced": Param(low=0, high=1, doc="fraction of forced-exploration steps"),
        "alpha": Param(low=0, low_open=True, doc="confidence exponent of the index"),
    }  # fmt: skip

    epsilon: float
    cap: int | None
    window: int
    forced: float
    alpha: float
    delta: float

    def _cap(self) -> int:
        if self.cap is not None:
            return int(self.cap)
        return math.ceil(16.0 / min(float(self.epsilon), 1.0))

    def setup(self) -> None:
        self._setup_common()
        cap = self._cap()
        delta = float(self.delta) if self._detect else 0.0
        if self._detect:
            least = minimum_cap(self._eps, delta, int(self.window))
            if cap < least:
                raise ParameterError(
                    f"cap must be at least {least} for the change test to detect anything at "
                    f"epsilon = {self._eps:g}, window = {self.window}, delta = {delta:g} "
                    f"(docs/private-shift.md), got {cap}", "cap")  # fmt: skip
        forced = float(self.forced)
        period = math.floor(self.n_arms / forced) if forced > 0.0 else 0
        self._par = np.array([self._scale, self._eps, float(cap), delta, float(period),
                              float(self.alpha)])  # fmt: skip
        arms = np.zeros((self.n_runs, self.n_arms, N_ARM_FIELDS))
        arms[:, :, B_END] = 1.0
        self._arms = arms
        self._runs = np.zeros((self.n_runs, N_RUN_FIELDS))
        self._runs[:, CUR] = -1.0
        self._ring = np.zeros((self.n_runs, self.n_arms, int(self.window), 2))

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self._kind, self._arms, self._runs, self.t, self._par, out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = self._rewards(rewards)
        if self.t >= self.n_arms:
            expected = np.empty(self.n_runs, dtype=np.int64)
            _choose(self._kind, self._arms.copy(), self._runs.copy(), self.t, self._par,
                    expected)  # fmt: skip
            if not np.array_equal(actions, expected):
                raise ValueError(
                    f"{self.algorithm} plays the arm of its episode or of its forced schedule "
                    "(docs/private-shift.md): update() needs the actions act() returned"
                )
        _observe(self._arms, self._runs, self._ring, np.asarray(actions, dtype=np.int64),
                 self.t, x, self._par, generator_address(self.rng))  # fmt: skip

    play = LaplaceBatchAgent.play  # (the engine plays the class that defines play by blocks)

    def _play_block(self, rows: Any, actions: Any, rewards: Any) -> int:
        return int(_play(self._kind, self.bernoulli_only, self._arms, self._runs, self._ring,
                         self._par, generator_address(self.rng), self.t, rows, actions,
                         rewards, self._chosen, self._x))  # fmt: skip

    def restarts(self) -> NDArray[np.int64]:
        """The ``(R,)`` numbers of restarts so far (post-processing of the releases)."""
        return self._runs[:, RESTARTS].astype(np.int64)

    def privacy_report(self) -> dict[str, Any]:
        report = super().privacy_report()
        if self._detect:
            report["restarts_mean"] = float(self.restarts().mean())
        return report


class _CD(_PrivateShift):
    parameter_constraints = {
        **_PrivateShift.parameter_constraints,
        "delta": Param(low=0, high=1, low_open=True, high_open=True,
                       doc="confidence of the change test"),
    }  # fmt: skip

    def __init__(
        self,
        epsilon: float = 1.0,
        cap: int | None = None,
        window: int = 64,
        forced: float = 0.01,
        delta: float = 0.01,
        alpha: float = 1.0,
    ) -> None:
        self.epsilon = epsilon
        self.cap = cap
        self.window = window
        self.forced = forced
        self.delta = delta
        self.alpha = alpha


class _SW(_PrivateShift):
    _detect = False
    delta = 0.0

    def __init__(
        self,
        epsilon: float = 1.0,
        cap: int | None = None,
        window: int = 8,
        forced: float = 0.01,
        alpha: float = 1.0,
    ) -> None:
        self.epsilon = epsilon
        self.cap = cap
        self.window = window
        self.forced = forced
        self.alpha = alpha


_PARAMS_DOC = """
    Parameters
    ----------
    epsilon:
        The privacy budget of the whole run (> 0).
    cap:
        The largest batch length; ``None``: ``ceil(16 / min(epsilon, 1))`` (16 at eps >= 1,
        160 at eps = 0.1; measured in docs/private-shift.md: shorter batches detect sooner,
        longer ones carry less noise per reward).{cap_extra}
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


class CDAdaPUCB(_CD):
    __doc__ = _doc("CD-AdaP-UCB: AdaP-UCB (Azize & Basu 2022) with private change detection.",
                   _UCB, True)  # fmt: skip
    name = "cd_adap_ucb"
    algorithm = "CD-AdaP-UCB"
    _kind = _UCB


class CDAdaPKLUCB(_CD):
    __doc__ = _doc("CD-AdaP-KLUCB: AdaP-KLUCB (Azize & Basu 2022) with private change "
                   "detection.", _KLUCB, True)  # fmt: skip
    name = "cd_adap_klucb"
    algorithm = "CD-AdaP-KLUCB"
    _kind = _KLUCB


class CDDPKLUCB(_CD):
    __doc__ = _doc("CD-DP-KLUCB: DP-KLUCB (Azize et al. 2025) with private change detection, "
                   "for Bernoulli bandits.", _DP_KLUCB, True)  # fmt: skip
    name = "cd_dp_klucb"
    algorithm = "CD-DP-KLUCB"
    bernoulli_only = True
    _kind = _DP_KLUCB


class CDDPIMED(_CD):
    __doc__ = _doc("CD-DP-IMED: DP-IMED (Azize et al. 2025) with private change detection, for "
                   "Bernoulli bandits.", _DP_IMED, True)  # fmt: skip
    name = "cd_dp_imed"
    algorithm = "CD-DP-IMED"
    bernoulli_only = True
    _kind = _DP_IMED


class SWAdaPUCB(_SW):
    __doc__ = _doc("SW-AdaP-UCB: AdaP-UCB (Azize & Basu 2022) on a sliding window of releases.",
                   _UCB, False)  # fmt: skip
    name = "sw_adap_ucb"
    algorithm = "SW-AdaP-UCB"
    _kind = _UCB


class SWAdaPKLUCB(_SW):
    __doc__ = _doc("SW-AdaP-KLUCB: AdaP-KLUCB (Azize & Basu 2022) on a sliding window of "
                   "releases.", _KLUCB, False)  # fmt: skip
    name = "sw_adap_klucb"
    algorithm = "SW-AdaP-KLUCB"
    _kind = _KLUCB


class SWDPKLUCB(_SW):
    __doc__ = _doc("SW-DP-KLUCB: DP-KLUCB (Azize et al. 2025) on a sliding window of releases, "
                   "for Bernoulli bandits.", _DP_KLUCB, False)  # fmt: skip
    name = "sw_dp_klucb"
    algorithm = "SW-DP-KLUCB"
    bernoulli_only = True
    _kind = _DP_KLUCB


class SWDPIMED(_SW):
    __doc__ = _doc("SW-DP-IMED: DP-IMED (Azize et al. 2025) on a sliding window of releases, "
                   "for Bernoulli bandits.", _DP_IMED, False)  # fmt: skip
    name = "sw_dp_imed"
    algorithm = "SW-DP-IMED"
    bernoulli_only = True
    _kind = _DP_IMED
