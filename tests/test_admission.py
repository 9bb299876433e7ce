"""Unit tests for the pure admission core (no Hermes needed)."""

from __future__ import annotations

import collections
import threading

import pytest

from hermes_token_router import admission as A
from hermes_token_router import recovery

OWNERS = {
    "read_file": "file", "write_file": "file",
    "terminal": "terminal",
    "kanban_show": "kanban", "kanban_complete": "kanban", "kanban_block": "kanban", "kanban_heartbeat": "kanban",
    "kanban_list": "kanban",
    "cronjob": "cronjob",
    "tool_search": None, "tool_call": None, "memory_provider_x": None,
}
CAPTURE = ("read_file", "kanban_show", "terminal", "kanban_complete", "tool_call", "cronjob",
           "kanban_block", "kanban_heartbeat", "memory_provider_x")


def policy(protected=(), pins=(), **extra):
    p = {"schema_version": 1, "protected_toolsets": list(protected), "pinned_tool_names": list(pins)}
    p.update(extra)
    return p


def never_called(name):  # an owner look-up that must not run
    raise AssertionError(f"owner look-up for {name!r} must not happen")


# -- parsing: valid shapes ---------------------------------------------------------------
def test_missing_on_both_channels_is_the_valid_empty_policy():
    a = A.parse_admission()
    assert a.status == A.EMPTY and a.is_valid and a.protected_toolsets == () and a.pinned_tool_names == ()
    assert A.parse_admission(A.MISSING, A.MISSING) is a


@pytest.mark.parametrize("channel", ["hook", "agent"])
def test_one_channel_valid(channel):
    p = policy(["kanban", "cronjob"], ["kanban_complete"])
    a = A.parse_admission(**({"hook_value": p} if channel == "hook" else {"agent_value": p}))
    assert a.status == A.VALID
    assert a.protected_toolsets == ("kanban", "cronjob")
    assert a.pinned_tool_names == ("kanban_complete",)


def test_both_channels_agreeing_is_valid_and_tuples_are_accepted():
    a = A.parse_admission(policy(["kanban"], ["kanban_complete"]),
                          {"schema_version": 1, "protected_toolsets": ("kanban",), "pinned_tool_names": ("kanban_complete",)})
    assert a.status == A.VALID and a.protected_toolsets == ("kanban",)


def test_empty_lists_are_a_valid_policy():
    a = A.parse_admission(policy())
    assert a.status == A.VALID and a.protected_toolsets == () and a.pinned_tool_names == ()


def test_identifiers_are_never_normalised():
    a = A.parse_admission(policy(["Kanban", "web search"], ["Kanban_Complete"]))
    assert a.protected_toolsets == ("Kanban", "web search")
    env = A.bind(a, CAPTURE, OWNERS)
    assert env.ceiling == ()  # "Kanban" is not "kanban"
    assert A.admit(env, ["kanban_list"], OWNERS).reason == A.READY


def test_parse_snapshots_the_input():
    prot = ["kanban"]
    raw = policy(prot)
    raw["protected_toolsets"] = prot
    a = A.parse_admission(raw)
    prot.append("cronjob")
    raw["pinned_tool_names"] = ["x"]
    assert a.protected_toolsets == ("kanban",) and a.pinned_tool_names == ()
    with pytest.raises(Exception):
        a.status = A.INVALID  # frozen


