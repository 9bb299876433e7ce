"""A session's plan from this Hermes's answers: its capability catalog and
``surface_mutation.plan`` priced with the host's own estimate.

Why apart from the runtime: these are questions about a capture (what does the session have,
how is each toolset described, what would a narrowed surface cost), not about the session's
lifecycle; the benchmark's offline pricing asks them without a runtime.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from . import host, surface_mutation
from .config import RouterConfig
from .surface import Capture


def catalog_text(capture: Capture, blurbs: dict) -> str:
    """The session's capability catalog, with the host's availability and descriptions."""
    owners = surface_mutation.catalog_owners(capture)
    # An MCP/plugin toolset is described by its tool names; a deferred one (behind Hermes's
    # tool_search) by the deferred names the capture recorded for it.
    dynamic = {o: [host.short_tool_name(n, o) for n in (capture.tools_of(o) or capture.deferred.get(o, ()))]
               for o in owners if host.is_dynamic_toolset(o)}
    return surface_mutation.build_catalog(capture, blurbs, host.available_by_owner(owners),
                                          host.toolset_descriptions(owners), dynamic)


def plan_on_host(capture: Capture, toolsets: Sequence[str], cfg: RouterConfig, blurbs: dict, *,
                 catalog: Optional[str] = None, router_definition: Optional[dict] = None,
                 extra_keep: Iterable[str] = ()) -> "surface_mutation.Plan":
    """``surface_mutation.plan`` given this Hermes's answers (static toolset members, the
    catalog, its own token estimate); shared with the benchmark's offline pricing."""
    return surface_mutation.plan(capture, toolsets, cfg, static=host.static_members(toolsets),
                                 catalog_text=catalog if catalog is not None else catalog_text(capture, blurbs),
                                 estimate=host.estimate_tokens, router_definition=router_definition,
                                 extra_keep=extra_keep)
