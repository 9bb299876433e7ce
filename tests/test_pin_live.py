"""Issue 15: pin-aware stickiness, with current Hermes's between-turns merge emulated.

Current Hermes (NousResearch/hermes-agent, ``tools/mcp_tool_agent.py`` at commit
03fc26e814c1d9cdf4485fbf5857e5eac281685c; called from ``agent/turn_context.py`` at
0041c5c0b9eab6528142c005a0d67993d5b690ad before ``pre_llm_call``) refreshes a live agent's
tools between turns and folds the fresh build onto the live list without moving bytes:

* ``_merge_preserving_prefix``: ordered by the live list; a name in both takes the fresh
  definition (the bridge tools keep the built one); a live-only name stays while it is still
  registered; a fresh-only name is appended at the tail;
* when the merged name set differs, it is published and ``persist_agent_tool_names`` writes
  the names of ``agent.tools`` to the session row (``SessionDB.update_session_tool_names``).

On a narrowed session that means: every turn the pruned tools come back at the tail, our
``request_toolset`` stays (it is registered), and the pin records both. The emulation below
is those two functions, run where upstream runs them (before the router's ``pre_llm_call``).
"""

from __future__ import annotations

import json
import threading
import types

import pytest

ROUTER_TOOL = "request_toolset"
BRIDGE = {"tool_search", "tool_describe", "tool_call"}


def tool_name(entry):
    return (entry.get("function") or {}).get("name", "")


def merge_preserving_prefix(current, new, registered):
    fresh = {tool_name(e): e for e in new if tool_name(e)}
    merged = []
    for entry in current:
        name = tool_name(entry)
        replacement = fresh.pop(name, None)
        if name in BRIDGE:
            merged.append(entry)
        elif replacement is not None:
            merged.append(replacement)
        elif name and name in registered:
            merged.append(entry)
    merged.extend(fresh.values())
    return merged


@pytest.fixture
def pinned_host(monkeypatch, tmp_path, runtime):
    """Session pins (``sessions.tool_names``) plus the between-turns merge, for one agent."""
    import hermes_state
    import model_tools
    from hermes_cli.plugins import get_plugin_manager
    from tools.registry import registry

    pins = []
    monkeypatch.setattr(hermes_state.SessionDB, "update_session_tool_names",
                        lambda self, session_id, names: pins.append((session_id, list(names))), raising=False)
    monkeypatch.setitem(__import__("sys").modules, "tools.mcp_tool_agent",
                        types.SimpleNamespace(_agent_tools_lock=threading.Lock(),
                                              persist_agent_tool_names=lambda agent: None))
    agents = []

    def refresh_between_turns(session_id="", **_):
        for agent in agents:
            if agent.session_id != session_id:
                continue
            new = model_tools.get_tool_definitions(enabled_toolsets=agent.enabled_toolsets, quiet_mode=True)
            registered = {e.name for e in registry._snapshot_entries()}
            merged = merge_preserving_prefix(list(agent.tools), new, registered)
            if {tool_name(t) for t in merged} != {tool_name(t) for t in agent.tools}:
                agent.tools, agent.valid_tool_names = merged, {tool_name(t) for t in merged}
                pins.append((agent.session_id, [tool_name(t) for t in merged]))  # persist_agent_tool_names

    hooks = get_plugin_manager()._hooks["pre_llm_call"]
    hooks.insert(0, refresh_between_turns)
    try:
        yield agents, pins, hermes_state.SessionDB(db_path=tmp_path / "state.db")
    finally:
        hooks.remove(refresh_between_turns)


def test_three_turns_with_a_merge_each_send_identical_bytes_and_the_pin_never_holds_the_router_tool(
        stub, narrowing, pinned_host, agent_factory, runtime):
    agents, pins, db = pinned_host
    narrowing(("file",))
    agent = agent_factory(session_db=db)
    agents.append(agent)
    captured = agent.tools
    captured_bytes = json.dumps(captured, sort_keys=True)
    history = []
    for n in range(3):
        history = agent.run_conversation(f"pin turn {n}: read notes.md", conversation_history=history)["messages"]
    sent = [next(r for r in stub.chat_requests() if r.tools and f"pin turn {n}" in str(r.body.get("messages")))
            for n in range(3)]
    assert len({r.tools_json for r in sent}) == 1, "the merge changed the bytes sent between turns"
    assert len(sent[0].tool_names) < len(captured)
    merges = [p for p in pins if ROUTER_TOOL in p[1]]
    assert len(merges) == 2, "the emulated host did not merge on turns 2 and 3"
    state = runtime.states.get(agent.session_id)
    assert state.capture.tools is captured, "an identical merge must not replace the restore target"
    assert pins[-1] == (agent.session_id, [tool_name(t) for t in captured]), "the pin keeps the merged list"

    # /router off: the next turn hands the exact capture back and re-pins without the router tool
    runtime.set_switch(False)
    agent.run_conversation("pin turn off: and now?", conversation_history=history)
    off = next(r for r in stub.chat_requests() if r.tools and "pin turn off" in str(r.body.get("messages")))
    assert json.dumps(off.tools, sort_keys=True) == captured_bytes, "router off is not byte-identical to the host"
    assert ROUTER_TOOL not in off.tool_names
    assert pins[-1] == (agent.session_id, [tool_name(t) for t in captured])


