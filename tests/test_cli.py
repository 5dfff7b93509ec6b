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
