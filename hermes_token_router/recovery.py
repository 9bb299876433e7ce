"""The recovery path: a narrowed session never loses a capability it would have had.

Two doors lead here. The model may ask (``request_toolset``), or it may simply call a
pruned tool. In 0.19.0 the only hook that sees a tool call *before* Hermes validates (and
fuzzily "repairs") its name is ``post_api_request``; ``tool_request`` middleware runs after
validation, so it is registered too but only helps hosts that call it earlier. Both doors
resolve names against the session's capture (never the global registry: we only bring
back what the host gave this agent) and call ``surface_mutation.install``. ``Recovery`` is
the runtime's recovery part: it holds the two hooks, the ``tool_request`` middleware and the
``request_toolset`` handler. ``resolve`` and ``expand_session`` take what Hermes knows as
arguments, so they run on plain data too.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import admission, admission_state, host, host_agents, surface_mutation
from .admission import (ALREADY_LOADED, DENIED_PROTECTED, ERROR, NO_AUTHORITY, NO_AUTHORITY_INVALID_POLICY, READY,
                        READY_VIA_TOOL_SEARCH, UNKNOWN_TOOLSET, UNRESOLVED_TOOL)
from .catalog import tool_call_usage
from .failopen import guarded
from .session_state import ROUTED, SessionState
from .surface import ROUTER_TOOL, tool_name

log = logging.getLogger("hermes_token_router")

# The model's request is data from an untrusted source: at most this many names, each
# clipped, so a flood of names cannot make the answer (which goes back into the model's
# context) or the look-ups grow without bound.
MAX_REQUESTED = 32
MAX_NAME_CHARS = 64

@dataclass
class Resolution:
    toolsets: List[str] = field(default_factory=list)  # resolved toolset names, request order
    names: List[str] = field(default_factory=list)  # captured tool names they bring
    per_request: Dict[str, str] = field(default_factory=dict)  # requested -> toolset or reason
    verdict: Any = None  # the admission result the expansion was held to
    deferred: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # requested -> tools behind tool_search


def deferred_for(cap: Any, name: str) -> Tuple[str, ...]:
    """The tools ``name`` (a toolset, or a tool) stands for among those the host deferred
    behind tool_search for this session: reachable, but only through ``tool_call``."""
    deferred = getattr(cap, "deferred", None) or {}
    if name in deferred:
        return tuple(deferred[name])
    folded = {k.casefold(): k for k in deferred}
    if name.casefold() in folded:
        return tuple(deferred[folded[name.casefold()]])
    return (name,) if any(name in tools for tools in deferred.values()) else ()


def via_tool_search(cap: Any, deferred: Dict[str, Tuple[str, ...]]) -> Dict[str, Any]:
    """The answer's ``via_tool_search`` part: per request, the tools and the exact call."""
    call_def = cap.definition("tool_call") if cap is not None else None
    return {req: {"tools": list(tools), "usage": [tool_call_usage(call_def, t) for t in tools]}
            for req, tools in deferred.items()}