def test_a_real_change_after_a_merge_is_folded_onto_the_captured_order(stub, narrowing, pinned_host,
                                                                       agent_factory, runtime):
    """A tool new to the host (an MCP server that connected late) is appended after the
    captured order, the narrowed bytes do not move, and the restore target carries it."""
    from tools.registry import registry

    agents, pins, db = pinned_host
    narrowing(("file",))
    from hermes_token_router.devtools import harness

    agent = agent_factory(session_db=db, enabled_toolsets=harness.cli_toolsets() + ["mcp-late"])
    agents.append(agent)
    captured_names = [tool_name(t) for t in agent.tools]
    first = agent.run_conversation("fold turn 0: read notes.md")
    schema = {"name": "late_mcp_echo", "description": "Echo (a late MCP tool).",
              "parameters": {"type": "object", "properties": {}, "required": []}}
    registry.register(name="late_mcp_echo", toolset="mcp-late", schema=schema, handler=lambda a, **k: "{}",
                      description="late tool")
    try:
        import model_tools

        model_tools._clear_tool_defs_cache()
        agent.run_conversation("fold turn 1: again", conversation_history=first["messages"])
        reqs = [next(r for r in stub.chat_requests() if r.tools and f"fold turn {n}" in str(r.body.get("messages")))
                for n in range(2)]
        assert reqs[0].tool_names == reqs[1].tool_names, "the narrowed order moved"
        state = runtime.states.get(agent.session_id)
        names = list(state.capture.names)
        assert names == captured_names + ["late_mcp_echo"]
        assert pins[-1] == (agent.session_id, names)
        runtime.on_session_finalize(session_id=agent.session_id)
        assert [tool_name(t) for t in agent.tools] == names  # host-equivalent: no request_toolset
    finally:
        registry.deregister("late_mcp_echo")
        model_tools._clear_tool_defs_cache()


def restore_agent_tool_prefix(agent, saved_names, registry):
    """Upstream's rebuild-after-eviction fold (same file): the saved order wins, a saved tool
    missing from the fresh build is carried from the registry schema, new tools go last."""
    fresh = {tool_name(t): t for t in agent.tools}

    def saved_def(name):
        if name in fresh:
            return fresh[name]
        entry = registry.get_entry(name)
        return None if entry is None else {"type": "function", "function": {**entry.schema, "name": entry.name}}

    saved = [d for d in map(saved_def, saved_names) if d is not None]
    registered = {e.name for e in registry._snapshot_entries()}
    merged = merge_preserving_prefix(saved, list(agent.tools), registered)
    agent.tools, agent.valid_tool_names = merged, {tool_name(t) for t in merged}


def test_an_agent_rebuilt_from_the_pin_is_narrowed_to_the_same_bytes(stub, narrowing, pinned_host, agent_factory,
                                                                     runtime):
    """A gateway evicts the agent; the rebuild folds its fresh build onto the session's pin.
    The router re-pinned the capture's names, so the pin carries no ``request_toolset``
    (upstream would resurrect it from the registry) and the rebuilt agent's first request
    goes out with the session's exact narrowed bytes."""
    from tools.registry import registry

    agents, pins, db = pinned_host
    narrowing(("file",))
    old = agent_factory(session_db=db)
    agents.append(old)
    history = old.run_conversation("evict turn 0: read notes.md")["messages"]
    history = old.run_conversation("evict turn 1: again", conversation_history=history)["messages"]
    pinned = [names for sid, names in pins if sid == old.session_id][-1]
    assert ROUTER_TOOL not in pinned

    new = agent_factory(session_id=old.session_id, session_db=db)  # the gateway's rebuild
    restore_agent_tool_prefix(new, pinned, registry)
    assert ROUTER_TOOL not in {tool_name(t) for t in new.tools}
    agents.append(new)
    new.run_conversation("evict turn 2: and now?", conversation_history=history)
    sent = [next(r for r in stub.chat_requests() if r.tools and f"evict turn {n}" in str(r.body.get("messages")))
            for n in range(3)]
    assert sent[2].tools_json == sent[1].tools_json == sent[0].tools_json
    assert runtime.states.get(old.session_id).agent is new
    runtime.on_session_finalize(session_id=new.session_id)
    assert ROUTER_TOOL not in {tool_name(t) for t in new.tools}
