"""The model classifier against StubLLM on 127.0.0.1: every failure keeps the full
surface with its own reason, a good answer narrows, and nothing leaves the machine."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from hermes_token_router.classifier import call as clf
from hermes_token_router.classifier.call import classify
from hermes_token_router.classifier.config import ClassifierConfig
from hermes_token_router.devtools.harness import dead_port
from hermes_token_router.devtools.stub_llm import Reply, StubLLM

TOOLSETS = [("file", "Read, write and search files"), ("web", "Search the web and fetch pages"),
            ("terminal", "Run shell commands")]
THRESHOLD = 0.9


def answer(toolsets=("web",), intent="look something up", confidence=0.95, **extra) -> str:
    return json.dumps({"toolsets": list(toolsets), "intent": intent, "confidence": confidence, **extra})


pytestmark = pytest.mark.usefixtures("classifier_offline")


@pytest.fixture
def stub(private_stub):  # a server of each test's own: some replies stall it on purpose
    return private_stub


def local_cfg(stub: StubLLM, **over) -> ClassifierConfig:
    data = dict(enabled=True, provider="custom", base_url=stub.base_url, model="router-small", api_key_env=None)
    data.update(over)
    return ClassifierConfig(**data)


def run(stub, cfg=None, text="what's the weather in Paris today?", hard_timeout_ms=2000, threshold=THRESHOLD):
    return classify(text, TOOLSETS, cfg or local_cfg(stub), hard_timeout_ms=hard_timeout_ms,
                    confidence_threshold=threshold)


# -- the good path --------------------------------------------------------------------

def test_confident_answer_narrows_with_source_and_latency(stub):
    stub.script(answer(("web", "file"), intent="weather lookup", confidence=0.97))
    d = run(stub)
    assert d.action == "narrow" and d.narrows
    assert d.toolsets == ("web", "file")
    # The model's free-text summary paraphrases the user's request: it is checked, then
    # replaced by the (known) toolset names, so no request text reaches logs or the ledger.
    assert (d.intent, d.confidence, d.source) == ("web+file", 0.97, "classifier")
    assert d.reason == "classifier:confident"
    assert d.latency_ms > 0


def test_request_is_one_short_json_only_call_with_the_live_toolsets(stub):
    stub.script(answer())
    run(stub, text="fetch https://example.org and summarise it")
    (req,) = stub.chat_requests()
    body = req.body
    assert req.path == "/v1/chat/completions"
    assert body["model"] == "router-small" and body["stream"] is False
    system, user = body["messages"]
    assert system["role"] == "system" and "JSON" in system["content"]
    for name, desc in TOOLSETS:
        assert f"- {name}: {desc}" in system["content"]
    assert user == {"role": "user", "content": "fetch https://example.org and summarise it"}
    assert "authorization" not in req.headers  # api_key_env: null


def test_duplicate_toolsets_are_collapsed(stub):
    stub.script(answer(("web", "web", "file")))
    assert run(stub).toolsets == ("web", "file")


def test_clients_are_reused_across_calls(stub):
    stub.script(answer(), answer())
    from hermes_token_router.classifier.endpoint import _CLIENTS
    run(stub)
    first = list(_CLIENTS.values())
    run(stub)
    assert len(_CLIENTS) == 1 and list(_CLIENTS.values()) == first


# -- every failure keeps the full surface, each with its own reason --------------------

def envelope(content, finish="stop") -> str:
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]})


FAILURES = {
    "classifier:unknown_toolset": [Reply(content=answer(("web", "nuke")))],
    "classifier:confidence_missing": [Reply(content=json.dumps({"toolsets": ["web"], "intent": "x"}))],
    "classifier:confidence_out_of_range": [Reply(content=answer(confidence=1.5))],
    "classifier:confidence_not_number": [Reply(content=answer(confidence="0.95"))],
    "classifier:prose_around_json": [Reply(content="Sure! Here you go: " + answer() + " Hope that helps.")],
    "classifier:reasoning_only": [Reply(content="", reasoning_content="The user wants the web. " + answer())],
    "classifier:non_json": [Reply(content="web, probably")],
    "classifier:empty_content": [Reply(content="")],
    "classifier:not_object": [Reply(content='["web"]')],
    "classifier:empty_toolsets": [Reply(content=answer(()))],
    "classifier:toolsets_invalid": [Reply(content=json.dumps({"toolsets": "web", "intent": "x", "confidence": 1}))],
    "classifier:intent_missing": [Reply(content=json.dumps({"toolsets": ["web"], "confidence": 0.99}))],
    "classifier:below_threshold": [Reply(content=answer(confidence=0.6))],
    "classifier:truncated": [Reply(raw_body=envelope('{"toolsets": ["web"], "inte', finish="length"))],
    "classifier:bad_envelope": [Reply(raw_body="<html>upstream says hi</html>", content_type="text/html")],
    "classifier:http_400": [Reply(status=400)],
    "classifier:http_401": [Reply(status=401)],
    "classifier:http_503": [Reply(status=503)] * 3,
}


@pytest.mark.parametrize("reason", sorted(FAILURES))
def test_each_failure_keeps_full_surface_with_its_reason(stub, reason, caplog):
    stub.script(*FAILURES[reason])
    with caplog.at_level(logging.DEBUG, logger="hermes_token_router.classifier"):
        d = run(stub)
    assert d.action == "full" and d.toolsets == ()
    assert d.source == "classifier"
    assert d.reason == reason
    assert d.latency_ms > 0
    logged = [r for r in caplog.records if r.name == "hermes_token_router.classifier" and r.levelno == logging.DEBUG]
    assert any(reason in r.getMessage() for r in logged)


def test_failure_reasons_are_distinct():
    assert len(set(FAILURES)) == len(FAILURES)  # dict keys; guards against a copy-paste collapsing two cases


def test_negative_confidence_is_out_of_range(stub):
    stub.script(answer(confidence=-0.1))
    assert run(stub).reason == "classifier:confidence_out_of_range"


def test_code_fenced_json_counts_as_prose(stub):
    stub.script("```json\n" + answer() + "\n```")
    assert run(stub).reason == "classifier:prose_around_json"


def test_reasoning_only_also_when_content_is_null(stub):
    stub.script(Reply(content=None, reasoning_content=answer()))
    assert run(stub).reason == "classifier:reasoning_only"


def test_below_threshold_keeps_what_the_model_said_for_diagnostics(stub):
    stub.script(answer(intent="maybe web", confidence=0.6))
    d = run(stub)
    assert (d.action, d.intent, d.confidence) == ("full", "web", 0.6)
    stub.script(answer(confidence=0.6))
    assert run(stub, threshold=0.5).action == "narrow"  # the threshold is the caller's, not ours


def test_unknown_toolset_name_stays_out_of_the_reason(stub):
    stub.script(answer(("web", "evil name\nINJECTED line")))
    assert run(stub).reason == "classifier:unknown_toolset"


def test_client_errors_are_not_retried_but_server_errors_are(stub):
    stub.script(Reply(status=400))
    run(stub)
    assert len(stub.chat_requests()) == 1
    stub.clear()
    stub.script(Reply(status=503), Reply(status=429), Reply(content=answer()))
    d = run(stub)
    assert d.action == "narrow"
    assert len(stub.chat_requests()) == 3


def test_connection_error_fails_open():
    cfg = ClassifierConfig(enabled=True, provider="custom", base_url=f"http://127.0.0.1:{dead_port()}/v1",
                           model="m", api_key_env=None)
    d = classify("hi there", TOOLSETS, cfg, hard_timeout_ms=1000, confidence_threshold=THRESHOLD)
    assert (d.action, d.reason) == ("full", "classifier:connection_error")


def test_missing_key_fails_open_without_sending(stub):
    cfg = local_cfg(stub, provider="deepseek", model=None, api_key_env="")
    d = run(stub, cfg)
    assert (d.action, d.reason) == ("full", "classifier:no_api_key")
    assert stub.chat_requests() == []


def test_disabled_and_degenerate_inputs_fail_open_without_sending(stub):
    assert run(stub, local_cfg(stub, enabled=False)).reason == "classifier:disabled"
    assert run(stub, text="   ").reason == "classifier:empty_text"
    d = classify("hello", [], local_cfg(stub), hard_timeout_ms=2000, confidence_threshold=THRESHOLD)
    assert d.reason == "classifier:no_toolsets_offered"
    assert stub.chat_requests() == []


def test_a_bug_in_our_code_never_raises(stub, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("bug")
    monkeypatch.setattr(clf, "client_for", boom)
    d = run(stub)
    assert (d.action, d.source, d.reason) == ("full", "classifier", "classifier:internal_error")


def test_garbage_arguments_never_raise(stub):
    stub.script(answer())
    d = classify(None, TOOLSETS, local_cfg(stub), hard_timeout_ms=None, confidence_threshold=THRESHOLD)  # type: ignore[arg-type]
    assert d.action == "full" and d.reason == "classifier:empty_text"


# -- disable_thinking and extra_body arrive exactly as configured ----------------------

def test_disable_thinking_sends_chat_template_kwargs(stub):
    stub.script(answer())
    run(stub, local_cfg(stub, disable_thinking=True))
    assert stub.chat_requests()[0].body["chat_template_kwargs"] == {"enable_thinking": False}


def test_without_disable_thinking_no_chat_template_kwargs(stub):
    stub.script(answer())
    run(stub)
    assert "chat_template_kwargs" not in stub.chat_requests()[0].body


def test_extra_body_is_merged_on_top_and_forwarded_verbatim(stub):
    extra = {"chat_template_kwargs": {"reasoning_effort": "low"}, "top_k": 5, "max_tokens": 64,
             "response_format": {"type": "json_object"}, "provider": {"order": ["a", "b"], "allow_fallbacks": False}}
    stub.script(answer())
    run(stub, local_cfg(stub, disable_thinking=True, extra_body=extra))
    body = stub.chat_requests()[0].body
    assert body["chat_template_kwargs"] == {"enable_thinking": False, "reasoning_effort": "low"}
    for key in ("top_k", "max_tokens", "response_format", "provider"):
        assert body[key] == extra[key]


def test_extra_body_wins_over_disable_thinking(stub):
    stub.script(answer())
    run(stub, local_cfg(stub, disable_thinking=True, extra_body={"chat_template_kwargs": {"enable_thinking": True}}))
    assert stub.chat_requests()[0].body["chat_template_kwargs"] == {"enable_thinking": True}


# -- the deadline (a correctness contract, hence timed) --------------------------------
# Bound: deadline + 50 ms, the slack the issue allows for thread scheduling on a busy CI box.
SLACK_S = 0.050


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


@pytest.fixture
def warm(stub):
    """Import the SDK before timing: the first import costs ~0.8 s, which is real but not
    what these tests measure (it is charged to the deadline, and fails open, in use)."""
    assert clf.warm_up(local_cfg(stub))


@pytest.mark.parametrize("reply", [Reply(content=answer(), delay_s=3.0),
                                   Reply(content=answer(), stall_mid_body_s=3.0),
                                   Reply(raw_body=envelope(answer()), stall_mid_body_s=3.0)],
                         ids=["sleeps_before_headers", "hangs_mid_body", "hangs_mid_raw_body"])
def test_hung_server_costs_at_most_the_deadline(stub, warm, reply):
    stub.script(reply)
    d, elapsed = timed(lambda: run(stub, hard_timeout_ms=300))
    assert (d.action, d.reason) == ("full", "classifier:timeout")
    assert elapsed <= 0.300 + SLACK_S
    assert d.latency_ms <= 300 + SLACK_S * 1000


def test_retries_stop_at_the_deadline(stub, warm):
    stub.script(*[Reply(status=503, delay_s=0.12) for _ in range(5)])
    d, elapsed = timed(lambda: run(stub, hard_timeout_ms=300))
    assert d.action == "full" and d.reason in ("classifier:http_503", "classifier:timeout")
    assert elapsed <= 0.300 + SLACK_S


def test_attempt_timeout_leaves_room_for_a_retry(stub, warm):
    """``timeout`` is per attempt: a first attempt that hangs is cut at 0.2 s and the
    retry answers, all inside the 1 s deadline."""
    stub.script(Reply(content=answer(), delay_s=2.0), Reply(content=answer()))
    d, elapsed = timed(lambda: run(stub, local_cfg(stub, timeout=0.2), hard_timeout_ms=1000))
    assert d.action == "narrow"
    assert len(stub.chat_requests()) == 2
    assert elapsed <= 1.0 + SLACK_S


def test_timeout_is_capped_by_the_hard_deadline(stub, warm):
    stub.script(Reply(content=answer(), delay_s=2.0))
    d, elapsed = timed(lambda: run(stub, local_cfg(stub, timeout=30), hard_timeout_ms=250))
    assert d.reason == "classifier:timeout"
    assert elapsed <= 0.250 + SLACK_S


def classifier_threads() -> list:
    return [t for t in threading.enumerate() if t.name == "hermes-token-router-classifier"]


def test_abandoned_workers_are_capped_and_a_full_cap_starts_no_worker(stub, warm, monkeypatch):
    """A worker stuck where no socket timeout reaches (e.g. a DNS lookup) keeps its slot
    past its caller's deadline. Once every slot is held by an abandoned worker, a call fails
    open at once without starting another; when the stuck workers end, their slots return."""
    cap = 2
    monkeypatch.setattr(clf, "_in_flight", threading.BoundedSemaphore(cap))
    unstick = threading.Event()
    real_call = clf._call

    def stuck(*args):
        unstick.wait(10)
        raise clf._Fail("classifier:connection_error")

    monkeypatch.setattr(clf, "_call", stuck)
    before = set(classifier_threads())
    try:
        for _ in range(cap):
            assert run(stub, hard_timeout_ms=50).reason == "classifier:timeout"
        abandoned = [t for t in classifier_threads() if t not in before]
        assert len(abandoned) == cap and all(t.is_alive() for t in abandoned)
        d = run(stub, hard_timeout_ms=5000)
        assert (d.action, d.reason) == ("full", "classifier:busy")
        assert d.latency_ms < 1000, "a full cap must not wait for the deadline"
        assert [t for t in classifier_threads() if t not in before] == abandoned, "a worker was started"
    finally:
        unstick.set()
        for t in classifier_threads():
            t.join(5)
    monkeypatch.setattr(clf, "_call", real_call)
    stub.script(answer())
    assert run(stub).action == "narrow"  # both slots came back


def test_a_timeout_is_not_remembered(stub, warm):
    """No suppression window: after a timeout the next call asks the server again (each
    call is bounded by its own deadline and the worker cap, not by a memory of failures)."""
    stub.script(Reply(content=answer(), delay_s=1.0), answer())
    assert run(stub, hard_timeout_ms=200).reason == "classifier:timeout"
    assert run(stub).action == "narrow"
    assert len(stub.chat_requests()) == 2
