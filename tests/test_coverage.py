"""Whole-request coverage, companions, the learned second opinion and the precision fixes
(issue 12), on the shipped policy and on small policies written here."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import math
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_token_router import learned as learned_mod
from hermes_token_router.coverage import Coverage, mask_content
from hermes_token_router.learned import LearnedModel
from hermes_token_router.prefilter import Filtered, LiteralScanner, literals
from hermes_token_router.cli.route import add_subcommand as add_route_subcommand, run_route
from hermes_token_router.rules import RuleSet, default_rules, normalize

ROOT = Path(__file__).resolve().parents[1]
POLICY = ROOT / "policy"


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return default_rules()


@pytest.fixture(scope="module")
def cov() -> Coverage:
    c = Coverage.load(POLICY)
    assert c is not None
    return c


def _texts(cov, text):
    t = normalize(text)
    cjk = re.search(r"[\u3400-\u9fff]", t) is not None
    return [c.text.strip() for c in cov.split(t, cjk)]


# --------------------------------------------------------------------------- clauses


@pytest.mark.parametrize("text,parts", [
    ("run the tests and then post the results", ["run the tests", "post the results"]),
    ("check the forecast. after that turn on the heater", ["check the forecast", "turn on the heater"]),
    ("find the date; also set a reminder", ["find the date", "set a reminder"]),
])
def test_english_clauses_split_at_connectives_and_punctuation(cov, text, parts):
    assert _texts(cov, text) == parts


@pytest.mark.parametrize("text,parts", [
    ("先查一下明天的天气，然后把空调打开", ["先查一下明天的天气", "把空调打开"]),
    ("跑一下测试再提交代码", ["跑一下测试", "提交代码"]),
    ("总结这个视频 存到同一个文件夹里", ["总结这个视频", "存到同一个文件夹里"]),
    ("写个脚本并且顺便提醒我明天看结果", ["写个脚本", "提醒我明天看结果"]),
])
def test_chinese_clauses_split_at_connectives_punctuation_and_spaces(cov, text, parts):
    assert _texts(cov, text) == parts


def test_one_clause_messages_carry_no_clause_table(rules):
    assert rules.classify("turn off the lights").clauses == ()


@pytest.mark.parametrize("text,need", [
    ("run the backup script, then post the output to the team chat", {"terminal", "discord"}),
    ("跑一下 deploy.sh 然后把结果发到群里", {"terminal", "hermes-yuanbao"}),
    ("is the tube strike still on friday? if so remind me to work from home", {"cronjob", "web"}),
    ("明天上海到南京的高铁还有没有票，有的话晚上8点提醒我", {"cronjob", "web"}),
])
def test_an_unexplained_action_clause_widens_the_surface(rules, text, need):
    d = rules.classify(text)
    assert d.action == "narrow" and need <= set(d.toolsets), d
    assert any(e.startswith("widened:") for _, e in d.clauses)


def test_each_clause_names_what_explained_it(rules):
    d = rules.classify("check the weather in paris and turn on the bedroom lights")
    table = dict(d.clauses)
    assert "web_facts" in table["check the weather in paris"]
    assert table["turn on the bedroom lights"] == "homeassistant"


def test_abstain_mode_keeps_the_full_surface(tmp_path):
    shutil.copytree(POLICY, tmp_path / "policy")
    path = tmp_path / "policy" / "coverage.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("unexplained: widen", "unexplained: abstain"),
                    encoding="utf-8")
    rs = RuleSet.load(tmp_path / "policy" / "rules")
    d = rs.classify("run the backup script, then post the output to the team chat")
    assert d.action == "full" and d.reason == "unexplained_clause:message"
    assert ("post the output to the team chat", "unexplained:message") in d.clauses


def test_a_broken_coverage_file_means_whole_message_routing_and_one_warning(tmp_path, caplog):
    shutil.copytree(POLICY, tmp_path / "policy")
    (tmp_path / "policy" / "coverage.yaml").write_text("version: 1\nsplit: [\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="hermes_token_router"):
        rs = RuleSet.load(tmp_path / "policy" / "rules")
    assert rs.coverage is None
    assert sum("coverage.yaml unusable" in r.message for r in caplog.records) == 1
    assert rs.classify("turn off the lights").toolsets == ("homeassistant",)


# --------------------------------------------------------------------------- route --json / --jsonl


def _parse(argv):
    import argparse

    parser = argparse.ArgumentParser()
    add_route_subcommand(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_route_json_shows_clauses_and_jsonl_keeps_its_fields():
    text = "run the tests and then post the results to discord"
    out = io.StringIO()
    assert run_route(_parse(["route", text, "--json"]), stdout=out) == 0
    data = json.loads(out.getvalue())
    assert [c["text"] for c in data["clauses"]] == ["run the tests", "post the results to discord"]
    assert all(c["explained_by"] for c in data["clauses"])
    out = io.StringIO()
    assert run_route(_parse(["route", "--jsonl"]), stdin=io.StringIO(json.dumps({"id": 1, "text": text}) + "\n"),
                     stdout=out) == 0
    row = json.loads(out.getvalue())
    assert set(row) == {"id", "action", "toolsets", "intent", "confidence", "source", "reason", "latency_ms"}


# --------------------------------------------------------------------------- companions


def test_companions_add_measured_toolsets(tmp_path):
    shutil.copytree(POLICY, tmp_path / "policy")
    (tmp_path / "policy" / "companions.yaml").write_text(
        "version: 1\ncompanions:\n  - {when: homeassistant, add: [todo], share: 0.5, count: 9, of: 18, cost: 310}\n",
        encoding="utf-8")
    rs = RuleSet.load(tmp_path / "policy" / "rules")
    d = rs.classify("turn off the lights")
    assert d.toolsets == ("homeassistant", "todo") and "companions todo" in d.reason
    assert rs.classify("play some jazz").toolsets == ("spotify",)


def test_shipped_companions_are_measured_rows():
    import yaml

    data = yaml.safe_load((POLICY / "companions.yaml").read_text(encoding="utf-8"))
    for row in data["companions"]:
        assert {"when", "add", "share", "count", "of", "cost"} <= set(row)
        assert row["share"] >= 0.35 and row["count"] >= 4


# --------------------------------------------------------------------------- learned model


def _model(tmp_path, weights, union_at=0.8, disagree_at=0.05):
    path = tmp_path / "learned.json"
    path.write_text(json.dumps({"version": 1, "labels": ["web", "file", "terminal"], "bias": [-4.0, -4.0, -4.0],
                                "union_at": union_at, "disagree_at": disagree_at, "weights": weights}),
                    encoding="utf-8")
    return path


def test_learned_model_unions_a_confident_toolset_the_rules_missed(tmp_path):
    path = _model(tmp_path, {"w:dentist": [[0, 8.0], [2, 3.0]]})
    rs = RuleSet.load(POLICY / "rules", learned=path)
    d = rs.classify("remind me at 7pm about the dentist thing")
    assert {"cronjob", "web"} <= set(d.toolsets) and "learned web" in d.reason
    assert "web" not in rs.without_learned().classify("remind me at 7pm about the dentist thing").toolsets


def test_learned_model_abstains_on_strong_disagreement(tmp_path):
    path = _model(tmp_path, {"w:lights": [[2, 9.0]]})
    model = LearnedModel.load(path)
    verdict, added, _ = model.second_opinion(normalize("turn off the lights"), ("web",))
    assert verdict == "abstain" and added == []


def _priced(tmp_path, weights, shares, miss_share=0.1, floor_p=0.3):
    path = tmp_path / "priced.json"
    path.write_text(json.dumps({"version": 1, "labels": ["web", "file", "terminal"], "bias": [-4.0, -4.0, -4.0],
                                "union_at": 0.9, "disagree_at": 0.02, "weights": weights, "miss_share": miss_share,
                                "floor_p": floor_p, "shares": shares}), encoding="utf-8")
    return LearnedModel.load(path)


def test_priced_union_adds_a_cheap_toolset_at_a_lower_probability_than_an_expensive_one(tmp_path):
    # p(web) = p(terminal) = sigmoid(-4 + 3.6) = 0.40: between the floor (0.3) and union_at (0.9)
    model = _priced(tmp_path, {"w:logs": [[0, 3.6], [2, 3.6]]}, {"web": 0.02, "terminal": 0.15})
    assert model.threshold("web") == pytest.approx(0.3) and model.threshold("terminal") == pytest.approx(0.9)
    assert model.second_opinion(normalize("check the logs"), ("file",)) == ("union", ["web"], "web:0.40")
    # the live surface's own shares win over the typical ones the file records
    live = {"web": 0.5, "terminal": 0.01}
    assert model.second_opinion(normalize("check the logs"), ("file",), live)[:2] == ("union", ["terminal"])
    # a toolset the surface lacks has no share and needs union_at; unpriced means one threshold
    assert model.second_opinion(normalize("check the logs"), ("file",), {})[0] == "agree"
    assert model.flat().second_opinion(normalize("check the logs"), ("file",))[0] == "agree"


def test_a_cheap_addition_never_overrules_the_rules(tmp_path):
    # the rules' toolset gets no credit, but the model's wish (0.40) is only a priced addition
    model = _priced(tmp_path, {"w:logs": [[0, 3.6]]}, {"web": 0.02})
    assert model.second_opinion(normalize("check the logs"), ("file",))[0] == "union"


def test_priced_union_reaches_the_rules_through_the_router(tmp_path, monkeypatch):
    from hermes_token_router import router
    from hermes_token_router.config import RouterConfig

    rs = RuleSet.load(POLICY / "rules")
    rs.learned = _priced(tmp_path, {"w:dentist": [[1, 3.6]]}, {"file": 0.9})
    monkeypatch.setattr("hermes_token_router.rules.default_rules", lambda: rs)
    text = "remind me at 7pm about the dentist thing"
    assert "file" not in router.decide(text, RouterConfig()).toolsets          # typical share: too dear
    assert "file" in router.decide(text, RouterConfig(), shares={"file": 0.01}).toolsets  # cheap here


def test_priced_weights_with_a_share_out_of_range_mean_rules_only(tmp_path, caplog):
    learned_mod._warned.clear()
    with caplog.at_level(logging.WARNING, logger="hermes_token_router"):
        assert _priced(tmp_path, {}, {"web": 1.5}) is None
    assert any("outside 0..1" in r.message for r in caplog.records)


def _chatty(tmp_path, weights, chitchat_at=0.8):
    path = tmp_path / "chatty.json"
    path.write_text(json.dumps({"version": 1, "labels": ["web", "file", learned_mod.CHITCHAT], "bias": [-4.0, -4.0, -4.0],
                                "union_at": 0.9, "disagree_at": 0.02, "weights": weights,
                                "chitchat_at": chitchat_at}), encoding="utf-8")
    return path


def test_the_chit_chat_output_narrows_small_talk_no_rule_explains(tmp_path):
    path = _chatty(tmp_path, {"w:worked": [[2, 6.0]], "w:rain": [[2, 6.0], [0, 9.0]]})
    rs = RuleSet.load(POLICY / "rules", learned=path)
    text = "omg that worked perfectly 🙏"
    assert rs.without_learned().classify(text).action == "full"        # no phrase-list line says it
    d = rs.classify(text)
    assert (d.action, d.toolsets, d.intent, d.reason) == ("narrow", (), "chitchat", "learned chit-chat")
    # below its threshold the message still abstains; a rule hit is never overruled by it
    assert RuleSet.load(POLICY / "rules", learned=_chatty(tmp_path, {"w:worked": [[2, 4.5]]})).classify(text).action == "full"
    assert rs.classify("the deploy script worked, now post the log to discord").intent != "chitchat"


def test_the_chit_chat_output_is_never_a_toolset_and_old_files_have_none(tmp_path):
    model = LearnedModel.load(_chatty(tmp_path, {"w:thanks": [[2, 9.0]]}))
    t = normalize("thanks")
    assert model.predict(t)[learned_mod.CHITCHAT] > 0.99 and model.reading(t) == learned_mod.CHITCHAT
    assert model.second_opinion(t, ("web",)) == ("agree", [], "")     # never added, never a disagreement
    old = LearnedModel.load(_model(tmp_path, {"w:thanks": [[0, 9.0]]}))
    assert old.chitchat_at > 1 and old.reading(t) is None


def _no_tool(tmp_path, weights, notools_at=0.8):
    path = tmp_path / "no_tool.json"
    path.write_text(json.dumps({"version": 1, "labels": ["web", "file", learned_mod.CHITCHAT, learned_mod.NO_TOOLS],
                                "bias": [-4.0, -4.0, -4.0, -4.0], "union_at": 0.9, "disagree_at": 0.02,
                                "weights": weights, "chitchat_at": 0.93, "notools_at": notools_at}),
                    encoding="utf-8")
    return path


def test_the_no_tool_output_narrows_text_work_no_rule_explains(tmp_path):
    path = _no_tool(tmp_path, {"w:leaflet": [[3, 6.0]], "w:poem": [[3, 6.0], [0, 9.0]]})
    rs = RuleSet.load(POLICY / "rules", learned=path)
    text = "Draft a short leaflet for our counter, under 200 words"
    assert rs.without_learned().classify(text).action == "full"         # no rule says it
    d = rs.classify(text)
    assert (d.action, d.toolsets, d.intent, d.reason) == ("narrow", (), "no_tools", "learned no-toolset work")
    # a toolset output that reaches its own threshold vetoes it: then the message abstains
    assert rs.classify("write me a poem about the sea").action == "full"
    # below its threshold, or in a file without the output, it abstains as before
    assert RuleSet.load(POLICY / "rules", learned=_no_tool(tmp_path, {"w:leaflet": [[3, 5.0]]})).classify(text).action == "full"
    assert RuleSet.load(POLICY / "rules", learned=_chatty(tmp_path, {"w:leaflet": [[2, 0.1]]})).classify(text).action == "full"
    # a rule hit is never overruled by it
    assert rs.classify("draft a leaflet and save it to ~/Desktop/leaflet.md").toolsets == ("file",)



@pytest.mark.parametrize("text", ["Draft a short leaflet to go with the jingle in spot.mp3, under 200 words",
                                  "Draft a short leaflet to go with the jingle in spot.wav, under 200 words"])
def test_no_tool_and_chitchat_readings_never_narrow_a_message_naming_a_file(tmp_path, text):
    """A named file or path is work on that file: before, "how many words are in report.pdf?"
    narrowed to no toolset. The message abstains instead (no rule explains it)."""
    rs = RuleSet.load(POLICY / "rules", learned=_no_tool(tmp_path, {"w:leaflet": [[3, 6.0]]}))
    chatty = RuleSet.load(POLICY / "rules", learned=_no_tool(tmp_path, {"w:leaflet": [[2, 9.0]]}))
    assert rs.classify("Draft a short leaflet for our counter, under 200 words").intent == "no_tools"
    for ruleset in (rs, chatty):
        d = ruleset.classify(text)
        assert d.intent not in ("no_tools", "chitchat") and (d.action == "full" or d.toolsets), d

def test_the_no_tool_output_is_never_a_toolset_and_keeps_skill_work(tmp_path):
    model = LearnedModel.load(_no_tool(tmp_path, {"w:leaflet": [[3, 9.0]]}))
    t = normalize("draft a leaflet")
    assert model.reading(t) == learned_mod.NO_TOOLS
    assert model.second_opinion(t, ("web",)) == ("agree", [], "")     # never added, never a disagreement
    assert learned_mod.NO_TOOLS not in model._thresholds
    old = LearnedModel.load(_model(tmp_path, {"w:leaflet": [[0, 9.0]]}))
    assert old.notools_at > 1 and old.reading(t) is None


def _primary(tmp_path, weights, primary_at=0.9, keep=0.15):
    path = tmp_path / "primary.json"
    path.write_text(json.dumps({"version": 1, "labels": ["web", "file", "kanban", learned_mod.NO_TOOLS],
                                "bias": [-4.0, -4.0, -4.0, -4.0], "union_at": 0.9, "disagree_at": 0.02,
                                "weights": weights, "notools_at": 0.8, "primary_at": primary_at,
                                "primary_keep": keep}), encoding="utf-8")
    return path


def test_a_sure_toolset_narrows_a_request_no_rule_explains_to_the_models_plausible_set(tmp_path):
    # "card" makes kanban sure (p 0.99) and file plausible (p 0.27); web stays at p 0.02
    path = _primary(tmp_path, {"w:card": [[2, 9.0], [1, 3.0]]})
    rs = RuleSet.load(POLICY / "rules", learned=path)
    text = "move 'Vendor onboarding - Acme Janitorial' to Done and add a card under To Do"
    assert rs.without_learned().classify(text).action == "full"         # no rule says it
    d = rs.classify(text)
    assert (d.action, d.toolsets, d.intent) == ("narrow", ("file", "kanban"), "learned")
    assert d.reason.startswith("learned reading kanban:0.99, file:0.27")
    # not sure enough, or an older file without the setting: it abstains as before
    assert RuleSet.load(POLICY / "rules", learned=_primary(tmp_path, {"w:card": [[2, 5.0]]})).classify(text).action == "full"
    assert RuleSet.load(POLICY / "rules", learned=_no_tool(tmp_path, {"w:card": [[0, 9.0]]})).classify(text).action == "full"
    # a definitional question keeps abstaining: the reading is for requests, not questions
    assert rs.classify("what does a card mean in a kanban board?").action == "full"


def test_the_learned_reading_is_not_trusted_beside_integrations_it_never_saw(tmp_path):
    from hermes_token_router.config import RouterConfig
    from hermes_token_router.decision import Decision
    from hermes_token_router.dynamic_index import Match
    from hermes_token_router.router import decide

    rs = RuleSet.load(POLICY / "rules", learned=_primary(tmp_path, {"w:card": [[2, 9.0]]}))
    text = "add a card for the vendor under To Do"
    d = rs.classify(text)
    assert d.intent == "learned" and d.narrows
    cfg = RouterConfig()
    assert decide(text, cfg, rules=rs.classify, dynamic=lambda t: ()).action == "full"  # no integration matched
    assert decide(text, cfg, rules=rs.classify).narrows                 # no integrations on the surface
    linear = (Match("mcp-linear", 2.0, True, ("issue",)),)
    joined = decide(text, cfg, rules=rs.classify, dynamic=lambda t: linear)
    assert joined.narrows and set(joined.toolsets) == {"kanban", "mcp-linear"}
    # the abstention is decided before the classifier, which then gets the request
    asked = []
    with_model = RouterConfig.model_validate({"classifier": {"enabled": True}})
    got = decide(text, with_model, rules=rs.classify, dynamic=lambda t: (),
                 model=lambda *a: asked.append(a[0]) or Decision("narrow", ("kanban",), "x", 0.95, "classifier", "r"))
    assert asked == [text] and got.source == "classifier"


def test_a_rule_that_rules_a_toolset_out_binds_the_learned_opinion(tmp_path):
    # the model wants web for any "search" (p 0.99): it may add it to a file listing, but not
    # to a search inside the project, and that wish is no reason to abstain there either
    path = _model(tmp_path, {"w:search": [[0, 9.0]], "c:搜": [[0, 9.0]]})
    rs = RuleSet.load(POLICY / "rules", learned=path)
    for text in ("search the code for every call to parse_config", "在项目里搜一下 parse_config"):
        d = rs.classify(text)
        assert (d.action, d.toolsets) == ("narrow", ("file",)) and "learned" not in d.reason, text
    # without the rule the same wish still acts (here: a strong disagreement, so full surface)
    assert rs.classify("search my downloads folder for the invoice files").reason.startswith("learned_disagrees:web")
    model = LearnedModel.load(path)
    t = normalize("search the code")
    assert model.second_opinion(t, ("file",))[0] == "abstain"
    assert model.second_opinion(t, ("file",), ruled_out=frozenset({"web"})) == ("agree", [], "")


def test_rules_out_may_not_name_the_intents_own_toolset():
    from hermes_token_router.rules_schema import IntentRule
    with pytest.raises(ValueError, match="rules_out"):
        IntentRule(name="x", toolsets=["file"], rules_out=["file"], confidence=0.9, en=["x"])


def test_learned_model_features_work_for_chinese_without_a_segmenter(tmp_path):
    path = _model(tmp_path, {"c:天气": [[0, 9.0]]})
    model = LearnedModel.load(path)
    assert model.predict(normalize("明天北京天气怎么样"))["web"] > 0.9
    assert model.predict(normalize("明天北京怎么样"))["web"] < 0.1


def test_learned_lookup_tables_score_exactly_the_documented_features():
    """``predict`` looks words, pairs, prefixes and grams up in per-kind tables; the scores
    must be the bias plus each distinct ``features`` string's row, as the file documents."""
    model = LearnedModel.load(POLICY / "learned.json")
    assert model is not None
    for text in _corpus_texts() + ["^ a.b- x'", "ｇｉｔ 提交 提交", ""]:
        t = normalize(text)
        scores = list(model.bias)
        for f in learned_mod.features(t[:model.max_chars]):
            for i, v in model.weights.get(f, ()):
                scores[i] += v
        got = model.predict(t)
        for lab, s in zip(model.labels, scores):
            assert abs(got[lab] - 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, s))))) < 1e-12, (lab, text)
        assert model.second_opinion(t, ("file",)) == model.second_opinion(t, ("file",), dict(model.shares))