# -- parsing: invalid shapes -------------------------------------------------------------
INVALID_VALUES = {
    "explicit_none": None,
    "true": True,
    "false": False,
    "int": 1,
    "string": "kanban",
    "list": ["kanban"],
    "ordered_dict": collections.OrderedDict(policy(["kanban"])),
    "unknown_key": policy(["kanban"], extra=1),
    "missing_pins": {"schema_version": 1, "protected_toolsets": ["kanban"]},
    "missing_protected": {"schema_version": 1, "pinned_tool_names": []},
    "missing_version": {"protected_toolsets": [], "pinned_tool_names": []},
    "non_string_key": {**policy(), 1: "x"},
    "version_2": policy(schema_version=2),
    "version_true": policy(schema_version=True),
    "version_str": policy(schema_version="1"),
    "version_float": policy(schema_version=1.0),
    "version_none": policy(schema_version=None),
    "protected_none": policy(protected_toolsets=None) | {"protected_toolsets": None},
    "protected_str": {**policy(), "protected_toolsets": "kanban"},
    "protected_set": {**policy(), "protected_toolsets": {"kanban"}},
    "protected_bool_item": policy([True]),
    "protected_none_item": policy([None]),
    "protected_int_item": policy([3]),
    "protected_empty": policy([""]),
    "protected_spaces": policy(["   "]),
    "protected_lead_space": policy([" kanban"]),
    "protected_trail_newline": policy(["kanban\n"]),
    "protected_tab": policy(["\tkanban"]),
    "protected_duplicate": policy(["kanban", "kanban"]),
    "pins_bool": {**policy(), "pinned_tool_names": False},
    "pins_empty_item": policy((), [""]),
    "pins_padded": policy((), ["kanban_complete "]),
    "pins_duplicate": policy((), ["kanban_complete", "kanban_complete"]),
    "pins_str_subclass": policy((), [type("S", (str,), {})("kanban_complete")]),
}


@pytest.mark.parametrize("name", sorted(INVALID_VALUES))
@pytest.mark.parametrize("channel", ["hook", "agent"])
def test_invalid_shapes(name, channel):
    value = INVALID_VALUES[name]
    a = A.parse_admission(**({"hook_value": value} if channel == "hook" else {"agent_value": value}))
    assert a.status == A.INVALID, name
    assert a.error and not a.is_valid
    assert a.protected_toolsets == () and a.pinned_tool_names == ()


@pytest.mark.parametrize("other", [policy(["cronjob"]), policy(["kanban"], ["kanban_complete"]),
                                   policy(["kanban", "cronjob"]), policy()])
def test_disagreeing_channels_are_invalid(other):
    a = A.parse_admission(policy(["kanban"]), other)
    assert a.status == A.INVALID and "disagree" in a.error


def test_order_difference_is_disagreement():
    a = A.parse_admission(policy(["kanban", "cronjob"]), policy(["cronjob", "kanban"]))
    assert a.status == A.INVALID


@pytest.mark.parametrize("valid_side", ["hook", "agent"])
def test_one_invalid_channel_poisons_a_valid_one(valid_side):
    good, bad = policy(["kanban"]), None
    a = A.parse_admission(good, bad) if valid_side == "hook" else A.parse_admission(bad, good)
    assert a.status == A.INVALID


# -- reading the channels ----------------------------------------------------------------
class Agent:
    pass


def test_read_channels_distinguishes_missing_from_none():
    agent = Agent()
    assert A.read_channels({}, agent) == (A.MISSING, A.MISSING)
    assert A.read_channels(None, None) == (A.MISSING, A.MISSING)
    agent._hermes_token_router_admission = None
    hook, ag = A.read_channels({A.HOOK_KEYWORD: None}, agent)
    assert hook is None and ag is None
    assert A.parse_admission(hook, ag).status == A.INVALID


def test_only_the_two_trusted_channels_are_read():
    agent = Agent()
    agent.hermes_token_router_admission = policy(["kanban"])  # wrong attribute name
    hook, ag = A.read_channels({"_hermes_token_router_admission": policy(["kanban"]),
                                "admission": policy(["kanban"])}, agent)
    assert A.parse_admission(hook, ag).status == A.EMPTY


def test_unreadable_agent_attribute_is_invalid_not_missing():
    class Raising:
        @property
        def _hermes_token_router_admission(self):
            raise RuntimeError("boom")

    hook, ag = A.read_channels({}, Raising())
    assert ag is not A.MISSING
    assert A.parse_admission(hook, ag).status == A.INVALID


# -- worker identity ---------------------------------------------------------------------
@pytest.mark.parametrize("env,reports,direct,expected", [
    (None, True, True, A.NOT_WORKER),
    ("", True, True, A.NOT_WORKER),
    ("t_1", True, True, A.WORKER),
    ("t_1", False, True, A.NOT_WORKER),  # inherited, not dispatcher-owned
    ("t_1", None, True, A.UNCERTAIN),  # predicate failed
    ("   ", True, True, A.UNCERTAIN),
    ("t_1", True, False, A.NOT_WORKER),  # delegated child / specialist / cron
    ("t_1", None, False, A.NOT_WORKER),
])
def test_worker_status(env, reports, direct, expected):
    assert A.worker_status(env, reports, direct=direct) == expected


