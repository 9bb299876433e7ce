"""The routing corpus is a contract: these checks keep it one (shape, size, balance, coverage).

They guard against a corpus that silently drifts into a tuning set: a missing language for a
toolset, a duplicate id or a stray field would let the benchmark pass without testing what
the gates claim to test.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS_FILES = sorted((ROOT / "corpus").glob("routing*.jsonl"))
FIELDS = {"id", "text", "lang", "required", "acceptable", "kind", "critical"}
KINDS = {"task", "compound", "chitchat", "capability", "ambiguous", "negated"}
# The 0.19.0 registry's toolsets (docs/rules.md explains how to refresh this list).
REGISTRY_TOOLSETS = {
    "browser", "browser-cdp", "clarify", "code_execution", "computer_use", "cronjob", "delegation",
    "discord", "discord_admin", "feishu_doc", "feishu_drive", "file", "hermes-yuanbao",
    "homeassistant", "image_gen", "kanban", "memory", "project", "session_search", "skills",
    "spotify", "terminal", "todo", "tts", "video", "video_gen", "vision", "web", "x_search",
}


def _records():
    out = []
    for path in CORPUS_FILES:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                out.append((path.name, n, json.loads(line)))
    return out


RECORDS = _records()


def test_corpus_files_exist():
    assert CORPUS_FILES, "corpus/routing*.jsonl is missing"


def test_exactly_506_records_with_unique_ids():
    assert len(RECORDS) == 506
    ids = Counter(r["id"] for _, _, r in RECORDS)
    assert [i for i, c in ids.items() if c > 1] == []


@pytest.mark.parametrize("where,line,rec", RECORDS, ids=[r["id"] for _, _, r in RECORDS])
def test_record_shape(where, line, rec):
    assert set(rec) == FIELDS, f"{where}:{line}"
    assert isinstance(rec["text"], str) and rec["text"].strip()
    assert rec["lang"] in {"en", "zh"}
    assert rec["kind"] in KINDS
    assert isinstance(rec["critical"], bool)
    for key in ("required", "acceptable"):
        assert isinstance(rec[key], list)
        assert set(rec[key]) <= REGISTRY_TOOLSETS, f"{where}:{line}: unknown toolset in {key}"
        assert len(set(rec[key])) == len(rec[key])
    assert not set(rec["required"]) & set(rec["acceptable"]), "a toolset is either required or acceptable"
    if rec["kind"] in {"chitchat", "capability"}:
        assert rec["required"] == [] and rec["acceptable"] == [] and not rec["critical"]
    if rec["kind"] == "compound":
        assert len(rec["required"]) >= 2
    if rec["critical"]:
        assert rec["required"], "a critical record must name the toolset that does the side effect"


def test_language_matches_text():
    for _, _, rec in RECORDS:
        has_cjk = any("\u4e00" <= ch <= "\u9fff" for ch in rec["text"])
        assert has_cjk == (rec["lang"] == "zh"), rec["id"]


def test_about_60_40_english_chinese():
    langs = Counter(r["lang"] for _, _, r in RECORDS)
    share = langs["en"] / len(RECORDS)
    assert 0.57 <= share <= 0.63, langs


def test_every_registry_toolset_is_required_in_both_languages():
    seen = {"en": set(), "zh": set()}
    for _, _, rec in RECORDS:
        seen[rec["lang"]].update(rec["required"])
    assert REGISTRY_TOOLSETS - seen["en"] == set()
    assert REGISTRY_TOOLSETS - seen["zh"] == set()


def test_every_kind_appears_in_both_languages():
    for lang in ("en", "zh"):
        kinds = {r["kind"] for _, _, r in RECORDS if r["lang"] == lang}
        assert kinds == KINDS, lang
