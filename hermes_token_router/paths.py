"""Where the plugin's files live, for both install shapes.

The code and the shipped data (``policy/``, the default ``config.yaml``, ``skills/``) sit in
the plugin folder (``$HERMES_HOME/plugins/hermes-token-router/``) or inside the package
(``hermes_token_router/_data``) for a pip install. Everything the user or the plugin
*writes* (the user's ``config.yaml``, the ledger, the debug log, the skill index) lives in
``$HERMES_HOME/token-router/``, per profile: never in the plugin folder, which
``hermes plugins update`` replaces (a local edit there makes its ``git pull`` refuse), and
never directly under ``plugins/``, where a folder would be taken for another plugin.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Optional

PACKAGE_DIR = Path(__file__).resolve().parent
PLUGIN_NAME = "hermes-token-router"
STATE_DIRNAME = "token-router"


def hermes_home() -> Path:
    from .host import hermes_home as hosts_answer  # honours profile overrides

    home = hosts_answer()
    return home if home is not None else Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")


def directory_install_root() -> Path | None:
    """The plugin folder when we run as a directory plugin (or from a checkout)."""
    parent = PACKAGE_DIR.parent
    return parent if (parent / "plugin.yaml").is_file() else None


def state_dir(home: Optional[Path] = None) -> Path:
    """Writable home of one profile: user config, ledger, debug log, skill index."""
    return (home if home is not None else hermes_home()) / STATE_DIRNAME


def user_config_path(home: Optional[Path] = None) -> Path:
    return state_dir(home) / "config.yaml"


def shipped(name: str) -> Path:
    """A shipped data file or folder (``policy``, ``config.yaml``, ``skills``)."""
    for base in (PACKAGE_DIR / "_data", PACKAGE_DIR.parent):
        candidate = base / name
        if candidate.exists():
            return candidate
    return PACKAGE_DIR.parent / name


_RUNNING = object()


def config_path(plugin_dir: object = _RUNNING, home: Optional[Path] = None) -> Path:
    """The router config in force: ``HERMES_TOKEN_ROUTER_CONFIG``, else the profile's
    ``<home>/token-router/config.yaml``, else the plugin folder's ``config.yaml`` (the
    shipped defaults, or an old in-folder edit: see ``legacy_config``), else the shipped
    default. With no arguments it answers for the running copy; the doctor passes the
    install it found in the home it inspects (``None``: no directory install)."""
    override = os.environ.get("HERMES_TOKEN_ROUTER_CONFIG")
    if override:
        return Path(override).expanduser()
    user = user_config_path(home)
    if user.is_file():
        return user
    root = directory_install_root() if plugin_dir is _RUNNING else plugin_dir
    if root is not None and (Path(root) / "config.yaml").is_file():
        return Path(root) / "config.yaml"
    return shipped("config.yaml")


def is_plugin_folder_config(path: Path) -> bool:
    """True for a ``config.yaml`` beside a ``plugin.yaml``: the shipped defaults of a
    directory install, which an update replaces."""
    return path.name == "config.yaml" and (path.parent / "plugin.yaml").is_file()


def cli_command() -> str:
    """How to run this plugin's command line for the install at hand, as a shell line.

    A pip install has the ``hermes-token-router`` script; a directory install (or a
    checkout) runs ``python -m hermes_token_router`` from its folder, with the Python
    Hermes runs on."""
    root = directory_install_root()
    if root is None:
        return "hermes-token-router"
    return f"cd {shlex.quote(str(root))} && {python_for_hermes()} -m hermes_token_router"


def profile_flag(profile: Optional[str]) -> str:
    return f" -p {profile}" if profile and profile != "default" else ""


def command_line(sub: str, profile: Optional[str] = None) -> str:
    """A subcommand as a user types it, e.g. ``hermes -p work token-router skills build``.

    Through Hermes's own ``hermes`` command, which every install shape answers once Hermes
    loads the plugin, and which runs on the Python Hermes runs on (Hermes's installer puts
    only ``hermes`` on PATH)."""
    return f"hermes{profile_flag(profile)} token-router {sub}"


def standalone_command_line(sub: str, profile: Optional[str] = None) -> str:
    """The same without Hermes loading the plugin (``cli_command``): for the doctor, when
    Hermes cannot load it or this Python cannot import Hermes."""
    return f"{cli_command()} {sub}{profile_flag(profile)}"


def python_for_hermes() -> str:
    """This Python when it can import Hermes, else the one the ``hermes`` launcher names."""
    if "hermes_cli" in sys.modules or importlib.util.find_spec("hermes_cli") is not None:
        return sys.executable
    return hermes_python() or "python3"


def hermes_python() -> Optional[str]:
    """The Python the ``hermes`` launcher on PATH runs (its shebang), or None."""
    launcher = shutil.which("hermes")
    if not launcher:
        return None
    try:
        with open(launcher, "rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    parts = first[2:].split()
    if not parts:
        return None
    if Path(parts[0]).name == "env" and len(parts) > 1:  # "#!/usr/bin/env python3"
        return shutil.which(parts[1]) or parts[1]
    return parts[0]
