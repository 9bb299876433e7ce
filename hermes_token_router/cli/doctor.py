"""``doctor [-p PROFILE] [--home DIR] [--json] [--probe]``: does this Hermes, and this
profile, give the router a routing path before the first provider request?

Exit ``0``: a routing path exists (first-turn savings may be claimed); ``2``: it does not,
or the plugin cannot run here. The plain output ends with numbered "next step" lines, each
a command that exists for the install and profile at hand. ``python diagnostics.py`` in
the plugin folder is the same command (``main``), for users who have no other handle.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, List, Optional

from .. import __version__
from ..paths import command_line
from . import doctor_checks as hermes_checks
from . import doctor_install as install_checks
from .doctor_report import FAIL, WARN, Report, render


def add_subcommand(sub: Any, common: Any = None) -> None:
    p = sub.add_parser("doctor", help="check that this Hermes and this profile give the router a routing path",
                       parents=[common] if common is not None else [],
                       description="Check that this Hermes and this profile give the router a routing path "
                                   "(exit 0 yes, 2 no).")
    add_options(p)
    p.set_defaults(run=run)


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--probe", action="store_true",
                   help="also run one real offline turn through this profile's install against a local stub model")


def inspect_profile(home: Path, profile: str) -> Report:
    report = Report(plugin_version=__version__, hermes_home=str(home), profile=profile, python=sys.executable)
    if not hermes_checks.check_hermes(report):
        report.routing_path = False
        report.next_steps = next_steps(report)
        return report
    for step in (hermes_checks.check_hooks, hermes_checks.check_mechanisms, hermes_checks.check_agent_lookup,
                 hermes_checks.check_preflight, hermes_checks.check_registry):
        try:
            step(report)
        except Exception as exc:  # a doctor bug must not read as "Hermes is fine"
            report.add("internal", step.__name__, FAIL, f"{type(exc).__name__}: {exc}")
    plugin_dir = install_checks.check_install(report, home)
    install_checks.check_loaded(report)
    cfg = install_checks.check_router_config(report, plugin_dir, home)
    install_checks.check_skill_router(report, cfg, home)
    report.routing_path = not any(c.blocks_routing for c in report.checks)
    report.next_steps = next_steps(report)
    return report


def next_steps(report: Report) -> List[str]:
    """Plain next steps: the fixes of what fails, then of what warns, then how to try it."""
    steps: List[str] = []
    for status in (FAIL, WARN, "info"):
        for c in report.checks:
            if c.status == status and c.fix and c.fix not in steps:
                steps.append(c.fix)
    if report.routing_path and report.router_on:
        flag = "" if report.profile == "default" else f" -p {report.profile}"
        steps.append(f"try it: hermes{flag} chat, send a first message, then type /router status")
        steps.append(f"see the savings later: {command_line('report', report.profile)}")
    return steps


def run(args: argparse.Namespace) -> int:
    home: Path = Path(args.hermes_home).expanduser().resolve()
    report = inspect_profile(home, args.profile_name)
    if args.probe:
        report.probe = probe(report)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, default=str))
    else:
        print(render(report))
    return report.exit_code


def probe(report: Report) -> dict:
    if not report.hermes_importable:
        return {"ok": False, "skipped": "Hermes is not importable with this Python"}
    if not report.routing_path:
        return {"ok": False, "skipped": "no routing path on this install: follow the next steps first"}
    from .probe import run_probe

    try:
        result = run_probe(Path(report.plugin_dir) if report.plugin_dir else None,
                           Path(report.config_path) if report.config_path else None)
    except Exception as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    result["router_on"] = report.router_on
    return result


def main(argv: Optional[List[str]] = None) -> int:
    """``python diagnostics.py [-p PROFILE] [--home DIR] [--json] [--probe]``."""
    from .main import main as cli_main

    return cli_main(["doctor", *(sys.argv[1:] if argv is None else argv)])


__all__ = ["main", "inspect_profile"]
