"""Each privacy guarantee in its native notion, and converted to (eps, delta) by an accountant.

A private agent of this library states one of three guarantees for its whole run, two reward
sequences being neighbours when they differ in one step's reward:

- ``"pure"`` -- eps-DP (eps-global DP, the trusted learner of Azize & Basu 2022, Definition 2);
- ``"local"`` -- eps-LDP: every reward is privatized by the user before the learner sees it
  (Ren, Zhou, Liu & Shroff 2020, Definition 2). Every released value is a function of the
  reports, and only the changed step's report has a different law, so the whole run is also
  eps-DP in the global sense;
- ``"zcdp"`` -- rho-zCDP: ``D_alpha(M(x) || M(x')) <= rho alpha`` for every Renyi order
  ``alpha > 1`` (Bun & Steinke 2016, Definition 1.1), the notion of AdaC-UCB (Azize & Basu
  2023, "Concentrated differential privacy for bandits").

A pure guarantee implies ``rho = eps^2 / 2`` (Bun & Steinke 2016, Proposition 1.4), which the
reports state (``rho_implied``) so that pure and concentrated agents can be compared at one
rho. Converting to (eps, delta) at a ``delta`` the user gives is done by Google's
``dp-accounting`` library (the optional extra ``accounting``), never by a formula written here:

- rho-zCDP: its Renyi accountant (``RdpAccountant``) composed with ``ZCDpEvent(rho)``, whose
  conversion from Renyi DP to (eps, delta) is the library's;
- eps-DP and eps-LDP: every eps-DP mechanism is dominated by binary randomized response at eps
  (Kairouz, Oh & Viswanath 2015, Theorem 2.4), so its tightest (eps', delta) curve is that of
  randomized response; the library's privacy-loss-distribution accountant gives it
  (``RandomizedResponseDpEvent`` with two buckets and noise ``2 / (1 + e^eps)``, under
  replace-one neighbours: one step's reward replaced). For ``delta > 0`` this eps' is below eps.

Without the extra installed, :func:`approx_dp` says which extra to install instead of a number
(the native notion is always there).
"""

from __future__ import annotations

import copy
import math
from typing import Any

from dpbandits import accounting
from dpbandits.core import checks
from dpbandits.core.extras import install_hint

__all__ = [
    "NOTIONS",
    "accountant_available",
    "approx_dp",
    "check_delta",
    "conversion_text",
    "implied_rho",
    "native_guarantee",
    "with_conversion",
]

#: The notions a privacy report may state (its ``"notion"`` key), with how they are written.
NOTIONS = {"pure": "eps-DP", "local": "eps-LDP", "zcdp": "rho-zCDP"}

#: The extra that installs the accountant.
EXTRA = "accounting"


def check_delta(delta: Any) -> float:
    """``delta`` as a float in the open interval ``(0, 1)`` (``ParameterError`` naming it)."""
    return checks.probability(delta, "delta")


def implied_rho(epsilon: float) -> float:
    """The zCDP parameter an eps-DP guarantee implies: ``eps^2 / 2`` (Bun & Steinke 2016,
    Proposition 1.4)."""
    return accounting.implied_rho(checks.positive_number(epsilon, "epsilon", allow_inf=True))


def accountant_available() -> bool:
    """Whether Google's ``dp-accounting`` can be imported (the extra ``accounting``)."""
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        return False
    return True


def approx_dp(notion: str, value: float, delta: Any) -> dict[str, Any]:
    """``{"delta", "epsilon", "accountant"}``: the (eps, delta) guarantee that ``value`` in
    ``notion`` (``"pure"``/``"local"``: eps; ``"zcdp"``: rho) gives at ``delta``, from the
    accountant (module docstring). Without the extra: ``"epsilon": None`` and ``"missing"``,
    the command that installs it."""
    d = check_delta(delta)
    checks.one_of(notion, NOTIONS, "notion")
    v = checks.positive_number(value, "rho" if notion == "zcdp" else "epsilon", allow_inf=True)
    if not accountant_available():
        return {
            "delta": d,
            "epsilon": None,
            "missing": f"the (eps, delta) conversion needs Google's dp-accounting, the extra "
            f"'{EXTRA}': {install_hint(EXTRA)}",
        }
    if math.isinf(v):
        return {"delta": d, "epsilon": math.inf, "accountant": "none (no finite guarantee)"}
    import dp_accounting
    from dp_accounting import pld, rdp

    if notion == "zcdp":
        acc = rdp.RdpAccountant()
        acc.compose(dp_accounting.ZCDpEvent(v))
        eps = float(acc.get_epsilon(d))
        how = "dp_accounting RdpAccountant(ZCDpEvent(rho))"
    else:
        noise = 2.0 / (1.0 + math.exp(v)) if v < 700 else 0.0
        if noise == 0.0:  # randomized response that never lies: no finite eps below v
            return {"delta": d, "epsilon": v, "accountant": "eps itself (eps too large)"}
        acc_pld = pld.PLDAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
        )
        acc_pld.compose(dp_accounting.RandomizedResponseDpEvent(noise, 2))
        # the accountant discretises the loss: never report more than the pure eps itself
        eps = min(float(acc_pld.get_epsilon(d)), v)
        how = ("dp_accounting PLDAccountant(RandomizedResponseDpEvent(2/(1+e^eps), 2)), "
               "replace-one")  # fmt: skip
    return {"delta": d, "epsilon": eps, "accountant": how}


def native_guarantee(report: dict[str, Any]) -> tuple[str, float] | None:
    """``(notion, value)`` of a privacy report: its ``"notion"`` key (``"pure"`` when absent
    and ``"epsilon_total"`` is a number, the reports of the eps-DP agents) and the value in that
    notion; ``None`` for a report that states no total."""
    notion = report.get("notion", "pure")
    if notion == "zcdp":
        rho = report.get("rho")
        return ("zcdp", float(rho)) if isinstance(rho, (int, float)) else None
    if notion == "local":
        eps = report.get("epsilon_local")
        return ("local", float(eps)) if isinstance(eps, (int, float)) else None
    eps = report.get("epsilon_total")
    return ("pure", float(eps)) if isinstance(eps, (int, float)) else None


def with_conversion(report: Any, delta: Any) -> Any:
    """A copy of a privacy report with ``"approx_dp"`` (:func:`approx_dp` of its native
    guarantee at ``delta``) and, for a pure or local guarantee, ``"rho_implied"``; a report
    without a total (or not a dict) is returned as it is."""
    if not isinstance(report, dict):
        return report
    native = native_guarantee(report)
    if native is None:
        return report
    notion, value = native
    out = copy.deepcopy(report)
    out["approx_dp"] = approx_dp(notion, value, delta)
    if notion != "zcdp":
        out["rho_implied"] = implied_rho(value)
    return out


def conversion_text(report: dict[str, Any]) -> str:
    """One line saying the report's (eps, delta) conversion, or how to get it."""
    conv = report.get("approx_dp")
    if not isinstance(conv, dict):
        return ""
    if conv.get("epsilon") is None:
        return f"  (eps, delta) at delta={conv['delta']:g}: {conv.get('missing')}"
    return (f"  (eps, delta) = ({conv['epsilon']:.4g}, {conv['delta']:g}) by "
            f"{conv['accountant']}")  # fmt: skip
