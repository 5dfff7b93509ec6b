"""The privacy report of one agent's run on one environment, whatever the trust model, and
its (eps, delta) conversion (docs/trust-models.md).

Two sources may guarantee privacy in a run: the agent (its ``privacy_report()``: eps-DP or
rho-zCDP of a trusted learner) and the environment, when it privatizes the rewards at the user
(``dpbandits/LocalDP-v0``: eps-LDP, whatever the agent). :func:`run_report` joins them: with a
local randomizer the run is eps-LDP (the environment's report, whose ``agent_report`` keeps the
agent's own statement, a guarantee about the reports it was given), else the agent's report.
:func:`convert_reports` adds each report's (eps, delta) at the run's ``delta``
(:func:`dpbandits.trust.notions.with_conversion`).
"""

from __future__ import annotations

from typing import Any

from dpbandits.trust.notions import with_conversion

__all__ = ["convert_reports", "run_report"]


def run_report(agent_report: Any, env_report: Any) -> Any:
    """The privacy report of a run (module docstring); ``None`` when neither is private."""
    if not isinstance(env_report, dict):
        return agent_report
    out = dict(env_report)
    out["agent_report"] = agent_report
    if isinstance(agent_report, dict) and isinstance(agent_report.get("text"), str):
        own = agent_report["text"].replace("\n", "\n    ")
        out["text"] = (f"{env_report['text']}\n  the agent's own guarantee, about the reports "
                       f"it learns from:\n    {own}")  # fmt: skip
    return out


def convert_reports(privacy: dict[str, Any], delta: float | None) -> dict[str, Any]:
    """Every report of ``privacy`` (label -> report) with its (eps, delta) conversion at
    ``delta``; unchanged when ``delta`` is ``None``."""
    if delta is None:
        return privacy
    return {label: with_conversion(rep, delta) for label, rep in privacy.items()}
