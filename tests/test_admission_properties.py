"""Property-based tests: the admission invariants over random surfaces, policies and
request sequences, driving the router's real planning, growth, re-narrowing and restore
code (``surface_mutation``, ``recovery.expand_session``) on plain-data agents. What Hermes
would answer (static toolset members, registration, token estimate, its lock) is handed in
as arguments, exactly as the runtime passes the host adapter's answers. No Hermes needed.

Invariants checked after every step:
* no protected definition outside the ceiling ever appears;
* pins never disappear;
* within a session the surface only grows (request steps), and a host rebuild never
  drops a name the session showed that the rebuilt surface still has;
* everything shown is a captured definition object, in captured order (plus the router's
  own ``request_toolset``);
* restore hands back the exact capture (same list object, same definition objects);
* a NO_AUTHORITY session only appends ordinary definitions, and the appended surface is
  never captured as authority by a later session of the same agent;
* the guard blocks exactly the protected names outside the bound surface.
"""

from __future__ import annotations

import weakref
from typing import Dict, Optional, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_token_router import admission as A
from hermes_token_router import admission_policy as P
from hermes_token_router import admission_state as S
from hermes_token_router import surface_mutation as M
from hermes_token_router.config import RouterConfig
from hermes_token_router.decision import Decision
from hermes_token_router.guard import guard_decision
from hermes_token_router.recovery import expand_session
from hermes_token_router.session_state import FULL, ROUTED, SessionState
from hermes_token_router.surface import ROUTER_TOOL, Capture, tool_name

TOOLSETS = ("file", "web", "kanban", "vault", "cron", "memory")
WORKER_TOOLSET = "kanban"
CFG = RouterConfig()

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def definition(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"{name} tool", "parameters": {}}}


def estimate(tools) -> int:  # Hermes's estimate is not under test: any monotone count will do
    return sum(len(tool_name(t)) for t in tools or ())


@st.composite
def universes(draw):
    """A registry (name -> owner or None) and a host capture drawn from it."""
    n = draw(st.integers(min_value=1, max_value=18))
    registry: Dict[str, Optional[str]] = {}
    for i in range(n):
        owner = draw(st.one_of(st.none(), st.sampled_from(TOOLSETS)))
        registry[f"t{i}_{owner or 'x'}"] = owner
    names = list(registry)
    captured = draw(st.lists(st.sampled_from(names), unique=True, min_size=0, max_size=len(names)))
    return registry, tuple(captured)


def make_capture(names: Tuple[str, ...], registry: Dict[str, Optional[str]], defs: Dict[str, dict]) -> Capture:
    tools = [defs[n] for n in names]
    return Capture(tools=tools, valid_tool_names=set(names), names=names, owners={n: registry[n] for n in names})


@st.composite
def policies(draw, registry):
    protected = draw(st.lists(st.sampled_from(TOOLSETS), unique=True, max_size=4))
    pins = draw(st.lists(st.sampled_from(sorted(registry) + ["absent_pin"]), unique=True, max_size=4))
    return {"schema_version": 1, "protected_toolsets": protected, "pinned_tool_names": pins}


def draw_world(data):
    """A registry, a host capture of it (plain data, real definition objects) and a policy."""
    registry, captured = data.draw(universes())
    defs = {n: definition(n) for n in registry}
    return registry, defs, make_capture(captured, registry, defs), data.draw(policies(registry))


class Agent:
    """What the router reads and writes on a Hermes agent, as plain data."""

    def __init__(self, session_id: str, capture: Capture) -> None:
        self.session_id = session_id
        self.tools = capture.tools
        self.valid_tool_names = capture.valid_tool_names


def shown(agent: Agent) -> list:
    return [tool_name(t) for t in agent.tools if tool_name(t) != ROUTER_TOOL]


