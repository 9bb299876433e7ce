"""The skill router as the runtime uses it: one ``SkillRouter`` per skills configuration
(rebuilt when the config changes), the skill injection of a turn, and forgetting a
session's injections when it ends. Any failure here injects nothing and never touches the
tool surface."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Dict, Optional

log = logging.getLogger("hermes_token_router")


class SkillSessions:
    def __init__(self) -> None:
        self._routers: Dict[str, Any] = {}
        self._lock = threading.Lock()

    def router(self, skills_cfg: Any) -> Any:
        """The ``SkillRouter`` for this skills configuration (one live at a time)."""
        key = skills_cfg.model_dump_json()
        with self._lock:
            router = self._routers.get(key)
            if router is None:
                from .inject import SkillRouter

                router = SkillRouter(skills_cfg)
                self._routers = {key: router}
            return router

    def for_turn(self, skills_cfg: Any, session_id: str, text: str) -> Optional[Any]:
        """The turn's ``Injection``, or None (skills off, empty text, or a failure)."""
        if not skills_cfg.enabled or not text.strip():
            return None
        try:
            from .inject import no_skill_work

            return self.router(skills_cfg).context_for_turn(session_id, text, no_skill_work=no_skill_work(text))
        except Exception as exc:
            log.warning("hermes-token-router: skill routing failed (%s); no skill injected", type(exc).__name__)
            return None

    def load(self, active: Any, args: Any) -> str:
        """``skill_load``'s answer (JSON); ``active()`` gives the live SkillRouter or None.
        A failure is a tool error, never an exception in the agent loop."""
        from . import loader

        try:
            return loader.handle(active, args)
        except Exception as exc:
            log.warning("hermes-token-router: skill_load failed (%s: %s)", type(exc).__name__, exc)
            return json.dumps({"error": f"skill_load failed: {type(exc).__name__}"})

    def forget(self, session_id: str) -> None:
        with self._lock:
            routers = list(self._routers.values())
        for router in routers:
            try:
                router.forget_session(session_id)
            except Exception:
                pass
