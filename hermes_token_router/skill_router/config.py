"""Typed settings of the skill router (``global.skills``).

Why typed: a typo in a nickname or a threshold must surface as one error line naming
the key and the fix, not as a silently ignored setting that makes routing look flaky.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Calibrated on corpus/skill_queries.jsonl against the fixture in tests/fixtures (see
# docs/skills.md#calibration); the 0.44 figure tuned for all-MiniLM-L6-v2 does not transfer.
DEFAULT_THRESHOLD = 0.40
DEFAULT_MARGIN = 0.03
# Tiered routing (issue 13): full injection only on a confident semantic match; below it the
# top candidates are offered as a compact hint block. The two gates are relative to the skill
# library (standard deviations of the request's scores over it), so they mean the same on any
# library: each was calibrated on one benchmark set and checked on the other, both directions
# (benchmarks/skills.py, docs/skills.md#calibration).
DEFAULT_INJECT_Z = 7.0
DEFAULT_SMALLTALK_Z = 1.75
DEFAULT_LEXICAL_WEIGHT = 0.15
DEFAULT_LEXICAL_HALF = 6.0
DEFAULT_LEXICAL_TASK = 10.0

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# A bare noun ("email") fires on every passing mention; anchoring on an article or
# possessive keeps nicknames for things the user owns or has named.
NICKNAME_LEADS = ("the", "my", "our", "your", "this", "that", "these", "those", "his", "her", "their")


class SkillRouterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    # trigger phrase -> skill name(s); e.g. {"the game server": "minecraft-server", "我的笔记": "obsidian"}
    nicknames: Dict[str, Union[str, List[str]]] = Field(default_factory=dict)
    index_dir: Optional[str] = None
    # Extra trusted skill roots besides Hermes's own (HERMES_HOME/skills + skills.external_dirs).
    skills_dirs: List[str] = Field(default_factory=list)
    max_chars: int = Field(default=15000, gt=0)
    # Hermes spills hook context above hooks.output_spill.max_chars (10,000) to a file and
    # leaves only a preview in the prompt; staying under it keeps the skill in the turn.
    max_total_chars: int = Field(default=9800, gt=0)
    semantic: bool = True
    backend: str = "use-m3"
    # The single-gate cosine threshold from before the two tiers: still accepted so existing
    # configs validate, and recorded in index.json, but routing now uses inject_z.
    threshold: float = Field(default=DEFAULT_THRESHOLD, ge=-1.0, le=1.0)
    # Keep only candidates within this distance of the best score: one clear winner
    # should not drag two weak neighbours into the prompt.
    margin: float = Field(default=DEFAULT_MARGIN, ge=0.0, le=2.0)
    top_k: int = Field(default=3, ge=1, le=10)
    # No skill work when the best small-talk line (smalltalk.py) stands this many standard
    # deviations above the library's typical score for the message.
    smalltalk_z: float = Field(default=DEFAULT_SMALLTALK_Z, ge=-10.0, le=50.0)
    # Optional absolute test as well: the best skill must beat the best small-talk line by
    # this much (null: off; absolute cosines do not transfer between skill libraries).
    smalltalk_gap: Optional[float] = Field(default=None, ge=-2.0, le=2.0)
    # The small-talk gate applies to messages up to this many characters (0: to all).
    smalltalk_max_chars: int = Field(default=0, ge=0)
    thresholds: Dict[str, float] = Field(default_factory=dict)
    # Full injection needs the skill's cosine to stand this many standard deviations above the
    # rest of the library's cosines for the message (leaving the skill itself out).
    inject_z: float = Field(default=DEFAULT_INJECT_Z, ge=0.0, le=100.0)
    # Optional absolute floor as well: the fused score (semantic + lexical_weight *
    # lexical/(lexical+lexical_half)) an injected skill needs (null: off); zh may differ.
    inject_threshold: Optional[float] = Field(default=None, ge=-1.0, le=3.0)
    inject_threshold_zh: Optional[float] = Field(default=None, ge=-1.0, le=3.0)
    # The best skill must lead the runner-up by this much to be injected (0: no lead needed).
    inject_lead: float = Field(default=0.0, ge=0.0, le=2.0)
    lexical_weight: float = Field(default=DEFAULT_LEXICAL_WEIGHT, ge=0.0, le=2.0)
    # Chinese requests (null: lexical_weight). Bigrams alone rarely meet English skill text; with
    # policy/glossary.yaml a Chinese request carries English words too, so it gets the same weight.
    lexical_weight_zh: Optional[float] = Field(default=None, ge=0.0, le=2.0)
    lexical_half: float = Field(default=DEFAULT_LEXICAL_HALF, gt=0.0)
    # A raw BM25 score at or above this marks a task even when the embedding reads small talk.
    lexical_task: float = Field(default=DEFAULT_LEXICAL_TASK, ge=0.0)
    # Hints: inject + hints together name at most this many skills (0 switches hints off).
    hint_top_k: int = Field(default=5, ge=0, le=10)
    hints: bool = True
    gateway_rewrite: bool = False
    scan_content: bool = True

    @field_validator("nicknames")
    @classmethod
    def _nicknames(cls, value: Dict[str, Union[str, List[str]]]) -> Dict[str, Union[str, List[str]]]:
        for phrase, target in value.items():
            text = " ".join(str(phrase).split()).lower()
            if not text:
                raise ValueError("empty nickname phrase")
            if not _CJK.search(text) and text.split(" ", 1)[0] not in NICKNAME_LEADS:
                raise ValueError(f"nickname {phrase!r} must start with an article or possessive "
                                 f"(e.g. 'the {text}' or 'my {text}') to avoid false positives")
            names = [target] if isinstance(target, str) else list(target)
            if not names or any(not str(n).strip() for n in names):
                raise ValueError(f"nickname {phrase!r} names no skill")
        return value

    @field_validator("thresholds")
    @classmethod
    def _thresholds(cls, value: Dict[str, float]) -> Dict[str, float]:
        for name, th in value.items():
            if not -1.0 <= float(th) <= 3.0:
                raise ValueError(f"threshold for skill {name!r} must be between -1 and 3 (fused score: "
                                 f"cosine + lexical_weight x lexical; it replaces inject_z for that skill)")
        return value
