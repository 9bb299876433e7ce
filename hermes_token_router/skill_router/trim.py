"""Compute and apply Hermes's ``skills.disabled`` list so only a handful of skills stay listed.

Why: with the router injecting skills on demand, the ~7K-token skills index in every system
prompt buys nothing. Disabled skills still route (the router reads SKILL.md itself). The
config is backed up before writing and ``--restore`` puts the backup back byte-for-byte.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

import yaml

from .host import config_path as hermes_config_path
from .scan import scan_skills

BACKUP_SUFFIX = ".token-router-skills.bak"


def disabled_list(keep: Iterable[str], dirs: Optional[Iterable[Path]] = None) -> Tuple[List[str], List[str]]:
    """(names to disable, kept names that match no skill)."""
    keep_set = {k.strip() for k in keep if k.strip()}
    entries = scan_skills(dirs)
    known = set()
    for e in entries:
        known.update({e.name, e.qualified_name, Path(e.path).parent.name})
    disable = sorted({e.name for e in entries
                      if not keep_set & {e.name, e.qualified_name, Path(e.path).parent.name}})
    return disable, sorted(keep_set - known)


def write_disabled(disable: List[str], config: Optional[Path] = None) -> Path:
    """Back up config.yaml (once: the first backup is the user's original) and set skills.disabled."""
    config = config or hermes_config_path()
    backup = config.with_name(config.name + BACKUP_SUFFIX)
    data = {}
    if config.is_file():
        if not backup.exists():
            shutil.copy2(config, backup)
        data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{config} is not a YAML mapping")
    skills = data.get("skills") if isinstance(data.get("skills"), dict) else {}
    skills["disabled"] = list(disable)
    data["skills"] = skills
    tmp = config.with_name(config.name + ".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    tmp.replace(config)
    return backup


def restore(config: Optional[Path] = None) -> bool:
    config = config or hermes_config_path()
    backup = config.with_name(config.name + BACKUP_SUFFIX)
    if not backup.is_file():
        return False
    shutil.copy2(backup, config)
    backup.unlink()
    return True
