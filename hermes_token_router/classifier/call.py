"""The optional model classifier: one short OpenAI-compatible request that names the
toolsets a first turn needs, or -- on any doubt at all -- keeps the full tool surface.

Why the call runs on a worker thread: HTTP client timeouts bound each socket operation,
not the whole call, so a server that trickles bytes or stalls halfway through a body (or
a slow DNS lookup, which no HTTP timeout covers) could hold the user's turn far past
``router_hard_timeout_ms``. The caller waits on the worker for exactly the time left and
walks away at the deadline; the abandoned worker ends on its own socket timeouts, which
are never longer than the budget, and a small cap on abandoned workers stops a hung
server from piling them up.

Retries (tenacity) exist for the transient failures (connection refused/reset, 429,
5xx) and only start while enough of the deadline remains for another attempt.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Dict, List, Sequence, Tuple

from .config import ClassifierConfig
from .contract import MAX_REPLY_CHARS, build_messages, parse_answer, read_envelope
from .endpoint import (MissingKey, attempt_budget_s, client_for, describe_endpoint, read_key,
                                  resolve)
from ..decision import Decision, full_surface

log = logging.getLogger("hermes_token_router.classifier")

__all__ = ["classify", "describe_endpoint", "request_body", "warm_up"]

DEFAULT_HARD_TIMEOUT_MS = 2000
MAX_ATTEMPTS = 3
MIN_ATTEMPT_S = 0.05          # no attempt starts with less time than this left
BACKOFF_S = (0.05, 0.15)      # waits before the 2nd and 3rd attempt
MAX_TOKENS = 256              # the answer is ~30 tokens; room for a model that pads
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_WORKERS = 16              # calls in flight at once, counting ones abandoned at their deadline
# The whole HTTP body, refused unread past this (JSON escapes can make a 64 K-char answer ~6x longer).
MAX_BODY_BYTES = 8 * MAX_REPLY_CHARS

_in_flight = threading.BoundedSemaphore(MAX_WORKERS)


class _Fail(Exception):
    """One failed attempt: its reason, whether another attempt could help, and a detail
    already scrubbed of the key."""

    def __init__(self, reason: str, retryable: bool = False, detail: str = "") -> None:
        super().__init__(reason)
        self.reason, self.retryable, self.detail = reason, retryable, detail


def _deep_merge(base: Dict[str, Any], top: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def extra_body_for(cfg: ClassifierConfig) -> Dict[str, Any]:
    """``disable_thinking`` sugar first, the user's ``extra_body`` merged on top (so an
    explicit ``chat_template_kwargs.enable_thinking`` in extra_body wins)."""
    base: Dict[str, Any] = {}
    if cfg.disable_thinking:
        base["chat_template_kwargs"] = {"enable_thinking": False}
    return _deep_merge(base, cfg.extra_body)


def request_body(text: str, toolsets: Sequence[Tuple[str, str]], cfg: ClassifierConfig) -> Dict[str, Any]:
    """The JSON body sent (minus nothing): exposed for diagnostics and tests."""
    body: Dict[str, Any] = {"model": resolve(cfg).model, "messages": build_messages(text, toolsets),
                            "temperature": 0, "max_tokens": MAX_TOKENS, "stream": False}
    body.update(extra_body_for(cfg))
    return body


def _error_code(exc: Any) -> str:
    """The provider's machine-readable error code (``model_not_found``), when it is one."""
    code = getattr(exc, "code", None)
    if isinstance(code, str) and code.replace("_", "").replace("-", "").replace(".", "").isalnum() and len(code) <= 60:
        return f"code={code}"
    return ""


def _attempt(client: Any, kwargs: Dict[str, Any], deadline: float, attempt_s: float, key: str) -> Tuple[int, bytes]:
    import openai

    left = deadline - time.perf_counter()
    budget = min(attempt_s, left)
    if budget < MIN_ATTEMPT_S / 2:
        raise _Fail("classifier:timeout", detail="no time left for an attempt")
    try:
        raw = client.chat.completions.with_raw_response.create(timeout=budget, **kwargs)
        resp = raw.http_response
        return resp.status_code, resp.content
    except openai.APITimeoutError:
        raise _Fail("classifier:timeout", retryable=True, detail=f"attempt timed out after {budget:.3f}s") from None
    except openai.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        raise _Fail("classifier:connection_error", retryable=True, detail=type(cause).__name__) from None
    except openai.APIStatusError as exc:
        # Only the status and the provider's error code: error bodies often echo the request
        # (the user's text) or the key, and nothing of either may reach the debug log.
        raise _Fail(f"classifier:http_{exc.status_code}", retryable=exc.status_code in RETRYABLE_STATUS,
                    detail=_error_code(exc)) from None


def _call(client: Any, kwargs: Dict[str, Any], deadline: float, attempt_s: float, key: str) -> Tuple[int, bytes]:
    from tenacity import Retrying, retry_if_exception

    def stop(state: Any) -> bool:
        left = deadline - time.perf_counter() - state.upcoming_sleep
        return state.attempt_number >= MAX_ATTEMPTS or left < MIN_ATTEMPT_S

    def wait(state: Any) -> float:
        return BACKOFF_S[min(state.attempt_number, len(BACKOFF_S)) - 1]

    retrying = Retrying(stop=stop, wait=wait, reraise=True,
                        retry=retry_if_exception(lambda e: isinstance(e, _Fail) and e.retryable))
    return retrying(_attempt, client, kwargs, deadline, attempt_s, key)


