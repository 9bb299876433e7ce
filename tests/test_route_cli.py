"""The ``route`` subcommand: single message, JSON, JSON lines, and the core's decide hook."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

from hermes_token_router.decision import Decision
from hermes_token_router.cli.route import add_subcommand as add_route_subcommand, run_route

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"action", "toolsets", "intent", "confidence", "source", "reason"}


def _parse(argv, decide=None):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    add_route_subcommand(sub, decide=decide)
    return parser.parse_args(argv)


def test_json_single_message():
    out = io.StringIO()
    assert run_route(_parse(["route", "turn off the lights", "--json"]), stdout=out) == 0
    data = json.loads(out.getvalue())
    assert KEYS <= set(data)
    assert data["action"] == "narrow" and data["toolsets"] == ["homeassistant"] and data["source"] == "rules"


def test_plain_text_form():
    out = io.StringIO()
    assert run_route(_parse(["route", "不要运行测试"]), stdout=out) == 0
    assert out.getvalue().startswith("keep the full surface") and "negated" in out.getvalue()


def test_jsonl_keeps_ids_and_ignores_other_fields():
    lines = [{"id": "a", "text": "play some jazz", "required": ["spotify"]},
             {"id": 7, "text": "你好"},
             {"id": "c", "text": "can you look at this"}]
    stdin = io.StringIO("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n\n")
    out = io.StringIO()
    assert run_route(_parse(["route", "--jsonl"]), stdin=stdin, stdout=out) == 0
    rows = [json.loads(l) for l in out.getvalue().splitlines()]
    assert [r["id"] for r in rows] == ["a", 7, "c"]
    assert all(KEYS <= set(r) and "required" not in r for r in rows)
    assert rows[0]["toolsets"] == ["spotify"]
    assert (rows[1]["intent"], rows[1]["toolsets"]) == ("chitchat", [])
    assert (rows[2]["action"], rows[2]["reason"]) == ("full", "vague")


def test_jsonl_bad_line_is_reported_and_others_still_answered(capsys):
    stdin = io.StringIO('{"id": 1, "text": "git status"}\nnot json\n{"id": 3}\n')
    out = io.StringIO()
    assert run_route(_parse(["route", "--jsonl"]), stdin=stdin, stdout=out) == 2
    assert [json.loads(l)["id"] for l in out.getvalue().splitlines()] == [1]
    err = capsys.readouterr().err
    assert "line 2" in err and "line 3" in err


def test_decide_hook_is_used():
    seen = []

    def decide(text):
        seen.append(text)
        return Decision("full", (), "x", 0.1, "classifier", "stub")

    out = io.StringIO()
    assert run_route(_parse(["route", "hello", "--json"], decide=decide), stdout=out) == 0
    assert seen == ["hello"] and json.loads(out.getvalue())["source"] == "classifier"


def test_missing_text_is_a_usage_error(capsys):
    assert run_route(_parse(["route"]), stdout=io.StringIO()) == 2
    assert "--jsonl" in capsys.readouterr().err


def test_module_entry_point_jsonl():
    proc = subprocess.run([sys.executable, "-m", "hermes_token_router", "route", "--jsonl"],
                          input='{"id": "x", "text": "帮我 git commit 一下"}\n', capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)
    assert row["id"] == "x" and row["toolsets"] == ["terminal"]
