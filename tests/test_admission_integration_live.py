"""Issue 6 wiring inside the real Hermes 0.19.0: the no-authority append path and the
all-or-nothing surface writes, through the installed plugin's own hooks."""

from __future__ import annotations

import json
import uuid

import pytest

from hermes_token_router.devtools.stub_llm import Reply


def tool_results(result):
    return [m["content"] for m in result["messages"] if m.get("role") == "tool"]


@pytest.fixture
def reused_without_end(stub, router_config, agent_factory, tmp_path):
    """An agent narrowed by session A, then reused for session B without A ever ending:
    B has no untouched host provenance (its surface is A's narrowed one)."""
    router_config(enabled=True)
    agent = agent_factory()
    agent.run_conversation("read ./notes.md and summarise it")
    narrowed = list(agent.tools)
    assert "terminal" not in agent.valid_tool_names
    agent.session_id = f"test-{uuid.uuid4().hex[:10]}"
    agent.reset_session_state()
    stub.clear()
    return agent, narrowed


def test_no_authority_appends_ordinary_tools_after_recording_contamination(reused_without_end, stub, runtime,
                                                                          plugin_module):
    agent, narrowed = reused_without_end
    admission = plugin_module("admission")
    admission_state = plugin_module("admission_state")
    stub.script(Reply(content=None, tool_calls=[("terminal", {"command": "echo appended-$((6*7))"})]),
                Reply(content=None, tool_calls=[("request_toolset", {"toolsets": ["cronjob"], "reason": "x"})]),
                Reply(content="ok"))
    result = agent.run_conversation("now run it")
    slot = admission_state.slot_of(agent)
    assert slot.envelope.authority == admission.NO_AUTHORITY_MODE
    assert runtime.states.get(agent.session_id).phase == "full"
    outputs = tool_results(result)
    assert "appended-42" in outputs[0]
    answer = json.loads(outputs[1])
    assert answer["reason"] == "NO_AUTHORITY" and answer["added"] == ["cronjob"]
    assert slot.contamination is not None and "terminal" in slot.contamination.first_names
    names = [t["function"]["name"] for t in agent.tools]
    assert names[:len(narrowed)] == [t["function"]["name"] for t in narrowed]  # append-only
    assert {"terminal", "cronjob"} <= set(names)


def test_a_contaminated_surface_is_never_captured_by_a_later_session(reused_without_end, stub, runtime,
                                                                     plugin_module):
    """Issue 16's reproduction, A -> B -> C on one real agent: A narrows it, B reuses it
    without A ending (NO_AUTHORITY) and appends an ordinary tool, B ends, and C starts on
    the appended surface. C must not bind it as captured host authority, nor prune it."""
    from hermes_cli.plugins import invoke_hook

    agent, _ = reused_without_end
    admission = plugin_module("admission")
    admission_state = plugin_module("admission_state")
    session_b = agent.session_id
    stub.script(Reply(content=None, tool_calls=[("request_toolset", {"toolsets": ["terminal"], "reason": "x"})]),
                Reply(content="ok"))
    answer = json.loads(tool_results(agent.run_conversation("run the tests"))[0])
    assert answer["reason"] == "NO_AUTHORITY" and "terminal" in answer["added"]
    appended = agent.tools
    invoke_hook("on_session_finalize", session_id=session_b, platform="cli", reason="session_boundary")
    assert admission_state.slot_of(agent) is None  # B's restore succeeded: its slot is released

    agent.session_id = f"test-{uuid.uuid4().hex[:10]}"  # session C on the same agent
    agent.reset_session_state()
    stub.clear()
    agent.run_conversation("read ./notes.md and summarise it")  # a request the rules would narrow
    env = admission_state.slot_of(agent).envelope
    assert env.session_id == agent.session_id
    assert env.authority == admission.NO_AUTHORITY_MODE and not env.prune_allowed
    assert runtime.states.get(agent.session_id).phase != "routed"
    assert agent.tools is appended
    assert stub.chat_requests()[0].tool_names == [t["function"]["name"] for t in appended]


