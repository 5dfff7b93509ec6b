"""Environment specs: turn a user's ``env`` argument into ``{"id", "kwargs"}`` and build it.

The engine never keeps an environment object: it keeps the spec (picklable, JSON-able) and builds
the single and vector forms where they are needed, in whichever worker runs a task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpbandits.core.registration import register_envs

__all__ = [
    "env_spec",
    "make_env",
    "make_vector_env",
    "reward_bounds",
    "reward_family",
    "vector_class",
]


def _ensure_registered(env_id: str) -> None:
    # in a fresh worker process (a Dask worker) or after a user's gymnasium.registry edits
    if env_id.startswith("dpbandits/") or env_id.startswith("envs:"):
        register_envs()


def env_spec(env: Any) -> dict[str, Any]:
    """Normalise ``env`` (id, config mapping or instance) to ``{"id": str, "kwargs": dict}``."""
    if isinstance(env, str):
        return {"id": env, "kwargs": {}}
    if isinstance(env, Mapping):
        cfg = dict(env)
        if "id" not in cfg or not isinstance(cfg["id"], str):
            raise ValueError(f"env config must have a string 'id', got keys {sorted(cfg)}")
        env_id = cfg.pop("id")
        kwargs = dict(cfg.pop("kwargs", {}))
        kwargs.update(cfg)
        return {"id": env_id, "kwargs": kwargs}
    spec = getattr(env, "spec", None)
    if spec is None or not getattr(spec, "id", None):
        raise TypeError(
            "env must be a registered id, a config {'id': ..., **kwargs} or an environment "
            f"made by gymnasium.make / make_vec; got {type(env).__name__} without a spec"
        )
    kwargs = dict(spec.kwargs or {})
    # make_vec records its own arguments in the spec; the engine chooses them per chunk.
    for key in ("num_envs", "vectorization_mode", "vector_kwargs", "wrappers"):
        kwargs.pop(key, None)
    wrappers = [w.name for w in getattr(spec, "additional_wrappers", ())]
    if "LocalDPReward" in wrappers:
        # a local randomizer put around an environment by hand (envs.LocalDPReward): the
        # engine rebuilds it in its workers as dpbandits/LocalDP-v0, never drops it
        r = env.get_wrapper_attr("randomizer")
        return {"id": "dpbandits/LocalDP-v0", "kwargs": {
            "env": {"id": spec.id, **kwargs}, "epsilon": r.epsilon, "mechanism": r.mechanism,
            "bounds": [r.lo, r.hi], "debias": r.debias}}  # fmt: skip
    return {"id": spec.id, "kwargs": kwargs}


def make_env(spec: dict[str, Any]) -> Any:
    """``gymnasium.make`` of a spec from :func:`env_spec` (one replication)."""
    import gymnasium

    _ensure_registered(spec["id"])
    try:
        return gymnasium.make(spec["id"], **spec["kwargs"])
    except gymnasium.error.UnregisteredEnv as exc:  # NameNotFound, VersionNotFound, ...
        raise ValueError(f"env: {exc}") from None


def make_vector_env(spec: dict[str, Any], num_envs: int) -> Any:
    """The vector form of a spec with ``num_envs`` copies: the environment's native vector
    entry point when it has one, else Gymnasium's ``SyncVectorEnv``."""
    import gymnasium

    _ensure_registered(spec["id"])
    env_spec_ = gymnasium.spec(spec["id"])
    mode = "vector_entry_point" if env_spec_.vector_entry_point is not None else "sync"
    return gymnasium.make_vec(
        spec["id"], num_envs=num_envs, vectorization_mode=mode, **spec["kwargs"]
    )


def vector_class(spec: dict[str, Any]) -> type | None:
    """The class :func:`make_vector_env` builds for ``spec`` (the environment's vector entry
    point), or ``None`` when it has none or the entry point is not a class."""
    import importlib

    import gymnasium

    _ensure_registered(spec["id"])
    entry = gymnasium.spec(spec["id"]).vector_entry_point
    if isinstance(entry, str):
        module, _, name = entry.partition(":")
        entry = getattr(importlib.import_module(module), name)
    return entry if isinstance(entry, type) else None


def reward_family(env: Any) -> str | None:
    """The reward law of an environment's arms: ``"bernoulli"`` (rewards 0 or 1) or
    ``"gaussian"`` (clipped to ``[lo, hi]``), read from its ``arm`` attribute (the project's
    environments have it, docs/environments.md); ``None`` when the environment does not say.
    Behind a local randomizer (``dpbandits/LocalDP-v0``) the agents see its reports:
    ``"bernoulli"`` for the raw bits of randomized response, else ``"privatized"`` (real
    numbers)."""
    try:
        randomizer = env.get_wrapper_attr("randomizer")
    except AttributeError:
        randomizer = getattr(env, "randomizer", None)
    if randomizer is not None:
        raw_bits = randomizer.mechanism == "response" and not randomizer.debias
        return "bernoulli" if raw_bits else "privatized"
    arm = getattr(getattr(env, "unwrapped", env), "arm", None)
    return arm if arm in ("bernoulli", "gaussian") else None


def reward_bounds(env: Any) -> tuple[float, float] | None:
    """The range ``[lo, hi]`` the arms' rewards are clipped to, for an environment of the
    project with Gaussian arms (its ``lo`` and ``hi``, docs/environments.md); ``None`` when the
    environment does not say or its arms are not Gaussian. What an agent sees behind a local
    randomizer is :func:`reward_family`'s business, not this."""
    unwrapped = getattr(env, "unwrapped", env)
    if getattr(unwrapped, "arm", None) != "gaussian":
        return None
    lo, hi = getattr(unwrapped, "lo", None), getattr(unwrapped, "hi", None)
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lo, hi))
    return (float(lo), float(hi)) if numbers else None  # type: ignore[arg-type]
