"""The exercises as notebooks: written from the one jupytext source, graded as notebooks, run
top to bottom in a fresh kernel (nbclient), figures inline there and saved by scripts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from dpbandits import course
from dpbandits.cli import main
from dpbandits.course.notebooks import COURSE_HINT, notebook_script

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = course.exercises()

#: Small experiments for the runs in CI (the parameters cell of each notebook, overridden).
SMALL = {
    1: "N_RUNS = 4\nHORIZON = 300\n",
    2: "N_RUNS = 4\nHORIZON = 300\n",
    3: "N_RUNS = 4\nHORIZON = 400\n",
    4: "AUDIT_DRAWS = 2000\n",
    5: "MAX_LOG2_T = 5\nREPEATS = 5\n",
    6: "GRID = (1.0,)\nN_RUNS = 2\nHORIZON = 300\n",
}


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_start_writes_the_notebook_of_the_one_source(tmp_path: Path, ex: course.Exercise) -> None:
    """The default format is a notebook whose cells are the percent source's, without
    outputs, the same bytes every time; ``--format py`` writes the source itself."""
    path = course.start(ex.number, tmp_path)
    assert path.name == Path(ex.filename).with_suffix(".ipynb").name
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    source = jupytext.reads(ex.starter_path().read_text(encoding="utf-8"), fmt="py:percent")
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        (c.cell_type, c.source) for c in source.cells
    ]
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert nb.metadata.kernelspec.name == "python3"
    again = course.start(ex.number, tmp_path / "again")
    assert again.read_bytes() == path.read_bytes()
    script = course.start(ex.number, tmp_path, fmt="py")
    assert script.read_bytes() == ex.starter_path().read_bytes()


def test_start_without_jupytext_says_what_to_install(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "jupytext", None)  # import jupytext now fails
    with pytest.raises(ImportError, match=re.escape(COURSE_HINT)):
        course.start(1, tmp_path / "a")
    assert not (tmp_path / "a").exists()
    assert main(["course", "start", "1", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs jupytext" in err and "--format py" in err
    assert main(["course", "start", "1", str(tmp_path / "b"), "--format", "py"]) == 0


def test_check_a_notebook(tmp_path: Path, capsys) -> None:
    """A notebook is graded like the script of its code cells: the starter is not done, the
    solution is ok, IPython-only lines and a cell before the imports do no harm, and an error
    is located by cell and line."""
    ex = course.exercise(3)
    starter = course.start(3, tmp_path / "s")
    assert main(["course", "check", "3", str(starter)]) == 1
    assert "Score: 0 of 6 points (0 of 3 tasks ok)." in capsys.readouterr().out
    solution = course.start(3, tmp_path / "t", solution=True)
    nb = nbformat.read(solution, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("!pip install dpbandits\n%matplotlib inline"))
    nbformat.write(nb, solution)
    assert [r.status for r in course.check(3, solution)] == ["ok"] * 3
    number = next(i for i, c in enumerate(nb.cells, start=1) if "def sw_ucb_index" in c.source)
    cell = nb.cells[number - 1]
    cell.source = cell.source.replace("safe = np.maximum(counts, 1.0)", "safe = counts[7]")
    line = cell.source.splitlines().index("    safe = counts[7]") + 1
    nbformat.write(nb, solution)
    (r,) = course.check(3, solution, tasks=["sw_ucb_index"])
    assert r.status == "failed" and "your code raised IndexError" in r.message
    assert f"ex3_shift.ipynb, cell {number}, line {line}, in sw_ucb_index" in r.message
    assert ex.filename != solution.name


def test_a_syntax_error_in_one_cell_is_reported_on_its_own_task(tmp_path: Path) -> None:
    """A cell that does not parse stops the import of the whole notebook: the reason goes on
    the row of the task whose cell it is (it went on the first task's row), by cell and line,
    and the other rows point to that task."""
    solution = course.start(3, tmp_path / "t", solution=True)
    nb = nbformat.read(solution, as_version=4)
    names = [t.name for t in course.exercise(3).tasks]
    target = names[-1]
    number = next(i for i, c in enumerate(nb.cells, start=1) if f"def {target}(" in c.source)
    nb.cells[number - 1].source += "\n    x = (1,\n"
    nbformat.write(nb, solution)
    results = course.check(3, solution)
    assert [r.task for r in results] == names
    bad = results[-1]
    assert "your code raised SyntaxError" in bad.message, bad.message
    assert f"ex3_shift.ipynb, cell {number}, line" in bad.message, bad.message
    for r in results[:-1]:
        assert r.status == "failed" and r.message == (
            f"not checked: your file could not be imported (see {target})"), r.message


def test_notebook_script(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# title"),
        nbformat.v4.new_code_cell("%matplotlib inline\nx = 1"),
        nbformat.v4.new_code_cell(
            "from __future__ import annotations\ns = '''\n% in a string\n'''"
        ),
        nbformat.v4.new_code_cell("%%bash\necho hi"),
        nbformat.v4.new_code_cell("y = x +"),
    ]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    script = notebook_script(path)
    lines = script.text.splitlines()
    assert lines[0] == "from __future__ import annotations"
    assert lines[1] == "# (IPython only) %matplotlib inline" and lines[2] == "x = 1"
    assert "% in a string" in lines  # a cell that is Python as it stands is kept as it is
    assert "# (IPython only) echo hi" in lines
    assert script.where("nb.ipynb", lines.index("y = x +") + 1) == "nb.ipynb, cell 5, line 1"
    assert script.where("nb.ipynb", 3) == "nb.ipynb, cell 2, line 2"


def test_show_saves_next_to_a_script(tmp_path: Path) -> None:
    """Run as a script, a figure is saved next to the file and the path is printed."""
    script = tmp_path / "ex9_plots.py"
    script.write_text(
        "import matplotlib.pyplot as plt\n"
        "from dpbandits.course.helpers import show\n"
        "fig, ax = plt.subplots()\nax.plot([0, 1])\n"
        "assert show(fig, 'line') is not None\n"
    )
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    saved = tmp_path / "ex9_plots_line.png"
    assert saved.is_file() and saved.read_bytes().startswith(b"\x89PNG")
    assert proc.stdout.strip() == f"saved the figure {saved}"


def _run(path: Path, number: int) -> nbformat.NotebookNode:
    """Execute the notebook ``path`` top to bottom in a fresh kernel, with small experiments."""
    nb = nbformat.read(path, as_version=4)
    i = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    nb.cells.insert(i + 1, nbformat.v4.new_code_cell(SMALL[number]))
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # CellExecutionError if any cell fails
    return nb


def _texts(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["starter", "solution"])
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.filename)
def test_notebook_runs_top_to_bottom(tmp_path: Path, ex: course.Exercise, kind: str) -> None:
    """A fresh kernel runs every cell without an error: the starter's checks say "not done
    yet" and its experiments wait; the solution's checks pass and its figures show inline."""
    path = course.start(ex.number, tmp_path, solution=kind == "solution")
    nb = _run(path, ex.number)
    code = [c for c in nb.cells if c.cell_type == "code"]
    checks = {t.name: next(c for c in code if f'check("{t.name}")' in c.source) for t in ex.tasks}
    score = _texts(code[-1])
    if kind == "starter":
        assert f"Score: 0 of {ex.max_points} points" in score
        # (exercise 4 checks its audit inside the audit's experiment, which waits)
        pure = [
            c
            for c in checks.values()
            if c.source.startswith('if __name__ == "__main__":\n    check(')
        ]
        assert len(pure) >= len(ex.tasks) - 1 and all("not done yet" in _texts(c) for c in pure)
        assert any(_texts(c).startswith("skipped: `") for c in code)
    else:
        assert f"Score: {ex.max_points} of {ex.max_points} points" in score, score
        assert all(f"{t.points}/{t.points}  ok" in _texts(checks[t.name]) for t in ex.tasks)
        images = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
        assert images  # inline, and nothing saved next to the notebook
        assert not list(tmp_path.glob("*.png"))
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
    json.dumps(nb)  # a plain notebook, outputs included
