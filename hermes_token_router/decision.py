"""The routing decision: the one value every classifier returns and every consumer reads.

Kept tiny and frozen so rules, the model classifier, the CLI and the hooks can pass it
around without copying, and so ``to_json`` is the single place the public field names
(``hermes-token-router route --json``) are spelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, Tuple

Action = Literal["narrow", "full"]
Source = Literal["rules", "classifier", "fallback"]


@dataclass(frozen=True)
class Decision:
    action: Action
    toolsets: Tuple[str, ...]
    intent: str
    confidence: float
    source: Source
    reason: str
    latency_ms: float = field(default=0.0, compare=False)

    @property
    def narrows(self) -> bool:
        return self.action == "narrow"

    def with_latency(self, latency_ms: float) -> "Decision":
        return replace(self, latency_ms=latency_ms)

    def to_json(self) -> dict:
        return {
            "action": self.action,
            "toolsets": list(self.toolsets),
            "intent": self.intent,
            "confidence": round(float(self.confidence), 4),
            "source": self.source,
            "reason": self.reason,
            "latency_ms": round(float(self.latency_ms), 4),
        }


def full_surface(reason: str, *, intent: str = "unknown", source: Source = "fallback",
                 confidence: float = 0.0) -> Decision:
    """A fail-open decision: keep every tool the host offered."""
    return Decision(action="full", toolsets=(), intent=intent, confidence=confidence,
                    source=source, reason=reason)
