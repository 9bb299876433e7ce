"""Reject regular expressions that can backtrack catastrophically, before they run.

Why at load: Hermes 0.19.0 runs plugin hooks synchronously with no timeout, and Python's
``re`` cannot be interrupted, so ``(a+)+$`` in a rule file held every turn whose message
it met (28 characters took 18 s, 36 never finished). The check walks the parsed pattern
and refuses the two constructs behind such blow-ups, both under a quantifier that may
repeat many times (``*``, ``+``, ``{n,}``, ``{0,9}`` and up):

* **nested quantifiers** that can trade characters: a variable repeat that can end the
  repeated body and eat a character the body can start with (``(a+)+``, ``(\\w*\\s?)*``,
  ``(x+x+)+``). ``(\\w+\\s+)*`` is fine: the loop restarts on ``\\w``, which ``\\s+`` never eats;
* **overlapping alternation**: branches that can match the same character
  (``(\\w|_)+``, ``(a|a)*``) or where one whole branch is a prefix of another
  (``(a|aa)*``).

Character classes are compared on a probe alphabet (ASCII plus a few non-ASCII letters,
digits and spaces), so the check is an approximation that errs towards refusing.
"""

from __future__ import annotations

from typing import Any, FrozenSet, List, Optional, Tuple

try:  # Python 3.11+
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

MANY = 8  # an outer repeat allowing more iterations than this counts as "many"
_ALPHABET: FrozenSet[str] = frozenset([chr(i) for i in range(128)] + list("éßжΩ中文。，\u3000\u00a0٣"))
_REPEATS = tuple(op for op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)) if op)
_POSSESSIVE = getattr(C, "POSSESSIVE_REPEAT", None)
_ATOMIC = getattr(C, "ATOMIC_GROUP", None)
_CATEGORY = {
    C.CATEGORY_DIGIT: str.isdigit, C.CATEGORY_SPACE: str.isspace,
    C.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
}
_NOT = {C.CATEGORY_NOT_DIGIT: C.CATEGORY_DIGIT, C.CATEGORY_NOT_SPACE: C.CATEGORY_SPACE,
        C.CATEGORY_NOT_WORD: C.CATEGORY_WORD}


def danger(pattern: str) -> Optional[str]:
    """What makes ``pattern`` dangerous, in a few words, or None."""
    try:
        parsed = P.parse(pattern)
    except Exception:
        return None  # the caller's compile step reports syntax errors
    return _walk(list(parsed))


# -- character sets ---------------------------------------------------------------------
def _charset(op: Any, av: Any) -> FrozenSet[str]:
    """Characters (of the probe alphabet) one single-character item can match."""
    if op == C.LITERAL:
        return frozenset({chr(av)})
    if op == C.NOT_LITERAL:
        return _ALPHABET - {chr(av)}
    if op == C.ANY:
        return _ALPHABET
    if op == C.IN:
        out, negate = set(), False
        for iop, iav in av:
            if iop == C.NEGATE:
                negate = True
            elif iop == C.LITERAL:
                out.add(chr(iav))
            elif iop == C.RANGE:
                out |= {c for c in _ALPHABET if iav[0] <= ord(c) <= iav[1]}
            elif iop == C.CATEGORY:
                base = _NOT.get(iav, iav)
                test = _CATEGORY.get(base, lambda c: True)
                out |= {c for c in _ALPHABET if bool(test(c)) != (iav in _NOT)}
            else:
                out |= _ALPHABET
        return frozenset(_ALPHABET - out if negate else out)
    return _ALPHABET


def _consumes(items: List[Tuple[Any, Any]]) -> FrozenSet[str]:
    """Every character a sequence can consume anywhere."""
    out: set = set()
    for op, av in items:
        if op in _REPEATS:
            out |= _consumes(list(av[2]))
        elif op == C.SUBPATTERN:
            out |= _consumes(list(av[-1]))
        elif op == C.BRANCH:
            for alt in av[1]:
                out |= _consumes(list(alt))
        elif op == _ATOMIC:
            out |= _consumes(list(av))
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT, C.GROUPREF):
            continue
        else:
            out |= _charset(op, av)
    return frozenset(out)


