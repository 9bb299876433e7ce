"""Choose the skills for one message: nickname hits first, then semantic neighbours.

Why both: nicknames are exact and free but only cover what the user configured; the
semantic path covers everything else at ~2 ms, gated by a threshold calibrated on short,
real-sounding requests plus a margin to the best score so one clear winner loads alone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import List, Optional, Tuple

from . import embedding
from .config import SkillRouterConfig
from .index import IndexStore, LoadedIndex
from .nickname import NicknameMap
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
class MatchResult:
    matches: Tuple[Match, ...]

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

    def rank(self, text: str, index: Optional[LoadedIndex] = None) -> List[Tuple[SkillEntry, float]]:
        return self.scores(text, index)[0]

    def threshold_for(self, entry: SkillEntry) -> float:
        for key in (entry.qualified_name, entry.name):
            if key in self.cfg.thresholds:
                return float(self.cfg.thresholds[key])
        return entry.threshold if entry.threshold is not None else self.cfg.threshold

    def select(self, ranked: List[Tuple[SkillEntry, float]], chat: float) -> List[Match]:
        """Threshold, small-talk gate, margin to the best, top-k."""
        if not ranked or ranked[0][1] < chat + self.cfg.smalltalk_gap:
            return []
        kept = [(e, s) for e, s in ranked[: max(self.cfg.top_k * 4, 12)] if s >= self.threshold_for(e)]
        if not kept:
            return []
        best = kept[0][1]
        return [Match(e, s, "semantic") for e, s in kept if s >= best - self.cfg.margin][: self.cfg.top_k]

    def semantic(self, text: str, index: Optional[LoadedIndex] = None) -> List[Match]:
        return self.select(*self.scores(text, index))

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

    def match(self, text: str, resolve=lambda name: None) -> MatchResult:
        index = self.store.get()
        found = self.nickname(text, index, resolve)
        seen = {m.entry.path for m in found}
        try:
            semantic = self.semantic(text, index)
        except Exception as exc:  # a broken semantic path must not take the nickname hits with it
            log.warning("skill router: semantic match failed (%s); nickname routing only", type(exc).__name__)
            semantic = []
        for m in semantic:
            if len(found) >= self.cfg.top_k:
                break
            if m.entry.path not in seen:
                seen.add(m.entry.path)
                found.append(m)
        return MatchResult(tuple(found))
