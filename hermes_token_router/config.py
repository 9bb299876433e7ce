"""The plugin's own ``config.yaml``: typed, validated, resolved per profile.

Why a separate file from Hermes's config: the router must be switchable per profile
without touching the host's settings, and a broken router config must leave Hermes
running as if the plugin were absent (``ConfigError`` -> hands-off), never crash it.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .classifier.config import ClassifierConfig
from .paths import config_path, is_plugin_folder_config, user_config_path
from .skill_router.config import SkillRouterConfig

log = logging.getLogger("hermes_token_router")

RETIRED_KEYS = ("routing_scope", "expansion_mode", "shrink_mid_session")
ENV_ENABLED = "HERMES_TOKEN_ROUTER_ENABLED"
ENV_CONFIG = "HERMES_TOKEN_ROUTER_CONFIG"
# A real config is a few hundred bytes; a bigger file is a mistake (or /dev/zero) and is
# refused before anything reads it.
MAX_CONFIG_BYTES = 256 * 1024
# Keys whose values are never echoed in an error line, wherever they sit in the file.
_SECRET_KEY = re.compile(r"key|token|secret|passw", re.IGNORECASE)

# One fix per key family; the error line names the key, the problem and this fix.
_FIXES = {
    "enabled": "use true or false",
    "floor_toolsets": "use a list of toolset names, e.g. [file]",
    "keep_background_review": "use true or false",
    "deterministic_rules_enabled": "use true or false",
    "confidence_threshold": "use a number between 0 and 1, e.g. 0.9",
    "fail_open": "use true or false (false is not supported: the router always fails open)",
    "router_hard_timeout_ms": "use a whole number of milliseconds between 50 and 60000, e.g. 2000",
    "debug_logging": "use true or false",
    "classifier": "see docs/configuration.md#classifier",
    "skills": "see docs/configuration.md#skills",
    "ledger_max_bytes": "use a size in bytes between 10000 and 100000000",
    "profiles": "use a mapping of profile name to settings, e.g. {work: {enabled: true}}",
}


class RouterConfig(BaseModel):
    """Effective settings for one profile (global merged with its ``profiles`` entry)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    floor_toolsets: List[str] = Field(default_factory=list)
    keep_background_review: bool = False
    deterministic_rules_enabled: bool = True
    confidence_threshold: float = Field(default=0.90, ge=0.0, le=1.0)
    fail_open: bool = True
    router_hard_timeout_ms: int = Field(default=2000, ge=50, le=60000)
    debug_logging: bool = False
    ledger_max_bytes: int = Field(default=1_000_000, ge=10_000, le=100_000_000)
    classifier: ClassifierConfig = Field(default_factory=ClassifierConfig)
    skills: SkillRouterConfig = Field(default_factory=SkillRouterConfig)

    @field_validator("floor_toolsets")
    @classmethod
    def _names(cls, value: List[str]) -> List[str]:
        for name in value:
            if not name or name != name.strip():
                raise ValueError(f"toolset name {name!r} is empty or padded")
        return list(dict.fromkeys(value))

    @field_validator("fail_open")
    @classmethod
    def _always_open(cls, value: bool) -> bool:
        if value is not True:
            raise ValueError("the router cannot fail closed")
        return value


class ConfigError(Exception):
    """An invalid config file; the message is one line naming the key and the fix."""


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    global_raw: Dict[str, Any]
    profiles_raw: Dict[str, Dict[str, Any]]
    warnings: Tuple[str, ...]

    def for_profile(self, profile: str) -> RouterConfig:
        merged = _deep_merge(self.global_raw, self.profiles_raw.get(profile) or {})
        return _validate(merged, self.path, prefix=f"profiles.{profile}" if profile in self.profiles_raw else "global")


