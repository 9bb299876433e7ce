"""The runtime: what the plugin keeps in a process, and the session lifecycle hooks.

``RouterRuntime`` owns the config, the ``/router`` switch, the per-session state registry
and the fence, and composes the two other parts it hands them to: ``recovery`` (a
``recovery.Recovery``: ``post_api_request``, ``tool_request``, ``request_toolset``) and
``admission`` (an ``admission_state.AdmissionBinding``: envelope binding, quarantine, the
``pre_tool_call`` guard), plus ``skills`` (a ``skill_router.sessions.SkillSessions``: the
turn's skill injection). The hooks implemented here are the lifecycle ones
(``pre_llm_call``, ``on_session_end``/``_finalize``/``_reset``, ``pre_gateway_dispatch``);
``plugin.register`` names each hook's owner. The routing decision lives in ``router``, every
write to a surface in ``surface_mutation``.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Any, Callable, Dict, Optional, Tuple

from . import admission, admission_state, dynamic_binding, host, host_agents, surface_mutation
from .admission_state import AdmissionBinding
from .catalog import load_blurbs
from .config import ConfigStore, RouterConfig, env_enabled, resolve_profile_name
from .debuglog import DebugTrail
from .decision import full_surface
from .failopen import WarnOnce, guarded
from .ledger import LEDGER_NAME, Ledger, turn_record
from .normalize import message_text
from .paths import shipped, state_dir
from .recovery import Recovery
from .router import decide, with_floor
from .session_plan import catalog_text, classifier_toolsets, plan_on_host
from .session_state import FULL, ROUTED, SessionState, StateRegistry
from .skill_router.sessions import SkillSessions
from .surface import fold_onto, tool_name

log = logging.getLogger("hermes_token_router")

SKIP_PLATFORMS = frozenset({"subagent", "curator"})
_UNSET = object()


class _Ticket:
    """One in-flight ``pre_llm_call``; ``ended`` is set when its session ends meanwhile."""

    __slots__ = ("ended",)

    def __init__(self) -> None:
        self.ended = False


def elapsed_ok(started: float, budget_s: Optional[float]) -> Callable[[], bool]:
    """A fence predicate: still within the hook's time budget (None or 0 = unlimited)."""
    if not budget_s:
        return lambda: True
    deadline = started + budget_s
    return lambda: time.monotonic() <= deadline


def repin(state: SessionState) -> None:
    """After a restore: where the host pins tool names per session, pin what the agent now
    shows (the capture), so a resumed or rebuilt session never restores our narrowed list
    or our ``request_toolset``."""
    agent = state.agent
    if agent is not None and agent.session_id == state.session_id:
        host.persist_pin(agent, [tool_name(t) for t in agent.tools])


