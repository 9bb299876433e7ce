"""The fail-open wall: no exception of ours ever reaches Hermes.

Every hook, middleware, tool handler and command the plugin registers is wrapped by
``guarded``: an exception logs one warning, leaves a note in the debug trail, and returns
``None``, so the user's turn goes on with the tool surface as it was (full, if the router
had not narrowed it yet).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

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
                self.debug.note("error", hook=hook, error=type(exc).__name__)
                return None
        return inner
    return wrap
