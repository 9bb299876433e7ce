"""Whole-request coverage: every part of a request must be explained before the router narrows.

Why: on fresh requests the router's worst failures were compound ones. One clause was
recognised, the router narrowed with confidence and the other clause's tool was gone
("run the script and post the output to the team chat"). So a message is split into
clauses at English and Chinese connectives and punctuation; a clause that asks for an action
(send, run, book, write a file...) which no matched rule explains either widens the surface
with the action's toolsets or abstains (``unexplained`` in ``policy/coverage.yaml``).

The same file holds two precision aids that need the message's structure rather than its
words: platform names inside quotes, lists or pasted text are content, not requests; and a
yes/no capability question ("can you make images?") is answered by the catalog. Measured
companions (``policy/companions.yaml``) add toolsets the labels say travel together.
Pure: never imports Hermes.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, List, Literal, Optional, Sequence, Tuple

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .rules_schema import Pattern  # the rule files' pattern check: compiles, lower-case, no ReDoS

log = logging.getLogger("hermes_token_router")

COVERAGE_FILE = "coverage.yaml"
COMPANIONS_FILE = "companions.yaml"


class _Lang(BaseModel):
    model_config = ConfigDict(extra="forbid")
    en: List[Pattern] = Field(default_factory=list)
    zh: List[Pattern] = Field(default_factory=list)


class _Action(_Lang):
    name: str
    toolsets: List[str] = Field(min_length=1)   # any of these explains the action
    widen: List[str] = Field(default_factory=list)  # added when unexplained (default: the first)


class CoverageFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: Literal[1]
    split: _Lang
    unexplained: Literal["widen", "abstain"] = "widen"
    actions: List[_Action]
    question: Optional[_Action] = None
    lead: List[Pattern] = Field(default_factory=list)
    content_sensitive: List[str] = Field(default_factory=list)
    capability_question: _Lang = Field(default_factory=_Lang)
    capability_marker: _Lang = Field(default_factory=_Lang)


class _Companion(BaseModel):
    model_config = ConfigDict(extra="allow")   # the measured numbers ride along for review
    when: str
    add: List[str] = Field(min_length=1)


class CompanionsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: Literal[1]
    companions: List[_Companion] = Field(default_factory=list)


def _alt(patterns: Sequence[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


@dataclass(frozen=True)
class Clause:
    start: int
    end: int
    text: str


# Quoted spans, fenced/inline code, and list items or pasted lines: content, not requests.
_QUOTED = re.compile(r'"[^"\n]{1,400}"|“[^”]{1,400}”|「[^」]{1,400}」|『[^』]{1,400}』|《[^》]{1,100}》'
                     r"|(?<![a-z])'[^'\n]{2,200}'(?![a-z])|```.*?(?:```|$)|`[^`\n]{1,200}`", re.S)
_LISTED = re.compile(r"(?m)^\s*(?:[-*•]|\d{1,2}[.)])\s.*$|:(?!//)\s*(?:[^,\n:]{1,40},\s*){2,}[^,\n]{1,40}")
_HAS_CONTENT = re.compile(r"[\"'`“「『《\n]|:(?!//)\s*[^,]{1,40},")


def mask_content(t: str) -> str:
    """The message with quoted, listed and pasted spans blanked (same length, same offsets)."""
    if _HAS_CONTENT.search(t) is None:
        return t
    out = _QUOTED.sub(lambda m: " " * len(m.group(0)), t)
    return _LISTED.sub(lambda m: " " * len(m.group(0)), out)


class Coverage:
    """Compiled ``coverage.yaml`` plus ``companions.yaml``. Immutable; thread-safe."""

    def __init__(self, spec: CoverageFile, companions: Optional[CompanionsFile] = None):
        self.mode = spec.unexplained
        self._split_en = re.compile(_alt(spec.split.en)) if spec.split.en else None
        self._split_zh = re.compile(_alt(spec.split.en + spec.split.zh)) if spec.split.zh else self._split_en
        lead = _alt(spec.lead) if spec.lead else ""
        self.actions: Dict[str, Tuple[str, ...]] = {a.name: tuple(a.toolsets) for a in spec.actions}
        self.widen: Dict[str, Tuple[str, ...]] = {a.name: tuple(a.widen or a.toolsets[:1]) for a in spec.actions}
        en = [f"(?P<{a.name}>{_alt(a.en)})" for a in spec.actions if a.en]
        zh = [f"(?P<{a.name}>{_alt(a.zh)})" for a in spec.actions if a.zh]
        self._act_en = re.compile(f"^\\s*(?:{lead})(?:{'|'.join(en)})") if en else None
        self._act_zh = re.compile("|".join(zh)) if zh else None
        q = spec.question
        self._q_en = re.compile(f"^\\s*(?:{_alt(q.en)})") if q is not None and q.en else None
        self._q_zh = re.compile(_alt(q.zh)) if q is not None and q.zh else None
        if q is not None:
            self.actions[q.name] = tuple(q.toolsets)
            self.widen[q.name] = tuple(q.widen or q.toolsets[:1])
        self._question = q.name if q is not None else None
        self.content_sensitive: FrozenSet[str] = frozenset(spec.content_sensitive)
        cq = spec.capability_question
        self._cap_en = re.compile(_alt(cq.en)) if cq.en else None
        self._cap_zh = re.compile(_alt(cq.zh)) if cq.zh else None
        cm = spec.capability_marker
        self._mark_en = re.compile(_alt(cm.en)) if cm.en else None
        self._mark_zh = re.compile(_alt(cm.zh)) if cm.zh else None
        self.companions: Tuple[Tuple[str, Tuple[str, ...]], ...] = tuple(
            (c.when, tuple(c.add)) for c in (companions.companions if companions else ()))

    @classmethod
    def load(cls, policy_dir: Path) -> Optional["Coverage"]:
        """``None`` (whole-message routing only, one warning) when the file is absent or bad."""
        path = Path(policy_dir) / COVERAGE_FILE
        if not path.is_file():
            return None
        try:
            spec = CoverageFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
            comp_path = Path(policy_dir) / COMPANIONS_FILE
            comps = (CompanionsFile.model_validate(yaml.safe_load(comp_path.read_text(encoding="utf-8")))
                     if comp_path.is_file() else None)
            return cls(spec, comps)
        except (OSError, yaml.YAMLError, ValidationError, re.error) as exc:
            log.warning("token-router: %s unusable (%s); routing whole messages only",
                        path.name, str(exc).replace("\n", " ")[:300])
            return None

    # -- structure

    def split(self, t: str, cjk: bool) -> List[Clause]:
        rx = self._split_zh if cjk else self._split_en
        out: List[Clause] = []
        pos = 0
        if rx is not None:
            for m in rx.finditer(t):
                if m.start() > pos:
                    out.append(Clause(pos, m.start(), t[pos:m.start()]))
                pos = max(pos, m.end())
        if pos < len(t):
            out.append(Clause(pos, len(t), t[pos:]))
        return [c for c in out if c.text.strip()]

    def action(self, clause: str, cjk: bool, asked: bool = False) -> Optional[str]:
        """The action a clause asks for (its verb), or None when it asks for none. A clause
        that is a question about the world (``asked``: followed by '?') is the ``question``
        action: inside a compound request it usually needs a live answer."""
        m = self._act_en.match(clause) if self._act_en is not None else None
        if m is None and cjk and self._act_zh is not None:
            m = self._act_zh.search(clause)
        if m is not None:
            return m.lastgroup
        if self._question is not None:
            if asked and self._q_en is not None and self._q_en.match(clause):
                return self._question
            if cjk and self._q_zh is not None and self._q_zh.search(clause):
                return self._question
        return None

    def capability_question(self, core: str, cjk: bool, asked: bool = False) -> bool:
        """A whole-message yes/no capability question, or a short question (``asked``: the
        message has '?' or 吗) carrying a capability marker and no path."""
        if self._cap_en is not None and self._cap_en.fullmatch(core):
            return True
        if cjk and self._cap_zh is not None and self._cap_zh.fullmatch(core):
            return True
        if not asked or len(core) > 200 or "/" in core:
            return False
        if self._mark_en is not None and self._mark_en.search(core):
            return True
        return bool(cjk and self._mark_zh is not None and self._mark_zh.search(core))

    def with_companions(self, toolsets: Dict[str, None]) -> List[str]:
        """Add the measured companions of the routed toolsets; returns what was added."""
        added: List[str] = []
        for when, add in self.companions:
            if when in toolsets:
                for ts in add:
                    if ts not in toolsets:
                        toolsets[ts] = None
                        added.append(ts)
        return added
