"""Issue 15: the key live scenarios under both hook dispatch models.

Every test here runs twice (``hook_dispatch`` in conftest): with 0.19.0's synchronous
``invoke_hook`` and with upstream main's threaded dispatch as ``devtools.upstream_dispatch``
reproduces it from ``hermes_cli/plugins_dispatch.py`` (NousResearch/hermes-agent, commit
006a5aebb4d134ba188ff60adf1a02f668312b5f): each bounded hook and ``pre_tool_call`` on a
``hermes-hook-<name>`` daemon thread, a timeout, skip on timeout, and a ``pre_tool_call``
that times out or raises turning into a block directive. The agents, the gateway runner and
the tool execution are the real Hermes 0.19.0; only the model is the local stub.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from hermes_token_router.devtools.stub_llm import Reply

FILE_TOOLS = {"read_file", "write_file", "patch", "search_files"}
NOT_FILE = {"terminal", "delegate_task", "cronjob", "execute_code"}
VAULT_TOOLSET = "htr_vault"  # the conftest ``vault_calls`` tool
VAULT_TOOL = "htr_vault_open"


def names(tools):
    return {t["function"]["name"] for t in tools}


def tool_results(result) -> list:
    return [m.get("content") or "" for m in result["messages"] if m.get("role") == "tool"]


def ran_on_hook_threads(dispatch, hook: str) -> None:
    """Under the threaded model the hook really ran on upstream's worker threads."""
    if dispatch is None:
        return
    threads = dispatch.threads(hook)
    assert threads and all(t.startswith("hermes-hook-") for t in threads), threads


@pytest.fixture
def narrow_to_file(narrowing):
    """The installed router decides ``file`` for every new session and is switched on."""
    narrowing(("file",))


def test_first_turn_is_narrowed(stub, narrow_to_file, agent_factory, runtime, hook_dispatch):
    agent = agent_factory()
    agent.run_conversation("read notes.md and summarise it")
    sent = set(stub.chat_requests()[0].tool_names)
    assert FILE_TOOLS <= sent and not (NOT_FILE & sent), sent
    ran_on_hook_threads(hook_dispatch, "pre_llm_call")
    state = runtime.states.get(agent.session_id)
    assert state is not None and state.narrowed and state.agent is agent


def test_pruned_call_is_recovered_before_validation(stub, narrow_to_file, agent_factory, hook_dispatch):
    agent = agent_factory()
    stub.script(Reply(content=None, tool_calls=[("terminal", {"command": "echo recovered-$((40+2))"})]),
                Reply(content="done"))
    result = agent.run_conversation("read notes.md")
    assert any("recovered-42" in c for c in tool_results(result)), tool_results(result)
    reqs = stub.chat_requests()
    assert "terminal" not in reqs[0].tool_names and "terminal" in reqs[1].tool_names
    ran_on_hook_threads(hook_dispatch, "post_api_request")


def test_restore_hands_back_the_exact_capture(stub, narrow_to_file, agent_factory, runtime, hook_dispatch):
    agent = agent_factory()
    captured, valid = agent.tools, agent.valid_tool_names
    agent.run_conversation("read notes.md")
    assert agent.tools is not captured
    runtime.on_session_finalize(session_id=agent.session_id)  # synchronous upstream too
    assert agent.tools is captured and agent.valid_tool_names is valid


