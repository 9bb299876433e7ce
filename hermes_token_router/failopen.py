"""The fail-open wall: no exception of ours ever reaches Hermes.

Every hook, middleware, tool handler and command the plugin registers is wrapped by
``guarded``: an exception logs one warning and returns ``None``, so the user's turn goes on
with the tool surface as it was (full, if the router had not narrowed it yet). When the
wrapped object was given a debug trail (``self.debug``, a ``debuglog.DebugTrail``), the
failure is noted there too; an object without one is still guarded.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any, Set

log = logging.getLogger("hermes_token_router")


def guarded(hook: str):
    def wrap(fn):
        @functools.wraps(fn)
        def inner(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(self, *args, **kwargs)
            except Exception as exc:  # fail open: never raise into Hermes
                log.warning("hermes-token-router: %s failed (%s: %s); the tool surface is left as it was",
                            hook, type(exc).__name__, exc)
                log.debug("hermes-token-router: %s traceback", hook, exc_info=True)
                trail = getattr(self, "debug", None)
                if trail is not None:
                    try:
                        trail.note("error", hook=hook, error=type(exc).__name__)
                    except Exception:
                        pass
                return None
        return inner
    return wrap


class WarnOnce:
    """Once per key (a session id, or a note's text): shared by everything that warns or notifies once."""

    def __init__(self) -> None:
        self._seen: Set[str] = set()
        self._lock = threading.Lock()

    def first(self, session_id: str) -> bool:
        with self._lock:
            if session_id in self._seen:
                return False
            self._seen.add(session_id)
            return True
