"""The savings ledger: one JSON line per turn, so a user can see the plugin pay off.

Bounded: when the file passes its size cap it is rotated to ``.1`` (one generation kept),
so the ledger never grows without limit. It holds counts and names only: no message text,
no tool arguments, no secrets.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

LEDGER_NAME = "router-ledger.jsonl"


class Ledger:
    def __init__(self, path: Path, max_bytes: int = 1_000_000) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def append(self, record: Dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                if self.path.stat().st_size + len(line) > self.max_bytes:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            except FileNotFoundError:
                pass
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)


def read_records(path: Path) -> Iterator[Dict[str, Any]]:
    for candidate in (path.with_name(path.name + ".1"), path):
        try:
            # A damaged (non-UTF-8) line is skipped like any other unreadable line.
            with open(candidate, encoding="utf-8", errors="replace") as fh:
                for raw in fh:
                    raw = raw.strip()
                    if not raw:
                        continue
                    try:
                        rec = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(rec, dict):
                        yield rec
        except FileNotFoundError:
            continue


def turn_record(*, session_id: str, profile: str, platform: str, phase: str, intent: str, source: str,
                requests: int, tokens_full: int, tokens_now: int, tokens_saved: int, recoveries: int,
                toolsets: List[str]) -> Dict[str, Any]:
    now = time.time()
    return {
        "ts": round(now, 3),
        "day": time.strftime("%Y-%m-%d", time.localtime(now)),
        "session_id": session_id,
        "profile": profile,
        "platform": platform,
        "phase": phase,
        "intent": intent,
        "source": source,
        "requests": requests,
        "tokens_full": tokens_full,
        "tokens_now": tokens_now,
        "tokens_saved": tokens_saved,
        "recoveries": recoveries,
        "toolsets": toolsets,
    }
