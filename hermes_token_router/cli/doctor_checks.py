"""The doctor's checks on the installed Hermes itself: can the router route there?

The router can only save tokens on the first provider request if three things hold on the
installed Hermes: a hook runs before the request is built (``pre_llm_call``), the live
``AIAgent`` can be found from it (no 0.19.0 hook passes it; ``host_agents.find_agent`` walks
the stack for the frames named below), and the request is built from ``agent.tools`` read
*after* that hook. Each is checked on the Hermes that is actually installed, by reading its
source and loading its plugin manager, never by patching it. It also reports whether
routing happens before Hermes's *preflight* token estimate (in 0.19.0 it does not).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import io
import logging
import re
import sys
from pathlib import Path
from typing import Any, Optional

from ..paths import command_line, hermes_python, standalone_command_line
from .doctor_report import FAIL, INFO, OK, WARN, Report

REQUIRED_HOOKS = ("pre_llm_call", "post_api_request", "on_session_finalize", "on_session_reset")
OPTIONAL_HOOKS = ("pre_tool_call",)
MIDDLEWARE_KIND = "tool_request"
# (module, function, needle): the frame host_agents.find_agent walks to, and the hook it must fire.
AGENT_FRAMES = (
    ("agent.turn_context", "build_turn_context", "build_turn_context(agent", "pre_llm_call"),
    ("agent.conversation_loop", "run_conversation", "run_conversation(agent", "post_api_request"),
)
OPTIONAL_FRAMES = (
    ("agent.tool_executor", "execute_tool_calls_sequential", "execute_tool_calls_sequential(agent", None),
    ("agent.tool_executor", "execute_tool_calls_concurrent", "execute_tool_calls_concurrent(agent", None),
    ("agent.turn_finalizer", "finalize_turn", "finalize_turn(agent", None),
)
REGISTRY_API = (
    ("tools.registry", "registry.get_toolset_for_tool"),
    ("tools.registry", "registry.get_entry"),
    ("tools.registry", "registry.get_definitions"),
    ("toolsets", "resolve_toolset"),
    ("agent.model_metadata", "_estimate_tools_tokens_rough"),
)


@contextlib.contextmanager
def _quiet():
    """Hermes logs warnings (and may print) while importing; keep our output clean."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink):
            yield
    finally:
        logging.disable(previous)


