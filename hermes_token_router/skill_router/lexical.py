"""BM25 over a skill's name, tags, description and "When to use" lines.

Why a lexical signal next to the embedding: a request that names the tool ("himalaya",
"docker compose", "小红书") is matched exactly by words, while the embedding blurs rare
names into their neighbourhood. Chinese has no spaces, so CJK runs become overlapping
character bigrams. Pure Python: ~200 skills score in well under a millisecond.

Most skill libraries are written in English while many requests are not, and bigrams never
meet English words. ``policy/glossary.yaml`` maps everyday Chinese task words (both scripts)
to English ones; a Chinese run adds the English words of every glossary entry it contains, on
the request and the skill side alike, so "机票比价" meets "flight fare comparison". The
glossary is general vocabulary, written without sight of any skill set or query set.
"""

from __future__ import annotations

import logging
import math
import re
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import yaml

from ..paths import shipped
from .scan import SkillEntry

log = logging.getLogger("hermes_token_router")
GLOSSARY_FILE = "glossary.yaml"
_LONGEST = 6  # the longest glossary key, in characters

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[a-z0-9][a-z0-9+#.]*[a-z0-9+#]|[a-z0-9]")
# Function words carry no routing signal; kept short on purpose (domain words stay).
_STOP = frozenset("""a an the and or but if of to in on at by for with from into onto about as is are was were be been
being am do does did doing have has had can could should would will shall may might must i me my mine we us our you your
he she it its they them their this that these those there here what which who whom whose when where why how please
just some any all no not so than then too very also up out over again get got let make made want need like help
thing things something anything can't don't i'm it's""".split())

# Chinese function bigrams (request framing, pronouns, question words): in a language
# without spaces they are the "the/how/please" of a query and match every skill's text.
_STOP_ZH = frozenset("""帮我 我们 你们 他们 一下 怎么 什么 可以 我的 这个 那个 一个 有没 没有 是不 不是 如何 需要
想要 能不 不能 现在 然后 还是 或者 因为 所以 但是 如果 这些 那些 一些 比较 怎样 为什 么办 怎么 请问 给我 帮忙
一些 里面 这样 那样 的话 就是 还有 以及 已经 应该 是否 哪些 哪个 多少 时候 的时 候的""".split())


def _stem(word: str) -> str:
    """Plurals only ('emails'/'invoices' meet 'email'/'invoice'); verb suffixes are left
    alone because stripping them splits 'schedule' from 'scheduled' without a dictionary."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=4)
def glossary(path: Optional[Path] = None) -> Dict[str, Tuple[str, ...]]:
    """Chinese key -> the stemmed English words it adds ({} without a readable file, with one
    warning: the lexical signal then reads Chinese as bigrams only)."""
    path = path or shipped("policy") / GLOSSARY_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        raw = data.get("zh") or {}
        out = {}
        for key, english in raw.items():
            key = unicodedata.normalize("NFKC", str(key)).casefold()
            words = tuple(_stem(w) for w in _WORD.findall(str(english).casefold()) if w not in _STOP)
            if 1 < len(key) <= _LONGEST and words:
                out[key] = words
        return out
    except (OSError, yaml.YAMLError, AttributeError) as exc:
        log.warning("skill router: glossary %s not read (%s); Chinese is matched by bigrams only", path, exc)
        return {}


def _translated(run: str, table: Dict[str, Tuple[str, ...]]) -> List[str]:
    """The English words of every glossary key inside one CJK run (each key once)."""
    seen = set()
    out: List[str] = []
    for i in range(len(run) - 1):
        for k in range(2, min(_LONGEST, len(run) - i) + 1):
            key = run[i:i + k]
            if key in table and key not in seen:
                seen.add(key)
                out.extend(table[key])
    return out


def tokens(text: str) -> List[str]:
    """Stemmed Latin words (no stop words) plus CJK character bigrams (single chars alone),
    plus the English words the glossary gives each CJK run."""
    text = unicodedata.normalize("NFKC", text or "").casefold()
    out: List[str] = []
    table = glossary()
    for run in _CJK_RUN.findall(text):
        grams = [run[i:i + 2] for i in range(len(run) - 1)] if len(run) > 1 else [run]
        out.extend(g for g in grams if g not in _STOP_ZH)
        if table:
            out.extend(_translated(run, table))
    latin = _CJK_RUN.sub(" ", text).replace("-", " ").replace("_", " ")
    out.extend(_stem(w) for w in _WORD.findall(latin) if w not in _STOP)
    return out


def fields(entry: SkillEntry) -> List[str]:
    """The text BM25 sees for one skill; the name counts twice (it is what users type)."""
    name = entry.name.replace("-", " ").replace("_", " ")
    return [name, name, " ".join(entry.tags), entry.description, *entry.triggers,
            entry.category.replace("/", " ")]


class Bm25:
    """Okapi BM25 (k1=1.2, b=0.75) over one document per skill, in index order."""

    def __init__(self, docs: Iterable[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf: List[Counter] = [Counter(tokens(" ".join(d))) for d in docs]
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = (sum(self.len) / len(self.len)) if self.len else 1.0
        df: Counter = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(self.tf)
        self.idf: Dict[str, float] = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.postings: Dict[str, List[int]] = {}
        for i, c in enumerate(self.tf):
            for t in c:
                self.postings.setdefault(t, []).append(i)

    @classmethod
    def for_entries(cls, entries: Iterable[SkillEntry]) -> "Bm25":
        return cls(fields(e) for e in entries)

    def scores(self, query: str) -> List[float]:
        out = [0.0] * len(self.tf)
        for t in set(tokens(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.postings[t]:
                f = self.tf[i][t]
                out[i] += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg))
        return out


def saturate(score: float, half: float) -> float:
    """Map a BM25 score to [0, 1): ``half`` scores 0.5. Absolute, so it can gate confidence."""
    return score / (score + half) if score > 0 else 0.0
