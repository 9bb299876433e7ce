"""Issue 9: host rebuilds against the real Hermes 0.19.0.

* An MCP refresh (``tools.mcp_tool.refresh_agent_mcp_tools``, the function Hermes runs at
  the start of every turn when MCP tools exist, and on ``/reload-mcp``) publishes a fresh
  full ``agent.tools``; the next turn is narrowed again to the session's sticky surface,
  recoveries included, and session end hands back the host's surface (the capture itself
  when the rebuild shows the same definitions).
* A real ``GatewayRunner`` that evicts and rebuilds a session's cached agent: the new
  ``AIAgent`` (same session id) gets the session's sticky surface on its first turn.
"""

from __future__ import annotations

import asyncio
import gc

import pytest

from hermes_token_router.devtools.stub_llm import Reply

FILE_TOOLS = {"read_file", "write_file", "patch", "search_files"}


@pytest.fixture
def file_sessions(narrowing):
    narrowing(("file",))


def tool_names(tools):
    return [t["function"]["name"] for t in tools]


def requests_with(stub, text):
    return [r for r in stub.chat_requests() if r.tools and text in str((r.body or {}).get("messages"))]


def test_mcp_refresh_mid_session_is_renarrowed_next_turn(stub, file_sessions, agent_factory, runtime):
    from tools.mcp_tool import refresh_agent_mcp_tools

    agent = agent_factory()
    # turn 1: narrowed; the model calls the pruned ``terminal``, which is recovered
    stub.script(Reply(content=None, tool_calls=[("terminal", {"command": "true"})]), Reply(content="done"))
    first = agent.run_conversation("turn one: read notes.md", conversation_history=[])
    turn1 = requests_with(stub, "turn one")
    assert "terminal" not in tool_names(turn1[0].tools) and "terminal" in tool_names(turn1[-1].tools)
    sticky = tool_names(agent.tools)

    refreshed = refresh_agent_mcp_tools(agent, quiet_mode=True)  # the real between-turns rebuild
    rebuilt = agent.tools
    assert refreshed and "delegate_task" in tool_names(rebuilt), "the MCP refresh did not rebuild the surface"

    agent.run_conversation("turn two: and the second file?", conversation_history=first["messages"])
    turn2 = requests_with(stub, "turn two")[0]
    assert tool_names(turn2.tools) == sticky, "turn 2 did not get the sticky surface back"
    state = runtime.states.get(agent.session_id)
    # the rebuild shows the captured surface again (same definitions, same order): the exact
    # capture stays the restore target, and the committed list is reinstalled byte for byte
    captured = state.capture.tools
    assert captured is not rebuilt and captured == rebuilt
    runtime.on_session_finalize(session_id=agent.session_id)
    assert agent.tools is captured and agent.tools == rebuilt


def test_reload_mcp_between_turns_in_a_gateway_style_loop_stays_sticky(stub, file_sessions, agent_factory, runtime):
    """Every turn rebuilt by the host (the MCP-user steady state): the wire surface is
    byte-identical across all turns."""
    from tools.mcp_tool import refresh_agent_mcp_tools

    agent = agent_factory()
    history = []
    for n in range(4):
        if n:
            refresh_agent_mcp_tools(agent, quiet_mode=True)
        history = agent.run_conversation(f"loop turn {n}: read notes.md", conversation_history=history)["messages"]
    sent = [requests_with(stub, f"loop turn {n}")[0].tools_json for n in range(4)]
    assert len(set(sent)) == 1
    assert "terminal" not in requests_with(stub, "loop turn 3")[0].tool_names
    runtime.on_session_finalize(session_id=agent.session_id)


def test_gateway_rebuilt_cached_agent_gets_the_sticky_surface(stub, file_sessions, runtime, monkeypatch):
    from gateway.config import GatewayConfig, Platform
    from gateway.platforms.base import MessageEvent
    from gateway.run import GatewayRunner
    from gateway.session import SessionSource

    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "true")
    runner = GatewayRunner(GatewayConfig())
    source = SessionSource(platform=Platform.TELEGRAM, chat_id="7301",
                           chat_type="dm", user_id="u-rebuild")
    key = runner._session_key_for_source(source)

    def send(text, mid):
        return asyncio.run(runner._handle_message(MessageEvent(text=text, source=source, message_id=mid)))

    stub.script(Reply(content=None, tool_calls=[("terminal", {"command": "true"})]), Reply(content="done"))
    assert send("rebuild one: read notes.md", "r1") == "done"
    old = runner._agent_cache[key][0]
    sid = old.session_id
    sticky = tool_names(old.tools)
    assert "terminal" in sticky and FILE_TOOLS <= set(sticky)  # routed, then recovered terminal

    runner._evict_cached_agent(key)  # what /model, the idle TTL or the cache cap do
    assert send("rebuild two: and now?", "r2") == "ok"
    new = runner._agent_cache[key][0]
    assert new.session_id == sid
    sent = requests_with(stub, "rebuild two")[0]
    assert sent.tool_names == sticky, "the rebuilt agent's first request lost the sticky surface"
    state = runtime.states.get(sid)
    assert state is not None and state.agent is new
    runtime.on_session_finalize(session_id=sid)


def test_rebuild_after_the_old_agent_was_collected_keeps_recoveries(stub, file_sessions, agent_factory, runtime):
    import weakref

    from hermes_token_router.devtools import harness

    def session_one():  # its own frame: the router's stack walk snapshots frame locals (3.11)
        first = harness.build_agent(stub.base_url)  # not via the fixture, which keeps a reference
        sid = first.session_id
        runtime.pre_llm_call(session_id=sid, user_message="read notes.md", platform="cli", agent=first)
        runtime.recovery.request_toolset({"toolsets": ["terminal"]}, session_id=sid)
        assert "terminal" in first.valid_tool_names
        first.close()
        return sid, weakref.ref(first)

    sid, ref = session_one()
    gc.collect()
    assert ref() is None, "the old agent was not collected"
    assert runtime.states.get(sid) is None  # evicted with its agent (bounded state)
    second = agent_factory(session_id=sid)
    runtime.pre_llm_call(session_id=sid, user_message="next", platform="cli", agent=second)
    assert "terminal" in second.valid_tool_names
    runtime.on_session_finalize(session_id=sid)
