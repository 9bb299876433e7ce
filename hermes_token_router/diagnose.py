"""``python diagnostics.py``: does the installed Hermes give the router a place to route?

The router can only save tokens on the first provider request if three things hold on the
installed Hermes: a hook runs before the request is built (``pre_llm_call``), the live
``AIAgent`` can be found from it (no 0.19.0 hook passes it; ``host.find_agent`` walks the
stack for the frames named below), and the request is built from ``agent.tools`` read
*after* that hook. This module checks each of those on the Hermes that is actually
installed (by reading its source and loading its plugin manager, never by patching it),
plus everything else the plugin relies on, and exits:

* ``0``: a routing path exists before the provider request;
* ``2``: it does not (or the plugin cannot run here): the runtime must not claim
  first-turn savings.

It reports separately whether routing happens before Hermes's *preflight* token
estimate (in 0.19.0 it does not: the first-turn estimate counts the full tool list).

``--probe`` runs one real offline turn: a local stub model, a temporary HERMES_HOME with
this plugin installed as a directory plugin and enabled, a file-type first message in a
fresh process, and reports the tools and Hermes-estimated tokens before vs after.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

PLUGIN_NAME = "hermes-token-router"
EXIT_OK = 0
EXIT_NO_ROUTING_PATH = 2

REQUIRED_HOOKS = ("pre_llm_call", "post_api_request", "on_session_finalize", "on_session_reset")
OPTIONAL_HOOKS = ("pre_tool_call",)
MIDDLEWARE_KIND = "tool_request"
# (module, function, needle): the frame host.find_agent walks to, and the hook it must fire.
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
PROBE_MESSAGE = "read ./notes.md and summarise it"

OK, WARN, FAIL, INFO = "ok", "warn", "fail", "info"


@dataclass
class Check:
    area: str
    name: str
    status: str
    detail: str

    @property
    def blocks_routing(self) -> bool:
        return self.status == FAIL


@dataclass
class Report:
    hermes_version: Optional[str] = None
    hermes_home: str = ""
    plugin_dir: Optional[str] = None
    checks: List[Check] = field(default_factory=list)
    routing_path: bool = False
    routes_before_preflight: Optional[bool] = None
    hook_thread: str = "unknown"
    skill_semantic: Dict[str, Any] = field(default_factory=dict)
    probe: Optional[Dict[str, Any]] = None
    hermes_importable: bool = False

    def add(self, area: str, name: str, status: str, detail: str) -> Check:
        check = Check(area, name, status, detail)
        self.checks.append(check)
        return check

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.routing_path else EXIT_NO_ROUTING_PATH

    def to_json(self) -> Dict[str, Any]:
        out = asdict(self)
        out["exit_code"] = self.exit_code
        out["first_turn_savings"] = "may be claimed" if self.routing_path else "must not be claimed"
        return out


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


# -- checks ------------------------------------------------------------------------------

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
        report.add("hermes", "import", FAIL, f"Hermes Agent is not importable with {sys.executable} "
                                           f"({type(exc).__name__}: {exc}); run this with the Python Hermes runs on")
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
                   "stack (host.find_agent 'thread_stack'); a hook that outlives half the timeout changes nothing")
    elif src:
        report.hook_thread = "caller thread"
        report.add("hooks", "hook thread", INFO, "hooks run synchronously on the thread that runs the agent loop")


def check_mechanisms(report: Report) -> None:
    """Per upstream mechanism, the path ``host.mechanisms`` found on this Hermes."""
    from .host import mechanisms

    for m in mechanisms():
        report.add("mechanisms", m.name, INFO, f"{m.path}: {m.detail}")
        if m.name == "hook dispatch":
            report.hook_thread = "worker thread with a timeout" if m.path == "threaded" else "caller thread"


def check_agent_lookup(report: Report) -> None:
    from .host import mechanisms

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
                       f"{_where(module)}: first parameter is not 'agent'; host.find_agent cannot bind the agent there")
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


def _hermes_config(home: Path) -> Tuple[Dict[str, Any], Optional[str]]:
    import yaml

    path = home / "config.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return (data if isinstance(data, dict) else {}), None
    except FileNotFoundError:
        return {}, f"{path} does not exist"
    except Exception as exc:
        return {}, f"{path} is not readable YAML ({type(exc).__name__})"


def _entry_point_installed() -> bool:
    try:
        from importlib.metadata import entry_points

        return any(ep.name == PLUGIN_NAME for ep in entry_points(group="hermes_agent.plugins"))
    except Exception:
        return False


def _entry_point_origin() -> str:
    try:
        from importlib.metadata import distributions

        for dist in distributions():
            if any(ep.group == "hermes_agent.plugins" and ep.name == PLUGIN_NAME for ep in dist.entry_points):
                return str(getattr(dist, "_path", None) or dist.metadata.get("Name"))
    except Exception:
        pass
    return "unknown distribution"


def _manifest_name(plugin_yaml: Path) -> Optional[str]:
    try:
        import yaml

        data = yaml.safe_load(plugin_yaml.read_text(encoding="utf-8")) or {}
        return str(data.get("name") or plugin_yaml.parent.name)
    except Exception:
        return None


def check_install(report: Report, home: Path) -> Optional[Path]:
    plugins_dir = home / "plugins"
    directory = plugins_dir / PLUGIN_NAME
    plugin_dir = directory if (directory / "plugin.yaml").is_file() else None
    via_ep = _entry_point_installed()
    report.plugin_dir = str(plugin_dir) if plugin_dir else None
    if plugin_dir is not None and via_ep:
        report.add("install", "installed", WARN,
                   f"installed twice: directory plugin at {plugin_dir} and a hermes_agent.plugins entry point "
                   f"({_entry_point_origin()}); Hermes loads entry points last, so the entry point wins and the "
                   f"directory copy's config.yaml and ledger are not used; remove one (a stray "
                   f"hermes_token_router.egg-info on sys.path counts as an entry point)")
    elif plugin_dir is not None:
        report.add("install", "installed", OK, f"directory plugin at {plugin_dir}")
    elif via_ep:
        report.add("install", "installed", OK, "pip install (hermes_agent.plugins entry point)")
    else:
        report.add("install", "installed", FAIL,
                   f"not in {plugins_dir} and no hermes_agent.plugins entry point; see docs/install.md")
    cfg, error = _hermes_config(home)
    if error:
        report.add("install", "plugins.enabled", FAIL, error)
    else:
        section = cfg.get("plugins") if isinstance(cfg.get("plugins"), dict) else {}
        enabled = section.get("enabled") if isinstance(section.get("enabled"), list) else []
        disabled = section.get("disabled") if isinstance(section.get("disabled"), list) else []
        if PLUGIN_NAME in disabled:
            report.add("install", "plugins.enabled", FAIL, f"{PLUGIN_NAME} is in plugins.disabled of {home / 'config.yaml'}")
        elif PLUGIN_NAME in enabled:
            report.add("install", "plugins.enabled", OK, f"listed in plugins.enabled of {home / 'config.yaml'}")
        else:
            report.add("install", "plugins.enabled", FAIL,
                       f"{PLUGIN_NAME} is not in plugins.enabled of {home / 'config.yaml'}: Hermes will not load it; "
                       f"fix: plugins: {{enabled: [{PLUGIN_NAME}]}}")
    if os.environ.get("HERMES_SAFE_MODE", "").strip().lower() in ("1", "true", "yes", "on"):
        report.add("install", "safe mode", FAIL, "HERMES_SAFE_MODE is set: Hermes skips plugin discovery")
    # A copy of the plugin anywhere under plugins/ (e.g. plugins/.bak-2024) is a second live plugin.
    if plugins_dir.is_dir():
        for child in sorted(plugins_dir.iterdir()):
            if child == directory or not child.is_dir():
                continue
            manifest = next((child / n for n in ("plugin.yaml", "plugin.yml") if (child / n).is_file()), None)
            if manifest is None:
                continue
            name = _manifest_name(manifest)
            if child.name.startswith(".bak") or name == PLUGIN_NAME or child.name.startswith(PLUGIN_NAME):
                report.add("install", "backup under plugins/", WARN,
                           f"{child} has a plugin.yaml (name {name!r}): Hermes can load it as a second live plugin; "
                           f"move backups outside {plugins_dir}")
    return plugin_dir


def check_loaded(report: Report) -> None:
    """Let Hermes's own plugin manager discover and register the plugin, as a run would."""
    try:
        with _quiet():
            from hermes_cli.plugins import discover_plugins, get_plugin_manager

            discover_plugins()
            manager = get_plugin_manager()
            entries = [p for p in manager.list_plugins() if isinstance(p, dict)]
            hooks = {h: list(manager._hooks.get(h, [])) for h in REQUIRED_HOOKS}
    except Exception as exc:
        report.add("install", "loaded by Hermes", FAIL, f"plugin discovery failed ({type(exc).__name__}: {exc})")
        return
    ours = [p for p in entries if p.get("name") == PLUGIN_NAME or p.get("key") == PLUGIN_NAME]
    live = [p for p in ours if p.get("enabled") and not p.get("error")]
    if not ours or not live:
        why = next((p.get("error") for p in ours if p.get("error")), None)
        report.add("install", "loaded by Hermes", FAIL,
                   f"Hermes did not load {PLUGIN_NAME}" + (f": {why}" if why else " (not enabled or not found)"))
        return
    missing = [h for h, cbs in hooks.items()
               if not any(type(getattr(cb, "__self__", None)).__name__ in ("RouterRuntime", "Recovery") for cb in cbs)]
    if missing:
        report.add("install", "loaded by Hermes", FAIL, f"loaded, but these hooks are not registered: {', '.join(missing)}")
        return
    p = live[0]
    report.add("install", "loaded by Hermes", OK,
               f"{p.get('key')} v{p.get('version')} from {p.get('source')}: {p.get('hooks')} hooks, "
               f"{p.get('middleware')} middleware, {p.get('commands')} command(s)")
    runtimes = {id(getattr(cb, "__self__", None)) for cb in hooks["pre_llm_call"]
                if type(getattr(cb, "__self__", None)).__name__ == "RouterRuntime"}
    if len(runtimes) > 1 or len(ours) > 1:
        report.add("install", "single instance", WARN,
                   f"{max(len(runtimes), len(ours))} router instances are live; remove the extra copy from plugins/")


