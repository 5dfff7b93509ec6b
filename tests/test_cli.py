import subprocess
import sys

from dpbandits.cli import build_parser, main


def test_help_lists_commands(capsys):
    parser = build_parser()
    text = parser.format_help()
    assert "commands" in text


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_module_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "dpbandits", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("dpbandits ")


PLUGIN = '''
import numpy as np
from dpbandits import selectors


class MyUniform(selectors.Selector):
    """uniform choice, registered from a user's file"""

    name = "cli_plugin_uniform"
    private = True
    guarantee = "0-DP"
    uses_sensitivities = False

    def select_batch(self, q, d, rng):
        return rng.integers(q.shape[-1], size=q.shape[:-1])


selectors.register("cli_plugin_uniform", MyUniform)
'''


def test_plugin_file_is_usable_by_list_and_audit(tmp_path, capsys):
    from dpbandits import selectors

    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(PLUGIN)
    try:
        assert main(["list", "--plugin", str(plugin)]) == 0
        assert "cli_plugin_uniform" in capsys.readouterr().out
        # A 0-DP selector passes the audit at any eps.
        assert main(["audit", "cli_plugin_uniform", "--draws", "20000"]) == 0
        out = capsys.readouterr().out
        assert "MyUniform" in out and "PASS: estimated loss within eps" in out
    finally:
        selectors.unregister("cli_plugin_uniform")


def test_missing_plugin_file_is_a_one_line_error(tmp_path, capsys):
    assert main(["list", "--plugin", str(tmp_path / "nope.py")]) == 2
    assert "--plugin: no such file" in capsys.readouterr().err


def _subparsers():
    """{command: parser} of every subcommand (aliases left out), course's actions merged."""
    import argparse

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name, sp in sub.choices.items():
        if sp not in out.values():
            out[name] = sp
    return out


def _options(sp):
    import argparse

    found = {o: a for a in sp._actions for o in a.option_strings}
    for a in sp._actions:
        if isinstance(a, argparse._SubParsersAction):
            for child in a.choices.values():
                found.update({o: b for b in child._actions for o in b.option_strings})
    return found


def _docs_cli():
    from pathlib import Path

    return (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")


def test_docs_table_of_shared_options_matches_every_parser():
    """docs/cli.md says, flag by flag, which command takes which shared option."""
    lines = [x for x in _docs_cli().splitlines() if x.startswith("| command | `--epsilon`")]
    assert len(lines) == 1
    header = lines[0]
    rows = _docs_cli().split(header, 1)[1].splitlines()[2:]  # after the |---| line
    flags = [c.strip().strip("`") for c in header.strip("|").split("|")][1:]
    table = {}
    for row in rows:
        if not row.startswith("| `"):
            break
        cells = [c.strip() for c in row.strip("|").split("|")]
        table[cells[0].strip("`")] = {f for f, c in zip(flags, cells[1:], strict=True) if c}
    parsers = _subparsers()
    assert set(table) == set(parsers)
    for command, sp in parsers.items():
        assert table[command] == set(flags) & set(_options(sp)), command


def test_list_valued_options_follow_the_dialect():
    """Every option docs/cli.md names as list-valued is repeatable and takes several values
    (the documented exceptions: ``--agent`` of run and sweep, one whole agent spec per
    occurrence; ``topk --scenario`` and ``two-candidate --figure``, one value)."""
    single = {("run", "--agent"), ("sweep", "--agent"), ("topk", "--scenario"),
              ("two-candidate", "--figure")}  # fmt: skip
    assert "`topk --scenario`" in _docs_cli() and "`two-candidate --figure`" in _docs_cli()
    import re

    row = next(x for x in _docs_cli().splitlines() if "list-valued options have" in x)
    names = re.findall(r"`(--[\w-]+) \w+`", row.split("|")[1])
    assert {"--selector", "--k", "--mechanism", "--task"} <= set(names)
    seen = set()
    for command, sp in _subparsers().items():
        for name in names:
            action = _options(sp).get(name)
            if action is None or (command, name) in single:
                continue
            seen.add(name)
            assert action.nargs == "+" and action.default is None, (command, name)
            assert type(action).__name__ == "_ExtendAction", (command, name)
    assert seen == set(names)


def test_every_command_is_described_by_its_module_docstring():
    import importlib

    from dpbandits.core.docs import link_docs_paths

    for command, sp in _subparsers().items():
        module = importlib.import_module(f"dpbandits.cli.cmd_{command.replace('-', '_')}")
        # as written, except that docs/<page>.md shows the page's address (options.add_command)
        assert sp.description == link_docs_paths(module.__doc__), command
        assert sp.prog == f"dpbandits {command}"


def test_shift_at_a_small_horizon_puts_the_change_point_inside_it(tmp_path, capsys):
    """Issue 30: ``dpbandits shift --runs 2 --horizon 2000`` (the CI command) failed on the
    default change point 30 000; it defaults to 3/5 of the horizon, as 30 000 of 50 000."""
    argv = ["shift", "--runs", "2", "--horizon", "2e3", "--agent", "UCB", "--out",
            str(tmp_path / "o"), "--no-plots", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert "2 runs x 2000 steps, shift at t = 1200" in capsys.readouterr().out


def _helps(name, sp):
    """(command, option help paragraph) of ``sp`` and its sub-subcommands, as printed."""
    import argparse
    import re

    out = [(name, " ".join(p.split())) for p in re.split(r"\n  (?=-)", sp.format_help())[1:]]
    for a in sp._actions:
        if isinstance(a, argparse._SubParsersAction):
            for child_name, child in a.choices.items():
                out += _helps(f"{name} {child_name}", child)
    return out


def test_no_help_text_states_a_default_twice_or_a_none_default():
    """``shift --jobs`` read "(default: all cores) (default: None)": argparse's defaults
    formatter appends to texts that already state the default."""
    for command, sp in _subparsers().items():
        for where, text in _helps(command, sp):
            assert "(default: None)" not in text and "(default: [])" not in text, (where, text)
            assert text.count("(default") <= 1, (where, text)


def test_the_defaults_formatter_adds_a_default_only_where_the_text_has_none():
    import argparse

    from dpbandits.cli.options import DefaultsHelpFormatter

    p = argparse.ArgumentParser(prog="x", formatter_class=DefaultsHelpFormatter)
    p.add_argument("--runs", type=int, default=100, help="replications")
    p.add_argument("--jobs", type=int, default=None, help="workers (default: all cores)")
    p.add_argument("--quiet", action="store_true", help="say less")
    text = " ".join(p.format_help().split())
    assert "replications (default: 100)" in text
    assert "workers (default: all cores) --quiet say less" in text
