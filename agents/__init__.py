"""Bandit agents: UCB, Thompson sampling, private agents and non-stationary baselines.

Every agent plays a batch of ``R`` independent replications in lockstep (the protocol of
:mod:`agents.base`)::

    import agents
    agent = agents.make("private", selector="mgem")      # or agents.PrivateAgent("mgem")
    agent.reset(n_runs=100, n_arms=2, horizon=50_000, rng=0)
    actions = agent.act()                                  # (100,) int64
    agent.update(actions, rewards)

The names (:func:`available`) are those of one registry (:data:`REGISTRY`,
:class:`dpbandits.core.registry.Registry`): the built-ins of :data:`BUILT_IN` (one line each:
UCB, Thompson sampling, the non-stationary baselines, Exp3, the private agent, the
eps-global-DP agents of the literature, docs/private-bandits.md; the non-private anchors of
piecewise-stationary bandits M-UCB, GLR-klUCB and CUSUM-UCB, docs/shift-anchors.md; the
eps-global-DP agents built for change, ``cd_*`` and ``sw_*``, docs/private-shift.md; the eps-LDP
and rho-zCDP agents of the other trust models, docs/trust-models.md), the agents a user adds
with :func:`register`, and those of installed plug-ins, declared as entry points of the group
``dpbandits.agents`` (:data:`ENTRY_POINT_GROUP`). :func:`describe` tells what a name builds and
the parameters it takes, from the class (used by experiment configs and ``dpbandits list``).
Writing a compiled agent: docs/agents.md (:mod:`agents.skeleton`).
"""

from __future__ import annotations

from typing import Any

from agents.base import Agent, ArmStatistics
from dpbandits.core.registry import Kind, Registry
from dpbandits.core.sibling_packages import lazy_attributes
from dpbandits.core.traits import AgentProtocol, AgentTraits

__dpbandits_package__ = "agents"  # checked by dpbandits.core.sibling_packages

#: The entry-point group of third-party agents: ``[project.entry-points."dpbandits.agents"]``
#: ``my_agent = "my_package.module:MyAgent"`` in a plug-in's ``pyproject.toml``.
ENTRY_POINT_GROUP = "dpbandits.agents"

#: Every built-in agent, one line each: its name and ``"module:Class"``. The class is imported
#: on the first use of its name here, in :func:`make` or as ``agents.Class`` (the modules
#: decorate kernels: ~10 ms each of an engine start-up, docs/performance.md).
BUILT_IN = {
    "ucb": "agents.ucb:UCB",
    "thompson": "agents.thompson:ThompsonSampling",
    "sw_ucb": "agents.nonstationary:SlidingWindowUCB",
    "d_ucb": "agents.nonstationary:DiscountedUCB",
    "exp3": "agents.exp3:Exp3",
    "private": "agents.private:PrivateAgent",
    "dp_ucb": "agents.dp_ucb:DPUCB",
    "dp_ucb_bound": "agents.dp_ucb:DPUCBBound",
    "dp_ucb_hybrid": "agents.dp_ucb:DPUCBHybrid",
    "dp_ucb_int": "agents.dp_ucb:DPUCBInt",
    "dp_se": "agents.dp_se:DPSE",
    "klucb": "agents.klucb:KLUCB",
    "adap_ucb": "agents.adap:AdaPUCB",
    "adap_klucb": "agents.adap:AdaPKLUCB",
    "dp_klucb": "agents.dp_kl:DPKLUCB",
    "dp_imed": "agents.dp_kl:DPIMED",
    "dp_ts": "agents.dp_ts:LazyDPTS",
    "m_ucb": "agents.m_ucb:MUCB",
    "glr_klucb": "agents.glr_klucb:GLRKLUCB",
    "cusum_ucb": "agents.cusum_ucb:CUSUMUCB",
    "cd_adap_ucb": "agents.private_shift:CDAdaPUCB",
    "cd_adap_klucb": "agents.private_shift:CDAdaPKLUCB",
    "cd_dp_klucb": "agents.private_shift:CDDPKLUCB",
    "cd_dp_imed": "agents.private_shift:CDDPIMED",
    "sw_adap_ucb": "agents.private_shift:SWAdaPUCB",
    "sw_adap_klucb": "agents.private_shift:SWAdaPKLUCB",
    "sw_dp_klucb": "agents.private_shift:SWDPKLUCB",
    "sw_dp_imed": "agents.private_shift:SWDPIMED",
    # the other trust models (docs/trust-models.md): eps-LDP and rho-zCDP
    "ldp_ucb_l": "agents.ldp_ucb:LDPUCBL",
    "ldp_ucb_b": "agents.ldp_ucb:LDPUCBB",
    "ldp_klucb_b": "agents.ldp_ucb:LDPKLUCBB",
    "ldp_ucb_ls": "agents.ldp_ucb:LDPUCBLS",
    "ldp_ucb_bs": "agents.ldp_ucb:LDPUCBBS",
    "adac_ucb": "agents.adac:AdaCUCB",
}

#: The agent names: built-ins, run-time registrations (:func:`register`) and the entry points of
#: installed plug-ins (:data:`ENTRY_POINT_GROUP`; one that fails to load fails only its name).
REGISTRY = Registry(
    "agent",
    dict(BUILT_IN),
    entry_point_group=ENTRY_POINT_GROUP,
    sort=True,
    case_insensitive=True,
    fixed_builtins=False,
    available_label="available agents",
)

_CLASSES = {path.partition(":")[2]: path.partition(":")[0] for path in BUILT_IN.values()}
__getattr__ = lazy_attributes("agents", _CLASSES, globals())

#: ``AgentKind``: what :func:`describe` returns (:class:`dpbandits.core.registry.Kind`).
AgentKind = Kind

__all__ = [
    "ENTRY_POINT_GROUP",
    "REGISTRY",
    "Agent",
    "AgentKind",
    "AgentProtocol",
    "AgentTraits",
    "ArmStatistics",
    "available",
    "describe",
    "make",
    "refresh_plugins",
    "register",
    "unregister",
    *sorted(_CLASSES),
]


def available() -> list[str]:
    """Names accepted by :func:`make`, sorted: built-ins, registered and plug-in agents."""
    return REGISTRY.available()


def register(name: str, factory: Any, *, overwrite: bool = False) -> None:
    """Make ``agents.make(name, **params)`` call ``factory(**params)``.

    ``factory`` is usually an :class:`Agent` subclass. Registering an existing name raises
    ``ValueError`` unless ``overwrite=True`` (:func:`unregister` then restores a built-in).
    """
    REGISTRY.register(name, factory, overwrite=overwrite)


def unregister(name: str) -> None:
    """Remove a name added by :func:`register` (built-in names cannot be removed)."""
    REGISTRY.unregister(name)


def refresh_plugins() -> None:
    """Forget the discovered entry points (the next lookup scans the installed packages)."""
    REGISTRY.refresh_plugins()


def make(name: str, **params: Any) -> Any:
    """A new agent by registered name (case-insensitive), e.g. ``make("ucb", log="t")``.

    ``make("private", selector="krr", epsilon_select=4)`` builds a :class:`PrivateAgent`.
    An unknown name raises ``ValueError`` listing the available names.
    """
    return REGISTRY.lookup(name)(**params)


def describe(name: str) -> Kind:
    """What ``make(name)`` builds, learnt from the class (nothing is built): the class, its
    constructor's signature and declared parameter table (``Kind.constraints``), or for a
    factory function its own signature (``cls`` is then ``None``). An unknown name raises as
    :func:`make` does; a plug-in that fails to load is described by its ``error``."""
    return REGISTRY.describe(name)
