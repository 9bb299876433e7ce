"""Findings 3, 4, 5, 7 and 9: the command line acts on the profile the user names (as
``hermes -p`` resolves it), from the checkout or from anywhere, and tells the user what to do
next. Each command runs in a fresh process, as a user runs it, against a temporary HOME whose
``~/.hermes`` is the main profile (no plugin) and ``profiles/routertest`` the test profile
(the plugin installed, enabled and switched on)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_token_router.devtools import harness

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
CLI = [PY, "-m", "hermes_token_router"]


@pytest.fixture
def homes(tmp_path):
    """(env, main profile home, test profile home)."""
    root = tmp_path / "user" / ".hermes"
    harness.prepare_home(root, "http://127.0.0.1:9/v1", install=False, enabled_plugins=())
    profile = root / "profiles" / "routertest"
    harness.prepare_home(profile, "http://127.0.0.1:9/v1", router_config={"global": {"enabled": True}})
    env = harness.offline_env()
    for var in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_TOKEN_ROUTER_CONFIG", "HERMES_SAFE_MODE", "HERMES_PROFILE",
                "PYTHONPATH"):
        env.pop(var, None)
    env["HOME"] = str(tmp_path / "user")
    env["HERMES_HOME"] = str(root)
    return env, root, profile


def run(args, env, cwd=ROOT, timeout=240, python=None):
    cmd = [python or PY, "-m", "hermes_token_router", *args]
    return subprocess.run(cmd, env=env, cwd=str(cwd), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


# -- finding 3: the doctor inspects the profile it is given ------------------------------

def test_doctor_inspects_the_named_profile_not_the_main_one(homes):
    env, root, profile = homes
    proc = run(["doctor", "-p", "routertest", "--json"], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["profile"] == "routertest" and data["hermes_home"] == str(profile.resolve())
    assert data["plugin_dir"] == str(profile / "plugins" / harness.PLUGIN_DIRNAME)
    assert data["router_on"] is True and data["plugin_version"] == "0.3.0"

    main = run(["doctor", "--json"], env)  # no -p: the main profile, which has no plugin
    assert main.returncode == 2
    data = json.loads(main.stdout)
    assert data["profile"] == "default" and data["hermes_home"] == str(root.resolve())
    assert any("plugins install" in s and "--enable" in s for s in data["next_steps"])


def test_doctor_follows_the_sticky_active_profile_like_hermes(homes):
    env, root, profile = homes
    (root / "active_profile").write_text("routertest\n")
    proc = run(["doctor", "--json"], env)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert json.loads(proc.stdout)["hermes_home"] == str(profile.resolve())


def test_diagnostics_wrapper_takes_the_same_flags(homes):
    env, _, profile = homes
    proc = subprocess.run([PY, str(ROOT / "diagnostics.py"), "-p", "routertest", "--json"], env=env, cwd=str(ROOT),
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads(proc.stdout)["hermes_home"] == str(profile.resolve())


def test_broken_profile_gets_plain_next_steps_for_that_profile(homes):
    env, _, profile = homes
    cfg = yaml.safe_load((profile / "config.yaml").read_text())
    cfg["plugins"]["enabled"] = []
    (profile / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(["doctor", "-p", "routertest"], env)
    assert proc.returncode == 2
    out = proc.stdout
    assert "ROUTING PATH: NO" in out
    steps = out[out.index("NEXT STEPS:"):]
    assert "1. enable it: hermes -p routertest plugins enable hermes-token-router --no-allow-tool-override" in steps


def test_unknown_profile_is_named_with_how_to_create_it(homes):
    env, _, _ = homes
    proc = run(["doctor", "-p", "nosuch"], env)
    assert proc.returncode == 2 and "hermes profile create nosuch" in proc.stderr


def test_wrong_python_names_the_one_the_hermes_launcher_runs(homes, tmp_path):
    bare = Path("/usr/bin/python3")
    if not bare.is_file() or subprocess.run([str(bare), "-c", "import hermes_cli"], capture_output=True).returncode == 0:
        pytest.skip("needs a system python3 without Hermes")
    env, _, _ = homes
    launcher_dir = tmp_path / "bin"
    launcher_dir.mkdir()
    (launcher_dir / "hermes").write_text(f"#!{PY}\n# the launcher Hermes's installer writes\n")
    (launcher_dir / "hermes").chmod(0o755)
    env = {**env, "PATH": os.pathsep.join([str(launcher_dir), "/usr/bin", "/bin"])}
    proc = run(["doctor", "-p", "routertest"], env, python=str(bare))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"Hermes Agent is not importable with {bare}" in proc.stdout
    assert f"the 'hermes' launcher runs ({PY})" in proc.stdout and f"{PY} -m hermes_token_router doctor -p routertest" \
        in proc.stdout
    assert "run the doctor through Hermes: hermes -p routertest token-router doctor" in proc.stdout


# -- finding 4: the probe tests the actual install, with progress ------------------------

def test_probe_runs_on_the_profiles_own_install_with_progress(homes):
    env, _, profile = homes
    proc = run(["doctor", "-p", "routertest", "--probe", "--json"], env, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    probe = json.loads(proc.stdout)["probe"]
    assert probe["ok"] is True, probe
    assert probe["ran_on"]["plugin"] == str(profile / "plugins" / harness.PLUGIN_DIRNAME)
    assert probe["ran_on"]["config"] == str(profile / "token-router" / "config.yaml")
    assert probe["narrowed"] is True and probe["decision"]["phase"] == "routed"
    for step in ("probe [1/3]", "probe [2/3]", "probe [3/3]"):
        assert step in proc.stderr


def test_probe_on_a_profile_with_the_router_off_measures_nothing_and_says_why(homes):
    env, _, profile = homes
    harness.write_router_config(profile / "token-router" / "config.yaml", {"global": {"enabled": False}})
    proc = run(["doctor", "-p", "routertest", "--probe"], env, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "measured narrowing: none (full surface sent); the router is off for this profile" in proc.stdout
    assert "turn it on: " in proc.stdout and "hermes -p routertest token-router config --set enabled=true" in proc.stdout


def test_probe_is_skipped_without_a_routing_path(homes):
    env, root, _ = homes
    proc = run(["doctor", "--probe"], env)  # the main profile: not installed
    assert proc.returncode == 2
    out = proc.stdout
    assert "PROBE: skipped" in out and "%" not in out[out.index("ROUTING PATH: NO"):]


# -- finding 5: skills per profile ---------------------------------------------------------

def write_skill(home: Path, name: str) -> None:
    skill = home / "skills" / "ops" / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Run the {name} job.\n---\nSteps.\n")


def test_skills_build_indexes_the_profile_and_zero_skills_warns(homes):
    env, root, profile = homes
    write_skill(profile, "nightly-backup")
    proc = run(["skills", "build", "-p", "routertest", "--backend", "none"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    index = profile / "token-router" / ".skill-index"
    assert json.loads((index / "index.json").read_text())["count"] == 1
    empty = run(["skills", "build", "--backend", "none"], env)  # the main profile has no skills
    assert empty.returncode == 1
    assert "found 0 skills" in empty.stderr and "-p NAME" in empty.stderr
    assert not (root / "token-router" / ".skill-index").exists()  # nothing written


def test_skills_trim_write_changes_the_named_profile_only(homes):
    env, root, profile = homes
    write_skill(profile, "nightly-backup")
    write_skill(profile, "weekly-report")
    main_before = (root / "config.yaml").read_text()
    proc = run(["skills", "trim", "-p", "routertest", "--keep", "nightly-backup", "--write"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert yaml.safe_load((profile / "config.yaml").read_text())["skills"]["disabled"] == ["weekly-report"]
    assert (root / "config.yaml").read_text() == main_before


# -- finding 7: settings outside the plugin folder -----------------------------------------

def test_config_set_validates_before_writing(homes):
    env, _, profile = homes
    target = profile / "token-router" / "config.yaml"
    before = target.read_text()
    bad = run(["config", "-p", "routertest", "--set", "confidence_threshold=7"], env)
    assert bad.returncode == 2 and "confidence_threshold" in bad.stderr and "not written" in bad.stderr
    assert target.read_text() == before
    good = run(["config", "-p", "routertest", "--set", "skills.enabled=true", "--set", "floor_toolsets=[file]"], env)
    assert good.returncode == 0, good.stderr
    data = yaml.safe_load(target.read_text())["global"]
    assert data == {"enabled": True, "skills": {"enabled": True}, "floor_toolsets": ["file"]}
    assert "/new" in good.stdout
    shown = json.loads(run(["config", "-p", "routertest", "--json"], env).stdout)
    assert shown["in_force"] == str(target) and shown["settings"]["floor_toolsets"] == ["file"]


def test_old_in_folder_settings_are_read_with_a_notice_and_carried_over(homes):
    env, _, profile = homes
    (profile / "token-router" / "config.yaml").unlink()
    old = profile / "plugins" / harness.PLUGIN_DIRNAME / "config.yaml"
    old.write_text("global:\n  enabled: true\n  floor_toolsets: [memory]\n")
    doctor = json.loads(run(["doctor", "-p", "routertest", "--json"], env).stdout)
    notice = [c for c in doctor["checks"] if c["name"] == "old location"]
    assert notice and str(old) in notice[0]["detail"] and str(profile / "token-router" / "config.yaml") in \
        notice[0]["detail"]
    assert doctor["router_on"] is True  # still read
    proc = run(["config", "-p", "routertest", "--set", "debug_logging=true"], env)
    assert proc.returncode == 0, proc.stderr
    data = yaml.safe_load((profile / "token-router" / "config.yaml").read_text())["global"]
    assert data["floor_toolsets"] == ["memory"] and data["debug_logging"] is True and data["enabled"] is True


# -- finding 9: report survives a closed pipe ----------------------------------------------

def test_report_piped_into_head_ends_quietly(homes):
    env, _, profile = homes
    ledger = profile / "token-router" / "router-ledger.jsonl"
    rows = [json.dumps({"ts": i, "day": "2026-12-01", "session_id": f"s-{i:05d}", "phase": "routed", "intent": "x",
                        "requests": 1, "tokens_saved": 100, "tokens_full": 200, "tokens_now": 100})
            for i in range(4000)]
    ledger.write_text("\n".join(rows) + "\n")
    proc = subprocess.run(f"{PY} -m hermes_token_router report -p routertest --sessions 4000 | head -n 3",
                          shell=True, env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=120)
    assert len(proc.stdout.splitlines()) == 3 and f"ledger: {ledger}" in proc.stdout
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_report_from_the_checkout_reads_the_named_profiles_ledger(homes):
    env, _, profile = homes
    empty = run(["report"], env)  # the main profile: nothing yet, and it says how to pick another
    assert empty.returncode == 1 and "report -p NAME" in empty.stdout
    (profile / "token-router" / "router-ledger.jsonl").write_text(json.dumps(
        {"ts": 1, "day": "2026-12-01", "session_id": "s-1", "phase": "routed", "intent": "x", "requests": 2,
         "tokens_saved": 300, "tokens_full": 400, "tokens_now": 250}) + "\n")
    proc = run(["report", "-p", "routertest", "--json"], env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["total"]["tokens_saved"] == 300


def test_every_subcommand_takes_the_profile_flag(homes):
    env, _, _ = homes
    for sub in (["route"], ["report"], ["doctor"], ["config"], ["skills", "build"], ["skills", "match"],
                ["skills", "trim"]):
        proc = run([*sub, "--help"], env, timeout=60)
        assert proc.returncode == 0 and "-p PROFILE, --profile PROFILE" in proc.stdout, sub


def test_the_running_copy_path_is_never_needed(homes, tmp_path):
    """A copy of the plugin folder anywhere (``cd`` into it) serves any profile with ``-p``."""
    env, _, profile = homes
    elsewhere = tmp_path / "somewhere" / "hermes-token-router"
    shutil.copytree(profile / "plugins" / harness.PLUGIN_DIRNAME, elsewhere, symlinks=True)
    proc = run(["config", "-p", "routertest", "--path"], env, cwd=elsewhere)
    assert proc.stdout.strip() == str(profile / "token-router" / "config.yaml")


# -- the command line through Hermes's own `hermes` (what Hermes's installer puts on PATH) ------

HERMES = str(Path(PY).parent / "hermes")


def hermes(args, env, cwd=ROOT, timeout=240):
    return subprocess.run([HERMES, *args], env=env, cwd=str(cwd), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_hermes_token_router_acts_on_the_profile_hermes_selects(homes, tmp_path):
    env, root, profile = homes
    proc = hermes(["-p", "routertest", "token-router", "doctor", "--json"], env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["profile"] == "routertest" and data["hermes_home"] == str(profile.resolve())
    assert data["python"] == PY  # Hermes's own interpreter, whatever `python` on PATH is
    route = hermes(["-p", "routertest", "token-router", "route", "open ./notes.md and list its headings", "--json"],
                   env, cwd=tmp_path)
    assert route.returncode == 0, route.stderr[-2000:]
    assert json.loads(route.stdout)["toolsets"] == ["file"]
    # the main profile has no plugin: Hermes has no such command there, and says so (no chat, no model call)
    main = hermes(["token-router", "doctor"], env, cwd=tmp_path)
    assert main.returncode == 2 and "invalid choice: 'token-router'" in main.stderr


def test_hermes_token_router_exits_with_the_doctors_code(homes, tmp_path):
    """Hermes ignores a plugin command's return value; the doctor's 2 must still reach the shell."""
    env, _, profile = homes
    harness.write_router_config(profile / "token-router" / "config.yaml", {"global": {"confidence_threshold": 7}})
    proc = hermes(["-p", "routertest", "token-router", "doctor"], env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "ROUTING PATH: NO" in proc.stdout
    assert "set the key again with: hermes -p routertest token-router config --set KEY=VALUE" in proc.stdout
    fixed = hermes(["-p", "routertest", "token-router", "config", "--set", "confidence_threshold=0.9"], env,
                   cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert hermes(["-p", "routertest", "token-router", "doctor"], env, cwd=tmp_path).returncode == 0


def test_install_hints_name_the_python_hermes_runs_on(monkeypatch):
    """Hermes's installer builds its venv with uv and no pip: the hint must not say a bare `pip`."""
    import importlib.util

    from hermes_token_router.skill_router import embedding

    assert embedding.install_command("x==1") == f"install it into the Python Hermes runs on: {PY} -m pip install 'x==1'"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real(name, *a))
    assert embedding.install_command("x==1") == ("install it into the Python Hermes runs on (a uv venv, no pip): "
                                                 f"uv pip install --python {PY} 'x==1'")
