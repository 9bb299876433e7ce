"""Shapes of the things integrations work on, learnt from their own tool descriptions.

Why: people refer to an integration's objects by their shape more often than by its name:
"move ENG-1423 to In Review", "catch me up on #proj-atlas", "open an issue in acme/api".
Integration authors document those shapes with quoted examples ("identifier (e.g.
'ENG-123')", "'deploy in:#eng from:@alice'", "'repo:facebook/react'"), so a toolset gets a
shape only when one of its own descriptions shows an example of it. Pure; never imports Hermes.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterable, Set

# kind -> (what a quoted example looks like, what it looks like in a request, weight)
_EXAMPLE = {
    "identifier": re.compile(r"^[A-Z][A-Z0-9]{1,9}-\d+$"),
    "slug": re.compile(r"^(?:[a-z]+:)?[A-Za-z0-9][\w.-]*/[\w.-]+$"),
    "channel": re.compile(r"^(?:[a-z]+:)?#[^\W\d_][\w-]*$"),
    "mention": re.compile(r"^(?:[a-z]+:)?@[A-Za-z][\w.-]*$"),
}
_REQUEST = {
    "identifier": re.compile(r"(?<![\w-])([A-Z][A-Z0-9]{1,9})-\d+(?![\w-])"),
    # owner/name: not a path (no ./ ~/ / before, no further segment, no file extension), not a URL
    "slug": re.compile(r"(?<![\w./~:@-])([A-Za-z][\w-]*)/([A-Za-z0-9][\w-]*)(?![\w/-]|\.\w)"),
    "channel": re.compile(r"(?<![\w&])#([^\W\d_][\w-]*)"),
    "mention": re.compile(r"(?<![\w.])@[A-Za-z][\w.-]*"),
}
WEIGHT = {"identifier": 2.0, "channel": 2.0, "slug": 1.0, "mention": 1.0}
_QUOTED = re.compile(r"'([^']{2,120})'|\"([^\"]{2,120})\"")


def shapes_of(description: str) -> Set[str]:
    """The shapes a tool description shows by example."""
    out: Set[str] = set()
    for m in _QUOTED.finditer(description or ""):
        for token in (m.group(1) or m.group(2) or "").split():
            for kind, rx in _EXAMPLE.items():
                if rx.match(token):
                    out.add(kind)
    return out


def shapes_in(text: str, kinds: Iterable[str], not_identifiers: FrozenSet[str] = frozenset()) -> Dict[str, str]:
    """Shapes found in a request (original case: "ENG-12" is an identifier, "eng-12" is not),
    each with the text that showed it."""
    out: Dict[str, str] = {}
    for kind in kinds:
        for m in _REQUEST[kind].finditer(text):
            if kind == "identifier" and m.group(1).lower() in not_identifiers:
                continue
            if kind == "slug" and all(len(p) <= 3 and p.isalpha() for p in m.groups()):
                continue  # and/or, I/O, TCP/IP, yes/no
            out[kind] = m.group(0)
            break
    return out
