"""Issue 15: composing with Hermes's native tool_search deferral.

Current Hermes defers a curated list of core tools by default and activates the bridge
whenever any deferrable tool exists. Emulated on the real 0.19.0 with the smallest piece of
``tools/tool_search.py`` (NousResearch/hermes-agent, commit
016260a5582b6c6ed4c789a5aa2137d6df05f2e2):

* ``is_deferrable_tool_name``: bridge names never defer; a name in the defer set does; other
  core tools (``toolsets._HERMES_CORE_TOOLS``) do not; any other registered tool does
  (MCP, plugin) unless its toolset is a session-gated GUI surface;
* ``should_activate``: ``off`` never; otherwise whenever a deferrable tool exists.

The defer set is upstream's ``_DEFAULT_DEFERRED_TOOLS`` core names as 0.19.0 spells them
(upstream renamed ``todo``/``process``/``cronjob`` to ``todo_list``/``process_manage``/
``cronjob_manage``): computer_use, session_search, image_generate, todo, process, cronjob.
"""

from __future__ import annotations

import json

import pytest

from hermes_token_router.host import estimate_tokens

DEFER = frozenset({"computer_use", "session_search", "image_generate", "todo", "process", "cronjob"})
DIRECT_SURFACE_TOOLSETS = frozenset({"desktop_ui", "project", "setup"})
BRIDGE = {"tool_search", "tool_describe", "tool_call"}


def names(tools):
    return [t["function"]["name"] for t in tools]


@pytest.fixture
def upstream_defer_list(monkeypatch):
    import model_tools
    from tools import tool_search as ts
    from tools.registry import registry

    def is_deferrable_tool_name(name, *_):
        if name in ts.BRIDGE_TOOL_NAMES:
            return False
        if name in DEFER:
            return True
        if name in ts._core_tool_names():
            return False
        entry = registry.get_entry(name)
        return entry is not None and (entry.toolset.startswith("mcp-") or entry.toolset not in DIRECT_SURFACE_TOOLSETS)

    def should_activate(config, deferrable_tokens, context_length=None, **_):
        return config.enabled != "off" and deferrable_tokens > 0

    monkeypatch.setattr(ts, "is_deferrable_tool_name", is_deferrable_tool_name)
    monkeypatch.setattr(ts, "should_activate", should_activate)
    monkeypatch.setattr(model_tools, "_tool_defs_cache", {})
    yield
    model_tools._tool_defs_cache.clear()


@pytest.fixture
def narrow_to_file(narrowing):
    """The installed router decides ``file`` for every new session and is switched on."""
    narrowing(("file",))


def test_request_toolset_for_a_deferred_toolset_answers_with_the_tool_call_usage(
        stub, upstream_defer_list, narrow_to_file, agent_factory, runtime):
    agent = agent_factory()
    shown = names(agent.tools)
    assert "tool_call" in shown and "todo" not in shown, shown
    agent.run_conversation("read notes.md")
    sent = stub.chat_requests()[0]
    assert BRIDGE <= set(sent.tool_names), "the tool_search bridge was pruned"
    catalog = next(t["function"]["description"] for t in sent.tools if t["function"]["name"] == "request_toolset")
    assert "- todo (via tool_search)" in catalog

    answer = json.loads(runtime.recovery.request_toolset({"toolsets": ["todo"]}, session_id=agent.session_id))
    assert answer["reason"] == "READY_VIA_TOOL_SEARCH", answer
    assert answer["via_tool_search"]["todo"] == {"tools": ["todo"],
                                                 "usage": ['tool_call({"name": "todo", "arguments": {...}})']}
    assert "unresolved" not in answer and "todo" not in agent.valid_tool_names
    # a deferred tool named directly, and a mix with a loadable toolset
    mixed = json.loads(runtime.recovery.request_toolset({"toolsets": ["terminal", "session_search"]},
                                               session_id=agent.session_id))
    assert mixed["reason"] == "READY" and "terminal" in mixed["added"]
    assert mixed["via_tool_search"]["session_search"]["tools"] == ["session_search"]
    # ``process`` (toolset terminal) stays deferred: the answer says how to reach it
    assert mixed["via_tool_search"]["terminal"] == {
        "tools": ["process"], "usage": ['tool_call({"name": "process", "arguments": {...}})']}
    runtime.on_session_finalize(session_id=agent.session_id)


def test_savings_are_counted_against_what_the_host_sends(stub, upstream_defer_list, narrow_to_file, agent_factory,
                                                         runtime):
    import model_tools

    agent = agent_factory()
    host_sends = agent.tools
    pre_deferral = model_tools.get_tool_definitions(enabled_toolsets=agent.enabled_toolsets, quiet_mode=True,
                                                    skip_tool_search_assembly=True)
    assert estimate_tokens(pre_deferral) > estimate_tokens(host_sends)
    agent.run_conversation("read notes.md")
    state = runtime.states.get(agent.session_id)
    assert state.tokens_full == estimate_tokens(host_sends)  # deferred schemas are not claimed
    assert state.tokens_now == estimate_tokens(stub.chat_requests()[0].tools)
    runtime.on_session_finalize(session_id=agent.session_id)
    assert agent.tools is host_sends


def test_without_host_deferral_nothing_changes(stub, narrow_to_file, agent_factory, runtime):
    """0.19.0's default: no bridge, so no pre-deferral build is asked for and no catalog mark."""
    agent = agent_factory()
    assert not BRIDGE & set(names(agent.tools))
    agent.run_conversation("read notes.md")
    state = runtime.states.get(agent.session_id)
    assert state.capture.deferred == {}
    assert "via tool_search" not in state.catalog_text
    answer = json.loads(runtime.recovery.request_toolset({"toolsets": ["no-such-toolset"]}, session_id=agent.session_id))
    assert answer["reason"] == "UNKNOWN_TOOLSET" and "via_tool_search" not in answer
    runtime.on_session_finalize(session_id=agent.session_id)
