"""Run in a fresh process (HERMES_HOME must be set before Hermes is imported): real Hermes
0.19.0, the fixture skills in HERMES_HOME/skills, a throwaway plugin whose pre_llm_call calls
SkillRouter, and the stub model recording what reaches the provider. Prints one JSON line."""

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "fixtures")]

from make_skills import write_fixture  # noqa: E402

from hermes_token_router.devtools import harness  # noqa: E402
from hermes_token_router.devtools.stub_llm import StubLLM  # noqa: E402

PLUGIN = '''
import sys
sys.path.insert(0, {root!r})
from hermes_token_router.skill_router.config import SkillRouterConfig
from hermes_token_router.skill_router.inject import SkillRouter

ROUTER = SkillRouter(SkillRouterConfig(enabled=True, semantic=False,
                     nicknames={{"the game server": "minecraft-server"}}), index_dir={index!r})

def _pre_llm_call(session_id="", user_message="", **kwargs):
    inj = ROUTER.context_for_turn(session_id, user_message)
    return {{"context": inj.text}} if inj else None

def register(ctx):
    ctx.register_hook("pre_llm_call", _pre_llm_call)
'''


def user_and_system(req):
    msgs = req.body["messages"]
    system = next((m["content"] for m in msgs if m["role"] == "system"), "")
    user = [m["content"] for m in msgs if m["role"] == "user"][-1]
    return (user if isinstance(user, str) else json.dumps(user)), system


def main():
    home = Path(tempfile.mkdtemp(prefix="htr-skills-live-"))
    os.environ.update(harness.offline_env())
    os.environ["HERMES_HOME"] = str(home)
    write_fixture(home / "skills")
    stub = StubLLM().start()
    harness.prepare_home(home, stub.base_url, install=False, enabled_plugins=["skilltest"],
                         hermes_extra={"skills": {"disabled": ["minecraft-server"]}})
    from hermes_token_router.skill_router.index import build_index

    build_index(home / "idx", None, backend="none")  # Hermes's own dirs; nickname-only index
    plugin = home / "plugins" / "skilltest"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: skilltest\nversion: 0.0.1\nkind: standalone\n")
    (plugin / "__init__.py").write_text(PLUGIN.format(root=str(ROOT), index=str(home / "idx")))

    from agent.model_metadata import estimate_tokens_rough

    out = {}
    agent = harness.build_agent(stub.base_url)
    agent.run_conversation("the game server keeps crashing after the update, help")
    user, system = user_and_system(stub.chat_requests()[0])
    out["match_user_has_skill"] = "Minecraft Java server" in user and "<routed-skills>" in user
    out["match_user_starts_with_message"] = user.startswith("the game server keeps crashing")
    out["disabled_skill_absent_from_index"] = "minecraft-server" not in system
    out["system_tokens_before_trim"] = estimate_tokens_rough(system)

    stub.clear()
    agent2 = harness.build_agent(stub.base_url)
    agent2.run_conversation("what is the capital of Australia?")
    user2, _ = user_and_system(stub.chat_requests()[0])
    out["nomatch_user_unchanged"] = user2 == "what is the capital of Australia?"

    from hermes_token_router.skill_router import trim

    disable, _ = trim.disabled_list(["hermes-agent", "plan"])
    trim.write_disabled(disable)
    stub.clear()
    agent3 = harness.build_agent(stub.base_url)
    agent3.run_conversation("hello")
    _, system3 = user_and_system(stub.chat_requests()[0])
    out["system_tokens_after_trim"] = estimate_tokens_rough(system3)
    out["after_trim_lists_kept"] = "hermes-agent" in system3 and "- plan" in system3 and "- docker" not in system3
    out["skills_listed_before"] = system.count("\n    - ")
    out["skills_listed_after"] = system3.count("\n    - ")
    stub.stop()
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