def check_router_config(report: Report, plugin_dir: Optional[Path], home: Path) -> None:
    from .config import ConfigError, env_enabled, parse_config, read_config_text, resolve_profile_name
    from .paths import config_path

    path = config_path(plugin_dir, home)
    try:
        text = read_config_text(path) if path.exists() else ""
        parsed = parse_config(text, path)
    except ConfigError as exc:
        report.add("config", "router config", FAIL, f"invalid, the router is hands-off: {exc}")
        return
    except OSError as exc:
        report.add("config", "router config", FAIL, f"{path}: cannot read ({exc.strerror})")
        return
    except Exception as exc:  # RecursionError and the like: the runtime treats it as invalid too
        report.add("config", "router config", FAIL, f"{path}: cannot be loaded ({type(exc).__name__})")
        return
    profile = resolve_profile_name()
    cfg = parsed.for_profile(profile)
    for line in parsed.warnings:
        report.add("config", "retired key", WARN, line)
    env = env_enabled()
    if env is False:
        state = "off: HERMES_TOKEN_ROUTER_ENABLED=0 (always wins)"
    elif env is True:
        state = "on: HERMES_TOKEN_ROUTER_ENABLED=1"
    else:
        state = f"{'on' if cfg.enabled else 'off'} (config.yaml, profile {profile}); /router on|off switches per process"
    report.add("config", "router config", OK, f"{path} is valid; router {state}")
    if cfg.classifier.enabled:
        report.add("config", "classifier", INFO,
                   f"model classifier on ({cfg.classifier.provider or 'deepseek'}); rules "
                   f"{'first' if cfg.deterministic_rules_enabled else 'off'}")


