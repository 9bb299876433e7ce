"""``config [-p PROFILE] [--set KEY=VALUE ...]``: show or change the profile's own settings.

The user's settings live in ``$HERMES_HOME/token-router/config.yaml`` of each profile, out
of the plugin folder that updates replace. ``--set`` validates the whole resulting file
with the same parser the plugin uses and writes it atomically only when it is valid, so a
typo can never switch the router off behind the user's back.

Imports of the parser are deferred so ``--help`` and the doctor run on any Python.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

from ..paths import config_path, is_plugin_folder_config, user_config_path

HEADER = ("# hermes-token-router settings for this profile (docs/configuration.md lists every key).\n"
          "# Keys left out take the shipped defaults. Change with: config --set KEY=VALUE\n")


def add_subcommand(sub: Any, common: Any = None) -> None:
    p = sub.add_parser("config", help="show or change this profile's router settings",
                       parents=[common] if common is not None else [],
                       description="Show the router settings in force for a profile, or change them with --set "
                                   "(validated before anything is written).")
    p.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                   help="e.g. enabled=true, skills.enabled=true, floor_toolsets=[file], "
                        "profiles.work.enabled=true (keys without 'global.' or 'profiles.' go under global)")
    p.add_argument("--path", action="store_true", help="print only the path of the profile's settings file")
    p.add_argument("--json", action="store_true", help="print the effective settings as JSON")
    p.set_defaults(run=run)


def _parse_assignment(text: str) -> Tuple[List[str], Any]:
    import yaml

    if "=" not in text:
        raise ValueError(f"--set {text!r}: expected KEY=VALUE, e.g. --set enabled=true")
    key, raw = text.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ValueError(f"--set {text!r}: the key is empty")
    if parts[0] not in ("global", "profiles"):
        parts = ["global", *parts]
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        raise ValueError(f"--set {text!r}: the value is not valid YAML (quote it)") from None
    return parts, value


def _assign(data: Dict[str, Any], parts: List[str], value: Any) -> None:
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def _starting_point(home: Path) -> Dict[str, Any]:
    """The user file's content; on first use, an old in-folder edit is carried over."""
    import yaml

    from ..config import ConfigError, legacy_notice, parse_config

    source = user_config_path(home)
    if not source.is_file():
        current = config_path(home / "plugins" / "hermes-token-router", home)
        if not is_plugin_folder_config(current) or os.environ.get("HERMES_TOKEN_ROUTER_CONFIG"):
            return {}
        try:
            if legacy_notice(parse_config(current.read_text(encoding="utf-8"), current)) is None:
                return {}  # the shipped defaults: nothing of the user's to carry over
        except ConfigError:
            pass  # an invalid old edit is carried over and reported by the validation below
        source = current
    data = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    return data if isinstance(data, dict) else {}


def run(args: argparse.Namespace) -> int:
    home: Path = args.hermes_home
    target = user_config_path(home)
    if args.path:
        print(target)
        return 0
    if args.assignments:
        return _write(args, home, target)
    return _show(args, home, target)


def _write(args: argparse.Namespace, home: Path, target: Path) -> int:
    import yaml

    from ..config import ConfigError, parse_config

    try:
        data = _starting_point(home)
        for text in args.assignments:
            parts, value = _parse_assignment(text)
            _assign(data, parts, value)
        body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        parse_config(body, target)  # the plugin's own validation, before anything is written
    except (ValueError, ConfigError) as exc:
        print(f"config: not written: {exc}", file=sys.stderr)
        return 2
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(HEADER + body, encoding="utf-8")
    os.replace(tmp, target)
    print(f"wrote {target} ({', '.join(args.assignments)})")
    if os.environ.get("HERMES_TOKEN_ROUTER_CONFIG"):
        print(f"note: HERMES_TOKEN_ROUTER_CONFIG={os.environ['HERMES_TOKEN_ROUTER_CONFIG']} is set and is read "
              f"instead of this file")
    print("takes effect from the next session (in a running chat: /new)")
    return 0


def _show(args: argparse.Namespace, home: Path, target: Path) -> int:
    import yaml

    from ..config import ConfigError, parse_config

    path = config_path(home / "plugins" / "hermes-token-router", home)
    try:
        parsed = parse_config(path.read_text(encoding="utf-8") if path.is_file() else "", path)
        effective = parsed.for_profile(args.profile_name).model_dump(mode="json")
        error = None
    except ConfigError as exc:
        effective, error = None, str(exc)
    if args.json:
        print(json.dumps({"profile": args.profile_name, "hermes_home": str(home), "user_config": str(target),
                          "in_force": str(path), "error": error, "settings": effective}, indent=1))
        return 2 if error else 0
    print(f"profile: {args.profile_name} (HERMES_HOME={home})")
    print(f"your settings file: {target}" + ("" if target.is_file() else " (not created yet: defaults apply)"))
    if path != target:
        print(f"read now: {path}")
    if error:
        print(f"INVALID, the router is hands-off: {error}")
        return 2
    print(yaml.safe_dump(effective, sort_keys=False).rstrip())
    print("change: config --set KEY=VALUE (e.g. --set enabled=true)")
    return 0
