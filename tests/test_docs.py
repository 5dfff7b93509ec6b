"""The README's code and the example scripts run as a new user would run them.

Every ```python block of README.md is executed in a fresh namespace, and every script in
examples/ as ``python examples/<name>.py``, each in a temporary working directory (they write
figures). A snippet that drifted from the API fails here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def _readme_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_python_examples():
    assert len(_readme_blocks()) >= 3


@pytest.mark.parametrize("index", range(len(_readme_blocks())))
def test_readme_python_block_runs(index, tmp_path, monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    code = _readme_blocks()[index]
    exec(compile(code, f"README.md block {index}", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip(), "a README example should print something"


def test_examples_exist():
    names = {p.name for p in EXAMPLES}
    assert {"quickstart.py", "custom_selector.py", "custom_agent.py"} <= names


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_script_runs(script, tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip()
