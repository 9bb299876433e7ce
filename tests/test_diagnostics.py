"""``python diagnostics.py`` against the installed Hermes 0.19.0, each run in a fresh process
with its own HERMES_HOME (discovery reads it at import), exactly as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


from hermes_token_router.devtools import harness

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def env_for(home: Path, **extra: str) -> dict:
    env = harness.offline_env()
    for key in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_TOKEN_ROUTER_CONFIG", "HERMES_SAFE_MODE", "HERMES_PROFILE"):
        env.pop(key, None)
    env["HERMES_HOME"] = str(home)
    env.update(extra)
    return env


def make_home(tmp_path: Path, *, enabled_plugins=(harness.PLUGIN_DIRNAME,), router=None) -> Path:
    home = tmp_path / "home"
    harness.prepare_home(home, "http://127.0.0.1:9/v1", enabled_plugins=enabled_plugins,
                         router_config=router if router is not None else {"global": {"enabled": True}})
    return home


def run(args, env, script=ROOT / "diagnostics.py", cwd=None, timeout=240):
    proc = subprocess.run([PY, str(script), *args], env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=str(cwd or ROOT))
    return proc


def run_json(home: Path, *args: str, **extra: str):
    proc = run(["--json", *args], env_for(home, **extra))
    data = json.loads(proc.stdout)
    return proc.returncode, data


def checks(data, status=None):
    return {(c["area"], c["name"]): c for c in data["checks"] if status is None or c["status"] == status}


def test_exit_0_with_routing_path_on_installed_hermes(tmp_path):
    home = make_home(tmp_path)
    code, data = run_json(home)
    assert code == 0 and data["exit_code"] == 0
    assert data["routing_path"] is True and data["first_turn_savings"] == "may be claimed"
    assert data["hermes_version"] == "0.19.0"
    assert data["routes_before_preflight"] is False  # 0.19.0: the preflight estimate runs before pre_llm_call
    assert not checks(data, "fail")
    ok = checks(data, "ok")
    for hook in ("pre_llm_call", "post_api_request", "on_session_finalize", "on_session_reset", "pre_tool_call"):
        assert ("hooks", hook) in ok
    assert ("hooks", "tool_request middleware") in ok
    assert ("agent lookup", "build_turn_context(agent, ...)") in ok
    assert ("agent lookup", "request built from agent.tools") in ok
    for name in ("tools.registry.registry.get_toolset_for_tool", "tools.registry.registry.get_entry",
                 "tools.registry.registry.get_definitions", "toolsets.resolve_toolset",
                 "agent.model_metadata._estimate_tools_tokens_rough"):
        assert ("registry", name) in ok
    assert ("install", "plugins.enabled") in ok and ("install", "loaded by Hermes") in ok
    assert ("config", "router config") in ok
    assert data["skill_semantic"]["detail"]  # reported either way ("not installed" or the backend's status)
    assert data["hook_thread"] == "caller thread"


def test_plain_text_by_default(tmp_path):
    home = make_home(tmp_path)
    proc = run([], env_for(home))
    assert proc.returncode == 0
    assert "ROUTING PATH: yes" in proc.stdout
    assert "BEFORE PREFLIGHT ESTIMATE: no" in proc.stdout
    assert "[agent lookup]" in proc.stdout and "semantic backend" in proc.stdout


def test_exit_2_when_plugin_not_enabled(tmp_path):
    home = make_home(tmp_path, enabled_plugins=())
    code, data = run_json(home)
    assert code == 2 and data["routing_path"] is False
    assert data["first_turn_savings"] == "must not be claimed"
    failed = checks(data, "fail")
    assert ("install", "plugins.enabled") in failed and ("install", "loaded by Hermes") in failed


def test_exit_2_when_the_hook_is_missing(tmp_path):
    """Simulate a Hermes without ``pre_llm_call``: drop it from VALID_HOOKS and from the
    source of the frame the router relies on, then run the real launcher."""
    home = make_home(tmp_path)
    code = (
        "import sys, runpy, inspect\n"
        "import hermes_cli.plugins as p\n"
        "p.VALID_HOOKS.discard('pre_llm_call')\n"
        f"sys.argv = ['diagnostics.py', '--json']\n"
        f"runpy.run_path({str(ROOT / 'diagnostics.py')!r}, run_name='__main__')\n"
    )
    proc = subprocess.run([PY, "-c", code], env=env_for(home), capture_output=True, text=True, timeout=240,
                          cwd=str(ROOT))
    assert proc.returncode == 2, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    failed = checks(data, "fail")
    assert ("hooks", "pre_llm_call") in failed
    assert data["routing_path"] is False


def test_exit_2_when_router_config_is_invalid(tmp_path):
    home = make_home(tmp_path, router={"global": {"enabled": True, "confidence_threshold": 7}})
    code, data = run_json(home)
    assert code == 2
    failed = checks(data, "fail")
    assert "confidence_threshold" in failed[("config", "router config")]["detail"]


def test_backup_under_plugins_is_flagged(tmp_path):
    home = make_home(tmp_path)
    installed = home / "plugins" / harness.PLUGIN_DIRNAME
    shutil.copytree(installed, home / "plugins" / ".bak-hermes-token-router")
    code, data = run_json(home)
    warned = [c for c in data["checks"] if c["name"] == "backup under plugins/"]
    assert warned and warned[0]["status"] == "warn" and ".bak-hermes-token-router" in warned[0]["detail"]


def test_launcher_works_from_a_directory_install(tmp_path):
    """``cd $HERMES_HOME/plugins/hermes-token-router && python diagnostics.py``, no HERMES_HOME set."""
    home = make_home(tmp_path)
    installed = home / "plugins" / harness.PLUGIN_DIRNAME
    env = env_for(home)
    env.pop("HERMES_HOME")
    env["HOME"] = str(tmp_path / "nohome")  # ~/.hermes must not be what it inspects
    proc = run(["--json"], env, script=installed / "diagnostics.py", cwd=installed)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["hermes_home"] == str(home.resolve())
    assert data["plugin_dir"] == str(installed)


def test_probe_measures_the_narrowing(tmp_path):
    home = make_home(tmp_path)
    proc = run(["--json", "--probe"], env_for(home), timeout=400)
    assert proc.returncode == 0, proc.stderr[-2000:]
    probe = json.loads(proc.stdout)["probe"]
    assert probe["ok"] is True, probe
    assert harness.PLUGIN_DIRNAME in probe["plugins_loaded"]
    assert probe["narrowed"] is True
    assert probe["request_tools"] < probe["tools_before"]
    assert 0 < probe["request_tokens"] < probe["tokens_before"]
    assert probe["tokens_saved_per_request"] == probe["tokens_before"] - probe["request_tokens"]
    assert probe["decision"].get("phase") == "routed"
    assert "read_file" in probe["request_tool_names"]
    print(f"\nprobe: {probe['tools_before']} tools / {probe['tokens_before']} tokens -> "
          f"{probe['request_tools']} tools / {probe['request_tokens']} tokens ({probe['saved_pct']}%), "
          f"ran on {probe['ran_on']}")
