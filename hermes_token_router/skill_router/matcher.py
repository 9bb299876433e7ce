"""Choose the skills for one message: nickname hits first, then semantic neighbours.

Why both: nicknames are exact and free but only cover what the user configured; the
semantic path covers everything else at ~2 ms, gated by a threshold calibrated on short,
real-sounding requests plus a margin to the best score so one clear winner loads alone.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from . import embedding
from .config import SkillRouterConfig
from .index import IndexStore, LoadedIndex
from .nickname import NicknameMap
from .lexical import Bm25, saturate
from .scan import SkillEntry
from .smalltalk import SMALLTALK

log = logging.getLogger("hermes_token_router.skills")

REBUILD = "hermes-token-router skills build"


@dataclass(frozen=True)
class Match:
    entry: SkillEntry
    score: float
    via: str  # "nickname" | "semantic"


@dataclass(frozen=True)
class Candidate:
    entry: SkillEntry
    semantic: float  # best facet cosine (0 without embeddings)
    lexical: float  # raw BM25
    score: float  # fused: semantic + lexical_weight * saturate(lexical)


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

    def _unusable(self, index: LoadedIndex, why: str) -> Tuple[List[Tuple[SkillEntry, float]], float]:
        """Semantic routing off for this index (one warning per index); nicknames go on."""
        sig = (id(index), why)
        if sig not in self._warned_index:
            self._warned_index.add(sig)
            log.warning("skill router: semantic routing is off: the skill index %s; rebuild it with '%s' "
                        "(nickname routing keeps working)", why, REBUILD)
        return [], 0.0

    # -- semantic -------------------------------------------------------------------------
    def scores(self, text: str, index: Optional[LoadedIndex] = None) -> Tuple[List[Tuple[SkillEntry, float]], float]:
        """Every skill with its best facet score (best first) and the best small-talk score."""
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
        per_skill = np.maximum.reduceat(per_row, index.starts)
        order = np.argsort(-per_skill)
        chat = float((self._smalltalk[1] @ q).max())
        return [(index.entries[i], float(per_skill[i])) for i in order], chat

    def candidates(self, text: str, index: Optional[LoadedIndex] = None) -> Tuple[List[Candidate], float]:
        """Every skill with its semantic, lexical and fused score (best fused first), and the
        best small-talk score. Without embeddings the lexical signal ranks alone."""
        index = index or self.store.get()
        if index is None or not index.entries or not text.strip():
            return [], 0.0
        try:
            sem_ranked, chat = self.scores(text, index)
        except Exception as exc:  # a broken semantic path leaves the lexical signal
            log.warning("skill router: semantic scoring failed (%s); lexical only", type(exc).__name__)
            sem_ranked, chat = [], 0.0
        sem = {id(e): s for e, s in sem_ranked}
        lex = self._bm25(index).scores(text[:2000])
        w, half = self.lexical_weight(language(text)), self.cfg.lexical_half
        out = []
        for e, raw in zip(index.entries, lex):
            s = sem.get(id(e))
            lx = saturate(raw, half)
            fused = (s + w * lx) if s is not None else lx
            out.append(Candidate(e, s if s is not None else 0.0, raw, fused))
        out.sort(key=lambda c: -c.score)
        return out, chat

    def lexical_weight(self, lang: str) -> float:
        if lang == "zh" and self.cfg.lexical_weight_zh is not None:
            return self.cfg.lexical_weight_zh
        return self.cfg.lexical_weight

    def _bm25(self, index: LoadedIndex) -> Bm25:
        if self._lex is None or self._lex[0] is not index:
            self._lex = (index, Bm25.for_entries(index.entries))
        return self._lex[1]

    def threshold_for(self, entry: SkillEntry, lang: str = "en") -> float:
        for key in (entry.qualified_name, entry.name):
            if key in self.cfg.thresholds:
                return float(self.cfg.thresholds[key])
        if entry.threshold is not None:
            return entry.threshold
        return self.cfg.inject_threshold_zh if lang == "zh" and self.cfg.inject_threshold_zh is not None \
            else self.cfg.inject_threshold

    def _short(self, text_len: int) -> bool:
        """Small talk is short; a long message that reads vaguely is still a task (0: always)."""
        return not self.cfg.smalltalk_max_chars or text_len <= self.cfg.smalltalk_max_chars

    def tiers(self, cands: List[Candidate], chat: float, lang: str, no_skill_work: bool = False,
              text_len: int = 0) -> Tuple[List[Match], List[Match]]:
        """(inject, hints). Inject only above the precision-calibrated threshold; hint the
        next best for anything that looks like a task; nothing for chit-chat."""
        if not cands or no_skill_work:
            return [], []
        best = cands[0]
        if best.semantic - chat < self.cfg.smalltalk_gap and best.lexical < self.cfg.lexical_task \
                and self._short(text_len):
            return [], []  # reads like small talk and names nothing a skill is about
        # Lexical evidence alone was never calibrated for precision: without embeddings it hints only.
        # A clear lead over the runner-up transfers across skill sets better than the absolute
        # score alone (richer SKILL.md files lift every score; the lead stays comparable).
        runner_up = cands[1].score if len(cands) > 1 else 0.0
        inject = [] if best.score - runner_up < self.cfg.inject_lead else [
            Match(c.entry, c.score, "semantic") for c in cands[: self.cfg.top_k]
            if c.semantic > 0 and c.score >= self.threshold_for(c.entry, lang)
            and c.score >= best.score - self.cfg.margin]
        hints = [Match(c.entry, c.score, "hint") for c in cands[len(inject): self.cfg.hint_top_k]]
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
