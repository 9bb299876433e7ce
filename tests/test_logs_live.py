"""The router's logs against the real Hermes 0.19.0: one INFO ``surface committed`` line per
committed surface; with ``global.debug_logging: true`` every bail-out reason goes to a
rotating ``router-debug.log`` beside the installed plugin (2 MB x 3), without touching
Hermes's own logging; and no secret (API key, user text) reaches either."""

from __future__ import annotations

import json
import logging
from logging.handlers import RotatingFileHandler

import model_tools  # noqa: F401  (Hermes discovers plugins at this import; conftest set HERMES_HOME)
import pytest

from hermes_token_router.devtools.stub_llm import Reply

SECRET_KEY = "sk-live-SECRET-0123456789abcdef"
SECRET_TEXT = "my password is hunter2-SECRET"
DEBUG_LOGGER = "hermes_token_router.debug"


def respond(body):
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if not body.get("stream"):
        return Reply(content=json.dumps({"toolsets": ["file"], "intent": "read a file", "confidence": 0.97}))
    if last.get("role") == "user" and "todo list" in str(last.get("content")):
        return Reply(content=None, tool_calls=[("todo", {"todos": [{"id": "1", "content": "x", "status": "pending"}]})])
    return Reply(content="ok")


@pytest.fixture
def classifier_on(stub, router_config, monkeypatch):
    monkeypatch.setenv("HTR_TEST_CLASSIFIER_KEY", SECRET_KEY)
    stub.responder = respond

    def write(**extra):
        router_config(deterministic_rules_enabled=False,
                      classifier={"enabled": True, "provider": "custom", "base_url": stub.base_url,
                                  "model": "router-small", "api_key_env": "HTR_TEST_CLASSIFIER_KEY"}, **extra)
    yield write
    stub.responder = None


@pytest.fixture
def debug_log(router_config_path):
    path = router_config_path.parent / "router-debug.log"
    for p in path.parent.glob("router-debug.log*"):
        p.unlink()
    return path


def committed(caplog, session_id):
    return [r for r in caplog.records if r.name == "hermes_token_router" and r.levelno == logging.INFO
            and r.getMessage().startswith("surface committed") and f"session={session_id} " in r.getMessage()]


def test_one_info_line_per_committed_surface(classifier_on, agent_factory, router_logs, runtime):
    classifier_on()
    agent = agent_factory()
    result = agent.run_conversation("read ./notes.md and summarise it")
    lines = committed(router_logs, agent.session_id)
    assert len(lines) == 1
    msg = lines[0].getMessage()
    assert "predicted=file" in msg and "read a file" not in msg and "toolsets=file" in msg and "tools=" in msg
    agent.run_conversation("and the next one", conversation_history=result["messages"])  # sticky: nothing new
    assert len(committed(router_logs, agent.session_id)) == 1

    agent2 = agent_factory()
    agent2.run_conversation("read ./notes.md and make a todo list of it")  # pruned call -> recovery commits again
    lines2 = committed(router_logs, agent2.session_id)
    assert len(lines2) == 2 and "(expanded: todo)" in lines2[1].getMessage()
    assert all(SECRET_KEY not in r.getMessage() and "notes.md" not in r.getMessage() for r in router_logs.records
               if r.name.startswith("hermes_token_router"))


def test_debug_log_records_bail_outs_in_a_rotating_file(classifier_on, agent_factory, router_config, debug_log,
                                                        runtime, stub):
    classifier_on(debug_logging=True)
    root_handlers = list(logging.getLogger().handlers)
    hermes_handlers = {name: list(logging.getLogger(name).handlers) for name in ("run_agent", "agent", "hermes_cli")}

    routed = agent_factory()
    routed.run_conversation(f"read ./notes.md and summarise it, {SECRET_TEXT}")
    empty = agent_factory()
    empty.run_conversation("   ")  # empty text: the router keeps the full surface
    router_config(enabled=False, debug_logging=True)
    off = agent_factory()
    off.run_conversation("read ./notes.md please")  # disabled: a bail-out

    text = debug_log.read_text(encoding="utf-8")
    assert f"decision session={routed.session_id} action=narrow" in text and "source=classifier" in text
    assert f"bail hook=pre_llm_call session={off.session_id} reason=disabled source=config.yaml" in text
    assert f"session={empty.session_id}" in text and "empty_message" in text
    assert "classifier" in text  # the classifier's own debug lines go to the same file

    handlers = [h for h in logging.getLogger(DEBUG_LOGGER).handlers if isinstance(h, RotatingFileHandler)]
    assert len(handlers) == 1
    h = handlers[0]
    assert (h.maxBytes, h.backupCount) == (2 * 1024 * 1024, 3)
    assert h.baseFilename == str(debug_log)
    # Hermes's own logging is untouched: no handler added, and the trail does not propagate.
    assert logging.getLogger(DEBUG_LOGGER).propagate is False
    assert list(logging.getLogger().handlers) == root_handlers
    for name, before in hermes_handlers.items():
        assert list(logging.getLogger(name).handlers) == before
    for log_file in (runtime_home(debug_log) / "logs").glob("*.log"):
        content = log_file.read_text(encoding="utf-8", errors="replace")
        assert "bail hook=pre_llm_call" not in content and "decision session=" not in content
    # no secret in the trail: not the classifier key, not the user's words
    assert SECRET_KEY not in text and "hunter2" not in text and "notes.md" not in text
    # and the key really was sent to the classifier (so it was there to leak)
    assert any(r.headers.get("authorization") == f"Bearer {SECRET_KEY}" for r in stub.chat_requests()
               if not (r.body or {}).get("stream"))


def test_debug_log_off_writes_nothing(classifier_on, agent_factory, debug_log):
    classifier_on(debug_logging=False)
    agent = agent_factory()
    agent.run_conversation("read ./notes.md and summarise it")
    assert not debug_log.exists()
    assert not [h for h in logging.getLogger(DEBUG_LOGGER).handlers if isinstance(h, RotatingFileHandler)]


def test_no_secret_in_hermes_logs_from_the_router(classifier_on, agent_factory, router_logs, hermes_home, stub):
    """A classifier that answers 401 and echoes the key must not get the key into any
    router line: not Hermes's log records, not the debug trail, not Hermes's log files."""
    classifier_on(debug_logging=True)

    def unauthorized(body):
        if not body.get("stream"):
            return Reply(status=401, error_body={"error": {"message": f"invalid key {SECRET_KEY}"}})
        return Reply(content="ok")

    stub.responder = unauthorized
    agent = agent_factory()
    agent.run_conversation("read ./notes.md and summarise it")
    assert any(not (r.body or {}).get("stream") for r in stub.chat_requests())  # the classifier was called
    ours = "\n".join(r.getMessage() for r in router_logs.records if r.name.startswith("hermes_token_router"))
    assert SECRET_KEY not in ours
    trail = hermes_home / "token-router" / "router-debug.log"
    assert trail.exists() and "classifier:http_401" in trail.read_text(encoding="utf-8")
    assert SECRET_KEY not in trail.read_text(encoding="utf-8")
    for log_file in (hermes_home / "logs").glob("*.log"):
        for line in log_file.read_text(encoding="utf-8", errors="replace").splitlines():
            if "token_router" in line or "token-router" in line:
                assert SECRET_KEY not in line


def runtime_home(debug_log):
    return debug_log.parent.parent  # $HERMES_HOME/token-router/router-debug.log
