"""What the doctor found: the checks, the verdict, the next steps, and how they print.

Kept apart from the checks so the chat (``/router doctor``) and the command line render
the same model, and so ``--json`` is exactly this model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

EXIT_OK = 0
EXIT_NO_ROUTING_PATH = 2
OK, WARN, FAIL, INFO = "ok", "warn", "fail", "info"


@dataclass
class Check:
    area: str
    name: str
    status: str
    detail: str
    fix: Optional[str] = None  # one plain next step (a command when there is one)

    @property
    def blocks_routing(self) -> bool:
        return self.status == FAIL


@dataclass
class Report:
    plugin_version: str = ""
    hermes_version: Optional[str] = None
    hermes_home: str = ""
    profile: str = "default"
    python: str = ""
    hermes_python: Optional[str] = None  # the launcher's Python, when this one cannot import Hermes
    plugin_dir: Optional[str] = None
    config_path: Optional[str] = None
    user_config: Optional[str] = None
    router_on: Optional[bool] = None
    checks: List[Check] = field(default_factory=list)
    routing_path: bool = False
    routes_before_preflight: Optional[bool] = None
    hook_thread: str = "unknown"
    skill_semantic: Dict[str, Any] = field(default_factory=dict)
    probe: Optional[Dict[str, Any]] = None
    hermes_importable: bool = False
    next_steps: List[str] = field(default_factory=list)

    def add(self, area: str, name: str, status: str, detail: str, fix: Optional[str] = None) -> Check:
        check = Check(area, name, status, detail, fix)
        self.checks.append(check)
        return check

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.routing_path else EXIT_NO_ROUTING_PATH

    def to_json(self) -> Dict[str, Any]:
        out = asdict(self)
        out["exit_code"] = self.exit_code
        out["first_turn_savings"] = "may be claimed" if self.routing_path else "must not be claimed"
        return out


_MARK = {OK: "ok  ", WARN: "WARN", FAIL: "FAIL", INFO: "info"}


def render(report: Report) -> str:
    lines = [f"hermes-token-router {report.plugin_version} doctor: profile {report.profile} "
             f"(HERMES_HOME={report.hermes_home}), hermes-agent {report.hermes_version or '?'}, "
             f"python {report.python}", ""]
    area = None
    for c in report.checks:
        if c.area != area:
            area = c.area
            lines.append(f"[{area}]")
        lines.append(f"  {_MARK.get(c.status, c.status)}  {c.name}: {c.detail}")
    lines.append("")
    if report.routing_path:
        lines.append("ROUTING PATH: yes: the router can narrow the surface before the first provider request (exit 0)")
    else:
        lines.append("ROUTING PATH: NO: first-turn savings must not be claimed on this install (exit 2)")
    pre = report.routes_before_preflight
    if report.hermes_importable:
        lines.append("BEFORE PREFLIGHT ESTIMATE: " + ("yes" if pre else "no (the first-turn preflight estimate "
                                                       "counts the full tool list)" if pre is False else "unknown"))
    if report.probe is not None:
        lines += [""] + render_probe(report.probe)
    if report.next_steps:
        lines += ["", "NEXT STEPS:"] + [f"  {n}. {step}" for n, step in enumerate(report.next_steps, 1)]
    return "\n".join(lines)


def render_probe(p: Dict[str, Any]) -> List[str]:
    if p.get("skipped"):
        return [f"PROBE: skipped: {p['skipped']}"]
    if not p.get("ok"):
        return [f"PROBE: failed: {p.get('error')}"]
    ran = p.get("ran_on") or {}
    out = [f"PROBE: one offline turn against a local stub model, first message {p['message']!r}",
           f"  ran on: plugin {ran.get('plugin')}; config {ran.get('config')}; python {ran.get('python')}"]
    if p.get("decision"):
        d = p["decision"]
        out.append(f"  decision: {d.get('phase')} (intent {d.get('intent')}, source {d.get('source')}, "
                   f"toolsets {','.join(d.get('toolsets') or []) or '-'})")
    out.append(f"  before: {p['tools_before']} tools, {p['tokens_before']:,} tokens (Hermes's estimator)")
    out.append(f"  first provider request: {p['request_tools']} tools, {p['request_tokens']:,} tokens")
    if p["narrowed"]:
        out.append(f"  measured narrowing: {p['tokens_saved_per_request']:,} tokens per request ({p['saved_pct']}%)")
    else:
        out.append("  measured narrowing: none (full surface sent)"
                   + ("; the router is off for this profile" if p.get("router_on") is False else ""))
    return out
