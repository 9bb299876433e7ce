"""Typed settings of the optional model classifier (``global.classifier``)."""

from __future__ import annotations

from typing import Any, Dict, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field


class ClassifierConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    provider: Optional[Literal["deepseek", "openrouter", "custom"]] = None
    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key_env: Optional[str] = Field(default="", description="'' means the provider's default variable; null means no key")
    timeout: Optional[float] = Field(default=None, gt=0, description="seconds; capped by router_hard_timeout_ms")
    disable_thinking: bool = False
    extra_body: Dict[str, Any] = Field(default_factory=dict)
