"""``/router on|off|reset|status`` through Hermes 0.19.0's real slash-command dispatch.

* CLI: a real ``cli.HermesCLI`` (built offline against the stub model) whose
  ``process_command`` reaches ``resolve_plugin_command_result``; turns run through
  ``HermesCLI.chat`` exactly as the interactive loop runs them.
* Gateway: a real ``gateway.run.GatewayRunner`` whose ``_handle_message`` takes both the
  chat messages (the gateway builds, caches and runs the agent) and the ``/router``
  commands (its plugin-command branch), for a Telegram DM source.

Narrowing is decided by the optional model classifier pointed at the stub (the stub
answers its non-streaming call with ``{"toolsets": ["file"], ...}``), with the rules off,
so these tests do not depend on the deterministic rule set.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

import model_tools  # noqa: F401  (Hermes discovers plugins at this import; conftest set HERMES_HOME)

from hermes_token_router.devtools.stub_llm import Reply

INTENT = "read and summarise a file"  # the model's summary: never shown, the toolsets are
PREDICTED = "file"


def classifier_responder(toolsets=("file",), confidence=0.97):
    def respond(body):
        if not body.get("stream"):  # the router's classifier call (Hermes always streams)
            return Reply(content=json.dumps({"toolsets": list(toolsets), "intent": INTENT,
                                             "confidence": confidence}))
        return Reply(content="ok")
    return respond


@pytest.fixture
def routed(stub, router_config, runtime):
    """Router on (config.yaml), rules off, classifier = the stub; switch cleared after."""
    stub.responder = classifier_responder()
    router_config(enabled=True, deterministic_rules_enabled=False,
                  classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                              "model": "router-small", "api_key_env": None})
    runtime.set_switch(None)
    yield stub
    runtime.set_switch(None)
    stub.responder = None


def agent_requests(stub):
    """Hermes's own model requests (streaming), not the classifier's or title generation's."""
    return [r for r in stub.chat_requests() if (r.body or {}).get("stream") and r.tools]


def full_names(agent):
    return [t["function"]["name"] for t in agent.tools]


# -- CLI ------------------------------------------------------------------------------

@pytest.fixture
def hermes_cli(stub, capfd):  # capfd first: the CLI wraps the sys.stdout it finds at start-up
    import cli as hermes_cli_module
    from hermes_cli.plugins import get_plugin_manager

    c = hermes_cli_module.HermesCLI()
    manager = get_plugin_manager()
    previous = manager._cli_ref
    manager._cli_ref = c  # what HermesCLI.run() does before its input loop
    assert c._init_agent()
    yield c
    try:
        from hermes_token_router.devtools.harness import finalize_session

        finalize_session(c.agent)
        c.agent.close()
    except Exception:
        pass
    manager._cli_ref = previous


def command(c, capfd, text: str) -> str:
    """Type ``text`` at the CLI prompt; returns what the CLI printed."""
    capfd.readouterr()
    assert c.process_command(text) is True
    return capfd.readouterr().out


