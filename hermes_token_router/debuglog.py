"""The opt-in debug trail: every bail-out reason, in a rotating file beside the plugin.

A separate, non-propagating logger so turning it on never changes what Hermes's own logs
contain, and nothing secret is ever passed to it (callers log reasons, not payloads).
"""

from __future__ import annotations

import logging
import threading
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Optional

DEBUG_LOGGER = "hermes_token_router.debug"
MAX_BYTES = 2 * 1024 * 1024
BACKUPS = 3

_debug = logging.getLogger(DEBUG_LOGGER)
_debug.propagate = False
_debug.setLevel(logging.DEBUG)


class DebugTrail:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handler: Optional[RotatingFileHandler] = None
        self._path: Optional[Path] = None

    def configure(self, enabled: bool, path: Path) -> None:
        with self._lock:
            if enabled and (self._handler is None or self._path != path):
                self._drop()
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    handler = RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
                except OSError:
                    return
                handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
                for name in (DEBUG_LOGGER, "hermes_token_router.classifier"):
                    logging.getLogger(name).addHandler(handler)
                logging.getLogger("hermes_token_router.classifier").setLevel(logging.DEBUG)
                self._handler, self._path = handler, path
            elif not enabled and self._handler is not None:
                self._drop()

    def _drop(self) -> None:
        if self._handler is None:
            return
        for name in (DEBUG_LOGGER, "hermes_token_router.classifier"):
            logging.getLogger(name).removeHandler(self._handler)
        self._handler.close()
        self._handler = None

    @property
    def active(self) -> bool:
        return self._handler is not None

    def note(self, event: str, **fields: object) -> None:
        if self._handler is None:
            return
        tail = " ".join(f"{k}={v}" for k, v in fields.items())
        _debug.debug("%s %s", event, tail)
