"""Issue 6 inside the real Hermes 0.19.0: the guard, the kanban worker floor and the
failed-restore quarantine, through the installed plugin's own hooks (its ``pre_tool_call``
guard is the one Hermes calls). Only the model is fake (the local stub).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
import yaml

from hermes_token_router.devtools import harness
from hermes_token_router.devtools.stub_llm import Reply

VAULT_TOOLSET = "htr_vault"
VAULT_TOOL = "htr_vault_open"
LIFECYCLE = ("kanban_complete", "kanban_block", "kanban_heartbeat")
POLICY = {"schema_version": 1, "protected_toolsets": [VAULT_TOOLSET], "pinned_tool_names": []}


# -- fixtures --------------------------------------------------------------------------
@pytest.fixture
def tool_search_on():
    """Turn Hermes's tool_search bridge on in this process's HERMES_HOME config."""
    path = Path(os.environ["HERMES_HOME"]) / "config.yaml"
    original = path.read_text()
    cfg = yaml.safe_load(original) or {}
    cfg.setdefault("tools", {})["tool_search"] = {"enabled": "on"}
    _write(path, yaml.safe_dump(cfg))
    try:
        yield
    finally:
        _write(path, original)


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def bridge_call(name: str, arguments=None) -> Reply:
    return Reply(content=None, tool_calls=[("tool_call", {"name": name, "arguments": arguments or {}})])


def tool_results(result) -> list:
    return [m.get("content") or "" for m in result["messages"] if m.get("role") == "tool"]


def vault_agent(agent_factory, **kw):
    agent = agent_factory(enabled_toolsets=["file", "skills", VAULT_TOOLSET], **kw)
    names = {t["function"]["name"] for t in agent.tools}
    assert "tool_call" in names and VAULT_TOOL not in names, \
        f"tool_search did not defer the protected test tool: {sorted(names)}"
    return agent


# -- 1. the tool_search bridge -----------------------------------------------------------
def test_bridge_reaches_unprotected_tool_without_policy(stub, vault_calls, tool_search_on, agent_factory,
                                                        router_config, runtime):
    """Control: with the empty policy the bridge works and the guard stays out of the way."""
    router_config(enabled=True)
    agent = vault_agent(agent_factory)
    stub.script(bridge_call(VAULT_TOOL), Reply(content="done"))
    result = agent.run_conversation("open the vault")
    assert vault_calls == [{}]
    assert not any("Blocked by hermes-token-router" in c for c in tool_results(result))
    assert runtime.admission.pre_tool_call(tool_name=VAULT_TOOL, session_id=agent.session_id) is None


@pytest.mark.parametrize("channel", ["agent_attribute"])
def test_bridge_to_protected_toolset_is_blocked_integrated(stub, vault_calls, tool_search_on, agent_factory,
                                                           router_config, runtime, channel):
    router_config(enabled=True)
    agent = vault_agent(agent_factory)
    agent._hermes_token_router_admission = dict(POLICY)
    stub.script(bridge_call(VAULT_TOOL), Reply(content="done"))
    result = agent.run_conversation("open the vault")
    assert vault_calls == [], "the protected tool ran through the tool_search bridge"
    assert any("Blocked by hermes-token-router" in c for c in tool_results(result))


# -- 2. kanban worker --------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _fresh_availability_probes(monkeypatch):
    """A worker process starts with HERMES_KANBAN_TASK set; in this shared test process
    Hermes's 30 s check_fn cache may still hold the non-worker answer, so start clean (and
    the originals come back afterwards)."""
    from tools import registry as hermes_registry

    monkeypatch.setattr(hermes_registry, "_check_fn_cache", {})
    # ...and its 60 s "last good" grace must not carry the worker's answer into later tests.
    monkeypatch.setattr(hermes_registry, "_check_fn_last_good", {})


def test_kanban_worker_envelope_pins_lifecycle_tools(monkeypatch, stub, router_config, agent_factory,
                                                     plugin_module):
    """Hermes's own predicate + the real registry, through the installed plugin: the envelope
    bound for a worker pins every kanban definition it was given (no tool names hard-coded
    in the router)."""
    monkeypatch.setenv("HERMES_KANBAN_TASK", "t_" + uuid.uuid4().hex[:6])
    router_config(enabled=True)
    agent = agent_factory(enabled_toolsets=harness.cli_toolsets())
    names = tuple(t["function"]["name"] for t in agent.tools)
    assert set(LIFECYCLE) <= set(names), sorted(names)
    agent.run_conversation("hello")
    env = plugin_module("admission_state").slot_of(agent).envelope
    assert env.worker == "worker" and plugin_module("admission").may_prune(env)
    assert set(LIFECYCLE) <= env.floor


def test_kanban_worker_keeps_lifecycle_tools_when_narrowed(monkeypatch, stub, router_config, agent_factory,
                                                           tmp_path):
    monkeypatch.setenv("HERMES_KANBAN_TASK", "t_" + uuid.uuid4().hex[:6])
    router_config(enabled=True)
    (tmp_path / "notes.md").write_text("# Notes\n")
    agent = agent_factory(enabled_toolsets=harness.cli_toolsets())
    agent.run_conversation("read ./notes.md and summarise it")
    first = stub.chat_requests()[0]
    names = set(first.tool_names)
    assert set(LIFECYCLE) <= names, sorted(names)
    assert "read_file" in names


# -- 3. failed restore, then agent reuse ----------------------------------------------------
def failing_agent_class():
    import run_agent

    class AIAgent(run_agent.AIAgent):  # the router recognises agents by this class name
        fail_surface_writes = False

        def __setattr__(self, key, value):
            if key == "tools" and self.__dict__.get("fail_surface_writes"):
                raise RuntimeError("simulated failure assigning agent.tools")
            super().__setattr__(key, value)

    return AIAgent


def test_failed_restore_then_reuse_keeps_the_guard_engaged_integrated(stub, vault_calls, tool_search_on,
                                                                      router_config, runtime, tmp_path):
    router_config(enabled=True)
    cls = failing_agent_class()
    agent = cls(base_url=stub.base_url, api_key="sk-stub-local", provider="custom", api_mode="chat_completions",
                model="stub-model", enabled_toolsets=["file", "terminal", "skills", VAULT_TOOLSET],
                quiet_mode=True, platform="cli", session_id="test-" + uuid.uuid4().hex[:10],
                skip_context_files=True, skip_memory=True, max_iterations=6)
    try:
        agent._hermes_token_router_admission = dict(POLICY)
        (tmp_path / "notes.md").write_text("# Notes\n")
        old_session = agent.session_id
        captured = agent.tools
        agent.run_conversation("read ./notes.md and summarise it")
        narrowed = agent.tools
        assert narrowed is not captured, "the router did not narrow the first session"

        # session end: the restore fails
        agent.fail_surface_writes = True
        harness.finalize_session(agent)
        assert agent.tools is narrowed

        # Hermes reuses the agent for a new session (CLI /new) before any retry
        agent.session_id = "test-" + uuid.uuid4().hex[:10]
        stub.clear()
        stub.script(bridge_call(VAULT_TOOL), Reply(content="done"))
        result = agent.run_conversation("open the vault")
        assert vault_calls == [], "a protected tool ran on a quarantined agent"
        assert any("Blocked by hermes-token-router" in c for c in tool_results(result))
        assert agent.tools is narrowed, "the router routed (or recaptured) a quarantined agent"

        # the retry succeeds once the agent still shows exactly our last commit
        agent.fail_surface_writes = False
        from hermes_cli.plugins import invoke_hook

        invoke_hook("on_session_finalize", session_id=old_session, platform="cli", reason="session_boundary")
        assert agent.tools is captured, "the quarantine was not released by restoring the old envelope"
    finally:
        agent.__dict__["fail_surface_writes"] = False
        try:
            harness.finalize_session(agent)
            agent.close()
        except Exception:
            pass
