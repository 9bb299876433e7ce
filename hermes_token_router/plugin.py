"""``register(ctx)``: the plugin's whole registration surface, in one place.

What we ask of Hermes, and why each piece is needed:
* ``pre_llm_call``: route a session's first turn and keep later turns sticky;
* ``post_api_request``: recover a call to a pruned tool *before* Hermes validates (and
  fuzzily repairs) its name: the only 0.19.0 hook that runs there;
* ``tool_request`` middleware: the same recovery for hosts that run it before validation;
* ``on_session_finalize`` / ``on_session_reset``: the real session boundaries, where the
  exact captured surface is handed back (``on_session_end`` fires after every turn, so it
  only does bookkeeping);
* ``pre_tool_call``: the protected-tool guard;
* ``pre_gateway_dispatch``: remember the gateway runner and offer the skill rewrite path;
* ``request_toolset``: registered with an always-false availability check, so Hermes never
  puts it in a host-built surface (router off stays byte-identical to no plugin); narrowed
  sessions carry their own copy with the capability catalog;
* ``/router``: on, off, reset, status, with no model call.
"""

from __future__ import annotations

from typing import Any

from .catalog import base_schema
from .commands import RouterCommand
from .runtime import RouterRuntime

HOOKS = ("pre_llm_call", "post_api_request", "on_session_end", "on_session_finalize", "on_session_reset",
         "pre_gateway_dispatch")


def never_in_host_surface() -> bool:
    """``request_toolset``'s availability check: always False, so Hermes never builds it into
    a surface; only a narrowed session carries it (its own copy, with the catalog)."""
    return False


def register(ctx: Any) -> RouterRuntime:
    runtime = RouterRuntime()
    for name in HOOKS:
        ctx.register_hook(name, getattr(runtime, name))
    guard = getattr(runtime, "pre_tool_call", None)
    if guard is not None:
        ctx.register_hook("pre_tool_call", guard)
    ctx.register_middleware("tool_request", runtime.tool_request)
    ctx.register_tool(name="request_toolset", toolset="router", schema=base_schema(),
                      handler=runtime.request_toolset, check_fn=never_in_host_surface,
                      description="Load more toolsets into this session", emoji="🧭")
    ctx.register_command("router", RouterCommand(runtime), description="Tool router: on | off | reset | status",
                         args_hint="on|off|reset|status")
    return runtime
