"""Issue 15: feature detection and the doctor, on 0.19.0 and on an emulated current Hermes.

The installed Hermes is 0.19.0 (PyPI). Current main (NousResearch/hermes-agent, 0.21.x) is
emulated by the smallest set of names the probes look for, each as upstream has it:

* ``hermes_cli/plugins_dispatch.py`` @006a5aebb4d134ba188ff60adf1a02f668312b5f:
  ``_HOOK_TIMEOUT_FAIL_CLOSED_HOOKS = {"pre_tool_call", "pre_tts_synthesis"}``;
* ``agent/turn_context.py`` @0041c5c0b9eab6528142c005a0d67993d5b690ad:
  ``_collect_pre_llm_call_context(agent, *, ...)`` fires ``pre_llm_call``, and
  ``build_turn_context`` no longer does itself;
* ``agent/turn_response_intake.py`` (``normalize_model_response`` ->
  ``_fire_post_api_request_hook``) fires ``post_api_request``; ``run_conversation`` no longer;
* ``tools/mcp_tool_agent.py`` @03fc26e814c1d9cdf4485fbf5857e5eac281685c: ``_agent_tools_lock``
  and ``persist_agent_tool_names`` (-> ``SessionDB.update_session_tool_names``);
* ``tools/tool_search.py`` @016260a5582b6c6ed4c789a5aa2137d6df05f2e2: ``_DEFAULT_DEFERRED_TOOLS``.
"""

from __future__ import annotations

import sys
import threading
import types

import pytest

from hermes_token_router import host
from hermes_token_router.cli import doctor_checks as diagnose
from hermes_token_router.cli.doctor_report import FAIL, Report


def paths() -> dict:
    return {m.name: m.path for m in host.mechanisms()}


def test_installed_0_19_0_takes_the_synchronous_frame_paths():
    import model_tools  # noqa: F401

    found = paths()
    assert found == {
        "hook dispatch": "synchronous",
        "pre_llm_call frame": "agent.turn_context.build_turn_context",
        "post_api_request frame": "agent.conversation_loop.run_conversation",
        "agent tools lock": "tools.mcp_tool",
        "session tool pin": "none",
        "tool_search defer list": "none",
    }
    report = Report()
    diagnose.check_mechanisms(report)
    diagnose.check_agent_lookup(report)
    assert report.hook_thread == "caller thread"
    assert not [c for c in report.checks if c.status == FAIL], report.checks


# -- the emulated current host -------------------------------------------------------
def _collect_pre_llm_call_context(agent, *, effective_task_id="", turn_id="", original_user_message=""):
    from hermes_cli.plugins import invoke_hook

    return invoke_hook("pre_llm_call", session_id=agent.session_id, turn_id=turn_id)


def _fire_post_api_request_hook(agent, assistant_message=None, turn_id=""):
    from hermes_cli.plugins import invoke_hook

    return invoke_hook("post_api_request", session_id=agent.session_id, turn_id=turn_id)


def build_turn_context(agent, user_message=None):  # upstream's: delegates to the helper above
    return _collect_pre_llm_call_context(agent, original_user_message=user_message)


def run_conversation(agent, user_message=None):  # upstream's: the hook moved to turn_response_intake
    return None


@pytest.fixture
def current_host(monkeypatch):
    import agent.conversation_loop as loop
    import agent.turn_context as turn_context
    import hermes_state
    import tools.tool_search as tool_search

    monkeypatch.setitem(sys.modules, "hermes_cli.plugins_dispatch", types.SimpleNamespace(
        _HOOK_TIMEOUT_FAIL_CLOSED_HOOKS={"pre_tool_call", "pre_tts_synthesis"}))
    monkeypatch.setitem(sys.modules, "agent.turn_response_intake", types.SimpleNamespace(
        _fire_post_api_request_hook=_fire_post_api_request_hook, normalize_model_response=None))
    lock = threading.Lock()
    monkeypatch.setitem(sys.modules, "tools.mcp_tool_agent", types.SimpleNamespace(
        _agent_tools_lock=lock, persist_agent_tool_names=lambda agent: None))
    monkeypatch.setattr(turn_context, "_collect_pre_llm_call_context", _collect_pre_llm_call_context, raising=False)
    monkeypatch.setattr(turn_context, "build_turn_context", build_turn_context)
    monkeypatch.setattr(loop, "run_conversation", run_conversation)
    monkeypatch.setattr(hermes_state.SessionDB, "update_session_tool_names", lambda self, sid, names: None,
                        raising=False)
    monkeypatch.setattr(tool_search, "_DEFAULT_DEFERRED_TOOLS",
                        frozenset({"computer_use", "session_search", "image_generate", "todo_list",
                                   "process_manage", "cronjob_manage"}), raising=False)
    return lock


def test_current_host_is_recognised_per_mechanism(current_host):
    found = paths()
    assert found["hook dispatch"] == "threaded"
    assert found["pre_llm_call frame"] == "agent.turn_context._collect_pre_llm_call_context"
    assert found["post_api_request frame"] == "agent.turn_response_intake._fire_post_api_request_hook"
    assert found["agent tools lock"] == "tools.mcp_tool_agent"
    assert found["session tool pin"] == "sessions.tool_names"
    assert found["tool_search defer list"] == "default defer list"
    threaded = next(m for m in host.mechanisms() if m.name == "hook dispatch")
    assert "pre_tool_call fails closed" in threaded.detail


def test_doctor_accepts_the_helper_frames_and_reports_the_worker_thread(current_host):
    """0.19.0's needles (``build_turn_context`` firing ``pre_llm_call``, ``run_conversation``
    firing ``post_api_request``) no longer match: the doctor must not say "no routing path"."""
    report = Report()
    diagnose.check_mechanisms(report)
    diagnose.check_agent_lookup(report)
    fails = [c for c in report.checks if c.status == FAIL]
    assert not fails, fails
    frames = {c.name: c.detail for c in report.checks if c.area == "agent lookup"}
    assert frames["pre_llm_call frame"].startswith("agent.turn_context._collect_pre_llm_call_context")
    assert frames["post_api_request frame"].startswith("agent.turn_response_intake._fire_post_api_request_hook")
    assert report.hook_thread == "worker thread with a timeout"


def test_surface_writes_take_the_lock_where_current_hermes_keeps_it(current_host):
    with host.surface_lock():
        assert current_host.locked()
    assert not current_host.locked()