@pytest.mark.parametrize("content", [None, "{not json", json.dumps({"labels": ["web"], "bias": []}),
                                     json.dumps({"labels": ["web"], "bias": [0.0], "union_at": 0.9,
                                                 "disagree_at": 0.1, "weights": {"w:x": [[5, 1.0]]}})])
def test_missing_or_corrupt_weights_mean_rules_only_with_one_warning(tmp_path, caplog, content):
    path = tmp_path / "learned.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    learned_mod._warned.discard(str(path))
    with caplog.at_level(logging.WARNING, logger="hermes_token_router"):
        a = RuleSet.load(POLICY / "rules", learned=path)
        b = RuleSet.load(POLICY / "rules", learned=path)
    assert a.learned is None and b.learned is None
    assert sum("learned model" in r.message for r in caplog.records) == 1
    assert a.classify("turn off the lights").toolsets == ("homeassistant",)


def test_shipped_weights_are_small_and_record_their_training():
    path = POLICY / "learned.json"
    assert path.stat().st_size <= 1_000_000
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["training"]["command"].startswith("python benchmarks/train_learned.py")
    assert re.fullmatch(r"[0-9a-f]{64}", data["training"]["data_sha256"])
    model = LearnedModel.load(path)
    assert model is not None and model.miss_share > 0 and 0 < model.floor_p < model.union_at
    assert {"file", "terminal", "web"} <= set(model.shares)  # priced on a typical surface
    # each reading's setting in the file is the one its recorded command asked for
    cmd = data["training"]["command"].split()
    for flag, key in (("--notools-at", "notools_at"), ("--primary-at", "primary_at"),
                      ("--primary-keep", "primary_keep")):
        assert flag in cmd and float(cmd[cmd.index(flag) + 1]) == data[key] == getattr(model, key)


