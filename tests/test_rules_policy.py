"""A broken rule file must fail loudly with file, line and key, never route silently."""

from __future__ import annotations

import copy
import logging
import shutil
import time
from pathlib import Path

import pytest

from hermes_token_router import rules as rules_mod
from hermes_token_router.paths import shipped
from hermes_token_router.rules import PolicyError, RuleSet, default_rules

SHIPPED = shipped("policy") / "rules"


@pytest.fixture()
def policy(tmp_path: Path) -> Path:
    dst = tmp_path / "rules"
    shutil.copytree(SHIPPED, dst)
    return dst


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _line_of(path: Path, needle: str) -> int:
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(needle)


def test_shipped_rules_load(policy):
    rs = RuleSet.load(policy)
    assert "web" in rs.toolsets and len(rs.intent_names) >= 29


def test_bad_confidence_names_file_line_and_key(policy, caplog):
    f = policy / "home.yaml"
    _edit(f, "confidence: 0.95", "confidence: 1.7")
    with caplog.at_level(logging.ERROR, logger="hermes_token_router"):
        with pytest.raises(PolicyError) as exc:
            RuleSet.load(policy)
    e = exc.value
    assert (e.file, e.key) == ("home.yaml", "intents[0].confidence")
    assert e.line == _line_of(f, "confidence: 1.7")
    assert str(e).startswith(f"home.yaml:{e.line}: intents[0].confidence: ")
    assert "; fix: " in str(e) and "\n" not in str(e)
    assert "home.yaml" in caplog.text  # logged, so the router's hands-off is explained


def test_invalid_regex_points_at_the_pattern(policy):
    f = policy / "web.yaml"
    _edit(f, "      - 'https?://\\S+|\\bwww\\.\\S+'", "      - 'https?://(\\S+'")
    with pytest.raises(PolicyError) as exc:
        RuleSet.load(policy)
    assert exc.value.file == "web.yaml"
    assert exc.value.key.startswith("intents[2].en[0]")
    assert exc.value.line == _line_of(f, "https?://(")
    assert "regular expression" in exc.value.problem


def test_upper_case_pattern_is_rejected(policy):
    _edit(policy / "home.yaml", "'\\bspotify\\b|", "'\\bSpotify\\b|")
    with pytest.raises(PolicyError, match="lower-cased"):
        RuleSet.load(policy)


def test_unknown_key_is_rejected(policy):
    f = policy / "platforms.yaml"
    _edit(f, "    toolsets: [discord]\n", "    toolsets: [discord]\n    toolset: [discord]\n")
    with pytest.raises(PolicyError) as exc:
        RuleSet.load(policy)
    assert exc.value.key == "intents[0].toolset"
    assert exc.value.line == _line_of(f, "toolset: [discord]") + 0  # the misspelt key's own line


def test_yaml_syntax_error_names_the_line(policy):
    f = policy / "media.yaml"
    lines = f.read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5] + " ]: ["
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PolicyError) as exc:
        RuleSet.load(policy)
    assert exc.value.file == "media.yaml" and exc.value.key == "(yaml)" and exc.value.line >= 6


