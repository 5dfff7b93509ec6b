"""The paper's bandit-under-shift configuration (App. H, Fig. 9): the environment and the agents
by their legend labels."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import agents as agents_pkg

__all__ = [
    "EXTRA_LABELS",
    "FIG9_LABELS",
    "NOT_ON_FIG9",
    "SHIFT_ENV_ID",
    "shift_agents",
    "shift_env",
]

SHIFT_ENV_ID = "dpbandits/TwoArmedShift-v0"
#: Legend labels of Fig. 9, in the paper's order.
FIG9_LABELS = ("UCB", "TS", "kRR", "RNM", "RS", "GEM", "mGEM")
#: Extra labels understood by :func:`shift_agents` (beyond the paper).
EXTRA_LABELS = ("UCB1", "TS-Beta", "SW-UCB", "D-UCB", "Exp3", "cGEM", "PF", "RNM-Gumbel",
                "M-UCB", "CUSUM-UCB",
                "CD-AdaP-UCB", "CD-AdaP-KLUCB", "SW-AdaP-UCB", "SW-AdaP-KLUCB")  # fmt: skip

#: Agents of the library that cannot play the Fig. 9 arms, and where to run them instead.
NOT_ON_FIG9 = {
    "glr-klucb": "GLR-klUCB is for Bernoulli rewards and the Fig. 9 arms are clipped Gaussian; "
    "run it on the Bernoulli version of the shift: `dpbandits run --example shift_anchors > "
    "shift_anchors.toml`, then `dpbandits run shift_anchors.toml` (docs/shift-anchors.md)",
}


def shift_env(t_shift: int = 30_000, horizon: int = 50_000) -> dict[str, Any]:
    """Config of the paper's two-armed shift environment (App. H-1): use as ``run(env=...)``."""
    return {"id": SHIFT_ENV_ID, "t_shift": t_shift, "horizon": horizon}


def shift_agents(
    labels: Sequence[str] | None = None,
    *,
    epsilon_means: float = 1.0,
    epsilon_select: float = 1.0,
    epsilon_quantiles: float = 1.0,
    epsilon_krr: float = 4.0,
    window: int = 200,
    levels: tuple[float, float] = (0.1, 0.9),
    epsilon: float = 1.0,
) -> dict[str, Any]:
    """The agents of Fig. 9 (App. H) by their legend labels.

    ``UCB`` (ln T, alpha = sqrt 2), ``TS`` (Gaussian), and private agents with ``kRR``
    (``eps_S = epsilon_krr = 4``), ``RNM``, ``RS`` (gamma 0.05), ``GEM`` and ``mGEM``
    (beta 0.05); all private agents use ``eps_M``, ``eps_p``, ``w = 200`` and the 0.1/0.9
    quantiles. Labels are matched case-insensitively; :data:`EXTRA_LABELS` adds UCB1, Beta TS,
    SW-UCB, D-UCB, Exp3, combined GEM (cGEM), permute-and-flip (PF), Gumbel RNM and the
    change-detection anchors M-UCB and CUSUM-UCB (docs/shift-anchors.md; GLR-klUCB, for
    Bernoulli rewards, cannot play these arms: :data:`NOT_ON_FIG9`), the
    eps-global-DP agents built for change, CD-AdaP-UCB, CD-AdaP-KLUCB, SW-AdaP-UCB and
    SW-AdaP-KLUCB (:mod:`agents.private_shift`, whose whole run is ``epsilon``-DP;
    docs/private-shift.md), and ``private:<selector>`` builds a private agent on any registered
    selector.
    """
    chosen = list(FIG9_LABELS) if labels is None else list(labels)
    if not chosen:
        raise ValueError("labels must name at least one agent")

    def private(selector: str, eps_s: float = epsilon_select, **params: Any) -> Any:
        # App. H's quantile mechanism (Smith's): the Fig. 9 rewards are continuous, where it is
        # the more accurate one (docs/quantiles.md); agents built elsewhere default to "grid"
        return agents_pkg.make(
            "private", selector=selector, epsilon_select=eps_s, epsilon_means=epsilon_means,
            epsilon_quantiles=epsilon_quantiles, window=window, levels=levels,
            quantile_method="smith", **params,
        )  # fmt: skip

    builders: dict[str, Callable[[], Any]] = {
        "ucb": lambda: agents_pkg.make("ucb"),
        "ts": lambda: agents_pkg.make("thompson"),
        "krr": lambda: private("krr", epsilon_krr),
        "rnm": lambda: private("rnm"),
        "rs": lambda: private("rs", gamma=0.05),
        "gem": lambda: private("gem", beta=0.05),
        "mgem": lambda: private("mgem", beta=0.05),
        "ucb1": lambda: agents_pkg.make("ucb", log="t"),
        "ts-beta": lambda: agents_pkg.make("thompson", model="bernoulli"),
        "sw-ucb": lambda: agents_pkg.make("sw_ucb"),
        "d-ucb": lambda: agents_pkg.make("d_ucb"),
        "exp3": lambda: agents_pkg.make("exp3"),
        "cgem": lambda: private("combined_gem", beta=0.05),
        "pf": lambda: private("permute_and_flip"),
        "rnm-gumbel": lambda: private("rnm", noise="gumbel"),
        # the change-detection anchors (docs/shift-anchors.md), tuned for one change point
        "m-ucb": lambda: agents_pkg.make("m_ucb"),
        "cusum-ucb": lambda: agents_pkg.make("cusum_ucb"),
        "cd-adap-ucb": lambda: agents_pkg.make("cd_adap_ucb", epsilon=epsilon),
        "cd-adap-klucb": lambda: agents_pkg.make("cd_adap_klucb", epsilon=epsilon),
        "sw-adap-ucb": lambda: agents_pkg.make("sw_adap_ucb", epsilon=epsilon),
        "sw-adap-klucb": lambda: agents_pkg.make("sw_adap_klucb", epsilon=epsilon),
    }
    out: dict[str, Any] = {}
    for label in chosen:
        key = label.strip().lower()
        if key.startswith("private:"):
            out[label.strip()] = private(label.strip().split(":", 1)[1])
        elif key in builders:
            out[label.strip()] = builders[key]()
        elif key in NOT_ON_FIG9:
            raise ValueError(f"agent label {label!r}: {NOT_ON_FIG9[key]}")
        else:
            known = ", ".join(FIG9_LABELS + EXTRA_LABELS)
            raise ValueError(
                f"unknown agent label {label!r}; known labels: {known}, or private:<selector>"
            )
    return out
