"""Turn matched skills into this turn's context: read, check, bound and de-duplicate.

Why read SKILL.md from disk instead of calling ``skill_view``: it works for skills the user
disabled in Hermes to shrink the prompt index, and costs no model round-trip. Because that
bypasses Hermes's own checks, every path must resolve inside a trusted skills root and the
text goes through Hermes's skills guard before it reaches the model. Any failure here
returns None: the user's turn proceeds exactly as without the router.
"""

from __future__ import annotations

import logging
import re
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from . import host
from . import hints as hint_block
from .config import SkillRouterConfig
from .index import IndexStore, default_index_dir
from .matcher import Match, Matcher
from .scan import MAX_SKILL_BYTES, SkillEntry, read_head, scan_skills  # noqa: F401 (MAX_SKILL_BYTES re-exported)

log = logging.getLogger("hermes_token_router.skills")

_LRU_SIZE = 64
# Only the start of a message is matched: a nickname is typed, not buried in a pasted
# megabyte, and matching stays bounded whatever arrives (semantic uses less still).
MAX_QUERY_CHARS = 8000
_NOTE_CHARS = 400  # the loaded-skills note and wrapper tags, kept inside max_total_chars
_FALLBACK_GUARD = re.compile(r"ignore\s+(?:\w+\s+)*(previous|all|above|prior)\s+instructions"
                             r"|do\s+not\s+(?:\w+\s+)*tell\s+(?:\w+\s+)*the\s+user", re.IGNORECASE)


@dataclass(frozen=True)
class Injection:
    text: str
    skills: Tuple[str, ...]  # injected in full (qualified names)
    requires_toolsets: Tuple[str, ...]
    path: str  # "nickname" | "semantic" | "nickname+semantic" | "hint"
    hints: Tuple[str, ...] = ()  # named in the hint block (frontmatter names)
    hint_chars: int = 0  # size of the hint block within ``text``


@dataclass(frozen=True)
class _Loaded:
    body: str
    blocked: Optional[str]  # reason the guard refused it, or None
    truncated: bool = False  # the file goes on past the body read


def guard_findings(path: Path, text: Optional[str] = None) -> List[str]:
    """Prompt-injection findings for one file (or, with ``text``, for the part of it that
    will be injected), via Hermes's skills guard when importable."""
    if text is not None:  # Hermes's guard scans files: give it exactly the head we inject
        with tempfile.TemporaryDirectory(prefix="htr-skill-scan-") as tmp:
            head = Path(tmp) / "SKILL.md"
            head.write_text(text, encoding="utf-8")
            found = host.guard_scan(head, path.name)
    else:
        found = host.guard_scan(path, path.name)
    if found is None:
        if text is None:
            text = path.read_text(encoding="utf-8", errors="replace")
        return [f"injection: {m.group(0)!r}" for m in _FALLBACK_GUARD.finditer(text)]
    return [f"{f.category}/{f.pattern_id} line {f.line}: {f.description}" for f in found
            if f.category == "injection" or f.severity == "critical"]


def _strip_frontmatter(text: str) -> str:
    try:
        fm, body = host.parse_frontmatter(text)
        return body.strip() if fm else text.strip()
    except Exception:
        return text.strip()


_attr = hint_block.safe_name


