"""The private agent of App. H: DP means, DP sensitivities, DP selection (App. H).

Per step, for every replication at once:

1. scores ``q[a]`` are the private means of each arm, released by the hybrid continual-release
   mechanism with ``epsilon_means`` (:class:`dpbandits.continual.PrivateMeans`);
2. sensitivities ``d[a]`` are the windowed DP estimates of the 10%-90% quantile range of arm
   ``a``'s recent rewards, each pair of quantiles with ``epsilon_quantiles``
   (:class:`dpbandits.quantiles.WindowedSensitivity`);
3. the action is ``selector.select(q, d)`` with ``epsilon_select`` (§IV): ``rnm`` uses
   ``max_a d[a]``, ``krr`` uses no sensitivities (so none are estimated and no ``eps_p`` is
   spent), ``gem``/``mgem``/``rs`` use them arm by arm.

Every arm is pulled once first, in order (data independent, no privacy cost). The privacy
ledger (:class:`dpbandits.accounting.PrivacyLedger`) is filled from the agent's counters when
:meth:`PrivateAgent.privacy_report` is called, so accounting costs nothing per step.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent
from agents.private_loop import (
    NO_WINDOWS,
    compile_loop,
    compile_windows,
    means_call,
    play_loop,
    windows_call,
)
from dpbandits import selectors
from dpbandits.accounting import PrivacyLedger
from dpbandits.continual import PrivateMeans
from dpbandits.core import checks
from dpbandits.core.arms import RunArms, read_only
from dpbandits.core.checks import ParameterError, ParameterTypeError
from dpbandits.core.jit import (
    generator_address,
)
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits
from dpbandits.quantiles import (
    DEFAULT_WINDOW_GRID_SIZE,
    WindowedSensitivity,
    check_level_pair,
    mechanism_options,
)
from dpbandits.selectors import Selector
from dpbandits.selectors.compiled import compiled_kernel, selection_args, selection_key
from dpbandits.selectors.spec import parse_selector_spec, resolve_selector

__all__ = ["PrivateAgent"]


#: ``factory(n_runs, n_arms, rng) -> estimator`` with ``update(actions, rewards)`` and ``means()``
#: (for ``means``) or ``values`` (for ``sensitivity``).
EstimatorFactory = Callable[[int, int, np.random.Generator], Any]


def _as_agent_parameter(exc: BaseException) -> BaseException:
    """A selector's error in this agent's parameter names: the selector's ``epsilon`` is
    ``epsilon_select``, and an error without a parameter is about ``selector``."""
    msg = str(exc)
    param = getattr(exc, "param", None)
    if param == "epsilon" or (isinstance(param, str) and param.startswith("epsilon ")):
        param, msg = "epsilon_select", "epsilon_select" + msg[len("epsilon") :]
    cls = ParameterTypeError if isinstance(exc, TypeError) else ParameterError
    return cls(msg, param or "selector")


#: Per agent, in this process only (never copied or pickled with it): the arguments of its
#: compiled loop that hold addresses (``PrivateAgent._calls``), and what they point to.
_LOOP_CALLS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], ...]] = (
    weakref.WeakKeyDictionary()
)


class PrivateAgent(Agent):
    """Private bandit agent of App. H: ``a_t = M(q_t, d_t)`` on private means and sensitivities.

    Parameters
    ----------
    selector:
        A selector name (``"mgem"``, ``"krr"``, ...; any name of
        :func:`dpbandits.selectors.available`, including user plug-ins registered with
        :func:`dpbandits.selectors.register`), or a selector instance.
    epsilon_select:
        ``eps_S`` of each recorded action. ``None`` (default) means 1.0 for a selector given by
        name (App. H) and the instance's own epsilon for an instance.
    epsilon_means:
        ``eps_M`` of the whole sequence of released means of each arm (hybrid mechanism).
    epsilon_quantiles:
        ``eps_p`` of each pair of quantiles (split equally between the two levels).
    window, levels:
        Rewards per sensitivity estimate (200) and quantile levels ((0.1, 0.9)).
    lo, hi:
        Reward range; rewards are clipped to it before entering any mechanism (§3).
    clip_means:
        Clip released means to ``[lo, hi]`` (post-processing; off by default, as in the paper).
    means, sensitivity:
        Optional factories ``f(n_runs, n_arms, rng)`` replacing the private mean estimator
        (object with ``update(actions, rewards)`` and ``means() -> (R, K)``) or the sensitivity
        estimator (``update`` and ``values -> (R, K)``). A plug-in point for ablations (e.g.
        exact means) and for tests that inject known scores. Accounting then still reports the
        configured epsilons: it describes the default mechanisms.
    quantile_method:
        The DP quantile mechanism of the sensitivity estimates: ``"grid"`` (default; right on
        tied and discrete rewards such as Bernoulli ones, see ``docs/quantiles.md``) or
        ``"smith"`` (the paper's continuous mechanism, noise on tied rewards).
    quantile_sampler:
        How the grid quantiles are drawn: ``"float"`` (default) or ``"exact"`` (integer-only
        rejection sampling with exactly the mechanism's probabilities, slower; needs
        ``quantile_method="grid"``; see ``docs/quantiles.md``).
    means_noise:
        The node noise of the private means: ``"laplace"`` (default, the paper's) or
        ``"discrete"`` (discrete Laplace on a power-of-two grid, so every release is an exact
        float and nothing about the rewards hides in its low-order bits; rewards are rounded
        to the grid, by at most half its step: 2**-13 for rewards in [0, 1]; see
        ``docs/floating-point.md``).
    **selector_params:
        Passed to :func:`dpbandits.selectors.make` (e.g. ``beta=0.05`` for ``gem``,
        ``gamma=0.05`` for ``rs``).
    """

    name = "private"
    traits = AgentTraits(private=True, sensitivities=True, compiled=True, needs_horizon=True)
    #: Names a user may reach for that this agent spells otherwise (the selector's epsilon is
    #: this agent's eps_S): error messages suggest the right one.
    renamed_parameters = {"epsilon": "epsilon_select"}
    parameter_constraints = {
        "epsilon_select": Param(
            low=0, low_open=True, none=True, doc="eps_S of each selection (None: the selector's)"
        ),
        "epsilon_means": Param(low=0, low_open=True, doc="eps_M of the private means"),
        "epsilon_quantiles": Param(low=0, low_open=True, doc="eps_p of each quantile pair"),
        "window": Param("int", low=1, doc="rewards per sensitivity estimate (w)"),
        "clip_means": Param("bool", doc="clip the private means to [lo, hi]"),
        "lo": Param(doc="lower end of the reward range"),
        "hi": Param(doc="upper end of the reward range"),
        "quantile_method": Param("str", options=("grid", "smith"), doc="DP quantile mechanism"),
        "quantile_sampler": Param(
            "str", options=("float", "exact"), doc="the grid mechanism's sampler"
        ),
        "means_noise": Param("str", options=("laplace", "discrete"), doc="noise of the means"),
        "levels": Param("any", doc="quantile levels (lower, upper) of the sensitivity"),
        "means": Param("any", none=True, doc="factory of a custom means estimator"),
        "sensitivity": Param("any", none=True, doc="factory of a custom sensitivity estimator"),
    }

    def __init__(
        self,
        selector: Any = "mgem",
        epsilon_select: float | None = None,
        epsilon_means: float = 1.0,
        epsilon_quantiles: float = 1.0,
        window: int = 200,
        levels: tuple[float, float] = (0.1, 0.9),
        lo: float = 0.0,
        hi: float = 1.0,
        clip_means: bool = False,
        means: EstimatorFactory | None = None,
        sensitivity: EstimatorFactory | None = None,
        quantile_method: str = "grid",
        quantile_sampler: str = "float",
        means_noise: str = "laplace",
        **selector_params: Any,
    ) -> None:
        self.selector = selector
        self.epsilon_select = epsilon_select
        self.epsilon_means = epsilon_means
        self.epsilon_quantiles = epsilon_quantiles
        self.window = window
        self.levels = levels
        self.quantile_method = quantile_method
        self.quantile_sampler = quantile_sampler
        self.means_noise = means_noise
        self.lo = lo
        self.hi = hi
        self.clip_means = clip_means
        self.means = means
        self.sensitivity = sensitivity
        self.extra_params = dict(selector_params)
        self._resolved: Any = None  # the selector object, built at reset (_selector)

    @classmethod
    def accepted_parameters(cls, params: Mapping[str, Any]) -> list[str]:
        """The parameters an agent built with ``params`` takes: its own, then those of its
        selector (``params["selector"]``, by name) except ``epsilon``, which is
        ``epsilon_select`` here. Read by experiment configs to refuse an unknown key."""
        own = [p.name for p in inspect.signature(cls).parameters.values()
               if p.kind is not p.VAR_KEYWORD]  # fmt: skip
        selector = params.get("selector", "mgem")
        names: list[str] = []
        if isinstance(selector, str):
            factory = selectors.REGISTRY.lookup(parse_selector_spec(selector)[0])
            names = list(getattr(factory, "param_names", lambda: [])())
        return own + [n for n in names if n != "epsilon" and n not in own]

    @property
    def _selector(self) -> Any:
        """The selector object, built from ``selector``, ``epsilon_select`` and the selector's
        parameters on first use (at the latest at :meth:`reset`, the one place this agent
        checks its parameters): an unknown name or a bad value raises there, named."""
        if self._resolved is None:
            if "epsilon" in self.extra_params:
                # the selector's epsilon is this agent's epsilon_select (eps_S): one name for it
                raise ParameterTypeError(
                    "epsilon: a private agent's selection budget is epsilon_select (eps_S), "
                    "not epsilon",
                    "epsilon",
                )
            try:
                self._resolved = resolve_selector(
                    self.selector, self.epsilon_select, **self.extra_params
                )
            except (ValueError, TypeError) as exc:
                raise _as_agent_parameter(exc) from None
        return self._resolved

    @property
    def selector_(self) -> Any:
        """The resolved selector object."""
        return self._selector

    @property
    def cost_hint(self) -> float:
        """Relative cost of a step (UCB ~ 1), used by the engine to schedule slow tasks first."""
        # measured with the compiled block loop (docs/performance.md); a selector without a
        # kernel runs step by step, ~30 µs a step whatever the number of runs
        if compiled_kernel(self._selector, 2) is None:
            return 12.0
        name = getattr(self._selector, "name", "")
        return {"krr": 3.0, "rnm": 5.0, "gem": 5.0, "mgem": 5.0, "rs": 8.0}.get(name, 7.0)

    def compile_key(self, n_arms: int) -> Any:
        """What this agent's own compiled code depends on, for ``n_arms`` arms: its class, its
        selector's kernel and the types of the kernel's parameters (``selection_key``); for a
        selector without a kernel (played step by step), the quantile method. Agents with equal
        keys share it (``dpbandits.experiments.warmup`` compiles it once); the loop and the
        window update that they call are shared by all private agents (:meth:`shared_parts`)."""
        spec = compiled_kernel(self._selector, n_arms)
        if spec is None:
            uses_d = bool(getattr(self._selector, "uses_sensitivities", True))
            return (type(self), None, self.quantile_method if uses_d else None)
        return (type(self), *selection_key(spec.kernel, spec.params))

    def shared_parts(self, n_arms: int) -> list[tuple[Any, tuple[Any, ...]]]:
        """Kernels that the compiled loops of several agents call, as ``(function, args)``
        calls that compile them (picklable): the loop itself (:func:`compile_loop`, one for
        every selector and quantile method) and the window update of this agent's quantile
        method (:func:`compile_windows`), if it plays the compiled loop. A warm-up compiles
        each once, beside the agents' own kernels (``dpbandits.experiments.warmup``)."""
        custom = self.means is not None or self.sensitivity is not None
        if custom or compiled_kernel(self._selector, n_arms) is None:
            return []  # a loop that is not compiled (setup)
        if not getattr(self._selector, "uses_sensitivities", True):
            return [(compile_loop, ())]
        if self.quantile_sampler != "float":
            return []  # (the exact sampler: not compiled, setup)
        return [(compile_loop, ()), (compile_windows, (self.quantile_method,))]

    @property
    def label(self) -> str:
        """A short description, e.g. ``private[mgem, eps_S=1]``."""
        return f"private[{self._selector.name}, eps_S={self._selector.epsilon:g}]"

    def setup(self) -> None:
        checks.bounds(self.lo, self.hi)
        check_level_pair(self.levels)
        # the quantile module's own rules (one home), in this agent's parameter names
        mechanism_options(
            {"method": self.quantile_method, "sampler": self.quantile_sampler},
            DEFAULT_WINDOW_GRID_SIZE, prefix="quantile_",
        )  # fmt: skip
        for name, factory in (("means", self.means), ("sensitivity", self.sensitivity)):
            if factory is not None and not callable(factory):
                raise ParameterTypeError(
                    f"{name} must be None or a factory (n_runs, n_arms, rng) -> estimator, "
                    f"got {type(factory).__name__} {factory!r}",
                    name,
                )
        eps_m = float(self.epsilon_means)
        eps_p = float(self.epsilon_quantiles)
        window = int(self.window)
        # Independent streams for the three mechanisms (Generator.spawn needs numpy >= 1.25).
        rng_means, rng_quantiles, self._rng_select = self.rng.spawn(3)
        r, k = self.n_runs, self.n_arms
        if self.means is None:
            self._means = PrivateMeans(
                r, k, eps_m, lo=self.lo, hi=self.hi, n_max=self.horizon,
                rng=rng_means, clip_means=self.clip_means, noise=self.means_noise,
            )  # fmt: skip
        else:
            self._means = self.means(r, k, rng_means)
        self._uses_d = bool(getattr(self._selector, "uses_sensitivities", True))
        self._sens: Any = None
        if self._uses_d:
            if self.sensitivity is None:
                self._sens = WindowedSensitivity(
                    r, k, eps_p, lo=self.lo, hi=self.hi, window=window,
                    levels=tuple(self.levels), rng=rng_quantiles,
                    method=self.quantile_method, sampler=self.quantile_sampler,
                )  # fmt: skip
            else:
                self._sens = self.sensitivity(r, k, rng_quantiles)
        self._ledger_cls = PrivacyLedger
        self._select = self._selector.select
        # Fast path: the built-in estimators always give finite q and finite d > 0 of shape
        # (R, K), which is exactly what Selector.select validates on every call. For a
        # dpbandits Selector we then call its validated-input entry point ``select_batch`` directly;
        # this halves the per-step cost (validation is ~10 numpy calls). Custom estimators and
        # duck-typed selectors always go through the validating ``select``.
        self._fast = (
            isinstance(self._selector, Selector)
            and callable(getattr(self._selector, "select_batch", None))
            and self.means is None
            and (self.sensitivity is None or not self._uses_d)
            and r > 0
            and k >= 2
        )
        self._ones = np.ones((r, k))
        # Fast observe: with the built-in estimators the rewards are clipped and checked once
        # for both (instead of once in each), and actions this agent chose itself are known to
        # be valid (checked by identity, so any other array still goes through validation).
        self._fast_observe = self.means is None and (self.sensitivity is None or not self._uses_d)
        self._layout = RunArms(r, k)  # the estimators' flat (R K) stream layout
        self._lo_f, self._hi_f = float(self.lo), float(self.hi)
        if self._fast:
            # Live read-only views of the estimators' state (updated in place): select_batch
            # never writes into q or d, and `Mechanism.select` hands it read-only arrays too,
            # so the selectors' row kernels compile for one array type whichever path calls.
            # (clipped means are a fresh array at every step: no view to keep)
            self._q_view = None if self.clip_means else read_only(self._means.means(copy=False))
            self._d_view = read_only(self._sens.current if self._uses_d else self._ones)

        # The compiled block loop (play): built-in estimators and a selector with a compiled
        # kernel (dpbandits.selectors.compiled) only.
        self._compiled = None
        if self._fast and (not self._uses_d or self._sens.kernel_args() is not None):
            self._compiled = compiled_kernel(self._selector, k)
        # the loop's quantile method (its window update, called by address: windows_call)
        self._loop_method = self.quantile_method if self._uses_d else None
        self._bounds = (self._lo_f, self._hi_f, bool(self.clip_means))
        # the streams and clipped rewards of the step whose means update play makes
        self._flat, self._x = np.empty(r, dtype=np.int64), np.empty(r)
        _LOOP_CALLS.pop(self, None)  # (made again for this reset's state: _calls)

    # -- protocol -------------------------------------------------------------------------
    def block_player(self) -> Callable[[Any, Any, Any], None] | None:
        """:meth:`play` when the agent's parts are all compiled (built-in estimators, a selector
        with a compiled kernel), else ``None``: the engine then plays it step by step."""
        player = super().block_player()
        return player if getattr(self, "_compiled", None) is not None else None

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``) in compiled calls:
        each takes the steps whose private-means noise is drawn and one more, whose means
        update (which draws the next noise block) is made here; a step whose selection
        refuses its input goes through :meth:`act` (for the selector's own error)."""
        if self._compiled is None:
            raise RuntimeError("play needs the compiled parts (see block_player)")
        rows = read_only(rows)  # the one compiled loop for the engine's tape and any other rows
        m, i = rows.shape[0], 0
        while i < m:
            ready = self._means.ready_steps
            done = self._play_compiled(rows[i:], actions[i:], rewards[i:], ready)
            i += done
            if done > ready:  # the last step's means update, with the next noise block
                self._means.update_flat(self._flat, self._x)
            elif i < m:  # the selection refused step i: the selector's error (or its step)
                a = self.act()
                x = rows[i, a * self.n_runs + np.arange(self.n_runs)]
                self.update(a, x)
                actions[i], rewards[i] = a, x
                i += 1

    def _play_compiled(self, rows: Any, actions: Any, rewards: Any, ready: int) -> int:
        if actions.dtype != np.int64:  # one compiled loop for every dtype
            wide = np.empty(actions.shape, dtype=np.int64)
            done = self._play_compiled(rows, wide, rewards, ready)
            actions[:done] = wide[:done]
            return done
        spec = self._compiled
        assert spec is not None  # (play checked it)
        windows, selection, means_update = self._calls(spec)
        block = (rows, actions, rewards, self._flat, self._x)
        means_state = (*means_update, *self._means.kernel_args())
        done = int(play_loop(self.t, ready, block, self._bounds, means_state, windows,
                             selection))  # fmt: skip
        self._means.took_steps(min(done, ready))
        self.played(done)
        return done

    def _calls(self, spec: Any) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[int, int]]:
        """The loop's ``windows`` and ``selection`` arguments (``agents.private_loop.play_loop``)
        and the head of its ``means_state``: the state, the Generators' addresses, the selector's
        parameters (stored at an address: ``selection_args``) and the addresses of the window
        update, the selection and the means' update, which the loop calls by address. Made
        once per reset, and kept in this process only (:data:`_LOOP_CALLS`: the addresses are
        its own, and a copy of the agent draws from its own Generators): typing the arguments
        to find the compiled callees costs ~0.1 ms, which once per noise block slowed the
        private agents down by up to 2x."""
        calls = _LOOP_CALLS.get(self)
        if calls is not None:
            windows, selection, means, _kept = calls
            return windows, selection, means
        select_address = generator_address(self._rng_select)
        if self._uses_d:
            state: tuple[Any, ...] = self._sens.kernel_args()
            quantiles_address = generator_address(self._sens.generator)
        else:  # (an address that is valid, never drawn from)
            state, quantiles_address = NO_WINDOWS, select_address
        update = windows_call(self._loop_method, state, self._flat, self._x, self._lo_f,
                              self._hi_f)  # fmt: skip
        windows = (self._uses_d, quantiles_address, *update, *state)
        (carrier, *entry), kept = selection_args(spec.kernel, spec.params)
        selection = (carrier, select_address, *entry)
        means = means_call(self._means.kernel_args(), self._flat, self._x)
        _LOOP_CALLS[self] = (windows, selection, means, kept)
        return windows, selection, means

    def choose(self) -> NDArray[np.int64]:
        if self._fast:
            q = self._q_view
            if q is None:
                q = read_only(self._means.means(copy=False))
            out = self._selector.select_batch(q, self._d_view, self._rng_select)
            if out.dtype != np.int64:
                out = out.astype(np.int64)
            return out
        q = self._means.means()
        d = self._sens.values if self._uses_d else None
        return self._select(q, d, rng=self._rng_select)

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        if not self._fast_observe:
            self._means.update(actions, rewards)
            if self._uses_d:
                self._sens.update(actions, rewards)
            return
        # Agent.update has checked both: actions in [0, K), rewards a finite float64 (R,) array
        x = np.minimum(np.maximum(rewards, self._lo_f), self._hi_f)  # clip to [lo, hi]
        flat = self._layout.flat(actions)
        if self._uses_d:
            self._sens.update_flat(flat, x)  # copies x into its windows
        self._means.update_flat(flat, x)

    # -- hooks for plots and reports ------------------------------------------------------
    def private_means(self) -> NDArray[np.float64]:
        """The ``(R, K)`` private means released so far (Fig. 9b)."""
        return np.asarray(self._means.means())

    def sensitivities(self) -> NDArray[np.float64] | None:
        """The ``(R, K)`` current sensitivity estimates (Fig. 9c, 9d); ``None`` for ``krr``."""
        if not self._uses_d:
            return None
        return np.asarray(self._sens.values)

    def privacy_report(self) -> dict[str, Any]:
        """The privacy spent so far (App. H summary), as a JSON-able dict.

        Selections: one ``eps_S`` action per step after the initial round, identical in every
        replication. Quantile pairs: per arm, the largest number of estimates over the
        replications (the worst case a replication can have spent). Agents whose selector uses
        no sensitivities (``krr``) estimate none and report ``eps_p`` as unused.
        """
        eps_select = float(self._selector.epsilon)
        ledger = self._ledger_cls(
            float(self.epsilon_means),
            float(self.epsilon_quantiles) if self._uses_d else None,
            eps_select,
            self.n_arms,
        )
        n_sel = max(self.t - self.n_arms, 0)
        if n_sel:
            ledger.record_selections(n_sel)
        if self._uses_d:
            # (R, K): the ledger keeps the largest count per arm (the worst-case replication).
            ledger.record_quantile_pairs(np.asarray(self._sens.n_estimates, dtype=np.int64))
        report = dict(ledger.report())
        report.setdefault("selector", self._selector.name)
        report.setdefault("selector_private", bool(getattr(self._selector, "private", True)))
        report.setdefault("selector_guarantee", str(getattr(self._selector, "guarantee", "")))
        report.setdefault("uses_sensitivities", self._uses_d)
        text = str(ledger)
        if not report["selector_private"]:
            text += (
                f"\n  WARNING: selector {self._selector.name!r} is not differentially private "
                f"({report['selector_guarantee']}): the actions carry no eps_S guarantee"
            )
        report.setdefault("text", text)
        return report
