"""Bandit agents: UCB, Thompson sampling, private agents and non-stationary baselines.

Every agent plays a batch of ``R`` independent replications in lockstep (the protocol of
:mod:`agents.base`)::

    import agents
    agent = agents.make("private", selector="mgem")      # or agents.PrivateAgent("mgem")
    agent.reset(n_runs=100, n_arms=2, horizon=50_000, rng=0)
    actions = agent.act()                                  # (100,) int64
    agent.update(actions, rewards)

Built-in names (:func:`available`): ``ucb``, ``thompson``, ``sw_ucb``, ``d_ucb``, ``exp3``,
``private``; the eps-global-DP agents of the literature ``dp_ucb``, ``dp_ucb_bound``,
``dp_ucb_hybrid``, ``dp_ucb_int`` (:mod:`agents.dp_ucb`) and ``dp_se`` (:mod:`agents.dp_se`),
``adap_ucb``, ``adap_klucb`` (:mod:`agents.adap`), ``dp_klucb``, ``dp_imed``
(:mod:`agents.dp_kl`) and ``dp_ts`` (:mod:`agents.dp_ts`); their versions for piecewise-stationary
bandits ``cd_adap_ucb``, ``cd_adap_klucb``, ``cd_dp_klucb``, ``cd_dp_imed`` (private change
detection and restarts) and ``sw_adap_ucb``, ``sw_adap_klucb``, ``sw_dp_klucb``, ``sw_dp_imed``
(a sliding window of releases) (:mod:`agents.private_shift`); the non-private ``klucb``
(:mod:`agents.klucb`); the non-private anchors of piecewise-stationary bandits ``m_ucb``
(:mod:`agents.m_ucb`), ``glr_klucb`` (:mod:`agents.glr_klucb`) and ``cusum_ucb``
(:mod:`agents.cusum_ucb`), with their change tests in :mod:`agents.change_tests`.
:func:`register` adds a user's own agent class or factory under a new name;
:func:`describe` tells what a name builds and the parameters it takes (used by experiment configs
and ``dpbandits list``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.base import Agent, ArmStatistics
from agents.private import PrivateAgent
from agents.thompson import ThompsonSampling
from agents.ucb import UCB
from dpbandits.core.sibling_packages import lazy_attributes

if TYPE_CHECKING:
    from agents.adap import AdaPKLUCB, AdaPUCB
    from agents.cusum_ucb import CUSUMUCB
    from agents.dp_kl import DPIMED, DPKLUCB
    from agents.dp_se import DPSE
    from agents.dp_ts import LazyDPTS
    from agents.dp_ucb import DPUCB, DPUCBBound, DPUCBHybrid, DPUCBInt
    from agents.exp3 import Exp3
    from agents.glr_klucb import GLRKLUCB
    from agents.klucb import KLUCB
    from agents.m_ucb import MUCB
    from agents.nonstationary import DiscountedUCB, SlidingWindowUCB
    from agents.private_shift import (
        CDDPIMED,
        CDDPKLUCB,
        SWDPIMED,
        SWDPKLUCB,
        CDAdaPKLUCB,
        CDAdaPUCB,
        SWAdaPKLUCB,
        SWAdaPUCB,
    )

__dpbandits_package__ = "agents"  # checked by dpbandits.core.sibling_packages

__all__ = [
    "CDDPIMED",
    "CDDPKLUCB",
    "CUSUMUCB",
    "DPIMED",
    "DPKLUCB",
    "GLRKLUCB",
    "KLUCB",
    "MUCB",
    "UCB",
    "AdaPKLUCB",
    "AdaPUCB",
    "Agent",
    "CDAdaPKLUCB",
    "CDAdaPUCB",
    "AgentKind",
    "ArmStatistics",
    "DPSE",
    "DPUCB",
    "DPUCBBound",
    "DPUCBHybrid",
    "DPUCBInt",
    "DiscountedUCB",
    "Exp3",
    "LazyDPTS",
    "PrivateAgent",
    "SWAdaPKLUCB",
    "SWAdaPUCB",
    "SWDPIMED",
    "SWDPKLUCB",
    "SlidingWindowUCB",
    "ThompsonSampling",
    "available",
    "describe",
    "make",
    "register",
    "unregister",
]

# The agents that the paper's Fig. 9 does not use are imported on first use of their names here
# or in make() (their modules decorate kernels: ~10 ms each of every engine start-up,
# docs/performance.md, "Fig. 9 fixed costs").
_LAZY = {
    "Exp3": "agents.exp3",
    "DiscountedUCB": "agents.nonstationary",
    "SlidingWindowUCB": "agents.nonstationary",
    "DPUCB": "agents.dp_ucb",
    "DPUCBBound": "agents.dp_ucb",
    "DPUCBHybrid": "agents.dp_ucb",
    "DPUCBInt": "agents.dp_ucb",
    "DPSE": "agents.dp_se",
    "KLUCB": "agents.klucb",
    "AdaPUCB": "agents.adap",
    "AdaPKLUCB": "agents.adap",
    "DPKLUCB": "agents.dp_kl",
    "DPIMED": "agents.dp_kl",
    "LazyDPTS": "agents.dp_ts",
    **{
        name: "agents.private_shift"
        for name in ("CDAdaPUCB", "CDAdaPKLUCB", "CDDPKLUCB", "CDDPIMED", "SWAdaPUCB",
                     "SWAdaPKLUCB", "SWDPKLUCB", "SWDPIMED")
    },
    "MUCB": "agents.m_ucb",
    "GLRKLUCB": "agents.glr_klucb",
    "CUSUMUCB": "agents.cusum_ucb",
}


__getattr__ = lazy_attributes("agents", _LAZY, globals())


class _Deferred:
    """A built-in agent class imported when first called (``make``) or described."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, **params: Any) -> Any:
        return __getattr__(self.name)(**params)

    def __repr__(self) -> str:
        return f"<agents.{self.name}>"


