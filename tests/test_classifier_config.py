"""Classifier config, provider presets and secret hygiene.

Presets are checked two ways without leaving the machine: against StubLLM through the
documented ``base_url`` override (which keeps the preset's model, key variable and
headers), and against the preset's real URL through an in-process httpx transport that
records the request the SDK would send and never opens a socket.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import openai
import pytest

from hermes_token_router.classifier.call import classify, describe_endpoint
from hermes_token_router.classifier.config import ClassifierConfig
from hermes_token_router.classifier.endpoint import attempt_budget_s, resolve
from hermes_token_router.config import ConfigError, parse_config
from hermes_token_router.devtools.harness import dead_port
from hermes_token_router.devtools.stub_llm import Reply

TOOLSETS = [("file", "Files"), ("web", "Web search")]
GOOD = json.dumps({"toolsets": ["web"], "intent": "search", "confidence": 0.99})
SECRET = "sk-THIS-IS-A-SECRET-0123456789"


pytestmark = pytest.mark.usefixtures("classifier_offline")


@pytest.fixture
def stub(private_stub):  # a server of each test's own: some replies stall it on purpose
    return private_stub


def go(cfg, hard_timeout_ms=2000):
    return classify("search the web for hermes", TOOLSETS, cfg, hard_timeout_ms=hard_timeout_ms,
                    confidence_threshold=0.9)


def load(text: str):
    return parse_config(text, Path("/tmp/router.yaml"))


# -- config -------------------------------------------------------------------------

def test_defaults_are_off_and_deepseek_when_enabled():
    cfg = ClassifierConfig()
    assert cfg.enabled is False and cfg.api_key_env == "" and cfg.extra_body == {}
    ep = resolve(ClassifierConfig(enabled=True))
    assert (ep.provider, ep.base_url, ep.model, ep.key_env) == (
        "deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY")


def test_presets_resolve_to_their_urls_models_keys_and_headers():
    ep = resolve(ClassifierConfig(enabled=True, provider="openrouter"))
    assert (ep.base_url, ep.model, ep.key_env) == ("https://openrouter.ai/api/v1", "deepseek/deepseek-chat",
                                                   "OPENROUTER_API_KEY")
    assert dict(ep.headers) == {"HTTP-Referer": "https://hermes-agent.nousresearch.com", "X-Title": "hermes-token-router"}
    custom = resolve(ClassifierConfig(provider="custom", base_url="http://127.0.0.1:9/v1/", model="m"))
    assert (custom.base_url, custom.key_env, custom.headers) == ("http://127.0.0.1:9/v1", None, ())
    named = resolve(ClassifierConfig(provider="openrouter", api_key_env="MY_ROUTER_KEY", model="x/y"))
    assert (named.key_env, named.model) == ("MY_ROUTER_KEY", "x/y")
    assert resolve(ClassifierConfig(provider="deepseek", api_key_env=None)).key_env is None


def test_profile_overrides_global_classifier():
    parsed = load("""
global:
  classifier: {enabled: true, provider: openrouter, disable_thinking: true}
profiles:
  local: {classifier: {provider: custom, base_url: "http://127.0.0.1:8080/v1", model: qwen3-0.6b, api_key_env: null}}
