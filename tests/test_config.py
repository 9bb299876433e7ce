"""Typed config: per-profile resolution, env overrides, one-line errors naming key and fix."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hermes_token_router.config import ConfigError, ConfigStore, env_enabled, parse_config, resolve_profile_name

P = Path("/x/config.yaml")


def test_defaults_are_off_and_fail_open():
    cfg = parse_config("", P).for_profile("default")
    assert cfg.enabled is False and cfg.fail_open is True and cfg.confidence_threshold == 0.9
    assert cfg.deterministic_rules_enabled is True and cfg.classifier.enabled is False


def test_profile_entry_overrides_global_deeply():
    text = """
global: {enabled: false, floor_toolsets: [todo], classifier: {enabled: false, model: m1}}
profiles:
  work: {enabled: true, classifier: {enabled: true}}
"""
    parsed = parse_config(text, P)
    work, other = parsed.for_profile("work"), parsed.for_profile("home")
    assert work.enabled and work.floor_toolsets == ["todo"]
    assert work.classifier.enabled and work.classifier.model == "m1"
    assert not other.enabled and not other.classifier.enabled


@pytest.mark.parametrize("text,key,fix", [
    ("global: {confidence_threshold: 1.5}", "global.confidence_threshold", "between 0 and 1"),
    ("global: {enabled: maybe}", "global.enabled", "true or false"),
    ("global: {floor_toolsets: [' file']}", "global.floor_toolsets", "list of toolset names"),
    ("global: {fail_open: false}", "global.fail_open", "always fails open"),
    ("global: {routing_mode: x}", "global.routing_mode", "docs/configuration.md"),
    ("profiles: {work: {router_hard_timeout_ms: 5}}", "profiles.work.router_hard_timeout_ms", "milliseconds"),
    ("nonsense: 1", "'nonsense'", "global:"),
    ("global: [1, 2]", "global must be a mapping", "indent"),
    ("global: {enabled: true\n", "line", "indentation"),
])
def test_errors_name_the_key_and_the_fix(text, key, fix):
    with pytest.raises(ConfigError) as err:
        parse_config(text, P)
    message = str(err.value)
    assert "\n" not in message and key in message and fix in message and str(P) in message


def test_retired_keys_are_ignored_with_one_warning_each(tmp_path, caplog):
    path = tmp_path / "config.yaml"
    path.write_text("global: {enabled: true, routing_scope: session, shrink_mid_session: true}\n")
    store = ConfigStore(lambda: path)
    caplog.set_level(logging.WARNING, logger="hermes_token_router")
    parsed, error = store.load()
    store.load()  # cached: no second warning
    assert error is None and parsed.for_profile("default").enabled
    retired = [r for r in caplog.records if "retired" in r.getMessage()]
    assert len(retired) == 2


def test_store_reports_error_instead_of_raising_and_reloads_on_change(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("global: {confidence_threshold: 9}\n")
    store = ConfigStore(lambda: path)
    parsed, error = store.load()
    assert parsed is None and "confidence_threshold" in error
    path.write_text("global: {confidence_threshold: 0.5}   \n")
    parsed, error = store.load()
    assert error is None and parsed.for_profile("x").confidence_threshold == 0.5


def test_env_switch_and_profile_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("HERMES_TOKEN_ROUTER_ENABLED", "0")
    assert env_enabled() is False
    monkeypatch.setenv("HERMES_TOKEN_ROUTER_ENABLED", "1")
    assert env_enabled() is True
    monkeypatch.delenv("HERMES_TOKEN_ROUTER_ENABLED")
    assert env_enabled() is None

    class A:
        _profile_name = "coder"

    monkeypatch.setenv("HERMES_PROFILE", "envprof")
    assert resolve_profile_name(A()) == "coder"
    assert resolve_profile_name(None) == "envprof"
    monkeypatch.delenv("HERMES_PROFILE")
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / ".hermes" / "profiles" / "writer"))
    assert resolve_profile_name(None) == "writer"
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    assert resolve_profile_name(None) == "default"


def test_profile_follows_hermes_context_override(monkeypatch, tmp_path):
    """A multiplexing gateway picks the profile with Hermes's context-local home override,
    not the environment: the router must see the same profile Hermes does."""
    hermes_constants = pytest.importorskip("hermes_constants")
    monkeypatch.delenv("HERMES_PROFILE", raising=False)
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    token = hermes_constants.set_hermes_home_override(tmp_path / ".hermes" / "profiles" / "support")
    try:
        assert resolve_profile_name(None) == "support"
    finally:
        hermes_constants.reset_hermes_home_override(token)
    assert resolve_profile_name(None) == "default"


def test_profile_settings_are_cached_until_the_file_changes(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("global: {enabled: true}\nprofiles: {work: {floor_toolsets: [todo]}}\n")
    store = ConfigStore(lambda: path)
    first, _ = store.for_profile("work")
    again, _ = store.for_profile("work")
    assert first is again and first.floor_toolsets == ["todo"]
    path.write_text("global: {enabled: true}\nprofiles: {work: {floor_toolsets: [file, todo]}}\n")
    changed, _ = store.for_profile("work")
    assert changed is not first and changed.floor_toolsets == ["file", "todo"]
