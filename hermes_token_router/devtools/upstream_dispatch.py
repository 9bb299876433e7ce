"""Upstream Hermes's threaded hook dispatch, reproduced on the installed 0.19.0 for tests.

Current Hermes (NousResearch/hermes-agent main, 0.21.x) cannot be installed here (it needs
Python 3.14), but the part of it that changes the plugin's world is small: how
``PluginManager.invoke_hook`` runs a callback. Read from ``hermes_cli/plugins_dispatch.py``
(commit 006a5aebb4d134ba188ff60adf1a02f668312b5f) and ``hermes_cli/plugins.py``
(``_resolve_hook_callback_timeout``), the behaviour this module reproduces is:

* hooks in a bounded set (``pre_llm_call``, ``post_api_request``, ``on_session_end`` and a
  few observers) and the fail-closed ``pre_tool_call`` run each callback on a *daemon* thread
  named ``hermes-hook-<callback name>`` (cut to 40 characters), inside a copy of the caller's
  ``contextvars`` context; the caller waits at most ``plugins.hook_callback_timeout`` seconds
  (default 30, capped at 600; 0 means run synchronously) and never joins the worker;
* a bounded hook that times out is skipped; ``pre_tool_call`` that times out, or raises,
  yields a block directive instead (the tool call is vetoed);
* a callback that timed out is suppressed for 60 seconds (keyed by hook and callback, so one
  slow call blocks every session's calls to that callback), and a second call with the same
  ``tool_call_id``/``turn_id`` is skipped while the first is still running;
* every other hook (``on_session_finalize``, ``on_session_reset``, ``pre_gateway_dispatch``)
  stays synchronous on the caller's thread.

Nothing here is upstream's code; it is the smallest emulation that reproduces those rules, so
the live suite can run the same scenarios under 0.19.0's synchronous hooks and under this.
"""

from __future__ import annotations

import contextvars
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

BOUNDED_HOOKS = frozenset({
    "post_tool_call", "transform_terminal_output", "transform_tool_result", "transform_llm_output",
    "pre_llm_call", "post_llm_call", "pre_api_request", "post_api_request", "api_request_error",
    "on_session_start", "on_session_end",
})
FAIL_CLOSED_HOOKS = frozenset({"pre_tool_call"})
SUPPRESSION_S = 60.0
TIMEOUT_BLOCK_MESSAGE = "pre_tool_call plugin callback timed out or is still running"
THREAD_PREFIX = "hermes-hook-"


@dataclass
class Event:
    hook: str
    callback: str
    what: str  # "ran", "timeout", "skipped", "raised", "blocked"
    thread: str = ""


@dataclass
class ThreadedDispatch:
    """Replaces one ``PluginManager``'s ``invoke_hook`` (install/uninstall); ``timeout_s=0``
    keeps every hook synchronous, as upstream does for that setting."""

    manager: Any
    timeout_s: float = 30.0
    suppression_s: float = SUPPRESSION_S
    clock: Callable[[], float] = time.monotonic  # injectable, so the 60 s window is tested without sleeping
    events: List[Event] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _suppressed_until: Dict[Tuple[str, int], float] = field(default_factory=dict)
    _running: Dict[Tuple[str, int, Optional[str]], object] = field(default_factory=dict)
    _original: Optional[Callable[..., List[Any]]] = None

    def install(self) -> "ThreadedDispatch":
        self._original = self.manager.invoke_hook
        self.manager.invoke_hook = self.invoke_hook
        return self

    def uninstall(self) -> None:
        if self._original is not None:
            self.manager.invoke_hook = self._original
            self._original = None

    def _note(self, hook: str, cb: Callable, what: str) -> None:
        with self._lock:
            self.events.append(Event(hook, getattr(cb, "__name__", repr(cb)), what,
                                     threading.current_thread().name))

    def invoke_hook(self, hook_name: str, **kwargs: Any) -> List[Any]:
        bounded = self.timeout_s > 0 and (hook_name in BOUNDED_HOOKS or hook_name in FAIL_CLOSED_HOOKS)
        fail_closed = hook_name in FAIL_CLOSED_HOOKS
        results: List[Any] = []
        for cb in list(self.manager._hooks.get(hook_name, [])):
            try:
                if bounded:
                    skipped, value = self._bounded(hook_name, cb, kwargs)
                    if skipped:
                        if fail_closed:
                            results.append({"action": "block", "message": TIMEOUT_BLOCK_MESSAGE})
                            self._note(hook_name, cb, "blocked")
                        continue
                else:
                    value = cb(**kwargs)
                if value is not None:
                    results.append(value)
            except Exception as exc:
                self._note(hook_name, cb, "raised")
                if fail_closed:
                    results.append({"action": "block", "message": f"{hook_name} plugin callback "
                                    f"{getattr(cb, '__name__', repr(cb))} raised {type(exc).__name__}: {exc}"})
                    self._note(hook_name, cb, "blocked")
        return results

    def _bounded(self, hook_name: str, cb: Callable, kwargs: Dict[str, Any]) -> Tuple[bool, Any]:
        """(skipped, value); exceptions of the callback propagate to ``invoke_hook``."""
        identity = next((kwargs[k] for k in ("tool_call_id", "turn_id")
                         if isinstance(kwargs.get(k), str) and kwargs.get(k)), None)
        key = (hook_name, id(cb))
        gate = (*key, identity)
        token = object()
        with self._lock:
            until = self._suppressed_until.get(key)
            if gate in self._running or (until is not None and until > self.clock()):
                self.events.append(Event(hook_name, getattr(cb, "__name__", repr(cb)), "skipped"))
                return True, None
            self._running[gate] = token
        done = threading.Event()
        out: Dict[str, Any] = {}
        context = contextvars.copy_context()

        def runner() -> None:
            try:
                out["value"] = context.run(cb, **kwargs)
                self._note(hook_name, cb, "ran")
            except BaseException as exc:  # re-raised on the caller's thread
                out["exc"] = exc
            finally:
                with self._lock:
                    if self._running.get(gate) is token:
                        self._running.pop(gate, None)
                done.set()

        name = f"{THREAD_PREFIX}{getattr(cb, '__name__', 'callback')}"[:40]
        threading.Thread(target=runner, name=name, daemon=True).start()
        if not done.wait(self.timeout_s):  # abandoned, never joined
            with self._lock:
                self._suppressed_until[key] = self.clock() + self.suppression_s
            self._note(hook_name, cb, "timeout")
            return True, None
        if "exc" in out:
            raise out["exc"]
        return False, out.get("value")

    def count(self, hook: str, what: str) -> int:
        with self._lock:
            return sum(1 for e in self.events if e.hook == hook and e.what == what)

    def threads(self, hook: str) -> List[str]:
        with self._lock:
            return [e.thread for e in self.events if e.hook == hook and e.what == "ran"]