# --------------------------------------------------------------------------- precision


@pytest.mark.parametrize("text,not_in", [
    ("make a sticker of my cat wearing sunglasses", "hermes-yuanbao"),
    ("put these companies in a table: apple, spotify, netflix, tesla", "spotify"),
    ('write a tagline for our app, something like "the discord for book clubs"', "discord"),
    ("search the code for every call to parse_config", "web"),
    ("在项目里搜一下 parse_config 在哪里用到", "web"),
])
def test_content_words_do_not_trigger_platform_or_product_routes(rules, text, not_in):
    d = rules.classify(text)
    assert not_in not in d.toolsets


@pytest.mark.parametrize("text", ["search the code for every call to parse_config", "在项目里搜一下 parse_config",
                                  "在代码里搜一下 TODO"])
def test_searching_the_project_routes_to_file(rules, text):
    d = rules.classify(text)
    assert d.action == "narrow" and "file" in d.toolsets and "web" not in d.toolsets


@pytest.mark.parametrize("text", ["quick question - can you actually run commands on my machine or do you only read files?",
                                  "do you have access to my calendar?", "r u able to control smart lights?",
                                  "你能直接操作我电脑上的浏览器吗？比如点个按钮"])
def test_longer_capability_questions_keep_the_floor(rules, text):
    assert rules.classify(text).intent == "capability_inquiry"


