"""Unit tests for the pure admission contract: parsing, binding, admitting, clamping and
candidate checks (no Hermes needed)."""

from __future__ import annotations

import collections

import pytest

from hermes_token_router import admission as A
from hermes_token_router import admission_policy as P

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
    a = P.parse_admission()
    assert a.status == P.EMPTY and a.is_valid and a.protected_toolsets == () and a.pinned_tool_names == ()
    assert P.parse_admission(P.MISSING, P.MISSING) is a


@pytest.mark.parametrize("channel", ["hook", "agent"])
def test_one_channel_valid(channel):
    p = policy(["kanban", "cronjob"], ["kanban_complete"])
    a = P.parse_admission(**({"hook_value": p} if channel == "hook" else {"agent_value": p}))
    assert a.status == P.VALID
    assert a.protected_toolsets == ("kanban", "cronjob")
    assert a.pinned_tool_names == ("kanban_complete",)


def test_both_channels_agreeing_is_valid_and_tuples_are_accepted():
    a = P.parse_admission(policy(["kanban"], ["kanban_complete"]),
                          {"schema_version": 1, "protected_toolsets": ("kanban",), "pinned_tool_names": ("kanban_complete",)})
    assert a.status == P.VALID and a.protected_toolsets == ("kanban",)


def test_empty_lists_are_a_valid_policy():
    a = P.parse_admission(policy())
    assert a.status == P.VALID and a.protected_toolsets == () and a.pinned_tool_names == ()


def test_identifiers_are_never_normalised():
    a = P.parse_admission(policy(["Kanban", "web search"], ["Kanban_Complete"]))
    assert a.protected_toolsets == ("Kanban", "web search")
    env = A.bind(a, CAPTURE, OWNERS)
    assert env.ceiling == ()  # "Kanban" is not "kanban"
    assert A.admit(env, ["kanban_list"], OWNERS).reason == A.READY


def test_parse_snapshots_the_input():
    prot = ["kanban"]
    raw = policy(prot)
    raw["protected_toolsets"] = prot
    a = P.parse_admission(raw)
    prot.append("cronjob")
    raw["pinned_tool_names"] = ["x"]
    assert a.protected_toolsets == ("kanban",) and a.pinned_tool_names == ()
    with pytest.raises(Exception):
        a.status = P.INVALID  # frozen


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
    a = P.parse_admission(**({"hook_value": value} if channel == "hook" else {"agent_value": value}))
    assert a.status == P.INVALID, name
    assert a.error and not a.is_valid
    assert a.protected_toolsets == () and a.pinned_tool_names == ()


@pytest.mark.parametrize("other", [policy(["cronjob"]), policy(["kanban"], ["kanban_complete"]),
                                   policy(["kanban", "cronjob"]), policy()])
def test_disagreeing_channels_are_invalid(other):
    a = P.parse_admission(policy(["kanban"]), other)
    assert a.status == P.INVALID and "disagree" in a.error


def test_order_difference_is_disagreement():
    a = P.parse_admission(policy(["kanban", "cronjob"]), policy(["cronjob", "kanban"]))
    assert a.status == P.INVALID


@pytest.mark.parametrize("valid_side", ["hook", "agent"])
def test_one_invalid_channel_poisons_a_valid_one(valid_side):
    good, bad = policy(["kanban"]), None
    a = P.parse_admission(good, bad) if valid_side == "hook" else P.parse_admission(bad, good)
    assert a.status == P.INVALID


# -- reading the channels ----------------------------------------------------------------
class Agent:
    pass


def test_read_channels_distinguishes_missing_from_none():
    agent = Agent()
    assert P.read_channels({}, agent) == (P.MISSING, P.MISSING)
    assert P.read_channels(None, None) == (P.MISSING, P.MISSING)
    agent._hermes_token_router_admission = None
    hook, ag = P.read_channels({P.HOOK_KEYWORD: None}, agent)
    assert hook is None and ag is None
    assert P.parse_admission(hook, ag).status == P.INVALID


