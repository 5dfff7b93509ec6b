"""The Gymnasium ids of the project's environments, and their registration.

``import dpbandits`` (and ``import envs``) registers every id below, so that
``gymnasium.make("dpbandits/TwoArmedShift-v0")`` works. The entry points are strings, so
registering imports nothing from ``envs``: Gymnasium imports the environment module on the first
``make``. In a fresh interpreter that has imported neither package,
``gymnasium.make("envs:dpbandits/TwoArmedShift-v0")`` imports ``envs`` first and works too.
"""

from __future__ import annotations

__all__ = ["ENV_IDS", "OTHER_ENV_IDS", "WRAPPER_ENV_IDS", "register_envs"]

#: id -> (entry_point, vector_entry_point)
ENV_IDS: dict[str, tuple[str, str]] = {
    "dpbandits/TwoArmedShift-v0": (
        "envs.two_armed_shift:TwoArmedShift",
        "envs.two_armed_shift:TwoArmedShiftVectorEnv",
    ),
    "dpbandits/PiecewiseBandit-v0": (
        "envs.piecewise:PiecewiseStationaryBandit",
        "envs.piecewise:PiecewiseStationaryBanditVectorEnv",
    ),
    "dpbandits/DriftingBandit-v0": (
        "envs.drifting:DriftingBandit",
        "envs.drifting:DriftingBanditVectorEnv",
    ),
    "dpbandits/KArmedBernoulli-v0": (
        "envs.k_armed:KArmedBernoulli",
        "envs.k_armed:KArmedBernoulliVectorEnv",
    ),
    "dpbandits/KArmedGaussian-v0": (
        "envs.k_armed:KArmedGaussian",
        "envs.k_armed:KArmedGaussianVectorEnv",
    ),
}

#: Wrappers of another environment (their ``env`` argument), kept apart from :data:`ENV_IDS`:
#: ``dpbandits/LocalDP-v0`` privatizes every reward at the user (envs/local_dp.py).
WRAPPER_ENV_IDS: dict[str, tuple[str, str]] = {
    "dpbandits/LocalDP-v0": ("envs.local_dp:make_local_dp", "envs.local_dp:make_local_dp_vector"),
}

#: Environments that are not bandit schedules (their own observation spaces and API): kept apart
#: from :data:`ENV_IDS`, whose entries all follow the bandit protocol of ``envs.base``.
OTHER_ENV_IDS: dict[str, tuple[str, str]] = {
    "dpbandits/Recommendation-v0": (
        "envs.recommendation:RecommendationEnv",
        "envs.recommendation:RecommendationVectorEnv",
    ),
}


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS`, :data:`OTHER_ENV_IDS` and :data:`WRAPPER_ENV_IDS`
    not registered yet (idempotent).

    No ``max_episode_steps``: each environment truncates itself at its ``horizon`` argument, so
    ``gymnasium.make(id, horizon=...)`` is the way to change the episode length.
    """
    import gymnasium

    every = {**ENV_IDS, **OTHER_ENV_IDS, **WRAPPER_ENV_IDS}
    for env_id, (entry_point, vector_entry_point) in every.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id, entry_point=entry_point, vector_entry_point=vector_entry_point
            )
