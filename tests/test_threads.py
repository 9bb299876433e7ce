"""Issue 9: binding the right agent when hooks and agents live on different threads.

Newer Hermes releases run ``pre_llm_call`` on a timeout worker thread while the agent's
own thread waits inside ``build_turn_context``; a gateway runs many sessions at once on
executor threads. Everything here runs the real Hermes 0.19.0 (real ``AIAgent``s, a real
``gateway.run.GatewayRunner``); only the model is the local stub. The one emulation is
``WorkerThreadHost``: it makes the plugin's ``pre_llm_call`` run on a worker thread, the
way the newer host does, so we can check the router against that behaviour today.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import pytest

from hermes_token_router.devtools.stub_llm import Reply

FILE_TOOLS = {"read_file", "write_file", "patch", "search_files"}
NOT_FILE = {"terminal", "delegate_task", "cronjob", "execute_code"}


# -- helpers (the fake decision is conftest's ``narrowing``) -----------------------------
@pytest.fixture
def bindings(monkeypatch, plugin_module):
    """Record every ``host_agents.find_agent`` answer: (session, how, agent, thread name)."""
    import model_tools  # noqa: F401 - plugin discovery runs at this import

    host_agents = plugin_module("host_agents")
    real = host_agents.find_agent
    seen = []
    lock = threading.Lock()

    def recording(session_id, **kw):
        agent, how = real(session_id, **kw)
        with lock:
            seen.append((session_id, how, agent, threading.current_thread().name))
        return agent, how

    monkeypatch.setattr(host_agents, "find_agent", recording)
    return seen


class WorkerThreadHost:
    """The newer host's hook runner: the callback runs on a worker thread, the agent's
    thread waits at most ``timeout`` and then abandons (never cancels) it."""

    def __init__(self, callback, timeout=10.0, barrier=None):
        self.callback = callback
        self.timeout = timeout
        self.barrier = barrier
        self.pool = ThreadPoolExecutor(4, thread_name_prefix="hook-worker")
        self.abandoned = 0

    def _run(self, kwargs):
        if self.barrier is not None:
            self.barrier.wait()
        return self.callback(**kwargs)

    def __call__(self, **kwargs):
        future = self.pool.submit(self._run, kwargs)
        try:
            return future.result(timeout=self.timeout)
        except FutureTimeout:
            self.abandoned += 1
            return None


@pytest.fixture
def worker_thread_hooks(monkeypatch, runtime):
    """Route the plugin's ``pre_llm_call`` through ``WorkerThreadHost`` for this test."""
    from hermes_cli.plugins import get_plugin_manager

    pm = get_plugin_manager()
    made = []

    def install(timeout=10.0, barrier=None):
        host = WorkerThreadHost(runtime.pre_llm_call, timeout=timeout, barrier=barrier)
        callbacks = [host if cb == runtime.pre_llm_call else cb for cb in pm._hooks.get("pre_llm_call", [])]
        assert host in callbacks
        monkeypatch.setitem(pm._hooks, "pre_llm_call", callbacks)
        made.append(host)
        return host

    yield install
    for host in made:
        host.pool.shutdown(wait=True)


@pytest.fixture
def parking(stub):
    """Make the stub model block until released, so a thread sits inside a real Hermes
    ``run_conversation`` frame (which holds the ``agent`` local) for as long as we like."""
    gate = threading.Event()
    arrived = threading.Semaphore(0)

    def responder(body):
        arrived.release()
        gate.wait(20)
        return Reply(content="ok")

    stub.responder = responder

    class Parking:
        def wait_parked(self, n=1, timeout=20.0):
            for _ in range(n):
                assert arrived.acquire(timeout=timeout), "the agent never reached the model"
            time.sleep(0.05)

        def release(self):
            gate.set()

    yield Parking()
    gate.set()
    stub.responder = None


def names(tools):
    return {t["function"]["name"] for t in tools}


def run_in_thread(agent, message, name):
    out = {}

    def body():
        out["result"] = agent.run_conversation(message, conversation_history=[])

    t = threading.Thread(target=body, name=name, daemon=True)
    t.start()
    return t, out


