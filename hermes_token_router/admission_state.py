"""What the router remembers about admission, held on each agent, and the hooks that use it.

``admission.py`` decides; this module remembers. Per agent (never process-global) it keeps
one ``AgentSlot``: the envelope bound for the session the agent serves, whether that
session's restore failed (quarantine: a reused agent keeps the old envelope and guard until
the old surface is handed back) and the session's contamination marker. A surface that
received an ordinary append without host authority is also remembered on the agent beyond
its session (``Taint``), so a later session of the same agent can never capture it as host
authority. ``AdmissionBinding`` is the runtime's admission part: it binds envelopes, retries
a quarantined restore and registers the ``pre_tool_call`` guard.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Tuple

from . import admission, guard, host
from .admission import Envelope
from .failopen import WarnOnce

log = logging.getLogger("hermes_token_router")

SLOT_ATTR = "_hermes_token_router_envelope"
TAINT_ATTR = "_hermes_token_router_unowned_append"
# Attaching a slot is check-then-set on the agent's ``__dict__``; one short lock makes it
# atomic across hook threads (held for the dictionary operation only).
_ATTACH_LOCK = threading.Lock()


@dataclass(frozen=True)
class Contamination:
    """Recorded (once, before assignment) when a NO_AUTHORITY session first appends ordinary
    definitions: from then on nothing may capture or promote that surface as authority."""

    session_id: str
    first_names: Tuple[str, ...]


@dataclass
class AgentSlot:
    """``envelope`` belongs to ``envelope.session_id``; ``restore_pending`` is set when that
    session's restore failed, which keeps the envelope (and the guard) alive across a
    reuse of the agent for another session: quarantine."""

    envelope: Envelope
    restore_pending: bool = False
    contamination: Optional[Contamination] = None
    lock: Any = field(default_factory=threading.RLock, repr=False)


@dataclass
class Taint:
    """The agent's first contamination and the surface its latest un-owned append wrote
    (set in the same all-or-nothing write). It outlives the slot: while the agent still
    shows that surface, no session may bind it as captured host authority."""

    marker: Contamination
    surface: Any = None


def slot_of(agent: Any) -> Optional[AgentSlot]:
    try:
        slot = vars(agent).get(SLOT_ATTR)
    except TypeError:
        return None
    return slot if isinstance(slot, AgentSlot) else None


def can_attach(agent: Any) -> bool:
    try:
        vars(agent)
        return True
    except TypeError:
        return False


def bound_envelope(agent: Any, session_id: str) -> Optional[Envelope]:
    """The envelope bound to ``agent`` for ``session_id`` (None for any other session)."""
    slot = slot_of(agent) if agent is not None else None
    if slot is None or slot.envelope.session_id != session_id:
        return None
    return slot.envelope


def envelope_for(agent: Any, session_id: str, build: Callable[[], Envelope]) -> Tuple[Envelope, bool]:
    """(envelope, quarantined). Same agent and session: the same object. A different
    session on an agent whose old restore is pending: the *old* envelope, quarantined.
    Otherwise a new envelope is built once and attached (if the agent takes attributes)."""
    slot = slot_of(agent)
    if slot is not None:
        with slot.lock:
            if slot.envelope.session_id == session_id:
                return slot.envelope, False
            if slot.restore_pending:
                return slot.envelope, True
    envelope = build()
    if can_attach(agent):
        with _ATTACH_LOCK:
            current = slot_of(agent)
            if current is not None and (current.envelope.session_id == session_id or current.restore_pending):
                return current.envelope, current.envelope.session_id != session_id
            vars(agent)[SLOT_ATTR] = AgentSlot(envelope)
    return envelope, False


def mark_restore(agent: Any, session_id: str, ok: bool) -> None:
    """After a session-end restore: success releases the slot, failure keeps it pending."""
    slot = slot_of(agent)
    if slot is None or slot.envelope.session_id != session_id:
        return
    with slot.lock:
        if ok:
            try:
                vars(agent).pop(SLOT_ATTR, None)
            except TypeError:
                pass
        else:
            slot.restore_pending = True


def record_contamination(agent: Any, session_id: str, names: Sequence[str]) -> Optional[Taint]:
    """Call *before* assigning a NO_AUTHORITY append: stores the session's immutable marker
    once and returns the agent's ``Taint``, whose ``surface`` the append's write sets."""
    slot = slot_of(agent)
    if slot is None or slot.envelope.session_id != session_id:
        return None
    with slot.lock:
        if slot.contamination is None:
            slot.contamination = Contamination(session_id, tuple(names))
        with _ATTACH_LOCK:
            taint = vars(agent).get(TAINT_ATTR)
            if not isinstance(taint, Taint):
                taint = vars(agent)[TAINT_ATTR] = Taint(slot.contamination)
        return taint


def carries_unowned_append(agent: Any) -> bool:
    """The agent still shows a surface the router appended to without host authority."""
    try:
        taint = vars(agent).get(TAINT_ATTR)
    except TypeError:
        return False
    return isinstance(taint, Taint) and taint.surface is not None and agent.tools is taint.surface


def has_provenance(agent: Any, session_id: str, committed_elsewhere: Iterable[Any]) -> bool:
    """The agent shows the host's untouched surface: not another live session's narrowed
    list (``committed_elsewhere``) and not a surface carrying an un-owned append."""
    tools = agent.tools
    return not any(c is tools for c in committed_elsewhere) and not carries_unowned_append(agent)


# -- failed restores and quarantine -------------------------------------------------------
RESTORE = "restore"  # the agent still shows our last commit: put the old envelope back
RELEASED = "released"  # the agent already shows the old capture
LEAVE = "leave"  # anything else: touch nothing, warn once


def quarantine_step(agent_tools: Any, committed_tools: Any, capture_tools: Any) -> str:
    """What to do with an agent that still carries a failed restore (by identity only)."""
    if capture_tools is not None and agent_tools is capture_tools:
        return RELEASED
    if committed_tools is not None and agent_tools is committed_tools:
        return RESTORE
    return LEAVE


class AdmissionBinding:
    """The runtime's admission part, given the state registry, the runtime's session end
    (a quarantine retry is a late session end) and the shared once-per-session warning."""

    def __init__(self, states: Any, end_session: Callable[[str, str], None], warn_once: WarnOnce,
                 debug: Any) -> None:
        self.states = states
        self.end_session = end_session
        self.warn_once = warn_once
        self.debug = debug
        # session id -> the agent its envelope is bound on: the guard's lock-free way back to it
        self._bound: "weakref.WeakValueDictionary[str, Any]" = weakref.WeakValueDictionary()
        self._guard_error: Optional[str] = None

    def envelope(self, agent: Any, session_id: str, hook_kwargs: Dict[str, Any]) -> Tuple[Envelope, bool]:
        """Bind one admission envelope per agent and session (held on the agent). The surface
        is read, and the other sessions scanned for provenance, only when binding: a bound
        session reuses its envelope every turn at no cost."""

        def build() -> Envelope:
            others = [s.committed_tools for s in self.states.sessions() if s.session_id != session_id]
            return admission.establish(
                hook_kwargs, agent, host.raw_names(agent), host.owner_of, session_id=session_id,
                task_env=os.environ.get("HERMES_KANBAN_TASK"), dispatcher_reports=host.dispatcher_worker,
                direct=host.is_direct(agent), provenance=has_provenance(agent, session_id, others),
                attachable=can_attach(agent))
        envelope, quarantined = envelope_for(agent, session_id, build)
        self._bound[session_id] = agent
        return envelope, quarantined

    def forget(self, session_id: str) -> None:
        self._bound.pop(session_id, None)

    def retry_quarantine(self, agent: Any, old_session_id: str) -> None:
        old = self.states.get(old_session_id)
        cap = old.capture.tools if old is not None and old.capture is not None else None
        step = quarantine_step(agent.tools, old.committed_tools if old else None, cap)
        if step == RESTORE:
            self.end_session(old_session_id, "quarantine_retry")
        elif step == RELEASED:
            mark_restore(agent, old_session_id, True)
            if old is not None:
                self.states.pop(old_session_id, old)
        elif self.warn_once.first(old_session_id):
            log.warning("hermes-token-router: agent of session %s changed after a failed restore; left untouched",
                        old_session_id)

    def pre_tool_call(self, tool_name: str = "", session_id: str = "", **kwargs: Any) -> Any:
        """The protected-tool guard: block a protected tool the host did not admit, however
        it was reached (e.g. ``tool_call`` through the tool_search bridge).

        Current Hermes runs this on a worker thread and *fails closed*: a timeout or an
        exception blocks the user's tool call, and a callback that timed out is skipped (so
        blocks) for 60 s in every session. So this does O(1) work with no blocking lock: one
        dict read for the session's bound agent, one attribute read for its envelope (a
        quarantined agent keeps its old one), one lock-free registry read for the tool's
        owner. Anything it cannot judge, its own error included, is "no directive"; the
        error is logged by the next ``pre_llm_call`` (``report_guard_error``).
        """
        try:
            agent = self._bound.get(session_id) if session_id else None
            slot = slot_of(agent) if agent is not None else None
            return guard.guard_decision(tool_name, slot.envelope if slot is not None else None, host.owner_nowait)
        except Exception as exc:  # never raise into a fail-closed host
            self._guard_error = f"{type(exc).__name__}: {exc}"
            return None

    def report_guard_error(self) -> None:
        error, self._guard_error = self._guard_error, None
        if error:
            log.warning("hermes-token-router: pre_tool_call guard failed (%s); that call was let through", error)
