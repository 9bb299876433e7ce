"""Which HERMES_HOME a command acts on, found the way Hermes finds it.

``hermes -p NAME`` resolves ``<root>/profiles/NAME`` (``default`` is the root itself);
without ``-p`` a ``HERMES_HOME`` that already points at a profile wins, then the sticky
``<root>/active_profile``, then the root. The root is ``~/.hermes``, or ``HERMES_HOME``
itself for a custom deployment outside it (``hermes_constants.get_default_hermes_root``).
Mirrored here so the commands agree with ``hermes -p`` even from a Python that cannot
import Hermes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional, Tuple

PROFILE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class ProfileError(Exception):
    """A ``-p`` value that names no profile; the message says how to create it."""


def default_root() -> Path:
    try:
        from hermes_constants import get_default_hermes_root

        return Path(get_default_hermes_root())
    except Exception:
        pass
    native = Path.home() / ".hermes"
    env = os.environ.get("HERMES_HOME", "")
    if not env:
        return native
    path = Path(env).expanduser()
    try:
        path.resolve().relative_to(native.resolve())
        return native
    except ValueError:
        return path.parent.parent if path.parent.name == "profiles" else path


def profile_of(home: Path) -> str:
    return home.name if home.parent.name == "profiles" else "default"


def resolve_home(profile: Optional[str] = None, home: Optional[Path] = None) -> Tuple[Path, str]:
    """(HERMES_HOME, profile name) for ``-p PROFILE`` / ``--home DIR`` / neither."""
    if home is not None:
        path = Path(home).expanduser().resolve()
        return path, profile or profile_of(path)
    if profile:
        name = profile.strip().lower()
        if not PROFILE_RE.match(name):
            raise ProfileError(f"{profile!r} is not a profile name (lowercase letters, digits, '-' and '_')")
        root = default_root()
        path = root if name == "default" else root / "profiles" / name
        if not path.is_dir():
            raise ProfileError(f"profile {name!r} does not exist at {path}; create it: hermes profile create {name}")
        return path, name
    env = os.environ.get("HERMES_HOME", "")
    if env and Path(env).expanduser().parent.name == "profiles":
        path = Path(env).expanduser()
        return path, profile_of(path)
    root = default_root()
    try:
        active = (root / "active_profile").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        active = ""
    if active and active != "default" and (root / "profiles" / active).is_dir():
        return root / "profiles" / active, active
    if env:
        return Path(env).expanduser(), "default"
    return root, "default"


def enter(home: Path) -> None:
    """Point this process at ``home`` before Hermes is imported (discovery reads it)."""
    os.environ["HERMES_HOME"] = str(home)
