"""Issue 9: fenced mutations. A late hook (one that overran Hermes's hook timeout, or whose
session ended or whose agent moved on while it was classifying) must commit nothing, and
session end must never wait for a stalled hook.

Real Hermes 0.19.0 agents throughout; the slow classification is a patched ``decide`` in
*our* hooks module. The time budget is set on the runtime (``_hook_budget_s``) rather than
in Hermes's config, which the whole pytest process shares.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from types import SimpleNamespace

import pytest

FILE_TOOLS = {"read_file", "write_file", "patch", "search_files"}


@pytest.fixture
def slow_router(monkeypatch, narrowing, runtime):
    """Narrow every new session to ``toolsets``; classification blocks until released
    (or sleeps ``delay``). ``entered`` is set while a classification is in flight."""
    ctl = SimpleNamespace(entered=threading.Event(), release=threading.Event(), delay=0.0, blocking=False,
                          toolsets=("file",))

    def classifying(text):
        ctl.entered.set()
        if ctl.blocking:
            assert ctl.release.wait(20), "test never released the classification"
        if ctl.delay:
            time.sleep(ctl.delay)

    narrowing(toolsets=lambda: ctl.toolsets, before=classifying)
    monkeypatch.setattr(runtime, "_hook_budget_s", runtime.hook_budget_s())
    yield ctl
    ctl.release.set()


def surface(agent):
    return agent.tools, agent.valid_tool_names


def unchanged(agent, before):
    return agent.tools is before[0] and agent.valid_tool_names is before[1]


def names(agent):
    return {t["function"]["name"] for t in agent.tools}


def call(assistant_tools):
    """An assistant message shaped like Hermes's normalised one (``.tool_calls[i].function.name``)."""
    return SimpleNamespace(tool_calls=[SimpleNamespace(function=SimpleNamespace(name=n, arguments="{}"))
                                       for n in assistant_tools])


def in_thread(fn, **kwargs):
    t = threading.Thread(target=fn, kwargs=kwargs, daemon=True)
    t.start()
    return t


# -- the time budget ------------------------------------------------------------------
def test_budget_is_half_of_hermes_normalised_hook_timeout(plugin_module, monkeypatch):
    import model_tools  # noqa: F401

    host = plugin_module("host")
    import hermes_cli.config as hconfig

    for raw, want in ((None, 30.0), (12, 12.0), (0, 0.0), (-5, 30.0), (5000, 600.0), ("junk", 30.0)):
        plugins = {} if raw is None else {"hook_callback_timeout": raw}
        monkeypatch.setattr(hconfig, "load_config", lambda p=plugins: {"plugins": p})
        assert host.hook_callback_timeout_s() == want, raw
    runtime_mod = plugin_module("runtime")
    rt = runtime_mod.RouterRuntime()
    monkeypatch.setattr(hconfig, "load_config", lambda: {"plugins": {"hook_callback_timeout": 8}})
    assert rt.hook_budget_s() == 4.0
    assert runtime_mod.elapsed_ok(time.monotonic(), 0)() is True  # 0 = no limit
    assert runtime_mod.elapsed_ok(time.monotonic() - 5, 4.0)() is False


def test_hook_that_overruns_its_deadline_commits_nothing(slow_router, agent_factory, runtime, monkeypatch):
    monkeypatch.setattr(runtime, "_hook_budget_s", 0.2)
    slow_router.delay = 0.4  # classification alone outlives the budget
    agent = agent_factory()
    before = surface(agent)
    runtime.pre_llm_call(session_id=agent.session_id, user_message="read notes.md", platform="cli", agent=agent)
    assert unchanged(agent, before)
    state = runtime.states.get(agent.session_id)
    assert state is None or not state.narrowed
    # the same classification inside the budget does commit (the fence is the only difference)
    monkeypatch.setattr(runtime, "_hook_budget_s", 5.0)
    other = agent_factory()
    runtime.pre_llm_call(session_id=other.session_id, user_message="read notes.md", platform="cli", agent=other)
    assert runtime.states.get(other.session_id).narrowed and FILE_TOOLS <= names(other)
    runtime.on_session_finalize(session_id=other.session_id)


