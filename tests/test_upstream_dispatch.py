"""The threaded hook dispatch emulation's 60 s suppression, on a fake clock.

The plugin itself keeps no suppression window (see ``test_classifier``: after a timeout the
next first turn asks the classifier again). The window lives in upstream Hermes's hook
dispatch, which ``devtools.upstream_dispatch`` reproduces for the live suite: a callback
that timed out is not called again for 60 seconds; a callback that raised is. The live
tests only hold if the emulation does exactly that, so it is pinned here, without sleeping
through the window.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List

import pytest

from hermes_token_router.devtools.upstream_dispatch import (SUPPRESSION_S, TIMEOUT_BLOCK_MESSAGE,
                                                            ThreadedDispatch)


class Manager:
    """The one attribute ``ThreadedDispatch`` reads from Hermes's ``PluginManager``."""

    def __init__(self, hooks: Dict[str, List[Callable[..., Any]]]) -> None:
        self._hooks = hooks

    def invoke_hook(self, hook_name: str, **kwargs: Any) -> List[Any]:  # replaced by install()
        raise AssertionError("the emulation must replace invoke_hook")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class SlowOnce:
    """A callback that hangs on its first call (until released) and answers at once after."""

    def __init__(self, answer: Any) -> None:
        self.calls = 0
        self.answer = answer
        self.release = threading.Event()

    def __call__(self, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            self.release.wait(10)
        return self.answer


@pytest.fixture
def clock():
    return Clock()


def dispatch_for(hook: str, cb: Callable[..., Any], clock: Clock) -> ThreadedDispatch:
    return ThreadedDispatch(Manager({hook: [cb]}), timeout_s=0.05, clock=clock).install()


@pytest.mark.parametrize("hook, skipped_result", [
    ("pre_llm_call", []),
    ("pre_tool_call", [{"action": "block", "message": TIMEOUT_BLOCK_MESSAGE}]),
])
def test_a_timed_out_callback_is_not_called_again_inside_the_window(clock, hook, skipped_result):
    # Each call is a new turn: the emulation's other skip (same turn id still running) stays out of it.
    cb = SlowOnce({"context": "late"})
    dispatch = dispatch_for(hook, cb, clock)
    try:
        assert dispatch.manager.invoke_hook(hook, session_id="s1", turn_id="t1") == skipped_result
        assert dispatch.count(hook, "timeout") == 1
        cb.release.set()  # the abandoned worker ends; the window stays
        clock.now += SUPPRESSION_S - 0.1
        assert dispatch.manager.invoke_hook(hook, session_id="s2", turn_id="t2") == skipped_result
        assert cb.calls == 1, "the slow callback was called again inside the suppression window"
        assert dispatch.count(hook, "skipped") == 1
        clock.now += 0.2  # past the window: the callback runs again
        assert dispatch.manager.invoke_hook(hook, session_id="s3", turn_id="t3") == [{"context": "late"}]
        assert cb.calls == 2
    finally:
        cb.release.set()
        dispatch.uninstall()


def test_a_callback_that_raised_is_not_suppressed(clock):
    calls = []

    def flaky(**kwargs: Any) -> Any:
        calls.append(kwargs)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return None

    dispatch = dispatch_for("pre_tool_call", flaky, clock)
    try:
        first = dispatch.manager.invoke_hook("pre_tool_call", tool_name="read_file")
        assert first and first[0]["action"] == "block" and "RuntimeError" in first[0]["message"]
        assert dispatch.manager.invoke_hook("pre_tool_call", tool_name="read_file") == []
        assert len(calls) == 2 and dispatch.count("pre_tool_call", "skipped") == 0
    finally:
        dispatch.uninstall()


def test_suppression_is_per_callback(clock):
    slow, quick = SlowOnce(None), []
    dispatch = ThreadedDispatch(Manager({"pre_llm_call": [slow, lambda **kw: quick.append(kw) or {"ok": 1}]}),
                                timeout_s=0.05, clock=clock).install()
    try:
        assert dispatch.manager.invoke_hook("pre_llm_call") == [{"ok": 1}]
        slow.release.set()
        assert dispatch.manager.invoke_hook("pre_llm_call") == [{"ok": 1}]
        assert slow.calls == 1 and len(quick) == 2
    finally:
        slow.release.set()
        dispatch.uninstall()
