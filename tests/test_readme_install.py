"""Finding 1 and issue 14's acceptance: the README's install block, run verbatim.

A fresh clone of this checkout, a temporary HOME whose ``~/.hermes`` is the main profile
(pointed at the stub model, no plugin), no stdin, and PATH laid out as Hermes's installer
leaves it (``scripts/install.sh``: the venv's ``hermes`` linked into ``~/.local/bin``, then
the system's folders): no ``python`` on PATH can import Hermes or pydantic. Then the real
``hermes chat -q`` on both profiles: the test profile's first provider request carries fewer
tools than the main profile's; the doctor answers for the profile; and after ``hermes
plugins update`` the router is still on.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from hermes_token_router.devtools import harness

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv Hermes 0.19.0 runs from: `hermes` and `python`
SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"]
MESSAGE = "read ./notes.md and summarise it"


def install_block(readme: str) -> str:
    """The first ```sh block under the first heading that contains "Install"."""
    heading = re.search(r"^#+ .*Install.*$", readme, flags=re.M)
    assert heading, "README has no heading containing 'Install'"
    block = re.search(r"^```sh\n(.*?)^```", readme[heading.end():], flags=re.M | re.S)
    assert block, "no ```sh block under the Install heading"
    return block.group(1)


def fresh_clone(tmp: Path) -> Path:
    """What `git clone` of this checkout gives a user, including uncommitted work."""
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".pytest_cache", ".hypothesis",
        "out", "router-ledger.jsonl*", "router-debug.log*", ".skill-index"))
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=test", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run([*git, *cmd], cwd=src, check=True, capture_output=True, timeout=120)
    clone = tmp / "clone" / "hermes-token-router"
    subprocess.run(["git", "clone", "-q", str(src), str(clone)], check=True, capture_output=True, timeout=120)
    return clone


def user_env(home: Path) -> dict:
    env = harness.offline_env()
    for var in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_TOKEN_ROUTER_CONFIG", "PYTHONPATH", "HERMES_PROFILE",
                "HERMES_INTERACTIVE", "HERMES_SAFE_MODE", "VIRTUAL_ENV"):
        env.pop(var, None)
    env["HOME"] = str(home)
    env["HERMES_HOME"] = str(home / ".hermes")
    local_bin = home / ".local" / "bin"  # what install.sh links: `hermes` alone, not the venv's python
    local_bin.mkdir(parents=True, exist_ok=True)
    (local_bin / "hermes").symlink_to(BIN / "hermes")
    env["PATH"] = os.pathsep.join([str(local_bin), *SYSTEM_PATH])
    return env


def test_the_install_path_has_no_python_that_imports_hermes(tmp_path):
    """The premise of the test below, checked rather than assumed."""
    env = user_env(tmp_path / "home")
    for name in ("python", "python3"):
        found = shutil.which(name, path=env["PATH"])
        if found:
            probe = subprocess.run([found, "-c", "import hermes_cli"], env=env, capture_output=True, timeout=60)
            assert probe.returncode != 0, f"{found} imports Hermes: the test would not show the installer's PATH"
    assert shutil.which("hermes", path=env["PATH"]) == str(tmp_path / "home" / ".local" / "bin" / "hermes")


def run(cmd, env, cwd, timeout=240):
    return subprocess.run(cmd, env=env, cwd=str(cwd), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def first_request_tools(stub, env, cwd, *profile: str):
    stub.clear()
    proc = run(["hermes", *profile, "chat", "-q", MESSAGE], {**env, "HERMES_INTERACTIVE": "1"}, cwd)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    reqs = [r for r in stub.chat_requests() if (r.body or {}).get("stream")]
    assert reqs, proc.stdout[-2000:] + proc.stderr[-2000:]
    return reqs[0].tool_names, proc.stdout


def test_readme_install_block_runs_verbatim_and_routes_the_test_profile(stub, tmp_path):
    block = install_block((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "routertest" in block and "plugins install" in block
    clone = fresh_clone(tmp_path)
    home = tmp_path / "home"
    harness.prepare_home(home / ".hermes", stub.base_url, install=False, enabled_plugins=())  # the main profile
    env = user_env(home)

    script = tmp_path / "install.sh"
    script.write_text(block, encoding="utf-8")
    proc = run(["bash", str(script)], env, clone, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "ROUTING PATH: yes" in proc.stdout
    profile = home / ".hermes" / "profiles" / "routertest"
    assert (profile / "plugins" / "hermes-token-router" / "plugin.yaml").is_file()
    assert (profile / "token-router" / "config.yaml").is_file()
    hermes_cfg = (profile / "config.yaml").read_text(encoding="utf-8")
    assert "hermes-token-router" in hermes_cfg and "allow_tool_override: false" in hermes_cfg

    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("# Notes\n- ship the router\n", encoding="utf-8")
    main_tools, _ = first_request_tools(stub, env, work)
    test_tools, _ = first_request_tools(stub, env, work, "-p", "routertest")
    assert len(test_tools) < len(main_tools), (test_tools, main_tools)
    assert {"read_file", "search_files", "request_toolset"} <= set(test_tools)
    assert "request_toolset" not in main_tools and "terminal" in main_tools and "terminal" not in test_tools

    assert "python" not in block, "the install block must run through `hermes` alone"
    doctor = run(["hermes", "-p", "routertest", "token-router", "doctor", "--json"], env, clone)
    assert doctor.returncode == 0, doctor.stdout[-3000:] + doctor.stderr[-2000:]
    report = json.loads(doctor.stdout)
    assert report["routing_path"] is True and report["profile"] == "routertest"
    assert report["hermes_home"] == str(profile.resolve()) and report["router_on"] is True

    update = run(["hermes", "-p", "routertest", "plugins", "update", "hermes-token-router"], env, clone)
    assert update.returncode == 0, update.stdout[-2000:] + update.stderr[-2000:]
    shown = run(["hermes", "-p", "routertest", "token-router", "config", "--json"], env, clone)
    assert json.loads(shown.stdout)["settings"]["enabled"] is True
    after_update, _ = first_request_tools(stub, env, work, "-p", "routertest")
    assert after_update == test_tools
