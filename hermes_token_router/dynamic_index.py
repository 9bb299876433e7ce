"""The dynamic-toolset index: which MCP servers and plugin toolsets a request asks for.

Why a per-session index: the static rules only know Hermes's built-in toolsets, but the
users who pay most for schemas run integrations the rules have never seen (``mcp-github``,
``mcp-notion`` ...). What an integration offers is in its own tool names and descriptions,
so the index is built from exactly those, at bind time, for the surface the session has.
It is lexical and cheap: a request is folded as the rules fold it (``normalize.fold``, so a
zero-width character or a Cyrillic letter cannot hide "github"), split into words (Chinese
into character bigrams, matched through a small vocabulary in ``policy/dynamic.yaml``) and
looked up in a table of

* **names**: the server or toolset name ("github"). An ordinary word ("slack", "linear",
  "notion") counts fully only when the request treats it as the integration: a lead-in
  ("post it to slack"), one of that integration's words nearby, Chinese around it, or a
  capital letter mid-sentence; otherwise it is weak;
* **terms**: the nouns of its tool names: a compound as a phrase ("pull request"), a noun
  a tool works on by itself as a word ("issue", "page", "channel"), without verbs, generic
  words or the words of the built-in tool names;
* **description words** at half weight.

Each match is ``strong`` (the integration is clearly asked for: its name, a multi-word term
or two of its words) or ``weak`` (one word). Policy on what to do with them lives in
``dynamic_route``. Never imports Hermes; built indexes are cached per surface fingerprint.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import yaml

from .dynamic_shapes import WEIGHT, shapes_in, shapes_of
from .normalize import CJK as _CJK, CJK_RUN, fold

NAME, PHRASE, TERM, DESC = 2.0, 2.0, 1.0, 0.5
STRONG, WEAK = 2.0, 1.0
SHAPE = "shape:"
MAX_CHARS = 4000
NEAR = 3  # words between an integration's name and one of its terms that still corroborate it
_CACHE_MAX = 32

_WORD = re.compile(r"#[a-z][\w-]*|[a-z][a-z0-9]*|" + CJK_RUN.pattern)
# Simplified -> Traditional for the characters of the vocabulary's Chinese keys.
_TRADITIONAL = str.maketrans("仓冲单历发团审并库应录据数档笔线记论评识话请议问队页项频题码给条态务组环导",
                             "倉衝單歷發團審併庫應錄據數檔筆線記論評識話請議問隊頁項頻題碼給條態務組環導")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class DynamicToolset:
    """What the host offers under one non-static toolset: its name, the label users call it
    by (an MCP server's name), and each tool's short name and description."""

    name: str
    label: str
    tools: Tuple[Tuple[str, str], ...]  # (short tool name, description)


@dataclass(frozen=True)
class Vocabulary:
    synonyms: Mapping[str, Tuple[str, ...]]
    zh: Mapping[str, Tuple[str, ...]]
    generic: FrozenSet[str]
    lead_in: FrozenSet[str]
    verbs: FrozenSet[str]
    not_identifiers: FrozenSet[str] = frozenset()

    @classmethod
    def load(cls, path: Path) -> "Vocabulary":
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            data = {}

        def table(key: str) -> Dict[str, Tuple[str, ...]]:
            raw = data.get(key) or {}
            return {fold(str(k)): tuple(fold(str(v)) for v in (vals or ())) for k, vals in raw.items()}

        def with_traditional(zh: Dict[str, Tuple[str, ...]]) -> Dict[str, Tuple[str, ...]]:
            # Keys are written in Simplified; each also matches in Traditional characters
            # ("工單", "頻道", "團隊"). Regional words (專案, 資料庫) are keys of their own.
            out = dict(zh)
            for k, v in zh.items():
                out.setdefault(k.translate(_TRADITIONAL), v)
            return out

        def words(key: str) -> FrozenSet[str]:
            return frozenset(stem(fold(str(w))) for w in (data.get(key) or ()))

        return cls(table("synonyms"), with_traditional(table("zh")), words("generic"), frozenset(
            fold(str(w)) for w in (data.get("lead_in") or ())), words("verbs"),
            frozenset(fold(str(w)) for w in (data.get("not_identifiers") or ())))


@dataclass(frozen=True)
class Match:
    toolset: str
    score: float
    strong: bool
    evidence: Tuple[str, ...]


def stem(word: str) -> str:
    """Plural folding good enough for tool nouns: issues/issue, branches/branch, repositories."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def bigrams(run: str) -> Set[str]:
    return {run[i:i + 2] for i in range(len(run) - 1)} if len(run) > 1 else {run}


def split_identifier(name: str) -> List[str]:
    """``list_pull_requests`` / ``listPullRequests`` / ``mcp-github`` -> lower-case words."""
    spaced = _CAMEL.sub(" ", name)
    return [stem(w) for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


class DynamicIndex:
    """Built once per surface; ``match`` is read-only and thread-safe."""

    def __init__(self, toolsets: Sequence[DynamicToolset], vocab: Vocabulary, builtin_words: Iterable[str] = ()):
        self.toolsets = tuple(ts.name for ts in toolsets)
        self._vocab = vocab
        ignore = set(vocab.generic) | {stem(w) for w in builtin_words} | set(vocab.verbs)
        self._names: Dict[str, Set[str]] = {}
        self._terms: Dict[str, Dict[str, float]] = {}
        self._phrases: Dict[Tuple[str, str], Set[str]] = {}
        self._cjk: Dict[str, Dict[str, float]] = {}
        self._own: Dict[str, Set[str]] = {}
        self._shapes: Dict[str, Set[str]] = {}  # shape kind -> toolsets whose descriptions show it
        for ts in toolsets:
            for word in split_identifier(ts.label or ts.name):
                if word not in ("mcp", "plugin", "server") and word not in ignore and len(word) > 1:
                    self._names.setdefault(word, set()).add(ts.name)
        ignore |= set(self._names)  # a name is evidence as a name, never as a description word
        for ts in toolsets:
            own = self._own.setdefault(ts.name, set())
            for tool, description in ts.tools:
                nouns = [w for w in split_identifier(tool) if w not in vocab.verbs]
                content = [w for w in nouns if w not in ignore and len(w) > 2]
                # A noun is a term when it is what some tool works on by itself (list_issues,
                # get_page); words met only inside a compound ("pull", "request" of
                # list_pull_requests, "review") count as that phrase, not alone.
                if len(content) == 1:
                    self._add(content[0], ts.name, TERM)
                own.update(content)
                for a, b in zip(nouns, nouns[1:]):
                    if a not in ignore or b not in ignore:
                        self._phrases.setdefault((a, b), set()).add(ts.name)
                        own.update((a, b))
                for kind in shapes_of(description or ""):
                    self._shapes.setdefault(kind, set()).add(ts.name)
                for w in _WORD.findall(fold(description or "")):
                    if _CJK.match(w):
                        for bg in bigrams(w):
                            self._cjk.setdefault(bg, {})[ts.name] = DESC
                        continue
                    w = stem(w)
                    if len(w) > 4 and w not in ignore:
                        self._add(w, ts.name, DESC)

        self._prepare()

    def _add(self, word: str, toolset: str, weight: float) -> None:
        slot = self._terms.setdefault(word, {})
        slot[toolset] = max(slot.get(toolset, 0.0), weight)

    # -- matching ----------------------------------------------------------------------
    def _prepare(self) -> None:
        """Look-up tables for ``match``: Chinese vocabulary keyed by each key's bigrams, and
        every word that can matter, so a request with none of them is rejected at once."""
        self._zh: Dict[str, List[Tuple[FrozenSet[str], Tuple[str, ...]]]] = {}
        for key, expansion in self._vocab.zh.items():
            grams = frozenset(bigrams(key))
            words = tuple(w for e in expansion for w in e.split())
            for bg in grams:
                self._zh.setdefault(bg, []).append((grams, words))
        self._keys = set(self._terms) | set(self._names) | {w for pair in self._phrases for w in pair}
        self._memo: Dict[str, Tuple[str, ...]] = {}

    def _expand(self, raw: str) -> Tuple[str, ...]:
        if raw.startswith("#"):
            return ("channel",)
        word = stem(raw)
        expansion = self._vocab.synonyms.get(raw) or self._vocab.synonyms.get(word)
        return tuple(w for e in expansion for w in e.split()) if expansion else (word,)

    def _words(self, text: str) -> Tuple[List[str], Set[str]]:
        """Request words (synonyms expanded in place) and the Chinese bigrams."""
        out: List[str] = []
        grams: Set[str] = set()
        memo = self._memo
        for raw in _WORD.findall(fold(text)):
            if raw[0] >= "\u3400":
                grams |= bigrams(raw)
                out.append("\x00")  # a CJK run separates Latin words and marks adjacency
                continue
            expansion = memo.get(raw)
            if expansion is None:
                expansion = self._expand(raw)
                if len(memo) < 8192:
                    memo[raw] = expansion
            out.extend(expansion)
        if grams:
            found: Dict[Tuple[str, ...], None] = {}
            for bg in grams:
                for key_grams, words in self._zh.get(bg, ()):
                    if words not in found and key_grams <= grams:
                        found[words] = None
            for words in found:
                out.append("\x01")
                out.extend(words)
        return out, grams

    def match(self, text: str, original: str = "") -> Tuple[Match, ...]:
        """Every toolset the request points at, strongest first."""
        if not self.toolsets or not isinstance(text, str) or not text:
            return ()
        text, original = text[:MAX_CHARS], (original or text)[:MAX_CHARS]  # a pasted log costs no more
        words, grams = self._words(text)
        keys = self._keys
        hits = [(i, w) for i, w in enumerate(words) if w in keys]
        shapes = shapes_in(original or text, self._shapes, self._vocab.not_identifiers) if self._shapes else {}
        if not hits and not shapes and not (grams and self._cjk):
            return ()
        evidence: Dict[str, List[str]] = {}
        for kind in shapes:
            for toolset in self._shapes[kind]:
                evidence.setdefault(toolset, []).append(SHAPE + kind)
        seen: Set[str] = set()
        last = len(words) - 1
        for i, word in hits:
            if word not in seen:
                seen.add(word)
                for toolset in self._terms.get(word, ()):
                    evidence.setdefault(toolset, []).append(word)
            if i < last:
                pair = (word, words[i + 1])
                for toolset in self._phrases.get(pair, ()):
                    evidence.setdefault(toolset, []).append(" ".join(pair))
        if self._cjk:
            for bg in grams:
                for toolset in self._cjk.get(bg, ()):
                    evidence.setdefault(toolset, []).append(bg)
        named = self._named(words, hits, original or text)
        for toolset, corroborated in named.items():
            evidence.setdefault(toolset, []).append("name" if corroborated else "name?")
        # An integration the request clearly points at (its name, a phrase, a shape or a word
        # only it has) explains its own words: another one sharing only those words ("issue"
        # in "a Linear ticket", "comment" in "comment on acme/api#77") is not asked for.
        anchored = {t for t, why in evidence.items() if self._anchored(t, why, named)}
        explained = set().union(*(self._own[t] for t in anchored)) if anchored else set()
        out = []
        for toolset, why in evidence.items():
            if toolset not in anchored and explained:
                why = [e for e in why if not set(e.split()) <= explained]
            weights = [self._weight(toolset, e) for e in why]
            # Description words rank a match but never make one: they are too ordinary alone.
            core = sum(w for w, e in zip(weights, why) if w > DESC or e in ("name", "name?") or e.startswith(SHAPE))
            if core < WEAK:
                continue
            strong = core >= STRONG or named.get(toolset, False)
            out.append(Match(toolset, sum(weights), strong, tuple(why)))
        out.sort(key=lambda m: (-m.strong, -m.score, m.toolset))
        return tuple(out)

    def _anchored(self, toolset: str, why: List[str], named: Dict[str, bool]) -> bool:
        if named.get(toolset):
            return True
        for e in why:
            if " " in e or e.startswith(SHAPE):
                return True
            slot = self._terms.get(e)
            if slot is not None and slot.get(toolset) == TERM and len(slot) == 1:
                return True
        return False

    def _weight(self, toolset: str, why: str) -> float:
        if why.startswith(SHAPE):
            return WEIGHT[why[len(SHAPE):]]
        if why == "name":
            return NAME
        if why == "name?":
            return WEAK
        if " " in why:
            return PHRASE
        return self._terms.get(why, self._cjk.get(why, {})).get(toolset, DESC)

    def _named(self, words: List[str], hits: List[Tuple[int, str]], original: str) -> Dict[str, bool]:
        """Toolsets whose name appears, and whether the request treats it as the integration."""
        out: Dict[str, bool] = {}
        for i, word in hits:
            for toolset in self._names.get(word, ()):
                out[toolset] = out.get(toolset, False) or self._corroborated(words, i, toolset, original)
        return out

    def _corroborated(self, words: List[str], i: int, toolset: str, original: str) -> bool:
        before = words[i - 1] if i > 0 else ""
        after = words[i + 1] if i + 1 < len(words) else ""
        if "\x00" in (before, after):  # Chinese right beside it: "在github上"
            return True
        own = self._own.get(toolset, set())
        if any(w in own for w in words[max(0, i - NEAR):i + NEAR + 1]):
            return True
        if before in self._vocab.lead_in and (not after or after in self._vocab.lead_in or after in
                                              ("and", "then", "for", "about", "so", "please", "too")):
            return True
        word = words[i]
        for m in re.finditer(re.escape(word), original, flags=re.IGNORECASE):
            found = original[m.start():m.end()]
            if found != found.lower() and m.start() > 0 and original[:m.start()].strip()[-1:] not in ".!?":
                return True
        return False


def fingerprint(toolsets: Sequence[DynamicToolset], builtin_words: Iterable[str]) -> int:
    return hash((tuple(toolsets), tuple(sorted(set(builtin_words)))))


_lock = threading.Lock()
_cache: "OrderedDict[Tuple[int, int], DynamicIndex]" = OrderedDict()


def index_for(toolsets: Sequence[DynamicToolset], vocab: Vocabulary,
              builtin_words: Iterable[str] = ()) -> DynamicIndex:
    """The index for this surface, built once per fingerprint (a later session or turn on
    the same surface pays a hash, not a build)."""
    builtin = tuple(builtin_words)
    key = (fingerprint(toolsets, builtin), id(vocab))
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    index = DynamicIndex(toolsets, vocab, builtin)
    with _lock:
        _cache[key] = index
        while len(_cache) > _CACHE_MAX:
            _cache.popitem(last=False)
    return index


def builtin_vocabulary(tool_names: Iterable[str]) -> FrozenSet[str]:
    """Words of the session's built-in tool names: ordinary for this surface, never evidence."""
    return frozenset(w for name in tool_names for w in split_identifier(name))


_vocab_lock = threading.Lock()
_vocab: Dict[str, Tuple[float, Vocabulary]] = {}


def vocabulary(path: Path) -> Vocabulary:
    """The shipped vocabulary, reloaded when the file changes."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = -1
    with _vocab_lock:
        cached = _vocab.get(str(path))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        vocab = Vocabulary.load(path)
        _vocab[str(path)] = (stamp, vocab)
        return vocab

