"""Deterministic nickname routing: user-chosen phrases mapped to skills.

Why first and why so strict: a phrase like "the game server" is the user's own name for a
thing, so a hit is near-certain and costs microseconds; requiring an article or possessive
(enforced in the config) keeps a passing mention of "server" from loading anything.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Dict, List, Sequence, Tuple, Union

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_NON_WORD = re.compile(r"[^\w\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af']+")


def normalise(text: str) -> str:
    """NFKC, case-folded, punctuation to spaces, single-spaced, padded with spaces."""
    text = unicodedata.normalize("NFKC", text or "").casefold().replace("\u2019", "'")
    return " " + " ".join(_NON_WORD.sub(" ", text).split()) + " "


class NicknameMap:
    def __init__(self, nicknames: Dict[str, Union[str, List[str]]]) -> None:
        compiled: List[Tuple[str, Tuple[str, ...]]] = []
        for phrase, target in nicknames.items():
            names = (target,) if isinstance(target, str) else tuple(target)
            norm = normalise(phrase).strip()
            if not norm:
                continue
            # Latin phrases must start on a word boundary ("bathe email" is not "the email");
            # CJK text has no spaces, so it matches anywhere.
            key = norm if _CJK.match(norm) else " " + norm
            compiled.append((key, tuple(str(n).strip() for n in names)))
        # Longest phrases first so "my work notes" wins the report order over "my notes".
        self._phrases = sorted(compiled, key=lambda p: -len(p[0]))

    def __bool__(self) -> bool:
        return bool(self._phrases)

    def match(self, text: str) -> List[Tuple[str, str]]:
        """(phrase, skill name) for every hit, skills de-duplicated, in message order."""
        if not self._phrases:
            return []
        norm = normalise(text)
        hits: List[Tuple[int, str, str]] = []
        for key, names in self._phrases:
            pos = norm.find(key)
            if pos >= 0:
                hits.extend((pos, key.strip(), n) for n in names)
        seen, out = set(), []
        for _, phrase, name in sorted(hits, key=lambda h: h[0]):
            if name not in seen:
                seen.add(name)
                out.append((phrase, name))
        return out


def phrases(nicknames: Dict[str, Union[str, Sequence[str]]]) -> List[str]:
    return sorted(nicknames)