# -- tests ----------------------------------------------------------------------------
def test_worker_thread_hook_binds_the_agent_waiting_on_another_thread(
        stub, narrowing, bindings, worker_thread_hooks, agent_factory, runtime):
    narrowing(("file",))
    worker_thread_hooks()
    agent = agent_factory()
    captured = agent.tools
    thread, out = run_in_thread(agent, "read notes.md and summarise it", "agent-thread-A")
    thread.join(30)
    assert not thread.is_alive()

    mine = [b for b in bindings if b[0] == agent.session_id]
    assert mine, "pre_llm_call never tried to bind"
    sid, how, bound, hook_thread = mine[0]
    assert bound is agent and how == "thread_stack"
    assert hook_thread.startswith("hook-worker") and hook_thread != "agent-thread-A"

    sent = names(stub.chat_requests()[0].tools)
    assert FILE_TOOLS <= sent and not (NOT_FILE & sent), sent
    runtime.on_session_finalize(session_id=agent.session_id)
    assert agent.tools is captured, "the exact capture was not handed back"


def test_direct_call_from_thread_b_while_a_is_parked_in_run_conversation(
        stub, narrowing, router_config, bindings, parking, agent_factory, runtime):
    narrowing(("file",), enabled=False)  # A's own (on-thread) hook stays hands-off
    agent = agent_factory()
    captured = agent.tools
    thread, _ = run_in_thread(agent, "read notes.md", "agent-thread-A")
    try:
        parking.wait_parked()
        router_config(enabled=True)
        sid = agent.session_id

        def thread_b():  # closes over ``sid`` only: B's own frames hold no agent
            runtime.pre_llm_call(session_id=sid, user_message="read notes.md", is_first_turn=True, platform="cli")

        b = threading.Thread(target=thread_b, name="hook-thread-B")
        b.start()
        b.join(10)
        assert not b.is_alive()
        state = runtime.states.get(agent.session_id)
        assert state is not None and state.narrowed and state.agent is agent
        assert FILE_TOOLS <= names(agent.tools) and not (NOT_FILE & names(agent.tools))
        mine = [b for b in bindings if b[0] == agent.session_id and b[3] == "hook-thread-B"]
        assert [(m[1], m[2]) for m in mine] == [("thread_stack", agent)]
    finally:
        parking.release()
        thread.join(30)
    runtime.on_session_finalize(session_id=agent.session_id)
    assert agent.tools is captured


def test_two_gateway_sessions_in_parallel_each_bind_their_own_agent(
        stub, narrowing, bindings, worker_thread_hooks, runtime, monkeypatch):
    """A real GatewayRunner runs two chats at once on its executor threads; both hooks
    run on worker threads at the same moment (a barrier holds them together)."""
    from gateway.config import GatewayConfig, Platform
    from gateway.platforms.base import MessageEvent
    from gateway.run import GatewayRunner
    from gateway.session import SessionSource

    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "true")
    narrowing(("file",))
    worker_thread_hooks(barrier=threading.Barrier(2, timeout=20))
    runner = GatewayRunner(GatewayConfig())
    sources = [SessionSource(platform=Platform.TELEGRAM, chat_id=f"9{n}01", chat_type="dm", user_id=f"u{n}")
               for n in (1, 2)]
    texts = ["gateway one: read alpha.md", "gateway two: read beta.md"]

    async def both():
        return await asyncio.gather(*(runner._handle_message(MessageEvent(text=t, source=s, message_id=f"m{i}"))
                                      for i, (t, s) in enumerate(zip(texts, sources))))

    replies = asyncio.run(both())
    assert replies == ["ok", "ok"]

    agents = []
    for source in sources:
        entry = runner._agent_cache[runner._session_key_for_source(source)]
        agents.append(entry[0])
    assert agents[0] is not agents[1]
    for agent in agents:
        mine = [b for b in bindings if b[0] == agent.session_id]
        assert mine and all(b[2] is agent for b in mine), mine  # post_api_request binds on the agent's thread
        worker = [b for b in mine if b[3].startswith("hook-worker")]
        assert worker and all(b[1] == "thread_stack" for b in worker), mine
        state = runtime.states.get(agent.session_id)
        assert state is not None and state.narrowed and state.agent is agent
    # each chat's first provider request carried its own narrowed surface
    for text in texts:
        reqs = [r for r in stub.chat_requests() if r.tools and text in str((r.body or {}).get("messages"))]
        assert reqs, text
        assert FILE_TOOLS <= set(reqs[0].tool_names) and not (NOT_FILE & set(reqs[0].tool_names))
    for agent in agents:
        runtime.on_session_finalize(session_id=agent.session_id)
        assert runtime.states.get(agent.session_id) is None


