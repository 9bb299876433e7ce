"""Both install shapes load the plugin in a real Hermes, and the real ``hermes chat -q``
CLI narrows too. Each runs in a fresh process with its own HERMES_HOME (plugin discovery
happens once per process); the stub model in this process records what they send."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hermes_token_router.devtools import harness

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ENABLED = {"global": {"enabled": True}}


def _env(home: Path, **extra: str) -> dict:
    env = harness.offline_env()
    env["HERMES_HOME"] = str(home)
    env["HERMES_INTERACTIVE"] = "1"
    for var in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_TOKEN_ROUTER_CONFIG", "PYTHONPATH"):
        env.pop(var, None)
    env.update(extra)
    return env


def _notes(tmp_path: Path) -> str:
    (tmp_path / "notes.md").write_text("# Notes\nship it\n")
    return "read ./notes.md and summarise it"


def test_directory_install_is_loaded_from_hermes_home(runtime):
    from hermes_cli.plugins import get_plugin_manager

    info = {p["key"]: p for p in get_plugin_manager().list_plugins()}["hermes-token-router"]
    assert info["enabled"] and not info["error"]
    assert info["source"] == "user"
    assert info["kind"] == "standalone"
    assert runtime.__class__.__module__.startswith("hermes_plugins.hermes_token_router.")


def test_hermes_chat_cli_narrows_first_request(stub, tmp_path):
    home = tmp_path / "home"
    harness.prepare_home(home, stub.base_url, router_config=ENABLED)
    proc = subprocess.run([str(BIN / "hermes"), "chat", "-q", _notes(tmp_path)], env=_env(home),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    reqs = stub.chat_requests()
    assert reqs, proc.stdout[-2000:] + proc.stderr[-2000:]
    names = set(reqs[0].tool_names)
    assert {"read_file", "write_file", "patch", "search_files", "request_toolset"} <= names
    assert "terminal" not in names and "delegate_task" not in names


@pytest.fixture(scope="module")
def wheel_target():
    """``pip install`` of a freshly built wheel into a private target directory, so only the
    child processes given that path see its ``hermes_agent.plugins`` entry point."""
    work = Path(tempfile.mkdtemp(prefix="htr-wheel-"))
    # Build from a copy: setuptools leaves an .egg-info beside the sources, and one in the
    # checkout would make every later Hermes in this checkout load the entry point instead.
    src = work / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".venv", ".git", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache", ".hypothesis"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-w", str(work / "dist"), str(src)], check=True, capture_output=True, text=True,
                           timeout=300)
    (work / "build.log").write_text(build.stdout + build.stderr)
    wheels = list((work / "dist").glob("hermes_token_router-*.whl"))
    assert len(wheels) == 1
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheels[0])],
                   check=True, capture_output=True, timeout=300)
    return target


def test_pip_entry_point_install_loads_and_narrows(stub, tmp_path, wheel_target):
    home = tmp_path / "home"
    harness.prepare_home(home, stub.base_url, install=False)
    (home / "token-router").mkdir(parents=True)
    harness.write_router_config(home / "token-router" / "config.yaml", ENABLED)
    env = _env(home, PYTHONPATH=str(wheel_target))
    proc = subprocess.run([sys.executable, "-m", "hermes_token_router.devtools.probe_turn", "--home", str(home),
                           "--base-url", stub.base_url, "-m", _notes(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    plugin = [p for p in out["plugins"] if p.get("key") == "hermes-token-router"]
    assert plugin and plugin[0]["source"] == "entrypoint" and plugin[0]["enabled"] and not plugin[0]["error"]
    assert "request_toolset" not in out["tools_before"]  # never in a host-built surface
    after = set(out["turns"][0]["tools_after"])
    assert {"read_file", "request_toolset"} <= after and "terminal" not in after
    # The shipped data came along inside the wheel.
    assert (wheel_target / "hermes_token_router" / "_data" / "policy" / "catalog.yaml").is_file()
    assert (wheel_target / "hermes_token_router" / "_data" / "policy" / "learned.json").is_file()
    assert not (wheel_target / "hermes_token_router" / "_data" / "__init__.py").exists()


def test_router_disabled_is_byte_identical_to_no_plugin(stub, tmp_path):
    """Installed but disabled (the default config) vs not installed at all."""
    results = {}
    home = tmp_path / "home"  # one path for both runs: Hermes embeds HERMES_HOME in some schemas
    for label, install in (("absent", False), ("disabled", True)):
        harness.prepare_home(home, stub.base_url, install=install,
                             enabled_plugins=("hermes-token-router",) if install else ())
        stub.clear()
        proc = subprocess.run([sys.executable, "-m", "hermes_token_router.devtools.probe_turn", "--home", str(home),
                               "--base-url", stub.base_url, "-m", "can you look at this"],
                              env=_env(home, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                              timeout=180, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        loaded = [p for p in out["plugins"] if p.get("key") == "hermes-token-router" and p.get("enabled")]
        assert bool(loaded) is install
        results[label] = stub.chat_requests()[0]
    assert results["disabled"].tools_json == results["absent"].tools_json
    assert "request_toolset" not in results["disabled"].tool_names


def test_pip_install_ships_the_console_script_and_the_rules(tmp_path, wheel_target):
    script = wheel_target / "bin" / "hermes-token-router"
    assert script.is_file()
    env = _env(tmp_path, PYTHONPATH=str(wheel_target))
    proc = subprocess.run([sys.executable, str(script), "route", "run the unit tests with pytest", "--json"],
                          env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["action"] == "narrow" and "terminal" in out["toolsets"]  # the rules came inside the wheel
    assert (wheel_target / "hermes_token_router" / "_data" / "policy" / "rules").is_dir()


def test_pip_build_prints_no_setuptools_warnings(wheel_target):
    """Finding 10: ``pip install .`` printed 223 lines of setuptools warnings."""
    log = (wheel_target.parent / "build.log").read_text()
    assert "Successfully built hermes-token-router" in log or "Saved" in log
    noisy = [line for line in log.splitlines() if "warning" in line.lower() or "deprecat" in line.lower()]
    assert not noisy, noisy[:10]


def test_pip_install_has_the_doctor_and_shows_its_version(stub, tmp_path, wheel_target):
    """Finding 10: ``hermes-token-router doctor`` exists for a pip install, names the version and the
    settings file, and finds the entry point the profile loads."""
    home = tmp_path / "home"
    harness.prepare_home(home, stub.base_url, install=False)
    env = _env(home, PYTHONPATH=str(wheel_target))
    proc = subprocess.run([sys.executable, str(wheel_target / "bin" / "hermes-token-router"), "doctor", "--json"],
                          env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["plugin_version"] == "0.3.0" and data["plugin_dir"] is None
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["installed"]["detail"].startswith("pip install")
    assert "v0.3.0 from entrypoint" in checks["loaded by Hermes"]["detail"]
    assert data["user_config"] == str(home / "token-router" / "config.yaml")
    assert any("config --set enabled=true" in step and step.startswith("turn it on") for step in data["next_steps"])
    assert any(step.startswith("turn it on: hermes token-router config") for step in data["next_steps"])
