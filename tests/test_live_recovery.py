"""Issue 3 inside the real Hermes 0.19.0: monotonic recovery, request_toolset, the catalog,
the tool_search bridge and exact restore. The stub model is scripted to make the calls."""

from __future__ import annotations

import json

import pytest

from hermes_token_router.devtools import harness
from hermes_token_router.devtools.stub_llm import Reply
from hermes_token_router.host import estimate_tokens

WEB_REQUEST = "search the web for CPython news"  # narrows to web alone (the learned opinion reads "release notes" as files)


def tool_results(result) -> list:
    return [m for m in result["messages"] if m.get("role") == "tool"]


def catalog_of(req) -> str:
    for t in req.tools:
        if t["function"]["name"] == "request_toolset":
            return t["function"]["description"]
    raise AssertionError("request_toolset missing from a narrowed request")


def test_pruned_terminal_call_runs_and_stays_loaded(stub, router_config, agent_factory):
    router_config(enabled=True)
    agent = agent_factory()
    stub.script(Reply(content=None, tool_calls=[("terminal", {"command": "echo recovered-$((40+2))"})]),
                Reply(content="done"))
    first = agent.run_conversation(WEB_REQUEST)
    agent.run_conversation("and now?", conversation_history=first["messages"])
    reqs = stub.chat_requests()
    assert "web_search" in reqs[0].tool_names and "terminal" not in reqs[0].tool_names
    results = tool_results(first)
    assert len(results) == 1 and "recovered-42" in results[0]["content"]
    assert "terminal" in reqs[1].tool_names and "terminal" in reqs[2].tool_names
    assert reqs[1].tools_json == reqs[2].tools_json  # byte-stable again after the expansion


def test_write_file_is_not_repaired_into_read_file(stub, router_config, agent_factory, runtime, plugin_module,
                                                   tmp_path):
    """With write_file pruned and read_file kept, Hermes would 'repair' a write_file call into
    read_file (difflib 0.74); recovery in post_api_request must run the real write_file."""
    router_config(enabled=True)
    agent = agent_factory()
    first = agent.run_conversation(WEB_REQUEST)  # narrowed to web
    state = runtime.states.get(agent.session_id)
    host = plugin_module("host")
    plugin_module("surface_mutation").install(state, agent, ["read_file"], ["read_file"], lambda: True,
                                              lock=host.surface_lock, estimate=host.estimate_tokens)
    assert "read_file" in agent.valid_tool_names and "write_file" not in agent.valid_tool_names
    target = tmp_path / "out.txt"
    stub.clear()
    stub.script(Reply(content=None, tool_calls=[("write_file", {"path": str(target), "content": "written"})]),
                Reply(content="ok"))
    res = agent.run_conversation("save the answer to out.txt", conversation_history=first["messages"])
    assert target.read_text() == "written"
    call = [m for m in res["messages"] if m.get("role") == "assistant" and m.get("tool_calls")][-1]
    assert call["tool_calls"][0]["function"]["name"] == "write_file"
    assert "write_file" in stub.chat_requests()[1].tool_names


def test_request_toolset_ready_unknown_already_loaded(stub, router_config, agent_factory):
    router_config(enabled=True)
    agent = agent_factory()
    stub.script(
        Reply(content=None, tool_calls=[("request_toolset", {"toolsets": ["browser", "file"], "reason": "need pages"})]),
        Reply(content=None, tool_calls=[("request_toolset", {"toolsets": ["no_such_toolset"], "reason": "typo"})]),
        Reply(content=None, tool_calls=[("request_toolset", {"toolsets": ["file"], "reason": "again"})]),
        Reply(content="fine"),
    )
    result = agent.run_conversation(WEB_REQUEST)
    answers = [json.loads(m["content"]) for m in tool_results(result)]
    assert answers[0]["reason"] == "READY" and answers[0]["request_reason"] == "need pages"
    assert {"browser_navigate", "read_file"} <= set(answers[0]["added"])
    assert answers[1]["reason"] == "UNKNOWN_TOOLSET" and answers[1]["added"] == []
    assert answers[2]["reason"] == "ALREADY_LOADED"
    reqs = stub.chat_requests()
    assert reqs[2].tools_json == reqs[1].tools_json  # the unknown name changed nothing
    assert {"browser_navigate", "read_file"} <= set(reqs[1].tool_names)


