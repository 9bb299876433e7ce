"""The deterministic rule classifier: the router's main, free and predictable path.

Why rules first: they cost nothing, answer in microseconds and can be read and reviewed as
data (``policy/rules/*.yaml``). Why they abstain so readily: a wrong narrow on a request
that must run a command, write a file, schedule, touch a device or send a message is the
worst outcome the router has, while abstaining only costs tokens. So the flow is

1. guards that decide whether to route at all (empty, long, negated requests abstain);
2. every intent whose patterns match contributes its toolsets (compound requests get the
   union, and intents encode implied needs: "fix the failing test" -> file + terminal);
3. inside a definitional question ("what does 'file' mean in git?") domain words are
   dropped as near misses unless the intent answers questions (weather, prices);
4. with no intent left, a whole-message capability question or chit-chat (the phrase list,
   or the learned model's chit-chat output), or work the learned model is sure needs no
   toolset, narrows to the floor surface; a request the model is sure of one toolset for
   narrows to the model's whole plausible set (``learned reading``); anything else abstains
   (``vague`` / ``no_rule_matched``).
"""

from __future__ import annotations

import copy
import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from .coverage import COMPANIONS_FILE, COVERAGE_FILE, Coverage, mask_content
from .decision import Decision, full_surface
from .normalize import CJK as _CJK, cantonese, fold
from .learned import CHITCHAT, NO_TOOLS, PRIMARY, READING_INTENT, WEIGHTS_FILE, LearnedModel
from .prefilter import Filtered, Gate, LiteralScanner
from .paths import shipped
from .rules_schema import GUARDS_FILE, GuardFile, IntentFile, IntentRule, PolicyError
from .rules_schema import node_line as _node_line, read as _read, validate as _validate

log = logging.getLogger("hermes_token_router")

# Punctuation trimmed before whole-message checks (after NFKC, full-width forms are ASCII).
_EDGE = " \t\r\n!?.,;:~'\"`()[]{}<>*_-…。、“”‘’「」『』（）【】《》~"
# Whole-message guards (vague, chit-chat, capability) only describe short messages; skipping
# them for longer ones keeps the slow tail of classification down.
_SHORT = 80
# Between repeated chit-chat phrases ("hi, thanks!!", "谢谢，太棒了").
# punctuation, and emoji: "cheers 🙏" and "早上好☀️" are still whole chit-chat messages
_FILLER = r"[\s,.!?;:~'\"…、。\-—()～\u2600-\u27bf\ufe0f\U0001f300-\U0001faff]*"
# A message naming a file or a path is about that file, so the learned "needs no toolset" and
# chit-chat readings never narrow it ("how many words are in report.pdf?" needs file tools).
_NAMES_FILE = re.compile(r"[\w-]\.(?:pdf|docx?|xlsx?|pptx?|csv|tsv|txt|md|json|ya?ml|py|js|ts|html?|png|jpe?g|gif|"
                         r"webp|mp4|mov|mp3|wav|m4a|zip|log|sql|ipynb)\b|(?:^|\s)(?:~|\.{1,2})?/\w[\w.-]*/")


# --------------------------------------------------------------------------- matching


def normalize(text: str) -> str:
    """NFKC folds full-width forms ("ｇｉｔ", "？") so one pattern serves both scripts; quotes,
    invisible characters and look-alike letters are folded too (``normalize.fold``), and
    written Cantonese reads as Mandarin (``normalize.cantonese``)."""
    t = fold(text)
    return t if t.isascii() else cantonese(t)


def _join(patterns: Sequence[str]) -> Optional[str]:
    return "|".join(f"(?:{p})" for p in patterns) or None


def _compile(patterns: Sequence[str], repeat: bool = False) -> Optional[re.Pattern]:
    body = _join(patterns)
    if body is None:
        return None
    if repeat:
        body = f"(?:(?:{body}){_FILLER})+"
    return re.compile(body)  # text is lower-cased already; IGNORECASE defeats prefix scans




