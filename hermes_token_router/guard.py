"""The protected-tool guard: a ``pre_tool_call`` decision, pure.

The router only controls ``agent.tools`` / ``agent.valid_tool_names``. Hermes has other
ways to reach a tool: the tool_search bridge's ``tool_call`` unwraps to the real name and
gates it by ``agent.enabled_toolsets`` (not by what the host admitted), plugins may
dispatch directly. ``pre_tool_call`` sees the unwrapped name before any of them run, so the
guard blocks there any tool of a protected toolset (or any pinned name) that is not in
the surface the envelope was bound against.

Documented limits (the call is let through, never guessed at):
* names the registry does not know (remote connector batches such as ``connectors__*``,
  memory-provider and context-engine tools) -- they have no owner to judge;
* a registry look-up that raises.

With an *invalid* policy the guard cannot tell which toolsets are protected, so it blocks
every registered tool outside the bound surface (fail closed); the admission path itself
performs no look-up at all in that case.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from .admission import INVALID_MODE, Envelope

BLOCK = "block"


def _message(tool_name: str, owner: str, why: str) -> str:
    return (f"Blocked by hermes-token-router: the tool '{tool_name}' (toolset '{owner}') {why}. "
            f"It was not admitted to this agent for this session, so it cannot be called here "
            f"(not directly, not through tool_call). Continue with the tools you have.")


def guard_decision(tool_name: Any, envelope: Optional[Envelope],
                   owner_of: Callable[[str], Optional[str]]) -> Optional[Dict[str, str]]:
    """``{"action": "block", "message": ...}`` or ``None`` (let Hermes proceed)."""
    if envelope is None or type(tool_name) is not str or not tool_name:
        return None
    if tool_name in envelope.name_set:
        return None  # the host admitted it to this agent (captured surface)
    try:
        owner = owner_of(tool_name)
    except Exception:
        return None  # documented limit: registry look-up error
    if owner is None or type(owner) is not str:
        return None  # documented limit: unregistered name
    if envelope.authority == INVALID_MODE:
        return {"action": BLOCK, "message": _message(
            tool_name, owner, "is outside the captured surface and the host's admission policy is invalid")}
    if tool_name in envelope.pinned:
        return {"action": BLOCK, "message": _message(
            tool_name, owner, "is pinned by the host but was not present in this agent's surface")}
    if owner in envelope.protected_toolsets:
        return {"action": BLOCK, "message": _message(
            tool_name, owner, "belongs to a protected toolset and is outside the host's admitted ceiling")}
    return None
