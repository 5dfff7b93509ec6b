"""The privacy ledger of a private bandit agent (App. H "In summary").

App. H states three guarantees, and this ledger records and renders exactly those:

- **eps_M -- released means.**  Each arm's sequence of released means comes from one hybrid
  mechanism (:mod:`dpbandits.continual`) and is eps_M-DP.  Every reward enters exactly one
  arm's stream, so all released means of all arms together are eps_M-DP (parallel
  composition).  The pull counts ``N_t(a)`` are treated as public, as in App. H (the actions
  are themselves released under eps_S), so dividing by them is post-processing.
- **eps_p -- sensitivity quantiles.**  Each pair ``(p_0.1, p_0.9)`` of an arm is eps_p-DP
  (eps_p/2 per quantile).  Every reward is used in exactly one window of one arm, so the pairs
  act on disjoint data.  The paper counts ``2 eps_p`` for its two arms ("to be paid twice, once
  for each action"), i.e. ``eps_p`` per arm that released at least one pair (sequential over
  arms, parallel over an arm's windows); parallel composition over all windows of all arms
  gives ``eps_p``.  Both numbers are reported and labelled.
- **eps_S -- recorded actions.**  Each recorded action is eps_S-DP (local guarantee of the
  selector at that step).  The ledger reports the per-action guarantee and the number of
  actions; it also shows ``n eps_S``, the basic sequential-composition bound over all recorded
  actions, as an upper bound that App. H does not state.
- **End to end -- everything the agent outputs.**  The selector reads only the released means
  and sensitivities and its own coins, so the actions are post-processing of those releases:
  for reward sequences that differ in one step's rewards, the actions, means and sensitivities
  together are ``(eps_M + eps_p)``-DP (global DP; parallel composition over the quantile
  windows), whatever eps_S, and n eps_S is never needed.  This is ``epsilon_total`` in the
  report, the tightest single total the design supports and the claim the end-to-end audit
  checks (:func:`dpbandits.audit.agent.audit_agent`, docs/selectors.md, "Auditing an
  agent").  eps_S remains each action's local guarantee with respect to the selector's input.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.core import checks

__all__ = [
    "PrivacyLedger",
    "global_dp_report",
    "implied_rho",
    "local_dp_report",
    "zcdp_report",
]


def implied_rho(epsilon: float) -> float:
    """The zCDP parameter an eps-DP guarantee implies, ``eps^2 / 2`` (Bun & Steinke 2016,
    Proposition 1.4); ``inf`` for an eps too large to square in floating point (a product, not
    ``**``, which raises OverflowError there)."""
    return epsilon * epsilon / 2.0


def _optional_epsilon(value: Any, name: str) -> float | None:
    return None if value is None else checks.positive_number(value, name)


class PrivacyLedger:
    """Privacy ledger of one private agent (App. H).

    ``PrivacyLedger(epsilon_means, epsilon_quantiles, epsilon_select, n_arms)``; pass ``None``
    for a component the agent does not use (e.g. kRR has no quantiles).  The agent records

    - ``record_selections(n)``: ``n`` more recorded actions (each eps_S-DP);
    - ``record_quantile_pairs(per_arm)``: quantile pairs released per arm -- an array of ``K``
      ints, or of shape ``(R, K)`` for ``R`` replications (each replication is a separate run;
      the ledger keeps the largest count per arm, the worst-case run).

    Counts accumulate.  ``report()`` returns a JSON-able dict; ``str(ledger)`` readable text;
    ``to_json()`` the dict as JSON.
    """

    def __init__(
        self,
        epsilon_means: float | None,
        epsilon_quantiles: float | None,
        epsilon_select: float | None,
        n_arms: int,
    ) -> None:
        self.epsilon_means = _optional_epsilon(epsilon_means, "epsilon_means")
        self.epsilon_quantiles = _optional_epsilon(epsilon_quantiles, "epsilon_quantiles")
        self.epsilon_select = _optional_epsilon(epsilon_select, "epsilon_select")
        if isinstance(n_arms, bool) or not isinstance(n_arms, (int, np.integer)):
            raise TypeError(f"n_arms must be an integer, got {n_arms!r}")
        if n_arms < 1:
            raise ValueError(f"n_arms must be >= 1, got {n_arms!r}")
        self.n_arms = int(n_arms)
        self.n_selections = 0
        self.quantile_pairs = np.zeros(self.n_arms, dtype=np.int64)

    def __repr__(self) -> str:
        return (
            f"PrivacyLedger(epsilon_means={self.epsilon_means}, "
            f"epsilon_quantiles={self.epsilon_quantiles}, "
            f"epsilon_select={self.epsilon_select}, n_arms={self.n_arms})"
        )

    def record_selections(self, n: int) -> None:
        """Record ``n`` more recorded actions (per replication)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"n must be an integer, got {n!r}")
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n!r}")
        if n and self.epsilon_select is None:
            raise ValueError("selections recorded but epsilon_select is None")
        self.n_selections += int(n)

    def record_quantile_pairs(self, per_arm: ArrayLike) -> None:
        """Add released quantile pairs per arm: shape (K,) or (R, K) (max over replications)."""
        counts = np.asarray(per_arm)
        if counts.dtype.kind not in "iu":
            raise TypeError(f"per_arm must be integers, got dtype {counts.dtype}")
        if counts.ndim == 2:
            counts = counts.max(axis=0, initial=0)
        if counts.shape != (self.n_arms,):
            raise ValueError(
                f"per_arm must have shape ({self.n_arms},) or (R, {self.n_arms}), "
                f"got {np.shape(per_arm)}"
            )
        if (counts < 0).any():
            raise ValueError(f"per_arm must be >= 0, got {counts}")
        if counts.any() and self.epsilon_quantiles is None:
            raise ValueError("quantile pairs recorded but epsilon_quantiles is None")
        self.quantile_pairs += counts.astype(np.int64)

    def report(self) -> dict[str, Any]:
        """The App. H budget as a JSON-able dict (see the module docstring for the rules)."""
        eps_m, eps_p, eps_s = self.epsilon_means, self.epsilon_quantiles, self.epsilon_select
        pairs = [int(c) for c in self.quantile_pairs]
        arms_with_pairs = sum(c > 0 for c in pairs)
        q_paper = 0.0 if eps_p is None else eps_p * arms_with_pairs
        q_parallel = 0.0 if eps_p is None or arms_with_pairs == 0 else eps_p
        means_total = 0.0 if eps_m is None else eps_m
        return {
            "counts_public": True,
            "means": {
                "epsilon": eps_m,
                "total": means_total,
                "composition": "one hybrid mechanism per arm, disjoint rewards: parallel over "
                "arms; pull counts treated as public (App. H)",
            },
            "quantiles": {
                "epsilon_per_pair": eps_p,
                "epsilon_per_quantile": None if eps_p is None else eps_p / 2,
                "pairs_per_arm": pairs,
                "total_pairs": int(sum(pairs)),
                "paper_count": q_paper,
                "paper_composition": "eps_p per arm with at least one pair, summed over arms "
                "(App. H: 2 eps_p for two arms)",
                "parallel": q_parallel,
                "parallel_composition": "each reward is in exactly one window of one arm: "
                "parallel composition over all pairs",
            },
            "selection": {
                "epsilon_per_action": eps_s,
                "n_actions": self.n_selections,
                "sequential_bound": 0.0 if eps_s is None else eps_s * self.n_selections,
                "composition": "each recorded action is eps_S-DP (App. H); sequential_bound = "
                "n_actions * eps_S is basic composition, an upper bound App. H does not state",
            },
            "total_paper": means_total + q_paper,
            "total_parallel": means_total + q_parallel,
            "totals_note": "eps_M + eps_p terms for the released means and sensitivities; "
            "each recorded action additionally carries its own eps_S guarantee",
            "epsilon_total": means_total + q_parallel,
            "notion": "pure",
            # the zCDP parameter the total implies (Bun & Steinke 2016, Proposition 1.4)
            "rho_implied": implied_rho(means_total + q_parallel),
            "epsilon_total_note": "global DP of everything the agent outputs (actions, means, "
            "sensitivities) for reward sequences that differ in one step: the actions are "
            "post-processing of the released means and sensitivities, so eps_S adds nothing "
            "(eps_M + eps_p, parallel composition over the quantile windows)",
        }

    def to_json(self, **kwargs: Any) -> str:
        """``report()`` as a JSON string (kwargs go to ``json.dumps``)."""
        return json.dumps(self.report(), **kwargs)

    def __str__(self) -> str:
        r = self.report()
        m, q, s = r["means"], r["quantiles"], r["selection"]

        def fmt(x: float | None) -> str:
            return "unused" if x is None else f"{x:g}"

        lines = [
            "Privacy ledger (App. H); pull counts N_t(a) are treated as public.",
            f"  means      eps_M = {fmt(m['epsilon'])} for all released means of all "
            f"{self.n_arms} arms (hybrid mechanism per arm; parallel composition over arms)",
            f"  quantiles  eps_p = {fmt(q['epsilon_per_pair'])} per (0.1, 0.9) pair "
            f"(eps_p/2 each); pairs per arm = {q['pairs_per_arm']}",
            f"             paper's count (eps_p per arm, sequential over arms): "
            f"{q['paper_count']:g}",
            f"             parallel composition (disjoint windows): {q['parallel']:g}",
            f"  selection  eps_S = {fmt(s['epsilon_per_action'])} per recorded action; "
            f"{s['n_actions']} actions (basic sequential bound {s['sequential_bound']:g}, "
            "not claimed by App. H)",
            f"  total eps_M + eps_p: paper's count {r['total_paper']:g}, "
            f"parallel composition {r['total_parallel']:g}; plus eps_S per action",
            f"  end to end: {r['epsilon_total']:g}-DP for all outputs, actions included (they "
            "are post-processing of the released means and sensitivities)",
            f"  implied: rho = eps^2/2 = {r['rho_implied']:g} (zCDP; Bun & Steinke 2016, "
            "Prop. 1.4)",
        ]
        return "\n".join(lines)


