"""``dpbandits docs [TOPIC]``: the documentation pages, offline.

Without a topic, lists the pages with their titles and their addresses on the documentation
site. ``dpbandits docs TOPIC`` prints page TOPIC (its markdown source, as shipped with the
package) after its address; ``--url`` prints the address alone. A topic is a page name, e.g.
``experiments``, ``selectors``, ``course``, ``floating-point`` (``docs/experiments.md`` works too).
"""

from __future__ import annotations

import argparse
import sys

from dpbandits.cli import options
from dpbandits.core import docs

HELP = "the documentation pages, offline: list them, or print one"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = options.add_command(subparsers, "docs", HELP, __doc__)
    parser.add_argument("topic", nargs="?", default=None, metavar="TOPIC",
                        help="the page to print (default: list the pages)")  # fmt: skip
    parser.add_argument("--url", action="store_true", help="print the page's address only")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.topic is None:
        topics = docs.docs_topics()
        width = max(len(t) for t in topics)
        for topic in topics:
            print(f"{topic.ljust(width)}  {docs.docs_title(topic)}")
        print(f"\nOnline: {docs.DOCS_URL}    Print one:  dpbandits docs TOPIC")
        return 0
    if args.url:
        print(docs.docs_url(args.topic))
        return 0
    text = docs.docs_text(args.topic)  # ValueError (exit 2) names the pages for a wrong topic
    print(f"<!-- {docs.docs_url(args.topic)} -->\n")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
