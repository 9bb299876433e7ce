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
_RARE_MARKS = frozenset("/~@#$%^&*=<>|\\`[]{}")  # one of these is rare enough to filter on


def _useful(lits: FrozenSet[str]) -> bool:
    """Every literal long enough to filter; one CJK character or path-like mark already is
    (they are rare in prose)."""
    return bool(lits) and all(len(s) >= MIN_LITERAL or (s and (ord(s[0]) > 0x2e7f or s in _RARE_MARKS))
                              for s in lits)


def _chars(av) -> Optional[FrozenSet[str]]:
    """The characters a class of plain literals allows (the parser turns ``画|畫`` into
    ``[画畫]``), or None for ranges, categories and negated classes."""
    if not av or any(op is not C.LITERAL for op, _ in av):
        return None
    return frozenset(chr(v) for _, v in av)


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


def _item(items, i) -> Tuple[Optional[FrozenSet[str]], int]:
    """Literals one of which item ``i`` of a parsed sequence requires (a run of literals is
    one item), or None, and the index of the next item."""
    op, av = items[i]
    if op is C.LITERAL:
        j = i
        while j < len(items) and items[j][0] is C.LITERAL:
            j += 1
        found = frozenset(["".join(chr(av) for _, av in items[i:j])])
        # The parser factors a shared prefix out of an alternation ("gh|github" becomes
        # "g(?:h|ithub)"): glue it back onto each alternative's leading text.
        if j < len(items) and items[j][0] is C.BRANCH and not _useful(found):
            leads = [_lead(alt) for alt in items[j][1][1]]
            if all(leads):
                found = frozenset(found_one + lead for found_one in found for lead in leads)
        return found, j
    if op is C.SUBPATTERN:
        return _required(av[-1]), i + 1
    if op is C.BRANCH:
        alts = [_required(alt) for alt in av[1]]
        return (None if any(a is None for a in alts) else frozenset().union(*alts)), i + 1
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
        return _required(av[2]), i + 1
    if op is C.ASSERT:  # a positive lookaround's text occurs in the message too
        return _required(av[1]), i + 1
    if op is C.IN:
        return _chars(av), i + 1
    # zero-width, optional and character-class items contribute nothing
    return None, i + 1


def _required(seq) -> Optional[FrozenSet[str]]:
    """A set of literals one of which every match of ``seq`` contains, or None."""
    best: Optional[FrozenSet[str]] = None
    items = list(seq)
    i = 0
    while i < len(items):
        found, i = _item(items, i)
        if found is not None and _useful(found):
            if best is None or _rank(found) > _rank(best):
                best = found
    return best


def _groups(seq) -> List[FrozenSet[str]]:
    """Every literal set the items of ``seq`` require, one per item (nested groups, repeats
    of at least one and positive lookarounds are flattened). Each is required on its own,
    so a match needs a member of every one: for two words joined by ``.{0,40}`` a message
    holding only the first skips the pattern (most searches that ran found nothing)."""
    out: List[FrozenSet[str]] = []
    items = list(seq)
    i = 0
    while i < len(items):
        op, av = items[i]
        if op is C.SUBPATTERN:
            out.extend(_groups(av[-1]))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            out.extend(_groups(av[2]))
        elif op is C.ASSERT:
            out.extend(_groups(av[1]))
        else:
            found, i = _item(items, i)
            if found is not None and _useful(found):
                out.append(found)
            continue
        i += 1
    return out


def _leading(seq) -> Optional[FrozenSet[str]]:
    """Literals one of which every match of ``seq`` starts with (after zero-width items),
    or None."""
    items = list(seq)
    i = 0
    while i < len(items) and items[i][0] in (C.AT, C.ASSERT, C.ASSERT_NOT):
        i += 1
    if i == len(items):
        return None
    op, av = items[i]
    if op is C.LITERAL:
        return _item(items, i)[0]
    if op is C.SUBPATTERN:
        return _leading(av[-1])
    if op is C.BRANCH:
        alts = [_leading(alt) for alt in av[1]]
        return None if any(a is None for a in alts) else frozenset().union(*alts)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
        return _leading(av[2])
    if op is C.IN:
        return _chars(av)
    return None


def _rank(lits: FrozenSet[str]) -> tuple:
    """Prefer literals of three or more characters (selective), then fewer of them (each
    is one substring scan), then longer ones."""
    shortest = min(len(s) for s in lits)
    return (shortest >= 3, -len(lits), shortest)


def _prune(lits) -> FrozenSet[str]:
    """A literal containing a shorter one is redundant: the shorter test already passes."""
    kept: List[str] = []
    for s in sorted(lits, key=len):
        if not any(k in s for k in kept):
            kept.append(s)
    return frozenset(kept)


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
    return _prune(out)


def requirements(pattern: str) -> Optional[Tuple[FrozenSet[str], ...]]:
    """Literal sets every match of ``pattern`` needs a member of each of (most selective
    first), or None when it has none (then the pattern always runs)."""
    try:
        groups = {_prune(g) for g in _groups(P.parse(pattern))}
    except Exception:
        return None
    return tuple(sorted(groups, key=lambda g: (_rank(g), sorted(g)), reverse=True)) or None


def starts(pattern: str) -> Optional[FrozenSet[str]]:
    """The literals a match of ``pattern`` must start with, when each is long enough to be
    rare (see ``Filtered.search``), else None."""
    try:
        lead = _leading(P.parse(pattern))
    except Exception:
        return None
    return lead if lead is not None and _useful(lead) else None