def _resolve(module: str, dotted: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _source(module: str, function: Optional[str] = None) -> str:
    mod = importlib.import_module(module)
    return inspect.getsource(getattr(mod, function) if function else mod)


def _where(module: str) -> str:
    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None and spec.origin else module
    try:
        import hermes_cli

        root = Path(hermes_cli.__file__).resolve().parent.parent
        return str(Path(origin).resolve().relative_to(root))
    except Exception:
        return origin


def check_hermes(report: Report) -> bool:
    try:
        from importlib.metadata import PackageNotFoundError, version

        try:
            report.hermes_version = version("hermes-agent")
        except PackageNotFoundError:
            report.hermes_version = None
        with _quiet():
            importlib.import_module("hermes_cli.plugins")
    except Exception as exc:
        launcher = hermes_python()
        report.hermes_python = launcher
        use = (f"run the doctor through Hermes: {command_line('doctor', report.profile)} (once the plugin is "
               f"installed), or with the Python the 'hermes' launcher runs ({launcher}): "
               f"{standalone_command_line('doctor', report.profile)}" if launcher else
               "run the doctor with the Python Hermes runs on (the first line of the 'hermes' launcher names it); "
               "'hermes' is not on PATH here")
        report.add("hermes", "import", FAIL, f"Hermes Agent is not importable with {sys.executable} "
                                           f"({type(exc).__name__}: {exc})", fix=use)
        return False
    report.hermes_importable = True
    shown = report.hermes_version or "unknown version"
    status = OK if report.hermes_version == "0.19.0" else WARN
    detail = f"hermes-agent {shown}" + ("" if status == OK else " (the plugin is verified on 0.19.0; the checks below decide)")
    report.add("hermes", "version", status, detail)
    return True


def check_hooks(report: Report) -> None:
    from hermes_cli import plugins

    valid = set(getattr(plugins, "VALID_HOOKS", ()) or ())
    for hook in REQUIRED_HOOKS:
        if hook in valid:
            report.add("hooks", hook, OK, "in hermes_cli.plugins.VALID_HOOKS")
        else:
            report.add("hooks", hook, FAIL, "missing from hermes_cli.plugins.VALID_HOOKS")
    for hook in OPTIONAL_HOOKS:
        report.add("hooks", hook, OK if hook in valid else WARN,
                   "in VALID_HOOKS" if hook in valid else "missing: the protected-tool guard is inactive")
    try:
        from hermes_cli import middleware

        kinds = set(getattr(middleware, "VALID_MIDDLEWARE", ()) or ())
    except Exception:
        kinds = set()
    report.add("hooks", f"{MIDDLEWARE_KIND} middleware", OK if MIDDLEWARE_KIND in kinds else WARN,
               "in hermes_cli.middleware.VALID_MIDDLEWARE" if MIDDLEWARE_KIND in kinds
               else "missing: only the post_api_request recovery path remains")
    try:
        src = inspect.getsource(plugins.PluginManager.invoke_hook)
    except Exception:
        src = ""
    if any(word in src for word in ("Thread", "executor", "timeout")):
        report.hook_thread = "worker thread with a timeout"
        report.add("hooks", "hook thread", INFO,
                   "hooks run on a worker thread with a timeout: the agent is found from the calling thread's "
                   "stack (host_agents.find_agent 'thread_stack'); a hook that outlives half the timeout changes nothing")
    elif src:
        report.hook_thread = "caller thread"
        report.add("hooks", "hook thread", INFO, "hooks run synchronously on the thread that runs the agent loop")


def check_mechanisms(report: Report) -> None:
    """Per upstream mechanism, the path ``host.mechanisms`` found on this Hermes."""
    from ..host import mechanisms

    for m in mechanisms():
        report.add("mechanisms", m.name, INFO, f"{m.path}: {m.detail}")
        if m.name == "hook dispatch":
            report.hook_thread = "worker thread with a timeout" if m.path == "threaded" else "caller thread"


def check_agent_lookup(report: Report) -> None:
    from ..host import mechanisms

    helper = {m.name: m for m in mechanisms() if m.path != "none"}
    for module, function, needle, hook in AGENT_FRAMES + OPTIONAL_FRAMES:
        required = hook is not None
        name = f"{function}(agent, ...)"
        found = helper.get(f"{hook} frame") if hook else None
        if found is not None and found.path != f"{module}.{function}":  # current Hermes's helper frame
            report.add("agent lookup", f"{hook} frame", OK, f"{found.path}: {found.detail}")
            continue
        try:
            src = _source(module, function)
        except Exception as exc:
            report.add("agent lookup", name, FAIL if required else WARN,
                       f"{module}.{function} not found ({type(exc).__name__})")
            continue
        flat = re.sub(r"\s+", " ", src).replace("( ", "(")
        if needle not in flat:
            report.add("agent lookup", name, FAIL if required else WARN,
                       f"{_where(module)}: first parameter is not 'agent'; host_agents.find_agent cannot bind the agent there")
            continue
        if hook is not None and f'"{hook}"' not in src and f"'{hook}'" not in src:
            report.add("agent lookup", name, FAIL,
                       f"{_where(module)}: {function} no longer fires {hook}; the agent is not on that hook's stack")
            continue
        report.add("agent lookup", name, OK,
                   f"{_where(module)}" + (f" fires {hook} with the agent as a local" if hook else ""))
    reads, where = False, "build_api_kwargs"
    for module, function in (("agent.chat_completion_helpers", "build_api_kwargs"),
                             ("agent.turn_request_assembly", None)):  # current Hermes: tools_for_api = agent.tools
        try:
            reads = "agent.tools" in _source(module, function)
        except Exception:
            reads = False
        if reads:
            where = f"{_where(module)}" + (f" {function}" if function else "")
            break
    report.add("agent lookup", "request built from agent.tools", OK if reads else FAIL,
               f"{where} reads agent.tools for every API call" if reads
               else "the request builder does not read agent.tools: narrowing it would not change the request")


def check_preflight(report: Report) -> None:
    try:
        src = _source("agent.turn_context", "build_turn_context")
    except Exception:
        report.routes_before_preflight = None
        report.add("preflight", "routing before the preflight estimate", INFO, "build_turn_context not found")
        return
    hook_at = src.find('"pre_llm_call"')
    pre_at = src.find("estimate_request_tokens_rough(")
    if hook_at < 0 or pre_at < 0:
        report.routes_before_preflight = None
        report.add("preflight", "routing before the preflight estimate", INFO, "could not locate both in the source")
        return
    report.routes_before_preflight = hook_at < pre_at
    if report.routes_before_preflight:
        report.add("preflight", "routing before the preflight estimate", OK,
                   "pre_llm_call fires before the preflight estimate: it counts the narrowed tool list")
    else:
        report.add("preflight", "routing before the preflight estimate", INFO,
                   "no: the first-turn preflight estimate (and preflight compression) counts the full tool list; "
                   "routing applies from the first provider request on")


def check_registry(report: Report) -> None:
    with _quiet():
        for module, dotted in REGISTRY_API:
            try:
                obj = _resolve(module, dotted)
                ok = callable(obj)
            except Exception:
                ok = False
            report.add("registry", f"{module}.{dotted}", OK if ok else FAIL,
                       "present" if ok else "missing: the router cannot map tools to toolsets or estimate tokens")