""")
    assert parsed.for_profile("default").classifier.provider == "openrouter"
    local = parsed.for_profile("local").classifier
    assert (local.enabled, local.provider, local.model, local.api_key_env, local.disable_thinking) == (
        True, "custom", "qwen3-0.6b", None, True)


@pytest.mark.parametrize("block, names", [
    ("{provider: custom, model: m}", ["classifier.provider custom needs classifier.base_url", "to fix"]),
    ("{provider: custom, base_url: 'http://h/v1'}", ["classifier.model", "to fix"]),
    ("{base_url: 'http://h/v1'}", ["classifier.provider", "provider: custom"]),
    ("{provider: custom, base_url: 'ftp://h', model: m}", ["classifier.base_url", "http"]),
    ("{provider: bogus}", ["classifier.provider", "deepseek"]),
    ("{timeout: 0}", ["classifier.timeout"]),
    ("{timeout: 600}", ["classifier.timeout"]),
    ("{extra_body: {messages: []}}", ["classifier.extra_body.messages", "to fix"]),
    ("{extra_body: {stream: true}}", ["classifier.extra_body.stream"]),
    ("{modle: deepseek-chat}", ["classifier.modle", "known keys"]),
])
def test_bad_config_names_the_key_and_the_fix(block, names):
    with pytest.raises(ConfigError) as err:
        load(f"global:\n  classifier: {block}\n")
    message = str(err.value)
    for part in names:
        assert part in message
    assert "fix" in message


@pytest.mark.parametrize("block", [f"{{api_key_env: {SECRET}}}", f"{{api_key: {SECRET}}}",
                                   f"{{openai_api_key: {SECRET}}}", f"{{api_key_env: 'Bearer {SECRET}'}}"])
def test_a_key_pasted_into_config_is_refused_without_echoing_it(block):
    with pytest.raises(ConfigError) as err:
        load(f"global:\n  classifier: {block}\n")
    assert SECRET not in str(err.value)
    assert "environment variable" in str(err.value)


def test_timeout_is_capped_by_the_hard_deadline():
    assert attempt_budget_s(ClassifierConfig(timeout=5), 2000) == 2.0
    assert attempt_budget_s(ClassifierConfig(timeout=0.5), 2000) == 0.5
    assert attempt_budget_s(ClassifierConfig(), 1500) == 1.5


# -- presets on the wire ------------------------------------------------------------

def test_deepseek_preset_at_a_base_url_override(stub, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    stub.script(GOOD)
    d = go(ClassifierConfig(enabled=True, base_url=stub.base_url, provider="deepseek"))
    assert d.action == "narrow"
    (req,) = stub.chat_requests()
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "deepseek-chat"
    assert req.headers["authorization"] == f"Bearer {SECRET}"
    assert "x-title" not in req.headers and "http-referer" not in req.headers


def test_openrouter_preset_at_a_base_url_override(stub, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)
    stub.script(GOOD)
    d = go(ClassifierConfig(enabled=True, provider="openrouter", base_url=stub.base_url))
    assert d.action == "narrow"
    (req,) = stub.chat_requests()
    assert req.body["model"] == "deepseek/deepseek-chat"
    assert req.headers["authorization"] == f"Bearer {SECRET}"
    assert req.headers["http-referer"] == "https://hermes-agent.nousresearch.com"
    assert req.headers["x-title"] == "hermes-token-router"


@pytest.fixture
def captured(monkeypatch):
    """Every SDK client gets an in-process transport: requests are recorded, answered
    with a valid completion, and never reach a socket."""
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": GOOD}, "finish_reason": "stop"}]})

    real = openai.OpenAI
    def client(*args, **kwargs):  # our http_client (no redirects) is replaced by the recording one
        return real(*args, **{**kwargs, "http_client": httpx.Client(transport=httpx.MockTransport(handler))})

    monkeypatch.setattr(openai, "OpenAI", client)
    return seen


@pytest.mark.parametrize("provider, env, url, model", [
    ("deepseek", "DEEPSEEK_API_KEY", "https://api.deepseek.com/v1/chat/completions", "deepseek-chat"),
    ("openrouter", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1/chat/completions", "deepseek/deepseek-chat"),
])
def test_presets_target_their_real_urls(captured, monkeypatch, provider, env, url, model):
    monkeypatch.setenv(env, SECRET)
    d = go(ClassifierConfig(enabled=True, provider=provider))
    assert d.action == "narrow"
    (req,) = captured
    assert str(req.url) == url
    assert json.loads(req.content)["model"] == model
    assert req.headers["authorization"] == f"Bearer {SECRET}"
    assert ("x-title" in req.headers) == (provider == "openrouter")


def test_unset_provider_means_deepseek_on_the_wire(captured, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", SECRET)
    go(ClassifierConfig(enabled=True))
    assert str(captured[0].url) == "https://api.deepseek.com/v1/chat/completions"


def test_custom_with_null_key_sends_no_openai_credentials_from_the_environment(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-should-not-leak")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-should-not-leak")
    stub.script(GOOD)
    go(ClassifierConfig(enabled=True, provider="custom", base_url=stub.base_url, model="m", api_key_env=None))
    (req,) = stub.chat_requests()
    assert "authorization" not in req.headers
    assert "openai-organization" not in req.headers and "openai-project" not in req.headers
    assert SECRET.encode() not in req.raw


def test_custom_with_named_key_sends_it(stub, monkeypatch):
    monkeypatch.setenv("MY_ROUTER_KEY", SECRET)
    stub.script(GOOD)
    go(ClassifierConfig(enabled=True, provider="custom", base_url=stub.base_url, model="m",
                        api_key_env="MY_ROUTER_KEY"))
    assert stub.chat_requests()[0].headers["authorization"] == f"Bearer {SECRET}"


# -- secrets ------------------------------------------------------------------------

def test_key_never_reaches_logs_reasons_or_diagnostics(stub, monkeypatch, caplog):
    monkeypatch.setenv("MY_ROUTER_KEY", SECRET)
    cfg = ClassifierConfig(enabled=True, provider="custom", base_url=stub.base_url, model="m",
                           api_key_env="MY_ROUTER_KEY")
    echo = {"error": {"message": f"invalid key {SECRET}", "key": SECRET}}
    stub.script(GOOD, Reply(status=401, error_body=echo), Reply(raw_body=f"bad {SECRET}"),
                *[Reply(status=500, error_body=echo)] * 3, "not json " + SECRET)
    bad_url = ClassifierConfig(enabled=True, provider="custom", base_url=f"http://127.0.0.1:{dead_port()}/v1",
                               model="m", api_key_env="MY_ROUTER_KEY")
    with caplog.at_level(logging.DEBUG):  # every logger, the SDK's and httpx's included
        decisions = [go(cfg) for _ in range(5)] + [go(bad_url)]
        status = describe_endpoint(cfg, 2000)
    assert [d.reason for d in decisions] == ["classifier:confident", "classifier:http_401", "classifier:bad_envelope",
                                             "classifier:http_500", "classifier:non_json",
                                             "classifier:connection_error"]
    assert caplog.records, "the debug log should have said something"
    assert SECRET not in caplog.text
    assert all(SECRET not in json.dumps(d.to_json()) for d in decisions)
    assert SECRET not in json.dumps(status)
    assert status["api_key_env"] == "MY_ROUTER_KEY" and status["api_key_present"] is True


def test_describe_endpoint_reports_where_calls_go():
    info = describe_endpoint(ClassifierConfig(enabled=True, provider="openrouter", timeout=5), 2000)
    assert info["provider"] == "openrouter"
    assert info["base_url"] == "https://openrouter.ai/api/v1"
    assert info["model"] == "deepseek/deepseek-chat"
    assert info["api_key_env"] == "OPENROUTER_API_KEY" and info["api_key_present"] is False
    assert info["attempt_timeout_s"] == 2.0 and info["deadline_ms"] == 2000
    local = describe_endpoint(ClassifierConfig(provider="custom", base_url="http://u:pw@127.0.0.1:1/v1", model="m",
                                               api_key_env=None))
    assert local["api_key_env"] is None and local["api_key_present"] is None
    assert "pw" not in local["base_url"]


def test_missing_key_reason_names_the_variable_only_in_the_log(caplog):
    with caplog.at_level(logging.DEBUG, logger="hermes_token_router.classifier"):
        d = go(ClassifierConfig(enabled=True, provider="openrouter"))
    assert d.reason == "classifier:no_api_key"
    assert "OPENROUTER_API_KEY" in caplog.text
