"""Issue 2 inside the real Hermes 0.19.0: first-turn narrowing, stickiness, exact restore,
fail-open. Only the model is fake (the local stub records every request)."""

from __future__ import annotations

import json
import logging
import uuid


from hermes_token_router.devtools import harness
from hermes_token_router.devtools.stub_llm import Reply
from hermes_token_router.host import estimate_tokens

FILE_TOOLS = {"read_file", "write_file", "patch", "search_files"}
NEVER_PRUNED = {"skills_list", "skill_view", "request_toolset"}
AMBIGUOUS = "can you look at this"


def notes_message(tmp_path) -> str:
    """The issue's own wording (a relative path: pytest's tmp paths contain the word 'test')."""
    (tmp_path / "notes.md").write_text("# Notes\n- ship the router\n")
    return "read ./notes.md and summarise it"


def first_request(stub):
    reqs = stub.chat_requests()
    assert reqs, "Hermes sent no request to the stub model"
    return reqs[0]


def test_file_request_narrows_first_provider_request(stub, router_config, agent_factory, tmp_path):
    message = notes_message(tmp_path)
    router_config(enabled=False)
    agent_factory().run_conversation(message)
    off = first_request(stub)
    stub.clear()

    router_config(enabled=True)
    result = agent_factory().run_conversation(message)
    on = first_request(stub)

    assert result.get("completed", True)
    names = set(on.tool_names)
    assert FILE_TOOLS <= names
    assert NEVER_PRUNED <= names
    assert not {"terminal", "delegate_task", "cronjob", "execute_code"} & names
    off_tokens, on_tokens = estimate_tokens(off.tools), estimate_tokens(on.tools)
    assert on_tokens <= 0.25 * off_tokens, (on_tokens, off_tokens)


def test_ambiguous_first_message_is_byte_identical_to_router_off(stub, router_config, agent_factory):
    router_config(enabled=False)
    agent_factory().run_conversation(AMBIGUOUS)
    off = first_request(stub)
    stub.clear()
    router_config(enabled=True)
    agent_factory().run_conversation(AMBIGUOUS)
    on = first_request(stub)
    assert on.tools_json == off.tools_json
    assert on.body["messages"][-1] == off.body["messages"][-1]


def test_sticky_within_turn_and_across_turns(stub, router_config, agent_factory, tmp_path):
    router_config(enabled=True)
    message = notes_message(tmp_path)
    agent = agent_factory()
    stub.script(Reply(content=None, tool_calls=[("read_file", {"path": str(tmp_path / "notes.md")})]),
                Reply(content="Summary: ship the router."))
    first = agent.run_conversation(message)
    agent.run_conversation("thanks, and the second bullet?", conversation_history=first["messages"])
    reqs = stub.chat_requests()
    assert len(reqs) == 3  # tool call, answer, turn 2
    assert len(set(r.tools_json for r in reqs)) == 1, "the tool surface changed between requests"
    assert "terminal" not in reqs[0].tool_names


def test_session_finalize_restores_exact_capture_and_next_session_routes_afresh(stub, router_config,
                                                                                  agent_factory, tmp_path):
    router_config(enabled=True)
    agent = agent_factory()
    captured_tools, captured_valid = agent.tools, agent.valid_tool_names
    captured_json = json.dumps(captured_tools)
    agent.run_conversation(notes_message(tmp_path))
    assert agent.tools is not captured_tools

    harness.finalize_session(agent)
    assert agent.tools is captured_tools and agent.valid_tool_names is captured_valid
    assert json.dumps(agent.tools) == captured_json

    # What the CLI does on /new: same AIAgent, new session id.
    agent.session_id = f"test-{uuid.uuid4().hex[:10]}"
    agent.reset_session_state()
    stub.clear()
    agent.run_conversation("run the test suite with pytest and tell me what fails")
    names = set(first_request(stub).tool_names)
    assert "terminal" in names
    assert len(names) < len(captured_tools)


def test_exception_in_classification_keeps_full_surface_and_logs_one_warning(
        stub, router_config, agent_factory, plugin_module, monkeypatch, caplog, tmp_path):
    router_config(enabled=True)
    rules = plugin_module("rules")

    def broken():
        raise RuntimeError("forced failure inside classification")

    monkeypatch.setattr(rules, "default_rules", broken)
    caplog.set_level(logging.WARNING, logger="hermes_token_router")
    agent = agent_factory()
    full = [t["function"]["name"] for t in agent.tools]
    result = agent.run_conversation(notes_message(tmp_path))
    assert result.get("completed", True) and result.get("final_response") == "ok"
    assert first_request(stub).tool_names == full
    warnings = [r for r in caplog.records if r.name.startswith("hermes_token_router") and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "forced failure" in warnings[0].getMessage()


def test_committed_surface_logs_one_info_line(stub, router_config, agent_factory, router_logs, tmp_path):
    router_config(enabled=True)
    agent_factory().run_conversation(notes_message(tmp_path))
    lines = [r.getMessage() for r in router_logs.records if r.getMessage().startswith("surface committed")]
    assert len(lines) == 1
    assert "predicted=" in lines[0] and "tools=" in lines[0] and "toolsets=file" in lines[0]


def test_invalid_router_config_is_hands_off(stub, router_config, router_config_path, agent_factory, caplog, tmp_path):
    harness.write_router_config(router_config_path, {"global": {"enabled": True, "confidence_threshold": 7}})
    caplog.set_level(logging.WARNING, logger="hermes_token_router")
    agent = agent_factory()
    full = [t["function"]["name"] for t in agent.tools]
    agent.run_conversation(notes_message(tmp_path))
    assert first_request(stub).tool_names == full
    msgs = [r.getMessage() for r in caplog.records if "invalid config" in r.getMessage()]
    assert msgs and "confidence_threshold" in msgs[0] and "fix:" in msgs[0]


def test_learned_additions_are_priced_on_the_live_surface(stub, router_config, agent_factory, plugin_module,
                                                         tmp_path, monkeypatch):
    """The learned model's priced union reads this agent's own schema shares: terminal is a
    small share of this surface, cheap enough at p=0.4 here, although the weights file's
    typical share (0.9) would refuse it."""
    rules_mod, learned_mod = plugin_module("rules"), plugin_module("learned")
    weights = tmp_path / "priced.json"
    weights.write_text(json.dumps({"version": 1, "labels": ["terminal"], "bias": [-4.0], "union_at": 0.9,
                                   "disagree_at": 0.0, "weights": {"w:summarise": [[0, 3.6]]}, "miss_share": 1.0,
                                   "floor_p": 0.3, "shares": {"terminal": 0.9}}), encoding="utf-8")
    rules = rules_mod.default_rules().without_learned()
    rules.learned = learned_mod.LearnedModel.load(weights)
    assert "terminal" not in rules.classify("read ./notes.md and summarise it").toolsets  # typical share
    monkeypatch.setattr(rules_mod, "default_rules", lambda: rules)

    message = notes_message(tmp_path)
    router_config(enabled=True)
    agent_factory().run_conversation(message)
    names = set(first_request(stub).tool_names)
    assert FILE_TOOLS <= names and "terminal" in names
    assert not {"delegate_task", "cronjob"} & names
