"""``doctor --probe``: one real offline turn through the profile's actual install.

A throwaway HERMES_HOME points at the profile's own plugin folder (a symlink, nothing is
copied; a pip install is found through its entry point by this same Python) and carries a
copy of the profile's router settings, so what is measured is what the profile would do,
switch included. Only the model is fake: a stub on 127.0.0.1 records what Hermes sends.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from ..paths import PLUGIN_NAME, PACKAGE_DIR, is_plugin_folder_config

PROBE_MESSAGE = "read ./notes.md and summarise it"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_probe(plugin_dir: Optional[Path], config_path: Optional[Path], message: str = PROBE_MESSAGE,
              timeout_s: float = 180.0, progress: Callable[[str], None] = _stderr) -> Dict[str, Any]:
    from ..devtools import harness
    from ..devtools.stub_llm import StubLLM

    started = time.monotonic()
    ran_on = {"plugin": str(plugin_dir) if plugin_dir else "pip install (hermes_agent.plugins entry point)",
              "config": str(config_path) if config_path else "(shipped defaults)", "python": sys.executable}
    progress("probe [1/3]: starting a local stub model on 127.0.0.1")
    with StubLLM() as stub, tempfile.TemporaryDirectory(prefix="htr-probe-") as tmp:
        home = Path(tmp) / "home"
        harness.prepare_home(home, stub.base_url, install=False)
        if plugin_dir is not None:
            (home / "plugins").mkdir(parents=True, exist_ok=True)
            os.symlink(plugin_dir, home / "plugins" / PLUGIN_NAME, target_is_directory=True)
        if config_path is not None and config_path.is_file() and not is_plugin_folder_config(config_path):
            (home / "token-router").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(config_path, home / "token-router" / "config.yaml")
        (home / "notes.md").write_text("# Notes\n- ship the router\n", encoding="utf-8")
        env = harness.offline_env()
        env.update(HERMES_HOME=str(home), HERMES_INTERACTIVE="1")
        for var in ("HERMES_TOKEN_ROUTER_CONFIG", "HERMES_SAFE_MODE", "HERMES_PROFILE"):
            env.pop(var, None)
        if (PACKAGE_DIR.parent / "plugin.yaml").is_file():  # a checkout or directory copy: make devtools importable
            env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_DIR.parent)] + [p for p in [env.get("PYTHONPATH")] if p])
        cmd = [sys.executable, "-m", "hermes_token_router.devtools.probe_turn", "--home", str(home),
               "--base-url", stub.base_url, "-m", message]
        progress(f"probe [2/3]: one Hermes turn in a fresh process on a throwaway home (usually 3-8 s), "
                 f"plugin {ran_on['plugin']}")
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s, cwd=str(home))
        except subprocess.TimeoutExpired:
            return {"ok": False, "error": f"probe turn did not finish in {timeout_s:.0f}s", "ran_on": ran_on}
        line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("{")), None)
        if proc.returncode != 0 or line is None:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            return {"ok": False, "error": f"probe process exited {proc.returncode}: {' | '.join(tail)}",
                    "ran_on": ran_on}
        data = json.loads(line)
        requests = [r for r in stub.chat_requests() if (r.body or {}).get("stream")]
        first = requests[0] if requests else None
        decision = _first_decision(home / "token-router" / "router-ledger.jsonl")
    progress(f"probe [3/3]: done in {time.monotonic() - started:.1f} s")
    return _measure(data, first, decision, message, ran_on)


def _first_decision(ledger: Path) -> Dict[str, Any]:
    if not ledger.is_file():
        return {}
    for raw in ledger.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        return {k: rec.get(k) for k in ("phase", "intent", "source", "toolsets")}
    return {}


def _measure(data: Dict[str, Any], first: Any, decision: Dict[str, Any], message: str,
             ran_on: Dict[str, str]) -> Dict[str, Any]:
    from agent.model_metadata import _estimate_tools_tokens_rough

    turn = (data.get("turns") or [{}])[0]
    request_tools = first.tool_names if first is not None else []
    request_tokens = int(_estimate_tools_tokens_rough(list(first.tools))) if first is not None else 0
    before_tools, before_tokens = len(data.get("tools_before") or []), int(data.get("tokens_before") or 0)
    out = {
        "ok": True, "message": message, "ran_on": ran_on, "decision": decision,
        "plugins_loaded": [p.get("key") or p.get("name") for p in data.get("plugins", [])
                           if p.get("enabled") and not p.get("error")],
        "tools_before": before_tools, "tokens_before": before_tokens,
        "tools_after": len(turn.get("tools_after") or []), "tokens_after": int(turn.get("tokens_after") or 0),
        "request_tools": len(request_tools), "request_tool_names": request_tools, "request_tokens": request_tokens,
    }
    out["narrowed"] = bool(request_tools) and out["request_tools"] < before_tools
    out["tokens_saved_per_request"] = max(0, before_tokens - request_tokens) if request_tools else 0
    out["saved_pct"] = round(100.0 * out["tokens_saved_per_request"] / before_tokens, 1) if before_tokens else 0.0
    return out
