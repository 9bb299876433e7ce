"""First-turn schema cost of a decision, measured against the live Hermes registry.

Benchmarks need "how many tool-schema tokens would the router's surface cost for this
decision?" without running a conversation per record. This builds the two baselines the
release gates use (a bare CLI profile as Hermes builds it, and the same toolsets with every
availability check forced on) and runs the *same* planner the live hook runs
(``surface_mutation.plan`` through ``session_plan.plan_on_host``), counting with Hermes's own
estimator.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from hermes_token_router.config import RouterConfig
from hermes_token_router.decision import Decision
from hermes_token_router.router import with_floor
from hermes_token_router.surface import Capture, tool_name

BASELINES = ("bare", "forced")


def _ensure_hermes_home() -> None:
    if "model_tools" in __import__("sys").modules or os.environ.get("HERMES_HOME"):
        return
    from hermes_token_router.devtools import harness

    home = Path(tempfile.mkdtemp(prefix="htr-bench-home-"))
    os.environ.update(harness.offline_env())
    os.environ["HERMES_HOME"] = str(home)
    harness.prepare_home(home, "http://127.0.0.1:9/v1", install=False, enabled_plugins=())


def _bare_cli_tools() -> List[dict]:
    from hermes_token_router.devtools import harness

    agent = harness.build_agent("http://127.0.0.1:9/v1")
    try:
        return [t for t in agent.tools if tool_name(t) != "request_toolset"]
    finally:
        try:
            agent.close()
        except Exception:
            pass


def _forced_cli_tools() -> List[dict]:
    """Every tool of the CLI toolsets, as if each availability check passed."""
    import toolsets as hermes_toolsets
    from tools.registry import registry

    from hermes_token_router.devtools import harness

    names: Dict[str, None] = {}
    for ts in harness.cli_toolsets():
        for name in hermes_toolsets.resolve_toolset(ts):
            if registry.get_entry(name) is not None and name != "request_toolset":
                names.setdefault(name, None)
    out = []
    for name in sorted(names):
        schema = registry.get_schema(name)
        if schema:
            out.append({"type": "function", "function": schema})
    return out


@dataclass
class Baselines:
    surfaces: Dict[str, Capture]
    cfg: RouterConfig = field(default_factory=RouterConfig)
    _cache: Dict[Tuple[str, Tuple[str, ...]], int] = field(default_factory=dict)
    _full: Dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, cfg: Optional[RouterConfig] = None) -> "Baselines":
        _ensure_hermes_home()
        from hermes_token_router import host

        surfaces = {}
        for name, tools in (("bare", _bare_cli_tools()), ("forced", _forced_cli_tools())):
            names = tuple(tool_name(t) for t in tools)
            surfaces[name] = Capture(tools=tools, valid_tool_names=set(names), names=names,
                                     owners=host.owners_for(names))
        return cls(surfaces=surfaces, cfg=cfg or RouterConfig())

    @property
    def names(self) -> Tuple[str, ...]:
        return BASELINES

    def full_tokens(self, baseline: str) -> int:
        if baseline not in self._full:
            from hermes_token_router import host

            self._full[baseline] = host.estimate_tokens(self.surfaces[baseline].tools)
        return self._full[baseline]

    def tool_count(self, baseline: str) -> int:
        return len(self.surfaces[baseline].names)

    def narrowed_tokens(self, decision: Decision, baseline: str) -> int:
        if not decision.narrows:
            return self.full_tokens(baseline)
        toolsets = with_floor(decision, self.cfg)
        key = (baseline, tuple(sorted(toolsets)))
        if key not in self._cache:
            from hermes_token_router.catalog import load_blurbs
            from hermes_token_router.paths import shipped
            from hermes_token_router.session_plan import plan_on_host

            p = plan_on_host(self.surfaces[baseline], toolsets, self.cfg, load_blurbs(shipped("policy") / "catalog.yaml"))
            # The live router keeps the full surface when narrowing would not save anything.
            self._cache[key] = min(p.tokens_now, self.full_tokens(baseline))
        return self._cache[key]

    def toolsets(self, baseline: str) -> Tuple[Tuple[str, str], ...]:
        from hermes_token_router import host

        cap = self.surfaces[baseline]
        owners = cap.owner_order()
        desc = host.toolset_descriptions(owners)
        return tuple((o, desc.get(o, "")) for o in owners)
