"""The doctor's checks on one profile: is the plugin installed, enabled and loaded there,
is its config valid and the router on, and does the skill router have its index?

Every fix names a command that exists for the install at hand and the profile inspected.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

from .. import __version__
from ..paths import PLUGIN_NAME, command_line, directory_install_root, state_dir, user_config_path
from .doctor_checks import REQUIRED_HOOKS, _quiet
from .doctor_report import FAIL, INFO, OK, WARN, Report


def _p(profile: str) -> str:
    """``hermes`` profile flag for a command line ("" for the default profile)."""
    return "" if profile == "default" else f" -p {profile}"


def install_source() -> str:
    """What to give ``hermes plugins install``: this checkout when it is a git clone."""
    root = directory_install_root()
    if root is not None and (root / ".git").exists() and root.parent.name != "plugins":
        return f"file://{root}"
    return "file:///path/to/hermes-token-router"


def _hermes_config(home: Path) -> Tuple[Dict[str, Any], Optional[str]]:
    import yaml

    path = home / "config.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return (data if isinstance(data, dict) else {}), None
    except FileNotFoundError:
        return {}, f"{path} does not exist"
    except Exception as exc:
        return {}, f"{path} is not readable YAML ({type(exc).__name__})"


def _entry_point_installed() -> bool:
    try:
        from importlib.metadata import entry_points

        return any(ep.name == PLUGIN_NAME for ep in entry_points(group="hermes_agent.plugins"))
    except Exception:
        return False


def _entry_point_origin() -> str:
    try:
        from importlib.metadata import distributions

        for dist in distributions():
            if any(ep.group == "hermes_agent.plugins" and ep.name == PLUGIN_NAME for ep in dist.entry_points):
                return str(getattr(dist, "_path", None) or dist.metadata.get("Name"))
    except Exception:
        pass
    return "unknown distribution"


def _manifest_name(plugin_yaml: Path) -> Optional[str]:
    try:
        import yaml

        data = yaml.safe_load(plugin_yaml.read_text(encoding="utf-8")) or {}
        return str(data.get("name") or plugin_yaml.parent.name)
    except Exception:
        return None


def check_install(report: Report, home: Path) -> Optional[Path]:
    profile = report.profile
    plugins_dir = home / "plugins"
    directory = plugins_dir / PLUGIN_NAME
    plugin_dir = directory if (directory / "plugin.yaml").is_file() else None
    via_ep = _entry_point_installed()
    report.plugin_dir = str(plugin_dir) if plugin_dir else None
    if plugin_dir is not None and via_ep:
        report.add("install", "installed", WARN,
                   f"installed twice: directory plugin at {plugin_dir} and a hermes_agent.plugins entry point "
                   f"({_entry_point_origin()}); Hermes loads entry points last, so the entry point wins and the "
                   f"directory copy's config.yaml and ledger are not used; remove one (a stray "
                   f"hermes_token_router.egg-info on sys.path counts as an entry point)")
    elif plugin_dir is not None:
        report.add("install", "installed", OK, f"directory plugin at {plugin_dir}")
    elif via_ep:
        report.add("install", "installed", OK, "pip install (hermes_agent.plugins entry point)")
    else:
        report.add("install", "installed", FAIL,
                   f"not in {plugins_dir} and no hermes_agent.plugins entry point",
                   fix=f"install it: hermes{_p(profile)} plugins install {install_source()} --enable")
    cfg, error = _hermes_config(home)
    if error:
        report.add("install", "plugins.enabled", FAIL, error,
                   fix=f"enable it: hermes{_p(profile)} plugins enable {PLUGIN_NAME} --no-allow-tool-override")
    else:
        section = cfg.get("plugins") if isinstance(cfg.get("plugins"), dict) else {}
        enabled = section.get("enabled") if isinstance(section.get("enabled"), list) else []
        disabled = section.get("disabled") if isinstance(section.get("disabled"), list) else []
        if PLUGIN_NAME in disabled:
            report.add("install", "plugins.enabled", FAIL, f"{PLUGIN_NAME} is in plugins.disabled of {home / 'config.yaml'}",
                       fix=f"enable it: hermes{_p(profile)} plugins enable {PLUGIN_NAME} --no-allow-tool-override")
        elif PLUGIN_NAME in enabled:
            report.add("install", "plugins.enabled", OK, f"listed in plugins.enabled of {home / 'config.yaml'}")
        else:
            report.add("install", "plugins.enabled", FAIL,
                       f"{PLUGIN_NAME} is not in plugins.enabled of {home / 'config.yaml'}: Hermes will not load it",
                       fix=f"enable it: hermes{_p(profile)} plugins enable {PLUGIN_NAME} --no-allow-tool-override")
    if os.environ.get("HERMES_SAFE_MODE", "").strip().lower() in ("1", "true", "yes", "on"):
        report.add("install", "safe mode", FAIL, "HERMES_SAFE_MODE is set: Hermes skips plugin discovery",
                   fix="unset HERMES_SAFE_MODE")
    # A copy of the plugin anywhere under plugins/ (e.g. plugins/.bak-2024) is a second live plugin.
    if plugins_dir.is_dir():
        for child in sorted(plugins_dir.iterdir()):
            if child == directory or not child.is_dir():
                continue
            manifest = next((child / n for n in ("plugin.yaml", "plugin.yml") if (child / n).is_file()), None)
            if manifest is None:
                continue
            name = _manifest_name(manifest)
            if child.name.startswith(".bak") or name == PLUGIN_NAME or child.name.startswith(PLUGIN_NAME):
                report.add("install", "backup under plugins/", WARN,
                           f"{child} has a plugin.yaml (name {name!r}): Hermes can load it as a second live plugin",
                           fix=f"move it out of plugins/: mv {child} {home / 'plugin-backups' / child.name}")
    return plugin_dir


def check_loaded(report: Report) -> None:
    """Let Hermes's own plugin manager discover and register the plugin, as a run would."""
    try:
        with _quiet():
            from hermes_cli.plugins import discover_plugins, get_plugin_manager

            discover_plugins()
            manager = get_plugin_manager()
            entries = [p for p in manager.list_plugins() if isinstance(p, dict)]
            hooks = {h: list(manager._hooks.get(h, [])) for h in REQUIRED_HOOKS}
    except Exception as exc:
        report.add("install", "loaded by Hermes", FAIL, f"plugin discovery failed ({type(exc).__name__}: {exc})")
        return
    ours = [p for p in entries if p.get("name") == PLUGIN_NAME or p.get("key") == PLUGIN_NAME]
    live = [p for p in ours if p.get("enabled") and not p.get("error")]
    if not ours or not live:
        why = next((p.get("error") for p in ours if p.get("error")), None)
        report.add("install", "loaded by Hermes", FAIL,
                   f"Hermes did not load {PLUGIN_NAME}" + (f": {why}" if why else " (not enabled or not found)"))
        return
    missing = [h for h, cbs in hooks.items()
               if not any(type(getattr(cb, "__self__", None)).__name__ in ("RouterRuntime", "Recovery") for cb in cbs)]
    if missing:
        report.add("install", "loaded by Hermes", FAIL, f"loaded, but these hooks are not registered: {', '.join(missing)}")
        return
    p = live[0]
    report.add("install", "loaded by Hermes", OK,
               f"{p.get('key')} v{p.get('version') or __version__} from {p.get('source')}: {p.get('hooks')} hooks, "
               f"{p.get('middleware')} middleware, {p.get('commands')} command(s)")
    runtimes = {id(getattr(cb, "__self__", None)) for cb in hooks["pre_llm_call"]
                if type(getattr(cb, "__self__", None)).__name__ == "RouterRuntime"}
    if len(runtimes) > 1 or len(ours) > 1:
        report.add("install", "single instance", WARN,
                   f"{max(len(runtimes), len(ours))} router instances are live; remove the extra copy from plugins/")


