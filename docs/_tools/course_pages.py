"""The course exercises as pages of the site, rendered from their jupytext sources.

Each exercise's starter (the jupytext percent script that ``dpbandits course start`` hands
out, ``Exercise.starter_path``) becomes ``course/ex<N>_<slug>.md``: its markdown cells as text,
its code cells as code blocks. The starters hold the tasks, not their solutions (those live
outside the package, for teachers: docs/course.md), so the pages show none either;
``tests/test_api_reference.py`` checks it against the solution files.
"""

from __future__ import annotations

import jupytext

from dpbandits.course import exercises


def page_path(filename: str) -> str:
    return f"course/{filename.removesuffix('.py')}.md"


def render(text: str, number: int, filename: str) -> str:
    """The markdown page of exercise ``number`` from its jupytext percent source ``text``."""
    notebook = jupytext.reads(text, fmt="py:percent")
    out: list[str] = []
    for cell in notebook.cells:
        source = cell.source.strip("\n")
        if not source:
            continue
        if cell.cell_type == "markdown":
            out.append(source)
            if not out[1:] and source.startswith("# "):  # after the title: how to start
                out.append(
                    f'!!! tip "Work on it"\n    `dpbandits course start {number} DIR` gives you '
                    f"this exercise (`{filename}`) in `DIR`; `dpbandits course check {number} "
                    f"FILE` grades your work, one line per task."
                )
        else:
            out.append(f"```python\n{source}\n```")
    return "\n\n".join(out) + "\n"


def pages() -> dict[str, str | bytes]:
    """``course/index.md`` and one page per exercise."""
    result: dict[str, str | bytes] = {}
    rows = []
    for ex in exercises():
        text = ex.starter_path().read_text(encoding="utf-8")
        result[page_path(ex.filename)] = render(text, ex.number, ex.filename)
        name = ex.filename.removesuffix(".py")
        rows.append(f"| {ex.number} | [{ex.title}]({name}.md) | {ex.minutes} min | {ex.teaches} |")
    index = [
        "# The course exercises",
        "",
        "Six graded exercises, from a first bandit to a private agent under shift, shown here as "
        "students get them: the tasks to write, without their solutions. Teachers: "
        "[the course page](../course.md) says how to run the class and grade it.",
        "",
        "| # | exercise | time | what it teaches |",
        "| --- | --- | --- | --- |",
        *rows,
    ]
    result["course/index.md"] = "\n".join(index) + "\n"
    return result


def nav() -> list[dict[str, str] | str]:
    """The course section of the navigation: the index, then the exercises in order."""
    entries: list[dict[str, str] | str] = ["course/index.md"]
    for ex in exercises():
        entries.append({f"{ex.number}. {ex.title.split(':')[0]}": page_path(ex.filename)})
    return entries
