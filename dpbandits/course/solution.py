"""The reference solution of an exercise: its exercise file with the solved parts filled in.

Each exercise is written once. The exercise file ``dpbandits/course/exercises/ex<N>_<slug>.py``
is the whole notebook (text, imports, experiments, questions) with every task's body replaced by

    # TODO: write this (see the docstring), then run the checker.
    raise NotImplementedError("TODO")

and every answer to the questions by ``# Your answer:``. The file of the same name in
the repository's ``examples/course-solutions/`` (never in the package) holds only the solved
parts: after a header line
``# Reference solution of exercise <N>: the solved parts only.``, one function per task, with
the task's parameter names and its solved body (the types, defaults and docstring are the
exercise file's), and the answers as comment lines between ``# BEGIN ANSWER`` and
``# END ANSWER``, in the order of the questions.

:func:`solution_text` fills the exercise file with those parts: the complete, runnable
reference notebook that ``dpbandits course start N DIR --solution`` writes and that
``dpbandits course check N examples/course-solutions/ex<N>_<slug>.py`` grades.
"""

from __future__ import annotations

import ast
import re
import textwrap

__all__ = ["ANSWER_LINE", "TODO_LINES", "is_solution_parts", "solution_text", "solved_parts"]

#: The placeholder of a task's body in an exercise file (after the docstring).
TODO_LINES = (
    "# TODO: write this (see the docstring), then run the checker.",
    'raise NotImplementedError("TODO")',
)
#: The placeholder of an answer to the questions.
ANSWER_LINE = "# Your answer:"

_HEADER = re.compile(r"^# Reference solution of exercise (?P<number>\d+): the solved parts only\.")
_BEGIN_ANSWER = "# BEGIN ANSWER"
_END_ANSWER = "# END ANSWER"


def is_solution_parts(text: str) -> int | None:
    """The exercise number if ``text`` is a file of solved parts (its header line), else None."""
    first = text.split("\n", 1)[0]
    m = _HEADER.match(first)
    return int(m["number"]) if m else None


def solved_parts(
    text: str, name: str = "<solution>"
) -> tuple[dict[str, ast.FunctionDef], list[str]]:
    """The solved functions of a parts file (by name) and its answer blocks (comment text)."""
    try:
        tree = ast.parse(text, filename=name)
    except SyntaxError as exc:
        raise ValueError(f"{name}:{exc.lineno}: the solved parts do not parse: {exc.msg}") from None
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    answers: list[str] = []
    block: list[str] | None = None
    for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
        stripped = line.strip()
        if stripped == _BEGIN_ANSWER:
            if block is not None:
                raise ValueError(f"{name}:{lineno}: nested BEGIN ANSWER")
            block = []
        elif stripped == _END_ANSWER:
            if block is None:
                raise ValueError(f"{name}:{lineno}: END ANSWER without BEGIN ANSWER")
            answers.append("".join(block))
            block = None
        elif block is not None:
            block.append(line)
    if block is not None:
        raise ValueError(f"{name}: BEGIN ANSWER is never closed")
    return functions, answers


def _body(lines: list[str], node: ast.FunctionDef) -> str:
    """The source lines of ``node``'s body (comments above its first statement included)."""
    # The header ends on the first line, after the annotations, that ends with ":".
    ends = [a.end_lineno or 0 for a in ast.walk(node.args) if hasattr(a, "end_lineno")]
    if node.returns is not None:
        ends.append(node.returns.end_lineno or 0)
    last = max([node.lineno, *ends])
    while not lines[last - 1].split("#", 1)[0].rstrip().endswith(":"):
        last += 1
    end = node.end_lineno or last
    return textwrap.dedent("".join(lines[last:end]))


def _parameters(node: ast.FunctionDef) -> list[str]:
    a = node.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return names + [f"*{x.arg}" for x in (a.vararg,) if x] + [f"**{x.arg}" for x in (a.kwarg,) if x]


def solution_text(exercise_text: str, parts_text: str, name: str = "<solution>") -> str:
    """The exercise file ``exercise_text`` with the solved parts of ``parts_text`` filled in.

    ``ValueError`` (naming ``name`` and the task) when a task has no solved function, a solved
    function has no task or another signature, or the answers do not match the questions.
    """
    solved, answers = solved_parts(parts_text, name)
    parts_lines = parts_text.splitlines(keepends=True)
    tasks = {
        n.name: n for n in ast.walk(ast.parse(exercise_text)) if isinstance(n, ast.FunctionDef)
    }
    lines = exercise_text.splitlines(keepends=True)
    out: list[str] = []
    current: str | None = None  # the innermost function seen so far (a task's TODO is in it)
    filled: list[str] = []
    n_answers = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^[ \t]*def (\w+)\(", line)
        if m:
            current = m[1]
        stripped = line.strip()
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if (stripped, following) == TODO_LINES:
            if current is None or current not in solved:
                raise ValueError(f"{name}: no solved function for the TODO of {current!r}")
            if _parameters(solved[current]) != _parameters(tasks[current]):
                raise ValueError(
                    f"{name}: {current}() must take the parameters of the exercise file's "
                    f"{current}({', '.join(_parameters(tasks[current]))})"
                )
            indent = line[: len(line) - len(line.lstrip())]
            out.append(textwrap.indent(_body(parts_lines, solved[current]), indent))
            filled.append(current)
            i += 2
            continue
        if stripped == ANSWER_LINE:
            if n_answers >= len(answers):
                raise ValueError(f"{name}: no answer block for question cell {n_answers + 1}")
            out.append(answers[n_answers])
            n_answers += 1
            i += 1
            continue
        out.append(line)
        i += 1
    extra = sorted(set(solved) - set(filled))
    if extra:
        raise ValueError(f"{name}: solved functions without a TODO in the exercise file: {extra}")
    if n_answers != len(answers):
        raise ValueError(
            f"{name}: {len(answers)} answer blocks for {n_answers} '# Your answer:' lines"
        )
    return "".join(out)