def _deep_merge(base: Dict[str, Any], top: Dict[str, Any]) -> Dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _looks_secret(value: Any, depth: int = 0) -> bool:
    """True when ``value`` is, or holds, a mapping with a secret-looking key."""
    if depth > 20:
        return True
    if isinstance(value, dict):
        return any(_SECRET_KEY.search(str(k)) or _looks_secret(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_looks_secret(v, depth + 1) for v in value)
    return False


def _shown(loc: Tuple[Any, ...], got: Any) -> str:
    """The offending value for the error line: scalars only, and never under a
    secret-looking key (a key pasted as ``api_key:`` anywhere would land in the logs and
    in ``/router status``, which a gateway sends into the chat)."""
    if any(_SECRET_KEY.search(str(part)) for part in loc) or _looks_secret(got):
        return " (value not shown)"
    if isinstance(got, (str, int, float, bool)) or got is None:
        text = repr(got)
        return f" (got {text if len(text) <= 80 else text[:77] + '...'})"
    return ""


def _validate(raw: Dict[str, Any], path: Path, prefix: str) -> RouterConfig:
    try:
        return RouterConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err.get("loc", ()))
        fix = _FIXES.get(str(loc[0]) if loc else "", "see docs/configuration.md")
        shown = _shown(loc, err.get("input"))
        raise ConfigError(f"{path}: {prefix}.{'.'.join(str(p) for p in loc)}: {err.get('msg')}{shown}; "
                          f"fix: {fix}") from None


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A real config nests a few levels; the YAML parser recurses per level, so a file of
# 50,000 "[" is refused by a linear scan before it can spend seconds failing.
MAX_FLOW_DEPTH = 64


def _flow_depth(text: str) -> int:
    """Deepest nesting of flow brackets, a quick over-estimate (quotes are not parsed)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_FLOW_DEPTH:
                    return deepest
        elif ch in "]}" and depth:
            depth -= 1
    return deepest


def parse_config(text: str, path: Path) -> ConfigFile:
    """Parse and validate a config file's text; raise ``ConfigError`` naming key and fix."""
    depth = _flow_depth(text)
    if depth > MAX_FLOW_DEPTH:
        raise ConfigError(f"{path}: brackets nested {depth} deep (more than {MAX_FLOW_DEPTH}); "
                          "fix: see docs/configuration.md for the file's shape")
    try:
        data = yaml.load(text, Loader=_Loader) if text.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}:{where} is not valid YAML; fix: check indentation and quoting") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping with 'global' and 'profiles'; fix: start the file with 'global:'")
    unknown = sorted(set(data) - {"global", "profiles"})
    if unknown:
        raise ConfigError(f"{path}: unknown top-level key {unknown[0]!r}; fix: put settings under 'global:' or 'profiles:'")
    global_raw = data.get("global") or {}
    profiles_raw = data.get("profiles") or {}
    if not isinstance(global_raw, dict):
        raise ConfigError(f"{path}: global must be a mapping; fix: indent settings under 'global:'")
    if not isinstance(profiles_raw, dict) or not all(isinstance(v, dict) or v is None for v in profiles_raw.values()):
        raise ConfigError(f"{path}: profiles: must map profile names to settings; fix: {_FIXES['profiles']}")
    warnings: List[str] = []
    global_raw = _drop_retired(global_raw, "global", warnings)
    profiles_raw = {str(k): _drop_retired(v or {}, f"profiles.{k}", warnings) for k, v in profiles_raw.items()}
    parsed = ConfigFile(path=path, global_raw=global_raw, profiles_raw=profiles_raw, warnings=tuple(warnings))
    parsed.for_profile("__validate_global__")
    for name in profiles_raw:
        parsed.for_profile(name)
    return parsed


def _drop_retired(raw: Dict[str, Any], where: str, warnings: List[str]) -> Dict[str, Any]:
    kept = dict(raw)
    for key in RETIRED_KEYS:
        if key in kept:
            kept.pop(key)
            warnings.append(
                f"{where}.{key} is retired and ignored: first-turn routing, session stickiness and "
                "monotonic recovery are fixed behaviour"
            )
    return kept