def check_skill_router(report: Report) -> None:
    status: Optional[Callable[..., Any]] = None
    for module in ("hermes_token_router.skill_router", "hermes_token_router.skill_router.embedding"):
        try:
            with _quiet():
                status = getattr(importlib.import_module(module), "semantic_status", None)
        except Exception:
            status = None
        if status is not None:
            break
    if status is None:
        report.skill_semantic = {"available": False, "detail": "not installed"}
        report.add("skills", "semantic backend", INFO, "not installed")
        return
    try:
        result = status()
    except Exception as exc:
        result = (False, f"semantic_status() failed ({type(exc).__name__})")
    if isinstance(result, tuple) and len(result) == 2:
        ok, detail = bool(result[0]), str(result[1])
    elif isinstance(result, dict):
        ok, detail = bool(result.get("available")), str(result.get("detail", result))
    else:
        ok, detail = bool(result), str(result)
    report.skill_semantic = {"available": ok, "detail": detail}
    report.add("skills", "semantic backend", OK if ok else INFO,
               detail if ok else f"unavailable (nickname routing still works): {detail}")


def inspect_hermes(home: Path) -> Report:
    report = Report(hermes_home=str(home))
    if not check_hermes(report):
        report.routing_path = False
        return report
    for step in (check_hooks, check_mechanisms, check_agent_lookup, check_preflight, check_registry):
        try:
            step(report)
        except Exception as exc:  # a diagnostics bug must not read as "Hermes is fine"
            report.add("internal", step.__name__, FAIL, f"{type(exc).__name__}: {exc}")
    plugin_dir = check_install(report, home)
    check_loaded(report)
    check_router_config(report, plugin_dir, home)
    check_skill_router(report)
    report.routing_path = not any(c.blocks_routing for c in report.checks)
    return report


