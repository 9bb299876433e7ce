"""The capability catalog: what a narrowed session can still load, in one short text.

Why: after narrowing, "what can you do?" must still be answered truthfully, and the model
must know a pruned capability is one ``request_toolset`` call away. The catalog rides in
the session's own copy of ``request_toolset``'s description, so it costs no extra message
and is byte-stable (built once from the capture, never from what is currently loaded).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple

import yaml

MAX_DESCRIBED = 60

BASE_DESCRIPTION = (
    "Load more tools for the rest of this session. Pass toolset names (or a tool name) from the "
    "catalog below; loaded tools stay until the session ends."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "toolsets": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Toolset names to load, e.g. [\"file\", \"terminal\"].",
        },
        "reason": {"type": "string", "description": "One short sentence: why these tools are needed."},
    },
    "required": ["toolsets"],
}


def base_schema() -> dict:
    """The registry schema (shared process-wide, never carries a catalog)."""
    return {"name": "request_toolset", "description": BASE_DESCRIPTION, "parameters": copy.deepcopy(PARAMETERS)}


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    blurb: str
    limited_to: Optional[Tuple[str, ...]] = None
    via_search: bool = False  # deferred by the host: reachable through tool_search/tool_call only


def load_blurbs(path: Path) -> Dict[str, str]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        blurbs = data.get("blurbs") or {}
        return {str(k): str(v) for k, v in blurbs.items()}
    except (OSError, yaml.YAMLError, AttributeError):
        return {}


def short_blurb(name: str, blurbs: Mapping[str, str], host_description: str) -> str:
    if name in blurbs:
        return blurbs[name]
    text = (host_description or "").strip()
    if not text or text.startswith("Plugin toolset:"):
        return ""
    for sep in (" — ", " - ", "(", ":", ".", ";"):
        head = text.split(sep, 1)[0].strip()
        if head:
            text = head
    return text[:60]


def render(entries: Sequence[CatalogEntry], *, bridge: bool) -> str:
    lines = [
        "Catalog (every toolset this session can use; answer \"what can you do?\" from it, and load a "
        "toolset before using its tools):"
    ]
    described, rest = entries[:MAX_DESCRIBED], entries[MAX_DESCRIBED:]
    for entry in described:
        label = entry.name
        if entry.limited_to:
            label += f" (limited to: {', '.join(entry.limited_to)})"
        if entry.via_search:
            label += " (via tool_search)"
        lines.append(f"- {label}: {entry.blurb}" if entry.blurb else f"- {label}")
    if rest:
        lines.append("Also: " + ", ".join(
            e.name + (f" (limited to: {', '.join(e.limited_to)})" if e.limited_to else "") for e in rest))
    if bridge:
        lines.append("More tools are deferred (marked via tool_search): find them with tool_search and call them "
                     "with tool_call; request_toolset cannot load them.")
    return "\n".join(lines)


DYNAMIC_BUDGET_CHARS = 800  # all dynamic toolsets' tool lists together (about 200 tokens)
DYNAMIC_MIN_CHARS = 90


def tools_blurb(tools: Sequence[str], budget: int, rank: Mapping[str, float] = {}) -> str:
    """What a dynamic toolset offers, as its tool names within ``budget`` characters: all of
    them when they fit, else the most distinctive (highest ``rank``) in their own order and
    a count, so "what can you do with GitHub?" has an answer and the model knows the name."""
    names = list(dict.fromkeys(tools))
    if not names:
        return ""
    text = "tools: " + ", ".join(names)
    if len(text) <= budget:
        return text
    order = sorted(range(len(names)), key=lambda i: (-rank.get(names[i], 0.0), i))
    chosen: set = set()
    for i in order:
        trial = chosen | {i}
        shown = [names[j] for j in sorted(trial)]
        more = len(names) - len(shown)
        if len(f"{len(names)} tools, e.g. " + ", ".join(shown) + f" (+{more} more)") > budget:
            break
        chosen = trial
    shown = [names[j] for j in sorted(chosen)]
    return f"{len(names)} tools, e.g. " + ", ".join(shown) + f" (+{len(names) - len(shown)} more)"


def distinctiveness(tools_by_toolset: Mapping[str, Sequence[str]]) -> Dict[str, Dict[str, float]]:
    """Per toolset, each tool name's share of words no other toolset's tool names use
    (``create_database_item`` says more about Notion than ``add_comment``)."""
    def words(name: str) -> set:
        return {w for w in name.lower().replace("-", "_").split("_") if w}

    df: Dict[str, int] = {}
    for tools in tools_by_toolset.values():
        for w in set().union(*(words(t) for t in tools)) if tools else ():
            df[w] = df.get(w, 0) + 1
    out: Dict[str, Dict[str, float]] = {}
    for ts, tools in tools_by_toolset.items():
        out[ts] = {t: sum(1.0 / df[w] for w in words(t)) / max(1, len(words(t))) + 0.01 * len(words(t))
                   for t in tools}
    return out


def dynamic_blurbs(tools_by_toolset: Mapping[str, Sequence[str]], budget: int = DYNAMIC_BUDGET_CHARS,
                   max_each: Optional[int] = None) -> Dict[str, str]:
    """One tool-list blurb per dynamic toolset, sharing ``budget`` in proportion to size;
    ``max_each`` caps one toolset's share (a reader with a shorter line per toolset, such as
    the classifier's prompt, gets the same list cut by the same ranking, not mid-name)."""
    if not tools_by_toolset:
        return {}
    rank = distinctiveness(tools_by_toolset)
    total = sum(len(", ".join(t)) + 8 for t in tools_by_toolset.values()) or 1

    def share(tools: Sequence[str]) -> int:
        chars = max(DYNAMIC_MIN_CHARS, budget * (len(", ".join(tools)) + 8) // total)
        return min(chars, max_each) if max_each is not None else chars

    return {ts: tools_blurb(tools, share(tools), rank[ts]) for ts, tools in tools_by_toolset.items()}


def router_definition(catalog_text: str) -> dict:
    """The session-local ``request_toolset`` definition (a new dict: the registry's is shared)."""
    return {
        "type": "function",
        "function": {
            "name": "request_toolset",
            "description": BASE_DESCRIPTION + "\n" + catalog_text,
            "parameters": copy.deepcopy(PARAMETERS),
        },
    }


def entries_for(owner_order: Iterable[str], captured_by_owner: Mapping[str, Tuple[str, ...]],
                available_by_owner: Mapping[str, Tuple[str, ...]], blurbs: Mapping[str, str],
                host_descriptions: Mapping[str, str], skip: Iterable[str] = (),
                via_search: Iterable[str] = ()) -> Tuple[CatalogEntry, ...]:
    """One entry per captured toolset; ``limited to`` names the captured tools when the host
    admitted only part of what the toolset offers on this machine; ``via_search`` toolsets
    are the ones the host deferred behind tool_search."""
    skipped = set(skip)
    deferred = set(via_search)
    out = []
    for name in owner_order:
        if name in skipped:
            continue
        captured = captured_by_owner.get(name, ())
        available = available_by_owner.get(name, ())
        limited = tuple(captured) if available and set(captured) < set(available) else None
        out.append(CatalogEntry(name, short_blurb(name, blurbs, host_descriptions.get(name, "")), limited,
                                name in deferred))
    return tuple(out)


def tool_call_usage(tool_call_definition: Optional[dict], tool: str) -> str:
    """The exact bridge call for a deferred tool, in the shape this host's ``tool_call``
    takes: ``{"calls": [{name, arguments}]}`` (current Hermes) or ``{name, arguments}``."""
    params = ((tool_call_definition or {}).get("function") or {}).get("parameters") or {}
    if "calls" in (params.get("properties") or {}):
        return f'tool_call({{"calls": [{{"name": "{tool}", "arguments": {{...}}}}]}})'
    return f'tool_call({{"name": "{tool}", "arguments": {{...}}}})'