def check_router_config(report: Report, plugin_dir: Optional[Path], home: Path) -> Any:
    """Validate the config in force for the profile; returns its settings (None if invalid)."""
    from ..config import ConfigError, env_enabled, legacy_notice, parse_config, read_config_text
    from ..paths import config_path

    path = config_path(plugin_dir, home)
    report.config_path, report.user_config = str(path), str(user_config_path(home))
    edit = f"edit {path}" if path == user_config_path(home) else f"fix it in {path}"
    try:
        text = read_config_text(path) if path.exists() else ""
        parsed = parse_config(text, path)
    except ConfigError as exc:
        report.add("config", "router config", FAIL, f"invalid, the router is hands-off: {exc}",
                   fix=f"{edit}, or set the key again with: {command_line('config --set KEY=VALUE', report.profile)}")
        return None
    except OSError as exc:
        report.add("config", "router config", FAIL, f"{path}: cannot read ({exc.strerror})",
                   fix=f"check the permissions of {path}")
        return None
    except Exception as exc:  # RecursionError and the like: the runtime treats it as invalid too
        report.add("config", "router config", FAIL, f"{path}: cannot be loaded ({type(exc).__name__})",
                   fix=f"make {path} a small UTF-8 YAML file (docs/configuration.md)")
        return None
    profile = report.profile
    cfg = parsed.for_profile(profile)
    for line in parsed.warnings:
        report.add("config", "retired key", WARN, line, fix=f"delete the key from {path}")
    notice = legacy_notice(parsed)
    if notice:
        report.add("config", "old location", WARN, notice,
                   fix=f"cp {path} {user_config_path(home)} and restore the shipped {path.name} in the plugin folder")
    env = env_enabled()
    if env is False:
        state, on = "off: HERMES_TOKEN_ROUTER_ENABLED=0 (always wins)", False
    elif env is True:
        state, on = "on: HERMES_TOKEN_ROUTER_ENABLED=1", True
    else:
        on = cfg.enabled
        state = f"{'on' if on else 'off'} for profile {profile}; /router on|off switches one process"
    report.router_on = on
    if os.environ.get("HERMES_TOKEN_ROUTER_CONFIG"):
        where = "named by HERMES_TOKEN_ROUTER_CONFIG"
    elif path == user_config_path(home):
        where = "your settings"
    else:
        where = "old in-folder settings" if notice else "the shipped defaults"
    report.add("config", "router config", OK, f"{path} ({where}) is valid; router {state}")
    if not on:
        report.add("config", "router on", INFO, f"routing is off for profile {profile}: the plugin loads but "
                                                f"changes nothing",
                   fix=f"turn it on: {command_line('config --set enabled=true', profile)}")
    if cfg.classifier.enabled:
        report.add("config", "classifier", INFO,
                   f"model classifier on ({cfg.classifier.provider or 'deepseek'}); rules "
                   f"{'first' if cfg.deterministic_rules_enabled else 'off'}")
    return cfg


