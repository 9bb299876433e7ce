"""Run the real Hermes 0.19.0 offline: a temporary HERMES_HOME, our plugin installed the way
a user installs it, and a CLI-shaped ``AIAgent`` pointed at the local stub model.

Shared by the tests, the live A/B benchmark, ``make demo`` and ``diagnostics.py --probe``
so every one of them exercises the same install path. Nothing here patches Hermes.

``HERMES_HOME`` must be set before the first import of ``run_agent``/``model_tools``
(plugin discovery runs at import), so ``prepare_home`` is called before ``build_agent``.
"""

from __future__ import annotations

import copy
import os
import shutil
import socket
import tempfile
import uuid
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Tuple

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN_DIRNAME = "hermes-token-router"
_COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.pyc", ".pytest_cache", ".hypothesis",
                                      "benchmarks", "tests", "corpus", "docs", "*.egg-info", "build", "dist",
                                      "router-debug.log*", "router-ledger.jsonl*", ".skill-index")


def dead_port() -> int:
    """A loopback port with nothing listening: proxies point here so nothing leaves the box."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def offline_env(env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ if env is None else env)
    proxy = f"http://127.0.0.1:{dead_port()}"
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env[key] = proxy
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.setdefault("HERMES_TOKEN_ROUTER_TEST", "1")
    return env


def isolate_process(prefix: str) -> Tuple[Path, Path]:
    """For a benchmark process: a fresh temporary HERMES_HOME, offline proxies, none of the
    router's switches inherited, and the router config at ``<home>/router-config.yaml``
    (never the checkout's). Returns (home, router config path). Call before importing Hermes."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.update(offline_env())
    os.environ["HERMES_HOME"] = str(home)
    os.environ["HERMES_INTERACTIVE"] = "1"
    for var in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_KANBAN_TASK", "HERMES_PROFILE"):
        os.environ.pop(var, None)
    router_cfg = home / "router-config.yaml"
    os.environ["HERMES_TOKEN_ROUTER_CONFIG"] = str(router_cfg)
    return home, router_cfg


def install_directory_plugin(home: Path, src: Path = REPO_ROOT) -> Path:
    """``cp -R . $HERMES_HOME/plugins/hermes-token-router`` (minus dev-only folders)."""
    dest = home / "plugins" / PLUGIN_DIRNAME
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=_COPY_IGNORE, symlinks=True)
    return dest


def hermes_config(base_url: str, *, enabled_plugins: Iterable[str] = (PLUGIN_DIRNAME,),
                  extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    cfg: Dict[str, Any] = {
        "model": {"default": "stub-model", "provider": "custom", "base_url": base_url,
                  "api_key": "sk-stub-local", "context_length": 131072},
        "plugins": {"enabled": list(enabled_plugins)},
        "security": {"allow_lazy_installs": False},
    }
    for key, value in (extra or {}).items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    return cfg


def prepare_home(home: Path, base_url: str, *, install: bool = True,
                 router_config: Optional[Dict[str, Any]] = None,
                 hermes_extra: Optional[Dict[str, Any]] = None,
                 enabled_plugins: Iterable[str] = (PLUGIN_DIRNAME,)) -> Path:
    """Lay out a HERMES_HOME; returns the profile's router config path
    (``$HERMES_HOME/token-router/config.yaml``, where ``config --set`` writes; with
    ``router_config=None`` it is not created and the shipped defaults apply)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump(hermes_config(base_url, enabled_plugins=enabled_plugins,
                                                                   extra=hermes_extra)))
    if install:
        install_directory_plugin(home)
    cfg_path = home / "token-router" / "config.yaml"
    if router_config is not None:
        write_router_config(cfg_path, router_config)
    return cfg_path


def write_router_config(path: Path, config: Dict[str, Any]) -> None:
    """Replace the router's config atomically (the store reloads on mtime/size change)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(config, sort_keys=False))
    os.replace(tmp, path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def cli_toolsets() -> list:
    """The toolsets the CLI gives an agent for the current HERMES_HOME config."""
    os.environ.setdefault("HERMES_INTERACTIVE", "1")
    from hermes_cli.config import load_config
    from hermes_cli.tools_config import _get_platform_tools

    return sorted(_get_platform_tools(load_config(), "cli"))


def build_agent(base_url: str, *, session_id: Optional[str] = None, enabled_toolsets: Optional[list] = None,
                platform: str = "cli", **kwargs: Any):
    """A CLI-shaped ``AIAgent`` talking to the stub model (what ``hermes chat`` builds)."""
    from run_agent import AIAgent

    return AIAgent(
        base_url=base_url, api_key="sk-stub-local", provider="custom", api_mode="chat_completions",
        model="stub-model", enabled_toolsets=enabled_toolsets if enabled_toolsets is not None else cli_toolsets(),
        quiet_mode=True, platform=platform, session_id=session_id or f"test-{uuid.uuid4().hex[:10]}",
        skip_context_files=True, skip_memory=kwargs.pop("skip_memory", True), max_iterations=kwargs.pop("max_iterations", 8),
        **kwargs,
    )


def clone_agents(base: Any, prefix: str, n: int) -> list:
    """``n`` shallow copies of a real agent, each serving its own session (a gateway's
    many chats without paying an agent build each): for load tests and benchmarks."""
    out = []
    for i in range(n):
        agent = copy.copy(base)
        agent.session_id = f"{prefix}-{i:04d}"
        out.append(agent)
    return out


def finalize_session(agent: Any, reason: str = "session_boundary") -> None:
    """Fire the real session-boundary hook exactly as the CLI does on exit or ``/new``."""
    from hermes_cli.plugins import invoke_hook

    invoke_hook("on_session_finalize", session_id=agent.session_id, platform=agent.platform, reason=reason)