# -- probe -----------------------------------------------------------------------------------

def run_probe(message: str = PROBE_MESSAGE, timeout_s: float = 180.0) -> Dict[str, Any]:
    """One real offline turn in a fresh process against the local stub model."""
    from .devtools import harness
    from .devtools.stub_llm import Reply, StubLLM

    rules = importlib.util.find_spec("hermes_token_router.rules") is not None
    router_cfg: Dict[str, Any] = {"global": {"enabled": True}}
    decided_by = "deterministic rules"
    with StubLLM() as stub, tempfile.TemporaryDirectory(prefix="htr-probe-") as tmp:
        if not rules:  # no rule set installed: let the stub stand in for the model classifier
            decided_by = "model classifier (the local stub answers {toolsets: [file]})"
            router_cfg["global"].update(deterministic_rules_enabled=False, classifier={
                "enabled": True, "provider": "custom", "base_url": stub.base_url, "model": "probe-classifier",
                "api_key_env": None})

            def respond(body: Dict[str, Any]) -> Reply:
                if not body.get("stream"):
                    return Reply(content=json.dumps({"toolsets": ["file"], "intent": "read a file",
                                                     "confidence": 0.99}))
                return Reply(content="ok")
            stub.responder = respond
        home = Path(tmp) / "home"
        harness.prepare_home(home, stub.base_url, router_config=router_cfg)
        env = harness.offline_env()
        env["HERMES_HOME"] = str(home)
        env["HERMES_INTERACTIVE"] = "1"
        env.pop("HERMES_TOKEN_ROUTER_ENABLED", None)
        env.pop("HERMES_TOKEN_ROUTER_CONFIG", None)
        env.pop("HERMES_SAFE_MODE", None)
        env["PYTHONPATH"] = os.pathsep.join([str(harness.REPO_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
        cmd = [sys.executable, "-m", "hermes_token_router.devtools.probe_turn", "--home", str(home),
               "--base-url", stub.base_url, "-m", message]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s,
                                  cwd=str(home))
        except subprocess.TimeoutExpired:
            return {"ok": False, "error": f"probe turn did not finish in {timeout_s:.0f}s"}
        line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("{")), None)
        if proc.returncode != 0 or line is None:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            return {"ok": False, "error": f"probe process exited {proc.returncode}: {' | '.join(tail)}"}
        data = json.loads(line)
        requests = [r for r in stub.chat_requests() if (r.body or {}).get("stream")]
        first = requests[0] if requests else None
        ledger = home / "plugins" / harness.PLUGIN_DIRNAME / "router-ledger.jsonl"
        decision = {}
        if ledger.is_file():
            for raw in ledger.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue
                decision = {k: rec.get(k) for k in ("phase", "intent", "source", "toolsets")}
                break
    turn = (data.get("turns") or [{}])[0]
    request_tools = first.tool_names if first is not None else []
    with _quiet():
        from agent.model_metadata import _estimate_tools_tokens_rough

        request_tokens = int(_estimate_tools_tokens_rough(list(first.tools))) if first is not None else 0
    before_tools, before_tokens = len(data.get("tools_before") or []), int(data.get("tokens_before") or 0)
    out = {
        "ok": True,
        "message": message,
        "decided_by": decided_by,
        "decision": decision,
        "plugins_loaded": [p.get("key") or p.get("name") for p in data.get("plugins", [])
                           if p.get("enabled") and not p.get("error")],
        "tools_before": before_tools,
        "tokens_before": before_tokens,
        "tools_after": len(turn.get("tools_after") or []),
        "tokens_after": int(turn.get("tokens_after") or 0),
        "request_tools": len(request_tools),
        "request_tool_names": request_tools,
        "request_tokens": request_tokens,
    }
    out["narrowed"] = bool(request_tools) and out["request_tools"] < before_tools
    out["tokens_saved_per_request"] = max(0, before_tokens - request_tokens) if request_tools else 0
    out["saved_pct"] = round(100.0 * out["tokens_saved_per_request"] / before_tokens, 1) if before_tokens else 0.0
    return out


