"""The heavy profile: a CLI profile with four stdio MCP integrations (code host, wiki, issue
tracker, chat), the shape of the users who pay most for tool schemas.

Shared by the live tests and ``benchmarks/run.py --profile heavy`` so both measure the same
surface: Hermes discovers the servers itself (``tools.mcp_tool.discover_mcp_tools`` reads
``mcp_servers`` from config.yaml, as ``hermes chat`` does) from the generic fixture server
``tests/fixtures/heavy/mcp_server.py`` serving ``servers.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, Optional

from .harness import REPO_ROOT

FIXTURE_DIR = REPO_ROOT / "tests" / "fixtures" / "heavy"
SPECS = FIXTURE_DIR / "servers.json"
SERVER_SCRIPT = FIXTURE_DIR / "mcp_server.py"


def server_names(specs: Path = SPECS) -> tuple:
    return tuple(s["name"] for s in json.loads(specs.read_text(encoding="utf-8")))


def mcp_servers_config(names: Optional[Iterable[str]] = None, *, specs: Path = SPECS,
                       python: str = sys.executable) -> Dict[str, Any]:
    """``mcp_servers`` for Hermes's config.yaml: one stdio server per name (default: all)."""
    chosen = tuple(names) if names is not None else server_names(specs)
    return {name: {"command": python, "args": [str(SERVER_SCRIPT), str(specs), name],
                   "connect_timeout": 60, "timeout": 30} for name in chosen}


def hermes_extra(names: Optional[Iterable[str]] = None, *, tool_search: str = "off") -> Dict[str, Any]:
    """The Hermes config keys of a heavy profile (``prepare_home(hermes_extra=...)``)."""
    return {"mcp_servers": mcp_servers_config(names), "tools": {"tool_search": {"enabled": tool_search}}}


def discover() -> list:
    """Connect the configured servers and register their tools (what ``hermes chat`` does
    at start-up; the programmatic ``AIAgent`` path does not)."""
    from tools.mcp_tool import discover_mcp_tools

    return list(discover_mcp_tools())
