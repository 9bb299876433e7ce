"""``/router on|off|reset|status|report|doctor|help``: switch and inspect the router with no
model call.

Hermes runs plugin slash commands before the model in the CLI, the TUI and the gateways,
and hands the handler only the argument text. The switch is per process (a restart goes
back to config.yaml) and ``HERMES_TOKEN_ROUTER_ENABLED=0`` always wins.

Known limits (docs/compatibility.md): ``off`` hands a narrowed session its captured surface
back once, at its next turn, so tools the host appended to the narrowed list meanwhile are
dropped by that restore; ``on`` never narrows a session that was already handed back.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any, List, Optional

from . import host_agents
from .config import ENV_ENABLED, env_enabled, resolve_profile_name
from .paths import command_line, config_path, user_config_path
from .session_state import RESTORED, ROUTED, SessionState

WIDTH = 78
HELP = """/router: the tool router, with no model call
  /router status   on or off and why, the settings file, this session's
                   kept tools and savings
  /router on       route in this process (a running session: from /new)
  /router off      stop routing in this process; a narrowed session gets
                   every tool back at its next turn
  /router reset    drop the on/off switch: follow the settings file again
  /router report   tokens saved, from this profile's ledger
  /router doctor   a short set-up check, and the command for the full one
  /router help     this list"""
USAGE = "usage: /router on | off | reset | status | report | doctor | help"


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
        if word in ("help", "-h", "--help", "?"):
            return HELP
        if word == "on":
            self.runtime.set_switch(True)
            return self._after("on", "sessions that have not had a turn yet are routed from their first turn; "
                                     "this session keeps its tools: /new starts a routed one")
        if word == "off":
            self.runtime.set_switch(False)
            return self._after("off", "a narrowed session gets its full tool surface back at its next turn; "
                                      "/new starts a session with every tool now")
        if word == "reset":
            self.runtime.set_switch(None)
            return self._after("reset", "the /router switch is cleared: this process follows the settings file "
                                        f"({config_path()}) again, from the next session (/new)")
        if word == "report":
            from .status_text import report_text

            return report_text(self._profile())
        if word == "doctor":
            from .status_text import doctor_text

            return doctor_text(self.runtime, self._current_agent())
        first = word.split()[0]
        return f"/router: unknown subcommand {first!r}.\n{HELP}"

    def _profile(self) -> str:
        _, profile, _ = self.runtime.settings(self._current_agent())
        return profile

    def _after(self, word: str, when: str) -> str:
        agent = self._current_agent()
        cfg, _, _ = self.runtime.settings(agent)
        on, source = self.runtime.enabled(cfg)
        note = ""
        if env_enabled() is False and word in ("on", "reset"):
            note = f" (but {ENV_ENABLED}=0 is set and always wins)"
        return f"router {word}. Effective: {'ON' if on else 'OFF'} ({source}){note}\n" + wrap(f"  when: {when}.")

    def _current_agent(self) -> Any:
        agent = host_agents.cli_agent() or host_agents.tui_agent()
        if agent is not None:
            return agent
        return self.runtime.gateway_agent()

    def status(self) -> str:
        from .status_text import skill_index_state

        agent = self._current_agent()
        cfg, profile, error = self.runtime.settings(agent)
        on, source = self.runtime.enabled(cfg)
        env = os.environ.get(ENV_ENABLED)
        switch = self.runtime.switch
        path = config_path()
        lines: List[str] = [
            f"hermes-token-router: {'ON' if on else 'OFF'} (decided by {source})",
            f"  config.yaml: {path}" + (f" INVALID: {error}" if error else
                                        f" (enabled: {str(cfg.enabled).lower() if cfg else '-'})"),
            f"  environment: {ENV_ENABLED}={env if env is not None else '(unset)'}",
            f"  /router switch: {'(none)' if switch is None else ('on' if switch else 'off')}",
            f"  profile: {profile}",
        ]
        if path != user_config_path():
            lines.append(wrap(f"  your settings file: {user_config_path()} (not created yet; "
                              f"{command_line('config --set enabled=true', profile)})", indent=4))
        if cfg is not None:
            clf = cfg.classifier
            lines.append(f"  classifier: {'on' if clf.enabled else 'off'}"
                         + (f" ({clf.provider or 'deepseek'}{', ' + clf.model if clf.model else ''})" if clf.enabled else ""))
            skills = f"  skill router: {'on' if cfg.skills.enabled else 'off'}"
            if cfg.skills.enabled:
                skills += f"; {skill_index_state(self.runtime, cfg, profile)}"
            lines.append(wrap(skills, indent=4))
        state = self.runtime.states.get(agent.session_id) if agent is not None else None
        lines.extend(session_lines(state, agent, routing_on=on))
        return "\n".join(lines)


def wrap(text: str, indent: int = 2) -> str:
    """Chat replies are read on narrow screens: wrap at ``WIDTH`` with a hanging indent."""
    lead = len(text) - len(text.lstrip(" "))
    return textwrap.fill(text.strip(), width=WIDTH, initial_indent=" " * lead,
                         subsequent_indent=" " * (lead + indent), break_on_hyphens=False, break_long_words=False)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def session_lines(state: Optional[SessionState], agent: Any, routing_on: bool = True) -> List[str]:
    """The current session: predicted intent, loaded toolsets, the kept tools, recoveries and
    the tokens saved (Hermes's own ``_estimate_tools_tokens_rough``, per request and summed).
    Lines are kept short by splitting them where the reader expects a break."""
    if agent is None:
        return ["  session: none in this process yet"]
    if state is None:
        return [f"  session {agent.session_id}: not routed", f"    full surface, {len(agent.tools or [])} tools"]
    d = state.decision
    out = [f"  session {state.session_id}: {state.phase} (predicted {d.intent},",
           wrap(f"    source {d.source}, confidence {d.confidence:.2f}, {d.reason})", indent=4)]
    captured = len(state.capture.names) if state.capture is not None else len(agent.tools or [])
    if state.phase == ROUTED:
        kept = [t.get("function", {}).get("name", "?") for t in (state.committed_tools or [])]
        out.append(wrap(f"    loaded toolsets: {', '.join(state.loaded_toolsets) or '(floor only)'}", indent=4))
        if state.dynamic_toolsets:
            routed = [t for t in state.loaded_toolsets if t in state.dynamic_toolsets]
            out.append(wrap(f"    dynamic toolsets routed: {', '.join(routed) or 'none'} "
                            f"(of {', '.join(state.dynamic_toolsets)})", indent=4))
        out.append(wrap(f"    kept tools ({len(kept)} of {captured}): {', '.join(kept)}", indent=4))
        if not routing_on:
            out.append("    the router is off now: this session gets its full tool surface back")
            out.append("    at its next turn (/new starts one with every tool now)")
    elif state.phase == RESTORED:
        out.append(f"    restored: full surface, {captured} tools handed back;")
        out.append("    it stays full until the session ends (/new starts a routed one)")
    else:
        out.append(f"    kept the full surface, {len(agent.tools or [])} tools")
    if state.restore_failures and state.phase == ROUTED:
        out.append(f"    restore pending: {_plural(state.restore_failures, 'failed attempt')}, retried next turn")
    rec = state.recoveries
    out.append(wrap(f"    recoveries: {len(rec)}" + (" (" + "; ".join(f"{v}: {ts}" for v, _, ts in rec[-5:]) + ")"
                                                      if rec else ""), indent=4))
    per_request = max(0, state.tokens_full - state.tokens_now) if state.phase == ROUTED else 0
    now = state.tokens_now if state.phase == ROUTED else state.tokens_full
    out.append("    tool-schema tokens per request (Hermes estimate):")
    out.append(f"      {now:,} now vs {state.tokens_full:,} full (saves {per_request:,})")
    out.append(f"    saved so far: {state.tokens_saved_total:,} over {_plural(state.requests, 'request')}")
    if state.skills_injected:
        out.append(wrap(f"    skills injected: {', '.join(state.skills_injected)}", indent=4))
    return out


__all__ = ["RouterCommand", "HELP", "USAGE", "resolve_profile_name"]
