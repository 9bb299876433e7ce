"""Findings 6 and 10 / what-to-build 5: what silently changes the router is shown once in the
chat reply itself (``transform_llm_output``), in a real Hermes 0.19.0 turn: an invalid
settings file (the router goes hands-off), the skill router on without an index, and, before
the profile has a settings file, where that file goes."""

from __future__ import annotations

from hermes_token_router.devtools import harness

PREFIX = "[hermes-token-router] "


def test_invalid_config_is_shown_once_in_the_reply(stub, router_config, router_config_path, agent_factory):
    # the issue's own example: a nickname without an article
    harness.write_router_config(router_config_path, {"global": {"enabled": True, "skills": {
        "enabled": True, "nicknames": {"server": "minecraft-server"}}}})
    agent = agent_factory()
    first = agent.run_conversation("read ./notes.md and summarise it")
    reply = first["final_response"]
    assert reply.startswith(PREFIX + "the router is OFF: its settings are invalid")
    assert "nickname 'server' must start with an article" in reply and "fix:" in reply
    assert reply.endswith("\n\nok")
    second = agent.run_conversation("and again", conversation_history=first["messages"])
    assert second["final_response"] == "ok"  # once, not every turn
    assert agent_factory().run_conversation("hi")["final_response"] == "ok"  # once per process


def test_missing_skill_index_is_shown_once(stub, router_config, agent_factory, hermes_home):
    index = hermes_home / "token-router" / "no-index-here"
    router_config(enabled=True, skills={"enabled": True, "index_dir": str(index)})
    agent = agent_factory()
    reply = agent.run_conversation("hello there")["final_response"]
    assert reply.startswith(PREFIX + "the skill router is on but has no usable index")
    assert f"no skill index at {index}" in reply
    # a directory install has no `hermes-token-router` script: the command given is Hermes's own
    # (test_readme_install runs `hermes -p routertest token-router ...` for real)
    assert "hermes token-router skills build" in reply and "hermes-token-router skills" not in reply
    assert agent_factory().run_conversation("hello again")["final_response"] == "ok"


def test_settings_location_is_shown_before_the_profile_has_a_file(stub, router_config_path, agent_factory):
    router_config_path.unlink()
    try:
        reply = agent_factory().run_conversation("hello")["final_response"]
    finally:
        harness.write_router_config(router_config_path, {"global": {"enabled": False}})
    assert reply.startswith(PREFIX + "loaded; routing is off for profile")
    assert str(router_config_path) in reply and "config --set enabled=true" in reply
