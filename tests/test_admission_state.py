"""What the router remembers per agent (``admission_state``): the bound envelope, quarantine
after a failed restore, and the contamination of a surface appended to without host
authority (no Hermes needed)."""

from __future__ import annotations

import pytest

from hermes_token_router import admission as A
from hermes_token_router import admission_policy as P
from hermes_token_router import admission_state as S
from hermes_token_router.failopen import WarnOnce

OWNERS = {"read_file": "file", "write_file": "file", "terminal": "terminal", "kanban_show": "kanban"}
CAPTURE = ("read_file", "kanban_show", "terminal")


def policy(protected=(), pins=()):
    return {"schema_version": 1, "protected_toolsets": list(protected), "pinned_tool_names": list(pins)}


class FakeAgent:
    def __init__(self, names):
        self.tools = [{"type": "function", "function": {"name": n}} for n in names]


def test_quarantine_step_by_identity():
    cap, committed, other = [1, 2], [1], [1]
    assert S.quarantine_step(committed, committed, cap) == S.RESTORE
    assert S.quarantine_step(cap, committed, cap) == S.RELEASED
    assert S.quarantine_step(other, committed, cap) == S.LEAVE  # equal but not ours
    assert S.quarantine_step(None, None, None) == S.LEAVE


def test_warn_once_per_session():
    w = WarnOnce()
    assert w.first("s1") and not w.first("s1") and w.first("s2")




def test_agent_slot_identity_quarantine_and_release():
    agent = FakeAgent(CAPTURE)
    builds = []

    def build(sid):
        def f():
            builds.append(sid)
            return A.bind(P.parse_admission(policy(["kanban"])), CAPTURE, OWNERS, session_id=sid)
        return f

    e1, q = S.envelope_for(agent, "s1", build("s1"))
    assert not q and S.envelope_for(agent, "s1", build("s1")) == (e1, False) and builds == ["s1"]
    # failed restore: the slot stays; a reuse for s2 gets the old envelope, quarantined
    S.mark_restore(agent, "s1", ok=False)
    e2, q = S.envelope_for(agent, "s2", build("s2"))
    assert e2 is e1 and q and builds == ["s1"]
    # the successful retry releases it; s2 then binds its own envelope
    S.mark_restore(agent, "s1", ok=True)
    e3, q = S.envelope_for(agent, "s2", build("s2"))
    assert e3 is not e1 and not q and e3.session_id == "s2"


def test_agent_slot_successful_session_end_clears_and_contamination_is_kept():
    agent = FakeAgent(CAPTURE)
    env, _ = S.envelope_for(agent, "s1", lambda: A.bind(P.parse_admission(), CAPTURE, OWNERS,
                                                           session_id="s1", provenance=False))
    taint = S.record_contamination(agent, "s1", ["write_file"])
    marker = S.slot_of(agent).contamination
    assert S.record_contamination(agent, "s1", ["terminal"]) is taint
    assert S.slot_of(agent).contamination is marker and marker.first_names == ("write_file",)
    with pytest.raises(Exception):
        marker.first_names = ()
    S.mark_restore(agent, "s1", ok=True)
    assert S.slot_of(agent) is None
    assert vars(agent)[S.TAINT_ATTR] is taint and taint.marker is marker  # outlives the slot


def test_agent_without_attributes_is_installed_only_and_not_attached():
    class Slotted:
        __slots__ = ("tools",)

    agent = Slotted()
    assert not S.can_attach(agent)
    env, q = S.envelope_for(agent, "s", lambda: A.bind(P.parse_admission(), CAPTURE, OWNERS,
                                                         attachable=S.can_attach(agent)))
    assert env.authority == A.INSTALLED_ONLY and not q and S.slot_of(agent) is None


def test_an_unowned_append_is_never_captured_again_while_the_agent_shows_it():
    """The marker outlives the session: a later session of the same agent has no provenance
    while the agent still shows the appended surface, and regains it after a host rebuild."""
    agent = FakeAgent(CAPTURE)
    S.envelope_for(agent, "s1", lambda: A.bind(P.parse_admission(), CAPTURE, OWNERS, session_id="s1",
                                               provenance=False))
    assert S.has_provenance(agent, "s2", [])
    taint = S.record_contamination(agent, "s1", ["write_file"])
    taint.surface = agent.tools = agent.tools + [{"type": "function", "function": {"name": "write_file"}}]
    S.mark_restore(agent, "s1", ok=True)
    assert S.carries_unowned_append(agent) and not S.has_provenance(agent, "s2", [])
    agent.tools = [dict(t) for t in agent.tools]  # the host rebuilt the surface: its own again
    assert not S.carries_unowned_append(agent) and S.has_provenance(agent, "s2", [])
    assert not S.has_provenance(agent, "s2", [agent.tools])  # another live session's narrowed list