def read_config_text(path: Path, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """The file's text, refusing what is not a small regular UTF-8 file without blocking
    (a FIFO is opened non-blocking and refused, ``/dev/zero`` is refused by its type)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path}: not a regular file; fix: point at a config.yaml file")
        if st.st_size > max_bytes:
            raise ConfigError(f"{path}: {st.st_size} bytes is larger than {max_bytes}; "
                              "fix: a router config is a few lines, see docs/configuration.md")
        data = os.read(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise ConfigError(f"{path}: larger than {max_bytes} bytes; fix: see docs/configuration.md")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: byte {exc.start} is not UTF-8; fix: save the file as UTF-8") from None


class ConfigStore:
    """Loads the config once per file change; remembers the last error instead of raising."""

    def __init__(self, path_fn=config_path):
        self._path_fn = path_fn
        self._lock = threading.Lock()
        self._key: Optional[tuple] = None
        self._file: Optional[ConfigFile] = None
        self._error: Optional[str] = None
        self._profiles: Dict[str, RouterConfig] = {}
        self.notice: Optional[str] = None

    def load(self) -> Tuple[Optional[ConfigFile], Optional[str]]:
        path = self._path_fn()
        try:
            st = path.stat()
            key = (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            key = (str(path), None, None, None)
        with self._lock:
            if key == self._key:
                return self._file, self._error
            self._key = key
            self._file, self._error = None, None
            self._profiles = {}
            self.notice = None
            try:
                if key[1] is None and os.environ.get(ENV_CONFIG):
                    log.warning("hermes-token-router: %s=%s names no file; using the defaults (router off)",
                                ENV_CONFIG, path)
                text = read_config_text(path) if key[1] is not None else ""
                self._file = parse_config(text, path)
                for line in self._file.warnings:
                    log.warning("hermes-token-router: %s", line)
                self.notice = legacy_notice(self._file)
                if self.notice:
                    log.warning("hermes-token-router: %s", self.notice)
            except ConfigError as exc:
                self._error = str(exc)
                log.warning("hermes-token-router: invalid config, router is hands-off: %s", exc)
            except OSError as exc:
                self._error = (f"{path}: cannot read ({exc.strerror or type(exc).__name__}); "
                               "fix: check the file's permissions")
                log.warning("hermes-token-router: %s", self._error)
            except Exception as exc:  # noqa: BLE001 - RecursionError, MemoryError, a YAML surprise...
                # Anything unexpected is still an invalid file: hands-off, and cached under
                # this file's fingerprint so the next turn does not run on the defaults.
                self._file = None
                self._error = (f"{path}: cannot be loaded ({type(exc).__name__}); "
                               "fix: make it a small UTF-8 YAML file, see docs/configuration.md")
                log.warning("hermes-token-router: invalid config, router is hands-off: %s", self._error)
            return self._file, self._error

    def for_profile(self, profile: str) -> Tuple[Optional[RouterConfig], Optional[str]]:
        """The validated settings for one profile, cached until the file changes (every hook
        asks, so re-merging and re-validating each time would sit on the hot path)."""
        parsed, error = self.load()
        if error:
            return None, error
        with self._lock:
            cached = self._profiles.get(profile)
        if cached is not None:
            return cached, None
        cfg = parsed.for_profile(profile) if parsed is not None else RouterConfig()
        with self._lock:
            self._profiles[profile] = cfg
        return cfg, None


def legacy_notice(parsed: ConfigFile) -> Optional[str]:
    """One line when settings are read from the plugin folder's ``config.yaml`` and differ
    from the shipped defaults: an update replaces that file (``hermes plugins update``
    refuses to pull over the edit), so they belong in the profile's own file."""
    if not is_plugin_folder_config(parsed.path):
        return None
    if not parsed.profiles_raw and parsed.for_profile("default") == RouterConfig():
        return None
    return (f"settings read from the old location {parsed.path}; move them to {user_config_path()} "
            f"(copy the file there, then 'git -C {parsed.path.parent} checkout config.yaml') so plugin "
            f"updates keep them")


_warned_env: set = set()


def env_enabled() -> Optional[bool]:
    """``HERMES_TOKEN_ROUTER_ENABLED`` as a switch; a value it cannot read is ignored with
    one warning per value (a typo'd ``=ture`` must not look like a working switch)."""
    value = os.environ.get(ENV_ENABLED)
    if value is None:
        return None
    raw = value.strip().lower()
    if raw in ("0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw not in _warned_env:
        _warned_env.add(raw)
        log.warning("hermes-token-router: %s=%r is not 0/1/true/false/on/off/yes/no; ignored", ENV_ENABLED,
                    value[:20])
    return None


def resolve_profile_name(agent: Any = None) -> str:
    """Which ``profiles:`` entry applies: the agent's own profile first, so one gateway
    serving several profiles applies each one's entry."""
    name = getattr(agent, "_profile_name", None) if agent is not None else None
    if isinstance(name, str) and name:
        return name
    env = os.environ.get("HERMES_PROFILE", "").strip()
    if env:
        return env
    for home in (_hermes_home_override(), os.environ.get("HERMES_HOME", "")):
        if home:
            parts = Path(home).expanduser().parts
            if len(parts) >= 2 and parts[-2] == "profiles":
                return parts[-1]
    return "default"


def _hermes_home_override() -> str:
    """Hermes's own home resolution (honours the gateway's per-profile context override)."""
    from .host import hermes_home

    home = hermes_home()
    return str(home) if home is not None else ""