@pytest.mark.parametrize("text,need", [
    ("can you actually fix the failing test in src/app.py?", {"file", "terminal"}),
    ("are you able to run the deploy script now", {"terminal"}),
])
def test_a_task_with_a_path_or_no_question_is_not_a_capability_question(rules, text, need):
    d = rules.classify(text)
    assert d.intent != "capability_inquiry" and (d.action == "full" or need <= set(d.toolsets))


def test_mask_keeps_offsets():
    t = 'post "hello discord" to the channel'
    assert len(mask_content(t)) == len(t) and "discord" not in mask_content(t)


# --------------------------------------------------------------------------- prefilter


def test_prefilter_literals_are_required_parts():
    assert literals([r"\bkanban\b|\bthe board\b"]) == frozenset({"kanban", "the board"})
    assert literals([r"(?:^|\s)[\w./-]+\.py\b"]) == frozenset({".py"})
    assert literals([r"[a-z]+\d"]) is None
    # the parser turns one-character alternatives into a class; path marks filter too
    assert literals([r"(?:装|裝)(?:好|上)"]) == frozenset({"装", "裝"})
    assert literals([r"(?:^|\s)(?:~|/(?:var|etc))\b"]) == frozenset({"~", "var", "etc"})
    assert literals([r"[a-z]x"]) is None