def test_cli_off_restores_exact_surface_and_status_shows_savings(routed, hermes_cli, capfd, runtime):
    c = hermes_cli
    agent = c.agent
    captured_tools, captured_valid = agent.tools, agent.valid_tool_names
    full = full_names(agent)

    assert c.chat("read ./notes.md and summarise it") == "ok"
    first = agent_requests(routed)[-1]
    assert len(first.tools) < len(full) and "read_file" in first.tool_names
    assert "terminal" not in first.tool_names

    out = command(c, capfd, "/router status")
    state = runtime.states.get(agent.session_id)
    assert state is not None and state.phase == "routed"
    per_request = state.tokens_full - state.tokens_now
    assert per_request > 0 and state.tokens_saved_total == per_request
    assert "ON (decided by config.yaml)" in out
    assert f"session {agent.session_id}: routed (predicted {PREDICTED}" in out
    assert "loaded toolsets: file" in out
    assert "recoveries: 0" in out
    assert f"(saves {per_request:,})" in out and f"saved so far: {per_request:,} over 1 request" in out

    out = command(c, capfd, "/router off")
    assert "Effective: OFF (/router off)" in out
    assert agent.tools is not captured_tools  # still narrowed: restore happens on the next turn

    c.chat("and now the other one")
    assert agent.tools is captured_tools and agent.valid_tool_names is captured_valid  # the exact objects
    assert agent_requests(routed)[-1].tool_names == full
    assert state.phase == "restored" and runtime.states.get(agent.session_id) is state

    out = command(c, capfd, "/router status")
    assert "OFF (decided by /router off)" in out and "/router switch: off" in out
    assert "restored" in out and f"full surface, {len(full)} tools" in out
    assert f"saved so far: {per_request:,} over" in out  # the full-surface turn saved nothing

    # /router on: a session already restored to full stays full until it ends.
    out = command(c, capfd, "/router on")
    assert "Effective: ON (/router on)" in out
    c.chat("one more")
    assert agent.tools is captured_tools
    assert agent_requests(routed)[-1].tool_names == full

    out = command(c, capfd, "/router reset")
    assert "Effective: ON (config.yaml)" in out
    out = command(c, capfd, "/router status")
    assert "/router switch: (none)" in out and "ON (decided by config.yaml)" in out


def test_cli_on_routes_new_sessions_and_env_zero_always_wins(stub, router_config, runtime, hermes_cli, capfd,
                                                             monkeypatch):
    """config.yaml says off; ``/router on`` routes the next new session; ``=0`` beats the switch."""
    stub.responder = classifier_responder()
    router_config(enabled=False, deterministic_rules_enabled=False,
                  classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                              "model": "router-small", "api_key_env": None})
    runtime.set_switch(None)
    c = hermes_cli
    try:
        out = command(c, capfd, "/router status")
        assert "OFF (decided by config.yaml)" in out and "(enabled: false)" in out

        monkeypatch.setenv("HERMES_TOKEN_ROUTER_ENABLED", "0")
        out = command(c, capfd, "/router on")
        assert "Effective: OFF (environment (HERMES_TOKEN_ROUTER_ENABLED=0))" in out
        assert "always wins" in out
        tools = c.agent.tools
        c.chat("read ./notes.md and summarise it")
        assert c.agent.tools is tools and runtime.states.get(c.agent.session_id) is None  # hands-off

        monkeypatch.delenv("HERMES_TOKEN_ROUTER_ENABLED")
        c.new_session(silent=True)  # real /new: fires on_session_finalize/reset in the CLI
        c.chat("read ./todo.md and summarise it")
        state = runtime.states.get(c.agent.session_id)
        assert state is not None and state.phase == "routed"
        assert len(agent_requests(stub)[-1].tools) < len(state.capture.tools)
    finally:
        runtime.set_switch(None)
        stub.responder = None


def test_cli_disabled_router_is_hands_off(stub, router_config, runtime, hermes_cli, capfd):
    """Disabled from the start: no capture, no restore, the host's objects untouched."""
    router_config(enabled=False)
    c = hermes_cli
    tools, valid = c.agent.tools, c.agent.valid_tool_names
    c.chat("read ./notes.md and summarise it")
    c.chat("thanks")
    assert c.agent.tools is tools and c.agent.valid_tool_names is valid
    assert runtime.states.get(c.agent.session_id) is None
    out = command(c, capfd, "/router status")
    assert f"session {c.agent.session_id}: not routed" in out


