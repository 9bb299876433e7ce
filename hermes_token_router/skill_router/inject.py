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
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from .config import SkillRouterConfig
from .index import IndexStore, default_index_dir
from .matcher import Match, Matcher
from .scan import SkillEntry, hermes_skill_dirs, scan_skills

log = logging.getLogger("hermes_token_router.skills")

_LRU_SIZE = 64
_FALLBACK_GUARD = re.compile(r"ignore\s+(?:\w+\s+)*(previous|all|above|prior)\s+instructions"
                             r"|do\s+not\s+(?:\w+\s+)*tell\s+(?:\w+\s+)*the\s+user", re.IGNORECASE)


@dataclass(frozen=True)
class Injection:
    text: str
    skills: Tuple[str, ...]
    requires_toolsets: Tuple[str, ...]
    path: str  # "nickname" | "semantic" | "nickname+semantic"


@dataclass(frozen=True)
class _Loaded:
    body: str
    blocked: Optional[str]  # reason the guard refused it, or None


def guard_findings(path: Path) -> List[str]:
    """Prompt-injection findings for one file, via Hermes's skills guard when importable."""
    try:
        from tools.skills_guard import scan_file
    except Exception:
        text = path.read_text(encoding="utf-8", errors="replace")
        return [f"injection: {m.group(0)!r}" for m in _FALLBACK_GUARD.finditer(text)]
    return [f"{f.category}/{f.pattern_id} line {f.line}: {f.description}" for f in scan_file(path, path.name)
            if f.category == "injection" or f.severity == "critical"]


def _strip_frontmatter(text: str) -> str:
    try:
        from agent.skill_utils import parse_frontmatter

        fm, body = parse_frontmatter(text)
        return body.strip() if fm else text.strip()
    except Exception:
        return text.strip()


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

    # -- trust boundary ---------------------------------------------------------------------
    def roots(self) -> List[Path]:
        """Configured skills roots (ours + Hermes's), resolved once."""
        if self._roots is None:
            dirs = [Path(d).expanduser() for d in self.cfg.skills_dirs]
            try:
                dirs.extend(hermes_skill_dirs())
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
    def _load(self, path: Path) -> Tuple[Tuple[str, int, int], _Loaded]:
        st = path.stat()
        key = (str(path), st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._lru.get(key)
            if hit is not None:
                self._lru.move_to_end(key)
                return key, hit
        body = _strip_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        blocked = None
        if self.cfg.scan_content:
            findings = guard_findings(path)
            blocked = "; ".join(findings[:3]) if findings else None
        loaded = _Loaded(body=body, blocked=blocked)
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
    def match(self, text: str):
        return self.matcher.match(text, resolve=self._resolve_live)

    def context_for_turn(self, session_id: str, user_message: str) -> Optional[Injection]:
        """The skills this message needs as turn context, or None. Never raises."""
        try:
            if not self.cfg.enabled or not user_message or not user_message.strip():
                return None
            if user_message.lstrip().startswith("/"):
                return None  # slash commands are for Hermes, not the model
            return self._inject(self.match(user_message).matches, session_id)
        except Exception as exc:
            log.warning("skill router: skipped for this turn (%s: %s)", type(exc).__name__, exc)
            return None

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
    def _inject(self, matches: Tuple[Match, ...], session_id: str) -> Optional[Injection]:
        if not matches:
            return None
        blocks: List[str] = []
        names: List[str] = []
        toolsets: List[str] = []
        vias: List[str] = []
        deferred: List[str] = []
        budget = self.cfg.max_total_chars
        with self._lock:
            done = self._sessions.setdefault(session_id, set())
        for m in matches:
            path = self.safe_path(m.entry.path)
            if path is None:
                continue
            key, loaded = self._load(path)
            if loaded.blocked:
                log.warning("skill router: not injecting %s: skills guard flagged it (%s)", m.entry.name, loaded.blocked)
                continue
            mark = (key[0], hash(loaded.body))
            with self._lock:
                if mark in done:
                    continue  # already in this session's context
            body = loaded.body
            if len(body) > self.cfg.max_chars:
                body = (body[: self.cfg.max_chars] + f"\n[... truncated at {self.cfg.max_chars} characters; "
                        f"load the rest with skill_view('{m.entry.name}') ...]")
            block = f'<skill name="{m.entry.name}" qualified="{m.entry.qualified_name}">\n{body}\n</skill>'
            if len(block) > budget:
                if blocks or budget < 1000:
                    deferred.append(m.entry.name)
                    continue
                cut = budget - 200
                block = (f'<skill name="{m.entry.name}" qualified="{m.entry.qualified_name}">\n{body[:cut]}\n'
                         f"[... truncated to fit this turn; load the rest with skill_view('{m.entry.name}') ...]\n</skill>")
            budget -= len(block)
            blocks.append(block)
            names.append(m.entry.qualified_name)
            vias.append(m.via)
            toolsets.extend(t for t in m.entry.requires_toolsets if t not in toolsets)
            with self._lock:
                done.add(mark)
        if not blocks:
            return None
        note = ("[Skills loaded automatically for this request by hermes-token-router: "
                f"{', '.join(names)}. Follow them where relevant; load any other skill with skill_view(name).")
        if deferred:
            note += f" Also relevant but not loaded (size): {', '.join(deferred)}."
        text = note + "]\n<routed-skills>\n" + "\n".join(blocks) + "\n</routed-skills>"
        path_kind = "nickname+semantic" if len(set(vias)) > 1 else vias[0]
        return Injection(text=text, skills=tuple(names), requires_toolsets=tuple(toolsets), path=path_kind)
