"""Run real Hermes turns in a fresh process (its own HERMES_HOME, its own plugin discovery).

``python -m hermes_token_router.devtools.probe_turn --home DIR --base-url URL -m "hi" [-m ...]``
prints one JSON object: the plugins Hermes loaded, the agent's tool names before and after
each turn, and Hermes's token estimates. Used where a test needs a separate process (no
plugin vs plugin disabled, the pip entry-point install) and by ``diagnostics.py --probe``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", required=True)
    ap.add_argument("--base-url", required=True)
    ap.add_argument("-m", "--message", action="append", default=[])
    ap.add_argument("--finalize", action="store_true", help="fire on_session_finalize after the turns")
    args = ap.parse_args(argv)
    os.environ["HERMES_HOME"] = str(Path(args.home).resolve())
    os.environ.setdefault("HERMES_INTERACTIVE", "1")

    from agent.model_metadata import _estimate_tools_tokens_rough
    from hermes_cli.plugins import get_plugin_manager

    from hermes_token_router.devtools import harness

    agent = harness.build_agent(args.base_url)
    out = {"plugins": [], "turns": [], "session_id": agent.session_id}
    for p in get_plugin_manager().list_plugins():
        if isinstance(p, dict):
            out["plugins"].append({k: p.get(k) for k in ("name", "key", "source", "enabled", "error") if k in p})
    names_before = [t["function"]["name"] for t in agent.tools]
    out["tools_before"] = names_before
    out["tokens_before"] = _estimate_tools_tokens_rough(list(agent.tools))
    history = None
    for message in args.message:
        result = agent.run_conversation(message, conversation_history=history)
        history = result.get("messages")
        out["turns"].append({
            "message": message,
            "completed": bool(result.get("completed", True)),
            "final": result.get("final_response"),
            "tools_after": [t["function"]["name"] for t in agent.tools],
            "tokens_after": _estimate_tools_tokens_rough(list(agent.tools)),
        })
    if args.finalize:
        harness.finalize_session(agent)
        out["tools_after_finalize"] = [t["function"]["name"] for t in agent.tools]
    print(json.dumps(out))
    sys.stdout.flush()
    os._exit(0)  # Hermes leaves non-daemon helpers behind; the result is already printed


if __name__ == "__main__":
    main()
