"""Feature detection: which upstream Hermes mechanism the installed host offers.

PyPI's Hermes (0.19.0) and the install script's (NousResearch/hermes-agent main, 0.21.x)
differ in how hooks are dispatched, which frames hold the agent, where the tools lock
lives, whether a session pins its tool names and whether tool_search defers core tools by
default. The router picks its path per mechanism from these probes (names and signatures,
never version numbers), and the doctor reports them. Part of the host adapter boundary:
like ``host``, it is the only kind of code that imports Hermes.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, List, Tuple

TOOLS_LOCK_MODULES = ("tools.mcp_tool_agent", "tools.mcp_tool")


@dataclass(frozen=True)
class Mechanism:
    name: str
    path: str  # what was found, e.g. "threaded" / "synchronous"; "none" when absent
    detail: str


def _attr(module: str, *names: str) -> Any:
    """The first of ``names`` found on ``module`` (None if the module or names are missing)."""
    try:
        mod = importlib.import_module(module)
    except Exception:
        return None
    for name in names:
        obj = getattr(mod, name, None)
        if obj is not None:
            return obj
    return None


def _fires(fn: Any, hook: str) -> bool:
    """``fn`` takes the agent first (so the stack walk finds it) and fires ``hook``."""
    try:
        first = next(iter(inspect.signature(fn).parameters), None)
        return first == "agent" and (f'"{hook}"' in inspect.getsource(fn) or f"'{hook}'" in inspect.getsource(fn))
    except Exception:
        return False


def _frame(hook: str, candidates: Tuple[Tuple[str, str], ...]) -> Mechanism:
    for module, function in candidates:
        fn = _attr(module, function)
        if fn is not None and _fires(fn, hook):
            return Mechanism(f"{hook} frame", f"{module}.{function}", f"{function}(agent, ...) fires {hook}")
    return Mechanism(f"{hook} frame", "none", "no known frame fires it with the agent as its first argument: "
                     "the agent is found only through live threads, the stored reference or the CLI")


def _timeout_s() -> float:
    from .host import hook_callback_timeout_s

    return hook_callback_timeout_s()


def mechanisms() -> List[Mechanism]:
    """Per upstream mechanism, which path this Hermes offers. Probes names and signatures,
    never version numbers: 0.19.0 (PyPI) and current main (install script) differ in each."""
    out: List[Mechanism] = []
    fail_closed = _attr("hermes_cli.plugins_dispatch", "_HOOK_TIMEOUT_FAIL_CLOSED_HOOKS") or \
        _attr("hermes_cli.plugins", "_HOOK_TIMEOUT_FAIL_CLOSED_HOOKS")
    if fail_closed is not None or _attr("hermes_cli.plugins", "_resolve_hook_callback_timeout") is not None:
        closed = "pre_tool_call" in (fail_closed or ())
        out.append(Mechanism("hook dispatch", "threaded", f"hermes-hook-* worker threads, timeout "
                             f"{_timeout_s():g}s" + ("; pre_tool_call fails closed" if closed else "")))
    else:
        out.append(Mechanism("hook dispatch", "synchronous", "hooks run on the thread that runs the agent loop"))
    out.append(_frame("pre_llm_call", (("agent.turn_context", "_collect_pre_llm_call_context"),
                                       ("agent.turn_context", "build_turn_context"))))
    out.append(_frame("post_api_request", (("agent.turn_response_intake", "_fire_post_api_request_hook"),
                                           ("agent.turn_response_intake", "normalize_model_response"),
                                           ("agent.conversation_loop", "run_conversation"))))
    lock_mod = next((m for m in TOOLS_LOCK_MODULES if _attr(m, "_agent_tools_lock") is not None), None)
    out.append(Mechanism("agent tools lock", lock_mod or "none",
                         "_agent_tools_lock guards surface swaps" if lock_mod else "no lock: swaps are unguarded"))
    pin = _attr("tools.mcp_tool_agent", "persist_agent_tool_names")
    db = _attr("hermes_state", "SessionDB")
    if pin is not None and hasattr(db, "update_session_tool_names"):
        out.append(Mechanism("session tool pin", "sessions.tool_names",
                             "rebuilds and MCP refreshes merge onto the pinned order; the router re-pins the "
                             "captured names"))
    else:
        out.append(Mechanism("session tool pin", "none", "no per-session tool pin"))
    defer = _attr("tools.tool_search", "_DEFAULT_DEFERRED_TOOLS")
    if defer is not None:
        out.append(Mechanism("tool_search defer list", "default defer list",
                             f"{len(defer)} names deferred by default: {', '.join(sorted(defer)[:6])}, ..."))
    elif _attr("tools.tool_search", "assemble_tool_defs") is not None:
        out.append(Mechanism("tool_search defer list", "none", "no default defer list: core tools never defer"))
    else:
        out.append(Mechanism("tool_search defer list", "none", "no tools.tool_search"))
    return out
