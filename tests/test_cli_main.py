"""``hermes-token-router`` / ``python -m hermes_token_router``: the offline commands, run as a
user runs them (a subprocess), with the router's config chosen by HERMES_TOKEN_ROUTER_CONFIG."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from hermes_token_router.devtools import harness
from hermes_token_router.devtools.stub_llm import Reply

ROOT = Path(__file__).resolve().parents[1]


def run(args, tmp_path, config=None, stdin=None):
    env = harness.offline_env()
    env.pop("HERMES_TOKEN_ROUTER_CONFIG", None)
    if config is not None:
        path = tmp_path / "router.yaml"
        path.write_text(yaml.safe_dump(config))
        env["HERMES_TOKEN_ROUTER_CONFIG"] = str(path)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "hermes_token_router", *args], env=env, cwd=tmp_path,
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_route_json_uses_the_rules(tmp_path):
    proc = run(["route", "open ./notes.md and list its headings", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["action"] == "narrow" and out["toolsets"] == ["file"] and out["source"] == "rules"
    assert set(out) >= {"action", "toolsets", "intent", "confidence", "source", "reason"}


def test_route_jsonl_keeps_ids(tmp_path):
    lines = "\n".join(json.dumps(r) for r in ({"id": "a", "text": "帮我看看这个", "lang": "zh"},
                                              {"id": 2, "text": "run pytest in the repo"}))
    proc = run(["route", "--jsonl"], tmp_path, stdin=lines + "\n")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [r["id"] for r in rows] == ["a", 2]
    assert rows[0]["action"] == "full" and "terminal" in rows[1]["toolsets"]


def test_route_uses_the_configured_classifier(stub, tmp_path):
    stub.script(Reply(content=json.dumps({"toolsets": ["web"], "intent": "research", "confidence": 0.96})))
    config = {"global": {"deterministic_rules_enabled": False, "router_hard_timeout_ms": 30000,  # a cold openai import
                         "classifier": {"enabled": True, "provider": "custom", "base_url": stub.base_url,
                                        "model": "tiny-router", "api_key_env": None}}}
    proc = run(["route", "what's new in the world of compilers?", "--json"], tmp_path, config=config)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["source"] == "classifier" and out["toolsets"] == ["web"] and out["latency_ms"] > 0, out
    assert stub.chat_requests()[0].body["model"] == "tiny-router"


def test_invalid_config_is_reported_and_route_still_answers(tmp_path):
    proc = run(["route", "hello", "--json"], tmp_path, config={"global": {"confidence_threshold": 3}})
    assert "confidence_threshold" in proc.stderr and "fix:" in proc.stderr
    assert proc.returncode == 0 and json.loads(proc.stdout)["action"] in ("narrow", "full")


def test_report_without_ledger_says_what_to_do(tmp_path):
    proc = run(["report", "--ledger", str(tmp_path / "none.jsonl")], tmp_path)
    assert proc.returncode == 1 and "enable the router" in proc.stdout


def test_skills_subcommands_are_mounted(tmp_path):
    proc = run(["skills", "--help"], tmp_path)
    assert proc.returncode == 0 and "build" in proc.stdout and "match" in proc.stdout and "trim" in proc.stdout
