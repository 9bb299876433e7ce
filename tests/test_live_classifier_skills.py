"""The optional model classifier and the skill router, through our plugin in the real
Hermes 0.19.0 (the classifier talks to the same local stub as the agent)."""

from __future__ import annotations

import json

from hermes_token_router.devtools.stub_llm import Reply

VAGUE = "can you look at this"  # the rules abstain (vague), so the classifier decides


def test_valid_classifier_answer_narrows_real_session(stub, router_config, agent_factory):
    router_config(enabled=True, classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                                            "model": "tiny-router", "api_key_env": None})
    stub.script(Reply(content=json.dumps({"toolsets": ["file"], "intent": "file_ops", "confidence": 0.97})),
                Reply(content="ok"))
    agent = agent_factory()
    full = len(agent.tools)
    result = agent.run_conversation(VAGUE)
    reqs = stub.chat_requests()
    assert result.get("completed", True)
    assert reqs[0].body["model"] == "tiny-router" and not reqs[0].body.get("stream")
    assert not reqs[0].body.get("tools")
    names = set(reqs[1].tool_names)
    assert {"read_file", "write_file", "request_toolset"} <= names and len(names) < full / 2


def test_failing_classifier_keeps_full_surface_and_turn_completes(stub, router_config, agent_factory):
    router_config(enabled=True, classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                                            "model": "tiny-router", "api_key_env": None})
    stub.script(Reply(content="I think you want files."), Reply(content="ok"))
    agent = agent_factory()
    full = [t["function"]["name"] for t in agent.tools]
    result = agent.run_conversation(VAGUE)
    assert result.get("final_response") == "ok"
    assert stub.chat_requests()[1].tool_names == full


def test_classifier_past_its_deadline_leaves_the_turn_to_go_on_with_the_full_surface(
        stub, router_config, agent_factory, runtime):
    """The classifier's reply is held until the agent's own request has arrived: the turn
    can only get there if the router walked away from the classifier at its deadline."""
    import threading

    router_config(enabled=True, router_hard_timeout_ms=300,
                  classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                              "model": "tiny-router", "api_key_env": None})
    agent_asked = threading.Event()

    def responder(body):
        if body.get("model") == "tiny-router":  # would narrow to files, had it been in time
            agent_asked.wait(10)
            return Reply(content=json.dumps({"toolsets": ["file"], "intent": "file_ops", "confidence": 0.97}))
        agent_asked.set()
        return Reply(content="ok")

    stub.responder = responder
    try:
        agent = agent_factory()
        full = [t["function"]["name"] for t in agent.tools]
        result = agent.run_conversation(VAGUE)
    finally:
        agent_asked.set()
        stub.responder = None
    assert result.get("final_response") == "ok"
    classifier_req, turn_req = stub.chat_requests()[:2]
    assert classifier_req.body["model"] == "tiny-router"
    assert turn_req.tool_names == full
    assert runtime.states.get(agent.session_id).decision.reason == "classifier:timeout"


def write_skill(home, name: str, frontmatter: str, body: str) -> None:
    skill_dir = home / "skills" / "ops" / name
    skill_dir.mkdir(parents=True, exist_ok=True)
    (skill_dir / "SKILL.md").write_text(f"---\nname: {name}\n{frontmatter}---\n{body}")


def nickname_skills(router_config, phrase: str, name: str) -> None:
    router_config(enabled=True, skills={"enabled": True, "nicknames": {phrase: name}, "backend": "none"})


def test_skill_router_injects_disabled_skill_into_user_turn(stub, router_config, agent_factory, hermes_home):
    from hermes_cli.config import load_config, save_config

    write_skill(hermes_home, "game-server", "description: Restart and debug the Minecraft game server.\n",
                "# Game server runbook\nUNIQUE-MARKER-4242: check the server log first.\n")
    cfg = load_config()
    before = json.dumps(cfg.get("skills", {}))
    cfg.setdefault("skills", {})["disabled"] = ["game-server"]
    save_config(cfg)
    try:
        nickname_skills(router_config, "the game server", "game-server")
        agent = agent_factory()
        agent.run_conversation("the game server keeps crashing, what now?")
        user = stub.chat_requests()[0].body["messages"][-1]
        assert "UNIQUE-MARKER-4242" in json.dumps(user)
        stub.clear()
        agent_factory().run_conversation("what is the capital of France?")
        assert "UNIQUE-MARKER-4242" not in json.dumps(stub.chat_requests()[0].body["messages"])
    finally:
        cfg = load_config()
        cfg["skills"] = json.loads(before)
        save_config(cfg)


def test_injected_skill_pulls_its_required_toolsets_into_the_surface(stub, router_config, agent_factory, hermes_home):
    write_skill(hermes_home, "deploy-runbook",
                "description: Deploy the service.\nmetadata:\n  hermes:\n    requires_toolsets: [terminal]\n",
                "# Deploy\nRun make deploy.\n")
    nickname_skills(router_config, "the deploy runbook", "deploy-runbook")
    agent_factory().run_conversation("read ./notes.md and summarise it, then follow the deploy runbook")
    names = set(stub.chat_requests()[0].tool_names)
    assert {"read_file", "terminal", "request_toolset"} <= names  # terminal came from the skill
    assert "delegate_task" not in names