def resolve(state: SessionState, requested: Sequence[str], *, static: Mapping[str, Sequence[str]],
            registered: Callable[[str], bool]) -> Resolution:
    """Map requested toolset (or tool) names onto the session's capture.

    Exact names win before case folding. A name may also be a tool: its owning toolset is
    loaded. Names the capture cannot serve are reported, never manufactured. ``static``:
    Hermes's static members of the requested names; ``registered``: is a name a Hermes tool
    (asked only for names the capture cannot serve).
    """
    cap = state.capture
    out = Resolution()
    if cap is None:
        return out
    owners = cap.owner_order()
    by_fold = {o.casefold(): o for o in owners}
    captured = set(cap.names)
    short_owner = {"__" + n.rsplit("__", 1)[1]: cap.owners[n] for n in reversed(cap.names)
                   if n.startswith("mcp__") and n.count("__") >= 2 and cap.owners.get(n)}
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
        elif "__" + name in short_owner:  # a dynamic tool's short name, as the catalog lists it
            toolset = short_owner["__" + name]
            members = cap.tools_of(toolset)
        if toolset is None and deferred_for(cap, name):
            out.per_request[name] = READY_VIA_TOOL_SEARCH
            out.deferred[name] = deferred_for(cap, name)
            continue
        if toolset is None:
            reason = UNRESOLVED_TOOL if registered(name) else UNKNOWN_TOOLSET
            out.per_request[name] = reason
            continue
        out.per_request[name] = toolset
        if cap.deferred.get(toolset):  # the rest of a partly deferred toolset: through tool_call
            out.deferred[name] = tuple(cap.deferred[toolset])
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
    elif res.deferred:
        reason = READY_VIA_TOOL_SEARCH
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
    if res.deferred:
        result["via_tool_search"] = via_tool_search(state.capture, res.deferred)
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


def requested_names(args: Any) -> Tuple[List[str], int, str]:
    """(the requested names, how many were dropped over the cap, the reason text) from
    whatever the model sent: a dict with a list or a string, or nonsense."""
    if not isinstance(args, dict):
        args = {}
    raw = args.get("toolsets")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, (list, tuple)):
        raw = []
    names = list(dict.fromkeys(r.strip()[:MAX_NAME_CHARS] for r in raw if isinstance(r, str) and r.strip()))
    reason = args.get("reason")
    return names[:MAX_REQUESTED], max(0, len(names) - MAX_REQUESTED), (reason if isinstance(reason, str) else "")[:500]


def deny_protected(out: Dict[str, Any], protected: Iterable[str]) -> Dict[str, Any]:
    """A requested toolset the host protects and did not admit is a denial, not an unknown
    name (docs/admission.md): it moves from ``unresolved`` to ``denied_toolsets``, and a
    request that got nothing else answers ``DENIED_PROTECTED``."""
    protected = set(protected)
    unresolved = out.get("unresolved") or {}
    hit = [n for n, why in unresolved.items() if why == UNKNOWN_TOOLSET and n in protected]
    if not hit:
        return out
    out = dict(out)
    rest = {n: why for n, why in unresolved.items() if n not in hit}
    if rest:
        out["unresolved"] = rest
    else:
        out.pop("unresolved", None)
    out["denied_toolsets"] = list(dict.fromkeys(list(out.get("denied_toolsets") or []) + hit))
    if not out.get("added") and not out.get("toolsets"):
        out["reason"] = DENIED_PROTECTED
    return out


def verdict_for(envelope: Optional["admission.Envelope"], names: Sequence[str], owners: Any) -> "admission.AdmitResult":
    """The one admission answer every expansion path shares (route floor, request_toolset,
    pruned-call and tool_request recovery, skill requirements); no bound envelope is no
    authority."""
    if envelope is None:
        return admission.AdmitResult((), tuple(names), NO_AUTHORITY)
    return admission.admit(envelope, names, owners)


def expand_session(state: SessionState, agent: Any, requested: Sequence[str], envelope: Any, *,
                   static: Mapping[str, Sequence[str]], registered: Callable[[str], bool],
                   still_valid: Callable[[], bool], lock: "surface_mutation.Lock",
                   estimate: "surface_mutation.Estimate") -> Tuple[Resolution, Tuple[str, ...]]:
    """Resolve, admit and install one expansion of a routed session; what Hermes knows comes
    in as arguments (``Recovery.expand`` passes the host adapter's answers)."""
    res = resolve(state, requested, static=static, registered=registered)
    verdict = verdict_for(envelope, list(res.names), state.capture.owners if state.capture else None)
    res.verdict = verdict
    added: Tuple[str, ...] = ()
    if verdict.allowed:
        toolsets = [t for t in res.toolsets if t not in verdict.denied_toolsets]
        added = surface_mutation.install(state, agent, list(verdict.allowed), toolsets, still_valid, envelope,
                                         lock=lock, estimate=estimate)
    return res, added