_NEIGHBOURS = "neighbouring reward sequences differ in one step's reward"
_POST_PROCESSING = "post-processing of the releases (nothing treated as public)"


def _implied(eps: float) -> str:
    return f"rho = eps^2/2 = {implied_rho(eps):g} (zCDP; Bun & Steinke 2016, Prop. 1.4)"


def _report_text(algorithm: str, guarantee: str, **rows: str) -> str:
    """The readable ``text`` of a whole-run privacy report: the guarantee, then one labelled
    row per item (what is released, why the total holds, ...)."""
    return "\n".join([f"Privacy ({algorithm}): {guarantee}",
                      *(f"  {label:<10} {value}" for label, value in rows.items())])  # fmt: skip


def global_dp_report(
    algorithm: str, epsilon: float, mechanism: str, composition: str
) -> dict[str, Any]:
    """The privacy report of an agent that is eps-DP for its whole run (eps-global DP: two
    reward sequences are neighbours when they differ in one step's reward), as a JSON-able dict.

    The literature's private bandit agents (``agents.DPUCB``, ``agents.DPSE``, ...) release
    only noisy statistics of the rewards, each reward entering them so that the whole
    sequence of releases is ``epsilon``-DP; their actions are post-processing of those
    releases, so nothing is treated as public and ``epsilon`` is the total of the run.
    ``mechanism`` says what is released, ``composition`` why the total is ``epsilon``.

    ``rho_implied`` is the zCDP parameter the guarantee implies, ``eps^2 / 2`` (Bun & Steinke
    2016, Proposition 1.4; docs/trust-models.md). The keys of :meth:`PrivacyLedger.report` that
    summaries read are filled in the same way
    (``means.epsilon``, ``total_paper``, ``total_parallel``: all equal to the total), beside
    ``epsilon_total`` and a readable ``text``.
    """
    eps = checks.positive_number(epsilon, "epsilon")
    text = _report_text(
        algorithm, f"eps = {eps:g} for the whole run (eps-global DP: {_NEIGHBOURS}).",
        released=mechanism, total=composition, actions=_POST_PROCESSING, implied=_implied(eps),
    )  # fmt: skip
    return {
        "model": "global",
        "notion": "pure",
        "algorithm": algorithm,
        "epsilon_total": eps,
        "rho_implied": implied_rho(eps),
        "counts_public": False,
        "means": {
            "epsilon": eps,
            "total": eps,
            "mechanism": mechanism,
            "composition": composition,
        },  # fmt: skip
        "total_paper": eps,
        "total_parallel": eps,
        "totals_note": "the whole run is eps-DP: every action is a function of the releases",
        "text": text,
    }


