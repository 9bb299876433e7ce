"""``hermes-token-router report`` on the ledger the plugin itself wrote during a live A/B.

The A/B runs real Hermes 0.19.0 turns in this process (router off, then on, same first
message); the plugin, installed as a directory plugin, writes
``$HERMES_HOME/token-router/router-ledger.jsonl``. The report then runs in a
fresh process, as a user runs it, and its numbers must equal what the stub model measured
on the wire: the off request's tool-schema tokens minus the on request's (Hermes's
estimator), per provider request.

Narrowing is decided by the model classifier pointed at the stub (rules off), so the test
does not depend on the deterministic rule set; ``test_report_on_benchmark_ledger`` also
runs the repo's own ``benchmarks/live_ab.py`` with the shipped rules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import model_tools  # noqa: F401  (Hermes discovers plugins at this import; conftest set HERMES_HOME)
import pytest

from hermes_token_router.devtools import harness
from hermes_token_router.devtools.stub_llm import Reply

ROOT = Path(__file__).resolve().parents[1]
READ = "read ./notes.md and summarise it"
HELLO = "hello there"
TODO = "read ./notes.md and make a todo list of it"


def responder(body):
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    text = str(last.get("content") or "")
    if not body.get("stream"):  # the router's classifier call
        confidence = 0.3 if HELLO in text else 0.97
        return Reply(content=json.dumps({"toolsets": ["file"], "intent": "small talk" if HELLO in text else "read a file",
                                         "confidence": confidence}))
    if last.get("role") == "user" and TODO in text:  # the model reaches for a pruned tool
        return Reply(content=None, tool_calls=[("todo", {"todos": [{"id": "1", "content": "ship", "status": "pending"}]})])
    return Reply(content="ok")


def tool_tokens(request) -> int:
    from agent.model_metadata import _estimate_tools_tokens_rough

    return int(_estimate_tools_tokens_rough(list(request.tools))) if request.tools else 0


def streamed(stub):
    return [r for r in stub.chat_requests() if (r.body or {}).get("stream")]


@pytest.fixture
def ledger_path(router_config_path):
    return router_config_path.parent / "router-ledger.jsonl"


def run_ab(stub, router_config, agent_factory, prompt):
    """One first turn with the router off and one with it on; returns measurements."""
    row = {}
    for label, enabled in (("off", False), ("on", True)):
        router_config(enabled=enabled, deterministic_rules_enabled=False,
                      classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                                  "model": "router-small", "api_key_env": None})
        stub.clear()
        stub.responder = responder
        agent = agent_factory()
        agent.run_conversation(prompt)
        reqs = streamed(stub)
        row[label] = {"session": agent.session_id, "requests": len(reqs),
                      "first_tokens": tool_tokens(reqs[0]), "tokens": [tool_tokens(r) for r in reqs],
                      "tools": len(reqs[0].tools), "names": reqs[0].tool_names,
                      "all_names": [r.tool_names for r in reqs]}
        harness.finalize_session(agent)
    return row


def report(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "hermes_token_router", "report", *args],
                          capture_output=True, text=True, timeout=120, cwd=str(cwd or ROOT))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_report_matches_the_live_ab_on_the_plugins_own_ledger(stub, router_config, agent_factory, ledger_path):
    try:
        read = run_ab(stub, router_config, agent_factory, READ)
        hello = run_ab(stub, router_config, agent_factory, HELLO)
        todo = run_ab(stub, router_config, agent_factory, TODO)
    finally:
        stub.responder = None
    assert ledger_path.is_file(), "the plugin writes its ledger to $HERMES_HOME/token-router/"

    # what the wire says
    assert read["on"]["tools"] < read["off"]["tools"]
    saved_read = read["off"]["first_tokens"] - read["on"]["first_tokens"]
    assert saved_read > 0
    assert hello["on"]["names"] == hello["off"]["names"]  # abstained: the full surface, byte for byte
    assert todo["on"]["requests"] == 2
    assert "todo" not in todo["on"]["all_names"][0] and "todo" in todo["on"]["all_names"][1]  # recovered
    saved_todo = todo["off"]["first_tokens"] * 2 - sum(todo["on"]["tokens"])

    data = json.loads(report("--json", "--ledger", str(ledger_path), "--price-per-mtok", "2.5"))
    sessions = data["sessions"]
    for row in (read, hello, todo):
        assert row["off"]["session"] not in sessions  # a disabled router records nothing
    r = sessions[read["on"]["session"]]
    assert (r["phase"], r["requests"], r["recoveries"]) == ("routed", 1, 0)
    assert r["tokens_saved"] == saved_read  # the report's number is the measured one
    h = sessions[hello["on"]["session"]]
    assert (h["phase"], h["tokens_saved"]) == ("full", 0)
    t = sessions[todo["on"]["session"]]
    assert (t["phase"], t["requests"], t["recoveries"]) == ("routed", 2, 1)
    assert t["tokens_saved"] == saved_todo  # request 2 carries the recovered tool: saves less
    assert data["price_per_mtok"] == 2.5
    ours = [sessions[x["on"]["session"]] for x in (read, hello, todo)]
    assert sum(s["tokens_saved"] for s in ours) == saved_read + saved_todo
    day = data["days"][r["day"]]
    assert day["abstentions"] >= 1 and day["recoveries"] >= 1 and day["routed"] >= 2

    text = report("--ledger", str(ledger_path), "--price-per-mtok", "2.5", "--sessions", "500")
    assert "priced at $2.5 per million input tokens" in text
    assert "est. cost saved" in text and "abstained" in text and "recoveries" in text
    total_line = next(line for line in text.splitlines() if line.startswith("total"))
    assert f"{data['total']['tokens_saved']:,}" in total_line
    read_line = next(line for line in text.splitlines() if line.startswith(read["on"]["session"][:25]))
    assert f"{saved_read:,}" in read_line and f"${saved_read * 2.5 / 1_000_000:,.4f}" in read_line
    todo_line = next(line for line in text.splitlines() if line.startswith(todo["on"]["session"][:25]))
    assert todo_line.rstrip().endswith("1")  # one recovery
    print("\n" + text)


def test_report_default_ledger_is_the_profiles(stub, router_config, agent_factory, ledger_path, hermes_home,
                                               tmp_path):
    """Finding 9: from the installed copy with no --ledger it reads the profile's own ledger, and
    from anywhere else ``--home``/``-p`` names the profile."""
    try:
        run_ab(stub, router_config, agent_factory, READ)
    finally:
        stub.responder = None
    assert ledger_path == hermes_home / "token-router" / "router-ledger.jsonl"
    installed = hermes_home / "plugins" / harness.PLUGIN_DIRNAME
    proc = subprocess.run([sys.executable, "-m", "hermes_token_router", "report"], capture_output=True, text=True,
                          timeout=120, cwd=str(installed), env={**os.environ, "PYTHONPATH": str(installed)})
    out = proc.stdout
    assert f"ledger: {ledger_path}" in out
    assert any(line.startswith("day ") for line in out.splitlines())
    env = {k: v for k, v in os.environ.items() if k != "HERMES_HOME"}
    env["HOME"] = str(tmp_path)  # nothing at ~/.hermes: only --home can find it
    elsewhere = subprocess.run([sys.executable, "-m", "hermes_token_router", "report", "--home", str(hermes_home)],
                               capture_output=True, text=True, timeout=120, cwd=str(ROOT), env=env)
    assert f"ledger: {ledger_path}" in elsewhere.stdout


def test_report_without_records_says_so(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "hermes_token_router", "report", "--ledger",
                           str(tmp_path / "none.jsonl")], capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert proc.returncode == 1 and "no records" in proc.stdout


def test_report_on_benchmark_ledger(tmp_path):
    """The repo's live A/B benchmark (shipped rules, real turns), then the report on its ledger."""
    bench = ROOT / "benchmarks" / "live_ab.py"
    if not bench.is_file():
        pytest.skip("benchmarks/live_ab.py is not in this checkout")
    out_json = tmp_path / "ab.json"
    env = harness.offline_env()
    for key in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_TOKEN_ROUTER_CONFIG"):
        env.pop(key, None)
    proc = subprocess.run([sys.executable, str(bench), "--no-cli", "--json", str(out_json)], capture_output=True,
                          text=True, timeout=600, cwd=str(ROOT), env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ab = json.loads(out_json.read_text())
    ledger = Path(ab["ledger"])
    assert ledger.is_file()
    data = json.loads(report("--json", "--ledger", str(ledger)))
    assert data["total"]["sessions"] == len(ab["rows"])  # one recorded session per router-on turn
    measured = sum(r["off"]["tool_tokens"] - r["on"]["tool_tokens"] for r in ab["rows"])
    assert data["total"]["tokens_saved"] == measured
    text = report("--ledger", str(ledger))
    assert any(line.startswith("day ") for line in text.splitlines()) and "total" in text