PATTERNS = [p for i in default_rules()._intents for part in (i.rx.en_parts, i.rx.zh_parts, i.unless) if part
            for p in [rx.pattern for rx, *_ in part.parts]]


def test_prefilter_requires_every_word_a_pattern_needs_and_knows_where_matches_start():
    from hermes_token_router.prefilter import requirements, starts

    assert set(requirements(r"\b(?:zip|tar)\b.{0,40}\bfiles?\b")) == {
        frozenset({"zip", "tar"}), frozenset({"file"})}
    assert requirements(r"[a-z]+\d") is None
    assert starts(r"(?<![\w/])\b(?:zip|tar)\b.{0,40}") == frozenset({"zip", "tar"})
    assert starts(r"\bzip|\w+ files") is None
    assert Filtered([r"\bzip\b.{0,9}\bfiles?\b"]).search("zip it all up") is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz .,/:?'-0123456789~@#提醒每天文件搜装裝画畫", max_size=60),
       st.sampled_from(PATTERNS))
def test_prefilter_never_skips_a_pattern_that_matches(text, pattern):
    assert (Filtered([pattern]).search(text) is None) == (re.search(pattern, text) is None)


def _same(a, b):
    return (a is None and b is None) or (a is not None and b is not None and a.span() == b.span()
                                         and a.group(0) == b.group(0))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["run ", "the ", "tests", "zip ", "files ", "discord ", "ban ", "channel ",
                                 "src/", "app.py ", "remind me ", "at 5 ", "提醒", "每天", "文件", "搜索",
                                 "git ", "commit ", "push ", "~/", "/var/", "安装", "裝上", "x", "-", " "]), max_size=12),
       st.sampled_from(PATTERNS))
