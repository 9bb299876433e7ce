"""``skill_load``: the model's way to load a skill Hermes's ``skill_view`` refuses.

Why a tool of our own: after ``skills trim --write`` the trimmed skills are in Hermes's
``skills.disabled`` and ``skill_view`` answers "Skill ... is disabled", yet the router names
them in hints and notes. This tool serves exactly the skills in the router's index, through
the same path confinement and skills-guard scan as injection (``SkillRouter.load_skill``).
It is offered only while the skill router is on, so a router that is off adds nothing.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional

from .hints import LOAD_TOOL

DESCRIPTION = ("Load a skill's full instructions (SKILL.md) by name. Use it for skills named by "
               "hermes-token-router's skill hints, or when skill_view reports a skill as disabled.")
SCHEMA: Dict[str, Any] = {
    "name": LOAD_TOOL,
    "description": DESCRIPTION,
    "parameters": {"type": "object",
                   "properties": {"name": {"type": "string", "description": "the skill's name, as given in the hint"}},
                   "required": ["name"]},
}


def handle(router_for_call: Callable[[], Optional[Any]], args: Dict[str, Any]) -> str:
    """The tool result (JSON). ``router_for_call`` gives the active SkillRouter or None."""
    name = str((args or {}).get("name") or "").strip()
    if not name:
        return json.dumps({"error": "give the skill's name"})
    router = router_for_call()
    if router is None:
        return json.dumps({"error": "the skill router is off; use skill_view"})
    body, entry, error = router.load_skill(name)
    if error:
        return json.dumps({"error": error}, ensure_ascii=False)
    return json.dumps({"name": entry.name, "qualified_name": entry.qualified_name, "content": body},
                      ensure_ascii=False)
