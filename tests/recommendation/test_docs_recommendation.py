"""The Python blocks of docs/recommendation.md run as written."""

import re
from pathlib import Path

import matplotlib
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "recommendation.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_doc_has_examples():
    assert len(_blocks()) >= 2


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_doc_python_block_runs(index, tmp_path, monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    exec(compile(_blocks()[index], f"recommendation.md block {index}", "exec"), {})
    assert capsys.readouterr().out.strip()
