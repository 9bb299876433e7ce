"""A learned second opinion on the rules: a sparse multi-label linear model over hashed text features.

Why: rules only know the vocabulary someone wrote down, and fresh requests keep using words
nobody did. A linear model trained on every labelled request (the dev corpus plus the blind
batches already scored) generalises a little past that vocabulary, and it is cheap enough
to run inside the deterministic path: features are hashed words, word pairs, word prefixes
and character n-grams of CJK runs (so Chinese needs no segmenter), the weights are sparse
(L1), and inference is a few dict look-ups in pure Python (Hermes ships no numpy).

Training hashes features into buckets; the weights file keys each non-zero bucket by the
training features that fall into it, so inference is one dict look-up per feature.

Its toolset outputs never narrow on their own. Where it is confident about a toolset the
rules missed, the decision gets the union; where it confidently wants something else and
gives none of the rules' toolsets any credit, the router abstains. "Confident" is priced: a
toolset whose schemas are a small share of the surface is added at a lower probability than
an expensive one, because adding it costs little and missing it costs a round trip (see
``threshold``). A missing or corrupt weights file means rules only, with one warning.
Training: ``benchmarks/train_learned.py``.

One extra output, ``CHITCHAT``, is not a toolset: it is trained on the records labelled
chit-chat. The phrase list in ``guards.yaml`` only knows whole messages someone wrote down
("thanks!"), while people say "thanks, that worked perfectly 🙏" or tell the agent about the
rain; a message no rule explains that this output is sure of gets the chit-chat (floor)
surface instead of the full one, and the skill router then adds no hints to it.

A second one, ``NO_TOOLS``, is trained on every record whose label is "no toolset" (text
work: drafting, rewording, translating what the message holds; small talk; questions about
the agent), ambiguous records excepted. People ask for that work in words no rule lists, and
abstaining on it pays for the whole surface to answer with none of it. A message no rule
explains that this output is sure of, while no toolset output reaches its own threshold, gets
the floor surface too; it is still work, so skill hints stay.

The third decision it makes without a rule: a message no rule explains for which one toolset
output is sure (``primary_at``, 0.9) narrows to every toolset the model gives at least
``primary_keep`` (0.15). Rules know the words someone wrote down; "move 'Vendor onboarding' to
Done" or "3 photos from claim 88213 attached" name no rule's word, and abstaining on them pays
the whole surface for one toolset the model already sees. The low keep bar is what makes it
safe to trust: the chosen surface is the model's whole plausible set, not its best guess.
Chosen on batches nothing had been fitted to; docs/rules.md has the figures.
"""

from __future__ import annotations

import json
import logging
import math
import re
import zlib
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

from .normalize import CJK_RUN as _CJK_RUN

log = logging.getLogger("hermes_token_router")

WEIGHTS_FILE = "learned.json"
CHITCHAT = "=chitchat"  # the non-toolset outputs (no toolset name starts with "=")
NO_TOOLS = "=notools"
PRIMARY = "primary"  # the reading "these toolsets", not an output of the model
READING_INTENT = "learned"  # the intent of a decision made from that reading alone
_WORD = re.compile(r"[a-z0-9_][a-z0-9_'.-]*")
_warned: set = set()


def _parts(t: str) -> Tuple[Set[str], Set[Tuple[str, str]], Set[str], Set[str]]:
    """The raw text of each feature kind of a normalised (lower-cased, NFKC) message: words,
    word pairs (the first paired with ``^``), five-letter prefixes of longer words (typos) and
    character 1-3 grams of each CJK run (Chinese needs no segmenter). One definition for
    training (``features``) and for inference (``LearnedModel.predict``), which looks the
    parts up without building a prefixed string per feature."""
    words = [w.rstrip(".-'") for w in _WORD.findall(t)]
    grams = {run[i:i + k] for run in _CJK_RUN.findall(t) for k in (1, 2, 3) for i in range(len(run) - k + 1)}
    return set(words), set(zip(["^"] + words, words)), {w[:5] for w in words if len(w) > 5}, grams


def features(t: str) -> Set[str]:
    """Feature strings as training hashes them: ``w:`` words, ``b:`` word pairs, ``p:``
    prefixes, ``c:`` CJK grams (see ``_parts``)."""
    words, pairs, prefixes, grams = _parts(t)
    out = {"w:" + w for w in words}
    out.update(["b:" + a + " " + b for a, b in pairs])
    out.update(["p:" + p for p in prefixes])
    out.update(["c:" + g for g in grams])
    return out


def bucket(feature: str, size: int) -> int:
    """A stable hash (crc32, not Python's per-process ``hash``): training and inference agree."""
    return zlib.crc32(feature.encode("utf-8")) % size