class Filtered:
    """Patterns compiled one by one, each behind its own literal tests (all must pass).
    ``search`` returns the first pattern's match (in list order): which pattern wins only
    changes the word a decision quotes, never whether the intent fires.

    A pattern whose every match starts with one of a few literals (``\\b(?:zip|tar)\\b...``)
    is tried only where they occur: ``rx.match`` at each occurrence, in order, is the
    leftmost match ``rx.search`` finds (lookbehinds and ``\\b`` still see the text before
    the position; ``^`` never matches past 0 for either), without the engine walking every
    position of a long message (it gets no literal prefix from a leading ``\\b``)."""

    __slots__ = ("parts",)

    def __init__(self, patterns: Sequence[str]):
        self.parts: Tuple[Tuple[re.Pattern, Optional[Tuple[FrozenSet[str], ...]],
                                Optional[Tuple[str, ...]]], ...] = tuple(
            (re.compile(p), requirements(p), _sorted(starts(p))) for p in patterns)

    @property
    def literals(self) -> Set[str]:
        """Every literal ``search`` tests ``present`` for: the requirements and the starts."""
        out = {s for _, groups, _ in self.parts if groups is not None for g in groups for s in g}
        out.update(s for _, _, lead in self.parts if lead is not None for s in lead)
        return out

    def search(self, text: str, present: Optional[Set[str]] = None) -> Optional[re.Match]:
        """``present``: the literals a ``LiteralScanner`` found in ``text`` (or in a text
        containing it); without it each literal is looked up in ``text``."""
        for rx, groups, lead in self.parts:
            if groups is not None:
                if present is not None:
                    for g in groups:
                        if g.isdisjoint(present):
                            break
                    else:
                        groups = None
                    if groups is not None:
                        continue
                elif not all(any(s in text for s in g) for g in groups):
                    continue
            if lead is None:
                m = rx.search(text)
            else:
                if present is not None:  # a start the scanner did not see cannot begin a match
                    lead = tuple(s for s in lead if s in present)
                    if not lead:
                        continue
                m = _match_at_starts(rx, text, lead)
            if m is not None:
                return m
        return None


def _sorted(lits: Optional[FrozenSet[str]]) -> Optional[Tuple[str, ...]]:
    return tuple(sorted(lits)) if lits is not None else None


def _match_at_starts(rx: re.Pattern, text: str, lead: Tuple[str, ...]) -> Optional[re.Match]:
    """``rx.search(text)`` for a pattern whose matches all start with one of ``lead``."""
    at: Set[int] = set()
    find = text.find
    for s in lead:
        i = find(s)
        while i >= 0:
            at.add(i)
            i = find(s, i + 1)
    for i in sorted(at):
        m = rx.match(text, i)
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
    message once per literal.

    Two tries, one for literals that start with an ASCII character and one for the rest
    (mostly single Han characters, hundreds of them): the regex engine tries a branch's
    alternatives one by one, so one root of 300+ first characters cost every position of
    an English message hundreds of failed checks. Each trie is gated by a character class
    of its first characters (one bitmap test), and the second runs only on non-ASCII text."""

    def __init__(self, literals: Iterable[str]):
        lits = sorted(set(literals))
        self._ascii = _scanner([s for s in lits if s[0].isascii()])
        self._other = _scanner([s for s in lits if not s[0].isascii()])
        known = set(lits)
        # a literal found at a position implies its shorter literal prefixes there too
        self._prefixes = {s: pre for s in lits
                          if (pre := tuple(s[:k] for k in range(1, len(s)) if s[:k] in known))}

    def present(self, text: str) -> Set[str]:
        # ``findall`` returns the longest literal at each position in one C call: no match
        # objects, and the Python work is per distinct literal, not per position.
        found = set(self._ascii.findall(text)) if self._ascii is not None else set()
        if self._other is not None and not text.isascii():
            found.update(self._other.findall(text))
        pre = self._prefixes
        for s in [s for s in found if s in pre]:
            found.update(pre[s])
        return found


def _scanner(lits: Sequence[str]) -> Optional[re.Pattern]:
    if not lits:
        return None
    first = "".join(re.escape(c) for c in sorted({s[0] for s in lits}))
    return re.compile(f"(?=[{first}])(?=({_trie_pattern(lits)}))")


class Gate:
    """Which of many ``Filtered`` sets can match a message, from the scanner's literals, so
    a rule set skips most of its intents without a call each. Every pattern needs a member
    of its first literal set; a set is a candidate when one of its patterns' first sets
    occurs (or it has a pattern with no literal test)."""

    def __init__(self, sets: Sequence[Sequence[Optional[Filtered]]]):
        index: dict = {}
        always: Set[int] = set()
        for k, filters in enumerate(sets):
            for f in filters:
                for _, groups, _ in (f.parts if f is not None else ()):
                    if groups is None:
                        always.add(k)
                    else:
                        for s in groups[0]:
                            index.setdefault(s, set()).add(k)
        self._index = {s: frozenset(ks) for s, ks in index.items()}
        self._always = frozenset(always)

    def candidates(self, present: Set[str]) -> Set[int]:
        """``present``: the scanner's literals of the text (or of a text containing it)."""
        out = set(self._always)
        index = self._index
        for s in present:
            ks = index.get(s)
            if ks is not None:
                out |= ks
        return out