# -- owner snapshot ----------------------------------------------------------------------
def test_snapshot_owners_is_ordered_and_immutable():
    snap = A.snapshot_owners(CAPTURE, OWNERS.get)
    assert isinstance(snap, tuple) and tuple(n for n, _ in snap) == CAPTURE


@pytest.mark.parametrize("names,lookup", [
    (("a", "a"), lambda n: "x"),  # duplicate
    (("a", 3), lambda n: "x"),  # non-string name
    (("a",), lambda n: 5),  # non-string owner
    (("a",), lambda n: (_ for _ in ()).throw(RuntimeError("registry down"))),
])
def test_snapshot_owners_uncertain(names, lookup):
    assert A.snapshot_owners(names, lookup) is None


# -- binding -----------------------------------------------------------------------------
def test_ceiling_is_captured_protected_in_captured_order_and_pins_are_the_present_subset():
    a = A.parse_admission(policy(["kanban"], ["kanban_complete", "kanban_missing"]))
    env = A.bind(a, CAPTURE, OWNERS, A.NOT_WORKER, session_id="s1")
    assert env.authority == A.CAPTURED and env.prune_allowed
    assert env.ceiling == ("kanban_show", "kanban_complete", "kanban_block", "kanban_heartbeat")
    assert env.pins == ("kanban_complete",)
    assert A.floor(env) == frozenset({"kanban_complete"})
    assert env.names == CAPTURE and env.session_id == "s1"
    # the absent pin is never manufactured, and stays denied
    assert A.admit(env, ["kanban_missing"], {"kanban_missing": "kanban"}).denied == ("kanban_missing",)


def test_empty_policy_has_no_ceiling_and_no_floor():
    env = A.bind(A.parse_admission(), CAPTURE, OWNERS)
    assert env.ceiling == () and env.pins == () and env.prune_allowed
    res = A.admit(env, ["kanban_list", "write_file"], OWNERS)
    assert res.allowed == ("kanban_list", "write_file") and res.reason == A.READY


def test_worker_pins_every_captured_worker_toolset_definition():
    env = A.bind(A.parse_admission(), CAPTURE, OWNERS, A.WORKER)
    assert env.pins == ("kanban_show", "kanban_complete", "kanban_block", "kanban_heartbeat")
    assert env.prune_allowed and env.ceiling == env.pins  # every pin is protected


def test_worker_toolset_is_a_parameter_not_a_tool_list():
    env = A.bind(A.parse_admission(), CAPTURE, OWNERS, A.WORKER, worker_toolset="terminal")
    assert env.pins == ("terminal",)


def test_orchestrator_uses_only_its_admitted_protected_subset():
    a = A.parse_admission(policy(["kanban"]))
    env = A.bind(a, CAPTURE, OWNERS, A.NOT_WORKER)
    assert env.pins == ()  # nothing pinned for a direct orchestrator
    res = A.admit(env, ["kanban_show", "kanban_list"], OWNERS)
    assert res.allowed == ("kanban_show",) and res.denied == ("kanban_list",)


@pytest.mark.parametrize("owners", [None, {"read_file": "file"}, lambda n: 1 / 0])
def test_owner_uncertainty_means_no_pruning(owners):
    env = A.bind(A.parse_admission(policy(["kanban"])), CAPTURE, owners, A.WORKER)
    assert not env.prune_allowed and not A.may_prune(env)
    assert env.ceiling == CAPTURE  # everything visible stays


def test_uncertain_worker_means_no_pruning():
    env = A.bind(A.parse_admission(), CAPTURE, OWNERS, A.UNCERTAIN)
    assert env.authority == A.CAPTURED and not env.prune_allowed and "worker" in env.why_full


def test_duplicate_names_in_the_capture_mean_no_pruning():
    env = A.bind(A.parse_admission(), ("read_file", "read_file"), {"read_file": "file"})
    assert not env.prune_allowed