def test_cli_failed_restore_is_retried_next_turn(routed, hermes_cli, capfd, runtime, plugin_module, monkeypatch):
    c = hermes_cli
    agent = c.agent
    captured = agent.tools
    c.chat("read ./notes.md and summarise it")
    state = runtime.states.get(agent.session_id)
    assert state.phase == "routed"
    narrowed = agent.tools

    mutation = plugin_module("surface_mutation")  # every surface write goes through apply_all_or_nothing
    real_apply = mutation.apply_all_or_nothing
    calls = {"n": 0}

    def flaky_apply(setters, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("simulated restore failure")
        return real_apply(setters, **kwargs)

    monkeypatch.setattr(mutation, "apply_all_or_nothing", flaky_apply)
    command(c, capfd, "/router off")
    c.chat("second turn")  # the restore fails: still narrowed, still our state
    assert state.phase == "routed" and state.restore_failures == 1 and agent.tools is narrowed
    c.chat("third turn")  # retried, and now it succeeds exactly once
    assert state.phase == "restored" and agent.tools is captured
    c.chat("fourth turn")
    assert calls["n"] == 2  # never restored again


def test_cli_unknown_argument_is_named_with_the_commands(hermes_cli, capfd):
    out = command(hermes_cli, capfd, "/router sideways")
    assert out.startswith("/router: unknown subcommand 'sideways'")
    assert "/router status" in out and "/router help" in out


# -- gateway --------------------------------------------------------------------------

@pytest.fixture
def gateway(monkeypatch):
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "true")
    from gateway.config import GatewayConfig, Platform
    from gateway.platforms.base import MessageEvent
    from gateway.run import GatewayRunner
    from gateway.session import SessionSource

    runner = GatewayRunner(GatewayConfig())
    source = SessionSource(platform=Platform.TELEGRAM, chat_id=f"chat-{uuid.uuid4().hex[:8]}", user_id="u1",
                           user_name="tester", chat_type="dm")
    loop = asyncio.new_event_loop()

    def send(text: str):
        return loop.run_until_complete(runner._handle_message(MessageEvent(text=text, source=source)))

    send.runner, send.source = runner, source
    yield send
    try:
        send("/new")
    finally:
        loop.close()


def cached_agent(send):
    key = send.runner._session_key_for_source(send.source)
    entry = send.runner._agent_cache.get(key)
    return entry[0] if entry else None


def test_gateway_off_restores_and_status_shows_savings(routed, gateway, runtime):
    send = gateway
    out = send("/router status")
    assert out.startswith("hermes-token-router: ON (decided by config.yaml)")
    assert "session: none in this process yet" in out or "not routed" in out or "session " in out

    assert send("read ./notes.md and summarise it") == "ok"
    agent = cached_agent(send)
    assert agent is not None and agent.platform == "telegram"
    state = runtime.states.get(agent.session_id)
    assert state is not None and state.phase == "routed"
    captured = state.capture.tools
    narrowed_request = agent_requests(routed)[-1]
    assert len(narrowed_request.tools) < len(captured)

    out = send("/router status")  # the plugin-command branch, no model call
    per_request = state.tokens_full - state.tokens_now
    assert per_request > 0
    assert f"session {agent.session_id}: routed (predicted {PREDICTED}" in out
    assert f"saved so far: {per_request:,} over 1 request" in out
    requests_before = len(routed.chat_requests())

    out = send("/router off")
    assert "Effective: OFF (/router off)" in out
    assert len(routed.chat_requests()) == requests_before  # commands never call the model

    assert send("and again") == "ok"
    assert cached_agent(send) is agent
    assert agent.tools is captured
    assert agent_requests(routed)[-1].tool_names == [t["function"]["name"] for t in captured]
    out = send("/router status")
    assert "OFF (decided by /router off)" in out and f"{agent.session_id}: restored" in out
    assert f"saved so far: {per_request:,} over" in out

    out = send("/router on")
    assert "Effective: ON (/router on)" in out
    send("still full?")
    assert agent.tools is captured  # restored sessions stay full until they end

    out = send("/router reset")
    assert "Effective: ON (config.yaml)" in out


def test_gateway_new_session_after_on_is_routed(routed, gateway, runtime):
    send = gateway
    runtime.set_switch(False)
    send("read ./notes.md and summarise it")
    agent = cached_agent(send)
    assert runtime.states.get(agent.session_id) is None  # off from the start: never captured
    out = send("/router on")
    assert "Effective: ON (/router on)" in out
    send("/new")
    send("read ./todo.md and summarise it")
    agent2 = cached_agent(send)
    state = runtime.states.get(agent2.session_id)
    assert state is not None and state.phase == "routed"


