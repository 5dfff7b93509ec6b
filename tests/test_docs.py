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

from tests.marks import slow_except

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


@pytest.mark.parametrize(
    "script",
    # custom_selector.py runs as this test runs it (a fresh interpreter, MPLBACKEND=Agg, exit 0
    # and some output) in the jit-cache test of two module names, after its plug-in was cached
    # under another name (tests/dpbandits/test_jit_cache.py): one run of the script, not two
    slow_except(
        [p for p in EXAMPLES if p.name != "custom_selector.py"],
        fast=[ROOT / "examples" / "quickstart.py"],
        ids=lambda p: p.name,
    ),
)
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


# --------------------------------------------------------------------------------------------
# Blocks marked runnable in README.md and docs/*.md (issue 30, item 7)
# --------------------------------------------------------------------------------------------
#
# The marker is an HTML comment on the line before the fence, invisible on the page:
#
#     <!-- runnable -->                    the block runs as written
#     <!-- runnable: --runs 4 -->          ARGS are appended to each `dpbandits ...` command of
#                                          a bash block (before a comment, `>` or `|`), except
#                                          `--example` ones (they print a file): a small size
#
# The python blocks of a page run in order as one script (a later block may use an earlier
# one's names), the bash blocks each as a `bash -e` script; all in one temporary directory in
# which `examples/` is the repository's, as in a clone. Every command must exit 0.

RUNNABLE = re.compile(
    r"<!-- runnable(?::(?P<args>[^>]*?))? -->\n```(?P<lang>python|bash)\n(?P<code>.*?)```", re.S
)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _runnable(page: Path) -> list[tuple[int, str, str, str]]:
    """``(line, lang, args, code)`` of every block of ``page`` marked runnable."""
    text = page.read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 1, m["lang"], (m["args"] or "").strip(), m["code"])
            for m in RUNNABLE.finditer(text)]  # fmt: skip


def _small(code: str, args: str) -> str:
    """``code`` (bash) with ``args`` appended to every ``dpbandits`` command but ``--example``."""
    if not args:
        return code
    lines = []
    for line in code.replace("\\\n", " ").splitlines():
        if line.lstrip().startswith("dpbandits ") and "--example" not in line:
            cut = min((i for i in (line.find(" #"), line.find(" >"), line.find(" |")) if i >= 0),
                      default=len(line))  # fmt: skip
            line = f"{line[:cut]} {args}{line[cut:]}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_the_runnable_markers_are_spelled_right_and_used():
    """A misspelled marker would silently leave its block out."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        markers = re.findall(r"^<!-- runnable", text, flags=re.M)
        assert len(markers) == len(_runnable(page)), page.name
    assert sum(len(_runnable(p)) for p in PAGES) >= 15


@pytest.mark.parametrize(
    "page",
    slow_except(
        [p for p in PAGES if _runnable(p)],
        fast=[ROOT / "docs" / n for n in ("floating-point.md", "quantiles.md", "shift.md")],
        ids=lambda p: p.name,
    ),
)
def test_the_runnable_blocks_of_a_page_run(page, tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    blocks = _runnable(page)
    for line, lang, args, code in blocks:
        if lang != "bash":
            continue
        out = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", _small(code, args)],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, f"{page.name}:{line}\n{out.stderr[-3000:]}"
    script = "\n".join(f"# {page.name}:{line}\n{code}" for line, lang, _, code in blocks
                       if lang == "python")  # fmt: skip
    if script:
        (tmp_path / "page_blocks.py").write_text(script, encoding="utf-8")
        out = subprocess.run([sys.executable, "page_blocks.py"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600)  # fmt: skip
        assert out.returncode == 0, f"{page.name}\n{out.stderr[-3000:]}"


# --------------------------------------------------------------------------------------------
# Install commands (issue 30, item 2): every one works as written from a clone
# --------------------------------------------------------------------------------------------

#: Where users read install commands: the pages, the messages and --help texts of the code,
#: the examples and the benchmarks.
INSTALL_TEXTS = [*PAGES, ROOT / "CHANGELOG.md",
                 *[p for d in ("dpbandits", "agents", "envs", "examples", "benchmarks")
                   for p in sorted((ROOT / d).rglob("*.py"))
                   if "pages" not in p.relative_to(ROOT).parts]]  # fmt: skip
PIP_INSTALL = re.compile(r"pip install((?:\s+(?:-[-\w]+|[\"']?[\w.\[\],<>=~!-]+[\"']?))+)")


def _extras() -> set[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(pyproject["project"]["optional-dependencies"])


def test_every_install_command_works_from_a_clone():
    """``pip install dpbandits`` fails (not on PyPI): no text tells a user to run it, or to
    install ``dpbandits[extra]``, except to say that it does not work; ``.[extra]`` names an
    extra of pyproject.toml."""
    extras = _extras()
    bad = []
    for path in INSTALL_TEXTS:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in PIP_INSTALL.finditer(line):
                where = f"{path.relative_to(ROOT)}:{n}: pip install{m[1]}"
                words = [w.strip("\"'`") for w in m[1].split()]
                if any(w == "dpbandits" or w.startswith("dpbandits[") for w in words):
                    if not any(s in line for s in ("not on PyPI", "not published on PyPI",
                                                   "finds nothing")):
                        bad.append(where)
                for w in words:
                    named = re.fullmatch(r"\.\[([\w,-]+)\]", w)  # (not a template: ".[{x}]")
                    if named and not set(named[1].split(",")) <= extras:
                        bad.append(f"{where} (extras: {sorted(extras)})")
    assert not bad, "\n".join(bad)


def test_install_hints_name_the_packages_of_the_extra(monkeypatch):
    from importlib import metadata

    from dpbandits.core import extras

    requires = ['pandas>=1.5; extra == "pandas"', "dask[distributed]>=2023.1; extra == 'dask'",
                'pandas>=1.5; extra == "parquet"', 'pyarrow >= 10; extra == "parquet"',
                "numpy>=1.25", 'tomli>=2; python_version < "3.11"']  # fmt: skip
    monkeypatch.setattr(metadata, "requires", lambda name: requires)
    assert extras.install_hint("pandas") == 'pip install "pandas>=1.5"'
    assert extras.install_hint("dask") == 'pip install "dask[distributed]>=2023.1"'
    assert extras.install_hint("parquet") == 'pip install "pandas>=1.5" "pyarrow>=10"'
    # without the metadata (a checkout run without installing it): the clone's command
    assert extras.install_hint("sklearn") == (
        'pip install ".[sklearn]" (in a clone of the dpbandits repository)'
    )


def test_every_extra_a_message_names_exists():
    extras = _extras()
    named = {m[1] for path in INSTALL_TEXTS if path.suffix == ".py"
             for m in re.finditer(r"install_hint\([\"'](\w+)[\"']\)", path.read_text())}
    assert named and named <= extras, named - extras


def test_results_to_frame_says_how_to_get_pandas(monkeypatch):
    """Issue 30: the message said ``pip install 'dpbandits[pandas]'``, which fails."""
    import builtins

    from dpbandits.experiments.results import Results

    real_import = builtins.__import__

    def no_pandas(name: str, *args: object, **kwargs: object) -> object:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"to_frame\(\) needs pandas: pip install ") as info:
        Results.to_frame(object())  # type: ignore[arg-type]
    assert "dpbandits[" not in str(info.value)


def test_the_package_metadata_points_to_the_documentation_and_the_license():
    """Issue 30, item 9: a LICENSE file for the license pyproject.toml declares, and the
    documentation address of the metadata is the one the messages use: none while the site is
    not published, and no placeholder repository address (issue 41)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    from dpbandits.core.docs import DOCS_URL

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    assert project.get("urls", {}).get("Documentation") == DOCS_URL
    assert "Repository" not in project.get("urls", {})
    assert len(project["classifiers"]) >= 10