def test_explicit_pin_of_an_owner_unmapped_definition_protects_that_exact_name():
    a = A.parse_admission(policy(["kanban"], ["memory_provider_x"]))
    env = A.bind(a, CAPTURE, OWNERS)
    assert "memory_provider_x" in env.pins and "memory_provider_x" in env.ceiling
    # unmapped siblings that are absent stay denied when the policy protects anything
    res = A.admit(env, ["memory_provider_y"], {})
    assert res.denied == ("memory_provider_y",) and res.reason == A.DENIED_PROTECTED


def test_invalid_policy_does_no_owner_lookup_and_prunes_nothing():
    env = A.bind(A.parse_admission(None), CAPTURE, never_called)
    assert env.authority == A.INVALID_MODE and not env.prune_allowed
    assert env.names == CAPTURE  # keeps every field
    res = A.admit(env, ["write_file", "kanban_list"], never_called)
    assert res.reason == A.NO_AUTHORITY_INVALID_POLICY
    assert res.allowed == () and res.denied == ("write_file", "kanban_list")


def test_installed_only_and_uncapturable_allow_no_expansion():
    a = A.parse_admission()
    env = A.bind(a, CAPTURE, OWNERS, attachable=False)
    assert env.authority == A.INSTALLED_ONLY and not env.may_expand
    assert A.admit(env, ["write_file"], OWNERS).allowed == ()
    env = A.bind(a, None, OWNERS)
    assert env.authority == A.UNCAPTURABLE and not env.may_expand
    assert A.admit(env, ["write_file"], OWNERS).reason == A.NO_AUTHORITY
    env = A.bind(a, ("ok", object()), OWNERS)
    assert env.authority == A.UNCAPTURABLE


def test_bind_accepts_a_surface_capture():
    from hermes_token_router.surface import Capture

    tools = [{"type": "function", "function": {"name": n}} for n in CAPTURE]
    cap = Capture(tools=tools, valid_tool_names=set(CAPTURE), names=CAPTURE, owners=OWNERS)
    env = A.bind(A.parse_admission(policy(["kanban"])), cap, cap.owners)
    assert env.names == CAPTURE and env.prune_allowed


# -- reason codes ------------------------------------------------------------------------
def test_reason_codes_are_recoverys():
    for code in ("READY", "ALREADY_LOADED", "NO_AUTHORITY", "NO_AUTHORITY_INVALID_POLICY", "DENIED_PROTECTED"):
        assert getattr(A, code) == getattr(recovery, code)


def test_ready_mixed_and_fully_denied():
    env = A.bind(A.parse_admission(policy(["kanban", "cronjob"])), CAPTURE, OWNERS)
    ready = A.admit(env, ["write_file", "kanban_show"], OWNERS)
    assert ready.reason == A.READY and ready.denied == ()
    mixed = A.admit(env, ["write_file", "kanban_list"], OWNERS)
    assert mixed.reason == A.READY and mixed.mixed
    assert mixed.allowed == ("write_file",) and mixed.denied == ("kanban_list",)
    assert mixed.denied_toolsets == ("kanban",)
    full = A.admit(env, ["kanban_list", "kanban_list"], OWNERS)
    assert full.reason == A.DENIED_PROTECTED and full.changes_nothing and full.denied == ("kanban_list",)


def test_unknown_owner_outside_snapshot_is_fail_closed_only_when_something_is_protected():
    env = A.bind(A.parse_admission(policy(["kanban"])), CAPTURE, OWNERS)
    assert A.admit(env, ["mystery"], lambda n: 1 / 0).denied == ("mystery",)
    env = A.bind(A.parse_admission(), CAPTURE, OWNERS)
    assert A.admit(env, ["mystery"], lambda n: 1 / 0).allowed == ("mystery",)


def test_no_authority_keeps_surface_denies_protected_allows_ordinary():
    env = A.bind(A.parse_admission(policy(["kanban"], ["terminal"])), CAPTURE, OWNERS, provenance=False)
    assert env.authority == A.NO_AUTHORITY_MODE and not env.prune_allowed and env.may_expand
    res = A.admit(env, ["write_file", "kanban_show", "kanban_list", "terminal"], OWNERS)
    assert res.reason == A.NO_AUTHORITY
    assert res.allowed == ("write_file",)
    assert res.denied == ("kanban_show", "kanban_list", "terminal")


