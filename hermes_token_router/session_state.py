"""Per-session router state and the one lock-guarded registry that holds it.

State is keyed by session id and holds the agent only weakly: an evicted gateway agent or
a finished CLI process frees it, and ``StateRegistry`` never grows with the sessions a
gateway has served. Each state carries its own lock; the registry lock is held only for
dictionary operations, so a stalled hook on one session never blocks another.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from .decision import Decision
from .surface import Capture

# Session phases.
ROUTED = "routed"  # narrowed; sticky until the session ends
FULL = "full"  # decided to keep the full surface for this session
RESTORED = "restored"  # narrowed earlier, handed back (router switched off); stays full


@dataclass
class SessionState:
    session_id: str
    profile: str
    agent_ref: Callable[[], Any]
    phase: str
    decision: Decision
    capture: Optional[Capture] = None
    keep: FrozenSet[str] = frozenset()
    loaded_toolsets: Tuple[str, ...] = ()
    router_definition: Optional[dict] = None
    catalog_text: str = ""
    committed_tools: Any = None
    committed_valid: Any = None
    revision: int = 0
    recoveries: List[Tuple[str, str, str]] = field(default_factory=list)  # (via, name, toolset)
    tokens_full: int = 0
    tokens_now: int = 0
    requests: int = 0
    tokens_saved_total: int = 0
    restore_failures: int = 0
    skills_injected: List[str] = field(default_factory=list)
    dynamic_toolsets: Tuple[str, ...] = ()  # MCP/plugin toolsets this session could use (bind time)
    started_at: float = field(default_factory=time.time)
    finalizer: Any = field(default=None, repr=False)
    ledger_mark: Tuple[int, int, int] = (0, 0, 0)  # (requests, tokens saved, recoveries) already written
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def agent(self) -> Any:
        return self.agent_ref()

    @property
    def narrowed(self) -> bool:
        return self.phase == ROUTED


@dataclass(frozen=True)
class Remembered:
    """What a routed session had loaded when its agent was collected (a gateway evicts and
    rebuilds agents mid-session): enough to re-apply the same sticky surface, no objects."""

    decision: Decision
    loaded_toolsets: Tuple[str, ...]


REMEMBERED_MAX = 1024


class StateRegistry:
    def __init__(self, remember_max: int = REMEMBERED_MAX) -> None:
        self._lock = threading.Lock()
        self._by_session: Dict[str, SessionState] = {}
        self._remembered: "OrderedDict[str, Remembered]" = OrderedDict()
        self._remember_max = remember_max

    def remember(self, state: SessionState) -> None:
        if state.phase != ROUTED:
            return
        with self._lock:
            self._remembered[state.session_id] = Remembered(state.decision, tuple(state.loaded_toolsets))
            self._remembered.move_to_end(state.session_id)
            while len(self._remembered) > self._remember_max:
                self._remembered.popitem(last=False)

    def recall(self, session_id: str) -> Optional[Remembered]:
        """A collected agent's sticky surface, once (the rebuilt agent's state replaces it)."""
        with self._lock:
            return self._remembered.pop(session_id, None)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._remembered.pop(session_id, None)

    def get(self, session_id: str) -> Optional[SessionState]:
        with self._lock:
            return self._by_session.get(session_id)

    def put(self, state: SessionState, agent: Any) -> SessionState:
        """Store ``state`` unless another thread stored one first; the winner is returned."""
        with self._lock:
            existing = self._by_session.get(state.session_id)
            if existing is not None:
                return existing
            self._by_session[state.session_id] = state
        self._watch(state, agent)
        return state

    def rebind(self, state: SessionState, agent: Any) -> None:
        state.agent_ref = weakref.ref(agent)
        self._watch(state, agent)

    def _watch(self, state: SessionState, agent: Any) -> None:
        """Evict the state when its agent is collected; one finalizer per state, detached
        when the state leaves, so an agent reused across sessions accumulates none."""
        if state.finalizer is not None:
            state.finalizer.detach()
        try:
            state.finalizer = weakref.finalize(agent, _evict_if_orphaned, weakref.ref(self), state.session_id)
        except TypeError:
            state.finalizer = None

    def pop(self, session_id: str, expected: Optional[SessionState] = None) -> Optional[SessionState]:
        with self._lock:
            current = self._by_session.get(session_id)
            if current is None or (expected is not None and current is not expected):
                return None
            state = self._by_session.pop(session_id)
        if state.finalizer is not None:
            state.finalizer.detach()
        return state

    def sessions(self) -> List[SessionState]:
        with self._lock:
            return list(self._by_session.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_session)


def _evict_if_orphaned(registry_ref: Callable[[], Optional[StateRegistry]], session_id: str) -> None:
    registry = registry_ref()
    if registry is None:
        return
    state = registry.get(session_id)
    if state is not None and state.agent is None:
        if registry.pop(session_id, state) is not None:
            registry.remember(state)  # bounded: a rebuilt agent for this session re-applies it
