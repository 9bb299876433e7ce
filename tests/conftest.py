"""Test session set-up: one real Hermes 0.19.0 in this process, offline.

HERMES_HOME must be set before Hermes is first imported (plugin discovery runs at import),
so this happens at conftest import: a temporary home with our plugin installed exactly as
a user installs it (``cp -R`` into ``plugins/`` + ``plugins.enabled``), a local stub model,
and every proxy pointed at a dead loopback port. Tests switch the router's behaviour by
rewriting its config.yaml (the plugin reloads it on change), never by patching Hermes.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hermes_token_router.devtools import harness  # noqa: E402
from hermes_token_router.devtools.stub_llm import StubLLM  # noqa: E402

if list(ROOT.glob("*.egg-info")):
    pytest.exit(f"remove {[p.name for p in ROOT.glob('*.egg-info')]} from the checkout: an in-tree build's metadata "
                "makes Hermes load the router as an entry point instead of the directory install", returncode=2)

STUB = StubLLM().start()
HOME = Path(tempfile.mkdtemp(prefix="htr-test-home-"))
os.environ.update(harness.offline_env())
os.environ["HERMES_HOME"] = str(HOME)
os.environ["HERMES_INTERACTIVE"] = "1"
# A profile with integrations: a web backend and a browser endpoint on dead loopback ports,
# so Hermes offers web_* and browser_* tools (nothing calls them unless a test makes the
# model do so, and then the call fails locally).
os.environ["SEARXNG_URL"] = f"http://127.0.0.1:{harness.dead_port()}"
os.environ["BROWSER_CDP_URL"] = f"http://127.0.0.1:{harness.dead_port()}"
for _var in ("HERMES_TOKEN_ROUTER_ENABLED", "HERMES_TOKEN_ROUTER_CONFIG", "HERMES_KANBAN_TASK", "HERMES_PROFILE"):
    os.environ.pop(_var, None)
DISABLED = {"global": {"enabled": False}}
ROUTER_CONFIG = harness.prepare_home(HOME, STUB.base_url, router_config=DISABLED)
PLUGIN_PACKAGE = "hermes_plugins.hermes_token_router.hermes_token_router"


@pytest.fixture
def stub():
    STUB.clear()
    yield STUB
    STUB.clear()


@pytest.fixture(autouse=True)
def _process_switch_is_reset():
    """``/router on|off`` is process state: never let one test's switch leak into the next."""
    yield
    loaded = sys.modules.get("hermes_cli.plugins")
    if loaded is None:
        return
    for cb in loaded.get_plugin_manager()._hooks.get("pre_llm_call", []):
        owner = getattr(cb, "__self__", None)
        if type(owner).__name__ == "RouterRuntime":
            owner.set_switch(None)


@pytest.fixture
def hermes_home() -> Path:
    """The HERMES_HOME this process's Hermes was imported with (never re-import conftest)."""
    return HOME


@pytest.fixture
def router_config_path() -> Path:
    return ROUTER_CONFIG


@pytest.fixture
def router_config():
    """Write the installed plugin's config.yaml: ``router_config(enabled=True, **global)``."""

    def write(enabled: bool = True, profiles: dict | None = None, **global_keys):
        harness.write_router_config(ROUTER_CONFIG, {"global": {"enabled": enabled, **global_keys},
                                                    "profiles": profiles or {}})

    yield write
    harness.write_router_config(ROUTER_CONFIG, DISABLED)


@pytest.fixture
def agent_factory(stub):
    made = []

    def make(**kwargs):
        agent = harness.build_agent(stub.base_url, **kwargs)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        try:
            harness.finalize_session(agent)
            agent.close()
        except Exception:
            pass


@pytest.fixture
def runtime():
    """The RouterRuntime instance Hermes loaded from the directory install."""
    import model_tools  # noqa: F401  (plugin discovery runs at this import)
    from hermes_cli.plugins import get_plugin_manager

    for cb in get_plugin_manager()._hooks.get("pre_llm_call", []):
        owner = getattr(cb, "__self__", None)
        if type(owner).__name__ == "RouterRuntime":
            module = type(owner).__module__
            assert module.startswith("hermes_plugins."), (
                f"Hermes loaded the router from {module}, not the directory install (a stray "
                "hermes_token_router.egg-info on sys.path is an entry point, which Hermes loads last)")
            return owner
    raise AssertionError("hermes-token-router is not loaded in this Hermes")


