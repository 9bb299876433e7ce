"""The host adapter: the module that touches Hermes internals.

It reads and writes an agent's tool surface and answers registry questions; finding the
live ``AIAgent`` (no 0.19.0 hook receives it) is ``host_agents``, the doctor's mechanism
detection ``host_probe``, both beside it. Everything it returns is plain data for the pure
core (``surface``, ``catalog``, ``router``). If Hermes changes shape, these are the files to
fix, and ``diagnostics.py`` checks each of these touch points on the installed Hermes.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

# ``mechanisms`` (the doctor's per-mechanism detection) lives beside this adapter, same boundary.
from .host_probe import TOOLS_LOCK_MODULES, Mechanism, mechanisms  # noqa: F401
from .host_agents import is_background_fork, is_subagent
from .surface import BRIDGE_TOOLS, Capture, tool_name

_MAX_STATIC_OWNERS = 3


# -- registry ----------------------------------------------------------------------
def owner_of(name: str) -> Optional[str]:
    from tools.registry import registry

    return registry.get_toolset_for_tool(name)


def owners_for(names: Iterable[str]) -> Dict[str, Optional[str]]:
    from tools.registry import registry

    return {n: registry.get_toolset_for_tool(n) for n in names}


def known_toolsets() -> frozenset:
    """Every toolset name Hermes knows in this process (static, registry and plugin
    toolsets, and their aliases), whether or not this agent has it: what a rule may name."""
    import toolsets as hermes_toolsets

    from tools.registry import registry

    return frozenset(hermes_toolsets.get_toolset_names()) | frozenset(registry.get_registered_toolset_names()) \
        | frozenset(registry.get_registered_toolset_aliases())


def owner_nowait(name: str) -> Optional[str]:
    """``owner_of`` without the registry lock, for the fail-closed ``pre_tool_call`` path: a
    plain read of the registry's name -> entry dict (a single dict read is atomic; Hermes
    replaces entries, it never edits one in place). None when that dict is not there."""
    from tools.registry import registry

    tools = getattr(registry, "_tools", None)
    entry = tools.get(name) if isinstance(tools, dict) else None
    toolset = getattr(entry, "toolset", None)
    return toolset if isinstance(toolset, str) else None


def is_registered(name: str) -> bool:
    from tools.registry import registry

    return registry.get_entry(name) is not None




def static_members(toolsets: Iterable[str]) -> Dict[str, Tuple[str, ...]]:
    """Tool names Hermes resolves for each toolset name (composites and registry merges)."""
    import toolsets as hermes_toolsets

    from tools.registry import registry

    out: Dict[str, Tuple[str, ...]] = {}
    for ts in toolsets:
        try:
            members = tuple(hermes_toolsets.resolve_toolset(ts))
        except Exception:
            members = ()
        owners = {registry.get_toolset_for_tool(n) for n in members} - {ts, None}
        # A platform bundle that shares a registry toolset's name (``hermes-yuanbao``) lists
        # the whole core surface; only leaf sets like ``browser`` (+ browser-cdp) widen it.
        out[ts] = members if len(owners) <= _MAX_STATIC_OWNERS else ()
    return out




def toolset_descriptions(names: Iterable[str]) -> Dict[str, str]:
    import toolsets as hermes_toolsets

    out = {}
    for name in names:
        try:
            out[name] = (hermes_toolsets.get_toolset(name) or {}).get("description") or ""
        except Exception:
            out[name] = ""
    return out


MCP_PREFIX = "mcp-"


_HERMES_PACKAGES = ("tools.", "agent.", "hermes_cli.", "gateway.", "model_tools")


def is_dynamic_toolset(name: Optional[str]) -> bool:
    """An MCP server's or a plugin's toolset: registered at run time, in no static table, by
    code that is not Hermes's own (``browser-cdp`` is registry-only but built in)."""
    if not name or name == "router":
        return False
    if name.startswith(MCP_PREFIX):
        return True
    import toolsets as hermes_toolsets

    from tools.registry import registry

    if name in hermes_toolsets.TOOLSETS:
        return False
    for tool in registry.get_tool_names_for_toolset(name):
        module = getattr(getattr(registry.get_entry(tool), "handler", None), "__module__", "") or ""
        if module.startswith(_HERMES_PACKAGES):
            return False
    return True


