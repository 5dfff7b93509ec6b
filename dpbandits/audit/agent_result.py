"""What the agent audit (:func:`dpbandits.audit.agent.audit_agent`) reports: each
event's bound on the privacy loss, and the verdict against the agent's claimed eps."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AgentAuditResult", "EventBound"]


@dataclass(frozen=True)
class EventBound:
    """One event evaluated on the held-out half, and its bound on the privacy loss.

    ``count`` and ``count_prime`` are the held-out runs (of ``n`` on each table) in which the
    event happened, on the base table and on the neighbour that changes step ``step``;
    ``lower`` is the Clopper-Pearson lower bound on ``log(P[E | x] / P[E | x'])`` (direction
    ``"P/P'"``) or on the reverse ratio (``"P'/P"``), at the audit's per-bound level;
    ``estimate`` the plug-in log-ratio; ``selection_lower`` the bound the selection half gave.
    """

    family: str
    step: int
    event: str
    direction: str
    count: int
    count_prime: int
    n: int
    lower: float
    estimate: float
    selection_lower: float

    @property
    def p(self) -> float:
        return self.count / self.n

    @property
    def p_prime(self) -> float:
        return self.count_prime / self.n

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family, "step": self.step, "event": self.event,
            "direction": self.direction, "count": self.count, "count_prime": self.count_prime,
            "n": self.n, "lower": self.lower, "estimate": self.estimate,
            "selection_lower": self.selection_lower,
        }  # fmt: skip


@dataclass
class AgentAuditResult:
    """What :func:`audit_agent` found; ``str()`` is a readable report, ``to_dict()`` JSON-able.

    ``passed`` is ``eps_lower <= epsilon`` (``None`` for an agent that claims nothing);
    ``runs`` counts the runs on each table (both halves); ``steps`` the changed steps.
    """

    agent: str
    epsilon: float | None
    epsilon_source: str
    eps_lower: float
    alpha: float
    runs: int
    horizon: int
    n_arms: int
    steps: tuple[int, ...]
    events: list[EventBound]
    seconds: float
    table_source: str
    notes: list[str] = field(default_factory=list)
    #: The delta of an (eps, delta) audit (0: pure eps-DP).
    delta: float = 0.0

    @property
    def passed(self) -> bool | None:
        if self.epsilon is None:
            return None
        return self.eps_lower <= self.epsilon

    @property
    def worst(self) -> EventBound | None:
        """The event of the largest held-out bound."""
        return max(self.events, key=lambda e: e.lower, default=None)

    def family_lower(self, family: str) -> float:
        """The largest held-out bound of one family (0 when it has none)."""
        return max((e.lower for e in self.events if e.family == family), default=0.0)

    def verdict(self) -> str:
        if self.passed is None:
            return f"no privacy claim; the privacy loss is at least {self.eps_lower:.3g}"
        at = f" at delta={self.delta:g}" if self.delta > 0 else ""
        if self.passed:
            return f"PASS: lower bound {self.eps_lower:.3g} <= eps {self.epsilon:g}{at}"
        return (
            f"FAIL: the privacy loss is at least {self.eps_lower:.3g} > eps {self.epsilon:g}{at} "
            f"(an eps-DP agent fails with probability <= {self.alpha:g})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent, "epsilon": self.epsilon, "epsilon_source": self.epsilon_source,
            "eps_lower": self.eps_lower, "passed": self.passed, "alpha": self.alpha,
            "runs": self.runs, "horizon": self.horizon, "n_arms": self.n_arms,
            "steps": list(self.steps), "events": [e.to_dict() for e in self.events],
            "seconds": self.seconds, "table_source": self.table_source, "notes": self.notes,
            "delta": self.delta,
        }  # fmt: skip

    def __str__(self) -> str:
        claim = "none" if self.epsilon is None else f"{self.epsilon:g} ({self.epsilon_source})"
        lines = [
            f"{self.agent}",
            f"  {self.runs} runs on each of {1 + len(self.steps)} tables: {self.table_source} "
            f"({self.horizon} steps, {self.n_arms} arms) and its neighbours changing step "
            f"{', '.join(map(str, self.steps))}",
            f"  claimed eps: {claim}; overall level {self.alpha:g}; {self.seconds:.1f} s",
            "",
            f"{'family':<8} {'step':>5}  {'event (held-out half)':<36} {'dir':<5} {'p':>7} "
            f"{'p_prime':>7} {'log-ratio':>9} {'lower':>7}",
        ]
        for e in self.events:
            # an event longer than its column goes on at word boundaries, under it
            first, *more = textwrap.wrap(e.event, 36, break_on_hyphens=False) or [""]
            lines.append(
                f"{e.family:<8} {e.step:>5}  {first:<36} {e.direction:<5} {e.p:>7.4f} "
                f"{e.p_prime:>7.4f} {e.estimate:>9.3f} {e.lower:>7.3f}"
            )
            lines += [f"{'':<8} {'':>5}  {part}" for part in more]
        lines += ["", self.verdict()]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)
