"""Where the plugin's files live, for both install shapes.

A directory install keeps everything beside ``plugin.yaml`` (``$HERMES_HOME/plugins/
hermes-token-router/``). A pip install ships the same data inside the package
(``hermes_token_router/_data``) and keeps its writable files in
``$HERMES_HOME/token-router/``: never inside ``plugins/``, where a folder would be
mistaken for another plugin.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

PACKAGE_DIR = Path(__file__).resolve().parent
PLUGIN_NAME = "hermes-token-router"


def hermes_home() -> Path:
    from .host import hermes_home as hosts_answer  # honours profile overrides

    home = hosts_answer()
    return home if home is not None else Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")


def directory_install_root() -> Path | None:
    """The plugin folder when we run as a directory plugin (or from a checkout)."""
    parent = PACKAGE_DIR.parent
    return parent if (parent / "plugin.yaml").is_file() else None


def state_dir() -> Path:
    """Writable home for the debug log, the savings ledger and the skill index."""
    root = directory_install_root()
    return root if root is not None else hermes_home() / "token-router"


def shipped(name: str) -> Path:
    """A shipped data file or folder (``policy``, ``config.yaml``, ``skills``)."""
    for base in (PACKAGE_DIR / "_data", PACKAGE_DIR.parent):
        candidate = base / name
        if candidate.exists():
            return candidate
    return PACKAGE_DIR.parent / name


_RUNNING = object()


def config_path(plugin_dir: object = _RUNNING, home: Optional[Path] = None) -> Path:
    """The router config in force: ``HERMES_TOKEN_ROUTER_CONFIG``, else the directory
    install's ``config.yaml``, else ``<home>/token-router/config.yaml``, else the shipped
    default. With no arguments it answers for the running copy; ``diagnostics.py`` passes
    the install it found in the HERMES_HOME it inspects (``None``: no directory install)."""
    override = os.environ.get("HERMES_TOKEN_ROUTER_CONFIG")
    if override:
        return Path(override).expanduser()
    root = directory_install_root() if plugin_dir is _RUNNING else plugin_dir
    if root is not None:
        return Path(root) / "config.yaml"
    user = (home if home is not None else hermes_home()) / "token-router" / "config.yaml"
    return user if user.is_file() else shipped("config.yaml")
