"""The routing decision's ordering and thresholds, with plain callables for the classifiers."""

from __future__ import annotations

from hermes_token_router.config import RouterConfig
from hermes_token_router.decision import Decision, full_surface
from hermes_token_router.router import decide, with_floor


def narrow(ts, conf=0.95, source="rules"):
    return Decision("narrow", tuple(ts), "x", conf, source, "r")


def cfg(**kw):
    return RouterConfig.model_validate(kw)


def test_rules_decide_when_confident_and_classifier_is_not_asked():
    calls = []
    d = decide("read a.md", cfg(classifier={"enabled": True}), rules=lambda t: narrow(["file"]),
               model=lambda *a: calls.append(a) or narrow(["web"], source="classifier"))
    assert d.toolsets == ("file",) and d.source == "rules" and not calls


def test_classifier_runs_only_when_rules_abstain():
    d = decide("hmm", cfg(classifier={"enabled": True}), rules=lambda t: full_surface("vague", source="rules"),
               model=lambda *a: narrow(["web"], source="classifier"))
    assert d.toolsets == ("web",) and d.source == "classifier"


def test_rules_disabled_means_classifier_alone():
    seen = []
    d = decide("read a.md", cfg(deterministic_rules_enabled=False, classifier={"enabled": True}),
               rules=lambda t: seen.append(t) or narrow(["file"]), model=lambda *a: narrow(["web"], source="classifier"))
    assert d.toolsets == ("web",) and not seen


def test_below_threshold_is_full_for_both_sources():
    d = decide("x", cfg(confidence_threshold=0.9), rules=lambda t: narrow(["file"], conf=0.6))
    assert d.action == "full" and d.reason.startswith("rules_below_threshold")
    d = decide("x", cfg(classifier={"enabled": True}), rules=lambda t: full_surface("vague"),
               model=lambda *a: narrow(["web"], conf=0.5, source="classifier"))
    assert d.action == "full" and d.source == "classifier"


def test_empty_message_and_nothing_enabled_keep_full():
    assert decide("   ", cfg(), rules=lambda t: narrow(["file"])).reason == "empty_message"
    assert decide("x", cfg(deterministic_rules_enabled=False)).reason == "no_classifier_enabled"


def test_floor_and_background_review_are_added_once():
    d = narrow(["file", "todo"])
    assert with_floor(d, cfg(floor_toolsets=["todo", "web"]), ["terminal"]) == ("file", "todo", "web", "terminal")
    assert "memory" in with_floor(d, cfg(keep_background_review=True))