def test_duplicate_intent_across_files(policy):
    f = policy / "zz_extra.yaml"
    f.write_text("version: 1\nintents:\n  - name: spotify\n    toolsets: [spotify]\n"
                 "    confidence: 0.9\n    en: ['\\bvinyl\\b']\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="duplicate intent 'spotify'") as exc:
        RuleSet.load(policy)
    assert exc.value.line == 3


def test_missing_guards_file(policy):
    (policy / "guards.yaml").unlink()
    with pytest.raises(PolicyError, match="guards.yaml"):
        RuleSet.load(policy)


def test_intent_without_patterns(policy):
    (policy / "zz_empty.yaml").write_text(
        "version: 1\nintents:\n  - name: nothing\n    toolsets: [web]\n    confidence: 0.9\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="at least one en or zh pattern"):
        RuleSet.load(policy)


def test_a_zh_copy_of_an_en_pattern_names_the_fix(policy):
    (policy / "zz_copy.yaml").write_text(
        "version: 1\nintents:\n  - name: pdfs\n    toolsets: [file]\n    confidence: 0.9\n"
        "    en: ['\\.pdf\\b']\n    zh: ['\\.pdf\\b']\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="already run on Chinese messages, so delete the zh copy"):
        RuleSet.load(policy)


def test_en_patterns_route_chinese_messages_without_a_zh_copy():
    # pdf_file and url_read keep their patterns under en only; the guard pdf_file shares with
    # office_docs (a YAML anchor) still keeps a moved or sent PDF from being read
    rs = default_rules().without_learned()
    assert "file" in rs.classify("帮我看一下 合同_v3.pdf 第五条写了什么").toolsets
    assert "web" in rs.classify("打开 booking.casamaretta.it/rooms 看看还有没有空房").toolsets
    assert "pdf_file" not in rs.classify("把 合同_v3.pdf 移动到归档文件夹").intent
    assert "pdf_file" not in rs.classify("email report.pdf to the landlord").intent
    assert "office_docs" not in rs.classify("drag notes.docx into the shared folder").intent


def test_a_program_list_is_an_intent_of_whole_command_words(policy):
    (policy / "zz_programs.yaml").write_text(
        "version: 1\nintents:\n  - name: runner\n    toolsets: [terminal]\n    confidence: 0.95\n"
        "    programs: [pg_dump, pg_dumpall, g++]\n", encoding="utf-8")
    rs = RuleSet.load(policy).without_learned()
    for text in ("pg_dumpall the staging cluster tonight", "用pg_dump导出一份", "g++ main.cpp won't link"):
        d = rs.classify(text)
        assert "terminal" in d.toolsets and "runner" in d.intent, text
    # part of a longer name, a path's extension or a word is no command
    for text in ("my notes on pg_dumper are in the wiki", "rename backup.pg_dump to old", "the xg++ flags"):
        assert "runner" not in rs.classify(text).intent, text


def test_a_bad_program_name_names_the_key_and_the_fix(policy):
    (policy / "zz_programs.yaml").write_text(
        "version: 1\nintents:\n  - name: runner\n    toolsets: [terminal]\n    confidence: 0.95\n"
        "    programs: [pg_dump, 'PG Dump']\n", encoding="utf-8")
    with pytest.raises(PolicyError) as exc:
        RuleSet.load(policy)
    assert exc.value.file == "zz_programs.yaml" and exc.value.key.startswith("intents[0].programs")
    assert "as typed at a prompt" in str(exc.value)


def test_the_shipped_program_list_routes_to_the_terminal():
    rs = default_rules().without_learned()
    for text in ("查一下这个 IP 在不在黑名单上，在的话直接用 iptables 封掉", "flash it with esptool, port is /dev/ttyUSB0",
                 "用 openocd 连上板子", "run latexmk on thesis.tex"):
        assert "terminal" in rs.classify(text).toolsets, text


def test_default_rules_is_cached_and_reloads_on_change(monkeypatch, policy):
    monkeypatch.setattr(rules_mod, "shipped", lambda name: policy.parent if name == "policy" else shipped(name))
    rules_mod._cache.clear()
    first = default_rules()
    assert default_rules() is first
    f = policy / "home.yaml"
    time.sleep(0.01)
    _edit(f, "'\\bspotify\\b|", "'\\bvinylbox\\b|\\bspotify\\b|")
    second = default_rules()
    assert second is not first
    assert second.classify("queue it on vinylbox").toolsets == ("spotify",)
    _edit(f, "confidence: 0.95", "confidence: nope")
    with pytest.raises(PolicyError):
        default_rules()
    rules_mod._cache.clear()


def test_rules_naming_a_toolset_the_host_lacks_keep_the_router_hands_off_logged_once(monkeypatch, caplog):
    real = default_rules()
    typo = copy.copy(real)
    typo.toolset_sites = {**real.toolset_sites, "fiel": ("typo.yaml", 7)}
    monkeypatch.setattr(rules_mod, "default_rules", lambda: typo)
    known = set(real.toolset_sites)
    asked = []

    def host_toolsets():
        asked.append(1)
        return frozenset(known)

    caplog.set_level(logging.ERROR, logger="hermes_token_router")
    fit = rules_mod.HostFit()
    first, second = fit.problem(host_toolsets), fit.problem(host_toolsets)
    assert first == second and "typo.yaml" in first and "'fiel'" in first
    assert len(asked) == 2  # re-checked while it fails: the toolset may register later
    assert len([r for r in caplog.records if "'fiel'" in r.getMessage()]) == 1  # logged once
    known.add("fiel")  # it did (an MCP server came up)
    assert fit.problem(host_toolsets) is None and fit.problem(host_toolsets) is None
    assert len(asked) == 3  # a passing rule set is not checked again
