"""``hermes-token-router report``: what the router saved, per day and per session.

Reads the bounded ledger the hooks write (``router-ledger.jsonl`` beside the plugin) and
prices the saved input tokens at a model price the user chooses: the number a user needs
to decide whether the plugin pays off.
"""

from __future__ import annotations

import argparse
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, Iterable, List

from .ledger import LEDGER_NAME, read_records
from .paths import state_dir


def add_subcommand(sub: Any) -> None:
    p = sub.add_parser("report", help="tokens saved, recoveries and abstentions from the ledger")
    p.add_argument("--ledger", type=Path, default=None, help=f"ledger file (default: <plugin dir>/{LEDGER_NAME})")
    p.add_argument("--price-per-mtok", type=float, default=3.0,
                   help="input price in USD per million tokens, for the cost column (default 3.0)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--sessions", type=int, default=20, help="how many recent sessions to list (default 20)")


def summarise(records: Iterable[Dict[str, Any]]) -> Dict[str, Any]:
    days: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
    sessions: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
    for rec in sorted(records, key=lambda r: r.get("ts", 0)):
        day = days.setdefault(rec.get("day", "?"), {"turns": 0, "requests": 0, "tokens_saved": 0,
                                                    "recoveries": 0, "abstentions": 0, "sessions": set()})
        sid = str(rec.get("session_id", "?"))
        ses = sessions.setdefault(sid, {"day": rec.get("day"), "profile": rec.get("profile"), "intent": rec.get("intent"),
                                        "phase": rec.get("phase"), "turns": 0, "requests": 0, "tokens_saved": 0,
                                        "recoveries": 0, "tokens_full": rec.get("tokens_full", 0),
                                        "tokens_now": rec.get("tokens_now", 0)})
        for bucket in (day, ses):
            bucket["turns"] += 1
            bucket["requests"] += int(rec.get("requests", 0))
            bucket["tokens_saved"] += int(rec.get("tokens_saved", 0))
            bucket["recoveries"] += int(rec.get("recoveries", 0))
        ses["phase"], ses["tokens_now"] = rec.get("phase"), rec.get("tokens_now", 0)
        if sid not in day["sessions"]:
            day["sessions"].add(sid)
            if rec.get("phase") == "full":
                day["abstentions"] += 1
    for day in days.values():
        day["sessions"] = len(day["sessions"])
    total = {k: sum(d[k] for d in days.values()) for k in ("turns", "requests", "tokens_saved", "recoveries",
                                                           "abstentions", "sessions")}
    return {"days": days, "sessions": sessions, "total": total}


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
    out += ["", f"{'session':<26}{'phase':<10}{'intent':<20}{'requests':>9}{'per request':>18}{'saved':>10}{'recov.':>8}"]
    for sid, s in list(summary["sessions"].items())[-max_sessions:]:
        per = f"{s['tokens_now']:,}/{s['tokens_full']:,}"
        out.append(f"{sid[:25]:<26}{str(s['phase']):<10}{str(s['intent'])[:19]:<20}{s['requests']:>9}{per:>18}"
                   f"{s['tokens_saved']:>10,}{s['recoveries']:>8}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    path = args.ledger or (state_dir() / LEDGER_NAME)
    records = list(read_records(path))
    if not records:
        print(f"no records in {path} yet: enable the router and run a session first")
        return 1
    summary = summarise(records)
    if args.json:
        print(json.dumps({"ledger": str(path), "price_per_mtok": args.price_per_mtok, **summary}, default=list))
    else:
        print(render(summary, args.price_per_mtok, args.sessions))
    return 0
