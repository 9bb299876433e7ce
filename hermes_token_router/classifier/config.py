"""Typed settings of the optional model classifier (``global.classifier``).

Why the checks live here rather than at call time: a classifier that is misconfigured
would otherwise fail open on every turn and quietly stop saving anything, so mistakes a
user can fix (a custom provider without a URL, a key pasted where its variable's NAME
belongs) are refused when the file is loaded, with the key and the fix in the message.

``api_key_env`` has three meanings, kept from the first schema so existing files read the
same:

* ``""`` (the default): the provider's usual variable -- ``DEEPSEEK_API_KEY`` for
  ``deepseek``, ``OPENROUTER_API_KEY`` for ``openrouter``; ``custom`` has no usual
  variable, so ``""`` sends no key there (a hosted key is never sent to a URL the
  preset does not own unless the user names the variable).
* ``"NAME"``: read the key from environment variable ``NAME`` at call time.
* ``null``: send no key at all (a local server).
"""

from __future__ import annotations

import re
from typing import Any, Dict, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

Provider = Literal["deepseek", "openrouter", "custom"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# Keys of the request body the classifier itself owns; letting extra_body replace them
# would silently break the JSON contract (stream) or the prompt (messages).
RESERVED_BODY_KEYS = ("messages", "stream", "model", "n")


def _error(message: str) -> PydanticCustomError:
    """A validation error whose text is exactly ``message`` (no "Value error," prefix)."""
    return PydanticCustomError("classifier_config", message)


class ClassifierConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    provider: Optional[Provider] = Field(
        default=None, description="deepseek (used when unset), openrouter, or custom (needs base_url and model)")
    model: Optional[str] = Field(default=None, description="model id; presets have a default, custom needs one")
    base_url: Optional[str] = Field(
        default=None, description="custom endpoint, or an override of a preset's URL that keeps its headers/model")
    api_key_env: Optional[str] = Field(
        default="", description="NAME of the env variable holding the key; '' = provider default; null = no key")
    timeout: Optional[float] = Field(
        default=None, gt=0, le=60,
        description="seconds per attempt; the whole call never outlasts router_hard_timeout_ms")
    disable_thinking: bool = Field(
        default=False, description="adds extra_body.chat_template_kwargs.enable_thinking = false")
    extra_body: Dict[str, Any] = Field(
        default_factory=dict, description="merged on top of the request body and sent verbatim")

    @model_validator(mode="before")
    @classmethod
    def _check(cls, raw: Any) -> Any:
        """Runs on the raw mapping so a rejected ``api_key_env`` value (possibly a pasted
        key) is never echoed: the config loader prints the offending input only for
        scalars, and here the input is the whole mapping."""
        if not isinstance(raw, dict):
            return raw
        unknown = sorted(str(k) for k in raw if k not in cls.model_fields)
        if unknown:
            # Reported here, by name only: the generic "extra key" error would print the
            # value, and the likeliest unknown key is ``api_key: <the key>``.
            hint = ("put the key in an environment variable and name it in api_key_env"
                    if any("key" in k.lower() or "token" in k.lower() or "secret" in k.lower() for k in unknown)
                    else "remove it; known keys: " + ", ".join(cls.model_fields))
            raise _error(f"classifier.{unknown[0]} is not a classifier setting (value not shown); to fix, {hint}")
        env = raw.get("api_key_env", "")
        if env is not None and env != "":
            if not isinstance(env, str) or not _ENV_NAME.match(env):
                raise _error(
                    "classifier.api_key_env must be the NAME of an environment variable, not the key "
                    "itself (value not shown); to fix, export the key as e.g. DEEPSEEK_API_KEY and write "
                    "api_key_env: DEEPSEEK_API_KEY, or null for a local server without a key")
        provider = raw.get("provider")
        base_url = raw.get("base_url")
        if base_url is not None:
            if not isinstance(base_url, str) or not re.match(r"^https?://[^\s/]+", base_url.strip()):
                raise _error(
                    "classifier.base_url is not an http(s) URL; "
                    "to fix, use e.g. http://127.0.0.1:8080/v1")
            if provider is None:
                raise _error(
                    "classifier.base_url is set but classifier.provider is not; to fix, add provider: custom "
                    "(or deepseek/openrouter to keep that preset's model and headers at another URL)")
        if provider == "custom":
            if not base_url:
                raise _error("classifier.provider custom needs classifier.base_url; "
                                 "to fix, add base_url: http://127.0.0.1:8080/v1 (your server's /v1 URL)")
            if not raw.get("model"):
                raise _error("classifier.provider custom needs classifier.model; "
                                 "to fix, add model: <the id your server serves>")
        model = raw.get("model")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise _error("classifier.model must be a non-empty string; to fix, use e.g. model: deepseek-chat")
        extra = raw.get("extra_body")
        if isinstance(extra, dict):
            clash = [k for k in RESERVED_BODY_KEYS if k in extra]
            if clash:
                raise _error(
                    f"classifier.extra_body.{clash[0]} is set by the classifier itself; "
                    f"to fix, remove it (use classifier.model for the model)")
        return raw
