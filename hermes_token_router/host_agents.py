"""Which live ``AIAgent`` a hook, a command or a recovery is about.

Why a search at all: no 0.19.0 hook receives the agent, and a slash command gets no session,
so the agent is found where Hermes keeps it: in the locals of the frames that run the turn
(this thread's, then every live thread's, for hooks upstream runs on ``hermes-hook-*``
workers), the CLI's reference, the TUI's session record, the gateway's agent cache. Beside
``host.py``, same boundary: the routing path's only other module that reads Hermes objects.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, List, Optional, Tuple

# Frames whose locals hold the agent for each hook (host notes §3): checked first by name.
_AGENT_LOCALS = ("agent", "self", "parent_agent")
_MAX_FRAMES = 64


def is_agent(obj: Any) -> bool:
    cls = type(obj)
    return cls.__name__ == "AIAgent" and hasattr(obj, "tools") and hasattr(obj, "valid_tool_names") \
        and hasattr(obj, "session_id")


def is_background_fork(agent: Any) -> bool:
    """The memory/skill review fork shares its parent's ``session_id``; never route it."""
    return getattr(agent, "_memory_write_origin", None) == "background_review" \
        or getattr(agent, "_persist_disabled", False) is True


def is_subagent(agent: Any) -> bool:
    return (getattr(agent, "_delegate_depth", 0) or 0) >= 1 or getattr(agent, "platform", None) in ("subagent", "curator")


def _agents_in_frames(frame: Any, session_id: str, forks: Optional[List[Any]] = None) -> List[Any]:
    found: List[Any] = []
    depth = 0
    while frame is not None and depth < _MAX_FRAMES:
        f_locals = frame.f_locals
        for key in _AGENT_LOCALS:
            obj = f_locals.get(key)
            if obj is None or not is_agent(obj) or getattr(obj, "session_id", None) != session_id:
                continue
            if is_background_fork(obj):
                if forks is not None and not any(obj is a for a in forks):
                    forks.append(obj)
            elif not any(obj is a for a in found):
                found.append(obj)
        frame = frame.f_back
        depth += 1
    return found


def _turn_of(agent: Any) -> Optional[str]:
    turn = getattr(agent, "_current_turn_id", None)
    return turn if isinstance(turn, str) and turn else None


def _by_turn(agents: List[Any], turn_id: Optional[str]) -> List[Any]:
    """Candidates running the hook's turn, when the host says which turn it is and some
    candidate carries that id; otherwise all of them (a host without turn ids)."""
    if not turn_id:
        return agents
    same = [a for a in agents if _turn_of(a) == turn_id]
    return same if same else agents


def _pick(agents: List[Any], forks: List[Any], turn_id: Optional[str], level: str) -> Tuple[Optional[Any], str]:
    """One level of the search: ("", None) means "nothing here, look further"."""
    if turn_id and any(_turn_of(f) == turn_id for f in forks):
        return None, "background_fork"  # the review fork's own request: never its parent
    agents = _by_turn(agents, turn_id)
    if len(agents) == 1:
        return agents[0], level
    if len(agents) > 1:
        return None, "ambiguous_" + ("stack" if level == "stack" else "threads")
    if forks:
        return None, "background_fork"
    return None, ""


def find_agent(session_id: str, *, explicit: Any = None, known: Any = None,
               turn_id: Optional[str] = None) -> Tuple[Optional[Any], str]:
    """Bind the agent serving ``session_id``; returns (agent or None, how it was found).

    Order: an explicit agent whose session matches; this thread's stack; the stacks of the
    other live threads; the reference we stored for this session; the CLI's agent. A hook
    on a worker thread (upstream runs hooks on ``hermes-hook-*`` threads) has no agent on
    its own stack, and the stored reference may be an evicted agent that is still alive
    while a rebuilt one runs the turn, so live threads are walked before it is trusted.
    Where the host passes ``turn_id``, the agent whose ``_current_turn_id`` matches wins,
    and a stored agent on another turn is not used. The review fork shares its parent's
    session id: a fork on the turn (or the only candidate) binds nothing, never the parent.
    Two distinct matches at one level are ambiguous and bind nothing.
    """
    if not session_id:
        return None, "no_session_id"
    if explicit is not None and is_agent(explicit) and explicit.session_id == session_id \
            and not is_background_fork(explicit):
        return explicit, "explicit"
    forks: List[Any] = []
    own = _agents_in_frames(sys._getframe(1), session_id, forks)
    agent, how = _pick(own, forks, turn_id, "stack")
    if how:
        return agent, how
    others: List[Any] = []
    me = threading.get_ident()
    for ident, frame in sys._current_frames().items():
        if ident == me:
            continue
        for obj in _agents_in_frames(frame, session_id, forks):
            if not any(obj is o for o in others):
                others.append(obj)
    agent, how = _pick(others, forks, turn_id, "thread_stack")
    if how:
        return agent, how
    if known is not None and is_agent(known) and known.session_id == session_id and not is_background_fork(known):
        if turn_id and _turn_of(known) not in (None, turn_id):
            return None, "stale_turn"
        return known, "stored"
    cli = cli_agent()
    if cli is not None and cli.session_id == session_id and not is_background_fork(cli):
        return cli, "cli_ref"
    return None, "not_found"


def cli_agent() -> Optional[Any]:
    """The interactive CLI's agent (used by ``/router``, which gets no session info)."""
    try:
        from hermes_cli.plugins import get_plugin_manager

        ref = getattr(get_plugin_manager(), "_cli_ref", None)
        agent = getattr(ref, "agent", None)
        return agent if is_agent(agent) else None
    except Exception:
        return None


def gateway_cached_agent(gateway: Any, source: Any) -> Optional[Any]:
    """The gateway runner's cached agent for a message source (``_agent_cache``)."""
    try:
        key = gateway._session_key_for_source(source)
        lock = getattr(gateway, "_agent_cache_lock", None)
        cache = getattr(gateway, "_agent_cache", {})
        if lock is not None:
            with lock:
                entry = cache.get(key)
        else:
            entry = cache.get(key)
        agent = entry[0] if isinstance(entry, tuple) else entry
        return agent if is_agent(agent) else None
    except Exception:
        return None


def gateway_session_key(gateway: Any, event: Any) -> Optional[str]:
    """The gateway's own session key for a message (None when it cannot say)."""
    try:
        return gateway._session_key_for_source(event.source) if gateway is not None else None
    except Exception:
        return None


def tui_agent() -> Optional[Any]:
    """The TUI/desktop session's agent for a slash command: the TUI's ``command.dispatch``
    frame holds its ``session`` record (``{"agent": ...}``) while our handler runs."""
    frame = sys._getframe(1)
    depth = 0
    while frame is not None and depth < _MAX_FRAMES:
        record = frame.f_locals.get("session")
        if isinstance(record, dict) and is_agent(record.get("agent")):
            return record["agent"]
        frame = frame.f_back
        depth += 1
    return None