def test_abandoned_worker_thread_hook_never_mutates_the_running_turn(stub, slow_router, agent_factory, runtime,
                                                                     monkeypatch):
    """The newer host waits ``hook_callback_timeout`` (0.3 s here), then abandons the hook
    and sends the turn with the full surface; the hook finishes later and must not touch it."""
    from hermes_cli.plugins import get_plugin_manager

    monkeypatch.setattr(runtime, "_hook_budget_s", 0.15)  # half the host's timeout
    slow_router.blocking = True
    pool = ThreadPoolExecutor(2, thread_name_prefix="hook-worker")
    late = []

    def worker_thread_host(**kwargs):
        future = pool.submit(runtime.pre_llm_call, **kwargs)
        late.append(future)
        try:
            return future.result(timeout=0.3)
        except FutureTimeout:
            return None  # abandoned, still running

    pm = get_plugin_manager()
    monkeypatch.setitem(pm._hooks, "pre_llm_call",
                        [worker_thread_host if cb == runtime.pre_llm_call else cb for cb in pm._hooks["pre_llm_call"]])
    agent = agent_factory()
    before = surface(agent)
    agent.run_conversation("read notes.md", conversation_history=[])
    full = set(stub.chat_requests()[0].tool_names)
    assert "terminal" in full, "the abandoned hook's turn must go out with the full surface"
    slow_router.release.set()  # the late hook now finishes classifying
    late[0].result(timeout=10)
    pool.shutdown(wait=True)
    assert unchanged(agent, before)
    state = runtime.states.get(agent.session_id)
    assert state is None or not state.narrowed


# -- session end while a classification is in flight ------------------------------------
def test_session_end_does_not_wait_for_a_stalled_hook_and_is_not_undone_by_it(slow_router, agent_factory,
                                                                               runtime):
    slow_router.blocking = True
    agent = agent_factory()
    sid = agent.session_id
    before = surface(agent)
    hook = in_thread(runtime.pre_llm_call, session_id=sid, user_message="read notes.md", platform="cli",
                     agent=agent)
    assert slow_router.entered.wait(10)
    started = time.monotonic()
    runtime.on_session_finalize(session_id=sid)
    assert time.monotonic() - started < 0.5, "session end waited on a stalled hook"
    slow_router.release.set()
    hook.join(10)
    assert unchanged(agent, before), "a hook whose session ended mid-classification narrowed the agent"
    state = runtime.states.get(sid)
    assert state is None or not state.narrowed


def test_session_end_during_sticky_rebuild_is_not_undone(slow_router, agent_factory, runtime, plugin_module,
                                                         monkeypatch):
    """A routed session whose host rebuilt its surface is re-narrowed on the next turn; if the
    session ends while that re-narrowing is being planned, the plan is discarded."""
    mutation = plugin_module("surface_mutation")
    agent = agent_factory()
    sid = agent.session_id
    runtime.pre_llm_call(session_id=sid, user_message="read notes.md", platform="cli", agent=agent)
    assert runtime.states.get(sid).narrowed
    fresh = list(runtime.states.get(sid).capture.tools)  # an MCP-style rebuild: a new full list,
    fresh[-1] = {**fresh[-1], "function": {**fresh[-1]["function"], "description": "changed"}}  # really changed
    agent.tools, agent.valid_tool_names = fresh, {t["function"]["name"] for t in fresh}
    rebuilt = surface(agent)

    real_plan = mutation.plan
    planning = threading.Event()
    go = threading.Event()

    def slow_plan(*a, **kw):
        planning.set()
        go.wait(10)
        return real_plan(*a, **kw)

    monkeypatch.setattr(mutation, "plan", slow_plan)
    hook = in_thread(runtime.pre_llm_call, session_id=sid, user_message="again", platform="cli", agent=agent)
    assert planning.wait(10)
    started = time.monotonic()
    runtime.on_session_finalize(session_id=sid)
    assert time.monotonic() - started < 0.5
    go.set()
    hook.join(10)
    assert unchanged(agent, rebuilt)
    assert runtime.states.get(sid) is None


