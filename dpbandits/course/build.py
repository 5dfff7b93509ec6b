"""Make the starter files of the course exercises from their solutions.

The single source of truth is ``dpbandits/course/exercises/solutions/ex*.py``. In a solution,

- the code between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` becomes, in the starter,
  ``raise NotImplementedError("TODO")`` under a ``# TODO`` comment (same indentation);
- the comment lines between ``# BEGIN ANSWER`` and ``# END ANSWER`` (answers to questions)
  become ``# Your answer:``.

``python -m dpbandits.course.build`` (from the repository root) rewrites the starters in
``dpbandits/course/exercises/`` (``examples/course/`` is a link to that folder); the tests check
that they are in sync.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

__all__ = ["build", "starter_from_solution"]

_BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN (?P<kind>SOLUTION|ANSWER)[ \t]*$")
_END = re.compile(r"^[ \t]*# END (?P<kind>SOLUTION|ANSWER)[ \t]*$")


def starter_from_solution(text: str, name: str = "<solution>") -> str:
    """The starter text of a solution text (see the module docstring)."""
    out: list[str] = []
    kind: str | None = None
    for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
        begin, end = _BEGIN.match(line), _END.match(line)
        if kind is None:
            if end:
                raise ValueError(f"{name}:{lineno}: END {end['kind']} without BEGIN")
            if begin:
                kind, ind = begin["kind"], begin["indent"]
                if kind == "SOLUTION":
                    out.append(
                        f"{ind}# TODO: write this (see the docstring), then run the checker.\n"
                    )
                    out.append(f'{ind}raise NotImplementedError("TODO")\n')
                else:
                    out.append(f"{ind}# Your answer:\n")
                continue
            out.append(line)
        else:
            if begin:
                raise ValueError(f"{name}:{lineno}: nested BEGIN {begin['kind']}")
            if end:
                if end["kind"] != kind:
                    raise ValueError(f"{name}:{lineno}: END {end['kind']} closes BEGIN {kind}")
                kind = None
    if kind is not None:
        raise ValueError(f"{name}: BEGIN {kind} is never closed")
    return "".join(out)


def expected_files(root: Path) -> dict[Path, str]:
    """Every generated file under ``root`` (the repository) and its expected text."""
    package = root / "dpbandits" / "course" / "exercises"
    out: dict[Path, str] = {}
    for src in sorted((package / "solutions").glob("ex*.py")):
        starter = starter_from_solution(src.read_text(encoding="utf-8"), src.name)
        out[package / src.name] = starter
    return out


def build(root: Path) -> list[Path]:
    """Write every generated file that differs; return the paths written."""
    written = []
    for path, text in expected_files(root).items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
            written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    for p in build(repo):
        print(f"wrote {p}")
