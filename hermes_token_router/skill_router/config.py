"""Typed settings of the skill router (``global.skills``)."""

from __future__ import annotations

from typing import Dict, List, Optional, Union

from pydantic import BaseModel, ConfigDict, Field


class SkillRouterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    nicknames: Dict[str, Union[str, List[str]]] = Field(default_factory=dict)
    index_dir: Optional[str] = None
    max_chars: int = Field(default=15000, gt=0)
