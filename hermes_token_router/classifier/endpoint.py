"""Where the classifier's request goes: provider presets, the key, and a cached client.

Presets exist so ``provider: deepseek`` or ``provider: openrouter`` is the whole config a
hosted user needs. ``base_url`` on a preset replaces only the URL and keeps the preset's
model, key variable and headers -- that is how tests (and proxies/gateways in front of a
hosted provider) point a preset somewhere else without losing what makes it that preset.

The key is read from the environment on every call (so a rotated key takes effect without
a restart) and only ever handed to the SDK; nothing here logs or returns it.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple
from urllib.parse import urlsplit, urlunsplit

from .config import ClassifierConfig

Headers = Tuple[Tuple[str, str], ...]

# OpenRouter ranks and attributes traffic by these two headers; Hermes sends the same pair.
OPENROUTER_HEADERS: Headers = (("HTTP-Referer", "https://hermes-agent.nousresearch.com"),
                               ("X-Title", "hermes-token-router"))


@dataclass(frozen=True)
class Preset:
    base_url: Optional[str]
    model: Optional[str]
    key_env: Optional[str]
    headers: Headers = ()


PRESETS: Dict[str, Preset] = {
    # deepseek-chat is DeepSeek's non-thinking model: one short JSON answer, no reasoning burn.
    "deepseek": Preset("https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY"),
    "openrouter": Preset("https://openrouter.ai/api/v1", "deepseek/deepseek-chat", "OPENROUTER_API_KEY",
                         OPENROUTER_HEADERS),
    "custom": Preset(None, None, None),
}
DEFAULT_PROVIDER = "deepseek"


@dataclass(frozen=True)
class Endpoint:
    provider: str
    base_url: str
    model: str
    key_env: Optional[str]  # None: send no key
    headers: Headers


def resolve(cfg: ClassifierConfig) -> Endpoint:
    """The concrete endpoint for a validated config (validation guarantees custom has a URL
    and a model, so the fallbacks below are only reached for presets)."""
    provider = cfg.provider or DEFAULT_PROVIDER
    preset = PRESETS[provider]
    base_url = (cfg.base_url or preset.base_url or "").strip().rstrip("/")
    model = (cfg.model or preset.model or "").strip()
    if cfg.api_key_env is None:
        key_env = None
    elif cfg.api_key_env == "":
        key_env = preset.key_env
    else:
        key_env = cfg.api_key_env
    return Endpoint(provider, base_url, model, key_env, preset.headers)


class MissingKey(Exception):
    """The named variable is unset or empty; the message names the variable, never a value."""


def read_key(ep: Endpoint) -> str:
    """The key to send ('' for none); raises ``MissingKey`` rather than sending nothing to
    a provider that expects a key, which would only come back as a less clear 401."""
    if ep.key_env is None:
        return ""
    key = os.environ.get(ep.key_env, "").strip()
    if not key:
        raise MissingKey(f"environment variable {ep.key_env} is unset or empty")
    return key


_CLIENTS: "OrderedDict[tuple, Any]" = OrderedDict()
_CLIENTS_LOCK = threading.Lock()
_MAX_CLIENTS = 8


def client_for(ep: Endpoint, key: str) -> Any:
    """One SDK client per (URL, key, headers): connection reuse saves a TLS handshake per
    turn. The key enters the cache only as a digest. Old entries are dropped, not closed,
    because an abandoned call may still be using them."""
    digest = hashlib.sha256(key.encode()).hexdigest()
    cache_key = (ep.base_url, digest, ep.headers)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(cache_key)
        if client is not None:
            _CLIENTS.move_to_end(cache_key)
            return client
    import openai  # deferred: the rules-only path never pays for importing the SDK

    # Redirects are not followed: a 307 to another origin would send the user's text (and
    # the key's Authorization header) to a server nobody configured. A redirect is an
    # ``http_3xx`` refusal instead, and the fix is the final URL in ``base_url``.
    client = openai.OpenAI(api_key=key, base_url=ep.base_url, max_retries=0, default_headers=dict(ep.headers),
                           http_client=openai.DefaultHttpxClient(follow_redirects=False))
    # The SDK fills these from OPENAI_ORG_ID / OPENAI_PROJECT_ID; they are OpenAI account
    # identifiers and have no business reaching DeepSeek, OpenRouter or a local server.
    client.organization = None
    client.project = None
    with _CLIENTS_LOCK:
        _CLIENTS[cache_key] = client
        _CLIENTS.move_to_end(cache_key)
        while len(_CLIENTS) > _MAX_CLIENTS:
            _CLIENTS.popitem(last=False)
    return client


def clear_clients() -> None:
    with _CLIENTS_LOCK:
        _CLIENTS.clear()


def _public_url(url: str) -> str:
    """The URL without any user:password part, for display."""
    try:
        parts = urlsplit(url)
        if "@" in parts.netloc:
            return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))
    except ValueError:
        return "<unparseable>"
    return url


def attempt_budget_s(cfg: ClassifierConfig, hard_timeout_ms: Optional[int]) -> Optional[float]:
    """Seconds one attempt may take: ``timeout`` capped by the hard deadline."""
    hard = hard_timeout_ms / 1000.0 if hard_timeout_ms is not None else None
    if cfg.timeout is None:
        return hard
    return min(cfg.timeout, hard) if hard is not None else cfg.timeout


def describe_endpoint(cfg: ClassifierConfig, hard_timeout_ms: Optional[int] = None) -> Dict[str, Any]:
    """What ``/router status`` and diagnostics show: where the call goes and whether a key
    is present -- the key's variable name, never its value."""
    try:
        ep = resolve(cfg)
        key_set: Optional[bool] = None if ep.key_env is None else bool(os.environ.get(ep.key_env, "").strip())
        return {
            "enabled": cfg.enabled,
            "provider": ep.provider,
            "base_url": _public_url(ep.base_url),
            "model": ep.model,
            "api_key_env": ep.key_env,
            "api_key_present": key_set,
            "headers": dict(ep.headers),
            "attempt_timeout_s": attempt_budget_s(cfg, hard_timeout_ms),
            "deadline_ms": hard_timeout_ms,
            "disable_thinking": cfg.disable_thinking,
            "extra_body_keys": sorted(cfg.extra_body),
        }
    except Exception as exc:  # diagnostics must never raise into /router status
        return {"enabled": getattr(cfg, "enabled", False), "error": type(exc).__name__}
