"""The recovery path: a narrowed session never loses a capability it would have had.

Two doors lead here. The model may ask (``request_toolset``), or it may simply call a
pruned tool. In 0.19.0 the only hook that sees a tool call *before* Hermes validates (and
fuzzily "repairs") its name is ``post_api_request``; ``tool_request`` middleware runs after
validation, so it is registered too but only helps hosts that call it earlier. Both doors
resolve names against the session's capture (never the global registry: we only bring
back what the host gave this agent) and call ``session.install``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from . import host
from .state import SessionState
from .surface import ROUTER_TOOL

READY = "READY"
ALREADY_LOADED = "ALREADY_LOADED"
UNKNOWN_TOOLSET = "UNKNOWN_TOOLSET"
UNRESOLVED_TOOL = "UNRESOLVED_TOOL"
NO_AUTHORITY = "NO_AUTHORITY"
NO_AUTHORITY_INVALID_POLICY = "NO_AUTHORITY_INVALID_POLICY"
DENIED_PROTECTED = "DENIED_PROTECTED"


@dataclass
class Resolution:
    toolsets: List[str] = field(default_factory=list)  # resolved toolset names, request order
    names: List[str] = field(default_factory=list)  # captured tool names they bring
    per_request: Dict[str, str] = field(default_factory=dict)  # requested -> toolset or reason
    verdict: Any = None  # the admission result the expansion was held to


def resolve(state: SessionState, requested: Sequence[str]) -> Resolution:
    """Map requested toolset (or tool) names onto the session's capture.

    Exact names win before case folding. A name may also be a tool: its owning toolset is
    loaded. Names the capture cannot serve are reported, never manufactured.
    """
    cap = state.capture
    out = Resolution()
    if cap is None:
        return out
    owners = cap.owner_order()
    by_fold = {o.casefold(): o for o in owners}
    static = host.static_members([r for r in requested if isinstance(r, str)])
    captured = set(cap.names)
    for raw in requested:
        if not isinstance(raw, str) or not raw.strip():
            out.per_request[str(raw)] = UNKNOWN_TOOLSET
            continue
        name = raw.strip()
        toolset: Optional[str] = None
        members: Tuple[str, ...] = ()
        if name in owners:
            toolset, members = name, cap.tools_of(name)
        elif static.get(name) and captured.intersection(static[name]):
            toolset = name
            members = tuple(n for n in cap.names if n in set(static[name]) or cap.owners.get(n) == name)
        elif name.casefold() in by_fold:
            toolset = by_fold[name.casefold()]
            members = cap.tools_of(toolset)
        elif name in captured:
            owner = cap.owners.get(name)
            toolset = owner or name
            members = cap.tools_of(owner) if owner else (name,)
        if toolset is None:
            reason = UNRESOLVED_TOOL if host.is_registered(name) else UNKNOWN_TOOLSET
            out.per_request[name] = reason
            continue
        out.per_request[name] = toolset
        if toolset not in out.toolsets:
            out.toolsets.append(toolset)
        out.names.extend(m for m in members if m not in out.names)
    return out


def outcome(state: SessionState, res: Resolution, added: Sequence[str], request_reason: str) -> Dict[str, Any]:
    failed = {k: v for k, v in res.per_request.items() if v in (UNKNOWN_TOOLSET, UNRESOLVED_TOOL)}
    ok_sets = [t for t in res.toolsets]
    if added:
        reason = READY
    elif ok_sets:
        reason = ALREADY_LOADED
    elif failed:
        reason = next(iter(failed.values()))
    else:
        reason = UNKNOWN_TOOLSET
    result: Dict[str, Any] = {
        "reason": reason,
        "added": list(added),
        "toolsets": ok_sets,
        "denied": [],
        "request_reason": request_reason,
    }
    if failed:
        result["unresolved"] = failed
        cap = state.capture
        if cap is not None:
            result["available_toolsets"] = [o for o in cap.owner_order() if o != "router"]
    return result


def pruned_calls(state: SessionState, agent: Any, called: Iterable[str]) -> List[str]:
    """Owners of called tools that the capture holds but the agent no longer shows."""
    cap = state.capture
    if cap is None:
        return []
    valid = agent.valid_tool_names
    captured = set(cap.names)
    owners: List[str] = []
    for name in called:
        if not isinstance(name, str) or name in valid or name not in captured or name == ROUTER_TOOL:
            continue
        owner = cap.owners.get(name)
        if owner and owner not in owners:
            owners.append(owner)
    return owners


def called_names(assistant_message: Any) -> List[str]:
    calls = getattr(assistant_message, "tool_calls", None)
    if calls is None and isinstance(assistant_message, dict):
        calls = assistant_message.get("tool_calls")
    names = []
    for call in calls or ():
        fn = getattr(call, "function", None)
        if fn is None and isinstance(call, dict):
            fn = call.get("function")
        name = getattr(fn, "name", None) if fn is not None and not isinstance(fn, dict) else (fn or {}).get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def to_json(result: Dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, sort_keys=False)
