"""What ``/router report``, ``/router doctor`` and the skill-index part of ``/router status``
say in a chat: short, plain, and naming the command for the full answer.

In a chat the plugin must not run the full doctor (it imports and inspects Hermes's source
and rediscovers plugins); it reports what the running copy already knows and hands over to
the command line for the rest.
"""

from __future__ import annotations

from typing import Any, List

from . import __version__
from .paths import command_line, config_path, directory_install_root, state_dir, user_config_path


def skill_index_state(runtime: Any, cfg: Any, profile: str) -> str:
    """The skill router's index as the running router sees it (built, missing, unusable)."""
    try:
        status = runtime.skills.router(cfg.skills).status()
    except Exception as exc:
        return f"index state unknown ({type(exc).__name__})"
    if status.get("index_error"):
        if "no skill index" in status["index_error"]:
            return f"no skill index (nickname routing only); build it: {command_line('skills build', profile)}"
        return f"{status['index_error']}"
    kind = "semantic + nicknames" if status.get("semantic") else "nicknames only"
    return f"index of {status.get('skills', 0)} skills at {status.get('index_dir')} ({kind})"


def report_text(profile: str, sessions: int = 5) -> str:
    from .cli.report import ledger_path, summarise
    from .ledger import read_records

    path = ledger_path(state_dir().parent)
    records = list(read_records(path))
    if not records:
        return f"no savings recorded yet for profile {profile} ({path}): the ledger fills as routed sessions run"
    summary = summarise(records)
    t = summary["total"]
    lines: List[str] = [f"tool-schema tokens saved, profile {profile} (Hermes's estimator):",
                        f"  total: {t['tokens_saved']:,} tokens over {t['requests']:,} requests in "
                        f"{t['sessions']:,} sessions ({t['routed']} routed, {t['abstentions']} kept every tool, "
                        f"{t['recoveries']} recoveries)"]
    for day, d in list(summary["days"].items())[-3:]:
        lines.append(f"  {day}: {d['tokens_saved']:,} tokens, {d['sessions']} sessions")
    recent = list(summary["sessions"].items())[-sessions:]
    if recent:
        lines.append("  recent sessions:")
        for sid, s in recent:
            lines.append(f"    {sid[:24]}  {s['phase']}, {s['intent']}: {s['tokens_saved']:,} saved")
    lines.append(f"  full table and prices: {command_line('report', profile)}")
    return "\n".join(lines)


def doctor_text(runtime: Any, agent: Any) -> str:
    cfg, profile, error = runtime.settings(agent)
    on, source = runtime.enabled(cfg)
    root = directory_install_root()
    lines = [f"hermes-token-router {__version__}, profile {profile}",
             f"  installed: {'directory plugin at ' + str(root) if root else 'pip install (entry point)'}",
             f"  settings: {config_path()}" + (" (yours)" if config_path() == user_config_path() else
                                                f" (yours would be {user_config_path()})")]
    steps: List[str] = []
    if error:
        lines.append(f"  settings INVALID, the router is hands-off: {error}")
        steps.append(f"fix the key named above, or set it: {command_line('config --set KEY=VALUE', profile)}")
    else:
        lines.append(f"  routing: {'ON' if on else 'OFF'} ({source})")
        if not on:
            steps.append(f"turn it on for this profile: {command_line('config --set enabled=true', profile)}, "
                         f"then /new (or /router on for this process)")
    if cfg is not None and cfg.skills.enabled:
        state = skill_index_state(runtime, cfg, profile)
        lines.append(f"  skill router: {state}")
        if "no skill index" in state:
            steps.append(f"build the skill index: {command_line('skills build', profile)}")
    steps.append(f"full check (Hermes hooks, install, one offline turn): {command_line('doctor --probe', profile)}")
    lines.append("  next steps:")
    lines += [f"    {n}. {s}" for n, s in enumerate(steps, 1)]
    return "\n".join(lines)


__all__ = ["skill_index_state", "report_text", "doctor_text"]
