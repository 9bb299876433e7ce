"""The routing decision: which toolsets a session's first request needs, or "full".

Order: deterministic rules (free, instant) and, when configured, the optional model
classifier. With ``deterministic_rules_enabled: true`` the classifier only sees requests
the rules did not decide; with ``false`` the rules are off and the classifier decides
alone. Anything below ``confidence_threshold`` is "full": uncertainty never costs
capability. This module never touches Hermes; the toolsets it may name come in as data.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple

from .config import RouterConfig
from .decision import Decision, full_surface
from .learned import READING_INTENT

log = logging.getLogger("hermes_token_router.router")

Classify = Callable[[str], Decision]


def _rules_classify(shares: Optional[Mapping[str, float]] = None) -> Classify:
    from .rules import default_rules

    rules = default_rules()
    return rules.classify if shares is None else (lambda text: rules.classify(text, shares))


def _model_classify(text: str, toolsets: Sequence[Tuple[str, str]], cfg: RouterConfig) -> Decision:
    from .classifier.call import classify

    return classify(text, toolsets, cfg.classifier, hard_timeout_ms=cfg.router_hard_timeout_ms,
                    confidence_threshold=cfg.confidence_threshold)


def decide(text: str, cfg: RouterConfig, toolsets: Sequence[Tuple[str, str]] = (), *,
           rules: Optional[Classify] = None,
           model: Optional[Callable[[str, Sequence[Tuple[str, str]], RouterConfig], Decision]] = None,
           dynamic: Optional[Callable[[str], Sequence[Any]]] = None,
           shares: Optional[Mapping[str, float]] = None) -> Decision:
    """Decide the first-turn surface. Raises only on programming errors in a classifier;
    the hook layer turns those into a full surface and one warning. ``dynamic`` is the
    session's dynamic-toolset matcher (``DynamicIndex.match``), composed with the built-in
    decision by ``dynamic_route.compose``. ``shares``: each toolset's share of this
    surface's schema tokens, which prices what the shipped rules' learned model may add."""
    started = time.perf_counter()
    if not (text or "").strip():
        return full_surface("empty_message")
    decision: Optional[Decision] = None
    matches: Optional[Tuple[Any, ...]] = None  # the dynamic index's, computed at most once
    if cfg.deterministic_rules_enabled:
        decision = (rules or _rules_classify(shares))(text)
        if decision.narrows and decision.confidence < cfg.confidence_threshold:
            decision = full_surface(f"rules_below_threshold:{decision.intent}:{decision.confidence:.2f}",
                                    intent=decision.intent, source="rules", confidence=decision.confidence)
        if dynamic is not None and decision.narrows and decision.intent == READING_INTENT:
            # The model was trained on built-in requests only: beside integrations its own
            # reading counts only where the index also sees one. Decided here, before the
            # classifier, so a configured classifier still gets the request it would have had.
            matches = tuple(dynamic(text))
            if not matches:
                decision = full_surface("no_rule_matched (learned reading, no integration matched)",
                                        intent=READING_INTENT, source="rules")
    if (decision is None or not decision.narrows) and cfg.classifier.enabled:
        decision = (model or _model_classify)(text, toolsets, cfg)
        if decision.narrows and decision.confidence < cfg.confidence_threshold:
            decision = full_surface("classifier:below_threshold", intent=decision.intent, source="classifier",
                                    confidence=decision.confidence)
    if decision is None:
        decision = full_surface("no_classifier_enabled")
    if dynamic is not None:
        from .dynamic_route import compose, wanted

        if wanted(decision):
            decision = compose(decision, dynamic(text) if matches is None else matches, text)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    return decision if decision.latency_ms else decision.with_latency(elapsed_ms)


def with_floor(decision: Decision, cfg: RouterConfig, extra: Sequence[str] = ()) -> Tuple[str, ...]:
    """The toolsets a narrow decision keeps: the decision's, the floor, and any extra
    (toolsets an injected skill requires), de-duplicated in a stable order."""
    names = list(decision.toolsets) + list(cfg.floor_toolsets) + list(extra)
    if cfg.keep_background_review:
        names.append("memory")
    return tuple(dict.fromkeys(names))
