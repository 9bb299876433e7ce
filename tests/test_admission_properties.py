"""Property-based tests: the admission invariants over random surfaces, policies and
request sequences, driving the pure core (``surface.select/grow/unprunable`` plus the
admission filter) with plain-data surfaces. No Hermes needed.

Invariants checked after every step:
* no protected definition outside the ceiling ever appears;
* pins never disappear;
* within a session the surface only grows (request steps), and a host rebuild never
  drops a name the session showed that the rebuilt surface still has;
* everything shown is a captured definition object, in captured order;
* restore returns the exact capture (same list object, same definition objects);
* the guard blocks exactly the protected names outside the bound surface.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_token_router import admission as A
from hermes_token_router.guard import guard_decision
from hermes_token_router.surface import Capture, grow, names_for_toolsets, select, tool_name, unprunable

TOOLSETS = ("file", "web", "kanban", "vault", "cron", "memory")
WORKER_TOOLSET = "kanban"

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def definition(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"{name} tool", "parameters": {}}}


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


class Sim:
    """A narrowed session driven by the pure core, the way session.py drives it."""

    def __init__(self, env: A.Envelope, capture: Capture, routed: List[str], owners):
        self.env = env
        self.capture = capture
        self.owners = owners
        if A.may_prune(env):
            keep = unprunable(capture, ()) | names_for_toolsets(capture, routed)
            self.keep = A.clamp(env, keep, owners) & frozenset(capture.names) | A.floor(env)
        else:
            self.keep = frozenset(capture.names)
        self.tools = select(capture, self.keep, None)

    def request(self, names: List[str]) -> A.AdmitResult:
        res = A.admit(self.env, names, self.owners)
        self.keep, _ = grow(self.keep, res.allowed, self.capture)
        self.tools = select(self.capture, self.keep, None)
        return res

    def rebuild(self, fresh: Capture) -> None:
        """The host rebuilt the surface (MCP refresh): re-narrow, clamped to the *bound*
        envelope (the fresh surface is never new authority)."""
        self.capture = fresh
        if A.may_prune(self.env):
            keep = (self.keep | unprunable(fresh, ())) & frozenset(fresh.names)
            self.keep = A.clamp(self.env, keep, self.owners) | (A.floor(self.env) & frozenset(fresh.names))
        else:
            self.keep = A.clamp(self.env, frozenset(fresh.names), self.owners)
        self.tools = select(fresh, self.keep, None)

    def restore(self):
        return self.capture.tools

    def shown(self) -> List[str]:
        return [tool_name(t) for t in self.tools]


def check_invariants(sim: Sim, registry) -> None:
    env = sim.env
    shown = sim.shown()
    ceiling = set(env.ceiling)
    for name in shown:
        known, owner = True, registry.get(name)
        if A.is_protected(env, name, known, owner):
            assert name in ceiling, f"protected {name} outside ceiling {env.ceiling}"
    for pin in env.pins:
        if pin in sim.capture.names:
            assert pin in shown, f"pin {pin} disappeared"
    # captured objects, captured order
    index = {id(t): i for i, t in enumerate(sim.capture.tools)}
    positions = [index.get(id(t)) for t in sim.tools]
    assert None not in positions, "a definition was manufactured"
    assert positions == sorted(positions), "captured order broken"


@given(data=st.data())
@SETTINGS
def test_captured_sessions_keep_every_invariant(data):
    registry, captured = data.draw(universes())
    defs = {n: definition(n) for n in registry}
    capture = make_capture(captured, registry, defs)
    raw = data.draw(policies(registry))
    worker = data.draw(st.sampled_from([A.WORKER, A.NOT_WORKER, A.UNCERTAIN]))
    adm = A.parse_admission(raw)
    assert adm.status == A.VALID
    env = A.bind(adm, capture, capture.owners, worker, worker_toolset=WORKER_TOOLSET)
    routed = data.draw(st.lists(st.sampled_from(TOOLSETS), unique=True, max_size=3))
    sim = Sim(env, capture, routed, registry)
    original_tools = capture.tools
    original_items = list(capture.tools)
    check_invariants(sim, registry)
    steps = data.draw(st.lists(st.one_of(
        st.tuples(st.just("request"), st.lists(st.sampled_from(sorted(registry)), max_size=5)),
        st.tuples(st.just("rebuild"), st.lists(st.sampled_from(sorted(registry)), unique=True)),
    ), max_size=8))
    for kind, arg in steps:
        before = set(sim.shown())
        if kind == "request":
            res = sim.request(arg)
            after = set(sim.shown())
            assert before <= after, "the surface shrank"
            for n in res.denied:
                assert n not in after or n in before
            if res.reason == A.DENIED_PROTECTED:
                assert after == before, "a fully denied request changed the surface"
        else:
            fresh = make_capture(tuple(arg), registry, defs)
            sim.rebuild(fresh)
            after = set(sim.shown())
            assert (before & set(fresh.names)) <= after, "a rebuild dropped a shown tool"
        check_invariants(sim, registry)
        if worker == A.WORKER and A.may_prune(env):
            for n in sim.capture.names:
                if registry[n] == WORKER_TOOLSET and n in env.names:
                    assert n in sim.shown(), "a worker lost a lifecycle tool"
    if not sim.capture is capture:
        return
    restored = sim.restore()
    assert restored is original_tools and all(a is b for a, b in zip(restored, original_items))
    assert len(restored) == len(original_items)


@given(data=st.data())
@SETTINGS
def test_no_authority_appends_only_ordinary_definitions(data):
    registry, captured = data.draw(universes())
    raw = data.draw(policies(registry))
    env = A.bind(A.parse_admission(raw), captured, {n: registry[n] for n in captured}, provenance=False)
    assert env.authority == A.NO_AUTHORITY_MODE and not A.may_prune(env)
    surface = list(captured)
    marker = None
    for req in data.draw(st.lists(st.lists(st.sampled_from(sorted(registry)), max_size=4), max_size=6)):
        res = A.admit(env, req, registry)
        assert res.reason == A.NO_AUTHORITY
        new = [n for n in res.allowed if n not in surface]
        if new:
            marker = A.mark_contaminated(marker, "s", new)
        before = list(surface)
        surface = surface + new  # append-only
        assert surface[:len(before)] == before
        for n in new:
            assert not A.is_protected(env, n, True, registry[n]), f"protected {n} appended without authority"
    if marker is not None:
        assert not A.may_capture(marker)


@given(data=st.data())
@SETTINGS
def test_invalid_policy_changes_nothing(data):
    registry, captured = data.draw(universes())
    bad = data.draw(st.sampled_from([None, True, [], {"schema_version": 1}, {"schema_version": 2,
                                     "protected_toolsets": [], "pinned_tool_names": []}]))
    env = A.bind(A.parse_admission(bad), captured, lambda n: (_ for _ in ()).throw(AssertionError("lookup")))
    for req in data.draw(st.lists(st.lists(st.sampled_from(sorted(registry)), max_size=4), max_size=4)):
        res = A.admit(env, req, lambda n: (_ for _ in ()).throw(AssertionError("lookup")))
        assert res.allowed == () and res.reason == A.NO_AUTHORITY_INVALID_POLICY


@given(data=st.data())
@SETTINGS
def test_guard_blocks_exactly_protected_names_outside_the_bound_surface(data):
    registry, captured = data.draw(universes())
    raw = data.draw(policies(registry))
    env = A.bind(A.parse_admission(raw), captured, {n: registry[n] for n in captured})
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
    a = A.parse_admission(value)
    assert a.status in (A.VALID, A.INVALID)
    if a.status == A.VALID:
        assert type(value) is dict and set(value) == {"schema_version", "protected_toolsets", "pinned_tool_names"}
        for ident in a.protected_toolsets + a.pinned_tool_names:
            assert type(ident) is str and ident and ident == ident.strip()
