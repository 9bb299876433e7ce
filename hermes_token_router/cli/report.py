"""``hermes token-router report``: what the router saved, per day and per session.

Reads the bounded ledger the hooks write (``$HERMES_HOME/token-router/router-ledger.jsonl``
of the profile given with ``-p``; an older install's ledger beside the plugin is read when
the profile has none yet) and
prices the saved input tokens at a model price the user chooses: the number a user needs
to decide whether the plugin pays off.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, Iterable, List

from ..ledger import LEDGER_NAME, read_records
from ..paths import PLUGIN_NAME, state_dir


def add_subcommand(sub: Any, common: Any = None) -> None:
    p = sub.add_parser("report", help="tokens saved, recoveries and abstentions from the ledger",
                       parents=[common] if common is not None else [])
    p.add_argument("--ledger", type=Path, default=None,
                   help=f"ledger file (default: $HERMES_HOME/token-router/{LEDGER_NAME} of the profile)")
    p.add_argument("--price-per-mtok", type=float, default=3.0,
                   help="input price in USD per million tokens, for the cost column (default 3.0)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--sessions", type=int, default=20, help="how many recent sessions to list (default 20)")
    p.set_defaults(run=run)


def ledger_path(home: Path) -> Path:
    """The profile's ledger; before 0.4 a directory install kept it in the plugin folder."""
    current = state_dir(home) / LEDGER_NAME
    old = home / "plugins" / PLUGIN_NAME / LEDGER_NAME
    if not current.exists() and not current.with_name(LEDGER_NAME + ".1").exists() and old.exists():
        return old
    return current


def summarise(records: Iterable[Dict[str, Any]]) -> Dict[str, Any]:
    """Fold per-turn ledger records into per-day and per-session totals.

    A session *abstained* when the router kept its full surface (phase ``full``): it is
    counted once, on the day of its first record. ``tokens_saved`` is what the hooks
    summed per provider request (full minus narrowed tool-schema estimate)."""
    days: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
    sessions: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
    for rec in sorted(records, key=lambda r: r.get("ts", 0) or 0):
        day = days.setdefault(str(rec.get("day", "?")), {"turns": 0, "requests": 0, "tokens_saved": 0,
                                                         "recoveries": 0, "abstentions": 0, "routed": 0,
                                                         "sessions": set()})
        sid = str(rec.get("session_id", "?"))
        ses = sessions.setdefault(sid, {"day": rec.get("day"), "profile": rec.get("profile"),
                                        "platform": rec.get("platform"), "intent": rec.get("intent"),
                                        "source": rec.get("source"), "phase": rec.get("phase"), "turns": 0,
                                        "requests": 0, "tokens_saved": 0, "recoveries": 0,
                                        "tokens_full": _int(rec.get("tokens_full")),
                                        "tokens_now": _int(rec.get("tokens_now")), "toolsets": []})
        for bucket in (day, ses):
            bucket["turns"] += 1
            bucket["requests"] += _int(rec.get("requests"))
            bucket["tokens_saved"] += _int(rec.get("tokens_saved"))
            bucket["recoveries"] += _int(rec.get("recoveries"))
        ses["phase"], ses["tokens_now"] = rec.get("phase"), _int(rec.get("tokens_now"))
        ses["toolsets"] = list(rec.get("toolsets") or ses["toolsets"])
        if sid not in day["sessions"]:
            day["sessions"].add(sid)
            if rec.get("phase") == "full":
                day["abstentions"] += 1
            else:
                day["routed"] += 1
    for day in days.values():
        day["sessions"] = len(day["sessions"])
    total = {k: sum(d[k] for d in days.values()) for k in ("turns", "requests", "tokens_saved", "recoveries",
                                                           "abstentions", "routed", "sessions")}
    return {"days": days, "sessions": sessions, "total": total}


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _usd(tokens: int, price: float) -> str:
    return f"${tokens * price / 1_000_000:,.4f}"


def render(summary: Dict[str, Any], price: float, max_sessions: int) -> str:
    out: List[str] = [f"Tool-schema tokens saved (Hermes's estimator), priced at ${price:g} per million input tokens", ""]
    out.append(f"{'day':<12}{'sessions':>9}{'requests':>10}{'tokens saved':>15}{'est. cost saved':>17}"
               f"{'recoveries':>12}{'abstained':>11}")
    for day, d in summary["days"].items():
        out.append(f"{day:<12}{d['sessions']:>9}{d['requests']:>10}{d['tokens_saved']:>15,}"
                   f"{_usd(d['tokens_saved'], price):>17}{d['recoveries']:>12}{d['abstentions']:>11}")
    t = summary["total"]
    out.append(f"{'total':<12}{t['sessions']:>9}{t['requests']:>10}{t['tokens_saved']:>15,}"
               f"{_usd(t['tokens_saved'], price):>17}{t['recoveries']:>12}{t['abstentions']:>11}")
    shown = list(summary["sessions"].items())[-max_sessions:] if max_sessions > 0 else []
    out += ["", f"{'session':<26}{'phase':<10}{'intent':<20}{'requests':>9}{'now/full per req.':>19}{'saved':>10}"
                f"{'est. cost saved':>17}{'recov.':>8}"]
    for sid, s in shown:
        per = f"{s['tokens_now']:,}/{s['tokens_full']:,}"
        out.append(f"{sid[:25]:<26}{str(s['phase']):<10}{str(s['intent'])[:19]:<20}{s['requests']:>9}{per:>19}"
                   f"{s['tokens_saved']:>10,}{_usd(s['tokens_saved'], price):>17}{s['recoveries']:>8}")
    hidden = len(summary["sessions"]) - len(shown)
    if hidden > 0:
        out.append(f"({hidden} older session{'s' if hidden != 1 else ''} not listed; --sessions N shows more)")
    out += ["", "phase: routed = narrowed; restored = narrowed, then handed back (/router off); "
                "full = abstained (kept every tool)"]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    home = getattr(args, "hermes_home", None) or state_dir().parent
    path = args.ledger or ledger_path(Path(home))
    if args.price_per_mtok < 0:
        print("--price-per-mtok must not be negative", file=sys.stderr)
        return 2
    records = list(read_records(path))
    if not records:
        print(f"no records in {path} yet (profile {getattr(args, 'profile_name', 'default')}): enable the "
              f"router for this profile and run a session first; another profile: report -p NAME")
        return 1
    summary = summarise(records)
    if args.json:
        t = summary["total"]
        est = round(t["tokens_saved"] * args.price_per_mtok / 1_000_000, 6)
        print(json.dumps({"ledger": str(path), "price_per_mtok": args.price_per_mtok, "est_cost_saved_usd": est,
                          **summary}, default=list))
    else:
        print(f"ledger: {path}")
        print(render(summary, args.price_per_mtok, args.sessions))
    return 0