class SkillRouter:
    """Per-process skill router; one instance serves every session (thread-safe)."""

    def __init__(self, cfg: SkillRouterConfig, index_dir: Optional[Path] = None,
                 store: Optional[IndexStore] = None) -> None:
        self.cfg = cfg
        self.store = store or IndexStore(Path(index_dir or cfg.index_dir or default_index_dir()).expanduser())
        self.matcher = Matcher(cfg, self.store)
        self._lock = threading.Lock()
        self._sessions: Dict[str, Set[Tuple[str, int]]] = {}
        self._lru: "OrderedDict[Tuple[str, int, int], _Loaded]" = OrderedDict()
        self._roots: Optional[List[Path]] = None
        self._live: Optional[Dict[str, SkillEntry]] = None
        self._refused: Set[Tuple[str, int, int]] = set()
        self._disabled: Optional[Tuple[object, frozenset]] = None

    # -- trust boundary ---------------------------------------------------------------------
    def roots(self) -> List[Path]:
        """Configured skills roots (ours + Hermes's), resolved once."""
        if self._roots is None:
            dirs = [Path(d).expanduser() for d in self.cfg.skills_dirs]
            try:
                dirs.extend(host.skill_dirs())
            except Exception as exc:
                log.debug("skill router: Hermes skill dirs unavailable: %s", exc)
            roots = []
            for d in dirs:
                try:
                    roots.append(d.resolve())
                except OSError:
                    continue
            self._roots = roots
        return self._roots

    def safe_path(self, raw: str) -> Optional[Path]:
        """The SKILL.md path if it resolves inside a trusted root, else None (and a warning)."""
        try:
            path = Path(raw)
            if not path.is_absolute() or path.name != "SKILL.md" or ".." in path.parts:
                raise ValueError("not an absolute SKILL.md path")
            real = path.resolve(strict=True)
            for root in self.roots():
                if real.is_relative_to(root) and real != root:
                    return real
            raise ValueError("outside the configured skills directories")
        except (OSError, ValueError) as exc:
            log.warning("skill router: refusing skill path %r: %s", raw, exc)
            return None

    # -- content ----------------------------------------------------------------------------
    def _load(self, path: Path) -> Tuple[Tuple[str, int, int], Optional[_Loaded]]:
        """The skill's head, checked by the guard; None (one warning per file version) when
        the file is refused for its size or type."""
        st = path.stat()
        key = (str(path), st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._lru.get(key)
            if hit is not None:
                self._lru.move_to_end(key)
                return key, hit
            if key in self._refused:
                return key, None
        limit = self.cfg.max_chars
        try:
            head, more = read_head(path, limit)
        except ValueError as exc:
            with self._lock:
                self._refused.add(key)
            log.warning("skill router: not injecting %s: %s", path, exc)
            return key, None
        body = _strip_frontmatter(head)
        truncated = more or len(body) > limit
        body = body[:limit]
        blocked = None
        if self.cfg.scan_content:
            findings = guard_findings(path, head if more else None)
            blocked = "; ".join(findings[:3]) if findings else None
        loaded = _Loaded(body=body, blocked=blocked, truncated=truncated)
        with self._lock:
            self._lru[key] = loaded
            while len(self._lru) > _LRU_SIZE:
                self._lru.popitem(last=False)
        return key, loaded

    def _resolve_live(self, name: str) -> Optional[SkillEntry]:
        """Nickname target lookup when there is no usable index: scan the trusted roots once."""
        if self._live is None:
            try:
                self._live = {}
                for e in scan_skills(self.roots()):
                    for k in (e.name, e.qualified_name, Path(e.path).parent.name):
                        self._live.setdefault(k, e)
            except Exception as exc:
                log.warning("skill router: could not scan skills for nicknames: %s", exc)
        return (self._live or {}).get(name)

    # -- public API -------------------------------------------------------------------------
    def match(self, text: str, no_skill_work: bool = False):
        return self.matcher.match(text, resolve=self._resolve_live, no_skill_work=no_skill_work)

    def context_for_turn(self, session_id: str, user_message: str, no_skill_work: bool = False
                         ) -> Optional[Injection]:
        """The skills this message needs (full text) and the candidates worth naming (hints)
        as turn context, or None. ``no_skill_work``: the tool router read chit-chat or a
        capability question. Never raises."""
        try:
            if not self.cfg.enabled or not user_message or not user_message.strip():
                return None
            if user_message.lstrip().startswith("/"):
                return None  # slash commands are for Hermes, not the model
            result = self.match(user_message[:MAX_QUERY_CHARS], no_skill_work=no_skill_work)
            hinted = self._hints(result.hints, session_id) if self.cfg.hints else None
            injected = self._inject(result.matches, session_id, reserve=hinted.hint_chars if hinted else 0)
            return _combine(injected, hinted)
        except Exception as exc:
            log.warning("skill router: skipped for this turn (%s: %s)", type(exc).__name__, exc)
            return None

    def disabled_in_hermes(self) -> frozenset:
        """Hermes's ``skills.disabled`` names (its skill_view refuses them), re-read when
        config.yaml changes; empty when Hermes is not importable."""
        try:
            st = host.config_path().stat()
            sig = (st.st_mtime_ns, st.st_size)
        except Exception:
            sig = None
        if self._disabled is not None and self._disabled[0] == sig:
            return self._disabled[1]
        try:
            names = host.disabled_skill_names()
        except Exception:
            names = frozenset()
        self._disabled = (sig, names)
        return names

    def _hints(self, matches, session_id: str) -> Optional[Injection]:
        entries = [m.entry for m in matches if self.safe_path(m.entry.path) is not None]
        text = hint_block.render(entries, self.disabled_in_hermes())
        if not text:
            return None
        mark = ("hint", hash(text))
        with self._lock:
            done = self._sessions.setdefault(session_id, set())
            if mark in done:
                return None  # the same block is already in this session's context
            done.add(mark)
        return Injection(text=text, skills=(), requires_toolsets=(), path="hint",
                         hints=tuple(e.name for e in entries), hint_chars=len(text))

    def load_skill(self, name: str) -> Tuple[Optional[str], Optional[SkillEntry], str]:
        """(body, entry, error) for the ``skill_load`` tool: the same index lookup, path
        confinement and skills-guard scan as injection."""
        name = str(name or "").strip()
        index = self.store.get()
        entry = index.lookup(name) if index is not None else None
        entry = entry or self._resolve_live(name)
        if entry is None:
            return None, None, f"no skill named {name!r} in the router's index"
        path = self.safe_path(entry.path)
        if path is None:
            return None, entry, f"skill {name!r} is outside the trusted skills directories"
        _key, loaded = self._load(path)
        if loaded is None:
            return None, entry, f"skill {name!r} was not loaded: its file is too large or not a regular file"
        if loaded.blocked:
            return None, entry, f"skill {name!r} was not loaded: the skills guard flagged it ({loaded.blocked})"
        return loaded.body, entry, ""

    def rewrite_for_gateway(self, text: str, session_key: Optional[str] = None) -> Optional[str]:
        """The gateway message with the skills appended, or None to leave it untouched."""
        inj = self.context_for_turn(session_key or "gateway:" + str(hash(text)), text)
        if inj is None:
            return None
        return f"{text}\n\n{inj.text}"

    def forget_session(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def status(self) -> Dict[str, object]:
        from .embedding import semantic_status

        index = self.store.get()
        ok, detail = semantic_status(self.cfg.backend)
        return {"enabled": self.cfg.enabled, "index_dir": str(self.store.index_dir),
                "index_error": self.store.error, "skills": len(index.entries) if index else 0,
                "semantic": bool(ok and index is not None and index.semantic), "semantic_detail": detail,
                "nicknames": len(self.cfg.nicknames)}

    # -- assembly ---------------------------------------------------------------------------
    def _inject(self, matches: Tuple[Match, ...], session_id: str, reserve: int = 0) -> Optional[Injection]:
        if not matches:
            return None
        blocks: List[str] = []
        names: List[str] = []
        toolsets: List[str] = []
        vias: List[str] = []
        deferred: List[str] = []
        budget = self.cfg.max_total_chars - reserve - _NOTE_CHARS
        with self._lock:
            done = self._sessions.setdefault(session_id, set())
        for m in matches:
            path = self.safe_path(m.entry.path)
            if path is None:
                continue
            key, loaded = self._load(path)
            if loaded is None:
                continue
            if loaded.blocked:
                log.warning("skill router: not injecting %s: skills guard flagged it (%s)", m.entry.name, loaded.blocked)
                continue
            mark = (key[0], hash(loaded.body))
            with self._lock:
                if mark in done:
                    continue  # already in this session's context
            body = loaded.body
            name, qualified = _attr(m.entry.name), _attr(m.entry.qualified_name)
            if loaded.truncated:
                body = (body + f"\n[... truncated at {self.cfg.max_chars} characters; "
                        f"load the rest with {hint_block.load_call(m.entry, self.disabled_in_hermes())} ...]")
            block = f'<skill name="{name}" qualified="{qualified}">\n{body}\n</skill>'
            if len(block) > budget:
                if blocks or budget < 1000:
                    deferred.append(name)
                    continue
                cut = budget - 200
                block = (f'<skill name="{name}" qualified="{qualified}">\n{body[:cut]}\n'
                         f"[... truncated to fit this turn; load the rest with "
                         f"{hint_block.load_call(m.entry, self.disabled_in_hermes())} ...]\n</skill>")
            budget -= len(block)
            blocks.append(block)
            names.append(qualified)
            vias.append(m.via)
            toolsets.extend(t for t in m.entry.requires_toolsets if t not in toolsets)
            with self._lock:
                done.add(mark)
        if not blocks:
            return None
        note = ("[Skills loaded automatically for this request by hermes-token-router: "
                f"{', '.join(names)}. Follow them where relevant; load any other skill with skill_view(name), "
                f"or {hint_block.LOAD_TOOL}(name) if skill_view says it is disabled.")
        if deferred:
            note += f" Also relevant but not loaded (size): {', '.join(deferred)}."
        text = note + "]\n<routed-skills>\n" + "\n".join(blocks) + "\n</routed-skills>"
        path_kind = "nickname+semantic" if len(set(vias)) > 1 else vias[0]
        return Injection(text=text, skills=tuple(names), requires_toolsets=tuple(toolsets), path=path_kind)


def no_skill_work(text: str) -> bool:
    """The tool router's rules read chit-chat or a capability question: no skill work."""
    try:
        from ..rules import default_rules

        return default_rules().classify(text).intent in ("chitchat", "capability_inquiry")
    except Exception:
        return False


def _combine(injected: Optional[Injection], hinted: Optional[Injection]) -> Optional[Injection]:
    if injected is None or hinted is None:
        return injected or hinted
    return Injection(text=injected.text + "\n" + hinted.text, skills=injected.skills,
                     requires_toolsets=injected.requires_toolsets, path=injected.path,
                     hints=hinted.hints, hint_chars=hinted.hint_chars)
