"""Literal prefilters for rule patterns: skip a regular expression that cannot match.

Why: a pattern that opens with ``\\b`` or a lookbehind gets no help from the regex engine's
literal-prefix scan, so each of some forty intents walks every position of the message. On
long, real-sounding first messages that cost over a millisecond per request, against a
0.3 ms budget. Every pattern has some part every match must contain (a word of its first
alternation, say); a substring test for those literals is a C-speed scan, and when none of
them occurs the pattern is skipped. The test is a superset by construction: it only ever
skips patterns that could not have matched.
"""

from __future__ import annotations

import re
from typing import FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

try:  # Python 3.11+
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

MIN_LITERAL = 2   # one Latin character occurs in nearly every message: no filter at all


def _useful(lits: FrozenSet[str]) -> bool:
    """Every literal long enough to filter; one CJK character already is (it is rare)."""
    return bool(lits) and all(len(s) >= MIN_LITERAL or (s and ord(s[0]) > 0x2e7f) for s in lits)


def _lead(seq) -> str:
    """The literal text a sequence starts with (after zero-width items), possibly empty."""
    out = []
    for op, av in seq:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT) and not out:
            continue
        if op is not C.LITERAL:
            break
        out.append(chr(av))
    return "".join(out)


def _required(seq) -> Optional[FrozenSet[str]]:
    """A set of literals one of which every match of ``seq`` contains, or None."""
    best: Optional[FrozenSet[str]] = None
    items = list(seq)
    i = 0
    while i < len(items):
        op, av = items[i]
        found: Optional[FrozenSet[str]] = None
        if op is C.LITERAL:
            chars = []
            while i < len(items) and items[i][0] is C.LITERAL:
                chars.append(chr(items[i][1]))
                i += 1
            found = frozenset(["".join(chars)])
            # The parser factors a shared prefix out of an alternation ("gh|github" becomes
            # "g(?:h|ithub)"): glue it back onto each alternative's leading text.
            if i < len(items) and items[i][0] is C.BRANCH and not _useful(found):
                leads = [_lead(alt) for alt in items[i][1][1]]
                if all(leads):
                    found = frozenset(found_one + lead for found_one in found for lead in leads)
            i -= 1
        elif op is C.SUBPATTERN:
            found = _required(av[-1])
        elif op is C.BRANCH:
            alts = [_required(alt) for alt in av[1]]
            found = None if any(a is None for a in alts) else frozenset().union(*alts)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            found = _required(av[2])
        elif op is C.ASSERT:  # a positive lookaround's text occurs in the message too
            found = _required(av[1])
        # zero-width, optional and character-class items contribute nothing; keep looking
        if found is not None and _useful(found):
            if best is None or _rank(found) > _rank(best):
                best = found
        i += 1
    return best


def _rank(lits: FrozenSet[str]) -> tuple:
    """Prefer literals of three or more characters (selective), then fewer of them (each
    is one substring scan), then longer ones."""
    shortest = min(len(s) for s in lits)
    return (shortest >= 3, -len(lits), shortest)


def literals(patterns: List[str]) -> Optional[FrozenSet[str]]:
    """Literals one of which any match of any pattern contains; None when some pattern has
    no such part (then the patterns always run)."""
    out: set = set()
    for p in patterns:
        try:
            lits = _required(P.parse(p))
        except Exception:
            return None
        if lits is None:
            return None
        out |= lits
    # A literal containing a shorter one is redundant: the shorter test already passes.
    ordered = sorted(out, key=len)
    kept: List[str] = []
    for s in ordered:
        if not any(k in s for k in kept):
            kept.append(s)
    return frozenset(kept)


class Filtered:
    """Patterns compiled one by one, each behind its own literal test. ``search`` returns
    the first pattern's match (in list order): which pattern wins only changes the word a
    decision quotes, never whether the intent fires."""

    __slots__ = ("parts",)

    def __init__(self, patterns: Sequence[str]):
        self.parts: Tuple[Tuple[re.Pattern, Optional[FrozenSet[str]]], ...] = tuple(
            (re.compile(p), literals([p])) for p in patterns)

    @property
    def literals(self) -> Set[str]:
        return {s for _, lits in self.parts if lits is not None for s in lits}

    def search(self, text: str, present: Optional[Set[str]] = None) -> Optional[re.Match]:
        """``present``: the literals a ``LiteralScanner`` found in ``text`` (or in a text
        containing it); without it each literal is looked up in ``text``."""
        for rx, lits in self.parts:
            if lits is not None:
                if present is not None:
                    if lits.isdisjoint(present):
                        continue
                else:
                    for s in lits:
                        if s in text:
                            break
                    else:
                        continue
            m = rx.search(text)
            if m is not None:
                return m
        return None


def _trie_pattern(words: Sequence[str]) -> str:
    """An alternation shaped like a trie, longest match first: at each position the regex
    engine walks one branch per character instead of trying every literal."""
    root: dict = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        end = "" in node
        kids = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not kids:
            return ""
        body = kids[0] if len(kids) == 1 else "(?:" + "|".join(kids) + ")"
        return f"(?:{body})?" if end else body

    return emit(root)


class LiteralScanner:
    """Finds, in one pass, which of many literals occur in a message; patterns then test
    their own literals against that set (a C-level set operation) instead of scanning the
    message once per literal."""

    def __init__(self, literals: Iterable[str]):
        lits = sorted(set(literals))
        self._rx = re.compile("(?=(" + _trie_pattern(lits) + "))") if lits else None
        known = set(lits)
        # a literal found at a position implies its shorter literal prefixes there too
        self._prefixes = {s: tuple(s[:k] for k in range(1, len(s)) if s[:k] in known) for s in lits}

    def present(self, text: str) -> Set[str]:
        found: Set[str] = set()
        if self._rx is None:
            return found
        pre = self._prefixes
        for m in self._rx.finditer(text):
            s = m.group(1)
            if s and s not in found:
                found.add(s)
                found.update(pre[s])
        return found