def test_ordinary_calls_pass_the_guard_and_an_internal_error_blocks_nothing(
        stub, narrow_to_file, agent_factory, plugin_module, monkeypatch, tmp_path, hook_dispatch):
    """Upstream fails ``pre_tool_call`` closed on an exception or timeout: the guard must
    answer "no directive" for anything it cannot judge, never raise, never wait."""
    target = tmp_path / "notes.md"
    target.write_text("guard-passes-me")
    agent = agent_factory()
    stub.script(Reply(content=None, tool_calls=[("read_file", {"path": str(target)})]), Reply(content="ok"))
    first = agent.run_conversation("read notes.md")
    assert any("guard-passes-me" in c for c in tool_results(first))

    guard_mod = plugin_module("guard")

    def broken(*a, **k):
        raise RuntimeError("internal guard bug")

    monkeypatch.setattr(guard_mod, "guard_decision", broken)
    stub.clear()
    stub.script(Reply(content=None, tool_calls=[("read_file", {"path": str(target)})]), Reply(content="ok"))
    second = agent.run_conversation("again", conversation_history=first["messages"])
    assert any("guard-passes-me" in c for c in tool_results(second)), tool_results(second)
    if hook_dispatch is not None:
        assert hook_dispatch.count("pre_tool_call", "blocked") == 0
        assert hook_dispatch.count("pre_tool_call", "ran") >= 2
        ran_on_hook_threads(hook_dispatch, "pre_tool_call")


def test_guard_blocks_a_protected_bridge_call(stub, vault_calls, router_config, agent_factory, hook_dispatch,
                                              monkeypatch):
    from tools import tool_search

    monkeypatch.setattr(tool_search, "load_config",
                        lambda: tool_search.ToolSearchConfig.from_raw({"enabled": "on"}))
    router_config(enabled=True)
    agent = agent_factory(enabled_toolsets=["file", "skills", VAULT_TOOLSET])
    assert "tool_call" in names(agent.tools) and VAULT_TOOL not in names(agent.tools)
    agent._hermes_token_router_admission = {"schema_version": 1, "protected_toolsets": [VAULT_TOOLSET],
                                            "pinned_tool_names": []}
    stub.script(Reply(content=None, tool_calls=[("tool_call", {"name": VAULT_TOOL, "arguments": {}})]),
                Reply(content="done"))
    result = agent.run_conversation("open the vault")
    assert vault_calls == [], "the protected tool ran through the tool_search bridge"
    assert any("Blocked by hermes-token-router" in c for c in tool_results(result)), tool_results(result)


def _gateway(monkeypatch):
    from gateway.config import GatewayConfig
    from gateway.run import GatewayRunner

    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "true")
    return GatewayRunner(GatewayConfig())


def _source(chat: str, user: str):
    from gateway.config import Platform
    from gateway.session import SessionSource

    return SessionSource(platform=Platform.TELEGRAM, chat_id=chat, chat_type="dm", user_id=user)


def test_two_gateway_chats_in_parallel_each_narrow_their_own_agent(stub, narrow_to_file, runtime, monkeypatch,
                                                                   hook_dispatch):
    from gateway.platforms.base import MessageEvent

    runner = _gateway(monkeypatch)
    sources = [_source(f"15{n}01", f"u15-{n}") for n in (1, 2)]
    texts = ["chat one: read alpha.md", "chat two: read beta.md"]
    arrived = threading.Barrier(2, timeout=20)

    def responder(body):  # hold both turns inside the model call at once
        arrived.wait()
        return Reply(content="ok")

    stub.responder = responder

    async def both():
        return await asyncio.gather(*(runner._handle_message(MessageEvent(text=t, source=s, message_id=f"p{i}"))
                                      for i, (t, s) in enumerate(zip(texts, sources))))

    try:
        assert asyncio.run(both()) == ["ok", "ok"]
    finally:
        stub.responder = None
    agents = [runner._agent_cache[runner._session_key_for_source(s)][0] for s in sources]
    assert agents[0] is not agents[1]
    for agent, text in zip(agents, texts):
        state = runtime.states.get(agent.session_id)
        assert state is not None and state.narrowed and state.agent is agent
        req = [r for r in stub.chat_requests() if r.tools and text in str((r.body or {}).get("messages"))][0]
        assert FILE_TOOLS <= set(req.tool_names) and not (NOT_FILE & set(req.tool_names))
        runtime.on_session_finalize(session_id=agent.session_id)
    ran_on_hook_threads(hook_dispatch, "pre_llm_call")