def _nullable(items: List[Tuple[Any, Any]]) -> bool:
    for op, av in items:
        if op in _REPEATS:
            if av[0] > 0 and not _nullable(list(av[2])):
                return False
        elif op == C.SUBPATTERN:
            if not _nullable(list(av[-1])):
                return False
        elif op == C.BRANCH:
            if not any(_nullable(list(alt)) for alt in av[1]):
                return False
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        else:
            return False
    return True


def _first(items: List[Tuple[Any, Any]]) -> FrozenSet[str]:
    """Characters a sequence can start with."""
    out: set = set()
    for op, av in items:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        if op in _REPEATS:
            out |= _first(list(av[2]))
            if av[0] > 0 and not _nullable(list(av[2])):
                return frozenset(out)
            continue
        if op == C.SUBPATTERN:
            out |= _first(list(av[-1]))
            if not _nullable(list(av[-1])):
                return frozenset(out)
            continue
        if op == C.BRANCH:
            for alt in av[1]:
                out |= _first(list(alt))
            if not any(_nullable(list(alt)) for alt in av[1]):
                return frozenset(out)
            continue
        out |= _charset(op, av)
        return frozenset(out)
    return frozenset(out)


# -- the two constructs -----------------------------------------------------------------
def _tail_repeats(items: List[Tuple[Any, Any]]):
    """Bodies of the variable-length pieces that can end a match of ``items`` (only
    nullable items after them)."""
    for i in range(len(items) - 1, -1, -1):
        op, av = items[i]
        if op in _REPEATS and av[0] != av[1] and op != _POSSESSIVE:
            yield list(av[2])
        elif op == C.BRANCH and len({_nullable(list(alt)) for alt in av[1]}) > 1:
            yield [it for alt in av[1] for it in alt]  # (a|aa) parses as a(?:|a): optional tail
        if op in _REPEATS:
            yield from _tail_repeats(list(av[2]))
        elif op == C.SUBPATTERN:
            yield from _tail_repeats(list(av[-1]))
        elif op == C.BRANCH:
            for alt in av[1]:
                yield from _tail_repeats(list(alt))
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        if not _nullable([items[i]]):
            return


def _literal(items: List[Tuple[Any, Any]]) -> Optional[str]:
    if all(op == C.LITERAL for op, _ in items):
        return "".join(chr(av) for _, av in items)
    return None


def _overlap(alts: List[List[Tuple[Any, Any]]], whole_body: bool) -> bool:
    for i, a in enumerate(alts):
        for b in alts[i + 1:]:
            la, lb = _literal(a), _literal(b)
            if la is not None and lb is not None:
                if la == lb or (whole_body and (la.startswith(lb) or lb.startswith(la))):
                    return True
                continue
            if len(a) == 1 and len(b) == 1 and _charset(*a[0]) & _charset(*b[0]):
                return True
    return False


def _repeated_body(body: List[Tuple[Any, Any]]) -> Optional[str]:
    start = _first(body)
    for inner in _tail_repeats(body):
        if _consumes(inner) & start:
            return "nested quantifiers: a repeat inside a repeated group can trade characters with it"
    lead = [it for it in body if it[0] != C.AT]
    if lead and lead[0][0] == C.SUBPATTERN:
        lead = [it for it in list(lead[0][1][-1]) if it[0] != C.AT] + lead[1:]
    if lead and lead[0][0] == C.BRANCH and _overlap([list(a) for a in lead[0][1][1]], whole_body=len(lead) == 1):
        return "an alternation under a repeat whose branches can match the same text"
    return None


def _walk(items: List[Tuple[Any, Any]]) -> Optional[str]:
    for op, av in items:
        children: List[List[Tuple[Any, Any]]] = []
        if op in _REPEATS:
            lo, hi, sub = av
            if op != _POSSESSIVE and (hi == C.MAXREPEAT or hi > MANY):
                found = _repeated_body(list(sub))
                if found:
                    return found
            children = [list(sub)]
        elif op == C.SUBPATTERN:
            children = [list(av[-1])]
        elif op == C.BRANCH:
            children = [list(alt) for alt in av[1]]
        elif op in (C.ASSERT, C.ASSERT_NOT):
            children = [list(av[1])]
        for child in children:
            found = _walk(child)
            if found:
                return found
    return None