def test_only_the_two_trusted_channels_are_read():
    agent = Agent()
    agent.hermes_token_router_admission = policy(["kanban"])  # wrong attribute name
    hook, ag = P.read_channels({"_hermes_token_router_admission": policy(["kanban"]),
                                "admission": policy(["kanban"])}, agent)
    assert P.parse_admission(hook, ag).status == P.EMPTY


def test_unreadable_agent_attribute_is_invalid_not_missing():
    class Raising:
        @property
        def _hermes_token_router_admission(self):
            raise RuntimeError("boom")

    hook, ag = P.read_channels({}, Raising())
    assert ag is not P.MISSING
    assert P.parse_admission(hook, ag).status == P.INVALID


# -- worker identity ---------------------------------------------------------------------
@pytest.mark.parametrize("env,reports,direct,expected", [
    (None, True, True, P.NOT_WORKER),
    ("", True, True, P.NOT_WORKER),
    ("t_1", True, True, P.WORKER),
    ("t_1", False, True, P.NOT_WORKER),  # inherited, not dispatcher-owned
    ("t_1", None, True, P.UNCERTAIN),  # predicate failed
    ("   ", True, True, P.UNCERTAIN),
    ("t_1", True, False, P.NOT_WORKER),  # delegated child / specialist / cron
    ("t_1", None, False, P.NOT_WORKER),
])
def test_worker_status(env, reports, direct, expected):
    assert P.worker_status(env, reports, direct=direct) == expected


# -- owner snapshot ----------------------------------------------------------------------
def test_snapshot_owners_is_ordered_and_immutable():
    snap = P.snapshot_owners(CAPTURE, OWNERS.get)
    assert isinstance(snap, tuple) and tuple(n for n, _ in snap) == CAPTURE


@pytest.mark.parametrize("names,lookup", [
    (("a", "a"), lambda n: "x"),  # duplicate
    (("a", 3), lambda n: "x"),  # non-string name
    (("a",), lambda n: 5),  # non-string owner
    (("a",), lambda n: (_ for _ in ()).throw(RuntimeError("registry down"))),
])
def test_snapshot_owners_uncertain(names, lookup):
    assert P.snapshot_owners(names, lookup) is None


# -- binding -----------------------------------------------------------------------------
def test_ceiling_is_captured_protected_in_captured_order_and_pins_are_the_present_subset():
    a = P.parse_admission(policy(["kanban"], ["kanban_complete", "kanban_missing"]))
    env = A.bind(a, CAPTURE, OWNERS, P.NOT_WORKER, session_id="s1")
    assert env.authority == A.CAPTURED and env.prune_allowed
    assert env.ceiling == ("kanban_show", "kanban_complete", "kanban_block", "kanban_heartbeat")
    assert env.pins == ("kanban_complete",)
    assert A.floor(env) == frozenset({"kanban_complete"})
    assert env.names == CAPTURE and env.session_id == "s1"
    # the absent pin is never manufactured, and stays denied
    assert A.admit(env, ["kanban_missing"], {"kanban_missing": "kanban"}).denied == ("kanban_missing",)


def test_empty_policy_has_no_ceiling_and_no_floor():
    env = A.bind(P.parse_admission(), CAPTURE, OWNERS)
    assert env.ceiling == () and env.pins == () and env.prune_allowed
    res = A.admit(env, ["kanban_list", "write_file"], OWNERS)
    assert res.allowed == ("kanban_list", "write_file") and res.reason == A.READY


def test_worker_pins_every_captured_worker_toolset_definition():
    env = A.bind(P.parse_admission(), CAPTURE, OWNERS, P.WORKER)
    assert env.pins == ("kanban_show", "kanban_complete", "kanban_block", "kanban_heartbeat")
    assert env.prune_allowed and env.ceiling == env.pins  # every pin is protected


def test_worker_toolset_is_a_parameter_not_a_tool_list():
    env = A.bind(P.parse_admission(), CAPTURE, OWNERS, P.WORKER, worker_toolset="terminal")
    assert env.pins == ("terminal",)