def test_gateway_agent_rebuilt_after_eviction_is_narrowed_and_the_old_one_untouched(
        stub, narrow_to_file, runtime, monkeypatch, hook_dispatch):
    """The old agent stays alive (a reference outlives the eviction, as an in-flight task's
    would); the stored reference must not win over the agent actually running the turn."""
    from gateway.platforms.base import MessageEvent

    runner = _gateway(monkeypatch)
    source = _source("15777", "u15-rebuild")
    key = runner._session_key_for_source(source)

    def send(text, mid):
        return asyncio.run(runner._handle_message(MessageEvent(text=text, source=source, message_id=mid)))

    assert send("rebuild one: read notes.md", "e1") == "ok"
    old = runner._agent_cache[key][0]
    old_tools, old_valid = old.tools, old.valid_tool_names
    sticky = [t["function"]["name"] for t in old.tools]
    runner._evict_cached_agent(key)
    assert send("rebuild two: and now?", "e2") == "ok"
    new = runner._agent_cache[key][0]
    assert new is not old and new.session_id == old.session_id
    assert old.tools is old_tools and old.valid_tool_names is old_valid, "the old agent was touched"
    sent = [r for r in stub.chat_requests() if r.tools and "rebuild two" in str((r.body or {}).get("messages"))][0]
    assert sent.tool_names == sticky, "the rebuilt agent was not narrowed to the session's surface"
    state = runtime.states.get(new.session_id)
    assert state is not None and state.agent is new
    runtime.on_session_finalize(session_id=new.session_id)


def test_review_fork_never_binds_its_parent(stub, narrow_to_file, agent_factory, runtime, hook_dispatch):
    """The memory/skill review fork shares the parent's session id. Its own requests fire
    ``post_api_request`` and ``pre_tool_call`` for that session: a pruned-call "recovery"
    there must not grow the parent, and its turn must not re-narrow or restore anything."""
    parent = agent_factory()
    parent.run_conversation("read notes.md")
    state = runtime.states.get(parent.session_id)
    parent_tools, keep = parent.tools, state.keep
    fork = agent_factory(session_id=parent.session_id)
    fork._memory_write_origin = "background_review"
    fork._persist_disabled = True
    fork_tools = fork.tools
    stub.clear()
    stub.script(Reply(content=None, tool_calls=[("terminal", {"command": "echo fork-ran"})]), Reply(content="done"))
    result = fork.run_conversation("review the conversation")
    assert any("fork-ran" in c for c in tool_results(result))
    assert parent.tools is parent_tools and state.keep == keep and "terminal" not in parent.valid_tool_names
    assert fork.tools is fork_tools
    assert runtime.states.get(parent.session_id) is state and state.agent is parent
    runtime.on_session_finalize(session_id=parent.session_id)


def test_guard_answers_while_every_lock_it_could_wait_on_is_held(stub, vault_calls, router_config, agent_factory,
                                                                  runtime, plugin_module):
    """O(1) and no blocking lock: with the registry lock, the state registry lock, Hermes's
    tools lock and the agent's admission-slot lock all held by another thread, the guard
    still answers at once (upstream would fail the call closed if it waited past the timeout)."""
    import time

    from tools.mcp_tool import _agent_tools_lock
    from tools.registry import registry

    router_config(enabled=True)
    agent = agent_factory(enabled_toolsets=["file", "skills"])
    agent._hermes_token_router_admission = {"schema_version": 1, "protected_toolsets": [VAULT_TOOLSET],
                                            "pinned_tool_names": []}
    agent.run_conversation("read notes.md")
    slot = plugin_module("admission_state").slot_of(agent)
    assert slot is not None
    held, release = threading.Event(), threading.Event()

    def hold():
        with registry._lock, runtime.states._lock, _agent_tools_lock, slot.lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(5)
    try:
        started = time.monotonic()
        blocked = runtime.admission.pre_tool_call(tool_name=VAULT_TOOL, session_id=agent.session_id)
        passed = runtime.admission.pre_tool_call(tool_name="read_file", session_id=agent.session_id)
        assert time.monotonic() - started < 1.0
    finally:
        release.set()
        holder.join(10)
    assert blocked is not None and blocked["action"] == "block"
    assert passed is None
