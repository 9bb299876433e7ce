"""Build, load and hot-reload the skill index (entries.json, embeddings.npy, index.json).

Why files on disk: embedding ~200 skills takes about a second; doing it at every Hermes
start would be paid by the user. The store re-reads the files when their mtimes change, so
``skills build`` takes effect without a restart. A corrupt index degrades to nickname-only
routing with one warning, never an exception in the user's turn.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from . import embedding
from .config import DEFAULT_THRESHOLD
from .scan import SkillEntry, embedding_texts, scan_skills
from ..paths import command_line

REBUILD = command_line("skills build")

log = logging.getLogger("hermes_token_router.skills")

INDEX_VERSION = 1
FILES = ("index.json", "entries.json", "embeddings.npy")
# Far above a real index (200 skills: ~100 KB of entries, ~4 MB of vectors); a file past
# this is refused before it is read, so a planted giant cannot stall the turn that loads it.
MAX_INDEX_BYTES = {"index.json": 1 << 20, "entries.json": 64 << 20, "embeddings.npy": 256 << 20}


def default_index_dir() -> Path:
    from ..paths import state_dir

    return state_dir() / ".skill-index"


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def build_index(out_dir: Path, dirs: Optional[Iterable[Path]] = None, backend: str = "use-m3",
                threshold: float = DEFAULT_THRESHOLD) -> Dict[str, Any]:
    """Scan skills, embed them if the backend is available, and write the three files.

    index.json is written last so a reader never pairs new metadata with old vectors.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = scan_skills(dirs)
    texts: List[str] = []
    for entry in entries:
        rows = embedding_texts(entry)
        entry.rows = [len(texts), len(texts) + len(rows)]
        texts.extend(rows)
    ok, detail = embedding.semantic_status(backend)
    model, dim = None, 0
    if ok and entries:
        import io

        import numpy as np

        vectors = np.asarray(embedding.encode(backend, texts), dtype=np.float32)
        buf = io.BytesIO()
        np.save(buf, vectors, allow_pickle=False)
        _atomic_write(out_dir / "embeddings.npy", buf.getvalue())
        model, dim = backend, int(vectors.shape[1])
    else:
        (out_dir / "embeddings.npy").unlink(missing_ok=True)
        if not ok:
            log.warning("skill router: building a nickname-only index: %s", detail)
    _atomic_write(out_dir / "entries.json",
                  json.dumps([e.to_json() for e in entries], ensure_ascii=False, indent=1).encode("utf-8"))
    meta = {"version": INDEX_VERSION, "model": model, "dimension": dim, "count": len(entries), "rows": len(texts),
            "default_threshold": threshold, "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "skills_dirs": sorted({e.root for e in entries}), "semantic": detail}
    _atomic_write(out_dir / "index.json", json.dumps(meta, indent=1).encode("utf-8"))
    return meta


@dataclass(frozen=True)
class LoadedIndex:
    meta: Dict[str, Any]
    entries: Tuple[SkillEntry, ...]
    vectors: Any  # numpy (rows, dim) or None
    starts: Any  # numpy row offsets per entry, or None
    by_name: Dict[str, SkillEntry]

    @property
    def semantic(self) -> bool:
        return self.vectors is not None and len(self.entries) > 0

    def lookup(self, name: str) -> Optional[SkillEntry]:
        return self.by_name.get(name) or self.by_name.get(name.lower())


def load_index(index_dir: Path) -> LoadedIndex:
    """Read and validate the index; raises ValueError/OSError when it is unusable."""
    index_dir = Path(index_dir)
    for name, limit in MAX_INDEX_BYTES.items():
        path = index_dir / name
        if path.exists() and (not path.is_file() or path.stat().st_size > limit):
            raise ValueError(f"{name} is not a regular file of at most {limit} bytes; "
                             f"rebuild with '{REBUILD}'")
    meta = json.loads((index_dir / "index.json").read_text(encoding="utf-8"))
    if not isinstance(meta, dict) or meta.get("version") != INDEX_VERSION:
        raise ValueError(f"index.json version {meta.get('version') if isinstance(meta, dict) else '?'} "
                         f"is not {INDEX_VERSION}; rebuild with 'skills build -p PROFILE'")
    raw = json.loads((index_dir / "entries.json").read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError("entries.json is not a list")
    entries = tuple(SkillEntry.from_json(e) for e in raw)
    vectors = starts = None
    if meta.get("model") and (index_dir / "embeddings.npy").is_file():
        import numpy as np

        vectors = np.load(index_dir / "embeddings.npy", allow_pickle=False)
        rows = int(meta.get("rows", -1))
        if vectors.ndim != 2 or vectors.shape[0] != rows or vectors.shape[1] != int(meta.get("dimension", -1)):
            raise ValueError(f"embeddings.npy shape {vectors.shape} does not match index.json")
        bounds = [tuple(e.rows) for e in entries]
        if any(b[0] >= b[1] or b[1] > rows for b in bounds):
            raise ValueError("entries.json row ranges do not match embeddings.npy")
        starts = np.asarray([b[0] for b in bounds], dtype=np.intp)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    by_name: Dict[str, SkillEntry] = {}
    for e in entries:
        for key in (e.name, e.qualified_name, Path(e.path).parent.name):
            by_name.setdefault(key, e)
            by_name.setdefault(key.lower(), e)
    return LoadedIndex(meta=meta, entries=entries, vectors=vectors, starts=starts, by_name=by_name)


class IndexStore:
    """Lazily loaded, mtime-reloaded index shared across threads."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = Path(index_dir)
        self._lock = threading.Lock()
        self._sig: Optional[Tuple] = None
        self._index: Optional[LoadedIndex] = None
        self._warned_sig: Optional[Tuple] = None
        self.error: Optional[str] = None

    def _signature(self) -> Tuple:
        sig = []
        for name in FILES:
            try:
                st = (self.index_dir / name).stat()
                sig.append((st.st_mtime_ns, st.st_size))
            except OSError:
                sig.append(None)
        return tuple(sig)

    def get(self) -> Optional[LoadedIndex]:
        """The current index, or None (missing or corrupt: callers route by nickname only)."""
        sig = self._signature()
        if sig == self._sig:
            return self._index
        with self._lock:
            if sig == self._sig:
                return self._index
            index, error = None, None
            if sig[0] is None:
                from ..config import resolve_profile_name

                error = (f"no skill index at {self.index_dir}; build it: "
                         f"{command_line('skills build', resolve_profile_name())}")
            else:
                try:
                    index = load_index(self.index_dir)
                except Exception as exc:
                    error = f"skill index at {self.index_dir} is unusable ({type(exc).__name__}: {exc})"
            if error and self._warned_sig != sig:
                self._warned_sig = sig
                (log.info if sig[0] is None else log.warning)("skill router: %s; routing by nickname only", error)
            self._index, self.error, self._sig = index, error, sig
            return index
