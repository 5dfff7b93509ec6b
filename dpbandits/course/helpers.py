"""What the exercise notebooks call while they run: the checker in a cell, experiment cells that
wait for the tasks they use, and figures that work in a notebook and in a terminal.

In an exercise file (``docs/course.md``)::

    from dpbandits.course.helpers import Checker, show, skip_if_not_done

    check = Checker(1, globals())      # check("epsilon_greedy") grades one task here

    if __name__ == "__main__":
        with skip_if_not_done():       # a starter runs top to bottom: unfinished tasks skip
            ...
            show(fig, "regret")        # inline in a notebook; saved next to a script
"""

from __future__ import annotations

import contextlib
import io
import sys
import traceback
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

from dpbandits import course
from dpbandits.course.report import report_lines, task_feedback

__all__ = ["Checker", "in_notebook", "show", "skip_if_not_done"]


class Checker:
    """The checker of exercise ``number`` for the functions of a running notebook (its
    ``globals()``): ``check("task")`` prints the verdict of one task, ``check()`` of all.

    ``check("task", hint=1)`` adds the first hint (``hint=2`` the next, ...);
    :meth:`score` returns the points of a task, for autograders that grade cells (nbgrader).
    """

    def __init__(self, number: int, namespace: MutableMapping[str, Any]) -> None:
        self.exercise = course.exercise(number)
        self.namespace = namespace

    def __repr__(self) -> str:
        return f"Checker({self.exercise.number}, <namespace>)"

    def results(self, task: str | None = None, seed: int = 0) -> list[course.TaskResult]:
        """The results of ``task`` (default: every task) --
        :func:`dpbandits.course.check_namespace`."""
        tasks = None if task is None else [self.exercise.task(task).name]
        return course.check_namespace(self.exercise.number, self.namespace, seed, tasks)

    def __call__(self, task: str | None = None, *, hint: int = 0, seed: int = 0) -> None:
        results = self.results(task, seed)
        lines = report_lines(
            self.exercise, results, hint, more=lambda name, k: f'check("{name}", hint={k})'
        )
        if task is not None:
            lines = lines[:-1]  # one task: its line says it all, no total
        print("\n".join(lines))

    def score(self, task: str, seed: int = 0) -> float:
        """Points earned by ``task`` (0 unless it is ok); prints the verdict."""
        (result,) = self.results(task, seed)
        print(f"{result.task}: " + "\n".join(task_feedback(self.exercise, result)))
        return float(result.points)


@contextlib.contextmanager
def skip_if_not_done() -> Iterator[None]:
    """Run the block; if a task it uses is still a starter (raises ``NotImplementedError``),
    say so and go on instead of stopping the notebook. Other errors propagate as usual."""
    try:
        yield
    except NotImplementedError as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        name = frames[-1].name if frames else "a function"
        print(f"skipped: `{name}` is not done yet (it raises NotImplementedError); "
              "run this cell again when it is")  # fmt: skip


def in_notebook() -> bool:
    """True inside a Jupyter kernel (Jupyter, JupyterLab, Colab, VS Code notebooks)."""
    shell = sys.modules.get("IPython")
    get_ipython = getattr(shell, "get_ipython", None)
    ip = get_ipython() if callable(get_ipython) else None
    return ip is not None and hasattr(ip, "kernel")


def show(fig: Any, name: str) -> Path | None:
    """Show ``fig`` inline in a notebook; in a script, save it as ``<script>_<name>.png`` next
    to the script (the current folder when there is no script file), say where, and return
    the path. The figure is closed either way."""
    import matplotlib.pyplot as plt

    if in_notebook():
        from IPython.display import Image, display

        # The PNG itself, not display(fig): it shows whatever matplotlib backend is active
        # (display(fig) needs the inline backend's formatter, absent with e.g. MPLBACKEND=Agg).
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        plt.close(fig)
        display(Image(data=buffer.getvalue(), format="png"))
        return None
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    script = Path(main).resolve() if main else None
    folder, stem = (script.parent, script.stem) if script else (Path.cwd(), "figure")
    path = folder / f"{stem}_{name}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"saved the figure {path}")
    return path
