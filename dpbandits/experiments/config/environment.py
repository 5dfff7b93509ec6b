"""The environment of a config: its id resolved (``"module:Class"`` registered) and probed once."""

from __future__ import annotations

import copy
import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from dpbandits.experiments.config.grid import canonical_json
from dpbandits.experiments.config.schema import ConfigError, at_key
from dpbandits.experiments.envspec import make_env, reward_bounds, reward_family

__all__ = ["env_parameters", "probe_env", "resolve_env"]


def resolve_env(env: str, path: str = "experiment.env") -> str:
    """The Gymnasium id to build ``env`` with, registering a ``"module:Class"`` environment.

    ``env`` is a registered id (``"dpbandits/TwoArmedShift-v0"``), ``"module:Id"`` (a module
    that registers ``Id`` when imported, Gymnasium's convention) or ``"module:Class"`` (a
    ``gymnasium.Env`` subclass, registered here under the id ``"module.Class"``). Called again
    in every worker process, so that a Dask worker registers the class too.
    """
    import gymnasium

    if env in gymnasium.registry:
        return env
    if ":" in env:
        mod_name, _, attr = env.partition(":")
        try:
            module = importlib.import_module(mod_name)
        except ImportError as exc:
            raise ConfigError(path, f"cannot import module {mod_name!r} ({exc})") from None
        if attr in gymnasium.registry:
            return env
        obj = getattr(module, attr, None)
        if isinstance(obj, type) and issubclass(obj, gymnasium.Env):
            env_id = f"{mod_name}.{attr}"
            if env_id not in gymnasium.registry:
                vec = getattr(obj, "vector_entry_point", None)
                gymnasium.register(
                    id=env_id,
                    entry_point=env,
                    vector_entry_point=vec if isinstance(vec, str) else None,
                )
            return env_id
        raise ConfigError(
            path,
            f"{attr!r} is neither a gymnasium.Env subclass of module {mod_name!r} nor an id it "
            "registers",
        )
    ours = sorted(k for k in gymnasium.registry if k.startswith("dpbandits/"))
    raise ConfigError(
        path,
        f"unknown environment {env!r}; registered here: {', '.join(ours)} (or any Gymnasium "
        "id, or 'module:Class')",
    )


def env_parameters(env_id: str) -> tuple[set[str], bool] | None:
    """The keyword names a registered environment's constructor accepts and whether it also
    takes ``**kwargs``; ``None`` when its entry point cannot be inspected."""
    import gymnasium
    from gymnasium.envs.registration import load_env_creator

    try:
        ep: Any = gymnasium.spec(env_id).entry_point
        creator = load_env_creator(ep) if isinstance(ep, str) else ep
        params = inspect.signature(creator).parameters.values()
    except Exception:  # noqa: BLE001 (unknown shape: let the constructor decide)
        return None
    names = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    return names - {"self"}, any(p.kind == p.VAR_KEYWORD for p in params)


def probe_env(
    env: str,
    env_kwargs: Mapping[str, Any],
    horizon: int | None,
    probes: dict[str, Any],
) -> tuple[int, int, str | None, tuple[float, float] | None]:
    """``(n_arms, horizon, arm, bounds)`` of the configured environment, built once to check
    its arguments; ``arm`` is its arms' reward family
    (:func:`~dpbandits.experiments.envspec.reward_family`, ``None`` when it does not say) and
    ``bounds`` the range its Gaussian arms are clipped to
    (:func:`~dpbandits.experiments.envspec.reward_bounds`).

    ``probes`` caches the answer by the environment's config (sweep cells share it). Errors are
    :class:`ConfigError` at ``experiment.env_kwargs.NAME`` or ``experiment.horizon``.
    """
    key = canonical_json([env, env_kwargs, horizon])
    if key in probes:
        return probes[key]
    env_id = resolve_env(env)
    sig = env_parameters(env_id)
    if sig is not None:
        names, var_kw = sig
        for k in env_kwargs:
            if not var_kw and k not in names:
                raise ConfigError(
                    f"experiment.env_kwargs.{k}",
                    f"unknown argument of {env} (accepted: {', '.join(sorted(names))})",
                )
    kwargs = copy.deepcopy(dict(env_kwargs))
    if horizon is not None and env_id.startswith("dpbandits/"):
        # as the engine does: the project's environments take the run's horizon
        kwargs.setdefault("horizon", horizon)
    try:
        built = make_env({"id": env_id, "kwargs": kwargs})
    except (ValueError, TypeError) as exc:
        raise at_key(exc, "experiment.env_kwargs") from None
    try:
        n = getattr(built.action_space, "n", None)
        if n is None:
            raise ConfigError("experiment.env", f"the action space must be Discrete, got "
                              f"{built.action_space}")  # fmt: skip
        env_h = getattr(built.unwrapped, "horizon", None)
        arm, bounds = reward_family(built), reward_bounds(built)
    finally:
        built.close()
    steps = horizon if horizon is not None else env_h
    if steps is None:
        raise ConfigError("experiment.horizon", "missing: the environment has no horizon")
    if (
        env_h is not None
        and horizon is not None
        and horizon > env_h
        and ("horizon" in env_kwargs or not env_id.startswith("dpbandits/"))
    ):
        raise ConfigError(
            "experiment.horizon", f"must be <= the environment's horizon {env_h}, got {horizon}"
        )
    probes[key] = (int(n), int(steps), arm, bounds)
    return probes[key]
