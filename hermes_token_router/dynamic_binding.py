"""Bind a session's dynamic-toolset index: what the host offers beyond the static toolsets.

The host side of ``dynamic_index``: read the session's MCP and plugin toolsets from Hermes
(through ``host``, deferred ones included) and build or reuse the index for that surface.
Fail open: any error means built-in routing only, never a broken turn.
"""

from __future__ import annotations

import logging
from typing import Any, Optional, Tuple

from . import dynamic_index, host
from .paths import shipped

log = logging.getLogger("hermes_token_router")


def vocabulary() -> dynamic_index.Vocabulary:
    return dynamic_index.vocabulary(shipped("policy") / "dynamic.yaml")


def index_for_agent(agent: Any, capture: Any) -> Optional[dynamic_index.DynamicIndex]:
    """The session's index, cached per surface fingerprint (None: no dynamic toolsets)."""
    try:
        toolsets = host.dynamic_toolsets(agent)
        if not toolsets:
            return None
        builtin = dynamic_index.builtin_vocabulary(
            n for n in capture.names if not host.is_dynamic_toolset(capture.owners.get(n)))
        return dynamic_index.index_for(toolsets, vocabulary(), builtin)
    except Exception as exc:
        log.warning("hermes-token-router: dynamic toolsets not indexed (%s: %s); built-in routing only",
                    type(exc).__name__, exc)
        return None


def dynamic_names(capture: Any) -> Tuple[str, ...]:
    """The captured toolsets that are dynamic (when no index was built)."""
    try:
        return tuple(o for o in capture.owner_order() if host.is_dynamic_toolset(o))
    except Exception:
        return ()