def short_tool_name(name: str, toolset: str) -> str:
    """``mcp__github__list_pull_requests`` -> ``list_pull_requests`` (the name users and the
    integration's docs use); plugin tool names are already short."""
    if toolset.startswith(MCP_PREFIX) and name.startswith("mcp__"):
        parts = name.split("__", 2)
        return parts[2] if len(parts) == 3 else name
    return name


def dynamic_toolsets(agent: Any) -> List[Any]:
    """Every dynamic toolset the agent may use, deferred ones included (with tool_search
    active their schemas are behind the bridge, but the session can still use them): read
    from Hermes's own un-deferred definitions for the agent's enabled toolsets."""
    import model_tools

    from .dynamic_index import DynamicToolset

    defs = model_tools.get_tool_definitions(enabled_toolsets=getattr(agent, "enabled_toolsets", None),
                                            disabled_toolsets=getattr(agent, "disabled_toolsets", None),
                                            quiet_mode=True, skip_tool_search_assembly=True) or []
    grouped: Dict[str, List[Tuple[str, str]]] = {}
    for d in defs:
        name = tool_name(d)
        owner = owner_of(name)
        if is_dynamic_toolset(owner):
            fn = d.get("function", d)
            grouped.setdefault(owner, []).append((short_tool_name(name, owner), str(fn.get("description") or "")))
    return [DynamicToolset(ts, ts[len(MCP_PREFIX):] if ts.startswith(MCP_PREFIX) else ts, tuple(tools))
            for ts, tools in grouped.items()]


def available_by_owner(owners: Iterable[str]) -> Dict[str, Tuple[str, ...]]:
    """Tools of each toolset that pass Hermes's availability checks on this machine."""
    from tools.registry import registry

    out = {}
    for ts in owners:
        names = set(registry.get_tool_names_for_toolset(ts))
        try:
            defs = registry.get_definitions(names, quiet=True)
            out[ts] = tuple(sorted(tool_name(d) for d in defs))
        except Exception:
            out[ts] = tuple(sorted(names))
    return out


def ordinary_definitions(agent: Any, toolsets: Iterable[str]) -> List[dict]:
    """Hermes-processed definitions of ``toolsets`` within the agent's own enabled scope
    (never wider than what the host would have built for it), for the no-authority append."""
    import model_tools

    wanted = set(toolsets)
    enabled = getattr(agent, "enabled_toolsets", None)
    if enabled is not None:
        members = static_members(enabled)
        wanted &= set(enabled) | {owner_of(t) for names in members.values() for t in names}
    if not wanted:
        return []
    defs = model_tools.get_tool_definitions(enabled_toolsets=sorted(wanted), quiet_mode=True,
                                            skip_tool_search_assembly=True) or []
    return [d for d in defs if owner_of(tool_name(d)) in wanted]


def dispatcher_worker() -> Optional[bool]:
    """Hermes's own answer to "is this a dispatcher-owned kanban worker?": lifecycle mode
    on and orchestrator mode off (``tools/kanban_tools.py``)."""
    from tools import kanban_tools as kt

    return bool(kt._check_kanban_mode()) and not kt._check_kanban_orchestrator_mode()


def raw_names(agent: Any) -> Optional[Tuple[str, ...]]:
    """The agent's tool names straight from ``agent.tools`` (None when unreadable)."""
    try:
        return tuple(tool_name(t) for t in agent.tools)
    except Exception:
        return None


def is_direct(agent: Any) -> bool:
    """A top-level agent: not a delegated child, review fork, cron or curator run."""
    return not is_subagent(agent) and not is_background_fork(agent) \
        and getattr(agent, "platform", None) not in ("cron", "curator", "subagent") \
        and not getattr(agent, "_parent_session_id", None)


