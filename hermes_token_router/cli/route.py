"""``route``: show how the router would treat a message, without running Hermes.

The command uses the full decision the hooks use (rules, then the model classifier when the
profile's config enables it); ``run_route`` also takes any ``decide`` so it is testable on
the rules alone.

    route "TEXT" [--json]      one decision (plain text, or Decision.to_json())
    route --jsonl < in.jsonl   one {"id", ...decision} line per {"id", "text"} input line
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, Optional, TextIO

from ..decision import Decision

Decide = Callable[[str], Decision]


def _default_decide() -> Decide:
    from ..rules import default_rules

    return default_rules().classify


def full_decide(profile: str) -> Optional[Decide]:
    """The profile's full decision (rules, then the classifier when configured), as the hooks
    decide it. A readable but invalid config is reported on stderr and the rules alone
    answer; a file that cannot even be read (not UTF-8, not a regular file, too big) is None."""
    from ..catalog import load_blurbs
    from ..config import ConfigError, ConfigStore, RouterConfig, read_config_text
    from ..paths import config_path, shipped
    from ..router import decide

    path = config_path()
    try:
        if path.exists():
            read_config_text(path)
    except (ConfigError, OSError) as exc:
        print(f"hermes-token-router: {exc}", file=sys.stderr)
        return None
    parsed, error = ConfigStore().load()
    if error:
        print(f"hermes-token-router: {error}", file=sys.stderr)
    cfg = parsed.for_profile(profile) if parsed is not None else RouterConfig()
    toolsets = tuple(sorted(load_blurbs(shipped("policy") / "catalog.yaml").items()))
    return lambda text: decide(text, cfg, toolsets)


def add_subcommand(subparsers, common=None, decide: Optional[Decide] = None) -> argparse.ArgumentParser:
    """Register ``route``; ``decide`` defaults to the profile's full decision."""
    p = subparsers.add_parser("route", help="show the routing decision for a message",
                              parents=[common] if common is not None else [],
                              description="Show the routing decision for a message.")
    p.add_argument("text", nargs="?", help="the message (omit with --jsonl)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the decision as JSON")
    fmt.add_argument("--jsonl", action="store_true",
                     help='read {"id", "text"} lines on stdin, print one decision line each')
    p.set_defaults(run=_run, decide=decide)
    return p


def _run(args: argparse.Namespace) -> int:
    if args.decide is None:
        args.decide = full_decide(args.profile_name)
        if args.decide is None:
            return 2
    return run_route(args)


def _plain(d: Decision) -> str:
    target = ", ".join(d.toolsets) if d.toolsets else "(floor only)"
    what = f"narrow to {target}" if d.action == "narrow" else "keep the full surface"
    return (f"{what}\n  intent: {d.intent}\n  confidence: {d.confidence:.2f}\n"
            f"  source: {d.source}\n  reason: {d.reason}"
            + "".join(f"\n  clause: {t!r} <- {e}" for t, e in d.clauses))


def run_route(args: argparse.Namespace, stdin: Optional[TextIO] = None,
              stdout: Optional[TextIO] = None) -> int:
    """Exit codes: 0 ok, 2 usage or input error (bad line, missing text)."""
    out = stdout or sys.stdout
    err = sys.stderr
    decide: Optional[Decide] = getattr(args, "decide", None)
    try:
        decide = decide or _default_decide()
    except Exception as exc:  # PolicyError: one line naming file, line and key
        print(f"route: rules unavailable: {exc}", file=err)
        return 2

    if getattr(args, "jsonl", False):
        status = 0
        for n, line in enumerate(stdin or sys.stdin, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                text = item["text"]
                if not isinstance(text, str):
                    raise TypeError("text is not a string")
            except (ValueError, KeyError, TypeError) as exc:
                print(f"route: stdin line {n}: expected {{\"id\", \"text\"}} ({exc})", file=err)
                status = 2
                continue
            row = {"id": item.get("id")}
            row.update(decide(text).to_json())
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
        return status

    text = getattr(args, "text", None)
    if text is None:
        print('route: give a message, e.g. route "run the tests", or use --jsonl', file=err)
        return 2
    decision = decide(text)
    if getattr(args, "json", False):
        out.write(json.dumps(decision.to_json(detail=True), ensure_ascii=False) + "\n")
    else:
        out.write(_plain(decision) + "\n")
    return 0