def test_catalog_is_byte_stable_across_turns_and_expansions(stub, router_config, agent_factory):
    router_config(enabled=True)
    agent = agent_factory()
    stub.script(Reply(content=None, tool_calls=[("request_toolset", {"toolsets": ["terminal"]})]), Reply(content="x"))
    first = agent.run_conversation(WEB_REQUEST)
    agent.run_conversation("ok", conversation_history=first["messages"])
    catalogs = {catalog_of(r) for r in stub.chat_requests()}
    assert len(catalogs) == 1
    text = catalogs.pop()
    for toolset in ("file", "terminal", "browser", "web", "cronjob", "delegation"):
        assert f"- {toolset}" in text
    assert estimate_tokens([t for t in stub.chat_requests()[0].tools if t["function"]["name"] == "request_toolset"]) < 500


def test_capability_question_keeps_small_surface_with_catalog(stub, router_config, agent_factory):
    router_config(enabled=True)
    full = len(agent_factory().tools)
    for question in ("what can you do?", "你能做什么"):
        stub.clear()
        agent_factory().run_conversation(question)
        req = stub.chat_requests()[0]
        assert len(req.tools) < full / 3
        assert "request_toolset" in req.tool_names and "- terminal" in catalog_of(req)


def test_restore_brings_back_exact_capture_without_router_tool(stub, router_config, agent_factory):
    router_config(enabled=True)
    agent = agent_factory()
    captured = agent.tools
    snapshot = json.dumps(captured)
    stub.script(Reply(content=None, tool_calls=[("request_toolset", {"toolsets": ["terminal"]})]), Reply(content="x"))
    agent.run_conversation(WEB_REQUEST)
    assert "request_toolset" in {t["function"]["name"] for t in agent.tools}
    harness.finalize_session(agent)
    assert agent.tools is captured and json.dumps(agent.tools) == snapshot
    assert "request_toolset" not in agent.valid_tool_names


def test_tool_search_bridge_reaches_deferred_tool_in_narrowed_session(stub, router_config, agent_factory):
    """With tools.tool_search on, non-core tools hide behind tool_search/tool_call; a
    narrowed session keeps the bridge, so a deferred tool is still found and called."""
    from hermes_cli.config import load_config, save_config

    cfg = load_config()
    original = json.dumps(cfg.get("tools", {}))
    cfg.setdefault("tools", {})["tool_search"] = {"enabled": "on"}
    save_config(cfg)
    try:
        router_config(enabled=True)
        # `video` holds a non-core tool (video_analyze), which Hermes defers behind the bridge.
        agent = agent_factory(enabled_toolsets=harness.cli_toolsets() + ["video"])
        names = {t["function"]["name"] for t in agent.tools}
        if "tool_search" not in names:
            pytest.fail(f"tool_search bridge not active in this Hermes: {sorted(names)}")
        import model_tools

        scoped = model_tools.get_tool_definitions(enabled_toolsets=agent.enabled_toolsets, quiet_mode=True,
                                                  skip_tool_search_assembly=True)
        deferred = sorted({t["function"]["name"] for t in scoped} - names)
        assert deferred, "nothing is deferred behind the bridge"
        target = deferred[0]
        stub.script(Reply(content=None, tool_calls=[("tool_search", {"query": target.replace("_", " ")})]),
                    Reply(content=None, tool_calls=[("tool_call", {"name": target, "arguments": {}})]),
                    Reply(content="done"))
        result = agent.run_conversation(WEB_REQUEST)
        req0 = stub.chat_requests()[0]
        assert {"tool_search", "tool_call"} <= set(req0.tool_names)
        assert len(req0.tools) < len(agent.tools) + 50 and "deferred" in catalog_of(req0)
        outputs = [m["content"] for m in tool_results(result)]
        assert len(outputs) == 2 and target in outputs[0]
        assert "does not exist" not in outputs[1] and "not available in this session" not in outputs[1]
    finally:
        cfg = load_config()
        cfg["tools"] = json.loads(original)
        save_config(cfg)
