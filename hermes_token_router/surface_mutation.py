"""The surface mutation: plan a session's surface, route it, keep it sticky, grow it, hand
the exact capture back.

Every write to an agent's tool surface happens in this file (recovery's expansions go
through ``install``), each one fenced under the session lock: it is applied only if the
agent still serves the same session and still shows what we last saw, and all of its
fields are written or none (``apply_all_or_nothing``). Slow work (classification,
registry look-ups) is done by the caller before taking the lock.

No Hermes import: what the host knows arrives as arguments -- the capture, the static
toolset members, the catalog text, the token estimator and the lock Hermes's own tool
refresh uses (``host.surface_lock``) -- so the planning, growth and restore code is the
same code the property tests drive on plain data.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import admission, admission_state, catalog
from .config import RouterConfig
from .session_state import RESTORED, ROUTED, SessionState
from .surface import (BRIDGE_TOOLS, ROUTER_TOOL, Capture, fold_onto, grow, names_for_toolsets, select, tool_name,
                      unprunable)

log = logging.getLogger("hermes_token_router")

ALWAYS_KEEP = ("skills_list", "skill_view", "skill_load", ROUTER_TOOL) + BRIDGE_TOOLS
BACKGROUND_REVIEW_TOOLS = ("skill_manage",)
ROUTER_TOOLSET = "router"

Lock = Callable[[], ContextManager[Any]]
Estimate = Callable[[Optional[List[dict]]], int]
NO_LOCK: Lock = contextlib.nullcontext


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


def catalog_owners(capture: Capture) -> List[str]:
    """The toolsets the session's capability catalog describes (the router's own excluded):
    the captured ones, then (sorted) the ones the host put behind tool_search."""
    owners = [o for o in capture.owner_order() if o != ROUTER_TOOLSET]
    return owners + sorted(o for o in capture.deferred if o not in owners and o != ROUTER_TOOLSET)


def build_catalog(capture: Capture, blurbs: dict, available: Mapping[str, Tuple[str, ...]],
                  descriptions: Mapping[str, str], dynamic: Mapping[str, Sequence[str]] = {}) -> str:
    """``available``/``descriptions``: the host's answers for ``catalog_owners(capture)``.
    Deferred toolsets are marked, so the model reaches them through ``tool_call``.
    ``dynamic``: each captured MCP/plugin toolset's short tool names (listed instead of a blurb)."""
    owners = catalog_owners(capture)
    captured = set(capture.owner_order())
    entries = catalog.entries_for(owners, {o: capture.tools_of(o) for o in owners}, available,
                                  {**blurbs, **catalog.dynamic_blurbs(dynamic)}, descriptions, via_search=[o for o in owners if o not in captured])
    bridge = any(capture.owners.get(n) is None and n in BRIDGE_TOOLS for n in capture.names)
    return catalog.render(entries, bridge=bridge)


def plan(capture: Capture, toolsets: Sequence[str], cfg: RouterConfig, *, static: Mapping[str, Iterable[str]],
         catalog_text: str, estimate: Estimate, router_definition: Optional[dict] = None,
         extra_keep: Iterable[str] = ()) -> Plan:
    """The surface a decision asks for: never-prune names, the toolsets' captured members
    (``static``: Hermes's static members of each toolset) and ``extra_keep``."""
    keep = never_prune(capture, cfg) | names_for_toolsets(capture, toolsets, static) | \
        frozenset(n for n in extra_keep if n in set(capture.names))
    definition = router_definition if router_definition is not None else catalog.router_definition(catalog_text)
    tools = select(capture, keep, definition)
    return Plan(capture, keep, tuple(toolsets), tools, definition, catalog_text,
                estimate(capture.tools), estimate(tools))


# -- all or nothing --------------------------------------------------------------------------
_ABSENT = object()


class RollbackFailed(RuntimeError):
    """An assignment failed and at least one rollback step failed too."""


