"""The skill router's Hermes adapter: the only module of the skill router that imports Hermes.

Where skills live (``HERMES_HOME/skills`` then ``skills.external_dirs``), how a SKILL.md is
read (Hermes's own frontmatter parser, platform and environment filters, and conditions),
Hermes's skills guard, and the path of Hermes's config.yaml. Everything else in the skill
router works on what these functions return, so a Hermes change is fixed here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple


def skill_dirs() -> List[Path]:
    """HERMES_HOME/skills first, then ``skills.external_dirs`` (local-first precedence)."""
    from agent.skill_utils import get_all_skills_dirs

    return [Path(p) for p in get_all_skills_dirs()]


def skill_files(root: Path) -> Iterator[Path]:
    """Every SKILL.md under ``root``, in Hermes's own walk order (hidden and vendored
    directories skipped the way Hermes skips them)."""
    from agent.skill_utils import iter_skill_index_files

    return iter_skill_index_files(root, "SKILL.md")


def parse_frontmatter(text: str) -> Tuple[Dict[str, Any], str]:
    from agent.skill_utils import parse_frontmatter as hermes_parse

    return hermes_parse(text)


def offered_here(frontmatter: Dict[str, Any]) -> bool:
    """Hermes would offer this skill on this platform and in this environment."""
    from agent.skill_utils import skill_matches_environment, skill_matches_platform

    return bool(skill_matches_platform(frontmatter) and skill_matches_environment(frontmatter))


def required_toolsets(frontmatter: Dict[str, Any]) -> Any:
    """The skill's ``requires_toolsets`` condition as Hermes reads it (raw value)."""
    from agent.skill_utils import extract_skill_conditions

    return extract_skill_conditions(frontmatter).get("requires_toolsets")


def guard_scan(path: Path, name: Optional[str] = None) -> Optional[List[Any]]:
    """Hermes's skills-guard findings for one file (reported under ``name``); None when the
    guard is not importable."""
    try:
        from tools.skills_guard import scan_file
    except Exception:
        return None
    return list(scan_file(path, name or path.name))


def config_path() -> Path:
    """Hermes's config.yaml for the active profile."""
    from hermes_constants import get_config_path

    return Path(get_config_path())


def disabled_skill_names() -> frozenset:
    """Hermes's ``skills.disabled`` (with the platform list): the skills its ``skill_view``
    refuses as disabled."""
    from agent.skill_utils import get_disabled_skill_names

    return frozenset(get_disabled_skill_names())
