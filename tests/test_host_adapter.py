"""The host adapter against the real Hermes 0.19.0 objects it reads and writes."""

from __future__ import annotations

import json

from hermes_token_router import host, host_agents


def test_static_membership_widens_leaf_toolsets_but_not_platform_bundles(agent_factory):
    agent_factory()  # imports Hermes with this session's HERMES_HOME
    members = host.static_members(["browser", "hermes-yuanbao", "file"])
    assert "browser_cdp" in members["browser"]  # registered under browser-cdp, listed by browser
    assert members["hermes-yuanbao"] == ()  # a platform bundle that shares a registry name
    assert set(members["file"]) == {"read_file", "write_file", "patch", "search_files"}


def test_capture_reads_the_live_surface_and_estimates_do_not_go_stale(agent_factory):
    agent = agent_factory()
    cap = host.capture(agent)
    assert cap.tools is agent.tools and cap.names == tuple(t["function"]["name"] for t in agent.tools)
    assert cap.owners["read_file"] == "file" and cap.owners["terminal"] == "terminal"
    full = host.estimate_tokens(agent.tools)
    small = [t for t in agent.tools if t["function"]["name"] == "read_file"]
    assert 0 < host.estimate_tokens(small) < full
    small.append(cap.tools[0])  # same list object, new contents: the estimate must follow
    assert host.estimate_tokens(small) > host.estimate_tokens(small[:1])
    assert json.dumps(agent.tools) == json.dumps(cap.tools)


def test_find_agent_never_takes_the_review_fork_or_falls_through_to_its_parent(agent_factory):
    parent = agent_factory()
    fork = agent_factory(session_id=parent.session_id)
    fork._memory_write_origin = "background_review"  # what background_review.py sets

    def inside_fork_turn(agent):  # the fork's own run_conversation frame holds `agent`
        return host_agents.find_agent(agent.session_id, known=parent)

    assert inside_fork_turn(fork) == (None, "background_fork")

    def inside_parent_turn(agent):
        return host_agents.find_agent(agent.session_id)

    assert inside_parent_turn(parent) == (parent, "stack")


def test_find_agent_is_ambiguous_with_two_live_agents_on_one_stack(agent_factory):
    a = agent_factory()
    b = agent_factory(session_id=a.session_id)

    def two(agent, parent_agent):
        return host_agents.find_agent(agent.session_id)

    assert two(a, b) == (None, "ambiguous_stack")