def test_two_live_agents_with_one_session_id_are_ambiguous_and_nothing_is_bound(
        stub, narrowing, router_config, bindings, parking, agent_factory, runtime):
    narrowing(("file",), enabled=False)
    first = agent_factory()
    second = agent_factory(session_id=first.session_id)
    before = [(a, a.tools, a.valid_tool_names) for a in (first, second)]
    threads = [run_in_thread(a, "read notes.md", f"agent-thread-{i}")[0] for i, a in enumerate((first, second))]
    try:
        parking.wait_parked(2)
        router_config(enabled=True)
        worker = threading.Thread(target=runtime.pre_llm_call, kwargs=dict(
            session_id=first.session_id, user_message="read notes.md", platform="cli"), name="hook-thread-B")
        worker.start()
        worker.join(10)
        mine = [b for b in bindings if b[3] == "hook-thread-B"]
        assert [(b[1], b[2]) for b in mine] == [("ambiguous_threads", None)]
        assert runtime.states.get(first.session_id) is None
        for agent, tools, valid in before:
            assert agent.tools is tools and agent.valid_tool_names is valid
    finally:
        parking.release()
        for t in threads:
            t.join(30)


def test_background_review_fork_sharing_the_session_id_is_not_a_second_match(
        stub, narrowing, bindings, agent_factory, runtime):
    """The memory/skill review fork shares its parent's session_id: never counted, never routed."""
    narrowing(("file",))
    parent = agent_factory()
    fork = agent_factory(session_id=parent.session_id)
    fork._memory_write_origin = "background_review"
    fork._persist_disabled = True
    fork_tools = fork.tools
    release = threading.Event()
    parked = threading.Barrier(3, timeout=10)

    def park(agent):  # a frame holding the agent local, like run_conversation's
        parked.wait()
        release.wait(10)
        return agent

    threads = [threading.Thread(target=park, args=(a,), daemon=True) for a in (parent, fork)]
    for t in threads:
        t.start()
    parked.wait()
    try:
        runtime.pre_llm_call(session_id=parent.session_id, user_message="read notes.md", platform="cli")
    finally:
        release.set()
        for t in threads:
            t.join(10)
    state = runtime.states.get(parent.session_id)
    assert state is not None and state.agent is parent and state.narrowed
    assert fork.tools is fork_tools
    assert [b[1] for b in bindings if b[0] == parent.session_id] == ["thread_stack"]
    # the fork's own turn (it runs pre_llm_call on its own thread) is left alone too
    runtime.pre_llm_call(session_id=fork.session_id, user_message="review memory", platform="cli", agent=fork)
    assert fork.tools is fork_tools
    runtime.on_session_finalize(session_id=parent.session_id)


def test_explicit_agent_wins_only_when_its_session_matches(stub, narrowing, bindings, agent_factory, runtime):
    narrowing(("file",))
    agent = agent_factory()
    other = agent_factory()
    other_tools = other.tools
    # explicit agent for another session is ignored; the stack's ``agent`` local is used
    runtime.pre_llm_call(session_id=agent.session_id, user_message="read notes.md", platform="cli", agent=other)
    assert bindings[-1][1:3] == ("stack", agent)
    assert other.tools is other_tools
    runtime.on_session_finalize(session_id=agent.session_id)

    explicit = agent_factory()
    decoy = agent_factory(session_id=explicit.session_id)  # noqa: F841 - a same-session local on the stack
    runtime.pre_llm_call(session_id=explicit.session_id, user_message="read notes.md", platform="cli",
                         agent=explicit)
    assert bindings[-1][1:3] == ("explicit", explicit)
    assert runtime.states.get(explicit.session_id).agent is explicit
    runtime.on_session_finalize(session_id=explicit.session_id)


def test_stored_reference_is_used_from_a_bare_thread_and_revalidated(
        stub, narrowing, bindings, agent_factory, runtime):
    narrowing(("file",))
    agent = agent_factory()
    sid = agent.session_id
    runtime.pre_llm_call(session_id=sid, user_message="read notes.md", platform="cli")
    state = runtime.states.get(sid)
    assert state.narrowed

    def bare():
        runtime.pre_llm_call(session_id=sid, user_message="and again", platform="cli")

    agent_ref = agent
    del agent  # the bare thread's stack and the test's locals no longer hold it by that name
    t = threading.Thread(target=bare, name="bare")
    t.start()
    t.join(10)
    assert [b[1:3] for b in bindings if b[3] == "bare"] == [("stored", agent_ref)]

    agent_ref.session_id = "someone-else"  # reused: the stored ref no longer serves ``sid``
    t = threading.Thread(target=bare, name="bare-2")
    t.start()
    t.join(10)
    assert [b[1] for b in bindings if b[3] == "bare-2"] == ["not_found"]
    agent_ref.session_id = sid
    runtime.on_session_finalize(session_id=sid)
