"""Issue 9: a gateway serving many sessions from one process.

* 1,000 simulated gateway sessions on 8 executor threads: the router's memory per routed
  session (tracemalloc), and the state empties when the sessions end, or when their
  agents are collected without an end (weak references).
* A real ``gateway.run.GatewayRunner`` (Hermes 0.19.0, offline) serving three chats whose
  agents carry different ``_profile_name``s: each turn applies that profile's own
  ``profiles:`` entry of the router config.

The 1,000 sessions use lightweight *real* ``AIAgent`` objects: shallow copies of one
fully built agent (``copy.copy``; building 1,000 agents would take ~5 minutes), each with
its own ``session_id``. They share the host-built tool list, exactly as agents built from
Hermes's memoised ``get_tool_definitions`` share schema dicts.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from hermes_token_router.devtools import harness

SESSIONS = 1000
FILE_TOOLS = {"read_file", "write_file", "patch", "search_files"}


NO_CALLS = SimpleNamespace(tool_calls=[])


def gateway_turn(runtime, agent, text="read notes.md"):
    """One turn's router work as the 0.19.0 gateway runs it: on the executor thread that
    runs the agent, with the agent in a local (as ``build_turn_context(agent, ...)``)."""
    runtime.pre_llm_call(session_id=agent.session_id, user_message=text, platform="telegram")
    runtime.recovery.post_api_request(session_id=agent.session_id, assistant_message=NO_CALLS, platform="telegram")
    return agent.session_id


def ours(runtime, prefix):
    return [s for s in runtime.states.sessions() if s.session_id.startswith(prefix)]


def test_thousand_gateway_sessions_memory_per_session_and_state_empties(narrowing, agent_factory, runtime,
                                                                       request):
    narrowing(enabled=True)
    # pytest's log capture would keep every INFO record the router logs: not the router's memory
    router_log = logging.getLogger("hermes_token_router")
    request.addfinalizer(lambda level=router_log.level: router_log.setLevel(level))
    router_log.setLevel(logging.WARNING)
    base = agent_factory()
    agents = harness.clone_agents(base, "gw-mem", SESSIONS)
    pool = ThreadPoolExecutor(8, thread_name_prefix="hermes-gateway")
    list(pool.map(lambda a: gateway_turn(runtime, a), agents[:8]))  # warm caches (catalog, registry)
    for a in agents[:8]:
        runtime.on_session_finalize(session_id=a.session_id)

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        list(pool.map(lambda a: gateway_turn(runtime, a), agents))
        gc.collect()
        routed = tracemalloc.take_snapshot()
        states = ours(runtime, "gw-mem")
        assert len(states) == SESSIONS and all(s.narrowed for s in states)
        assert all(s.agent is a for s, a in zip(sorted(states, key=lambda s: s.session_id), agents))
        del states
        # a second turn for every session is sticky and costs nothing new per session
        list(pool.map(lambda a: gateway_turn(runtime, a, "and again"), agents))
        gc.collect()
        sticky = tracemalloc.take_snapshot()
        for a in agents:
            runtime.on_session_finalize(session_id=a.session_id)
        gc.collect()
        ended = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
        pool.shutdown(wait=True)

    def grown(after):
        return sum(s.size_diff for s in after.compare_to(before, "filename"))

    per_session = grown(routed) / SESSIONS
    per_session_sticky = (grown(sticky) - grown(routed)) / SESSIONS
    left = grown(ended) / SESSIONS
    print(f"\nrouter memory: {per_session / 1024:.1f} KiB per routed session; "
          f"second (sticky) turn {per_session_sticky:+.0f} B/session; after end {left:+.0f} B/session")
    assert not ours(runtime, "gw-mem"), "state left behind after the sessions ended"
    assert all(a.tools is base.tools for a in agents), "a session did not get the host's exact list back"
    assert per_session < 64 * 1024, per_session
    assert per_session_sticky < 512, per_session_sticky
    assert left < 0.1 * per_session, (left, per_session)


def test_sessions_whose_agents_are_collected_are_evicted_without_an_end(narrowing, agent_factory, runtime):
    narrowing(enabled=True)
    base = agent_factory()

    def serve():  # agents exist only inside this frame and the pool's finished frames
        agents = harness.clone_agents(base, "gw-gc", 200)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda a: gateway_turn(runtime, a), agents))
        assert len(ours(runtime, "gw-gc")) == 200

    serve()
    gc.collect()
    assert ours(runtime, "gw-gc") == []


def test_real_gateway_runner_applies_each_profiles_own_entry(stub, narrowing, runtime, monkeypatch):
    """One real GatewayRunner, three chats, three profiles (``agent._profile_name``):
    alpha narrows with floor [terminal], beta with floor [todo], gamma has no entry and
    the global ``enabled: false`` leaves it untouched. Turn 1 builds and caches the agents
    (router off), the profile is stamped on each cached agent (0.19.0 itself multiplexes
    profiles by HERMES_HOME override, not by an agent attribute), turn 2 runs all three
    chats concurrently on the runner's executor."""
    from gateway.config import GatewayConfig, Platform
    from gateway.platforms.base import MessageEvent
    from gateway.run import GatewayRunner
    from gateway.session import SessionSource

    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "true")
    narrowing(enabled=False)
    runner = GatewayRunner(GatewayConfig())
    profiles = ("alpha", "beta", "gamma")
    sources = {p: SessionSource(platform=Platform.TELEGRAM, chat_id=f"88{n}", chat_type="dm", user_id=f"user-{p}")
               for n, p in enumerate(profiles)}

    async def turn(texts):
        return await asyncio.gather(*(runner._handle_message(MessageEvent(text=texts[p], source=sources[p],
                                                                          message_id=f"{p}-{len(texts[p])}"))
                                      for p in profiles))

    assert asyncio.run(turn({p: f"hello from {p}" for p in profiles})) == ["ok"] * 3
    agents = {p: runner._agent_cache[runner._session_key_for_source(sources[p])][0] for p in profiles}
    full = {p: agents[p].tools for p in profiles}
    for p in profiles:
        agents[p]._profile_name = p

    narrowing(enabled=False, profiles={"alpha": {"enabled": True, "floor_toolsets": ["terminal"]},
                                       "beta": {"enabled": True, "floor_toolsets": ["todo"]}})
    texts = {p: f"profile {p}: read notes.md" for p in profiles}
    assert asyncio.run(turn(texts)) == ["ok"] * 3
    assert runtime.gateway_agent() in agents.values()  # pre_gateway_dispatch kept the real runner

    sent = {}
    for p in profiles:
        reqs = [r for r in stub.chat_requests() if r.tools and texts[p] in str((r.body or {}).get("messages"))]
        assert reqs, p
        sent[p] = set(reqs[0].tool_names)
    assert FILE_TOOLS <= sent["alpha"] and "terminal" in sent["alpha"] and "todo" not in sent["alpha"]
    assert FILE_TOOLS <= sent["beta"] and "todo" in sent["beta"] and "terminal" not in sent["beta"]
    assert {"terminal", "todo", "delegate_task"} <= sent["gamma"]
    assert agents["gamma"].tools is full["gamma"]
    assert runtime.states.get(agents["alpha"].session_id).profile == "alpha"
    assert runtime.states.get(agents["beta"].session_id).profile == "beta"
    for p in profiles:
        runtime.on_session_finalize(session_id=agents[p].session_id)
        assert agents[p].tools is full[p]
