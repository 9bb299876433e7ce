"""``/router on|off|reset|status``: switch and inspect the router with no model call.

Hermes runs plugin slash commands before the model in the CLI, the TUI and the gateways,
and hands the handler only the argument text. The switch is per process (a restart goes
back to config.yaml) and ``HERMES_TOKEN_ROUTER_ENABLED=0`` always wins.

Known limits (docs/compatibility.md): ``off`` hands a narrowed session its captured surface
back once, at its next turn, so tools the host appended to the narrowed list meanwhile are
dropped by that restore; ``on`` never narrows a session that was already handed back.
"""

from __future__ import annotations

import os
from typing import Any, List, Optional

from . import host
from .config import ENV_ENABLED, env_enabled, resolve_profile_name
from .paths import config_path
from .session_state import RESTORED, ROUTED, SessionState

USAGE = "usage: /router on | off | reset | status"


class RouterCommand:
    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    def __call__(self, raw_args: str = "") -> str:
        try:
            return self.run(raw_args)
        except Exception as exc:  # a command must never raise into Hermes
            return f"/router failed ({type(exc).__name__}); the router state is unchanged"

    def run(self, raw_args: str) -> str:
        word = (raw_args or "").strip().lower()
        if word in ("", "status"):
            return self.status()
        if word == "on":
            self.runtime.set_switch(True)
            return self._after("on: sessions not routed yet are routed from their next turn")
        if word == "off":
            self.runtime.set_switch(False)
            return self._after("off: narrowed sessions get their full tool surface back on their next turn")
        if word == "reset":
            self.runtime.set_switch(None)
            return self._after("reset: following config.yaml again")
        return USAGE

    def _after(self, what: str) -> str:
        agent = self._current_agent()
        cfg, _, _ = self.runtime.settings(agent)
        on, source = self.runtime.enabled(cfg)
        note = ""
        if env_enabled() is False and what.startswith(("on", "reset")):
            note = f" (but {ENV_ENABLED}=0 is set and always wins)"
        return f"router {what}. Effective: {'ON' if on else 'OFF'} ({source}){note}"

    def _current_agent(self) -> Any:
        agent = host.cli_agent() or host.tui_agent()
        if agent is not None:
            return agent
        return self.runtime.gateway_agent()

    def status(self) -> str:
        agent = self._current_agent()
        cfg, profile, error = self.runtime.settings(agent)
        on, source = self.runtime.enabled(cfg)
        env = os.environ.get(ENV_ENABLED)
        switch = self.runtime.switch
        lines: List[str] = [
            f"hermes-token-router: {'ON' if on else 'OFF'} (decided by {source})",
            f"  config.yaml: {config_path()}" + (f" INVALID: {error}" if error else
                                                 f" (enabled: {str(cfg.enabled).lower() if cfg else '-'})"),
            f"  environment: {ENV_ENABLED}={env if env is not None else '(unset)'}",
            f"  /router switch: {'(none)' if switch is None else ('on' if switch else 'off')}",
            f"  profile: {profile}",
        ]
        if cfg is not None:
            clf = cfg.classifier
            lines.append(f"  classifier: {'on' if clf.enabled else 'off'}"
                         + (f" ({clf.provider or 'deepseek'}{', ' + clf.model if clf.model else ''})" if clf.enabled else ""))
            lines.append(f"  skill router: {'on' if cfg.skills.enabled else 'off'}")
        state = self.runtime.states.get(agent.session_id) if agent is not None else None
        lines.extend(session_lines(state, agent))
        return "\n".join(lines)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def session_lines(state: Optional[SessionState], agent: Any) -> List[str]:
    """The current session: predicted intent, loaded toolsets, recoveries and the tokens
    saved (Hermes's own ``_estimate_tools_tokens_rough``, per request and summed)."""
    if agent is None:
        return ["  session: none in this process yet"]
    if state is None:
        return [f"  session {agent.session_id}: not routed (full surface, {len(agent.tools or [])} tools)"]
    d = state.decision
    out = [f"  session {state.session_id}: {state.phase} (predicted {d.intent}, source {d.source}, "
           f"confidence {d.confidence:.2f}, {d.reason})"]
    captured = len(state.capture.names) if state.capture is not None else len(agent.tools or [])
    if state.phase == ROUTED:
        out.append(f"    loaded toolsets: {', '.join(state.loaded_toolsets) or '(floor only)'}")
        if state.dynamic_toolsets:
            routed = [t for t in state.loaded_toolsets if t in state.dynamic_toolsets]
            out.append(f"    dynamic toolsets routed: {', '.join(routed) or 'none'} "
                       f"(of {', '.join(state.dynamic_toolsets)})")
        out.append(f"    tools: {len(state.committed_tools or [])} shown of {captured} captured")
    elif state.phase == RESTORED:
        out.append(f"    restored: full surface, {captured} tools handed back; stays full until the session ends")
    else:
        out.append(f"    kept the full surface, {len(agent.tools or [])} tools")
    if state.restore_failures and state.phase == ROUTED:
        out.append(f"    restore pending: {_plural(state.restore_failures, 'failed attempt')}, retried next turn")
    rec = state.recoveries
    out.append(f"    recoveries: {len(rec)}" + (" (" + "; ".join(f"{v}: {ts}" for v, _, ts in rec[-5:]) + ")" if rec else ""))
    per_request = max(0, state.tokens_full - state.tokens_now) if state.phase == ROUTED else 0
    now = state.tokens_now if state.phase == ROUTED else state.tokens_full
    out.append(f"    tool-schema tokens per request (Hermes estimate): {now:,} now vs {state.tokens_full:,} full "
               f"(saves {per_request:,}); saved so far: {state.tokens_saved_total:,} over "
               f"{_plural(state.requests, 'request')}")
    if state.skills_injected:
        out.append(f"    skills injected: {', '.join(state.skills_injected)}")
    return out


__all__ = ["RouterCommand", "USAGE", "resolve_profile_name"]
