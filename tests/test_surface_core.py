"""The pure surface arithmetic, without Hermes: order, identity, monotonic growth."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from hermes_token_router.catalog import router_definition
from hermes_token_router.surface import Capture, grow, names_for_toolsets, select, tool_name, unprunable


def defn(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"{name} tool", "parameters": {}}}


def capture_of(owners: dict) -> Capture:
    tools = [defn(n) for n in owners]
    return Capture(tools=tools, valid_tool_names={*owners}, names=tuple(owners), owners=owners)


CAP = capture_of({"clarify": "clarify", "patch": "file", "read_file": "file", "terminal": "terminal",
                  "process": "terminal", "skill_view": "skills", "skills_list": "skills", "skill_manage": "skills",
                  "tool_search": None, "mcp_x": None, "browser_cdp": "browser-cdp"})


def test_select_keeps_captured_order_and_objects():
    keep = names_for_toolsets(CAP, ["terminal", "file"]) | unprunable(CAP, ["skill_view"])
    out = select(CAP, keep, None)
    assert [tool_name(t) for t in out] == ["patch", "read_file", "terminal", "process", "skill_view",
                                           "tool_search", "mcp_x"]
    originals = {tool_name(t): t for t in CAP.tools}
    assert all(t is originals[tool_name(t)] for t in out)


def test_unregistered_tools_are_never_pruned():
    assert {"tool_search", "mcp_x"} <= unprunable(CAP, [])


def test_static_membership_brings_tools_registered_elsewhere():
    keep = names_for_toolsets(CAP, ["browser"], {"browser": ("browser_navigate", "browser_cdp")})
    assert keep == {"browser_cdp"}  # only what the capture holds


def test_router_definition_replaces_in_place_or_is_appended():
    rd = router_definition("catalog")
    out = select(CAP, frozenset({"patch"}), rd)
    assert [tool_name(t) for t in out] == ["patch", "request_toolset"] and out[-1] is rd
    with_router = capture_of({"request_toolset": "router", "patch": "file"})
    out2 = select(with_router, frozenset({"patch"}), rd)
    assert [tool_name(t) for t in out2] == ["request_toolset", "patch"] and out2[0] is rd


def test_grow_is_monotonic_and_bounded_by_capture():
    keep, added = grow(frozenset({"patch"}), ["terminal", "not_captured", "patch"], CAP)
    assert keep == {"patch", "terminal"} and added == ("terminal",)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(list(CAP.names) + ["ghost"]), max_size=4), max_size=12))
def test_any_expansion_sequence_only_grows_and_stays_in_capture_order(batches):
    keep = unprunable(CAP, ["skill_view", "skills_list"])
    previous = select(CAP, keep, None)
    for batch in batches:
        keep, _ = grow(keep, batch, CAP)
        now = select(CAP, keep, None)
        assert {tool_name(t) for t in previous} <= {tool_name(t) for t in now}
        order = [CAP.names.index(tool_name(t)) for t in now]
        assert order == sorted(order)
        assert json.dumps(select(CAP, keep, None)) == json.dumps(now)  # deterministic bytes
        previous = now
