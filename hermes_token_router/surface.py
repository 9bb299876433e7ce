"""Pure surface arithmetic: which captured definitions a session shows, in what order.

Everything here works on plain data handed over by the host adapter (``host.py``) so it
can be tested exhaustively without Hermes. The three rules that keep the provider's
prompt cache hitting and the model's capabilities intact live here:

* a narrowed surface is always a *subset of the capture*, in *captured order*, built from
  the captured definition objects themselves (never re-fetched, never mutated), so the
  serialized ``tools`` are byte-stable until the next expansion;
* tools whose owner the registry cannot name (tool_search bridge, memory-provider and
  context-engine tools) are never pruned: we only drop what we know how to bring back;
* the kept set only grows within a session (monotonic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

ROUTER_TOOL = "request_toolset"
# Hermes's tool_search bridge: the only way to deferred tools, never pruned.
BRIDGE_TOOLS = ("tool_search", "tool_describe", "tool_call")


def tool_name(definition: Any) -> str:
    if isinstance(definition, dict):
        fn = definition.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return fn["name"]
        if isinstance(definition.get("name"), str):
            return definition["name"]
    return ""


@dataclass(frozen=True)
class Capture:
    """The host's exact surface at the moment we first touched it: the restore target and
    the ceiling of everything a session may ever show."""

    tools: Any  # the exact list object Hermes held (restored as-is)
    valid_tool_names: Any  # the exact set object Hermes held
    names: Tuple[str, ...]  # captured order
    owners: Mapping[str, Optional[str]]  # tool name -> registry toolset (None: unregistered)
    # toolset -> tools the host put behind tool_search for this agent (empty without the bridge)
    deferred: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)

    def owner_order(self) -> Tuple[str, ...]:
        """Toolsets in the order their first tool appears in the capture."""
        seen: Dict[str, None] = {}
        for name in self.names:
            owner = self.owners.get(name)
            if owner:
                seen.setdefault(owner, None)
        return tuple(seen)

    def tools_of(self, toolset: str) -> Tuple[str, ...]:
        return tuple(n for n in self.names if self.owners.get(n) == toolset)

    def definition(self, name: str) -> Optional[dict]:
        for item in self.tools:
            if tool_name(item) == name:
                return item
        return None

    def shares(self, estimate: Callable[[List[dict]], int]) -> Dict[str, float]:
        """Each toolset's share of this surface's schema tokens: what adding it costs here
        (prices the learned model's additions; a toolset the surface lacks has none)."""
        full = estimate(list(self.tools)) or 1
        by_owner: Dict[str, List[dict]] = {}
        for item in self.tools:
            owner = self.owners.get(tool_name(item))
            if owner:
                by_owner.setdefault(owner, []).append(item)
        return {o: estimate(items) / full for o, items in by_owner.items()}


def unprunable(capture: Capture, always_keep: Iterable[str]) -> FrozenSet[str]:
    """Names no route may drop: unregistered tools plus the caller's never-prune names."""
    keep = {n for n in capture.names if capture.owners.get(n) is None}
    keep.update(n for n in always_keep if n in capture.names)
    return frozenset(keep)


def names_for_toolsets(capture: Capture, toolsets: Iterable[str],
                       static_members: Mapping[str, Iterable[str]] = {}) -> FrozenSet[str]:
    """Captured tools belonging to ``toolsets`` by registry owner or by static membership
    (Hermes's ``browser`` toolset lists tools registered under ``browser-cdp``)."""
    wanted = set(toolsets)
    out = {n for n in capture.names if capture.owners.get(n) in wanted}
    captured = set(capture.names)
    for ts in wanted:
        out.update(n for n in static_members.get(ts, ()) if n in captured)
    return frozenset(out)


def select(capture: Capture, keep: FrozenSet[str], router_definition: Optional[dict]) -> List[dict]:
    """The definitions to show: captured order, captured objects, plus the router's tool.

    ``router_definition`` (the session's ``request_toolset`` with its catalog) replaces a
    captured ``request_toolset`` in place, or is appended when the host had none (it was
    deferred behind tool_search or unticked), so the model can always grow its surface.
    """
    out: List[dict] = []
    placed = False
    for item in capture.tools:
        name = tool_name(item)
        if name == ROUTER_TOOL and router_definition is not None:
            out.append(router_definition)
            placed = True
        elif name in keep:
            out.append(item)
    if router_definition is not None and not placed:
        out.append(router_definition)
    return out


def grow(current: FrozenSet[str], additions: Iterable[str], capture: Capture) -> Tuple[FrozenSet[str], Tuple[str, ...]]:
    """Monotonic union restricted to the capture; returns the new set and what was new."""
    captured = set(capture.names)
    new = tuple(n for n in capture.names if n in set(additions) and n not in current and n in captured)
    return (current | frozenset(new)), new


def fold_onto(capture: Capture, rebuilt: Sequence[Any]) -> Tuple[List[dict], bool]:
    """A host rebuild folded back onto the captured order: (tools, same as the capture).

    Current Hermes merges every rebuild onto the live list (``tools/mcp_tool_agent.py``:
    names keep their slot, missing ones are appended at the tail), so a narrowed session's
    rebuild comes back as our narrowed order plus the pruned tools, our ``request_toolset``
    copy included. What a host without the router would show is the *capture's* order with
    the rebuild's definitions: captured names in captured order (the captured object kept
    wherever the definition is unchanged, so the bytes are too), then the names that are new
    to the host. The router's own tool is never taken from a rebuild.
    """
    fresh: Dict[str, Any] = {}
    for item in rebuilt:
        name = tool_name(item)
        if name and name not in fresh:
            fresh[name] = item
    out: List[dict] = []
    for item in capture.tools:
        name = tool_name(item)
        new = fresh.pop(name, None)
        if new is None:
            continue
        out.append(item if name == ROUTER_TOOL or new is item or new == item else new)
    out.extend(item for name, item in fresh.items() if name != ROUTER_TOOL)
    same = len(out) == len(capture.tools) and all(a is b for a, b in zip(out, capture.tools))
    return out, same