def test_annotate_folds_the_result_into_every_outcome():
    env = A.bind(A.parse_admission(policy(["kanban"])), CAPTURE, OWNERS)
    base = {"reason": "READY", "added": ["write_file"], "toolsets": ["file"], "denied": [], "request_reason": ""}
    mixed = A.annotate(base, A.admit(env, ["write_file", "kanban_list"], OWNERS), ["write_file"])
    assert mixed["reason"] == A.READY and mixed["denied"] == ["kanban_list"] and mixed["added"] == ["write_file"]
    assert base["denied"] == []  # a new dict
    full = A.annotate({**base, "reason": "UNKNOWN_TOOLSET", "added": []},
                      A.admit(env, ["kanban_list"], OWNERS), [])
    assert full["reason"] == A.DENIED_PROTECTED and full["added"] == []
    already = A.annotate({**base, "reason": A.ALREADY_LOADED, "added": []},
                         A.admit(env, ["kanban_show"], OWNERS), [])
    assert already["reason"] == A.ALREADY_LOADED
    inv = A.bind(A.parse_admission(True), CAPTURE, never_called)
    bad = A.annotate(base, A.admit(inv, ["write_file"]), ["write_file"])
    assert bad["reason"] == A.NO_AUTHORITY_INVALID_POLICY and bad["added"] == []
    na = A.bind(A.parse_admission(), CAPTURE, OWNERS, provenance=False)
    assert A.annotate(base, A.admit(na, ["write_file"], OWNERS), ["write_file"])["reason"] == A.NO_AUTHORITY


def test_clamp_removes_protected_outside_the_ceiling_and_adds_the_floor():
    env = A.bind(A.parse_admission(policy(["kanban"], ["kanban_complete"])), CAPTURE, OWNERS)
    keep = A.clamp(env, {"read_file", "kanban_list"}, OWNERS)
    assert keep == {"read_file", "kanban_complete"}


# -- contamination marker ------------------------------------------------------------------
def test_contamination_marker_is_recorded_once_and_immutable():
    m1 = A.mark_contaminated(None, "s", ["write_file"])
    m2 = A.mark_contaminated(m1, "s", ["terminal"])
    assert m2 is m1 and m1.first_names == ("write_file",)
    assert A.may_capture(None) and not A.may_capture(m1)
    with pytest.raises(Exception):
        m1.first_names = ()


# -- one admission per agent and session ---------------------------------------------------
class Holder:
    def __init__(self):
        self.lock = threading.RLock()


def test_bind_once_reuses_by_identity_and_unbind_clears():
    h = Holder()
    calls = []

    def build():
        calls.append(1)
        return A.bind(A.parse_admission(policy(["kanban"])), CAPTURE, OWNERS)

    e1 = A.bind_once(h, build)
    e2 = A.bind_once(h, build)
    assert e1 is e2 and len(calls) == 1
    A.unbind(h)
    e3 = A.bind_once(h, build)
    assert e3 is not e1 and len(calls) == 2


def test_bind_once_is_race_free():
    h = Holder()
    results = []
    barrier = threading.Barrier(8)

    def worker():
        barrier.wait()
        results.append(A.bind_once(h, lambda: A.bind(A.parse_admission(), CAPTURE, OWNERS)))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is results[0] for r in results)


def test_bind_once_without_a_lock_attribute():
    class Bare:
        pass

    b = Bare()
    e = A.bind_once(b, lambda: A.bind(A.parse_admission(), CAPTURE, OWNERS))
    assert A.bind_once(b, lambda: None) is e


# -- all or nothing --------------------------------------------------------------------------
class Target:
    fail_on = None

    def __setattr__(self, key, value):
        if key == type(self).fail_on:  # fails once, after a partial write
            type(self).fail_on = None
            object.__setattr__(self, key, "HALF-WRITTEN")
            raise RuntimeError(f"setter for {key} failed")
        object.__setattr__(self, key, value)


