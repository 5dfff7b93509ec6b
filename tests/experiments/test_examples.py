"""The example configs ship with the package, in one place, and the CLI writes and runs them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpbandits.cli import main
from dpbandits.experiments.config import Experiment
from dpbandits.experiments.examples import (
    DEFAULT_RUN,
    DEFAULT_SWEEP,
    example_command,
    example_names,
    example_text,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "dpbandits" / "experiments" / "example_configs"


def _mentions() -> dict[str, set[str]]:
    """Every example a user is pointed to -- ``examples/configs/NAME.toml`` and
    ``--example NAME`` -- in the README, the docs pages and the package's texts (``--help``)."""
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "dpbandits").rglob("*.py")), *sorted(SHIPPED.glob("*.toml"))]
    found: dict[str, set[str]] = {}
    for path in texts:
        if "pages" in path.relative_to(ROOT).parts:  # the link to docs/: read there
            continue
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"examples/configs/([\w-]+)\.toml|--example ([a-z][\w-]*)", text):
            name = m[1] or m[2]
            if name not in ("NAME", "list"):
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_examples_users_are_pointed_to_are_the_shipped_ones():
    """One home: the package's folder; ``examples/configs`` in a clone is a link to it, so the
    files the docs name and the files a wheel ships are the same files."""
    names = example_names()
    assert names == sorted(p.stem for p in SHIPPED.glob("*.toml"))
    linked = ROOT / "examples" / "configs"
    if linked.is_symlink():
        assert linked.resolve() == SHIPPED.resolve()
    else:  # an sdist copies the link: the same files
        assert {p.name: p.read_bytes() for p in linked.glob("*.toml")} == {
            p.name: p.read_bytes() for p in SHIPPED.glob("*.toml")}
    mentioned = _mentions()
    assert {DEFAULT_RUN, DEFAULT_SWEEP, "fig9", "eps_sweep"} <= set(mentioned)
    unknown = {n: sorted(where) for n, where in mentioned.items() if n not in names}
    assert not unknown, unknown


@pytest.mark.parametrize("name", example_names())
def test_every_shipped_example_is_a_valid_config_of_its_command(name):
    exp = Experiment.from_toml(example_text(name), check=False)
    assert bool(exp.sweep) == (example_command(name) == "sweep")
    assert example_text(name) == (SHIPPED / f"{name}.toml").read_text(encoding="utf-8")


def test_example_prints_the_shipped_file_or_the_list(capsys, tmp_path):
    assert main(["run", "--example", "piecewise"]) == 0
    assert capsys.readouterr().out == example_text("piecewise")
    for argv in (["run", "--example"], ["sweep", "--example", "list"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert all(re.search(rf"^{n}\s+dpbandits (run|sweep)\s+\S", out, re.M)
                   for n in example_names())  # fmt: skip
    assert main(["run", "--example", "nope"]) == 2
    assert "no example config 'nope'; the examples: drifting" in capsys.readouterr().err
    # printed as shipped: an option that would change it is refused, not ignored
    assert main(["run", "--example", "fig9", "--runs", "2"]) == 2
    assert "without --runs" in capsys.readouterr().err


def test_a_written_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--example", "fig9"]) == 0
    Path("fig9.toml").write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["run", "fig9.toml", "--print-config", "--runs", "2"]) == 0
    assert "n_runs = 2" in capsys.readouterr().out


def test_bare_run_runs_the_shipped_example_and_says_so(capsys, tmp_path):
    """Issue 30, item 7: bare ``dpbandits run`` exited 2."""
    out = tmp_path / "o"
    assert main(["run", "--runs", "2", "--out", str(out), "--no-plots", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert f"running the example config '{DEFAULT_RUN}' shipped with dpbandits" in captured.err
    assert "piecewise-stationary, three change points: 2 runs x 20000 steps" in captured.out
    assert (out / "summary.csv").is_file()


def test_bare_sweep_runs_the_shipped_example_and_says_so(capsys, tmp_path):
    out = tmp_path / "o"
    argv = ["sweep", "--runs", "2", "--out", str(out), "--no-plots", "--no-progress",
            "--scheduler", "serial", "--set", "experiment.env_kwargs.horizon=2000",
            "--set", "experiment.env_kwargs.means.t_start=500",
            "--set", "experiment.env_kwargs.means.t_end=1500"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert f"running the example config '{DEFAULT_SWEEP}' shipped with dpbandits" in captured.err
    assert "3 cells: 3 computed" in captured.out


@pytest.mark.parametrize(("command", "names"), [
    (["audit"], "selectors: "), (["audit-agent"], "agent kinds: "), (["course"], "list"),
])  # fmt: skip
def test_commands_that_need_a_name_show_their_help_and_the_names(capsys, command, names):
    """What docs/cli.md says a bare command does when it needs something named."""
    assert main(command) == 2
    captured = capsys.readouterr()
    assert "usage:" in captured.out and names in captured.out + captured.err
    assert f"`{command[0]}" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