_BUILT_IN: dict[str, Callable[..., Any]] = {
    "ucb": UCB,
    "thompson": ThompsonSampling,
    "sw_ucb": _Deferred("SlidingWindowUCB"),
    "d_ucb": _Deferred("DiscountedUCB"),
    "exp3": _Deferred("Exp3"),
    "private": PrivateAgent,
    "dp_ucb": _Deferred("DPUCB"),
    "dp_ucb_bound": _Deferred("DPUCBBound"),
    "dp_ucb_hybrid": _Deferred("DPUCBHybrid"),
    "dp_ucb_int": _Deferred("DPUCBInt"),
    "dp_se": _Deferred("DPSE"),
    "klucb": _Deferred("KLUCB"),
    "adap_ucb": _Deferred("AdaPUCB"),
    "adap_klucb": _Deferred("AdaPKLUCB"),
    "dp_klucb": _Deferred("DPKLUCB"),
    "dp_imed": _Deferred("DPIMED"),
    "dp_ts": _Deferred("LazyDPTS"),
    "cd_adap_ucb": _Deferred("CDAdaPUCB"),
    "cd_adap_klucb": _Deferred("CDAdaPKLUCB"),
    "cd_dp_klucb": _Deferred("CDDPKLUCB"),
    "cd_dp_imed": _Deferred("CDDPIMED"),
    "sw_adap_ucb": _Deferred("SWAdaPUCB"),
    "sw_adap_klucb": _Deferred("SWAdaPKLUCB"),
    "sw_dp_klucb": _Deferred("SWDPKLUCB"),
    "sw_dp_imed": _Deferred("SWDPIMED"),
    "m_ucb": _Deferred("MUCB"),
    "glr_klucb": _Deferred("GLRKLUCB"),
    "cusum_ucb": _Deferred("CUSUMUCB"),
}
_REGISTRY: dict[str, Callable[..., Any]] = dict(_BUILT_IN)


def available() -> list[str]:
    """Names accepted by :func:`make`, sorted."""
    return sorted(_REGISTRY)


def register(name: str, factory: Callable[..., Any], *, overwrite: bool = False) -> None:
    """Make ``agents.make(name, **params)`` call ``factory(**params)``.

    ``factory`` is usually an :class:`Agent` subclass. Registering an existing name raises
    ``ValueError`` unless ``overwrite=True``.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    key = name.lower()
    if key in _REGISTRY and not overwrite:
        raise ValueError(f"agent name {name!r} is already registered (pass overwrite=True)")
    _REGISTRY[key] = factory


def unregister(name: str) -> None:
    """Remove a name added by :func:`register` (built-in names cannot be removed)."""
    key = name.lower() if isinstance(name, str) else name
    if key not in _REGISTRY or (key in _BUILT_IN and _REGISTRY[key] is _BUILT_IN[key]):
        raise ValueError(f"{name!r} is not a run-time registered agent")
    if key in _BUILT_IN:  # a built-in name that was overwritten: back to the built-in
        _REGISTRY[key] = _BUILT_IN[key]
    else:
        del _REGISTRY[key]


def make(name: str, **params: Any) -> Any:
    """A new agent by registered name (case-insensitive), e.g. ``make("ucb", log="t")``.

    ``make("private", selector="krr", epsilon_select=4)`` builds a :class:`PrivateAgent`.
    An unknown name raises ``ValueError`` listing the available names.
    """
    if not isinstance(name, str):
        raise TypeError(f"agent name must be a str, got {type(name).__name__}")
    factory = _REGISTRY.get(name.lower())
    if factory is None:
        raise ValueError(f"unknown agent {name!r}; available agents: {', '.join(available())}")
    return factory(**params)


@dataclass(frozen=True)
class AgentKind:
    """A registered agent name: the class it builds and that class's constructor parameters.

    ``cls`` and ``signature`` come from an agent built with the defaults; both are ``None``
    (and ``error`` says why) when the factory needs arguments.
    """

    name: str
    factory: Callable[..., Any]
    cls: type | None
    signature: inspect.Signature | None
    error: str = ""

    @property
    def parameters(self) -> dict[str, inspect.Parameter]:
        """The named parameters (``{}`` when the signature is unknown)."""
        if self.signature is None:
            return {}
        return {
            p.name: p
            for p in self.signature.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        }

    @property
    def var_keyword(self) -> bool:
        """Whether unknown keywords are accepted (passed on, e.g. to a private agent's selector);
        ``True`` when the signature is unknown, as only the constructor can tell."""
        if self.signature is None:
            return True
        return any(p.kind == p.VAR_KEYWORD for p in self.signature.parameters.values())


def describe(name: str) -> AgentKind:
    """What ``make(name)`` builds and the parameters it takes (an unknown name raises as
    :func:`make` does)."""
    if not isinstance(name, str) or name.lower() not in _REGISTRY:
        make(name)  # raises the error of an unknown name
    factory = _REGISTRY[name.lower()]
    try:
        cls = type(factory())
    except Exception as exc:  # noqa: BLE001 (a factory may need arguments: still described)
        return AgentKind(name.lower(), factory, None, None, f"{type(exc).__name__}: {exc}")
    try:
        sig: inspect.Signature | None = inspect.signature(cls)
    except (TypeError, ValueError):
        sig = None
    return AgentKind(name.lower(), factory, cls, sig)