class _Bilingual:
    """English patterns run on every message (Chinese users type "git commit" too); Chinese
    patterns run only when the message has CJK text, so their unanchored Latin fragments
    can never fire inside English words."""

    __slots__ = ("en", "zh", "en_parts", "zh_parts")

    def __init__(self, en: Optional[re.Pattern], zh: Optional[re.Pattern],
                 en_parts: Optional[Filtered] = None, zh_parts: Optional[Filtered] = None):
        self.en, self.zh = en, zh
        self.en_parts, self.zh_parts = en_parts, zh_parts

    @classmethod
    def build(cls, en: Sequence[str], zh: Sequence[str], repeat: bool = False) -> Optional["_Bilingual"]:
        if not en and not zh:
            return None
        # Searches go pattern by pattern behind literal prefilters (the latency budget);
        # whole-message matches use one joined pattern.
        return cls(_compile(en, repeat=repeat), _compile(zh, repeat=repeat),
                   Filtered(en) if en and not repeat else None, Filtered(zh) if zh and not repeat else None)

    def search(self, t: str, cjk: bool, present: Optional[Set[str]] = None) -> Optional[re.Match]:
        if self.en_parts is not None:
            m = self.en_parts.search(t, present)
        else:
            m = self.en.search(t) if self.en is not None else None
        if m is None and cjk:
            if self.zh_parts is not None:
                m = self.zh_parts.search(t, present)
            elif self.zh is not None:
                m = self.zh.search(t)
        return m

    def fullmatch(self, t: str, cjk: bool) -> bool:
        if self.en is not None and self.en.fullmatch(t):
            return True
        return bool(cjk and self.zh is not None and self.zh.fullmatch(t))


@dataclass(frozen=True)
class _Intent:
    name: str
    toolsets: Tuple[str, ...]
    confidence: float
    answers_questions: bool
    rx: _Bilingual
    unless: Optional[Filtered]
    rules_out: Tuple[str, ...] = ()


