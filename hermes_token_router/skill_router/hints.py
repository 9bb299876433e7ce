"""The hint tier: a compact list of candidate skills and how to load each.

Why hints: a single gate that must be both precise and complete fails on real skill sets
(issue 13). Below the injection threshold the router names the top candidates instead of
loading them, at about 40-60 tokens per skill, and the model loads the one that fits.
The load instruction names ``skill_view`` when Hermes serves the skill, and the router's
``skill_load`` tool when Hermes has it disabled (``skills trim`` or ``skills.disabled``).
"""

from __future__ import annotations

import html
from typing import Iterable, Sequence

from .scan import SkillEntry

LOAD_TOOL = "skill_load"
HINT_OPEN = "<skill-hints>"
HINT_CLOSE = "</skill-hints>"
MAX_DESC_CHARS = 150  # ~35 tokens; with the name and the load call a line stays under ~60


def safe_name(name: str) -> str:
    """A skill name made safe inside the injected markup: a name holding ``">`` or
    ``</routed-skills>`` must not close the wrapper and let the file speak as the host."""
    return html.escape(str(name), quote=True).replace("'", "&#x27;")


def one_line(description: str, limit: int = MAX_DESC_CHARS) -> str:
    text = " ".join((description or "").split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(",;:.") + "…"


def load_call(entry: SkillEntry, disabled: Iterable[str]) -> str:
    """How the model loads this skill: Hermes's own tool unless Hermes refuses it."""
    off = set(disabled)
    if off & {entry.name, entry.qualified_name}:
        return f'{LOAD_TOOL}(name="{safe_name(entry.name)}")'
    return f'skill_view(name="{safe_name(entry.qualified_name)}")'


def render(entries: Sequence[SkillEntry], disabled: Iterable[str]) -> str:
    """The hint block (empty string for no entries). Names are escaped: they come from files."""
    if not entries:
        return ""
    disabled = set(disabled)
    lines = [HINT_OPEN, "[hermes-token-router: skills that may fit this request, not loaded. "
             "If one fits, load it before answering; otherwise ignore this list.]"]
    for e in entries:
        lines.append(f"- {safe_name(e.name)}: {safe_name(one_line(e.description))} — load: {load_call(e, disabled)}")
    lines.append(HINT_CLOSE)
    return "\n".join(lines)


def estimate_tokens(text: str) -> int:
    """Hermes's rough estimator (chars/4), the figure its own context accounting uses."""
    return (len(text) + 3) // 4
