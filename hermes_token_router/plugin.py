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
* ``skill_load``: offered only while skill routing is on; loads skills named in the skill
  router's hints and notes, including those Hermes's ``skill_view`` refuses as disabled;
* ``transform_llm_output``: show once, in the reply itself, what silently changes the
  router (invalid settings, a missing skill index, where the settings file goes);
* ``/router``: on, off, reset, status, report, doctor, help, with no model call;
* ``hermes token-router``: the command line (route, report, doctor, config, skills) under
  Hermes's own ``hermes`` command, so it runs on the Python Hermes runs on: Hermes's
  installer puts only ``hermes`` on PATH.
"""

from __future__ import annotations

from typing import Any

from .catalog import base_schema
from .cli.main import HERMES_HELP, HERMES_SUBCOMMAND, add_to_hermes, run_from_hermes
from .commands import RouterCommand
from .notices import ChatNotices
from .runtime import RouterRuntime
from .skill_router import loader as skill_loader


def never_in_host_surface() -> bool:
    """``request_toolset``'s availability check: always False, so Hermes never builds it into
    a surface; only a narrowed session carries it (its own copy, with the catalog)."""
    return False


def register(ctx: Any) -> RouterRuntime:
    runtime = RouterRuntime()
    recovery, admission = runtime.recovery, runtime.admission
    # runtime.py: the session lifecycle.
    ctx.register_hook("pre_llm_call", runtime.pre_llm_call)
    ctx.register_hook("on_session_end", runtime.on_session_end)
    ctx.register_hook("on_session_finalize", runtime.on_session_finalize)
    ctx.register_hook("on_session_reset", runtime.on_session_reset)
    ctx.register_hook("pre_gateway_dispatch", runtime.pre_gateway_dispatch)
    # recovery.py: the recovery path.
    ctx.register_hook("post_api_request", recovery.post_api_request)
    ctx.register_middleware("tool_request", recovery.tool_request)
    ctx.register_tool(name="request_toolset", toolset="router", schema=base_schema(),
                      handler=recovery.request_toolset, check_fn=never_in_host_surface,
                      description="Load more toolsets into this session", emoji="🧭")
    # admission_state.py: the protected-tool guard.
    ctx.register_hook("pre_tool_call", admission.pre_tool_call)
    # skill_router/loader.py: load a skill by name, also one Hermes has disabled.
    ctx.register_tool(name=skill_loader.LOAD_TOOL, toolset="router", schema=skill_loader.SCHEMA,
                      handler=runtime.skill_load, check_fn=runtime.skill_load_available,
                      description="Load a skill by name (also skills Hermes has disabled)", emoji="📘")
    # notices.py: what silently changes the router, shown once in the reply itself.
    ctx.register_hook("transform_llm_output", ChatNotices(runtime).transform_llm_output)
    # commands.py: /router.
    ctx.register_command("router", RouterCommand(runtime),
                         description="Tool router: status | on | off | reset | report | doctor | help",
                         args_hint="status|on|off|reset|report|doctor|help")
    # cli/main.py: `hermes [-p PROFILE] token-router ...`.
    ctx.register_cli_command(HERMES_SUBCOMMAND, HERMES_HELP, add_to_hermes, run_from_hermes,
                             description="Command line of the Hermes token router plugin.")
    return runtime
