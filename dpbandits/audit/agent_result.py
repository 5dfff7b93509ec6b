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
    ``"P/P'"``) or on the reverse ratio (``"P'/P"``), at the audit's per-bound level (of
    ``(P - delta) / P'`` in an (eps, delta) audit);
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
    table: str = ""

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
            "selection_lower": self.selection_lower, "table": self.table,
        }  # fmt: skip


@dataclass
class AgentAuditResult:
    """What :func:`audit_agent` found; ``str()`` is a readable report, ``to_dict()`` JSON-able.

    ``passed`` is ``eps_lower <= epsilon`` (``None`` for an agent that claims nothing);
    ``runs`` counts the held-out runs on each table bounded; ``steps`` the changed steps given
    (or the quick audit's; empty for the search, whose steps are in ``events``); ``tables`` the
    tables searched, by name; ``tried`` the neighbours scored on pilot runs; ``mode``
    ``"search"`` or ``"quick"``.
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
    tables: tuple[str, ...] = ()
    tried: int = 0
    mode: str = "search"

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

    def reproduce(self) -> str:
        """The command-line options that re-check the worst event alone (its table and changed
        step; the search of events on that neighbour is redone): ``--table T --step S``."""
        w = self.worst
        if w is None:
            return ""
        table = f" --table {w.table}" if w.table and w.table != "given" else ""
        return f"{table} --step {w.step}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent, "epsilon": self.epsilon, "epsilon_source": self.epsilon_source,
            "eps_lower": self.eps_lower, "passed": self.passed, "alpha": self.alpha,
            "runs": self.runs, "horizon": self.horizon, "n_arms": self.n_arms,
            "steps": list(self.steps), "events": [e.to_dict() for e in self.events],
            "seconds": self.seconds, "table_source": self.table_source, "notes": self.notes,
            "delta": self.delta, "tables": list(self.tables), "tried": self.tried,
            "mode": self.mode, "reproduce": self.reproduce(),
        }  # fmt: skip

    def __str__(self) -> str:
        claim = "none" if self.epsilon is None else f"{self.epsilon:g} ({self.epsilon_source})"
        if self.mode == "quick":
            what = (f"  quick audit: {self.tables[0] if self.tables else ''} and its neighbours "
                    f"changing step {', '.join(map(str, self.steps))}")  # fmt: skip
        else:
            what = (f"  search over {len(self.tables)} tables ({', '.join(self.tables)}) and "
                    f"{self.tried} neighbours with pilot runs")  # fmt: skip
        lines = [
            f"{self.agent}",
            what,
            f"  {self.horizon} steps, {self.n_arms} arms, {self.table_source}; {len(self.events)} "
            f"events bounded on {self.runs} held-out runs per table",
            f"  claimed eps: {claim}; overall level {self.alpha:g}; {self.seconds:.1f} s",
            "",
            f"{'table':<16} {'step':>5}  {'event (held-out runs)':<30} {'dir':<5} {'p':>7} "
            f"{'p_prime':>7} {'log-ratio':>9} {'lower':>7}",
        ]
        for e in sorted(self.events, key=lambda e: -e.lower):
            # an event longer than its column goes on at word boundaries, under it
            first, *more = textwrap.wrap(e.event, 30, break_on_hyphens=False) or [""]
            lines.append(
                f"{e.table[:16]:<16} {e.step:>5}  {first:<30} {e.direction:<5} "
                f"{e.p:>7.4f} {e.p_prime:>7.4f} {e.estimate:>9.3f} {e.lower:>7.3f}"
            )
            lines += [f"{'':<16} {'':>5}  {part}" for part in more]
        lines += ["", self.verdict()]
        if self.worst is not None and self.worst.lower > 0:
            lines.append(f"the largest bound: table {self.worst.table}, changed step "
                         f"{self.worst.step}, event {self.worst.event}; re-check it with "
                         f"`dpbandits audit-agent AGENT {self.reproduce()}`")  # fmt: skip
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)