@dataclass(frozen=True)
class LearnedModel:
    labels: Tuple[str, ...]
    bias: Tuple[float, ...]
    weights: Dict[str, Tuple[Tuple[int, float], ...]]
    union_at: float        # add a toolset the rules missed at or above this probability
    disagree_at: float     # ... and abstain when every rule toolset scores below this
    max_chars: int = 1000  # read at most this much text (the latency budget)
    # Priced union (0 = off: every toolset needs ``union_at``). A miss is taken to cost
    # ``miss_share`` of the full surface's schema tokens, so a toolset worth ``share`` of the
    # surface is added at probability share / miss_share, clamped to [floor_p, union_at].
    miss_share: float = 0.0
    floor_p: float = 1.0
    shares: Mapping[str, float] = field(default_factory=dict)  # a typical surface's shares
    chitchat_at: float = 1.01  # the CHITCHAT output at or above this reads as small talk (> 1: off)
    notools_at: float = 1.01   # the NO_TOOLS output at or above this reads as needing no toolset (> 1: off)
    primary_at: float = 1.01   # a toolset output at or above this narrows a message no rule explains (> 1: off)
    primary_keep: float = 0.15  # ... to every toolset at or above this (or its priced threshold, if lower)

    @classmethod
    def load(cls, path: Path) -> Optional["LearnedModel"]:
        """``None`` plus one warning per path when the file is missing or unusable."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            labels = tuple(str(x) for x in data["labels"])
            bias = tuple(float(x) for x in data["bias"])
            if len(bias) != len(labels):
                raise ValueError("labels and bias disagree")
            weights: Dict[str, Tuple[Tuple[int, float], ...]] = {}
            for key, pairs in data["weights"].items():
                row = tuple((int(i), float(w)) for i, w in pairs)
                if any(not 0 <= i < len(labels) for i, _ in row):
                    raise ValueError(f"label index out of range for feature {key!r}")
                weights[str(key)] = row
            shares = {str(k): float(v) for k, v in (data.get("shares") or {}).items()}
            if any(not 0.0 <= v <= 1.0 for v in shares.values()):
                raise ValueError("a share is outside 0..1")
            return cls(labels, bias, weights, float(data["union_at"]), float(data["disagree_at"]),
                       int(data.get("max_chars", 1000)), float(data.get("miss_share", 0.0)),
                       float(data.get("floor_p", 1.0)), shares, float(data.get("chitchat_at", 1.01)),
                       float(data.get("notools_at", 1.01)), float(data.get("primary_at", 1.01)),
                       float(data.get("primary_keep", 0.15)))
        except Exception as exc:
            key = str(path)
            if key not in _warned:
                _warned.add(key)
                log.warning("token-router: learned model %s unusable (%s: %s); routing with rules only",
                            Path(path).name, type(exc).__name__, str(exc)[:200])
            return None

    @cached_property
    def _tables(self) -> Tuple[dict, dict, dict, dict]:
        """The weights keyed by each kind's raw text (word pairs as word -> word -> row):
        ``predict`` looks the message's words and grams up directly instead of building a
        prefixed string per feature, and skips a pair whose first word starts no pair."""
        words: dict = {}
        pairs: dict = {}
        prefixes: dict = {}
        grams: dict = {}
        for key, row in self.weights.items():
            kind, _, rest = key.partition(":")
            if kind == "b":
                a, sep, b = rest.partition(" ")  # words hold no space: the split is exact
                if sep:
                    pairs.setdefault(a, {})[b] = row
            elif kind in ("w", "p", "c"):
                {"w": words, "p": prefixes, "c": grams}[kind][rest] = row
        return words, pairs, prefixes, grams

    def _scores(self, t: str) -> List[float]:
        """The logit per label for a normalised message: the bias plus the weight of each
        distinct feature of ``features`` that the file holds."""
        scores = list(self.bias)
        words_w, pairs_w, prefix_w, gram_w = self._tables
        words, pairs, prefixes, grams = _parts(t[:self.max_chars])
        rows = [words_w.get(w) for w in words]
        rows += [nxt.get(b) for a, b in pairs if (nxt := pairs_w.get(a)) is not None]
        rows += [prefix_w.get(p) for p in prefixes]
        rows += [gram_w.get(g) for g in grams]
        for row in rows:
            if row is not None:
                for i, v in row:
                    scores[i] += v
        return scores

    def predict(self, t: str) -> Dict[str, float]:
        """Probability per label for a normalised message."""
        return {lab: _sigmoid(s) for lab, s in zip(self.labels, self._scores(t))}

    @cached_property
    def _index(self) -> Dict[str, int]:
        return {lab: i for i, lab in enumerate(self.labels)}

    def reading(self, t: str) -> Optional[str]:
        """``CHITCHAT``, ``NO_TOOLS`` or None (see ``unexplained``)."""
        found = self.unexplained(t)
        return found[0] if found is not None and found[0] != PRIMARY else None

    def unexplained(self, t: str, shares: Optional[Mapping[str, float]] = None
                    ) -> Optional[Tuple[str, Tuple[str, ...], str]]:
        """What the model reads in a message no rule explains, from one pass over its features:

        * ``(CHITCHAT, (), "")``: small talk;
        * ``(NO_TOOLS, (), "")``: work it is sure needs no toolset (writing, rewording,
          translating text the message holds) while no toolset output reaches its threshold;
        * ``(PRIMARY, toolsets, note)``: it is sure of one toolset (``primary_at``), so the
          message narrows to every toolset it gives at least ``primary_keep`` (or the priced
          threshold, when that is lower): generous on purpose, since nothing else vouches;
        * None: nothing sure enough; the router abstains.

        A file without an output never gives that reading."""
        scores = self._scores(t)
        index = self._index
        i = index.get(CHITCHAT)
        if i is not None and scores[i] >= self._logit_at[0]:
            return CHITCHAT, (), ""
        i = index.get(NO_TOOLS)
        if i is not None and scores[i] >= self._logit_at[1]:
            at = self._thresholds
            if not any(_sigmoid(s) >= at[lab] for lab, s in zip(self.labels, scores) if lab in at):
                return NO_TOOLS, (), ""
        toolsets = [(s, lab) for lab, s in zip(self.labels, scores) if not lab.startswith("=")]
        if not toolsets or max(toolsets)[0] < self._logit_at[2]:
            return None
        keep = sorted(((_sigmoid(s), lab) for s, lab in toolsets), reverse=True)
        keep = [(p, lab) for p, lab in keep if p >= min(self.primary_keep, self.threshold(lab, shares))]
        return PRIMARY, tuple(sorted(lab for _, lab in keep)), ", ".join(f"{lab}:{p:.2f}" for p, lab in keep)

    @cached_property
    def _logit_at(self) -> Tuple[float, float, float]:
        return _logit(self.chitchat_at), _logit(self.notools_at), _logit(self.primary_at)

    def flat(self) -> "LearnedModel":
        """The same model with one threshold for every toolset (benchmarks compare both)."""
        return replace(self, miss_share=0.0)

    def threshold(self, toolset: str, shares: Optional[Mapping[str, float]] = None) -> float:
        """The probability at which ``toolset`` is added. ``shares``: the live surface's share
        of schema tokens per toolset (default: the typical surface the weights file records).
        A toolset with no known share (absent from the surface) needs ``union_at``."""
        share = (self.shares if shares is None else shares).get(toolset)
        if self.miss_share <= 0.0 or share is None:
            return self.union_at
        return max(self.floor_p, min(self.union_at, share / self.miss_share))

    @cached_property
    def _thresholds(self) -> Dict[str, float]:
        """Each label's threshold on the typical surface (computed once, not per message)."""
        return {lab: self.threshold(lab) for lab in self.labels if not lab.startswith("=")}

    @cached_property
    def _lowest_logit(self) -> float:
        """No toolset is added below this logit, whatever the surface's shares."""
        return _logit(min(self.floor_p, self.union_at) if self.miss_share > 0.0 else self.union_at)

    def second_opinion(self, t: str, toolsets: Tuple[str, ...],
                       shares: Optional[Mapping[str, float]] = None,
                       ruled_out: FrozenSet[str] = frozenset()) -> Tuple[str, List[str], str]:
        """``("union", added, note)``, ``("abstain", [], note)`` or ``("agree", [], "")``.
        ``ruled_out``: toolsets a matched rule says the request does not need (never added,
        never a reason to abstain). Only labels past the lowest possible threshold are turned
        into probabilities and priced: the rest of the 30 cost nothing (the latency budget)."""
        scores = self._scores(t)
        rules = set(toolsets)
        lowest = self._lowest_logit
        candidates = [(lab, _sigmoid(s)) for lab, s in zip(self.labels, scores)
                      if s >= lowest and lab not in rules and lab not in ruled_out and not lab.startswith("=")]
        if not candidates:
            return "agree", [], ""
        at = self._thresholds if shares is None else {lab: self.threshold(lab, shares) for lab, _ in candidates}
        confident = sorted((p, lab) for lab, p in candidates if p >= at[lab])
        if not confident:
            return "agree", [], ""
        index = self._index
        credit = max((_sigmoid(scores[index[ts]]) for ts in rules if ts in index), default=None)
        note = ", ".join(f"{lab}:{p:.2f}" for p, lab in reversed(confident))
        # Only a strong opinion (at union_at) overrules the rules; a cheap addition never does.
        if credit is not None and credit < self.disagree_at and confident[-1][0] >= self.union_at:
            return "abstain", [], note
        return "union", [lab for _, lab in reversed(confident)], note


def _sigmoid(s: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, s))))


def _logit(p: float) -> float:
    """The score at which the probability reaches ``p`` (+inf above 1: never)."""
    if p >= 1.0:
        return math.inf
    if p <= 0.0:
        return -math.inf
    return math.log(p / (1.0 - p))
