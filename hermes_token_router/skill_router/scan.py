"""Find skills exactly the way Hermes does, so the router indexes what Hermes would offer.

Why reuse ``agent.skill_utils``: excluded folders, support dirs, external dirs, platform and
environment gates evolve with Hermes; a private copy would drift. Disabled skills are NOT
filtered: routing a skill the user hid from the prompt index is the point.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from . import host

log = logging.getLogger("hermes_token_router.skills")

_TRIGGER_HEAD = re.compile(r"^(#{2,4})\s*(when to use|when to load|use when|triggers?|usage triggers|何时使用|触发条件|触发)\b",
                           re.IGNORECASE)
_HEAD = re.compile(r"^(#{1,6})\s")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_NAMESPACE = re.compile(r"^[A-Za-z0-9_-]+$")
MAX_TRIGGERS = 12


@dataclass
class SkillEntry:
    name: str
    qualified_name: str
    path: str
    description: str
    tags: List[str]
    category: str
    threshold: Optional[float]
    requires_toolsets: List[str] = field(default_factory=list)
    triggers: List[str] = field(default_factory=list)
    root: str = ""
    rows: List[int] = field(default_factory=lambda: [0, 0])

    def to_json(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "SkillEntry":
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def trigger_lines(body: str) -> List[str]:
    """Lines of the "When to use"/"Trigger" sections: the phrasing users actually type."""
    out: List[str] = []
    level = 0  # heading depth of the open trigger section; 0 = outside
    for line in body.splitlines():
        head = _HEAD.match(line)
        if head:
            trig = _TRIGGER_HEAD.match(line.strip())
            if trig:
                level = len(trig.group(1))
            elif level and len(head.group(1)) <= level:
                level = 0
            continue
        if level and line.strip():
            text = _BULLET.sub("", line).strip()
            if text:
                out.append(text[:300])
        if len(out) >= MAX_TRIGGERS:
            break
    return out


def _as_list(value: Any) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    if not isinstance(value, list):
        return []
    return [str(v).strip() for v in value if str(v).strip()]


# A SKILL.md past this is refused unread (one warning): reading and scanning 50 MB inside
# ``pre_llm_call`` held the turn for almost a minute. Below it only the head is read.
MAX_SKILL_BYTES = 4 * 1024 * 1024
# Frontmatter allowance read on top of ``max_chars`` (UTF-8: up to 4 bytes a character).
_HEAD_EXTRA_BYTES = 64 * 1024
# What a scan reads of each SKILL.md: frontmatter and the "When to use" sections sit at the top.
SCAN_HEAD_CHARS = 64 * 1024


def read_head(path: Path, max_chars: int) -> Tuple[str, bool]:
    """(the file's first ``max_chars`` characters plus frontmatter room, whether more
    follows). Refuses what is not a regular file or is over ``MAX_SKILL_BYTES`` before
    reading a byte of it."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > MAX_SKILL_BYTES:
            raise ValueError(f"{st.st_size} bytes is over the {MAX_SKILL_BYTES}-byte limit")
        want = max_chars * 4 + _HEAD_EXTRA_BYTES
        data = os.read(fd, want + 1) if want < st.st_size else os.read(fd, st.st_size + 1)
    finally:
        os.close(fd)
    more = len(data) > want
    text = data[:want].decode("utf-8", errors="replace")
    if more and text.endswith("\ufffd"):
        text = text[:-1]  # a character cut in half at the read boundary
    return text, more


def _entry(skill_file: Path, root: Path) -> Optional[SkillEntry]:
    text, _ = read_head(skill_file, SCAN_HEAD_CHARS)
    fm, body = host.parse_frontmatter(text)
    if not isinstance(fm, dict):
        fm = {}
    if not host.offered_here(fm):
        return None
    rel = skill_file.relative_to(root).parts
    dir_name = rel[-2] if len(rel) >= 2 else skill_file.parent.name
    category = "/".join(rel[:-2]) if len(rel) > 2 else "general"
    name = str(fm.get("name") or dir_name).strip()
    meta = fm.get("metadata") if isinstance(fm.get("metadata"), dict) else {}
    hermes = meta.get("hermes") if isinstance(meta.get("hermes"), dict) else {}
    tags = _as_list(hermes.get("tags") or fm.get("tags"))
    threshold = hermes.get("router_threshold")
    try:
        threshold = float(threshold) if threshold is not None else None
    except (TypeError, ValueError):
        threshold = None
    top = category.split("/", 1)[0]
    qualified = f"{top}:{dir_name}" if category != "general" and _NAMESPACE.match(top) else name
    desc = " ".join(str(fm.get("description") or "").split()).strip("'\"")
    return SkillEntry(name=name, qualified_name=qualified, path=str(skill_file.resolve()), description=desc,
                      tags=tags, category=category, threshold=threshold,
                      requires_toolsets=_as_list(host.required_toolsets(fm)),
                      triggers=trigger_lines(body), root=str(root.resolve()))


def scan_skills(dirs: Optional[Iterable[Path]] = None) -> List[SkillEntry]:
    """Every offerable skill; the first directory wins on a name collision (as in Hermes)."""
    roots = [Path(d).expanduser() for d in dirs] if dirs else host.skill_dirs()
    seen: Dict[str, SkillEntry] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for skill_file in host.skill_files(root):
            try:
                entry = _entry(skill_file, root)
            except Exception as exc:  # one broken skill must not sink the index
                log.warning("skill router: skipping %s: %s", skill_file, exc)
                continue
            if entry is not None and entry.name not in seen:
                seen[entry.name] = entry
    return list(seen.values())


def embedding_texts(entry: SkillEntry) -> List[str]:
    """Several short texts per skill: short queries match one facet better than a blend."""
    words = entry.name.replace("-", " ").replace("_", " ")
    texts = [f"{words}: {entry.description}" if entry.description else words]
    texts.extend(entry.triggers)
    facets = ", ".join([words, *entry.tags, entry.category.replace("/", " ").replace("-", " ")])
    texts.append(facets)
    return texts