# -- an agent reused for another session ------------------------------------------------
def test_agent_reused_for_a_new_session_is_never_touched_by_the_old_sessions_late_hooks(
        slow_router, agent_factory, runtime):
    """CLI ``/new`` keeps the AIAgent: finalize(old), ``agent.session_id = new``,
    on_session_reset(new). Every late hook of the old session must leave it alone."""
    agent = agent_factory()
    old = agent.session_id
    runtime.pre_llm_call(session_id=old, user_message="read notes.md", platform="cli", agent=agent)
    assert runtime.states.get(old).narrowed

    runtime.on_session_finalize(session_id=old)  # the CLI's /new sequence
    agent.session_id = new = old + "-new"
    runtime.on_session_reset(session_id=new)
    slow_router.toolsets = ("terminal",)
    runtime.pre_llm_call(session_id=new, user_message="run ls", platform="cli", agent=agent)
    assert runtime.states.get(new).narrowed and "terminal" in names(agent)
    mine = surface(agent)

    # late hooks of the old session, from a bare thread and with the agent handed explicitly
    for kwargs in ({}, {"agent": agent}):
        runtime.pre_llm_call(session_id=old, user_message="read notes.md", platform="cli", **kwargs)
        runtime.recovery.post_api_request(session_id=old, assistant_message=call(["write_file", "web_search"]), **kwargs)
        runtime.recovery.tool_request(tool_name="write_file", session_id=old)
        t = in_thread(runtime.recovery.request_toolset, args={"toolsets": ["file"]}, session_id=old)
        t.join(10)
    assert unchanged(agent, mine)
    assert "write_file" not in agent.valid_tool_names
    assert runtime.states.get(old) is None
    runtime.on_session_finalize(session_id=new)


def test_old_sessions_in_flight_first_turn_hook_is_fenced_after_reuse(slow_router, agent_factory, runtime):
    slow_router.blocking = True
    agent = agent_factory()
    old = agent.session_id
    before = surface(agent)
    hook = in_thread(runtime.pre_llm_call, session_id=old, user_message="read notes.md", platform="cli",
                     agent=agent)
    assert slow_router.entered.wait(10)
    runtime.on_session_finalize(session_id=old)
    agent.session_id = old + "-new"
    runtime.on_session_reset(session_id=agent.session_id)
    slow_router.release.set()
    hook.join(10)
    assert unchanged(agent, before)


def test_late_expansion_after_host_replaced_the_surface_is_discarded(slow_router, agent_factory, runtime):
    """``install`` only grows a surface that is still ours; the next turn re-applies."""
    agent = agent_factory()
    sid = agent.session_id
    runtime.pre_llm_call(session_id=sid, user_message="read notes.md", platform="cli", agent=agent)
    state = runtime.states.get(sid)
    host_list = list(state.capture.tools)
    runtime_capture = state.capture.tools
    agent.tools, agent.valid_tool_names = host_list, {t["function"]["name"] for t in host_list}
    replaced = surface(agent)
    runtime.recovery.post_api_request(session_id=sid, assistant_message=call(["terminal"]))
    assert unchanged(agent, replaced)
    runtime.pre_llm_call(session_id=sid, user_message="next", platform="cli", agent=agent)
    assert "terminal" not in names(agent) and FILE_TOOLS <= names(agent)
    runtime.on_session_finalize(session_id=sid)
    # the host's rebuild was the captured surface again: the exact capture goes back (same bytes)
    assert agent.tools == host_list and agent.tools is runtime_capture
