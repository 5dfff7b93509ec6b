"""Write the "Every module" section of docs/architecture.md from the code: one row per module of
``dpbandits``, ``agents`` and ``envs``, by floor, with the first line of its docstring.

    python docs/_tools/module_map.py          # rewrite the section
    python docs/_tools/module_map.py --check  # exit 1 if it is out of date (tests/test_layers.py)
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
START, END = "<!-- modules:start -->", "<!-- modules:end -->"

#: (floor, title, module prefixes), bottom first: the floors of the picture above.
FLOORS = [
    (0, "core", ("dpbandits.core",)),
    (1, "mechanisms", ("dpbandits.selectors", "dpbandits.continual", "dpbandits.quantiles",
                       "dpbandits.accounting", "dpbandits.theory")),
    (2, "agents, environments, selection problems", ("agents", "envs", "dpbandits.scenarios",
                                                     "dpbandits.topk", "dpbandits.recommendation")),
    (3, "experiments", ("dpbandits.experiments",)),
    (4, "audits and conformance kits", ("dpbandits.audit", "dpbandits.testing")),
    (5, "commands and course", ("dpbandits.cli", "dpbandits.course", "dpbandits.__main__")),
]


def modules() -> list[tuple[str, Path]]:
    out = []
    for package in ("dpbandits", "agents", "envs"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "exercises" in parts or "pages" in parts:
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            out.append((name, path))
    return out


def first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    line = " ".join(doc.strip().split("\n\n")[0].split())
    return line.replace("|", "\\|")


def section() -> str:
    mods = modules()
    lines = [START, "", "## Every module", "",
             "Generated from the code by `python docs/_tools/module_map.py` (a test keeps it "
             "current): each module of the three packages, by floor, with the first sentence "
             "of its docstring.", ""]  # fmt: skip
    for floor, title, prefixes in FLOORS:
        rows = [(n, p) for n, p in mods
                if any(n == pre or n.startswith(pre + ".") for pre in prefixes)]  # fmt: skip
        lines += [f"**Floor {floor}: {title}**", "", "| module | one idea |", "|---|---|"]
        lines += [f"| `{p.relative_to(ROOT).as_posix()}` | {first_line(p)} |" for _, p in rows]
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def updated(text: str) -> str:
    new = section()
    if START in text and END in text:
        head, rest = text.split(START, 1)
        return head + new + rest.split(END, 1)[1]
    return text.rstrip() + "\n\n" + new + "\n"


if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    new = updated(text)
    if "--check" in sys.argv:
        sys.exit(0 if new == text else 1)
    DOC.write_text(new, encoding="utf-8")