# -- output ----------------------------------------------------------------------------------

_MARK = {OK: "ok  ", WARN: "WARN", FAIL: "FAIL", INFO: "info"}


def render(report: Report) -> str:
    lines = [f"hermes-token-router diagnostics  (hermes-agent {report.hermes_version or '?'}, "
             f"HERMES_HOME={report.hermes_home})", ""]
    area = None
    for c in report.checks:
        if c.area != area:
            area = c.area
            lines.append(f"[{area}]")
        lines.append(f"  {_MARK.get(c.status, c.status)}  {c.name}: {c.detail}")
    lines.append("")
    if report.routing_path:
        lines.append("ROUTING PATH: yes: the router narrows the surface before the first provider request (exit 0)")
    else:
        lines.append("ROUTING PATH: NO: first-turn savings must not be claimed on this install (exit 2); "
                     "fix the FAIL lines above")
    pre = report.routes_before_preflight
    lines.append("BEFORE PREFLIGHT ESTIMATE: " + ("yes" if pre else "no (the first-turn preflight estimate counts "
                                                   "the full tool list)" if pre is False else "unknown"))
    if report.probe is not None:
        p = report.probe
        lines.append("")
        if not p.get("ok"):
            lines.append(f"PROBE: failed: {p.get('error')}")
        else:
            lines.append(f"PROBE: one offline turn, first message {p['message']!r}, decided by {p['decided_by']}")
            if p.get("decision"):
                d = p["decision"]
                lines.append(f"  decision: {d.get('phase')} (intent {d.get('intent')}, source {d.get('source')}, "
                             f"toolsets {','.join(d.get('toolsets') or []) or '-'})")
            lines.append(f"  before: {p['tools_before']} tools, {p['tokens_before']:,} tokens (Hermes's estimator)")
            lines.append(f"  first provider request: {p['request_tools']} tools, {p['request_tokens']:,} tokens "
                         f"({', '.join(p['request_tool_names'])})")
            lines.append(f"  measured narrowing: {p['tokens_saved_per_request']:,} tokens per request "
                         f"({p['saved_pct']}%)" if p["narrowed"] else "  measured narrowing: none (full surface sent)")
    return "\n".join(lines)


def default_home() -> Path:
    env = os.environ.get("HERMES_HOME")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".hermes"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="diagnostics.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--probe", action="store_true",
                    help="also run one real offline turn against a local stub model and measure the narrowing")
    ap.add_argument("--home", type=Path, default=None, help="HERMES_HOME to inspect (default: $HERMES_HOME or ~/.hermes)")
    args = ap.parse_args(argv)
    home = (args.home or default_home()).expanduser().resolve()
    os.environ["HERMES_HOME"] = str(home)  # before Hermes is imported: discovery reads it
    report = inspect_hermes(home)
    if args.probe and report.hermes_importable:
        try:
            report.probe = run_probe()
        except Exception as exc:
            report.probe = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    if args.json:
        print(json.dumps(report.to_json(), indent=2, default=str))
    else:
        print(render(report))
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
