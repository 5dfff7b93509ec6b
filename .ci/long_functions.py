"""List the functions of the library (``dpbandits``, ``agents``, ``envs``) longer than a limit.

A function's length is the number of lines from its first statement after the docstring to its
last line (blank and comment lines inside included; the signature and the docstring not).

    python .ci/long_functions.py               # functions over 80 lines, longest first
    python .ci/long_functions.py --limit 60    # another limit
    python .ci/long_functions.py --most 2      # exit 1 when more than 2 are over the limit
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dpbandits", "agents", "envs")


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the function's last line."""
    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
        first.value.value, str
    ):
        body = body[1:]
    if not body:
        return 0
    return (node.end_lineno or node.lineno) - body[0].lineno + 1


def long_functions(limit: int) -> list[tuple[int, str]]:
    """``(lines, "path:line qualified.name")`` of every function over ``limit`` lines."""
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            stack: list[tuple[ast.AST, str]] = [(tree, "")]
            while stack:
                node, prefix = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        name = f"{prefix}{child.name}"
                        if not isinstance(child, ast.ClassDef):
                            n = body_lines(child)
                            if n > limit:
                                where = f"{path.relative_to(ROOT).as_posix()}:{child.lineno}"
                                out.append((n, f"{where} {name}"))
                        stack.append((child, name + "."))
    return sorted(out, reverse=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=80, help="lines (default 80)")
    parser.add_argument("--most", type=int, default=None,
                        help="exit 1 when more functions than this are over the limit")  # fmt: skip
    args = parser.parse_args(argv)
    found = long_functions(args.limit)
    for n, where in found:
        print(f"{n:5d}  {where}")
    print(f"{len(found)} function(s) over {args.limit} lines")
    return 1 if args.most is not None and len(found) > args.most else 0


if __name__ == "__main__":
    sys.exit(main())