def route(agent: Agent, env: A.Envelope, capture: Capture, toolsets) -> SessionState:
    """The runtime's first turn: a full session when admission forbids pruning, else the
    real plan committed by the real write path."""
    state = SessionState(session_id=agent.session_id, profile="p", agent_ref=weakref.ref(agent), phase=FULL,
                         decision=Decision("narrow", tuple(toolsets), "test", 1.0, "rules", "test"))
    if not A.may_prune(env):
        return state
    p = M.plan(capture, toolsets, CFG, static={}, catalog_text="", estimate=estimate, extra_keep=A.floor(env))
    M.commit_route(state, agent, p, lambda: True, env, lock=M.NO_LOCK)
    return state


def check_invariants(agent: Agent, state: SessionState, env: A.Envelope, registry) -> None:
    cap = state.capture if state.phase == ROUTED else None
    names = shown(agent)
    ceiling = set(env.ceiling)
    for name in names:
        if A.is_protected(env, name, True, registry.get(name)):
            assert name in ceiling, f"protected {name} outside ceiling {env.ceiling}"
    if cap is None:
        return
    for pin in env.pins:
        if pin in cap.names:
            assert pin in names, f"pin {pin} disappeared"
    index = {id(t): i for i, t in enumerate(cap.tools)}
    positions = [index.get(id(t)) for t in agent.tools if tool_name(t) != ROUTER_TOOL]
    assert None not in positions, "a definition was manufactured"
    assert positions == sorted(positions), "captured order broken"


@given(data=st.data())
@SETTINGS
def test_captured_sessions_keep_every_invariant(data):
    registry, defs, capture, raw = draw_world(data)
    worker = data.draw(st.sampled_from([P.WORKER, P.NOT_WORKER, P.UNCERTAIN]))
    adm = P.parse_admission(raw)
    assert adm.status == P.VALID
    agent = Agent("s1", capture)
    env = A.bind(adm, capture, capture.owners, worker, session_id="s1", worker_toolset=WORKER_TOOLSET)
    routed = data.draw(st.lists(st.sampled_from(TOOLSETS), unique=True, max_size=3))
    state = route(agent, env, capture, routed)
    original_tools, original_items = capture.tools, list(capture.tools)
    check_invariants(agent, state, env, registry)
    steps = data.draw(st.lists(st.one_of(
        st.tuples(st.just("request"), st.lists(st.sampled_from(sorted(registry)), max_size=5)),
        st.tuples(st.just("rebuild"), st.lists(st.sampled_from(sorted(registry)), unique=True)),
    ), max_size=8))
    rebuilt = False
    for kind, arg in steps:
        if state.phase != ROUTED:
            break
        before = set(shown(agent))
        if kind == "request":
            res, added = expand_session(state, agent, arg, env, static={}, registered=registry.__contains__,
                                        still_valid=lambda: True, lock=M.NO_LOCK, estimate=estimate)
            after = set(shown(agent))
            assert before <= after, "the surface shrank"
            assert set(added) == after - before
            for n in res.verdict.denied:
                assert n not in after or n in before, f"denied {n} was installed"
            if res.verdict.reason == A.DENIED_PROTECTED:
                assert after == before, "a fully denied request changed the surface"
        else:
            fresh = make_capture(tuple(arg), registry, defs)
            agent.tools, agent.valid_tool_names = fresh.tools, fresh.valid_tool_names  # the host rebuilt it
            how = M.reinstall(state, agent, lambda: True, env, lock=M.NO_LOCK)
            if how == M.FOLDED:  # the rebuild is the captured surface again: our exact list goes back
                assert agent.tools is state.committed_tools
            else:
                assert how == M.REBUILT
                p = M.plan(fresh, state.loaded_toolsets, CFG, static={}, catalog_text=state.catalog_text,
                           estimate=estimate, router_definition=state.router_definition, extra_keep=state.keep)
                M.renarrow(state, agent, p, lambda: True, env, lock=M.NO_LOCK, estimate=estimate)
                rebuilt = True
            after = set(shown(agent))
            assert (before & set(fresh.names)) <= after, "a rebuild dropped a shown tool"
        check_invariants(agent, state, env, registry)
        if worker == P.WORKER and A.may_prune(env):
            for n in state.capture.names:
                if registry[n] == WORKER_TOOLSET and n in env.names:
                    assert n in shown(agent), "a worker lost a lifecycle tool"
    expected = state.capture.tools if state.phase == ROUTED else agent.tools
    assert M.restore(state, lock=M.NO_LOCK)
    assert agent.tools is expected
    if not rebuilt:
        assert agent.tools is original_tools and all(a is b for a, b in zip(agent.tools, original_items))
        assert len(agent.tools) == len(original_items)