def test_invalid_policy_denies_every_addition_without_lookups(stub, router_config, agent_factory, runtime,
                                                              plugin_module, monkeypatch):
    router_config(enabled=True)
    agent = agent_factory()
    agent._hermes_token_router_admission = {"schema_version": 1, "protected_toolsets": [" file"],
                                            "pinned_tool_names": []}
    full = [t["function"]["name"] for t in agent.tools]
    host = plugin_module("host")
    agent.run_conversation("read ./notes.md and summarise it")
    assert stub.chat_requests()[0].tool_names == full  # invalid policy: no pruning at all
    calls = []
    monkeypatch.setattr(host, "ordinary_definitions", lambda *a, **k: calls.append(a) or [])
    monkeypatch.setattr(host, "owners_for", lambda *a, **k: calls.append(a) or {})
    from tools.registry import registry  # Hermes's own dispatch, as a tool call would reach it

    answer = json.loads(registry.dispatch("request_toolset", {"toolsets": ["terminal"], "reason": "r"},
                                          session_id=agent.session_id, task_id=None))
    assert answer["reason"] == "NO_AUTHORITY_INVALID_POLICY" and answer["added"] == [] and not calls
    assert [t["function"]["name"] for t in agent.tools] == full


def test_failed_surface_write_rolls_back_every_field(stub, router_config, agent_factory, runtime, plugin_module):
    """A setter that fails mid-assignment leaves the agent and the router state exactly as
    they were: same list and set objects, same keep set and revision."""
    router_config(enabled=True)
    agent = agent_factory()
    agent.run_conversation("read ./notes.md and summarise it")
    state = runtime.states.get(agent.session_id)
    before = (agent.tools, agent.valid_tool_names, state.keep, state.revision, state.loaded_toolsets)
    mutation = plugin_module("surface_mutation")
    host = plugin_module("host")

    original_setattr = type(state).__setattr__

    def failing(self, key, value):
        if key == "committed_valid":
            raise RuntimeError("simulated failure mid-assignment")
        original_setattr(self, key, value)

    type(state).__setattr__ = failing
    try:
        with pytest.raises(RuntimeError):
            mutation.install(state, agent, ["terminal", "process"], ["terminal"], lambda: True,
                             lock=host.surface_lock, estimate=host.estimate_tokens)
    finally:
        type(state).__setattr__ = original_setattr
    after = (agent.tools, agent.valid_tool_names, state.keep, state.revision, state.loaded_toolsets)
    assert all(a is b for a, b in zip(before, after))
    assert "terminal" not in agent.valid_tool_names


def test_route_is_discarded_when_the_bound_admission_changes_mid_classification(stub, narrowing, agent_factory,
                                                                                plugin_module, runtime):
    """Issue 9's fence includes the admission: if the envelope bound to the agent is replaced
    while the (slow, unlocked) classification runs, the route commits nothing."""
    import dataclasses

    admission_state = plugin_module("admission_state")
    runtime_mod = plugin_module("runtime")
    narrowing()
    agent = agent_factory()
    routed_decide = runtime_mod.decide

    def decide_while_the_host_rebinds(text, cfg, available=(), **kw):
        slot = admission_state.slot_of(agent)
        slot.envelope = dataclasses.replace(slot.envelope)  # same content, a different binding
        return routed_decide(text, cfg, available, **kw)

    runtime_mod.decide = decide_while_the_host_rebinds
    try:
        full = [t["function"]["name"] for t in agent.tools]
        agent.run_conversation("read ./notes.md and summarise it")
    finally:
        runtime_mod.decide = routed_decide
    assert stub.chat_requests()[0].tool_names == full
    assert runtime.states.get(agent.session_id).phase != "routed"


def test_empty_first_message_binds_admission_and_does_nothing_else(stub, router_config, agent_factory, runtime,
                                                                  plugin_module):
    router_config(enabled=True, deterministic_rules_enabled=False,
                  classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                              "model": "tiny-router", "api_key_env": None})
    agent = agent_factory()
    full = [t["function"]["name"] for t in agent.tools]
    agent.run_conversation("   ")
    assert [r.body.get("model") for r in stub.chat_requests()] == ["stub-model"]  # no classifier call
    assert stub.chat_requests()[0].tool_names == full
    assert runtime.states.get(agent.session_id) is None  # no capture, no state
    assert plugin_module("admission_state").slot_of(agent).envelope.session_id == agent.session_id  # bound