def check_skill_router(report: Report, cfg: Any = None, home: Optional[Path] = None) -> None:
    status: Optional[Callable[..., Any]] = None
    for module in ("hermes_token_router.skill_router", "hermes_token_router.skill_router.embedding"):
        try:
            with _quiet():
                status = getattr(importlib.import_module(module), "semantic_status", None)
        except Exception:
            status = None
        if status is not None:
            break
    if status is None:
        report.skill_semantic = {"available": False, "detail": "not installed"}
        report.add("skills", "semantic backend", INFO, "not installed")
        return
    try:
        result = status()
    except Exception as exc:
        result = (False, f"semantic_status() failed ({type(exc).__name__})")
    if isinstance(result, tuple) and len(result) == 2:
        ok, detail = bool(result[0]), str(result[1])
    elif isinstance(result, dict):
        ok, detail = bool(result.get("available")), str(result.get("detail", result))
    else:
        ok, detail = bool(result), str(result)
    report.skill_semantic = {"available": ok, "detail": detail}
    report.add("skills", "semantic backend", OK if ok else INFO,
               detail if ok else f"unavailable (nickname routing still works): {detail}")
    if cfg is None or not cfg.skills.enabled:
        return
    index = Path(cfg.skills.index_dir).expanduser() if cfg.skills.index_dir else state_dir(home) / ".skill-index"
    if (index / "index.json").is_file():
        report.add("skills", "skill index", OK, f"{index}")
    else:
        report.add("skills", "skill index", WARN, f"the skill router is on but there is no index at {index}: "
                                                  f"it routes by nickname only",
                   fix=f"build it: {command_line('skills build', report.profile)}")