@given(data=st.data())
@SETTINGS
def test_no_authority_appends_only_ordinary_definitions_and_is_never_captured_again(data):
    registry, defs, capture, raw = draw_world(data)
    agent = Agent("s1", capture)
    env, _ = S.envelope_for(agent, "s1", lambda: A.bind(P.parse_admission(raw), capture.names, capture.owners,
                                                        session_id="s1", provenance=False))
    assert env.authority == A.NO_AUTHORITY_MODE and not A.may_prune(env)
    appended = False
    for req in data.draw(st.lists(st.lists(st.sampled_from(sorted(registry)), max_size=4), max_size=6)):
        res = A.admit(env, req, registry)
        assert res.reason == A.NO_AUTHORITY
        new = [defs[n] for n in dict.fromkeys(res.allowed) if n not in agent.valid_tool_names]
        before = list(agent.tools)
        if new:
            M.append_without_authority(agent, "s1", new, lock=M.NO_LOCK)
            appended = True
        assert list(agent.tools[:len(before)]) == before and all(a is b for a, b in zip(agent.tools, before))
        for d in new:
            assert not A.is_protected(env, tool_name(d), True, registry[tool_name(d)]), \
                f"protected {tool_name(d)} appended without authority"
    S.mark_restore(agent, "s1", ok=True)  # s1 ends; the agent serves s2
    assert S.slot_of(agent) is None
    assert S.has_provenance(agent, "s2", []) is not appended, "an appended surface regained host authority"


@given(data=st.data())
@SETTINGS
def test_invalid_policy_changes_nothing(data):
    registry, captured = data.draw(universes())
    bad = data.draw(st.sampled_from([None, True, [], {"schema_version": 1}, {"schema_version": 2,
                                     "protected_toolsets": [], "pinned_tool_names": []}]))
    env = A.bind(P.parse_admission(bad), captured, lambda n: (_ for _ in ()).throw(AssertionError("lookup")))
    for req in data.draw(st.lists(st.lists(st.sampled_from(sorted(registry)), max_size=4), max_size=4)):
        res = A.admit(env, req, lambda n: (_ for _ in ()).throw(AssertionError("lookup")))
        assert res.allowed == () and res.reason == A.NO_AUTHORITY_INVALID_POLICY


@given(data=st.data())
@SETTINGS
def test_guard_blocks_exactly_protected_names_outside_the_bound_surface(data):
    registry, captured = data.draw(universes())
    raw = data.draw(policies(registry))
    env = A.bind(P.parse_admission(raw), captured, {n: registry[n] for n in captured})
    protected = set(raw["protected_toolsets"])
    pins = set(raw["pinned_tool_names"])
    for name, owner in registry.items():
        decision = guard_decision(name, env, registry.get)
        expect_block = name not in captured and owner is not None and (owner in protected or name in pins)
        assert (decision is not None) == expect_block, (name, owner, decision)


@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
                    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=20), c, max_size=4)),
                    max_leaves=10))
@SETTINGS
def test_parse_never_raises_and_never_accepts_garbage(value):
    a = P.parse_admission(value)
    assert a.status in (P.VALID, P.INVALID)
    if a.status == P.VALID:
        assert type(value) is dict and set(value) == {"schema_version", "protected_toolsets", "pinned_tool_names"}
        for ident in a.protected_toolsets + a.pinned_tool_names:
            assert type(ident) is str and ident and ident == ident.strip()