# --------------------------------------------------------------------------------------------
# Statements of the docs that the code decides (issue 30, item 7)
# --------------------------------------------------------------------------------------------


def _kind_rows() -> dict[str, str]:
    """The rows of docs/experiments.md's table of agent kinds: ``{kind: parameters text}``."""
    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    table = text.split("| `kind` | parameters (defaults) |", 1)[1].split("\n\n", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| (.*) \|$", table, flags=re.M))


def _shown(value: object) -> list[str]:
    """How the docs may write a default: ``None``, ``false``, ``"grid"``, ``1.0`` or ``1``."""
    if value is None or isinstance(value, bool):
        return [str(value).lower() if isinstance(value, bool) else "None"]
    if isinstance(value, str):
        return [f'"{value}"']
    if isinstance(value, float):
        return [repr(value), f"{value:g}"]
    return [repr(value)]


def test_the_agent_kinds_table_lists_every_parameter_with_its_default():
    """Every constructor parameter of each documented kind is in its row (``quantile_method``
    was missing), and the private agent's defaults are those of ``agents.describe`` (and of
    ``dpbandits list agents``): ``epsilon_select`` was documented as 1.0, its default is None."""
    import agents

    rows = _kind_rows()
    assert {"ucb", "thompson", "private"} <= set(rows)
    for kind, row in rows.items():
        params = agents.describe(kind).signature.parameters.values()
        names = [p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        missing = [n for n in names if f"`{n}`" not in row]
        assert not missing, f"{kind}: {missing}"
    row = rows["private"]
    for p in agents.describe("private").signature.parameters.values():
        if p.name in ("selector", "levels", "lo", "hi", "means", "sensitivity") or p.kind in (
            p.VAR_KEYWORD, p.VAR_POSITIONAL
        ):  # fmt: skip
            continue
        described = row.split(f"`{p.name}` (", 1)[1].split(")")[0]
        assert any(s in described for s in _shown(p.default)), (p.name, p.default, described)


def test_the_audit_is_documented_with_the_number_of_pairs_it_reports():
    """docs/selectors.md said 8 pairs; ``dpbandits audit`` reports one row per hard pair."""
    from dpbandits.audit.selector import HARD_PAIRS

    text = " ".join((ROOT / "docs" / "selectors.md").read_text(encoding="utf-8").split())
    m = re.search(r"at most `(\d+)e-6` over the (\d+) pairs of `HARD_PAIRS`", text)
    assert m is not None
    assert int(m[1]) == int(m[2]) == len(HARD_PAIRS)