def local_dp_report(algorithm: str, epsilon: float, mechanism: str) -> dict[str, Any]:
    """The privacy report of a run in which every reward is privatized at the user by an
    eps-LDP randomizer (Ren, Zhou, Liu & Shroff 2020; docs/trust-models.md), as a JSON-able
    dict: ``notion = "local"``, ``epsilon_local`` the eps of each report and ``epsilon_total``
    the same eps, the run's global guarantee (everything else is post-processing of the
    reports, and one step's reward changes the law of one report only). ``mechanism`` says
    what each report is; ``rho_implied = eps^2 / 2``."""
    eps = checks.positive_number(epsilon, "epsilon")
    text = _report_text(
        algorithm, f"eps = {eps:g} per report (eps-LDP: every reward privatized at the user).",
        released=mechanism,
        learner="sees reports only: everything it outputs is post-processing",
        total=f"eps = {eps:g} for the whole run, also as global DP (one step's reward changes "
        "one report's law)",
        implied=_implied(eps),
    )  # fmt: skip
    return {
        "model": "local",
        "notion": "local",
        "algorithm": algorithm,
        "epsilon_local": eps,
        "epsilon_total": eps,
        "rho_implied": implied_rho(eps),
        "counts_public": False,
        "means": {"epsilon": eps, "total": eps, "mechanism": mechanism,
                  "composition": "one report per reward; every output is post-processing"},
        "total_paper": eps,
        "total_parallel": eps,
        "text": text,
    }  # fmt: skip


def zcdp_report(algorithm: str, rho: float, mechanism: str, composition: str) -> dict[str, Any]:
    """The privacy report of an agent that is rho-zCDP for its whole run (Bun & Steinke 2016,
    Definition 1.1; Azize & Basu 2023 for bandits: neighbouring reward sequences differ in one
    step's reward), as a JSON-able dict: ``notion = "zcdp"`` and ``rho``. The Gaussian
    mechanism is not eps-DP for any finite eps, so ``epsilon_total`` is ``inf``; its (eps,
    delta) guarantees come from the accountant (:mod:`dpbandits.trust.notions`)."""
    r = checks.positive_number(rho, "rho")
    text = _report_text(
        algorithm, f"rho = {r:g} for the whole run (rho-zCDP: {_NEIGHBOURS}).",
        released=mechanism, total=composition, actions=_POST_PROCESSING,
        **{"pure eps": "none finite (Gaussian noise); (eps, delta) at a delta by the accountant"},
    )  # fmt: skip
    return {
        "model": "global",
        "notion": "zcdp",
        "algorithm": algorithm,
        "rho": r,
        "epsilon_total": math.inf,
        "counts_public": False,
        "means": {"rho": r, "mechanism": mechanism, "composition": composition},
        "text": text,
    }