def test_orchestrator_uses_only_its_admitted_protected_subset():
    a = P.parse_admission(policy(["kanban"]))
    env = A.bind(a, CAPTURE, OWNERS, P.NOT_WORKER)
    assert env.pins == ()  # nothing pinned for a direct orchestrator
    res = A.admit(env, ["kanban_show", "kanban_list"], OWNERS)
    assert res.allowed == ("kanban_show",) and res.denied == ("kanban_list",)


@pytest.mark.parametrize("owners", [None, {"read_file": "file"}, lambda n: 1 / 0])
def test_owner_uncertainty_means_no_pruning(owners):
    env = A.bind(P.parse_admission(policy(["kanban"])), CAPTURE, owners, P.WORKER)
    assert not env.prune_allowed and not A.may_prune(env)
    assert env.ceiling == CAPTURE  # everything visible stays


def test_uncertain_worker_means_no_pruning():
    env = A.bind(P.parse_admission(), CAPTURE, OWNERS, P.UNCERTAIN)
    assert env.authority == A.CAPTURED and not env.prune_allowed and "worker" in env.why_full


def test_duplicate_names_in_the_capture_mean_no_pruning():
    env = A.bind(P.parse_admission(), ("read_file", "read_file"), {"read_file": "file"})
    assert not env.prune_allowed


def test_explicit_pin_of_an_owner_unmapped_definition_protects_that_exact_name():
    a = P.parse_admission(policy(["kanban"], ["memory_provider_x"]))
    env = A.bind(a, CAPTURE, OWNERS)
    assert "memory_provider_x" in env.pins and "memory_provider_x" in env.ceiling
    # unmapped siblings that are absent stay denied when the policy protects anything
    res = A.admit(env, ["memory_provider_y"], {})
    assert res.denied == ("memory_provider_y",) and res.reason == A.DENIED_PROTECTED


def test_invalid_policy_does_no_owner_lookup_and_prunes_nothing():
    env = A.bind(P.parse_admission(None), CAPTURE, never_called)
    assert env.authority == A.INVALID_MODE and not env.prune_allowed
    assert env.names == CAPTURE  # keeps every field
    res = A.admit(env, ["write_file", "kanban_list"], never_called)
    assert res.reason == A.NO_AUTHORITY_INVALID_POLICY
    assert res.allowed == () and res.denied == ("write_file", "kanban_list")


def test_installed_only_and_uncapturable_allow_no_expansion():
    a = P.parse_admission()
    env = A.bind(a, CAPTURE, OWNERS, attachable=False)
    assert env.authority == A.INSTALLED_ONLY
    assert A.admit(env, ["write_file"], OWNERS).allowed == ()
    env = A.bind(a, None, OWNERS)
    assert env.authority == A.UNCAPTURABLE
    assert A.admit(env, ["write_file"], OWNERS).allowed == ()
    assert A.admit(env, ["write_file"], OWNERS).reason == A.NO_AUTHORITY
    env = A.bind(a, ("ok", object()), OWNERS)
    assert env.authority == A.UNCAPTURABLE


def test_bind_accepts_a_surface_capture():
    from hermes_token_router.surface import Capture

    tools = [{"type": "function", "function": {"name": n}} for n in CAPTURE]
    cap = Capture(tools=tools, valid_tool_names=set(CAPTURE), names=CAPTURE, owners=OWNERS)
    env = A.bind(P.parse_admission(policy(["kanban"])), cap, cap.owners)
    assert env.names == CAPTURE and env.prune_allowed


# -- reason codes ------------------------------------------------------------------------
def test_ready_mixed_and_fully_denied():
    env = A.bind(P.parse_admission(policy(["kanban", "cronjob"])), CAPTURE, OWNERS)
    ready = A.admit(env, ["write_file", "kanban_show"], OWNERS)
    assert ready.reason == A.READY and ready.denied == ()
    mixed = A.admit(env, ["write_file", "kanban_list"], OWNERS)
    assert mixed.reason == A.READY
    assert mixed.allowed == ("write_file",) and mixed.denied == ("kanban_list",)
    assert mixed.denied_toolsets == ("kanban",)
    full = A.admit(env, ["kanban_list", "kanban_list"], OWNERS)
    assert full.reason == A.DENIED_PROTECTED and full.allowed == () and full.denied == ("kanban_list",)


