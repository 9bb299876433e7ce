"""How a dynamic-toolset match composes with the built-in decision (rules or classifier).

* The built-in route narrows: the matched integrations join it (a compound request such as
  "read ./notes.md and open a github issue" keeps ``file`` and gains ``mcp-github``).
* The built-in route abstained only because nothing it knows was asked for (no rule
  matched, or a question with no built-in answer): a strong match narrows to the matched
  integrations plus the floor. A toolset being dynamic is never a reason to abstain.
* Any other abstention (negated, vague, long, below threshold, admission) stays full: the
  guards that protect built-in requests protect integration requests the same way.
* The learned model's own reading (no rule matched, intent ``learned``) arrives here only
  when the index matched something: ``router.decide`` turns it back into an abstention
  otherwise ("帮我建个单 ... 挂到 DATA 组" reads as terminal work to a model that never saw a
  tracker), before the classifier runs.
"""

from __future__ import annotations

import re
from typing import Sequence

from .decision import Decision
from .dynamic_index import Match

# Abstentions that only mean "no built-in toolset was asked for".
ROUTABLE_FULL = ("no_rule_matched", "question", "near_miss:", "no_classifier_enabled")
CONFIDENCE = 0.95
# A local path ("./logs/app.log", "~/notes", "../x") or a plain "local"/"本地" in an
# integration-only request is a local file the rules did not recognise: narrowing to the
# integration alone would lose it.
LOCAL_PATH = re.compile(r"(?:^|[\s'\"`(])(?:\.{1,2}|~)/[^\s]+|(?:^|\s)/(?:[\w.-]+/)+[\w.-]+"
                        r"|\blocal(?:ly)? (?:file|folder|dir|directory|disk|copy|repo|checkout)s?\b"
                        r"|\b(?:to|on|in) my (?:machine|laptop|desktop|downloads|documents)\b|本地")


def wanted(decision: Decision) -> bool:
    """Whether a match could change ``decision`` (guards' abstentions skip the index)."""
    return decision.narrows or decision.reason.startswith(ROUTABLE_FULL)


def compose(decision: Decision, matches: Sequence[Match], text: str = "") -> Decision:
    if not matches:
        return decision
    strong = [m.toolset for m in matches if m.strong]
    every = [m.toolset for m in matches]
    why = "; dynamic " + ", ".join(f"{m.toolset}:{'+'.join(m.evidence[:3])}" for m in matches)
    if decision.narrows:
        toolsets = tuple(dict.fromkeys(list(decision.toolsets) + every))
        return Decision("narrow", toolsets, decision.intent + "+dynamic", decision.confidence, decision.source,
                        decision.reason + why, decision.latency_ms)
    if strong and decision.reason.startswith(ROUTABLE_FULL):
        local = ("file",) if LOCAL_PATH.search(text) else ()
        return Decision("narrow", local + tuple(every), "dynamic", CONFIDENCE, decision.source,
                        f"integration only ({decision.reason})" + why, decision.latency_ms)
    return decision
