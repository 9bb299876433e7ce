"""The surface mutation: route a session, keep it sticky, hand the exact capture back.

Every write to an agent's tool surface happens in this file (recovery's expansions go
through ``install``), each one fenced under the session lock: it is applied only if the
agent still serves the same session and still shows what we last saw. Slow work
(classification, registry look-ups) is done before taking the lock.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, FrozenSet, Iterable, Optional, Sequence, Tuple

from . import admission, catalog, host
from .config import RouterConfig
from .session_state import RESTORED, ROUTED, SessionState
from .surface import ROUTER_TOOL, Capture, grow, names_for_toolsets, select, tool_name, unprunable

log = logging.getLogger("hermes_token_router")

ALWAYS_KEEP = ("skills_list", "skill_view", ROUTER_TOOL)
BACKGROUND_REVIEW_TOOLS = ("skill_manage",)
ROUTER_TOOLSET = "router"


class Fenced(Exception):
    """A mutation was discarded because the agent or session moved on."""


@dataclass(frozen=True)
class Plan:
    capture: Capture
    keep: FrozenSet[str]
    toolsets: Tuple[str, ...]
    tools: list
    router_definition: dict
    catalog_text: str
    tokens_full: int
    tokens_now: int


def never_prune(capture: Capture, cfg: RouterConfig) -> FrozenSet[str]:
    """Kanban workers' lifecycle tools are not listed here: the host admission pins them
    (only for a dispatcher-owned worker, as Hermes itself reports it)."""
    names = list(ALWAYS_KEEP)
    if cfg.keep_background_review:
        names.extend(BACKGROUND_REVIEW_TOOLS)
    return unprunable(capture, names)


def build_catalog(capture: Capture, blurbs: dict) -> str:
    owners = [o for o in capture.owner_order() if o != ROUTER_TOOLSET]
    entries = catalog.entries_for(
        owners,
        {o: capture.tools_of(o) for o in owners},
        host.available_by_owner(owners),
        blurbs,
        host.toolset_descriptions(owners),
    )
    bridge = any(capture.owners.get(n) is None and n in ("tool_search", "tool_call") for n in capture.names)
    return catalog.render(entries, bridge=bridge)


def plan(capture: Capture, toolsets: Sequence[str], cfg: RouterConfig, blurbs: dict, *,
         catalog_text: Optional[str] = None, router_definition: Optional[dict] = None,
         extra_keep: Iterable[str] = ()) -> Plan:
    static = host.static_members(toolsets)
    keep = never_prune(capture, cfg) | names_for_toolsets(capture, toolsets, static) | \
        frozenset(n for n in extra_keep if n in set(capture.names))
    text = catalog_text if catalog_text is not None else build_catalog(capture, blurbs)
    definition = router_definition if router_definition is not None else catalog.router_definition(text)
    tools = select(capture, keep, definition)
    return Plan(capture, keep, tuple(toolsets), tools, definition, text,
                host.estimate_tokens(capture.tools), host.estimate_tokens(tools))


def _valid_names(tools: Sequence[dict]) -> set:
    return {tool_name(t) for t in tools}


def _publish(agent: Any, state: SessionState, tools: list, valid: set, fields: dict, *,
             captured: Sequence[str] = (), envelope: Any = None, previous: Optional[Sequence[str]] = None) -> None:
    """The one write path to an agent's surface: validated against the host's admission
    (when the envelope was bound against the ``captured`` surface the candidate comes from)
    before any setter runs, then all fields or none (an exception mid-way puts every
    touched attribute back to the exact previous object)."""
    setters = [(agent, "tools", tools), (agent, "valid_tool_names", valid)]
    setters += [(state, key, value) for key, value in fields.items()]
    names = [tool_name(t) for t in tools]
    validate = None
    if envelope is not None and tuple(envelope.names) == tuple(captured):
        def validate() -> Optional[str]:
            return admission.check_candidate(envelope, names, previous=previous, extra={ROUTER_TOOL})
    try:
        admission.apply_all_or_nothing(setters, validate=validate, lock=host.surface_lock())
    except ValueError as exc:  # the candidate broke the admission contract: nothing was written
        log.warning("hermes-token-router: surface for session %s rejected (%s); left as it was",
                    state.session_id, exc)
        raise Fenced(f"admission: {exc}") from None


def commit_route(state: SessionState, agent: Any, p: Plan, still_valid: Callable[[], bool],
                 envelope: Any = None) -> bool:
    """Install a first-turn plan, if the agent still shows exactly what we captured."""
    with state.lock:
        if not still_valid() or agent.session_id != state.session_id or agent.tools is not p.capture.tools:
            raise Fenced("agent changed between capture and commit")
        tools = list(p.tools)
        valid = _valid_names(tools)
        _publish(agent, state, tools, valid, {
            "phase": ROUTED, "capture": p.capture, "keep": p.keep, "loaded_toolsets": p.toolsets,
            "router_definition": p.router_definition, "catalog_text": p.catalog_text,
            "committed_tools": tools, "committed_valid": valid, "tokens_full": p.tokens_full,
            "tokens_now": p.tokens_now, "revision": state.revision + 1}, captured=p.capture.names, envelope=envelope)
    log.info("surface committed session=%s profile=%s predicted=%s tools=%d toolsets=%s",
             state.session_id, state.profile, state.decision.intent, len(tools), ",".join(p.toolsets) or "-")
    return True


def reapply(state: SessionState, agent: Any, cfg: RouterConfig, blurbs: dict,
            still_valid: Callable[[], bool], envelope: Any = None) -> str:
    """Keep a routed session sticky. Returns what happened: ``kept`` (nothing to do),
    ``reinstalled`` (our list was swapped for the capture), ``renarrowed`` (the host
    rebuilt the surface: it becomes the new restore target and is narrowed again)."""
    with state.lock:
        if agent.tools is state.committed_tools and agent.valid_tool_names is state.committed_valid:
            return "kept"
        rebuilt = agent.tools is not state.capture.tools
    if not rebuilt:
        with state.lock:
            if not still_valid() or agent.tools is not state.capture.tools:
                raise Fenced("surface changed during reapply")
            _publish(agent, state, state.committed_tools, state.committed_valid, {},
                     captured=state.capture.names, envelope=envelope)
        return "reinstalled"
    fresh = host.capture(agent)
    text = build_catalog(fresh, blurbs)
    same_catalog = text == state.catalog_text
    p = plan(fresh, state.loaded_toolsets, cfg, blurbs, catalog_text=text,
             router_definition=state.router_definition if same_catalog else None,
             extra_keep=state.keep)
    keep = p.keep
    tools = list(p.tools)
    if envelope is not None and envelope.authority == admission.CAPTURED:
        # A broader rebuilt surface never becomes new authority: clamp to the admission.
        keep = admission.clamp(envelope, p.keep, fresh.owners) & frozenset(fresh.names)
        tools = select(fresh, keep, p.router_definition)
    with state.lock:
        if not still_valid() or agent.tools is not fresh.tools or agent.session_id != state.session_id:
            raise Fenced("surface changed during re-narrowing")
        valid = _valid_names(tools)
        _publish(agent, state, tools, valid, {
            "capture": fresh, "keep": keep, "router_definition": p.router_definition,
            "catalog_text": p.catalog_text, "committed_tools": tools, "committed_valid": valid,
            "tokens_full": p.tokens_full, "tokens_now": host.estimate_tokens(tools), "revision": state.revision + 1},
                 captured=fresh.names, envelope=envelope)
    log.info("surface committed session=%s profile=%s predicted=%s tools=%d toolsets=%s (host rebuilt the surface)",
             state.session_id, state.profile, state.decision.intent, len(tools), ",".join(state.loaded_toolsets) or "-")
    return "renarrowed"


def install(state: SessionState, agent: Any, names: Iterable[str], toolsets: Sequence[str],
            still_valid: Callable[[], bool], envelope: Any = None) -> Tuple[str, ...]:
    """Grow a routed session's surface (monotonic); returns the tool names newly shown.

    The union is computed under the session lock against the current keep set, so two
    concurrent expansions can never drop each other's tools.
    """
    with state.lock:
        if state.phase != ROUTED or state.capture is None:
            return ()
        if not still_valid() or agent.session_id != state.session_id:
            raise Fenced("session moved on before expansion")
        if agent.tools is not state.committed_tools:
            raise Fenced("surface is not ours; the next turn re-applies it")
        keep, added = grow(state.keep, names, state.capture)
        new_toolsets = tuple(dict.fromkeys(list(state.loaded_toolsets) + [t for t in toolsets if t]))
        if not added:
            state.loaded_toolsets = new_toolsets
            return ()
        tools = select(state.capture, keep, state.router_definition)
        valid = _valid_names(tools)
        _publish(agent, state, tools, valid, {
            "keep": keep, "loaded_toolsets": new_toolsets, "committed_tools": tools, "committed_valid": valid,
            "revision": state.revision + 1}, captured=state.capture.names, envelope=envelope,
            previous=[tool_name(t) for t in state.committed_tools or []])
    state.tokens_now = host.estimate_tokens(tools)
    log.info("surface committed session=%s profile=%s predicted=%s tools=%d toolsets=%s (expanded: %s)",
             state.session_id, state.profile, state.decision.intent, len(tools),
             ",".join(new_toolsets) or "-", ",".join(added))
    return added


def append_without_authority(agent: Any, session_id: str, definitions: Sequence[dict]) -> list:
    """NO_AUTHORITY growth: append admitted ordinary definitions to whatever the agent shows.
    The contamination marker is recorded *before* the write, so this surface can never be
    captured or promoted as host authority afterwards."""
    names = [tool_name(d) for d in definitions]
    admission.record_contamination(agent, session_id, names)
    tools = list(agent.tools) + list(definitions)
    admission.apply_all_or_nothing([(agent, "tools", tools), (agent, "valid_tool_names", _valid_names(tools))],
                                   lock=host.surface_lock())
    log.info("surface appended session=%s without host provenance: %s", session_id, ",".join(names))
    return names


def restore(state: SessionState, still_valid: Callable[[], bool] = lambda: True) -> bool:
    """Hand back the exact captured objects. True when the agent now shows the capture
    (or is gone, or the host already replaced our surface with its own)."""
    with state.lock:
        if state.phase != ROUTED or state.capture is None:
            return True
        agent = state.agent
        if agent is None:
            state.phase = RESTORED
            return True
        if not still_valid():
            return False
        if agent.tools is state.committed_tools:
            admission.apply_all_or_nothing([(agent, "tools", state.capture.tools),
                                            (agent, "valid_tool_names", state.capture.valid_tool_names)],
                                           lock=host.surface_lock())
        elif agent.tools is not state.capture.tools:
            log.debug("restore: session=%s surface was replaced by the host; left as the host set it",
                      state.session_id)
        state.phase = RESTORED
        state.revision += 1
    return True




def elapsed_ok(started: float, budget_s: Optional[float]) -> Callable[[], bool]:
    """A fence predicate: still within the hook's time budget (None or 0 = unlimited)."""
    if not budget_s:
        return lambda: True
    deadline = started + budget_s
    return lambda: time.monotonic() <= deadline