def test_unknown_owner_outside_snapshot_is_fail_closed_only_when_something_is_protected():
    env = A.bind(P.parse_admission(policy(["kanban"])), CAPTURE, OWNERS)
    assert A.admit(env, ["mystery"], lambda n: 1 / 0).denied == ("mystery",)
    env = A.bind(P.parse_admission(), CAPTURE, OWNERS)
    assert A.admit(env, ["mystery"], lambda n: 1 / 0).allowed == ("mystery",)


def test_no_authority_keeps_surface_denies_protected_allows_ordinary():
    env = A.bind(P.parse_admission(policy(["kanban"], ["terminal"])), CAPTURE, OWNERS, provenance=False)
    assert env.authority == A.NO_AUTHORITY_MODE and not env.prune_allowed
    res = A.admit(env, ["write_file", "kanban_show", "kanban_list", "terminal"], OWNERS)
    assert res.reason == A.NO_AUTHORITY
    assert res.allowed == ("write_file",)
    assert res.denied == ("kanban_show", "kanban_list", "terminal")


def test_annotate_folds_the_result_into_every_outcome():
    env = A.bind(P.parse_admission(policy(["kanban"])), CAPTURE, OWNERS)
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
    inv = A.bind(P.parse_admission(True), CAPTURE, never_called)
    bad = A.annotate(base, A.admit(inv, ["write_file"]), ["write_file"])
    assert bad["reason"] == A.NO_AUTHORITY_INVALID_POLICY and bad["added"] == []
    na = A.bind(P.parse_admission(), CAPTURE, OWNERS, provenance=False)
    assert A.annotate(base, A.admit(na, ["write_file"], OWNERS), ["write_file"])["reason"] == A.NO_AUTHORITY


def test_clamp_removes_protected_outside_the_ceiling_and_adds_the_floor():
    env = A.bind(P.parse_admission(policy(["kanban"], ["kanban_complete"])), CAPTURE, OWNERS)
    keep = A.clamp(env, {"read_file", "kanban_list"}, OWNERS)
    assert keep == {"read_file", "kanban_complete"}


# -- candidate validation ----------------------------------------------------------------------
def test_check_candidate():
    env = A.bind(P.parse_admission(policy(["kanban"], ["kanban_complete"])), CAPTURE, OWNERS)
    ok = ("read_file", "kanban_complete", "tool_call")
    assert A.check_candidate(env, ok) is None
    assert A.check_candidate(env, ok + ("request_toolset",), extra={"request_toolset"}) is None
    assert "not in the admitted surface" in A.check_candidate(env, ok + ("kanban_list",))
    assert "order" in A.check_candidate(env, ("kanban_complete", "read_file"))
    assert "pinned" in A.check_candidate(env, ("read_file",))
    assert "duplicate" in A.check_candidate(env, ("read_file", "read_file", "kanban_complete"))
    assert "shrink" in A.check_candidate(env, ok, previous=("read_file", "terminal"))
    assert A.check_candidate(env, ok, previous=("read_file",)) is None


# -- the adapter's one call and the per-agent slot ----------------------------------------------
class FakeAgent:
    def __init__(self, names, value=P.MISSING):
        self.tools = [{"type": "function", "function": {"name": n}} for n in names]
        if value is not P.MISSING:
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
    assert env.worker == P.WORKER and env.authority == A.CAPTURED and env.prune_allowed
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
    assert env.worker == P.UNCERTAIN and not env.prune_allowed
    env = A.establish({}, FakeAgent(CAPTURE), CAPTURE, OWNERS.get, session_id="s", task_env="t1",
                      dispatcher_reports=never_called, direct=False)
    assert env.worker == P.NOT_WORKER and env.prune_allowed


def test_establish_uncapturable_and_hook_channel():
    env = A.establish({P.HOOK_KEYWORD: policy(["kanban"])}, FakeAgent(CAPTURE), None, never_called,
                      session_id="s", task_env=None, dispatcher_reports=never_called, direct=True)
    assert env.authority == A.UNCAPTURABLE and env.protected_toolsets == {"kanban"}