def apply_all_or_nothing(setters: Sequence[Tuple[Any, str, Any]], *,
                         validate: Optional[Callable[[], Optional[str]]] = None,
                         lock: Lock = NO_LOCK) -> None:
    """Run ``setattr(obj, attr, value)`` for each triple; on any failure restore every
    attribute already touched to the exact previous object (or delete it if it did not
    exist), in reverse order, then re-raise. ``validate`` runs before any setter; a
    returned string aborts with ``ValueError`` and nothing is touched."""
    setters = tuple(setters)
    if validate is not None:
        problem = validate()
        if problem:
            raise ValueError(problem)
    with lock():
        previous: List[Tuple[Any, str, Any]] = []
        for obj, attr, _ in setters:  # read everything before writing anything
            previous.append((obj, attr, getattr(obj, attr, _ABSENT)))
        done = 0
        try:
            for obj, attr, value in setters:
                setattr(obj, attr, value)
                done += 1
        except BaseException as exc:
            errors = []
            # Restore the failed one too: a setter may have half-written before raising.
            for obj, attr, old in reversed(previous[:done + 1]):
                try:
                    if old is _ABSENT:
                        if hasattr(obj, attr):
                            delattr(obj, attr)
                    elif getattr(obj, attr, _ABSENT) is not old:
                        setattr(obj, attr, old)
                except Exception as rb:  # keep going: restore as much as possible
                    errors.append(f"{attr}: {type(rb).__name__}")
            if errors:
                raise RollbackFailed(f"assignment failed ({type(exc).__name__}); rollback failed for "
                                     + ", ".join(errors)) from exc
            raise


def _valid_names(tools: Sequence[dict]) -> set:
    return {tool_name(t) for t in tools}


def _publish(agent: Any, state: SessionState, tools: list, valid: set, fields: Dict[str, Any], *, lock: Lock,
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
        apply_all_or_nothing(setters, validate=validate, lock=lock)
    except ValueError as exc:  # the candidate broke the admission contract: nothing was written
        log.warning("hermes-token-router: surface for session %s rejected (%s); left as it was",
                    state.session_id, exc)
        raise Fenced(f"admission: {exc}") from None


def commit_route(state: SessionState, agent: Any, p: Plan, still_valid: Callable[[], bool],
                 envelope: Any = None, *, lock: Lock) -> bool:
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
            "tokens_now": p.tokens_now, "revision": state.revision + 1},
                 lock=lock, captured=p.capture.names, envelope=envelope)
    log.info("surface committed session=%s profile=%s predicted=%s tools=%d toolsets=%s",
             state.session_id, state.profile, state.decision.intent, len(tools), ",".join(p.toolsets) or "-")
    return True


KEPT, REINSTALLED, FOLDED, REBUILT, RENARROWED = "kept", "reinstalled", "folded", "rebuilt", "renarrowed"


def reinstall(state: SessionState, agent: Any, still_valid: Callable[[], bool], envelope: Any = None, *,
              lock: Lock) -> str:
    """The sticky check of a routed session's later turn: ``kept`` (nothing to do),
    ``reinstalled`` (our list was swapped for the capture and is put back), ``folded`` (the
    host rebuilt the *same* surface, e.g. current Hermes's between-turns merge of the pruned
    tools back onto our list: our exact committed list goes back, so the bytes sent do not
    change, and the caller re-pins the session) or ``rebuilt`` (the host's surface really
    changed: the caller captures ``fold_onto(capture, agent.tools)``, plans it, ``renarrow``)."""
    with state.lock:
        if agent.tools is state.committed_tools and agent.valid_tool_names is state.committed_valid:
            return KEPT
        seen = agent.tools
    if seen is not state.capture.tools and not fold_onto(state.capture, seen)[1]:
        return REBUILT
    with state.lock:
        if not still_valid() or agent.tools is not seen or agent.session_id != state.session_id:
            raise Fenced("surface changed during reapply")
        _publish(agent, state, state.committed_tools, state.committed_valid, {},
                 lock=lock, captured=state.capture.names, envelope=envelope)
    return REINSTALLED if seen is state.capture.tools else FOLDED