def test_all_or_nothing_rolls_back_exactly_when_a_setter_fails_midway():
    agent, state = Target(), Target()
    tools, valid = [{"a": 1}], {"a"}
    agent.tools, agent.valid_tool_names = tools, valid
    state.keep, state.revision, state.retry = frozenset({"a"}), 7, None
    new_tools = [{"a": 1}, {"b": 2}]
    Target.fail_on = "revision"
    try:
        with pytest.raises(RuntimeError, match="setter for revision failed"):
            A.apply_all_or_nothing([(agent, "tools", new_tools), (agent, "valid_tool_names", {"a", "b"}),
                                    (state, "keep", frozenset({"a", "b"})), (state, "revision", 8),
                                    (state, "retry", "marker"), (state, "fresh", 1)])
    finally:
        Target.fail_on = None
    assert agent.tools is tools and agent.valid_tool_names is valid
    assert state.keep == frozenset({"a"}) and state.revision == 7 and state.retry is None
    assert not hasattr(state, "fresh")


def test_all_or_nothing_deletes_attributes_that_did_not_exist():
    t = Target()
    Target.fail_on = "b"
    try:
        with pytest.raises(RuntimeError):
            A.apply_all_or_nothing([(t, "a", 1), (t, "b", 2)])
    finally:
        Target.fail_on = None
    assert not hasattr(t, "a") and not hasattr(t, "b")


def test_all_or_nothing_validates_before_any_setter():
    t = Target()
    t.a = 0
    with pytest.raises(ValueError, match="nope"):
        A.apply_all_or_nothing([(t, "a", 1)], validate=lambda: "nope")
    assert t.a == 0
    A.apply_all_or_nothing([(t, "a", 1)], validate=lambda: None, lock=threading.Lock())
    assert t.a == 1


def test_all_or_nothing_reports_a_failed_rollback():
    class Sticky:
        armed = False

        def __setattr__(self, key, value):
            if Sticky.armed and key == "a" and value == 0:
                raise OSError("cannot roll back")
            if key == "b":
                Sticky.armed = True
                raise RuntimeError("b failed")
            object.__setattr__(self, key, value)

    s = Sticky()
    s.a = 0
    with pytest.raises(A.RollbackFailed):
        A.apply_all_or_nothing([(s, "a", 1), (s, "b", 2)])


# -- candidate validation ----------------------------------------------------------------------
def test_check_candidate():
    env = A.bind(A.parse_admission(policy(["kanban"], ["kanban_complete"])), CAPTURE, OWNERS)
    ok = ("read_file", "kanban_complete", "tool_call")
    assert A.check_candidate(env, ok) is None
    assert A.check_candidate(env, ok + ("request_toolset",), extra={"request_toolset"}) is None
    assert "not in the admitted surface" in A.check_candidate(env, ok + ("kanban_list",))
    assert "order" in A.check_candidate(env, ("kanban_complete", "read_file"))
    assert "pinned" in A.check_candidate(env, ("read_file",))
    assert "duplicate" in A.check_candidate(env, ("read_file", "read_file", "kanban_complete"))
    assert "shrink" in A.check_candidate(env, ok, previous=("read_file", "terminal"))
    assert A.check_candidate(env, ok, previous=("read_file",)) is None


def test_installed_exactly_is_identity():
    tools = [1]
    assert A.installed_exactly(tools, tools)
    assert not A.installed_exactly(tools, [1])
    assert not A.installed_exactly(None, None)


# -- failed restores -------------------------------------------------------------------------
def test_quarantine_step_by_identity():
    cap, committed, other = [1, 2], [1], [1]
    assert A.quarantine_step(committed, committed, cap) == A.RESTORE
    assert A.quarantine_step(cap, committed, cap) == A.RELEASED
    assert A.quarantine_step(other, committed, cap) == A.LEAVE  # equal but not ours
    assert A.quarantine_step(None, None, None) == A.LEAVE


def test_warn_once_per_session():
    w = A.WarnOnce()
    assert w.first("s1") and not w.first("s1") and w.first("s2")


# -- the adapter's one call and the per-agent slot ----------------------------------------------
class FakeAgent:
    def __init__(self, names, value=A.MISSING):
        self.tools = [{"type": "function", "function": {"name": n}} for n in names]
        if value is not A.MISSING:
            self._hermes_token_router_admission = value


