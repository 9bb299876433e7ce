"""Notices the user must see in the chat itself, once: an invalid settings file (the router
is hands-off), settings read from the old in-folder location, the skill router on without
an index, and, before the profile has a settings file, where it goes.

Why in the reply: these states silently change what the router does, and a warning in
``agent.log`` is not where a user looks. ``transform_llm_output`` is the one 0.19.0 hook
whose return value reaches the CLI, the TUI and the gateway reply alike; each notice is
prepended once per process (per distinct text), never on a subagent's or curator's turn.
"""

from __future__ import annotations

import os
from typing import Any, List, Optional

from .failopen import WarnOnce, guarded
from .paths import command_line, user_config_path

SKIP_PLATFORMS = frozenset({"subagent", "curator"})
PREFIX = "[hermes-token-router] "


class ChatNotices:
    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.debug = runtime.debug  # the fail-open wall notes errors here
        self._shown = WarnOnce()  # keyed by the note's text: each note once per process

    @guarded("transform_llm_output")
    def transform_llm_output(self, response_text: str = "", session_id: str = "", platform: str = "",
                             **kwargs: Any) -> Optional[str]:
        if platform in SKIP_PLATFORMS or not isinstance(response_text, str):
            return None
        fresh = [n for n in self.pending(session_id) if self._shown.first(n)]
        if not fresh:
            return None
        return "\n".join(PREFIX + n for n in fresh) + "\n\n" + response_text

    def pending(self, session_id: str) -> List[str]:
        state = self.runtime.states.get(session_id)
        cfg, profile, error = self.runtime.settings(state.agent if state is not None else None)
        if error:
            return [f"the router is OFF: its settings are invalid: {error}"]
        notes: List[str] = []
        notice = getattr(self.runtime.config, "notice", None)
        if notice:
            notes.append(notice)
        if not user_config_path().is_file() and not os.environ.get("HERMES_TOKEN_ROUTER_CONFIG"):
            on, _ = self.runtime.enabled(cfg)
            notes.append(f"loaded; routing is {'on' if on else 'off'} for profile {profile}. Its settings file is "
                         f"{user_config_path()} (turn routing on: "
                         f"{command_line('config --set enabled=true', profile)}).")
        if cfg is not None and cfg.skills.enabled and self.runtime.enabled(cfg)[0]:
            status = self.runtime.skills.router(cfg.skills).status()
            if status.get("index_error"):
                notes.append(f"the skill router is on but has no usable index, so it matches nicknames only: "
                             f"{status['index_error']}")
        return notes
