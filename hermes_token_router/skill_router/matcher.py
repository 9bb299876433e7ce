"""Choose the skills for one message: nickname hits first, then semantic neighbours.

Why both: nicknames are exact and free but only cover what the user configured; the
semantic path covers everything else at ~2 ms. Why the gates are relative to the library:
absolute cosines move with how a skill library is written (richer SKILL.md files lift every
score), so a threshold fitted on one library injects on near misses of another. How far a
skill stands above the rest of *this* library for *this* request, in that library's own
standard deviations, meant the same on both benchmark sets (benchmarks/skills.py).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from math import sqrt
from typing import List, NamedTuple, Optional, Sequence, Tuple

from . import embedding
from .config import SkillRouterConfig
from .index import REBUILD, IndexStore, LoadedIndex
from .nickname import NicknameMap
from .lexical import Bm25, saturate
from .scan import SkillEntry
from .smalltalk import SMALLTALK

log = logging.getLogger("hermes_token_router.skills")



@dataclass(frozen=True)
class Match:
    entry: SkillEntry
    score: float
    via: str  # "nickname" | "semantic" | "hint"
    lead: Optional[float] = None  # the library-relative lead the gate read (Candidate.z); none for nicknames


@dataclass(frozen=True)
class Candidate:
    entry: SkillEntry
    semantic: float  # best facet cosine, the request's language bias removed (0 without embeddings)
    lexical: float  # raw BM25
    score: float  # fused: semantic + lexical_weight * saturate(lexical)
    z: float = 0.0  # raw-cosine lead over the rest of the library, in its standard deviations


class SmallTalk(NamedTuple):
    """The best small-talk reference line for a message: its cosine and the same standardised
    against the library's scores for that message (how much more it reads like small talk
    than like a typical skill)."""

    score: float = 0.0
    z: float = 0.0
    scored: bool = False  # the embedding scored this message (else only BM25 speaks)


# The spread of a library's scores for a request is estimated from the library itself, pooled
# with a prior worth PRIOR_SKILLS skills: a small or flat library cannot make noise read as
# confidence, a large one speaks for itself. PRIOR_SPREAD is about the median per-request
# spread on both benchmark sets (0.05-0.08); neither constant is fitted to a set.
PRIOR_SPREAD = 0.07
PRIOR_SKILLS = 20


def _spread(variance: float, n: int) -> float:
    return sqrt((PRIOR_SKILLS * PRIOR_SPREAD ** 2 + n * max(variance, 0.0)) / (PRIOR_SKILLS + n))


def standardize(scores: Sequence[float], chat: float = 0.0) -> Tuple[List[float], float]:
    """Each skill's semantic score as spreads above the *rest* of the library (leaving itself
    out, so one strong skill does not inflate its own baseline), and the small-talk score as
    spreads above the whole library. One library skill: no evidence (0)."""
    n = len(scores)
    if n < 2:
        return [0.0] * n, 0.0
    total = sum(scores)
    squares = sum(s * s for s in scores)
    mean = total / n
    chat_z = (chat - mean) / _spread(squares / n - mean * mean, n)
    out = []
    for s in scores:
        rest_mean = (total - s) / (n - 1)
        rest_var = (squares - s * s) / (n - 1) - rest_mean * rest_mean
        out.append((s - rest_mean) / _spread(rest_var, n - 1))
    return out, chat_z


def centre_languages(scores, chinese):
    """Remove the language bias from one request's per-skill cosines (numpy in and out).

    Why: a multilingual encoder scores a request higher against skills written in its own
    language whatever their topic, so a Chinese request over a library that is two-thirds
    English lifts the Chinese-text skills over the English skill it needs (set B: the relevant
    skill ranked 6th-20th). Topics are spread over both languages, so the gap between the mean
    score of the library's Chinese-text skills (``chinese``: a boolean mask) and of its
    English-text ones, for this request, is that bias; each group is moved back to the
    library mean. Each group's shift is shrunk by a prior worth PRIOR_SKILLS skills, so a
    handful of skills in one language barely moves (its mean is noise). A library in one
    language is unchanged. The same correction as CSLS/hubness reduction in cross-lingual
    retrieval, with the library as the reference set; nothing in it is fitted.
    """
    n = len(scores)
    out = scores.copy()
    mean = float(scores.mean()) if n else 0.0
    for group in (chinese, ~chinese):
        size = int(group.sum())
        if 0 < size < n:
            out[group] -= size / (size + PRIOR_SKILLS) * (float(scores[group].mean()) - mean)
    return out


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def language(text: str) -> str:
    """'zh' when a third or more of the letters are CJK (per-language thresholds), else 'en'."""
    cjk = len(_CJK.findall(text))
    letters = sum(ch.isalpha() for ch in text)
    return "zh" if letters and cjk * 3 >= letters else "en"


@dataclass(frozen=True)
class MatchResult:
    matches: Tuple[Match, ...]  # injected (nickname hits first)
    hints: Tuple[Match, ...] = ()

    @property
    def path(self) -> Optional[str]:
        vias = {m.via for m in self.matches}
        if not vias:
            return None
        return "nickname+semantic" if len(vias) > 1 else vias.pop()


class Matcher:
    def __init__(self, cfg: SkillRouterConfig, store: IndexStore) -> None:
        self.cfg = cfg
        self.store = store
        self.nicknames = NicknameMap(cfg.nicknames)
        self._warned_missing: set = set()
        self._smalltalk = None  # (backend name, vectors) embedded on first semantic query
        self._warned_index: set = set()  # index signatures already warned about
        self._lex: Optional[Tuple[LoadedIndex, Bm25]] = None
        self._chinese: Optional[Tuple[LoadedIndex, object]] = None  # per index: which skills are written in Chinese

    def _unusable(self, index: LoadedIndex, why: str) -> Tuple[List[Tuple[SkillEntry, float]], float]:
        """Semantic routing off for this index (one warning per index); nicknames go on."""
        sig = (id(index), why)
        if sig not in self._warned_index:
            self._warned_index.add(sig)
            log.warning("skill router: semantic routing is off: the skill index %s; rebuild it with '%s' "
                        "(nickname routing keeps working)", why, REBUILD)
        return [], 0.0

    # -- semantic -------------------------------------------------------------------------
    def scores(self, text: str, index: Optional[LoadedIndex] = None) -> Tuple[List[Tuple[SkillEntry, float, float]], float]:
        """Every skill as (entry, ranking score, raw score), best ranking score first, and the
        best small-talk score. The raw score is the best facet cosine; the ranking score is the
        same with the request's language bias removed (centre_languages). Only the ranking uses
        the correction: the gates read the raw scores' leads (see candidates)."""
        index = index or self.store.get()
        if index is None or not index.semantic or not self.cfg.semantic or not text.strip():
            return [], 0.0
        if index.meta.get("model") != self.cfg.backend:
            return self._unusable(index, f"was built with {str(index.meta.get('model'))[:40]!r}, "
                                         f"not the configured backend {self.cfg.backend!r}")
        backend = embedding.get_backend(self.cfg.backend)
        if backend is None:
            return [], 0.0
        import numpy as np

        if self._smalltalk is None or self._smalltalk[0] is not backend:
            self._smalltalk = (backend, np.asarray(backend.encode(list(SMALLTALK)), dtype=np.float32))
        q = np.asarray(backend.encode([text[:2000]]), dtype=np.float32)[0]
        if index.vectors.shape[1] != q.shape[0]:
            return self._unusable(index, f"holds {index.vectors.shape[1]}-dimensional vectors and "
                                         f"{self.cfg.backend} makes {q.shape[0]}-dimensional ones")
        per_row = index.vectors @ q
        raw = np.maximum.reduceat(per_row, index.starts)
        ranked = centre_languages(raw, self._chinese_skills(index))
        order = np.argsort(-ranked)
        chat = float((self._smalltalk[1] @ q).max())
        return [(index.entries[i], float(ranked[i]), float(raw[i])) for i in order], chat

    def _chinese_skills(self, index: LoadedIndex):
        """Which skills are written in Chinese (their description), once per loaded index."""
        if self._chinese is None or self._chinese[0] is not index:
            import numpy as np

            self._chinese = (index, np.asarray([language(e.description) == "zh" for e in index.entries], dtype=bool))
        return self._chinese[1]

    def candidates(self, text: str, index: Optional[LoadedIndex] = None) -> Tuple[List[Candidate], SmallTalk]:
        """Every skill with its semantic, lexical and fused score (best fused first), and the
        best small-talk line. Without embeddings the lexical signal ranks alone."""
        index = index or self.store.get()
        if index is None or not index.entries or not text.strip():
            return [], SmallTalk()
        try:
            sem_ranked, chat = self.scores(text, index)
        except Exception as exc:  # a broken semantic path leaves the lexical signal
            log.warning("skill router: semantic scoring failed (%s); lexical only", type(exc).__name__)
            sem_ranked, chat = [], 0.0
        sem = {id(e): s for e, s, _ in sem_ranked}
        # The gates read leads in the encoder's raw scores: the language correction is an
        # estimate that reorders candidates, and moving a whole language group by its mean gap
        # would otherwise lift near misses of the other language over inject_z (set B, C).
        zs, chat_z = standardize([r for _, _, r in sem_ranked], chat)
        z = {id(e): v for (e, _, _), v in zip(sem_ranked, zs)}
        lex = self._bm25(index).scores(text[:2000])
        w, half = self.lexical_weight(language(text)), self.cfg.lexical_half
        out = []
        for e, raw in zip(index.entries, lex):
            s = sem.get(id(e))
            lx = saturate(raw, half)
            fused = (s + w * lx) if s is not None else lx
            out.append(Candidate(e, s if s is not None else 0.0, raw, fused, z.get(id(e), 0.0)))
        out.sort(key=lambda c: -c.score)
        return out, SmallTalk(chat, chat_z, bool(sem_ranked))

    def lexical_weight(self, lang: str) -> float:
        if lang == "zh" and self.cfg.lexical_weight_zh is not None:
            return self.cfg.lexical_weight_zh
        return self.cfg.lexical_weight

    def _bm25(self, index: LoadedIndex) -> Bm25:
        if self._lex is None or self._lex[0] is not index:
            self._lex = (index, Bm25.for_entries(index.entries))
        return self._lex[1]

    def skill_threshold(self, entry: SkillEntry) -> Optional[float]:
        """A threshold the user set for this skill (config, else its frontmatter): it replaces
        the relative gate for that skill, on the fused scale."""
        for key in (entry.qualified_name, entry.name):
            if key in self.cfg.thresholds:
                return float(self.cfg.thresholds[key])
        return entry.threshold

    def floor_for(self, lang: str) -> Optional[float]:
        """The optional absolute fused floor (off by default: it does not transfer)."""
        if lang == "zh" and self.cfg.inject_threshold_zh is not None:
            return self.cfg.inject_threshold_zh
        return self.cfg.inject_threshold

    def confident(self, c: Candidate, lang: str) -> bool:
        """Full injection needs semantic evidence: the skill's lead over the rest of the
        library (``inject_z``), or the user's own per-skill threshold. BM25 ranks and hints;
        it never gates an injection (it lifted near misses over the bar on set B)."""
        if c.semantic <= 0:
            return False
        own = self.skill_threshold(c.entry)
        if own is not None:
            return c.score >= own
        floor = self.floor_for(lang)
        return c.z >= self.cfg.inject_z and (floor is None or c.score >= floor)

    def chit_chat(self, best: Candidate, chat: SmallTalk, text_len: int) -> bool:
        """Reads like small talk (the best small-talk line stands ``smalltalk_z`` library
        deviations above the typical skill, or the optional absolute ``smalltalk_gap`` is not
        met) and names nothing a skill is about (``lexical_task``)."""
        if best.lexical >= self.cfg.lexical_task or not self._short(text_len):
            return False
        if not chat.scored:
            return True  # without embeddings only a lexical hit marks a task
        gap = self.cfg.smalltalk_gap
        return chat.z > self.cfg.smalltalk_z or (gap is not None and best.semantic - chat.score < gap)

    def _short(self, text_len: int) -> bool:
        """Small talk is short; a long message that reads vaguely is still a task (0: always)."""
        return not self.cfg.smalltalk_max_chars or text_len <= self.cfg.smalltalk_max_chars

    def tiers(self, cands: List[Candidate], chat: SmallTalk, lang: str, no_skill_work: bool = False,
              text_len: int = 0) -> Tuple[List[Match], List[Match]]:
        """(inject, hints). Inject only confident semantic matches; hint the next best for
        anything that looks like a task; nothing for chit-chat."""
        if not cands or no_skill_work or self.chit_chat(cands[0], chat, text_len):
            return [], []
        best = cands[0]
        runner_up = cands[1].score if len(cands) > 1 else 0.0
        inject = [] if best.score - runner_up < self.cfg.inject_lead else [
            Match(c.entry, c.score, "semantic", c.z) for c in cands[: self.cfg.top_k]
            if self.confident(c, lang) and c.score >= best.score - self.cfg.margin]
        hints = [Match(c.entry, c.score, "hint", c.z) for c in cands[len(inject): self.cfg.hint_top_k]]
        return inject, hints

    def semantic(self, text: str, index: Optional[LoadedIndex] = None) -> List[Match]:
        return self.tiers(*self.candidates(text, index), language(text), text_len=len(text))[0]

    # -- nickname -------------------------------------------------------------------------
    def nickname(self, text: str, index: Optional[LoadedIndex], resolve) -> List[Match]:
        out = []
        for _phrase, name in self.nicknames.match(text):
            entry = index.lookup(name) if index is not None else None
            if entry is None:
                entry = resolve(name)
            if entry is None:
                if name not in self._warned_missing:
                    self._warned_missing.add(name)
                    log.warning("skill router: nickname target %r is not a known skill", name)
                continue
            out.append(Match(entry, 1.0, "nickname"))
        return out

    def match(self, text: str, resolve=lambda name: None, no_skill_work: bool = False) -> MatchResult:
        """Nickname hits (always injected), then the confident semantic tier, then hints.
        ``no_skill_work``: the tool router read the message as chit-chat or a capability
        question, so only a nickname (the user's own words) may load a skill."""
        index = self.store.get()
        found = self.nickname(text, index, resolve)
        seen = {m.entry.path for m in found}
        try:
            inject, hints = self.tiers(*self.candidates(text, index), language(text), no_skill_work=no_skill_work,
                                       text_len=len(text))
        except Exception as exc:  # a broken scoring path must not take the nickname hits with it
            log.warning("skill router: skill scoring failed (%s); nickname routing only", type(exc).__name__)
            inject, hints = [], []
        for m in inject:
            if len(found) >= self.cfg.top_k:
                break
            if m.entry.path not in seen:
                seen.add(m.entry.path)
                found.append(m)
        room = max(self.cfg.hint_top_k - len(found), 0)
        kept = [m for m in hints if m.entry.path not in seen][:room]
        return MatchResult(tuple(found), tuple(kept))