def test_establish_valid_policy_looks_up_once_per_name_and_predicate_once():
    agent = FakeAgent(CAPTURE, policy(["kanban"]))
    seen, predicate = [], []

    def owner_of(n):
        seen.append(n)
        return OWNERS[n]

    def reports():
        predicate.append(1)
        return True

    env = A.establish({}, agent, CAPTURE, owner_of, session_id="s", task_env="t1",
                      dispatcher_reports=reports, direct=True)
    assert env.worker == A.WORKER and env.authority == A.CAPTURED and env.prune_allowed
    assert seen == list(CAPTURE) and predicate == [1]
    assert set(env.pins) >= {"kanban_complete", "kanban_block", "kanban_heartbeat"}


def test_establish_invalid_policy_makes_no_lookup_at_all():
    agent = FakeAgent(CAPTURE, None)

    def boom():
        raise AssertionError("predicate must not run")

    env = A.establish({}, agent, CAPTURE, never_called, session_id="s", task_env="t1",
                      dispatcher_reports=boom, direct=True)
    assert env.authority == A.INVALID_MODE and env.names == CAPTURE


def test_establish_predicate_error_is_uncertain_and_non_direct_never_asks():
    env = A.establish({}, FakeAgent(CAPTURE), CAPTURE, OWNERS.get, session_id="s", task_env="t1",
                      dispatcher_reports=lambda: 1 / 0, direct=True)
    assert env.worker == A.UNCERTAIN and not env.prune_allowed
    env = A.establish({}, FakeAgent(CAPTURE), CAPTURE, OWNERS.get, session_id="s", task_env="t1",
                      dispatcher_reports=never_called, direct=False)
    assert env.worker == A.NOT_WORKER and env.prune_allowed


def test_establish_uncapturable_and_hook_channel():
    env = A.establish({A.HOOK_KEYWORD: policy(["kanban"])}, FakeAgent(CAPTURE), None, never_called,
                      session_id="s", task_env=None, dispatcher_reports=never_called, direct=True)
    assert env.authority == A.UNCAPTURABLE and env.protected_toolsets == {"kanban"}


def test_agent_slot_identity_quarantine_and_release():
    agent = FakeAgent(CAPTURE)
    builds = []

    def build(sid):
        def f():
            builds.append(sid)
            return A.bind(A.parse_admission(policy(["kanban"])), CAPTURE, OWNERS, session_id=sid)
        return f

    e1, q = A.envelope_for(agent, "s1", build("s1"))
    assert not q and A.envelope_for(agent, "s1", build("s1")) == (e1, False) and builds == ["s1"]
    # failed restore: the slot stays; a reuse for s2 gets the old envelope, quarantined
    A.mark_restore(agent, "s1", ok=False)
    e2, q = A.envelope_for(agent, "s2", build("s2"))
    assert e2 is e1 and q and builds == ["s1"]
    # the successful retry releases it; s2 then binds its own envelope
    A.mark_restore(agent, "s1", ok=True)
    e3, q = A.envelope_for(agent, "s2", build("s2"))
    assert e3 is not e1 and not q and e3.session_id == "s2"


def test_agent_slot_successful_session_end_clears_and_contamination_is_kept():
    agent = FakeAgent(CAPTURE)
    env, _ = A.envelope_for(agent, "s1", lambda: A.bind(A.parse_admission(), CAPTURE, OWNERS,
                                                           session_id="s1", provenance=False))
    m1 = A.record_contamination(agent, "s1", ["write_file"])
    assert A.record_contamination(agent, "s1", ["terminal"]) is m1
    assert A.slot_of(agent).contamination is m1 and not A.may_capture(m1)
    A.mark_restore(agent, "s1", ok=True)
    assert A.slot_of(agent) is None


def test_agent_without_attributes_is_installed_only_and_not_attached():
    class Slotted:
        __slots__ = ("tools",)

    agent = Slotted()
    assert not A.can_attach(agent)
    env, q = A.envelope_for(agent, "s", lambda: A.bind(A.parse_admission(), CAPTURE, OWNERS,
                                                         attachable=A.can_attach(agent)))
    assert env.authority == A.INSTALLED_ONLY and not q and A.slot_of(agent) is None
