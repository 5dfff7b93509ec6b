"""The documentation's address and its offline copy: ``dpbandits.core.docs``, ``dpbandits docs``.

Messages and ``--help`` texts point to a page of the site through :func:`docs_reference`, never
to a repository path (``docs/<name>.md``) that an installed package does not have; every page
they name exists and ships with the package.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from dpbandits.cli import build_parser, main
from dpbandits.core import docs

ROOT = Path(__file__).resolve().parents[1]


def test_every_page_of_docs_ships_and_prints():
    assert docs.docs_topics() == sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    for topic in docs.docs_topics():
        assert docs.docs_text(topic) == (ROOT / "docs" / f"{topic}.md").read_text("utf-8")


def test_docs_url_is_the_one_setting(monkeypatch):
    """No published site: a page is read offline or in the site mkdocs builds; setting
    DOCS_URL makes every reference name the page's address."""
    assert docs.DOCS_URL is None
    assert docs.docs_url("experiments") == "site/experiments.html"
    assert docs.docs_reference("shift", "results") == "`dpbandits docs shift`, section results"
    monkeypatch.setattr(docs, "DOCS_URL", "https://example.org/dp/")
    assert docs.docs_url("docs/floating_point.md", "#grid") == (
        "https://example.org/dp/floating-point.html#grid"
    )
    assert docs.docs_reference("shift") == (
        "https://example.org/dp/shift.html (offline: dpbandits docs shift)")
    # the site build takes its address from DOCS_URL (docs/_tools/hooks.py), not from mkdocs.yml
    assert not re.search(r"^site_url:", (ROOT / "mkdocs.yml").read_text("utf-8"), re.M)


def test_the_readme_and_the_changelog_are_pages():
    """The site's getting-started and changelog pages are the README and CHANGELOG.md, and
    ``dpbandits docs`` knows them."""
    assert docs.docs_text("getting-started") == (ROOT / "README.md").read_text("utf-8")
    assert docs.docs_text("changelog") == (ROOT / "CHANGELOG.md").read_text("utf-8")
    assert docs.docs_title("getting-started").startswith("Install and quickstart")


@pytest.mark.parametrize("bad", ["nope", "docs/nope.md", ""])
def test_unknown_page_is_refused_with_the_pages(bad):
    with pytest.raises(ValueError, match="experiments"):
        docs.docs_url(bad)
    with pytest.raises(TypeError, match="topic"):
        docs.docs_text(3)  # type: ignore[arg-type]


def test_link_docs_paths():
    text = docs.link_docs_paths("see docs/quantiles.md, and ``docs/shift.md#results``.")
    assert text == (
        "see `dpbandits docs quantiles`, and ```dpbandits docs shift`, section results``."
    )
    with pytest.raises(ValueError, match="no-such-page"):
        docs.link_docs_paths("docs/no-such-page.md")


def _help_texts() -> dict[str, str]:
    """The ``--help`` text of ``dpbandits`` and of every subcommand (and sub-subcommand)."""
    texts = {}
    todo = [("dpbandits", build_parser())]
    while todo:
        name, parser = todo.pop()
        texts[name] = parser.format_help()
        for action in parser._actions:  # argparse keeps its subparsers there
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {n}", p) for n, p in action.choices.items()]
    return texts


def test_help_texts_point_to_the_site_not_to_files():
    texts = _help_texts()
    assert len(texts) > 10
    for name, text in texts.items():
        assert not re.search(r"\bdocs/[\w-]+\.md", text), f"`{name} --help` names a file"
        for page in re.findall(r"`dpbandits docs ([a-z][\w-]*)`", text):
            assert page in docs.docs_topics(), f"`{name} --help` links a missing page {page}"
    assert docs.docs_reference("experiments") in texts["dpbandits run"]


def test_cli_docs(capsys):
    assert main(["docs"]) == 0
    listing = capsys.readouterr().out
    assert all(topic in listing for topic in docs.docs_topics())
    assert main(["docs", "shift"]) == 0
    out = capsys.readouterr().out
    assert docs.docs_text("shift") in out
    assert main(["docs", "--url", "course"]) == 0
    assert capsys.readouterr().out.strip() == docs.docs_url("course")
    assert main(["docs", "nope"]) == 2
    assert "not a documentation page" in capsys.readouterr().err


def test_the_site_loads_no_script_from_the_network():
    """The math renders offline: mkdocs.yml loads MathJax from the site itself, where the
    build's hook copies it (docs/_tools/hooks.py: MATHJAX, on_post_build), not from a CDN."""
    text = (ROOT / "mkdocs.yml").read_text("utf-8")
    scripts = re.findall(r"^  - (\S+\.js)$", text.split("extra_javascript:", 1)[1], re.M)
    assert "javascripts/mathjax/tex-mml-chtml.js" in scripts
    assert not [s for s in scripts if "//" in s]
    hooks = (ROOT / "docs" / "_tools" / "hooks.py").read_text("utf-8")
    assert re.search(r'^MATHJAX = "mathjax@3\.\d+\.\d+"$', hooks, re.M)
    assert '"tex-mml-chtml.js"' in hooks
    assert 'Path(config.site_dir) / "javascripts" / "mathjax"' in hooks