# -- TUI / desktop app ------------------------------------------------------------------

def test_tui_status_identifies_its_session_through_the_real_dispatch(routed, agent_factory, runtime):
    """The TUI's JSON-RPC ``command.dispatch`` runs the plugin handler with no session info;
    the router finds the session record in that frame and reports its savings."""
    from tui_gateway import server

    agent = agent_factory()
    agent.run_conversation("read ./notes.md and summarise it")
    state = runtime.states.get(agent.session_id)
    assert state is not None and state.phase == "routed"
    sid = "tui-" + agent.session_id
    server._sessions[sid] = {"agent": agent}
    try:
        reply = server._methods["command.dispatch"]("rpc-1", {"name": "router", "arg": "status",
                                                               "session_id": sid})
    finally:
        server._sessions.pop(sid, None)
    output = reply["result"]["output"]
    assert f"session {agent.session_id}: routed" in output
    assert f"{state.tokens_now:,} now vs {state.tokens_full:,} full" in output


# -- finding 8: what each subcommand says ------------------------------------------------

def test_cli_unknown_subcommand_is_named_and_help_lists_every_command(hermes_cli, capfd):
    out = command(hermes_cli, capfd, "/router bogus")
    assert "unknown subcommand 'bogus'" in out
    assert "/router report" in out and "/router doctor" in out
    help_text = command(hermes_cli, capfd, "/router help")
    for word in ("status", "on", "off", "reset", "report", "doctor", "help"):
        assert f"/router {word}" in help_text


def test_cli_on_off_reset_say_when_they_take_effect(routed, hermes_cli, capfd, runtime):
    c = hermes_cli
    out = command(c, capfd, "/router on")
    assert "/new starts a routed one" in out
    out = command(c, capfd, "/router off")
    assert "next turn" in out and "/new" in out
    out = command(c, capfd, "/router reset")
    assert "/router switch is cleared" in out and "settings file" in out and "/new" in out


def test_cli_status_names_kept_tools_is_current_after_off_and_wraps(routed, hermes_cli, capfd, runtime):
    c = hermes_cli
    c.chat("read ./notes.md and summarise it")
    state = runtime.states.get(c.agent.session_id)
    kept = [t["function"]["name"] for t in state.committed_tools]
    out = command(c, capfd, "/router status")
    assert f"kept tools ({len(kept)} of {len(state.capture.names)})" in out
    flat = " ".join(out.split())
    assert ", ".join(kept) in flat
    kept_lines = out[out.index("kept tools"):].splitlines()
    assert all(len(line) <= 78 for line in kept_lines[:3])
    assert "skill router: off" in out

    out = command(c, capfd, "/router off")
    status = command(c, capfd, "/router status")  # before the next turn: it must not read as still routing
    assert "OFF (decided by /router off)" in status
    assert "the router is off now: this session gets its full tool surface back" in status


def test_cli_report_and_doctor_in_chat(routed, hermes_cli, capfd, runtime, router_config_path):
    c = hermes_cli
    c.chat("read ./notes.md and summarise it")
    c.new_session(silent=True)  # the ledger line is written when the turn ends
    out = command(c, capfd, "/router report")
    assert "tool-schema tokens saved" in out and "tokens over" in out
    assert "report" in out.splitlines()[-1]  # names the command for the full table
    out = command(c, capfd, "/router doctor")
    assert "routing: ON" in out and str(router_config_path) in out
    assert "doctor --probe" in out


def test_gateway_reply_shows_an_invalid_config_once(stub, router_config, router_config_path, gateway):
    from hermes_token_router.devtools import harness

    harness.write_router_config(router_config_path, {"global": {"enabled": True, "confidence_threshold": 5}})
    reply = gateway("read ./notes.md and summarise it")
    assert reply.startswith("[hermes-token-router] the router is OFF: its settings are invalid")
    assert "confidence_threshold" in reply and reply.endswith("ok")
    assert gateway("and again") == "ok"