class Recovery:
    """The runtime's recovery part, given the state registry and the runtime's fence
    (``fence(started, state)``: the predicate every write re-checks under the session lock).
    ``post_api_request`` is the only 0.19.0 hook before name validation; ``tool_request``
    helps hosts that run it earlier; ``request_toolset`` is the model's own door."""

    def __init__(self, states: Any, fence: Callable[..., Callable[[], bool]], debug: Any) -> None:
        self.states = states
        self.fence = fence
        self.debug = debug

    def expand(self, state: SessionState, agent: Any, requested: list, via: str,
               started: Optional[float] = None) -> Tuple[Resolution, Tuple[str, ...]]:
        names = [r for r in requested if isinstance(r, str)]
        res, added = expand_session(
            state, agent, requested, admission_state.bound_envelope(agent, state.session_id),
            static=host.static_members(names), registered=host.is_registered,
            still_valid=self.fence(started if started is not None else time.monotonic(), state),
            lock=host.surface_lock, estimate=host.estimate_tokens)
        if added:
            with state.lock:
                for ts in res.toolsets:
                    state.recoveries.append((via, ",".join(added), ts))
        return res, added

    @guarded("post_api_request")
    def post_api_request(self, session_id: str = "", assistant_message: Any = None, **kwargs: Any) -> None:
        state = self.states.get(session_id)
        if state is None:
            return None
        running, _ = host_agents.find_agent(session_id, known=state.agent, turn_id=kwargs.get("turn_id"))
        if running is None or running is not state.agent:
            return None  # another agent's request (the review fork, an evicted agent): not this surface
        with state.lock:
            state.requests += 1
            if state.phase == ROUTED:  # a restored (or full) session sends the full surface: saves nothing
                state.tokens_saved_total += max(0, state.tokens_full - state.tokens_now)
        if state.phase != ROUTED:
            self._recover_without_authority(state, session_id, assistant_message)
            return None
        agent = state.agent
        if agent is None or agent.session_id != session_id:
            return None
        owners = pruned_calls(state, agent, called_names(assistant_message))
        if owners:
            self.expand(state, agent, owners, via="pruned_call")
        return None

    def _recover_without_authority(self, state: SessionState, session_id: str, assistant_message: Any) -> None:
        agent = state.agent
        env = admission_state.bound_envelope(agent, session_id)
        if agent is None or env is None or env.authority != admission.NO_AUTHORITY_MODE:
            return
        missing = [n for n in called_names(assistant_message)
                   if n not in agent.valid_tool_names and host.is_registered(n)]
        owners = sorted({host.owner_of(n) for n in missing} - {None})
        if owners:
            self._append_without_authority(agent, env, owners, "")

    @guarded("tool_request")
    def tool_request(self, tool_name: str = "", session_id: str = "", **kwargs: Any) -> None:
        """For hosts that run ``tool_request`` before name validation (not 0.19.0)."""
        state = self.states.get(session_id)
        if state is None or state.phase != ROUTED or state.agent is None:
            return None
        running, _ = host_agents.find_agent(session_id, known=state.agent, turn_id=kwargs.get("turn_id"))
        if running is None or running is not state.agent:
            return None  # the review fork's (or an evicted agent's) call: not this surface
        owners = pruned_calls(state, state.agent, [tool_name])
        if owners:
            self.expand(state, state.agent, owners, via="tool_request")
        return None

    def request_toolset(self, args: Any = None, **kwargs: Any) -> str:
        """The tool handler: always a JSON answer, whatever the model sent or whatever fails
        (the fail-open wall would answer ``None``, which the host cannot hand to the model)."""
        try:
            return self._request_toolset(args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - fail open, but in the tool's own format
            log.warning("hermes-token-router: request_toolset failed (%s); the tool surface is left as it was",
                        type(exc).__name__)
            self.debug.note("error", hook="request_toolset", error=type(exc).__name__)
            return to_json({"reason": ERROR, "added": [], "toolsets": [], "denied": [], "request_reason": ""})

    def _request_toolset(self, args: Any, **kwargs: Any) -> str:
        session_id = kwargs.get("session_id") or ""
        requested, dropped, reason_text = requested_names(args)
        state = self.states.get(session_id)
        agent, _ = host_agents.find_agent(session_id, known=state.agent if state is not None else None)
        if state is None or state.phase != ROUTED or agent is None:
            out = self._full_surface_answer(agent, requested, reason_text, session_id)
        else:
            res, added = self.expand(state, agent, requested, via="request_toolset")
            out = outcome(state, res, added, reason_text)
            out = admission.annotate(out, res.verdict, added) if res.verdict else out
        env = admission_state.bound_envelope(agent, session_id)
        if env is not None:
            out = deny_protected(out, env.protected_toolsets)
        if dropped:
            out["dropped_names"] = dropped
        return to_json(out)

    def _full_surface_answer(self, agent: Any, requested: list, reason_text: str,
                             session_id: str = "") -> Dict[str, Any]:
        """No narrowing in force: every admitted toolset is already loaded, unless the host
        gave no untouched provenance (append-only ordinary additions) or an invalid policy
        (nothing at all, and no look-ups)."""
        env = admission_state.bound_envelope(agent, session_id)
        if env is not None and env.authority == admission.INVALID_MODE:
            return {"reason": NO_AUTHORITY_INVALID_POLICY, "added": [], "toolsets": [],
                    "denied": list(requested), "request_reason": reason_text}
        if env is not None and env.authority == admission.NO_AUTHORITY_MODE:
            return self._append_without_authority(agent, env, requested, reason_text)
        cap = host.capture(agent) if agent is not None else None
        owners = {o for o in cap.owners.values() if o} if cap is not None else set()
        loaded = [r for r in requested if r in owners]
        deferred = {r: deferred_for(cap, r) for r in requested if r not in owners and deferred_for(cap, r)}
        missing = {r: (UNRESOLVED_TOOL if host.is_registered(r) else UNKNOWN_TOOLSET)
                   for r in requested if r not in owners and r not in deferred}
        reason = ALREADY_LOADED if loaded or not requested else \
            READY_VIA_TOOL_SEARCH if deferred else next(iter(missing.values()))
        out: Dict[str, Any] = {"reason": reason, "added": [], "toolsets": loaded, "denied": [],
                               "request_reason": reason_text}
        if deferred:
            out["via_tool_search"] = via_tool_search(cap, deferred)
        if missing:
            out["unresolved"] = missing
        return out

    def _append_without_authority(self, agent: Any, env: Any, requested: list, reason_text: str) -> Dict[str, Any]:
        """NO_AUTHORITY: keep the current surface, deny protected additions, append ordinary
        definitions; the first append records the immutable contamination marker *before*
        anything is assigned, so the surface can never be captured as authority later."""
        current = {t for t in agent.valid_tool_names}
        defs = [d for d in host.ordinary_definitions(agent, requested) if tool_name(d) not in current]
        verdict = admission.admit(env, [tool_name(d) for d in defs], host.owner_of)
        allowed = [d for d in defs if tool_name(d) in set(verdict.allowed)]
        added = surface_mutation.append_without_authority(agent, env.session_id, allowed,
                                                           lock=host.surface_lock) if allowed else []
        out = {"reason": NO_AUTHORITY, "added": added, "toolsets": sorted({host.owner_of(n) for n in added}),
               "denied": list(verdict.denied), "request_reason": reason_text}
        if verdict.denied_toolsets:
            out["denied_toolsets"] = list(verdict.denied_toolsets)
        return out
