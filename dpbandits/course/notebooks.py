"""The exercises as Jupyter notebooks: written from the one jupytext source, read back to grade.

Each exercise is written once, as a jupytext "percent" script (``# %%`` cells). :func:`to_ipynb`
turns it into a notebook with `jupytext <https://jupytext.readthedocs.io>`_ (the optional
extra ``course``: ``pip install ".[course]"`` in a clone of the repository); there is no
second copy in the repository.

:func:`notebook_script` does the way back for grading, with the standard library only: the
code cells of a notebook, in order, as one Python script, IPython-only lines (``%magic``,
``!shell``) commented out and ``from __future__`` imports moved to the top, plus a map from the
script's lines to the notebook's cells, so that
the checker says ``ex1_bandit_basics.ipynb, cell 7, line 3`` (cells counted from 1, markdown
cells included, as they appear on screen).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

from dpbandits.core.extras import install_hint

__all__ = ["COURSE_HINT", "NotebookScript", "notebook_script", "to_ipynb"]

#: How to get what writing notebooks needs.
COURSE_HINT = install_hint("course")

# An IPython line magic, shell escape or help request: not Python, so it is commented out.
_IPYTHON_LINE = re.compile(r"^\s*(%|!|\?)|\?\s*$")
_FUTURE = re.compile(r"^from __future__ import ")


def to_ipynb(text: str, exercise: int) -> str:
    """The jupytext percent script ``text`` of exercise ``exercise`` as notebook JSON (nbformat
    4), without outputs, with cell ids ``ex<N>-<i>`` (the same file every time).

    ``ImportError`` naming :data:`COURSE_HINT` when jupytext is not installed.
    """
    try:
        import jupytext
    except ImportError:
        raise ImportError(
            f"writing a notebook needs jupytext, which is not installed: {COURSE_HINT} "
            "(or write the exercise as a script with --format py)"
        ) from None
    nb = jupytext.reads(text, fmt="py:percent")
    data = json.loads(jupytext.writes(nb, fmt="ipynb"))
    for i, cell in enumerate(data["cells"], start=1):
        cell["id"] = f"ex{exercise}-{i}"  # jupytext draws random ids
        cell.get("metadata", {}).pop("lines_to_next_cell", None)  # a jupytext layout detail
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class NotebookScript:
    """The code cells of a notebook as one script; ``cells[i]`` and ``lines[i]`` are the cell
    (counted from 1) and the line in that cell of the script's line ``i + 1``."""

    text: str
    cells: tuple[int, ...]
    lines: tuple[int, ...]

    def where(self, name: str, lineno: int) -> str:
        """``"<name>, cell C, line L"`` for line ``lineno`` of the script."""
        if 1 <= lineno <= len(self.cells):
            return f"{name}, cell {self.cells[lineno - 1]}, line {self.lines[lineno - 1]}"
        return f"{name}, line {lineno} of its code"


def notebook_script(path: str | Path) -> NotebookScript:
    """The code of the notebook ``path`` (see the module docstring).

    ``ValueError`` naming the file when it is not a notebook (not JSON, no ``cells``).
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        cells = data["cells"]
        if not isinstance(cells, list):
            raise TypeError
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
        raise ValueError(f"{str(p)!r} is not a Jupyter notebook (.ipynb)") from None
    out: list[str] = []
    cell_of: list[int] = []
    line_of: list[int] = []
    futures: list[str] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        lines = text.splitlines()
        # Only a cell that is not Python as it stands has IPython lines to comment out (a line
        # of a string may well start with "%"). A cell magic (%%time, %%bash, ...) makes the
        # whole cell something else than Python.
        python = _parses(text)
        whole_cell_magic = not python and bool(lines) and lines[0].lstrip().startswith("%%")
        for i, line in enumerate(lines, start=1):
            if not python and (whole_cell_magic or _IPYTHON_LINE.search(line)):
                line = "# (IPython only) " + line
            elif _FUTURE.match(line):
                # Legal at the top of any cell, but only at the top of a script: moved there.
                futures.append(line.strip())
                line = "# (moved to the top) " + line
            out.append(line)
            cell_of.append(number)
            line_of.append(i)
        out.append("")  # a blank line between cells, as in a percent script
        cell_of.append(number)
        line_of.append(len(lines) + 1)
    if futures:  # one first line, not in any cell (cell 0)
        out.insert(0, "; ".join(dict.fromkeys(futures)))
        cell_of.insert(0, 0)
        line_of.insert(0, 0)
    return NotebookScript("\n".join(out) + "\n", tuple(cell_of), tuple(line_of))


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True