def _worker(client: Any, kwargs: Dict[str, Any], deadline: float, attempt_s: float, key: str,
            box: List[Any], done: threading.Event) -> None:
    try:
        box.append(_call(client, kwargs, deadline, attempt_s, key))
    except _Fail as exc:
        box.append(exc)
    except BaseException as exc:  # an SDK surprise must become a reason, not a lost thread
        box.append(_Fail("classifier:internal_error", detail=type(exc).__name__))
    finally:
        _in_flight.release()
        done.set()


def _full(reason: str, *, intent: str = "unknown", confidence: float = 0.0) -> Decision:
    return full_surface(reason, intent=intent, source="classifier", confidence=confidence)


def _run(text: str, toolsets: Sequence[Tuple[str, str]], cfg: ClassifierConfig, start: float,
         hard_timeout_ms: int, threshold: float) -> Tuple[Decision, str]:
    if not cfg.enabled:
        return _full("classifier:disabled"), ""
    names = [name for name, _ in toolsets]
    if not names:
        return _full("classifier:no_toolsets_offered"), ""
    if not isinstance(text, str) or not text.strip():
        return _full("classifier:empty_text"), ""
    ep = resolve(cfg)
    try:
        key = read_key(ep)
    except MissingKey as exc:
        return _full("classifier:no_api_key"), str(exc)

    deadline = start + hard_timeout_ms / 1000.0
    attempt_s = attempt_budget_s(cfg, hard_timeout_ms) or hard_timeout_ms / 1000.0
    body = request_body(text, toolsets, cfg)
    extra = {k: v for k, v in body.items() if k not in ("model", "messages", "stream")}
    kwargs = {"model": body["model"], "messages": body["messages"], "stream": False, "extra_body": extra}
    client = client_for(ep, key)

    if not _in_flight.acquire(blocking=False):
        return _full("classifier:busy"), f"{MAX_WORKERS} calls already in flight"
    box: List[Any] = []
    done = threading.Event()
    worker = threading.Thread(target=_worker, args=(client, kwargs, deadline, attempt_s, key, box, done),
                              name="hermes-token-router-classifier", daemon=True)
    try:
        worker.start()
    except BaseException:
        _in_flight.release()
        raise
    if not done.wait(max(0.0, deadline - time.perf_counter())) or not box:
        return _full("classifier:timeout"), f"no answer within {hard_timeout_ms} ms"
    outcome = box[0]
    if isinstance(outcome, _Fail):
        return _full(outcome.reason), outcome.detail
    status, payload = outcome
    if len(payload) > MAX_BODY_BYTES:
        return _full("classifier:reply_too_large"), f"HTTP {status}: {len(payload)} bytes > {MAX_BODY_BYTES}"
    try:
        content, reasoning, finish = read_envelope(payload)
    except (ValueError, RecursionError) as exc:
        return _full("classifier:bad_envelope"), f"HTTP {status}: {type(exc).__name__}"
    answer = parse_answer(content, reasoning, finish, names, threshold)
    if answer.reason is not None:
        return _full(answer.reason, intent=answer.intent, confidence=answer.confidence), answer.detail
    return Decision(action="narrow", toolsets=answer.toolsets, intent=answer.intent, confidence=answer.confidence,
                    source="classifier", reason="classifier:confident"), ""


def classify(text: str, toolsets: Sequence[Tuple[str, str]], cfg: ClassifierConfig, *,
             hard_timeout_ms: int, confidence_threshold: float) -> Decision:
    """Ask the configured model which toolsets ``text`` needs. Never raises and never
    outlasts ``hard_timeout_ms``; anything short of a confident, well-formed answer naming
    only offered toolsets returns ``action="full"`` with a ``classifier:*`` reason."""
    start = time.perf_counter()
    if not isinstance(hard_timeout_ms, (int, float)) or isinstance(hard_timeout_ms, bool) or hard_timeout_ms <= 0:
        hard_timeout_ms = DEFAULT_HARD_TIMEOUT_MS
    detail = ""
    try:
        decision, detail = _run(text, list(toolsets or ()), cfg, start, int(hard_timeout_ms),
                                float(confidence_threshold))
    except Exception as exc:  # our bug must cost the user tokens, never their turn
        decision, detail = _full("classifier:internal_error"), type(exc).__name__
    decision = decision.with_latency((time.perf_counter() - start) * 1000.0)
    try:
        log.debug("classifier %s action=%s toolsets=%s confidence=%.3f latency_ms=%.1f%s", decision.reason,
                  decision.action, ",".join(decision.toolsets) or "-", decision.confidence, decision.latency_ms,
                  f" detail={detail}" if detail else "")
    except Exception:
        pass
    return decision


def warm_up(cfg: ClassifierConfig) -> bool:
    """Import the SDK and build the cached client ahead of the first turn. A cold
    ``import openai`` plus its lazily loaded chat resource costs ~0.8 s, which would eat
    the first call's deadline outside Hermes (inside Hermes the SDK is already loaded).
    Meant for a background thread at plugin start; returns whether a client is ready."""
    try:
        if not cfg.enabled:
            return False
        ep = resolve(cfg)
        client = client_for(ep, read_key(ep))
        client.chat.completions.with_raw_response  # noqa: B018 -- loads the resource modules
        import tenacity  # noqa: F401
        return True
    except Exception as exc:
        log.debug("classifier warm_up skipped: %s", type(exc).__name__)
        return False