class RuleSet:
    """Compiled rules. Immutable after ``load``; ``classify`` is thread-safe."""

    toolsets: FrozenSet[str]

    def __init__(self, guards: GuardFile, intents: Sequence[Tuple[str, IntentRule]],
                 coverage: Optional[Coverage] = None, learned: Optional[LearnedModel] = None):
        self.coverage = coverage
        self.learned = learned
        self._max_chars = guards.max_chars
        self._conf = guards.confidence
        g = guards
        self._negation = _Bilingual.build(g.negation.en, g.negation.zh)
        self._definitional = _Bilingual.build(g.definitional.en, g.definitional.zh)
        self._vague = _Bilingual.build(g.vague.en, g.vague.zh)
        self._chitchat = _Bilingual.build(g.chitchat.en, g.chitchat.zh, repeat=True)
        self._capability = _Bilingual.build(g.capability.en, g.capability.zh)
        self._intents: Tuple[_Intent, ...] = tuple(
            _Intent(rule.name, tuple(rule.toolsets), rule.confidence, rule.answers_questions,
                    _Bilingual.build(rule.en, rule.zh), Filtered(rule.unless) if rule.unless else None,
                    tuple(rule.rules_out))
            for _, rule in intents)
        self.toolsets = frozenset(ts for i in self._intents for ts in i.toolsets)
        # toolset -> (file, line) of its first mention, for ``check_toolsets``
        self.toolset_sites: Dict[str, Tuple[str, int]] = {}
        self.intent_names = tuple(i.name for i in self._intents)
        # One pass finds every literal the intent and guard patterns test for; the gate then
        # names the few intents that can match at all (the latency budget).
        guards_rx = [b for b in (self._negation, self._definitional) if b is not None]
        self._scanner = LiteralScanner(
            s for f in [p for i in self._intents for p in (i.rx.en_parts, i.rx.zh_parts, i.unless)]
            + [p for b in guards_rx for p in (b.en_parts, b.zh_parts)] if f is not None for s in f.literals)
        self._gate = Gate([(i.rx.en_parts, i.rx.zh_parts) for i in self._intents])

    # -- loading

    def without_learned(self) -> "RuleSet":
        """The same rules without the learned second opinion (benchmarks compare both)."""
        clone = copy.copy(self)
        clone.learned = None
        return clone

    def with_flat_learned(self) -> "RuleSet":
        """The same rules with the learned model's unpriced, single threshold."""
        clone = copy.copy(self)
        clone.learned = self.learned.flat() if self.learned is not None else None
        return clone

    @classmethod
    def load(cls, policy_dir: Path, learned: Optional[Path] = None) -> "RuleSet":
        """Load ``guards.yaml`` plus every other ``*.yaml`` (intent files) in ``policy_dir``;
        ``learned`` names a weights file for the second opinion (missing or corrupt: rules
        only, one warning)."""
        try:
            rules = cls._load(Path(policy_dir))
        except PolicyError as exc:
            log.error("token-router rules: %s (router stays hands-off)", exc)
            raise
        if learned is not None:
            rules.learned = LearnedModel.load(learned)
        return rules

    @classmethod
    def _load(cls, policy_dir: Path) -> "RuleSet":
        if not policy_dir.is_dir():
            raise PolicyError(str(policy_dir), 1, "(dir)", "rules folder not found",
                              "point at policy/rules (it holds guards.yaml and intent files)")
        guards_path = policy_dir / GUARDS_FILE
        if not guards_path.is_file():
            raise PolicyError(GUARDS_FILE, 1, "(file)", "missing", "restore policy/rules/guards.yaml")
        guards = _validate(GuardFile, guards_path)
        intents: List[Tuple[str, IntentRule]] = []
        sites: Dict[str, Tuple[str, int]] = {}
        seen: Dict[str, str] = {}
        for path in sorted(policy_dir.glob("*.yaml")):
            if path.name == GUARDS_FILE:
                continue
            parsed = _validate(IntentFile, path)
            _, node = _read(path)
            for idx, rule in enumerate(parsed.intents):
                if rule.name in seen:
                    raise PolicyError(path.name, _node_line(node, ("intents", idx, "name")),
                                      f"intents[{idx}].name", f"duplicate intent {rule.name!r} "
                                      f"(also in {seen[rule.name]})", "give each intent a unique name")
                seen[rule.name] = path.name
                intents.append((path.name, rule))
                for j, ts in enumerate(rule.toolsets):
                    sites.setdefault(ts, (path.name, _node_line(node, ("intents", idx, "toolsets", j))))
        if not intents:
            raise PolicyError(str(policy_dir), 1, "(dir)", "no intent files",
                              "add at least one *.yaml with 'intents:'")
        # Whole-request coverage lives beside the rules folder (policy/coverage.yaml).
        rules = cls(guards, intents, Coverage.load(policy_dir.parent))
        rules.toolset_sites = sites
        return rules

    def check_toolsets(self, known: FrozenSet[str]) -> Optional[PolicyError]:
        """The first toolset a rule names that the host does not know, as an error naming
        file and line (a typo such as ``fiel`` would otherwise narrow to almost nothing)."""
        for name, (file, line) in sorted(self.toolset_sites.items(), key=lambda s: s[1]):
            if name not in known:
                return PolicyError(file, line, "toolsets", f"unknown toolset {name!r}",
                                   "use a toolset name Hermes has (hermes tools list)")
        return None

    # -- classification

    def classify(self, text: str, shares: Optional[Mapping[str, float]] = None) -> Decision:
        """Never raises: any internal error abstains (full surface). ``shares``: the live
        surface's share of schema tokens per toolset, which prices the learned additions."""
        start = time.perf_counter()
        try:
            decision = self._classify(text, shares)
        except Exception as exc:  # pragma: no cover - defensive: rules must never break a turn
            decision = full_surface(f"error:{type(exc).__name__}", source="rules")
        return decision.with_latency((time.perf_counter() - start) * 1000.0)

    def _full(self, reason: str, intent: str = "unknown", confidence: float = 0.0) -> Decision:
        return Decision("full", (), intent, confidence, "rules", reason)

    def _classify(self, text: str, shares: Optional[Mapping[str, float]] = None) -> Decision:
        if not isinstance(text, str) or not text.strip():
            return self._full("empty")
        if len(text) > self._max_chars:
            return self._full("long_message")
        t = normalize(text)
        cjk = _CJK.search(t) is not None
        present = self._scanner.present(t)
        if self._negation is not None and self._negation.search(t, cjk, present):
            return self._full("negated", intent="negated")

        core = t.strip(_EDGE)
        short = len(core) <= _SHORT
        if short and self._vague is not None and self._vague.fullmatch(core, cjk):
            return self._full("vague", intent="vague")

        cov = self.coverage
        if cov is not None and cov.capability_question(core, cjk, asked="?" in t or "吗" in t):
            return Decision("narrow", (), "capability_inquiry", self._conf.capability, "rules",
                            "capability question")

        hits = self._hits(t, cjk, present=present)
        question = self._definitional is not None and self._definitional.search(t, cjk, present) is not None
        if hits and question:
            kept = [h for h in hits if h[0].answers_questions]
            if not kept:
                return self._full(f"near_miss:{hits[0][0].name}", intent="question")
            hits = kept

        if not hits:
            if short and self._capability is not None and self._capability.fullmatch(core, cjk):
                return Decision("narrow", (), "capability_inquiry", self._conf.capability, "rules",
                                "capability question")
            if short and self._chitchat is not None and self._chitchat.fullmatch(core, cjk):
                return Decision("narrow", (), "chitchat", self._conf.chitchat, "rules", "chit-chat")
            reading = self.learned.unexplained(t, shares) if self.learned is not None else None
            kind = reading[0] if reading is not None else None
            if kind in (CHITCHAT, NO_TOOLS) and _NAMES_FILE.search(t):
                kind = None
            if kind == CHITCHAT:
                return Decision("narrow", (), "chitchat", self._conf.chitchat, "rules", "learned chit-chat")
            if kind == NO_TOOLS:
                return Decision("narrow", (), "no_tools", self._conf.no_tools, "rules", "learned no-toolset work")
            if kind == PRIMARY and not question:
                return Decision("narrow", reading[1], READING_INTENT, self._conf.learned, "rules",
                                f"learned reading {reading[2]}")
            if question:
                return self._full("question", intent="question")
            return self._full("no_rule_matched")

        toolsets: Dict[str, None] = {}
        names: Dict[str, None] = {}
        confidence = 0.0
        for intent, _, _ in hits:
            names.setdefault(intent.name, None)
            for ts in intent.toolsets:
                toolsets.setdefault(ts, None)
            confidence = max(confidence, intent.confidence)
        # Intent names only: the matched words are the user's text, which is never logged.
        reason = "matched " + ", ".join(i.name for i, _, _ in hits)
        clauses: Tuple[Tuple[str, str], ...] = ()
        if cov is not None:
            clauses, extra, unexplained = self._cover(cov, t, cjk, hits, toolsets, present)
            for intent in extra:
                names.setdefault(intent.name, None)
                for ts in intent.toolsets:
                    toolsets.setdefault(ts, None)
            if unexplained and cov.mode == "abstain":
                d = self._full(f"unexplained_clause:{unexplained[0]}", intent="+".join(names))
                return Decision(d.action, d.toolsets, d.intent, d.confidence, d.source, d.reason, clauses=clauses)
            for action in unexplained:
                for ts in cov.widen.get(action, ()):
                    toolsets.setdefault(ts, None)
            if unexplained:
                reason += "; widened for " + ", ".join(unexplained)
            added = cov.with_companions(toolsets)
            if added:
                reason += "; companions " + ", ".join(added)
        if self.learned is not None:
            ruled_out = frozenset(ts for intent, _, _ in hits for ts in intent.rules_out)
            verdict, extra_ts, note = self.learned.second_opinion(t, tuple(toolsets), shares, ruled_out)
            if verdict == "abstain":
                return Decision("full", (), "+".join(names), 0.0, "rules", f"learned_disagrees:{note}",
                                clauses=clauses)
            if verdict == "union":
                toolsets.update(dict.fromkeys(extra_ts))
                reason += f"; learned {note}"
        return Decision("narrow", tuple(sorted(toolsets)), "+".join(names), confidence, "rules", reason,
                        clauses=clauses)

    def _hits(self, t: str, cjk: bool, only: Sequence[str] = (), present: Optional[Set[str]] = None
              ) -> List[Tuple[_Intent, str, Tuple[int, int]]]:
        """Every intent that matches (``only``: among those emitting one of these toolsets),
        with its word and span. ``present``: the scanner's literals of ``t`` or of a text
        containing it. Platform and product intents read the message with quoted, listed
        and pasted content blanked out (blanking can join new literals: they scan directly)."""
        cov = self.coverage
        masked: Optional[str] = None
        hits: List[Tuple[_Intent, str, Tuple[int, int]]] = []
        can = self._gate.candidates(present) if present is not None else None
        for k, intent in enumerate(self._intents):
            if only and not any(ts in only for ts in intent.toolsets):
                continue
            text, lits = t, present
            if cov is not None and intent.name in cov.content_sensitive:
                if masked is None:
                    masked = mask_content(t)
                text, lits = masked, (present if masked is t else None)
            if lits is not None and k not in can:  # blanking can join new literals: no gate
                continue
            m = intent.rx.search(text, cjk, lits)
            if m and not (intent.unless is not None and intent.unless.search(t, present)):
                hits.append((intent, m.group(0).strip(), m.span()))
        return hits

    def _cover(self, cov: Coverage, t: str, cjk: bool, hits, toolsets: Dict[str, None],
               present: Optional[Set[str]] = None):
        """Explain each clause: by an intent matched inside it, by an intent matched when the
        clause is read alone, or by an action the routed toolsets already carry. Returns the
        clause table, the intents found inside clauses, and the unexplained actions."""
        parts = cov.split(t, cjk)
        if len(parts) < 2:
            return (), [], []
        table: List[Tuple[str, str]] = []
        extra: List[_Intent] = []
        unexplained: List[str] = []
        have = dict(toolsets)
        for c in parts:
            by = [i.name for i, _, (s, e) in hits if s < c.end and e > c.start]
            if by:
                table.append((c.text.strip(), "+".join(dict.fromkeys(by))))
                continue
            action = cov.action(c.text, cjk, asked=t.startswith("?", c.end))
            if action is None:
                table.append((c.text.strip(), "-"))
                continue
            explains = cov.actions.get(action, ())
            if any(ts in have for ts in explains):
                table.append((c.text.strip(), f"{action} (routed toolsets)"))
                continue
            # Read the clause alone, with the intents that could carry its action.
            inner = [h[0] for h in self._hits(c.text, cjk, explains, present)]
            if inner:
                extra.extend(inner)
                for i in inner:
                    have.update(dict.fromkeys(i.toolsets))
                table.append((c.text.strip(), "+".join(i.name for i in inner)))
            else:
                unexplained.append(action)
                have.update(dict.fromkeys(cov.widen.get(action, ())))
                label = "widened" if cov.mode == "widen" else "unexplained"
                table.append((c.text.strip(), f"{label}:{action}"))
        return tuple(table), extra, list(dict.fromkeys(unexplained))


