"""The hook side of host admission, mixed into ``RouterRuntime``: bind one envelope per
agent and session, retry a quarantined restore, and guard protected tools in
``pre_tool_call``. The contract itself (pure) lives in ``admission`` and ``guard``."""

from __future__ import annotations

import logging
import os
from typing import Any, Dict, Tuple

from . import admission, guard, host
from .failopen import guarded

log = logging.getLogger("hermes_token_router")


class AdmissionHooks:
    def _envelope(self, agent: Any, session_id: str, hook_kwargs: Dict[str, Any]) -> Tuple[Any, bool]:
        """Bind one admission envelope per agent and session (held on the agent). The surface
        is read, and the other sessions scanned for provenance, only when binding: a bound
        session reuses its envelope every turn at no cost."""

        def build() -> Any:
            names = host.raw_names(agent)
            touched = any(s.committed_tools is agent.tools and s.session_id != session_id
                          for s in self.states.sessions())
            return admission.establish(
                hook_kwargs, agent, names, host.owner_of, session_id=session_id,
                task_env=os.environ.get("HERMES_KANBAN_TASK"), dispatcher_reports=host.dispatcher_worker,
                direct=host.is_direct(agent), provenance=not touched, attachable=admission.can_attach(agent))
        return admission.envelope_for(agent, session_id, build)

    def _retry_quarantine(self, agent: Any, old_session_id: str) -> None:
        old = self.states.get(old_session_id)
        cap = old.capture.tools if old is not None and old.capture is not None else None
        step = admission.quarantine_step(agent.tools, old.committed_tools if old else None, cap)
        if step == admission.RESTORE:
            self._end_session(old_session_id, "quarantine_retry")
        elif step == admission.RELEASED:
            admission.mark_restore(agent, old_session_id, True)
            if old is not None:
                self.states.pop(old_session_id, old)
        elif self._warn_once.first(old_session_id):
            log.warning("hermes-token-router: agent of session %s changed after a failed restore; left untouched",
                        old_session_id)

    @guarded("pre_tool_call")
    def pre_tool_call(self, tool_name: str = "", session_id: str = "", **kwargs: Any) -> Any:
        """The protected-tool guard: block a protected tool the host did not admit, however
        it was reached (e.g. ``tool_call`` through the tool_search bridge)."""
        state = self.states.get(session_id)
        agent, _ = host.find_agent(session_id, known=state.agent if state is not None else None)
        slot = admission.slot_of(agent) if agent is not None else None
        return guard.guard_decision(tool_name, slot.envelope if slot is not None else None, host.owner_of)
