"""The all-or-nothing write every surface change goes through (``surface_mutation``): a
setter that fails mid-way leaves every touched attribute as the exact previous object."""

from __future__ import annotations

import threading

import pytest

from hermes_token_router.surface_mutation import RollbackFailed, apply_all_or_nothing


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
            apply_all_or_nothing([(agent, "tools", new_tools), (agent, "valid_tool_names", {"a", "b"}),
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
            apply_all_or_nothing([(t, "a", 1), (t, "b", 2)])
    finally:
        Target.fail_on = None
    assert not hasattr(t, "a") and not hasattr(t, "b")


def test_all_or_nothing_validates_before_any_setter():
    t = Target()
    t.a = 0
    with pytest.raises(ValueError, match="nope"):
        apply_all_or_nothing([(t, "a", 1)], validate=lambda: "nope")
    assert t.a == 0
    apply_all_or_nothing([(t, "a", 1)], validate=lambda: None, lock=threading.Lock)
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
    with pytest.raises(RollbackFailed):
        apply_all_or_nothing([(s, "a", 1), (s, "b", 2)])