@pytest.fixture
def plugin_module():
    """Import a module of the *installed* plugin copy (not the checkout)."""
    import importlib

    import model_tools  # noqa: F401  (plugin discovery runs at this import)

    def get(name: str):
        return importlib.import_module(f"{PLUGIN_PACKAGE}.{name}")

    return get


@pytest.fixture
def narrowing(monkeypatch, plugin_module, router_config):
    """The one fake decision: the installed router narrows every first message to
    ``toolsets`` whatever the rules say (it replaces ``decide`` in *our* runtime module;
    Hermes is untouched), and the router config is written.

    ``narrowing(toolsets=("file",), before=None, enabled=True, **config)``: ``toolsets`` may be
    a callable read at decision time; ``before(text)`` runs inside the classification (to
    stall it, or to act while it is in flight); ``config`` goes to ``router_config``."""
    import model_tools  # noqa: F401 - plugin discovery runs at this import

    runtime_mod = plugin_module("runtime")
    decision_mod = plugin_module("decision")

    def install(toolsets=("file",), before=None, enabled=True, **config):
        def fake_decide(text, cfg, available=(), **_):
            if before is not None:
                before(text)
            chosen = toolsets() if callable(toolsets) else toolsets
            return decision_mod.Decision(action="narrow", toolsets=tuple(chosen), intent="test", confidence=1.0,
                                         source="rules", reason="test")

        monkeypatch.setattr(runtime_mod, "decide", fake_decide)
        router_config(enabled=enabled, **config)

    return install


@pytest.fixture
def classifier_offline(monkeypatch):
    """Classifier unit tests: proxies on a dead port, provider key variables unset, and an
    empty client cache (clients capture proxy settings when built)."""
    from hermes_token_router.classifier.endpoint import clear_clients

    for key, value in harness.offline_env({}).items():
        monkeypatch.setenv(key, value)
    for key in ("DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
                "OPENAI_BASE_URL", "MY_ROUTER_KEY"):
        monkeypatch.delenv(key, raising=False)
    clear_clients()
    yield
    clear_clients()


@pytest.fixture
def private_stub():
    """A stub model of the test's own (for replies that stall or hang the server)."""
    with StubLLM() as server:
        yield server


@pytest.fixture
def router_logs(caplog):
    caplog.set_level(logging.INFO, logger="hermes_token_router")
    return caplog


@pytest.fixture(params=["sync", "threaded"])
def hook_dispatch(request):
    """Run the test under both hook dispatch models: 0.19.0's synchronous ``invoke_hook``
    and upstream main's threaded one (``devtools.upstream_dispatch``: ``hermes-hook-*``
    daemon threads, timeout, skip, fail-closed ``pre_tool_call``). Yields the emulation, or
    None for the synchronous host."""
    import model_tools  # noqa: F401  (plugin discovery runs at this import)
    from hermes_cli.plugins import get_plugin_manager

    from hermes_token_router.devtools.upstream_dispatch import ThreadedDispatch

    if request.param == "sync":
        yield None
        return
    dispatch = ThreadedDispatch(get_plugin_manager(), timeout_s=10.0).install()
    try:
        yield dispatch
    finally:
        dispatch.uninstall()


@pytest.fixture
def vault_calls():
    """A non-core (hence deferrable) tool ``htr_vault_open`` in toolset ``htr_vault``, registered
    in the real registry for one test; yields the list of calls it received."""
    import json

    from tools.registry import registry

    calls = []

    def handler(args, **kw):
        calls.append(args)
        return json.dumps({"secret": "opened"})

    schema = {"name": "htr_vault_open", "description": "Open the vault (protected test tool).",
              "parameters": {"type": "object", "properties": {}, "required": []}}
    registry.register(name="htr_vault_open", toolset="htr_vault", schema=schema, handler=handler,
                      description="test-only protected tool")
    try:
        yield calls
    finally:
        registry.deregister("htr_vault_open")
