"""Offline live A/B against the real Hermes 0.19.0: router off vs on, first provider request.

Starts our stub model on 127.0.0.1, lays out a temporary HERMES_HOME with the plugin
installed as a directory plugin, and for each prompt runs one real first turn twice
(router off, router on) through ``AIAgent.run_conversation``; one prompt also goes through
the real ``hermes chat -q`` CLI. It reports what the stub received: tool count, ``tools``
JSON characters, Hermes's own tool-schema estimate and whole-request estimate.

    python benchmarks/live_ab.py [--json OUT] [--no-cli]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hermes_token_router.devtools import harness  # noqa: E402
from hermes_token_router.devtools.stub_llm import StubLLM  # noqa: E402

PROMPTS = (
    "hello!",
    "read ./notes.md and summarise it",
    "run the test suite with pytest and tell me what fails",
    "remind me every weekday at 9am to stand up",
    "what can you do?",
    "帮我读一下 notes.md 并总结",
    "can you look at this",
)
CLI_PROMPT = "read ./notes.md and summarise it"


def measure(req) -> dict:
    from agent.model_metadata import estimate_request_tokens_rough

    from hermes_token_router.host import estimate_tokens

    tools = req.tools
    messages = req.body.get("messages") or []
    return {
        "tools": len(tools),
        "tools_chars": len(json.dumps(tools, ensure_ascii=False)) if tools else 0,
        "tool_tokens": estimate_tokens(tools),
        "request_tokens": estimate_request_tokens_rough(messages, tools=list(tools) or None),
        "tool_names": req.tool_names,
        "catalog_tokens": estimate_tokens([t for t in tools if t["function"]["name"] == "request_toolset"]),
    }


def run_programmatic(stub: StubLLM, cfg_path: Path, workdir: Path) -> list:
    rows = []
    for prompt in PROMPTS:
        row = {"prompt": prompt, "path": "AIAgent"}
        for label, enabled in (("off", False), ("on", True)):
            harness.write_router_config(cfg_path, {"global": {"enabled": enabled}})
            stub.clear()
            agent = harness.build_agent(stub.base_url)
            agent.run_conversation(prompt)
            row[label] = measure(stub.chat_requests()[0])
            harness.finalize_session(agent)
            agent.close()
        rows.append(row)
    return rows


def run_cli(stub: StubLLM, workdir: Path) -> dict:
    row = {"prompt": CLI_PROMPT, "path": "hermes chat -q"}
    hermes = Path(sys.executable).parent / "hermes"
    for label, enabled in (("off", False), ("on", True)):
        home = workdir / f"cli-{label}"
        harness.prepare_home(home, stub.base_url, router_config={"global": {"enabled": enabled}})
        env = harness.offline_env()
        env.update(HERMES_HOME=str(home), HERMES_INTERACTIVE="1")
        env.pop("HERMES_TOKEN_ROUTER_ENABLED", None)
        stub.clear()
        subprocess.run([str(hermes), "chat", "-q", CLI_PROMPT], env=env, cwd=workdir, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=300, check=True)
        row[label] = measure(stub.chat_requests()[0])
    return row


def render(rows: list) -> str:
    head = (f"{'prompt':<44}{'path':<16}{'tools off→on':>14}{'schema tok off→on':>22}"
            f"{'saved':>8}{'request tok off→on':>22}")
    out = [head, "-" * len(head)]
    for r in rows:
        off, on = r["off"], r["on"]
        saved = 1 - on["tool_tokens"] / off["tool_tokens"] if off["tool_tokens"] else 0.0
        out.append(f"{r['prompt'][:43]:<44}{r['path']:<16}{str(off['tools']) + '→' + str(on['tools']):>14}"
                   f"{format(off['tool_tokens'], ',') + '→' + format(on['tool_tokens'], ','):>22}{saved:>8.0%}"
                   f"{format(off['request_tokens'], ',') + '→' + format(on['request_tokens'], ','):>22}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--no-cli", action="store_true")
    args = ap.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="htr-ab-"))
    (workdir / "notes.md").write_text("# Notes\n- ship the router\n- measure it\n")
    os.chdir(workdir)
    stub = StubLLM().start()
    home = workdir / "home"
    os.environ.update(harness.offline_env())
    os.environ.update(HERMES_HOME=str(home), HERMES_INTERACTIVE="1")
    os.environ.pop("HERMES_TOKEN_ROUTER_ENABLED", None)
    os.environ.pop("HERMES_TOKEN_ROUTER_CONFIG", None)
    cfg_path = harness.prepare_home(home, stub.base_url, router_config={"global": {"enabled": False}})
    import logging

    logging.disable(logging.WARNING)
    rows = run_programmatic(stub, cfg_path, workdir)
    if not args.no_cli:
        rows.append(run_cli(stub, workdir))
    print(render(rows))
    on_tokens = sum(r["on"]["tool_tokens"] for r in rows)
    off_tokens = sum(r["off"]["tool_tokens"] for r in rows)
    print(f"\nfirst-request tool-schema tokens over {len(rows)} prompts: {off_tokens:,} off → {on_tokens:,} on "
          f"({1 - on_tokens / off_tokens:.0%} saved; Hermes's _estimate_tools_tokens_rough)")
    file_row = next(r for r in rows if r["prompt"].startswith("read ./notes.md") and r["path"] == "AIAgent")
    catalog = file_row["on"]["catalog_tokens"]
    print(f"capability catalog (request_toolset with its catalog): {catalog:,} tokens, standing in for "
          f"{file_row['off']['tool_tokens'] - file_row['on']['tool_tokens'] + catalog:,} tokens of pruned schemas")
    ledger = cfg_path.parent / "router-ledger.jsonl"
    from hermes_token_router.cli import report
    from hermes_token_router.ledger import read_records

    records = list(read_records(ledger))
    if records:
        print(f"\nWhat the plugin recorded ({ledger}), as `hermes token-router report` shows it:\n")
        print(report.render(report.summarise(records), price=3.0, max_sessions=20))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows, "ledger": str(ledger)}, indent=2, ensure_ascii=False))
    stub.stop()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
