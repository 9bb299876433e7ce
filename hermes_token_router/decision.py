"""The routing decision: the one value every classifier returns and every consumer reads.

Kept tiny and frozen so rules, the model classifier, the CLI and the hooks can pass it
around without copying, and so ``to_json`` is the single place the public field names
(``hermes-token-router route --json``) are spelled. ``clauses`` says which rule explained
each part of the request, so a reviewer can see why a compound request was (not) narrowed;
it is left out of the compact form so ``route --jsonl`` rows keep their fields.
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
    # (clause text, what explained it): an intent list, "-" (asks for no action) or
    # "unexplained:<action>" / "widened:<action>"; empty for one-clause messages.
    clauses: Tuple[Tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def narrows(self) -> bool:
        return self.action == "narrow"

    def with_latency(self, latency_ms: float) -> "Decision":
        return replace(self, latency_ms=latency_ms)

    def to_json(self, detail: bool = False) -> dict:
        """The public fields; ``detail`` adds the clauses (``route --json``)."""
        out = {
            "action": self.action,
            "toolsets": list(self.toolsets),
            "intent": self.intent,
            "confidence": round(float(self.confidence), 4),
            "source": self.source,
            "reason": self.reason,
            "latency_ms": round(float(self.latency_ms), 4),
        }
        if detail:
            out["clauses"] = [{"text": t, "explained_by": e} for t, e in self.clauses]
        return out


def full_surface(reason: str, *, intent: str = "unknown", source: Source = "fallback",
                 confidence: float = 0.0) -> Decision:
    """A fail-open decision: keep every tool the host offered."""
    return Decision(action="full", toolsets=(), intent=intent, confidence=confidence,
                    source=source, reason=reason)