class RouterRuntime:
    """Everything the plugin keeps in a process: config, the ``/router`` switch, the
    per-session state registry, and the recovery and admission parts it composes (each
    given the registry and what else it needs explicitly). One instance per ``register``
    call; no module globals."""

    def __init__(self, config: Optional[ConfigStore] = None) -> None:
        self.config = config or ConfigStore()
        self.states = StateRegistry()
        self.debug = DebugTrail()
        self._switch: Optional[bool] = None
        self._switch_lock = threading.Lock()
        self._blurbs: Optional[dict] = None
        self.skills = SkillSessions()
        self._gateway_ref: Any = None
        self._last_source: Any = None
        self._ledger: Optional[Ledger] = None
        self._hook_budget_s: Optional[float] = None
        self._warn_once = WarnOnce()
        # First-turn hooks in flight, per session: a session that ends while one of them is
        # still classifying (no state stored yet) marks its ticket, and the hook commits nothing.
        self._inflight: Dict[str, list] = {}
        self._inflight_lock = threading.Lock()
        self._rules_fit: Any = None  # rules.HostFit, made on the first routed turn
        self.recovery = Recovery(self.states, self.fence, self.debug)
        self.admission = AdmissionBinding(self.states, self._end_session, self._warn_once, self.debug)

    # -- settings --------------------------------------------------------------------
    @property
    def blurbs(self) -> dict:
        if self._blurbs is None:
            self._blurbs = load_blurbs(shipped("policy") / "catalog.yaml")
        return self._blurbs

    def settings(self, agent: Any = None) -> Tuple[Optional[RouterConfig], str, Optional[str]]:
        """(config for the agent's profile or None when invalid, profile, error)."""
        profile = resolve_profile_name(agent)
        cfg, error = self.config.for_profile(profile)
        if cfg is None:
            return None, profile, error
        self.debug.configure(cfg.debug_logging, state_dir() / "router-debug.log")
        return cfg, profile, None

    def set_switch(self, value: Optional[bool]) -> None:
        with self._switch_lock:
            self._switch = value

    @property
    def switch(self) -> Optional[bool]:
        return self._switch

    def enabled(self, cfg: Optional[RouterConfig]) -> Tuple[bool, str]:
        """Effective on/off and where it comes from. ``HERMES_TOKEN_ROUTER_ENABLED=0`` always
        wins; then the process-local ``/router`` switch; then ``=1``; then config.yaml."""
        env = env_enabled()
        if env is False:
            return False, "environment (HERMES_TOKEN_ROUTER_ENABLED=0)"
        if cfg is None:
            return False, "config.yaml is invalid (hands-off)"
        if self._switch is not None:
            return self._switch, "/router " + ("on" if self._switch else "off")
        if env is True:
            return True, "environment (HERMES_TOKEN_ROUTER_ENABLED=1)"
        return cfg.enabled, "config.yaml"

    def ledger(self, cfg: RouterConfig) -> Ledger:
        if self._ledger is None or self._ledger.max_bytes != cfg.ledger_max_bytes:
            self._ledger = Ledger(state_dir() / LEDGER_NAME, cfg.ledger_max_bytes)
        return self._ledger

    def hook_budget_s(self) -> float:
        """Half of Hermes's hook timeout: past it, a late hook must not mutate anything."""
        if self._hook_budget_s is None:
            self._hook_budget_s = host.hook_callback_timeout_s() / 2.0
        return self._hook_budget_s

    def fence(self, started: float, state: Optional[SessionState] = None, session_id: str = "",
              ticket: Optional["_Ticket"] = None, envelope: Any = _UNSET) -> Callable[[], bool]:
        """The predicate a write re-checks under the session lock (docs/threads.md)."""
        within = elapsed_ok(started, self.hook_budget_s())
        if state is None:
            return within
        agent = state.agent
        bound = envelope if envelope is not _UNSET else (
            admission_state.bound_envelope(agent, state.session_id) if agent is not None else None)

        def valid() -> bool:
            """Still within the hook's budget, the session still ours and still running,
            and the admission bound to the agent unchanged since the hook started."""
            current = state.agent
            return within() and self.states.get(session_id or state.session_id) is state \
                and not (ticket is not None and ticket.ended) \
                and (current is None or admission_state.bound_envelope(current, state.session_id) is bound)
        return valid

    def _begin(self, session_id: str) -> "_Ticket":
        ticket = _Ticket()
        with self._inflight_lock:
            self._inflight.setdefault(session_id, []).append(ticket)
        return ticket

    def _finish(self, session_id: str, ticket: "_Ticket") -> None:
        with self._inflight_lock:
            tickets = self._inflight.get(session_id)
            if tickets is not None:
                tickets[:] = [t for t in tickets if t is not ticket]
                if not tickets:
                    self._inflight.pop(session_id, None)

    def _cancel_inflight(self, session_id: str) -> None:
        with self._inflight_lock:
            for ticket in self._inflight.get(session_id, ()):
                ticket.ended = True

    # -- hooks -----------------------------------------------------------------------
    @guarded("pre_llm_call")
    def pre_llm_call(self, session_id: str = "", user_message: Any = "", is_first_turn: bool = False,
                     platform: str = "", **kwargs: Any) -> Optional[Dict[str, str]]:
        started = time.monotonic()
        if platform in SKIP_PLATFORMS:
            return None
        ticket = self._begin(session_id)
        try:
            return self._pre_llm_call(session_id, user_message, started, ticket, **kwargs)
        finally:
            self._finish(session_id, ticket)

    def _pre_llm_call(self, session_id: str, user_message: Any, started: float, ticket: "_Ticket",
                      **kwargs: Any) -> Optional[Dict[str, str]]:
        self.admission.report_guard_error()
        state = self.states.get(session_id)
        agent, how = host_agents.find_agent(session_id, explicit=kwargs.get("agent"),
                                     known=state.agent if state is not None else None,
                                     turn_id=kwargs.get("turn_id"))
        if agent is None:
            self.debug.note("bail", hook="pre_llm_call", session=session_id, reason=how)
            return None
        if host_agents.is_subagent(agent):
            return None
        envelope, quarantined = self.admission.envelope(agent, session_id, kwargs)
        if quarantined:
            self.admission.retry_quarantine(agent, envelope.session_id)
            slot = admission_state.slot_of(agent)
            if slot is not None and slot.envelope is envelope:
                return None  # still quarantined: route nothing; the guard keeps the old policy
            envelope, _ = self.admission.envelope(agent, session_id, kwargs)
        cfg, profile, error = self.settings(agent)
        on, source = self.enabled(cfg)
        if not on:
            if state is not None and state.narrowed:
                self._hand_back(state, reason=source)
            self.debug.note("bail", hook="pre_llm_call", session=session_id, reason="disabled", source=source)
            return None
        assert cfg is not None
        text = message_text(user_message)  # multimodal: the text parts only
        if not text.strip() and state is None:
            # Admission is bound; no classifier, look-up, recovery or capture for an empty message.
            self.debug.note("bail", hook="pre_llm_call", session=session_id, reason="empty_message")
            return None
        injection = self.skills.for_turn(cfg.skills, session_id, text)
        extra = tuple(injection.requires_toolsets) if injection is not None else ()
        if state is None:
            self._route(agent, session_id, profile, text, cfg, extra, started, ticket, envelope)
        elif state.phase == ROUTED:
            if state.agent is not agent:
                self.states.rebind(state, agent)
            how_sticky = self._keep_sticky(state, agent, cfg, self.fence(started, state, envelope=envelope),
                                           envelope)
            self.debug.note("sticky", session=session_id, result=how_sticky)
            if extra:
                self.recovery.expand(state, agent, list(extra), via="skill", started=started)
        if injection is None:
            return None
        state = self.states.get(session_id)
        if state is not None:  # recorded after routing, so a first-turn skill is counted too
            with state.lock:
                state.skills_injected.extend(s for s in injection.skills if s not in state.skills_injected)
        return {"context": injection.text}

    def _route(self, agent: Any, session_id: str, profile: str, text: str, cfg: RouterConfig,
               extra: Tuple[str, ...], started: float, ticket: Optional["_Ticket"] = None,
               envelope: Any = None) -> None:
        capture = host.capture(agent)
        available = classifier_toolsets(capture, self.blurbs)
        remembered = self.states.recall(session_id)
        index = None
        if envelope is not None and (not admission.may_prune(envelope) or envelope.names != capture.names):
            decision = full_surface("admission:" + (envelope.why_full or "capture_changed"))
        elif remembered is not None:  # the session's agent was collected and rebuilt: same surface
            decision = remembered.decision
            extra = tuple(dict.fromkeys(tuple(extra) + remembered.loaded_toolsets))
        elif cfg.deterministic_rules_enabled and self._rules_fit_problem() is not None:
            decision = full_surface("rules:invalid")
        else:
            try:
                index = dynamic_binding.index_for_agent(agent, capture)
                decision = decide(text, cfg, available, dynamic=index.match if index is not None else None,
                                  shares=capture.shares(host.estimate_tokens))
            except Exception as exc:
                log.warning("hermes-token-router: classification failed (%s: %s); keeping the full tool surface",
                            type(exc).__name__, exc)
                decision = full_surface(f"error:{type(exc).__name__}")
        state = self.states.put(SessionState(session_id=session_id, profile=profile,
                                             agent_ref=weakref.ref(agent), phase=FULL, decision=decision,
                                             dynamic_toolsets=index.toolsets if index is not None
                                             else dynamic_binding.dynamic_names(capture)), agent)
        if state.decision is not decision:  # another thread routed this session first
            return
        if ticket is not None and ticket.ended:  # the session ended while we classified
            self.states.pop(session_id, state)
            return
        self.debug.note("decision", session=session_id, action=decision.action, intent=decision.intent,
                        source=decision.source, reason=decision.reason, ms=f"{decision.latency_ms:.3f}")
        if not decision.narrows:
            with state.lock:
                state.tokens_full = state.tokens_now = host.estimate_tokens(capture.tools)
            return
        p = plan_on_host(capture, with_floor(decision, cfg, extra), cfg, self.blurbs,
                         extra_keep=admission.floor(envelope) if envelope is not None else ())
        if p.tokens_now >= p.tokens_full:
            self.debug.note("bail", session=session_id, reason="no_saving")
            with state.lock:
                state.tokens_full = state.tokens_now = p.tokens_full
            return
        try:
            surface_mutation.commit_route(state, agent, p, self.fence(started, state, ticket=ticket, envelope=envelope),
                                          envelope, lock=host.surface_lock)
        except surface_mutation.Fenced as exc:
            self.debug.note("fenced", session=session_id, reason=str(exc))

    def _rules_fit_problem(self) -> Optional[str]:
        if self._rules_fit is None:
            from .rules import HostFit  # imported on first use, as the router imports the rules

            self._rules_fit = HostFit()
        return self._rules_fit.problem(host.known_toolsets)

    def _keep_sticky(self, state: SessionState, agent: Any, cfg: RouterConfig, still_valid: Callable[[], bool],
                     envelope: Any) -> str:
        """A routed session's later turn: keep, put back, or re-narrow a host rebuild (the
        rebuilt surface is captured and planned here, then committed by ``renarrow``)."""
        how = surface_mutation.reinstall(state, agent, still_valid, envelope, lock=host.surface_lock)
        if how == surface_mutation.FOLDED:  # the host re-pinned its merge: pin the capture again
            host.persist_pin(agent, state.capture.names)
        if how != surface_mutation.REBUILT:
            return how
        seen = agent.tools
        folded, _ = fold_onto(state.capture, seen)
        fresh = host.capture(agent, folded, {tool_name(t) for t in folded})
        text = catalog_text(fresh, self.blurbs)
        p = plan_on_host(fresh, state.loaded_toolsets, cfg, self.blurbs, catalog=text,
                         router_definition=state.router_definition if text == state.catalog_text else None,
                         extra_keep=state.keep)
        how = surface_mutation.renarrow(state, agent, p, still_valid, envelope, lock=host.surface_lock,
                                        estimate=host.estimate_tokens, seen=seen)
        host.persist_pin(agent, fresh.names)
        return how


    def _hand_back(self, state: SessionState, reason: str) -> None:
        """Router switched off: restore exactly once; retry next turn if it fails."""
        ok, error = _restore_and_repin(state)
        if error:
            log.warning("hermes-token-router: restore failed (%s); will retry next turn", error)
        if ok:
            log.info("surface restored session=%s reason=%s", state.session_id, reason)
        else:
            state.restore_failures += 1

    @guarded("on_session_end")
    def on_session_end(self, session_id: str = "", platform: str = "", **kwargs: Any) -> None:
        """Fires after *every* turn in 0.19.0: bookkeeping only, never a restore."""
        state = self.states.get(session_id)
        if state is None:
            return None
        cfg, _, _ = self.settings(state.agent)
        if cfg is None:
            return None
        with state.lock:
            done_requests, done_saved, done_recoveries = state.ledger_mark
            requests = state.requests - done_requests
            saved = state.tokens_saved_total - done_saved
            recoveries = len(state.recoveries) - done_recoveries
            state.ledger_mark = (state.requests, state.tokens_saved_total, len(state.recoveries))
            record = turn_record(session_id=session_id, profile=state.profile, platform=platform,
                                 phase=state.phase, intent=state.decision.intent, source=state.decision.source,
                                 requests=requests, tokens_full=state.tokens_full, tokens_now=state.tokens_now,
                                 tokens_saved=saved, recoveries=recoveries, toolsets=list(state.loaded_toolsets))
        if requests > 0:
            self.ledger(cfg).append(record)
        return None

    @guarded("on_session_finalize")
    def on_session_finalize(self, session_id: str = "", **kwargs: Any) -> None:
        self._end_session(session_id, kwargs.get("reason") or "finalize")
        return None

    @guarded("on_session_reset")
    def on_session_reset(self, session_id: str = "", old_session_id: str = "", **kwargs: Any) -> None:
        if old_session_id:
            self._end_session(old_session_id, "reset")
        return None

    def _end_session(self, session_id: str, reason: str) -> None:
        self._cancel_inflight(session_id)
        self.states.forget(session_id)
        state = self.states.get(session_id)
        if state is None:
            return
        was_routed = state.narrowed
        ok, error = _restore_and_repin(state)
        if error:
            log.debug("hermes-token-router: restore raised %s", error)
        if state.agent is not None:
            admission_state.mark_restore(state.agent, session_id, ok)
        if ok:
            self.states.pop(session_id, state)
            self.admission.forget(session_id)
            self.skills.forget(session_id)
            if was_routed:
                log.info("surface restored session=%s reason=%s", session_id, reason)
        else:
            state.restore_failures += 1
            if self._warn_once.first(session_id):
                log.warning("hermes-token-router: could not restore session %s at %s; will retry",
                            session_id, reason)

    @guarded("pre_gateway_dispatch")
    def pre_gateway_dispatch(self, event: Any = None, gateway: Any = None, **kwargs: Any) -> Any:
        if gateway is not None:
            self._gateway_ref = weakref.ref(gateway)
            self._last_source = getattr(event, "source", None)
        cfg, _, _ = self.settings(None)
        if cfg is None or not cfg.skills.enabled or not cfg.skills.gateway_rewrite:
            return None
        on, _ = self.enabled(cfg)
        if not on:
            return None
        router = self.skills.router(cfg.skills)
        text = getattr(event, "text", None)
        if router is None or not isinstance(text, str):
            return None
        rewritten = router.rewrite_for_gateway(text, session_key=host_agents.gateway_session_key(gateway, event))
        return {"action": "rewrite", "text": rewritten} if rewritten else None

    def gateway_agent(self) -> Any:
        """The agent serving the gateway chat whose message is being handled (slash
        commands carry no session, but ``pre_gateway_dispatch`` ran just before them)."""
        gateway = self._gateway_ref() if self._gateway_ref is not None else None
        if gateway is None or self._last_source is None:
            return None
        return host_agents.gateway_cached_agent(gateway, self._last_source)

    # -- skill_load (the skill router's tool; SkillSessions holds the routers) ----------
    def skill_load_available(self) -> bool:
        """``skill_load``'s availability check: offered only while the router and its skill
        routing are on, so with either off the host surface is exactly Hermes's own."""
        try:
            cfg, _, _ = self.settings(None)
            return bool(cfg is not None and self.enabled(cfg)[0] and cfg.skills.enabled)
        except Exception:
            return False

    def skill_load(self, args: Dict[str, Any], **kwargs: Any) -> str:
        def active() -> Any:
            cfg, _, _ = self.settings(None)
            if cfg is None or not self.enabled(cfg)[0] or not cfg.skills.enabled:
                return None
            return self.skills.router(cfg.skills)

        return self.skills.load(active, args)


def _restore_and_repin(state: SessionState) -> Tuple[bool, Optional[str]]:
    """Hand back the captured surface and re-persist the host's pin without our tool; both the
    /router off path and the session end need the same pair, and neither may raise."""
    try:
        ok = surface_mutation.restore(state, lock=host.surface_lock)
        if ok:
            repin(state)
        return ok, None
    except Exception as exc:
        return False, type(exc).__name__
