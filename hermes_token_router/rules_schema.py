"""The rule files under ``policy/rules/``: their pydantic models, and reading one into them.

Rules are data so they can be reviewed, extended and translated without touching code; the
models exist so that a typo in that data fails loudly at load time (with the file, line and
key) instead of silently routing requests to the wrong surface at run time.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, List, Literal, Sequence, Tuple

import yaml
from pydantic import ValidationError

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from .regex_safety import danger

TOOLSET_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
INTENT_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
PROGRAM_NAME = re.compile(r"^[a-z0-9][a-z0-9_.+-]*$")
# An upper-case letter that is not an escape such as \S, \W, \D or \B.
_UPPER_LITERAL = re.compile(r"(?<!\\)[A-Z]")


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression ({exc})") from None
    if not pattern.strip():
        raise ValueError("empty pattern matches everything")
    if _UPPER_LITERAL.search(pattern):
        raise ValueError("patterns run on lower-cased text, so an upper-case letter never matches")
    risk = danger(pattern)
    if risk:
        raise ValueError(f"{risk} (catastrophic backtracking would hang the turn)")
    return pattern


Pattern = Annotated[str, AfterValidator(_compiles)]


def programs_pattern(names: List[str]) -> str:
    """One pattern for a list of program names: each a whole command word (not part of a
    longer name or a path's extension), longest first so "pg_dumpall" is not read as
    "pg_dump"; the lookarounds work beside Chinese characters too, where \\b does not."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    return f"(?<![a-z0-9_.-])(?:{alternatives})(?![a-z0-9_-])"


class IntentRule(BaseModel):
    """One intent: phrases people use for a need, and the toolsets that serve it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    toolsets: List[str] = Field(min_length=1)
    confidence: float = Field(ge=0.0, le=1.0)
    # Facts people ask as questions ("what's the weather?") keep routing inside a
    # definitional question; every other intent is dropped there as a near miss.
    answers_questions: bool = False
    en: List[Pattern] = Field(default_factory=list)
    zh: List[Pattern] = Field(default_factory=list)
    # The intent does not fire when one of these matches (a more specific intent owns it).
    unless: List[Pattern] = Field(default_factory=list)
    # Toolsets a match says the request does not need ("search the code" is not web search):
    # the learned second opinion never adds them to a decision this intent is part of.
    rules_out: List[str] = Field(default_factory=list)
    # Command-line programs whose name in a request means running them ("block it with
    # iptables", "用 openocd 连上板子"): matched as whole command words in either language,
    # so a list of names needs no hand-written regex.
    programs: List[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not INTENT_NAME.match(value):
            raise ValueError("intent names are lower_snake_case")
        return value

    @field_validator("toolsets")
    @classmethod
    def _toolsets(cls, value: List[str]) -> List[str]:
        for name in value:
            if not TOOLSET_NAME.match(name):
                raise ValueError(f"{name!r} is not a toolset name")
        if len(set(value)) != len(value):
            raise ValueError("a toolset is listed twice")
        return value

    @field_validator("programs")
    @classmethod
    def _programs(cls, value: List[str]) -> List[str]:
        for name in value:
            if not PROGRAM_NAME.match(name):
                raise ValueError(f"{name!r} is not a program name as typed at a prompt (lower case, e.g. pg_dump)")
        if len(set(value)) != len(value):
            raise ValueError(f"a program is listed twice: {sorted(n for n in set(value) if value.count(n) > 1)}")
        return value

    @model_validator(mode="after")
    def _has_patterns(self) -> "IntentRule":
        if self.programs:  # en patterns run on every message, Chinese ones included
            self.en.append(programs_pattern(self.programs))
        if not self.en and not self.zh:
            raise ValueError("an intent needs at least one en or zh pattern")
        copies = sorted(set(self.en) & set(self.zh))
        if copies:  # a zh copy of an en pattern can never match where the en one did not
            raise ValueError(f"zh repeats en patterns {copies}: en patterns already run on Chinese "
                             "messages, so delete the zh copy")
        if set(self.rules_out) & set(self.toolsets):
            raise ValueError("rules_out names a toolset the intent emits")
        return self


class IntentFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1]
    intents: List[IntentRule] = Field(min_length=1)


class LangPatterns(BaseModel):
    model_config = ConfigDict(extra="forbid")

    en: List[Pattern] = Field(default_factory=list)
    zh: List[Pattern] = Field(default_factory=list)


class GuardConfidence(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chitchat: float = Field(default=0.95, ge=0.0, le=1.0)
    capability: float = Field(default=0.95, ge=0.0, le=1.0)
    no_tools: float = Field(default=0.95, ge=0.0, le=1.0)  # the learned no-toolset reading
    learned: float = Field(default=0.95, ge=0.0, le=1.0)  # the learned model's own toolsets (no rule matched)


class GuardFile(BaseModel):
    """The checks that decide *whether* to route at all (``guards.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1]
    max_chars: int = Field(default=2000, ge=50, le=100_000)
    confidence: GuardConfidence = Field(default_factory=GuardConfidence)
    negation: LangPatterns      # searched: any hit abstains
    definitional: LangPatterns  # searched: a hit drops intents without answers_questions
    vague: LangPatterns         # whole message
    chitchat: LangPatterns      # whole message, phrases may repeat ("hi, thanks!")
    capability: LangPatterns    # whole message


GUARDS_FILE = "guards.yaml"

# One fix per key; PolicyError appends it so the log line says what to do.
FIXES = {
    "version": "set version: 1",
    "intents": "give a list of intents (name, toolsets, confidence, en/zh patterns)",
    "name": "use a lower_snake_case intent name",
    "toolsets": "list registry toolset names, e.g. [file, terminal]",
    "confidence": "use a number between 0 and 1, e.g. 0.95",
    "answers_questions": "use true or false",
    "en": "use a list of regular expressions (YAML single quotes keep backslashes; no repeat inside a repeat)",
    "zh": "use a list of regular expressions (YAML single quotes keep backslashes; no repeat inside a repeat)",
    "unless": "use a list of regular expressions (no repeat inside a repeat)",
    "rules_out": "list toolset names the intent's match rules out, none of its own toolsets, e.g. [web]",
    "max_chars": "use a whole number between 50 and 100000",
    "negation": "give en/zh pattern lists",
    "definitional": "give en/zh pattern lists",
    "vague": "give en/zh pattern lists",
    "chitchat": "give en/zh pattern lists",
    "capability": "give en/zh pattern lists",
}


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class PolicyError(Exception):
    """A rule file cannot be used. ``str(e)`` is one line naming file, line, key and fix."""

    def __init__(self, file: str, line: int, key: str, problem: str, fix: str):
        self.file, self.line, self.key, self.problem, self.fix = file, line, key, problem, fix
        super().__init__(f"{file}:{line}: {key}: {problem}; fix: {fix}")


# --------------------------------------------------------------------------- reading a rule file
# One parse gives the data and the node tree, so a validation error names the file and line.


def node_line(root: Any, loc: Sequence[Any]) -> int:
    """1-based line of the YAML node at ``loc`` (or of its deepest existing ancestor)."""
    node, line = root, (root.start_mark.line + 1 if root is not None else 1)
    for part in loc:
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == part:
                    nxt = value_node
                    line = key_node.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            nxt = node.value[part]
        if nxt is None:
            break
        node = nxt
        line = node.start_mark.line + 1
    return line


def _key(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(file)"


def _fix_for(loc: Sequence[Any]) -> str:
    for part in reversed(loc):
        if isinstance(part, str) and part in FIXES:
            return FIXES[part]
    return "see docs/rules.md"


def read(path: Path) -> Tuple[Any, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(path.name, 1, "(file)", f"cannot read ({exc})", "make it a readable UTF-8 file")
    try:  # one parse (libyaml when present) gives both the node tree, for line numbers, and the data
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = str(getattr(exc, "problem", None) or exc).replace("\n", " ")
        raise PolicyError(path.name, line, "(yaml)", f"not valid YAML ({problem})",
                          "fix the YAML syntax (quote regexes with single quotes)")
    if not isinstance(data, dict):
        raise PolicyError(path.name, 1, "(file)", "expected a mapping at the top level",
                          "start the file with 'version: 1'")
    return data, node


def validate(model: Any, path: Path) -> Any:
    data, node = read(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err.get("loc", ()))
        msg = err.get("msg", "invalid").replace("\n", " ")
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        raise PolicyError(path.name, node_line(node, loc), _key(loc), msg, _fix_for(loc)) from None