# -- the agent's surface --------------------------------------------------------------
def capture(agent: Any, tools: Any = None, valid: Any = None) -> Capture:
    """The agent's surface (or ``tools``, a list standing in for it) as plain data."""
    if tools is None:
        tools, valid = agent.tools, agent.valid_tool_names
    names = tuple(tool_name(t) for t in (tools or []))
    deferred = deferred_by_owner(agent, names) if set(BRIDGE_TOOLS) & set(names) else {}
    return Capture(tools=tools, valid_tool_names=valid, names=names, owners=owners_for(names), deferred=deferred)


def deferred_by_owner(agent: Any, shown: Iterable[str]) -> Dict[str, Tuple[str, ...]]:
    """Per toolset, the tools the host put behind tool_search for this agent: its build
    before tool_search assembly (the scope ``tool_call`` may reach) minus what it shows.
    Only asked when the bridge is in the surface, so a host without deferral (0.19.0's
    default) never pays for it."""
    import model_tools

    try:
        defs = model_tools.get_tool_definitions(enabled_toolsets=getattr(agent, "enabled_toolsets", None),
                                                disabled_toolsets=getattr(agent, "disabled_toolsets", None),
                                                quiet_mode=True, skip_tool_search_assembly=True) or []
    except Exception:
        return {}
    visible = set(shown) | set(BRIDGE_TOOLS)
    out: Dict[str, List[str]] = {}
    for name in (tool_name(d) for d in defs):
        owner = owner_of(name) if name and name not in visible else None
        if owner:
            out.setdefault(owner, []).append(name)
    return {owner: tuple(names) for owner, names in out.items()}


@contextmanager
def surface_lock() -> Iterator[None]:
    """Publish under the lock Hermes's own MCP refresh uses, so readers never see a half-swap
    (``tools.mcp_tool_agent`` upstream, ``tools.mcp_tool`` in 0.19.0)."""
    lock = None
    for name in TOOLS_LOCK_MODULES:
        mod = sys.modules.get(name)
        lock = getattr(mod, "_agent_tools_lock", None) if mod is not None else None
        if lock is not None:
            break
    if lock is None:
        yield
        return
    with lock:
        yield




def estimate_tokens(tools: Optional[List[dict]]) -> int:
    """Hermes's own schema estimate, on a private copy so its id()-keyed cache can't lie."""
    from agent.model_metadata import _TOOLS_TOKENS_CACHE, _estimate_tools_tokens_rough

    probe = list(tools or [])
    try:
        return int(_estimate_tools_tokens_rough(probe))
    finally:
        try:
            _TOOLS_TOKENS_CACHE.pop(id(probe), None)
        except Exception:
            pass


def hermes_home() -> Optional[Path]:
    """Hermes's own home resolution (honours profile and the gateway's per-profile
    override); None when Hermes cannot say."""
    try:
        from hermes_constants import get_hermes_home

        return Path(get_hermes_home())
    except Exception:
        return None


def hook_callback_timeout_s() -> float:
    """Hermes's normalised ``plugins.hook_callback_timeout`` (newer hosts; 0 = no limit)."""
    try:
        from hermes_cli.config import load_config

        raw = (load_config().get("plugins") or {}).get("hook_callback_timeout", 30)
        value = float(raw)
    except Exception:
        value = 30.0
    if value < 0:
        value = 30.0
    return min(value, 600.0)


def persist_pin(agent: Any, names: Iterable[str]) -> bool:
    """Re-pin the session's tool names where the host pins them (current Hermes writes
    ``agent.tools`` names to ``sessions.tool_names`` on every rebuild, which would pin our
    narrowed list and our ``request_toolset``). Best-effort; False where there is no pin."""
    if sys.modules.get("tools.mcp_tool_agent") is None:
        return False
    db = getattr(agent, "_session_db", None)
    update = getattr(db, "update_session_tool_names", None)
    session_id = getattr(agent, "session_id", None)
    if update is None or not session_id:
        return False
    try:
        update(session_id, list(names))
        return True
    except Exception:
        return False