# --------------------------------------------------------------------------- shipped rules

_cache_lock = threading.Lock()
# folder -> (stamp, the rules or the error they failed with): a broken file is reported once
# and not re-read (and re-checked) on every turn until it changes.
_cache: Dict[str, Tuple[Tuple[Tuple[str, float], ...], Any]] = {}


def _stamp(folder: Path) -> Tuple[Tuple[str, float], ...]:
    beside = [folder.parent / n for n in (COVERAGE_FILE, COMPANIONS_FILE, WEIGHTS_FILE)]
    return tuple((p.name, p.stat().st_mtime_ns)
                 for p in sorted(folder.glob("*.yaml")) + [b for b in beside if b.is_file()])


def default_rules() -> RuleSet:
    """The shipped rules (``policy/rules``), reloaded when any file's mtime changes."""
    folder = shipped("policy") / "rules"
    try:
        stamp = _stamp(folder) if folder.is_dir() else ()
    except OSError:
        stamp = ()
    key = str(folder)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == stamp:
            if isinstance(cached[1], PolicyError):
                raise cached[1]
            return cached[1]
        try:
            rules = RuleSet.load(folder, learned=folder.parent / WEIGHTS_FILE)
        except PolicyError as exc:
            _cache[key] = (stamp, exc)
            raise
        _cache[key] = (stamp, rules)
        return rules


class HostFit:
    """Whether the shipped rules can be used against this host's toolsets (the router stays
    hands-off when not). A failing set is re-checked on each call, since an MCP toolset may
    register later, but logged once per rule set and problem; a passing set is not checked
    again until the rules reload."""

    def __init__(self) -> None:
        self._checked: Tuple[Any, Optional[str]] = (None, None)  # (rule set, its problem)

    def problem(self, known_toolsets: Callable[[], FrozenSet[str]]) -> Optional[str]:
        """Why the rules cannot be used (a load error, or a toolset the host lacks), or None."""
        try:
            rules = default_rules()
        except PolicyError as exc:
            return str(exc)  # default_rules already logged it
        checked, logged = self._checked
        if checked is rules and logged is None:
            return None
        error = rules.check_toolsets(known_toolsets())
        problem = str(error) if error is not None else None
        if problem and (checked is not rules or logged != problem):
            log.error("hermes-token-router rules: %s (router stays hands-off)", problem)
        self._checked = (rules, problem)
        return problem
