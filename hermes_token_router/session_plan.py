"""A session's plan from this Hermes's answers: its capability catalog, the toolsets the
classifier is offered (described as the catalog describes them), and
``surface_mutation.plan`` priced with the host's own estimate.

Why apart from the runtime: these are questions about a capture (what does the session have,
how is each toolset described, what would a narrowed surface cost), not about the session's
lifecycle; the benchmark's offline pricing asks them without a runtime.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from . import catalog, host, surface_mutation
from .classifier.contract import MAX_DESCRIPTION_CHARS
from .config import RouterConfig
from .surface import Capture


def _dynamic_tools(capture: Capture, owners: Sequence[str]) -> Dict[str, List[str]]:
    """An MCP/plugin toolset is described by its tool names; a deferred one (behind Hermes's
    tool_search) by the deferred names the capture recorded for it."""
    return {o: [host.short_tool_name(n, o) for n in (capture.tools_of(o) or capture.deferred.get(o, ()))]
            for o in owners if host.is_dynamic_toolset(o)}


def catalog_text(capture: Capture, blurbs: dict) -> str:
    """The session's capability catalog, with the host's availability and descriptions."""
    owners = surface_mutation.catalog_owners(capture)
    return surface_mutation.build_catalog(capture, blurbs, host.available_by_owner(owners),
                                          host.toolset_descriptions(owners), _dynamic_tools(capture, owners))


def classifier_toolsets(capture: Capture, blurbs: dict) -> List[Tuple[str, str]]:
    """The (toolset, description) pairs the model classifier chooses from: the captured
    toolsets but the router's own. No shipped blurb knows an MCP server or a plugin toolset,
    so those get the catalog's tool list (shared out over the same toolsets, each cut to the
    classifier's line by the same ranking); without it the model sees a bare name."""
    dynamic = catalog.dynamic_blurbs(_dynamic_tools(capture, surface_mutation.catalog_owners(capture)),
                                     max_each=MAX_DESCRIPTION_CHARS)
    return [(o, dynamic.get(o) or blurbs.get(o, "")) for o in capture.owner_order()
            if o != surface_mutation.ROUTER_TOOLSET]


def plan_on_host(capture: Capture, toolsets: Sequence[str], cfg: RouterConfig, blurbs: dict, *,
                 catalog: Optional[str] = None, router_definition: Optional[dict] = None,
                 extra_keep: Iterable[str] = ()) -> "surface_mutation.Plan":
    """``surface_mutation.plan`` given this Hermes's answers (static toolset members, the
    catalog, its own token estimate); shared with the benchmark's offline pricing."""
    return surface_mutation.plan(capture, toolsets, cfg, static=host.static_members(toolsets),
                                 catalog_text=catalog if catalog is not None else catalog_text(capture, blurbs),
                                 estimate=host.estimate_tokens, router_definition=router_definition,
                                 extra_keep=extra_keep)
