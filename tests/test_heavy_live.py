"""Dynamic toolsets in the real ``hermes chat -q`` (Hermes 0.19.0), with a real stdio MCP
server: the heavy fixture's ``github`` (20 tools, written with the ``mcp`` package and
discovered by Hermes itself), the router on or off, our stub model recording what the
first provider request carried. Each run is a fresh process with its own HERMES_HOME:
MCP discovery registers tools process-wide, so it never runs inside the test process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hermes_token_router.devtools import harness, heavy

pytest.importorskip("mcp")

BIN = Path(sys.executable).parent
PRS = "list the open pull requests on github for acme/api and tell me which one is oldest"
COMPOUND = "read ./notes.md and then open a github issue in acme/api summarising it"
FILE_ONLY = "read ./notes.md and summarise it"


def chat_requests(stub, tmp_path: Path, prompt: str, *, enabled: bool, tool_search: str = "off",
                  label: str = "", **router_global) -> list:
    """Every chat request of one ``hermes chat -q`` turn, in order."""
    home = tmp_path / f"home-{label or ('on' if enabled else 'off')}"
    harness.prepare_home(home, stub.base_url, router_config={"global": {"enabled": enabled, **router_global}},
                         hermes_extra=heavy.hermes_extra(["github"], tool_search=tool_search))
    (tmp_path / "notes.md").write_text("# Notes\n- the login page times out after 30s\n")
    env = harness.offline_env()
    env.update(HERMES_HOME=str(home), HERMES_INTERACTIVE="1")
    for var in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_TOKEN_ROUTER_CONFIG", "PYTHONPATH"):
        env.pop(var, None)
    stub.clear()
    proc = subprocess.run([str(BIN / "hermes"), "chat", "-q", prompt], env=env, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any(r.tools for r in stub.chat_requests()), proc.stdout[-2000:] + proc.stderr[-2000:]
    return stub.chat_requests()


def first_request(stub, tmp_path: Path, prompt: str, **kwargs) -> list:
    return [r for r in chat_requests(stub, tmp_path, prompt, **kwargs) if r.tools][0].tool_names


def github(names) -> set:
    return {n for n in names if n.startswith("mcp__github__")}


def test_integration_only_request_narrows_to_the_integration(stub, tmp_path):
    off = first_request(stub, tmp_path, PRS, enabled=False)
    assert len(github(off)) == 20  # Hermes discovered the fixture server
    on = first_request(stub, tmp_path, PRS, enabled=True)
    assert "mcp__github__list_pull_requests" in on
    assert github(on) == github(off)  # the whole toolset, routed as a toolset
    assert len(on) < len(off)
    assert "terminal" not in on and "read_file" not in on  # integration only: no built-in route


def test_compound_request_keeps_the_builtin_route_and_the_integration(stub, tmp_path):
    off = first_request(stub, tmp_path, COMPOUND, enabled=False)
    on = first_request(stub, tmp_path, COMPOUND, enabled=True)
    assert "read_file" in on and "mcp__github__create_issue" in on
    # The learned opinion may add terminal here ("open a github issue" is `gh` work on a bare
    # profile); dropping its additions beside a named integration lost six toolsets on the
    # heavy files, so the check is that the surface stays narrow, not which built-ins join.
    assert len(on) < len(off) and "browser_navigate" in off and "browser_navigate" not in on


def test_file_only_request_carries_no_integration(stub, tmp_path):
    on = first_request(stub, tmp_path, FILE_ONLY, enabled=True)
    assert "read_file" in on and not github(on)


def test_with_hermes_deferral_a_narrowed_session_keeps_the_bridge(stub, tmp_path):
    """``tools.tool_search: on`` defers the MCP tools behind Hermes's bridge: the routed
    first request keeps tool_search/tool_call and does not re-add what Hermes deferred."""
    off = first_request(stub, tmp_path, PRS, enabled=False, tool_search="on", label="ts-off")
    assert {"tool_search", "tool_call"} <= set(off) and not github(off)
    on = first_request(stub, tmp_path, PRS, enabled=True, tool_search="on", label="ts-on")
    assert {"tool_search", "tool_call"} <= set(on)
    assert not github(on)
    assert len(on) < len(off) and "terminal" not in on


def test_router_status_shows_the_routed_dynamic_toolset(stub, tmp_path):
    home = tmp_path / "home-status"
    harness.prepare_home(home, stub.base_url, router_config={"global": {"enabled": True}},
                         hermes_extra=heavy.hermes_extra(["github", "slack"]))
    env = harness.offline_env()
    env.update(HERMES_HOME=str(home), HERMES_INTERACTIVE="1", PYTHONPATH=str(harness.REPO_ROOT))
    for var in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_TOKEN_ROUTER_CONFIG"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, str(heavy.FIXTURE_DIR / "status_probe.py"), PRS], env=env, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status = proc.stdout.split("=====STATUS=====", 1)[-1]
    assert "dynamic toolsets routed: mcp-github (of mcp-github, mcp-slack)" in status, proc.stdout[-3000:]


def test_the_classifier_is_shown_what_the_mcp_server_offers(stub, tmp_path):
    """With the rules off the model classifier decides; the integration it may name is
    described by its tool names (as in the catalog), not offered as a bare ``mcp-github``."""
    reqs = chat_requests(stub, tmp_path, "can you look at this", enabled=True, label="classifier",
                         deterministic_rules_enabled=False,
                         classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                                     "model": "tiny-router", "api_key_env": None})
    asked = [r for r in reqs if (r.body or {}).get("model") == "tiny-router"]
    assert len(asked) == 1, [r.body.get("model") for r in reqs]
    system = asked[0].body["messages"][0]["content"]
    line = next(x for x in system.splitlines() if x.startswith("- mcp-github"))
    assert line.startswith("- mcp-github: 20 tools, e.g. ") and line.endswith(" more)"), line
    assert "mcp__" not in line and "pull_request" in line, line
