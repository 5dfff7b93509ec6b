"""Empirical privacy audits: of a selector, of a top-k mechanism, of a whole bandit agent.

Each audit draws the mechanism many times on neighbouring inputs and puts exact
Clopper-Pearson lower bounds on the privacy loss of output events; it fails when a bound exceeds
the claimed eps (docs/selectors.md, "Check it" and "Auditing an agent"; docs/topk.md):

- :func:`audit` (:mod:`~dpbandits.audit.selector`): a selector on the hard neighbouring pairs
  :data:`~dpbandits.audit.selector.HARD_PAIRS` (§IV-A and App. A/B of the main paper);
  ``dpbandits audit SELECTOR``. The selectors' conformance kit,
  :func:`dpbandits.testing.check_selector`, runs it as its privacy check.
- :func:`audit_topk` (:mod:`~dpbandits.audit.topk`): a top-k mechanism on neighbouring score
  vectors (paper 002).
- :func:`audit_agent` (:mod:`~dpbandits.audit.agent`): a whole agent, end to end, on reward
  tables that differ in one step's rewards (:mod:`~dpbandits.audit.reward_tables`), against the
  total eps of its privacy report; ``dpbandits audit-agent AGENT``.

The conformance kits (the interface every selector or agent must meet) are in
:mod:`dpbandits.testing`. The top-k and agent audits load on first use: the agent audit runs
agents on environments through the experiment engine, which the selector audit does not need.
"""

from typing import TYPE_CHECKING

from dpbandits.audit.selector import (
    HARD_PAIRS,
    AuditResult,
    NeighbouringPair,
    audit,
    clopper_pearson,
    estimate_privacy_loss,
)
from dpbandits.core.sibling_packages import lazy_attributes

if TYPE_CHECKING:
    from dpbandits.audit.agent import audit_agent
    from dpbandits.audit.agent_result import AgentAuditResult
    from dpbandits.audit.topk import HARD_TOPK_PAIRS, TopKAuditResult, TopKPair, audit_topk

__getattr__ = lazy_attributes(
    "dpbandits.audit",
    {"audit_agent": "dpbandits.audit.agent",
     "AgentAuditResult": "dpbandits.audit.agent_result",
     "audit_topk": "dpbandits.audit.topk",
     "HARD_TOPK_PAIRS": "dpbandits.audit.topk",
     "TopKAuditResult": "dpbandits.audit.topk",
     "TopKPair": "dpbandits.audit.topk"},
    globals(),
)  # fmt: skip

__all__ = [
    "HARD_PAIRS",
    "HARD_TOPK_PAIRS",
    "AgentAuditResult",
    "AuditResult",
    "NeighbouringPair",
    "TopKAuditResult",
    "TopKPair",
    "audit",
    "audit_agent",
    "audit_topk",
    "clopper_pearson",
    "estimate_privacy_loss",
]
