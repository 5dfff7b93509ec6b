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
