"""The example experiment configs that ship with the package.

The files live in ``dpbandits/experiments/example_configs/`` (package data; in a clone of the
repository ``examples/configs/`` links to that folder, so both paths name the same files).
``dpbandits run --example NAME > my.toml`` writes one to edit, ``dpbandits run --example`` lists
them, and a bare ``dpbandits run`` / ``dpbandits sweep`` runs :data:`DEFAULT_RUN` /
:data:`DEFAULT_SWEEP`. The config keys are documented in docs/experiments.md.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable

from dpbandits.core.docs import shipped_names
from dpbandits.experiments.config.toml_io import read_toml

__all__ = [
    "DEFAULT_RUN",
    "DEFAULT_SWEEP",
    "example_command",
    "example_description",
    "example_names",
    "example_text",
    "examples_table",
]

#: What a bare ``dpbandits run`` runs: 5 agents x 40 runs x 20 000 steps, a few seconds.
DEFAULT_RUN = "piecewise"
#: What a bare ``dpbandits sweep`` runs: 3 cells of 4 agents x 40 runs x 20 000 steps.
DEFAULT_SWEEP = "drifting"


def _folder() -> Traversable:
    return resources.files("dpbandits.experiments") / "example_configs"


def example_names() -> list[str]:
    """The names of the shipped examples, sorted: ``["drifting", "eps_sweep", ...]``."""
    return shipped_names(_folder(), ".toml", "the example configs")


def _name(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"an example's name must be a str, got {type(name).__name__}")
    key = name.strip().removesuffix(".toml")
    names = example_names()
    if key not in names:
        raise ValueError(f"no example config {name!r}; the examples: {', '.join(names)}")
    return key


def example_text(name: str) -> str:
    """The TOML text of example ``name``, comments included, exactly as shipped."""
    return (_folder() / f"{_name(name)}.toml").read_text(encoding="utf-8")


def example_description(name: str) -> str:
    """The first paragraph of the example's leading comment, on one line."""
    words: list[str] = []
    for line in example_text(name).splitlines():
        if not line.startswith("#"):
            break
        text = line.lstrip("#").strip()
        if not text:
            if words:
                break
            continue
        words.append(text)
    return " ".join(words)


def example_command(name: str) -> str:
    """``"sweep"`` for an example with a ``[sweep]`` table (a grid), else ``"run"``."""
    return "sweep" if "sweep" in read_toml(example_text(name)) else "run"


def examples_table() -> str:
    """One line per example: its name, the command that runs it and its description."""
    names = example_names()
    width = max(len(n) for n in names)
    lines = [f"{n.ljust(width)}  dpbandits {example_command(n):5}  {example_description(n)}"
             for n in names]  # fmt: skip
    return "\n".join(lines)