def renarrow(state: SessionState, agent: Any, p: Plan, still_valid: Callable[[], bool], envelope: Any = None, *,
             lock: Lock, estimate: Estimate, seen: Any = None) -> str:
    """A host-rebuilt surface (``p`` planned on the fresh capture with the session's keep
    set) becomes the new restore target and is narrowed again; a broader rebuilt surface
    never becomes new authority: the plan is clamped to the bound admission. ``seen``: the
    host's list the capture was folded from (default: the capture's own list)."""
    fresh = p.capture
    keep = p.keep
    tools = list(p.tools)
    if envelope is not None and envelope.authority == admission.CAPTURED:
        keep = admission.clamp(envelope, p.keep, fresh.owners) & frozenset(fresh.names)
        tools = select(fresh, keep, p.router_definition)
    with state.lock:
        if not still_valid() or agent.tools is not (fresh.tools if seen is None else seen) \
                or agent.session_id != state.session_id:
            raise Fenced("surface changed during re-narrowing")
        valid = _valid_names(tools)
        _publish(agent, state, tools, valid, {
            "capture": fresh, "keep": keep, "router_definition": p.router_definition,
            "catalog_text": p.catalog_text, "committed_tools": tools, "committed_valid": valid,
            "tokens_full": p.tokens_full, "tokens_now": estimate(tools), "revision": state.revision + 1},
                 lock=lock, captured=fresh.names, envelope=envelope)
    log.info("surface committed session=%s profile=%s predicted=%s tools=%d toolsets=%s (host rebuilt the surface)",
             state.session_id, state.profile, state.decision.intent, len(tools), ",".join(state.loaded_toolsets) or "-")
    return RENARROWED


def install(state: SessionState, agent: Any, names: Iterable[str], toolsets: Sequence[str],
            still_valid: Callable[[], bool], envelope: Any = None, *, lock: Lock,
            estimate: Estimate) -> Tuple[str, ...]:
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
            "revision": state.revision + 1}, lock=lock, captured=state.capture.names, envelope=envelope,
            previous=[tool_name(t) for t in state.committed_tools or []])
    state.tokens_now = estimate(tools)
    log.info("surface committed session=%s profile=%s predicted=%s tools=%d toolsets=%s (expanded: %s)",
             state.session_id, state.profile, state.decision.intent, len(tools),
             ",".join(new_toolsets) or "-", ",".join(added))
    return added


def append_without_authority(agent: Any, session_id: str, definitions: Sequence[dict], *, lock: Lock) -> list:
    """NO_AUTHORITY growth: append admitted ordinary definitions to whatever the agent shows.
    The contamination marker is recorded *before* the write, and the written surface is
    remembered on the agent in the same write, so no later session can capture it as host
    authority (``admission_state.carries_unowned_append``)."""
    names = [tool_name(d) for d in definitions]
    taint = admission_state.record_contamination(agent, session_id, names)
    tools = list(agent.tools) + list(definitions)
    setters = [(agent, "tools", tools), (agent, "valid_tool_names", _valid_names(tools))]
    if taint is not None:
        setters.append((taint, "surface", tools))
    apply_all_or_nothing(setters, lock=lock)
    log.info("surface appended session=%s without host provenance: %s", session_id, ",".join(names))
    return names


def restore(state: SessionState, still_valid: Callable[[], bool] = lambda: True, *, lock: Lock) -> bool:
    """Hand back the exact captured objects. True when the agent now shows the capture
    (or is gone, or the host already replaced our surface with its own). A host that merged
    its rebuild onto our narrowed list (current Hermes) gets that rebuild folded back onto
    the captured order, without our ``request_toolset``; the session pin is set to match."""
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
            apply_all_or_nothing([(agent, "tools", state.capture.tools),
                                  (agent, "valid_tool_names", state.capture.valid_tool_names)], lock=lock)
        elif agent.tools is not state.capture.tools:
            tools, same = fold_onto(state.capture, agent.tools)
            if any(tool_name(t) == ROUTER_TOOL for t in agent.tools) or same:
                back = (state.capture.tools, state.capture.valid_tool_names) if same else (tools, _valid_names(tools))
                apply_all_or_nothing([(agent, "tools", back[0]), (agent, "valid_tool_names", back[1])], lock=lock)
            else:
                log.debug("restore: session=%s surface was replaced by the host; left as the host set it",
                          state.session_id)
        state.phase = RESTORED
        state.revision += 1
    return True