def test_filtered_search_is_re_search_span_for_span(words, pattern):
    """The literal tests and the match-where-it-can-start path return exactly ``re.search``'s
    match (the span feeds clause coverage), with the scanner's set and without it."""
    text = "".join(words)
    f = Filtered([pattern])
    scanner = LiteralScanner(f.literals)
    want = re.search(pattern, text)
    assert _same(f.search(text), want)
    assert _same(f.search(text, scanner.present(text)), want)


def test_filtered_search_is_re_search_on_every_corpus_record():
    texts = [normalize(t) for t in _corpus_texts()]
    rs = default_rules()
    compiled = [(re.compile(p), Filtered([p])) for p in PATTERNS]
    for text in texts:
        present = rs._scanner.present(text)
        for rx, f in compiled:
            assert _same(f.search(text, present), rx.search(text)), (rx.pattern, text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["the", "then", "search", "research", "搜", "搜索", "ab", "abc", "-r", "]x",
                                "^a", "\\d", "é", "éte", ".py", "搜a"]), min_size=1),
       st.text(alphabet="abcehnrst 搜索-]^\\dé.py", max_size=40))
def test_literal_scanner_finds_every_literal_present(lits, text):
    from hermes_token_router.prefilter import LiteralScanner

    assert LiteralScanner(lits).present(text) == {s for s in lits if s in text}


def _corpus_texts():
    return [json.loads(line)["text"] for path in [ROOT / "corpus" / "routing.jsonl",
            *sorted((ROOT / "corpus" / "blind").glob("batch-*.jsonl"))]
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_rules_decide_the_same_with_and_without_the_scanner():
    """The scanner's literal set, the intent gate built on it and the guards' literal tests
    are shortcuts: without them every pattern's literals are looked up in the text and every
    intent is tried. Whole decisions (reason and clause table included) must not move."""
    rs = RuleSet.load(POLICY / "rules", learned=POLICY / "learned.json")
    texts = _corpus_texts()

    def decide():
        return [dataclasses.replace(d, latency_ms=0.0) for d in map(rs.classify, texts)]

    scanned = decide()

    class _NoScan:
        def present(self, text):
            return None

    rs._scanner = _NoScan()
    assert decide() == scanned
