"""The dynamic-toolset index and its composition with the built-in route, on the heavy
fixture's own tool specs (github 20 tools, notion 12, linear 10, slack 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_token_router import catalog, dynamic_index
from hermes_token_router.decision import Decision, full_surface
from hermes_token_router.dynamic_index import DynamicToolset, index_for, vocabulary
from hermes_token_router.dynamic_route import compose
from hermes_token_router.paths import shipped
from hermes_token_router.rules import default_rules

SPECS = Path(__file__).parent / "fixtures" / "heavy" / "servers.json"
BUILTIN = ("read_file", "write_file", "patch", "search_files", "terminal", "process", "todo", "memory",
           "skill_view", "skills_list", "skill_manage", "session_search", "delegate_task", "execute_code",
           "vision_analyze", "clarify", "cronjob")


def toolsets():
    return [DynamicToolset("mcp-" + s["name"], s["name"], tuple((t["name"], t["description"]) for t in s["tools"]))
            for s in json.loads(SPECS.read_text(encoding="utf-8"))]


@pytest.fixture(scope="module")
def index():
    return index_for(toolsets(), vocabulary(shipped("policy") / "dynamic.yaml"),
                     dynamic_index.builtin_vocabulary(BUILTIN))


def strong(index, text):
    return {m.toolset for m in index.match(text) if m.strong}


def route(index, text):
    return compose(default_rules().classify(text), index.match(text), text)


def test_the_issue_requests(index):
    only = route(index, "list the open pull requests on github for acme/api and tell me which one is oldest")
    assert only.narrows and only.toolsets == ("mcp-github",)
    both = route(index, "read ./notes.md and then open a github issue in acme/api summarising it")
    assert both.narrows and {"file", "mcp-github"} <= set(both.toolsets)
    file_only = route(index, "read ./notes.md and summarise it")
    assert file_only.narrows and not any(t.startswith("mcp-") for t in file_only.toolsets)


@pytest.mark.parametrize("text, expected", [
    ("post 'deploy finished' to #eng on slack", {"mcp-slack"}),
    ("find the notion page for the Q3 roadmap", {"mcp-notion"}),
    ("create a Linear ticket for the login timeout", {"mcp-linear"}),
    ("what changed in PR #482 on acme/web?", {"mcp-github"}),
    ("在github上列出acme/api所有未合并的拉取请求", {"mcp-github"}),
    ("往 Notion 的招聘数据库里加一行", {"mcp-notion"}),
    ("把部署完成的消息发到 Slack 的 #eng 频道", {"mcp-slack"}),
])
def test_naming_an_integration_or_its_things_routes_to_it(index, text, expected):
    assert strong(index, text) == expected


@pytest.mark.parametrize("simplified, traditional", [
    ("把这三个需求拆成工单建到 web 团队", "把這三個需求拆成工單建到 WEB 團隊"),
    ("在 #api 频道通知一声", "在 #api 頻道通知一聲"),
    ("把结论加到「认证方案」页面里", "把結論加到「認證方案」頁面裡"),
])
def test_chinese_vocabulary_matches_in_either_script(index, simplified, traditional):
    """The vocabulary's Chinese keys are written in Simplified; Traditional requests read the
    same integration things."""
    def found(text):
        return {(m.toolset, m.strong) for m in index.match(text)}

    assert found(simplified) and found(traditional) == found(simplified)


def test_regional_words_are_vocabulary_too(index):
    assert strong(index, "幫我在 Notion 的客戶資料庫加一筆") == {"mcp-notion"}
    assert "mcp-github" in {m.toolset for m in index.match("這個儲存庫的合併請求有哪些還沒審")}


def test_rows_of_a_named_table_and_the_page_at_hand_belong_to_the_notes_integration(index):
    """People name a wiki database by its title and point at its rows, or at "that page"
    (heavy batch 8, read after its first-contact rows; heavy batch 7, never read for it, had
    "Dump the High-severity rows from Launch Risks into risks-high.md")."""
    for text in ("put the CVSS in the Severity field on its CVE Tracker row",
                 "Dump the High-severity rows from Launch Risks into risks-high.md",
                 "CVE 跟踪表里把 CVE-2025-31887 那一行状态改成「已发布」",
                 "把「Triage 值班表」那頁裡我下週的班抓出來",
                 "在「发布检查清单 3.2.1」最后加一条"):
        assert "mcp-notion" in {m.toolset for m in index.match(text)}, text
    # one such word is weak: it joins a narrow built-in route, it never narrows one alone
    assert not strong(index, "delete the empty rows from ~/data/sales.csv")


def test_tickets_and_tables_in_workplace_chinese(index):
    """单子/开单/建单 are tickets and 登记表/那张表 a workspace table (heavy batches 8-10, read
    after their rows): a second integration in a compound request is no longer dropped."""
    def found(text):
        return {m.toolset for m in index.match(text)}
    assert "mcp-linear" in found("把 #tc-qa 今天大家回報的卡關問題整理一下，還沒開單的幫忙開到 QA 組")
    assert "mcp-linear" in found("每周一早上九点把 DATA 组还没关的单子整理一下发到 #data 群里")
    assert "mcp-notion" in found("供应商登记表里合同年底前到期的，每家在 OPS 建一个续约单，弄完把清单发到 #ops")
    assert "mcp-notion" in found("把那張表裡負責人是我的幾筆拉出來")
    # with a measure word between (heavy batch 13, after its row)
    assert "mcp-linear" in found("查一下 #support-cn 今天客户反馈的有几条，然后建个单汇总一下")
    assert "mcp-linear" in found("先开个单记一下这个 bug")
    # one word alone is weak: it never narrows a request to an integration by itself
    assert not strong(index, "帮我把这个单子翻译成英文")
    assert not strong(index, "帮我开个单人房间的价格对比")
    # a knowledge base by its initials and a booking sheet (heavy batch 16, after its row)
    assert "mcp-notion" in found("find the KB article on printer drivers and tell me who last edited it")
    assert "mcp-notion" in found("查一下预约表，周五的会议室有人订了吗")
    assert "mcp-notion" in found("看看預約表下週還有哪些空檔")
    # the tracker by its kind, the wiki in Chinese, and tables named by what they hold (heavy
    # batch 17, after its row)
    assert "mcp-linear" in found("what closed in the tracker this week? list it by assignee")
    assert "mcp-linear" in found("追踪器上这周新开了几个单")
    assert "mcp-notion" in found("把维基上的术语表跟这份译文对一下")
    # an epic is the tracker's project; an experiment log kept as a table (heavy batch 18)
    assert "mcp-linear" in found("how many cards are still open under the onboarding epic?")
    assert "mcp-notion" in found("实验日志里加一条：新的注册流程，状态进行中")


def test_a_lone_zu_after_a_team_key_is_the_trackers_team(index):
    """"给QA组" / "DATA 组" name a tracker team; "支付组" or "小组" (组 inside a Chinese word)
    do not (heavy batches 9-11, read after their rows)."""
    def evidence(text):
        return {m.toolset: m.evidence for m in index.match(text)}
    assert "team" in evidence("提个bug给QA组：优惠券页面金额显示成 NaN").get("mcp-linear", ())
    assert "team" in evidence("把 QA 組 今天的卡关问题整理一下").get("mcp-linear", ())
    for text in ("给支付组的同事发个通知", "我们小组下周聚餐"):
        assert "team" not in evidence(text).get("mcp-linear", ()), text


@pytest.mark.parametrize("text", [
    "fit a model using linear interpolation",
    "cut me some slack, how do list comprehensions work?",
    "I have no notion of how this works",
    "read ./notes.md and summarise it",
    "search the files for TODO comments",
])
def test_ordinary_words_are_not_integrations(index, text):
    assert not strong(index, text)


def test_a_named_integration_explains_words_it_shares(index):
    # "issue" is a github word too, but the request names Linear.
    assert {m.toolset for m in index.match("create a Linear ticket for the login bug")} == {"mcp-linear"}
    assert {m.toolset for m in index.match("open a new issue about the crash")} >= {"mcp-github", "mcp-linear"}


def test_compose_rules():
    from hermes_token_router.dynamic_index import Match

    gh = (Match("mcp-github", 4.0, True, ("name",)),)
    weak = (Match("mcp-github", 1.0, False, ("commit",)),)
    narrow = Decision("narrow", ("file",), "file", 0.95, "rules", "matched file")
    assert compose(narrow, gh).toolsets == ("file", "mcp-github")
    assert compose(narrow, weak).toolsets == ("file", "mcp-github")
    assert compose(full_surface("no_rule_matched", source="rules"), gh).toolsets == ("mcp-github",)
    # A weak match never narrows an abstention; the guards' abstentions always stay full.
    assert not compose(full_surface("no_rule_matched", source="rules"), weak).narrows
    for reason in ("negated", "vague", "long_message", "rules_below_threshold:x:0.5", "admission:x"):
        assert not compose(full_surface(reason, source="rules"), gh).narrows
    assert compose(narrow, ()) is narrow


def test_index_is_cached_per_surface_fingerprint(index):
    vocab = vocabulary(shipped("policy") / "dynamic.yaml")
    again = index_for(toolsets(), vocab, dynamic_index.builtin_vocabulary(BUILTIN))
    assert again is index
    fewer = index_for(toolsets()[:2], vocab, dynamic_index.builtin_vocabulary(BUILTIN))
    assert fewer is not index and set(fewer.toolsets) == {"mcp-github", "mcp-notion"}


def test_builtin_tool_words_are_never_evidence():
    vocab = vocabulary(shipped("policy") / "dynamic.yaml")
    plugin = [DynamicToolset("acme_files", "acme_files", (("read_file_fast", "Read a file"), ("ledger_balance", "x")))]
    idx = index_for(plugin, vocab, dynamic_index.builtin_vocabulary(BUILTIN))
    assert not idx.match("read the file notes.md")
    assert strong(idx, "what is my ledger balance in acme files")


def test_catalog_lists_an_integrations_tools_within_budget():
    tools = [t for _, t in toolsets()[0].tools]
    names = [t[0] for t in toolsets()[0].tools]
    assert tools  # descriptions present
    text = catalog.tools_blurb(names, 200, catalog.distinctiveness({"g": names, "n": ["add_comment"]})["g"])
    assert len(text) <= 200 and text.startswith("20 tools, e.g. ") and "more)" in text
    short = catalog.tools_blurb(["post_message", "add_reaction"], 200)
    assert short == "tools: post_message, add_reaction"
    blurbs = catalog.dynamic_blurbs({ts.name: [t[0] for t in ts.tools] for ts in toolsets()})
    assert sum(len(b) for b in blurbs.values()) <= catalog.DYNAMIC_BUDGET_CHARS + 4 * 10
    assert "pull_request" in blurbs["mcp-github"]


def test_integration_only_narrowing_keeps_a_local_path_the_rules_missed(index):
    d = route(index, "read the error log in ./logs/app.log and file a linear ticket with the stack trace")
    assert d.narrows and {"file", "mcp-linear"} <= set(d.toolsets)


def test_router_status_shows_the_routed_dynamic_toolsets():
    import weakref

    from hermes_token_router.commands import session_lines
    from hermes_token_router.session_state import ROUTED, SessionState

    class Agent:
        session_id = "s1"
        tools = []

    agent = Agent()
    decision = Decision("narrow", ("mcp-github",), "dynamic", 0.95, "rules", "integration only")
    state = SessionState(session_id="s1", profile="default", agent_ref=weakref.ref(agent), phase=ROUTED,
                         decision=decision, loaded_toolsets=("mcp-github",),
                         dynamic_toolsets=("mcp-github", "mcp-slack"))
    text = "\n".join(session_lines(state, agent))
    assert "dynamic toolsets routed: mcp-github (of mcp-github, mcp-slack)" in text


def test_request_toolset_accepts_a_dynamic_tools_short_name_from_the_catalog():
    import weakref

    from hermes_token_router.recovery import resolve
    from hermes_token_router.session_state import ROUTED, SessionState
    from hermes_token_router.surface import Capture

    names = ("read_file", "mcp__github__create_issue", "mcp__github__list_issues", "mcp__linear__create_issue")
    owners = {"read_file": "file", "mcp__github__create_issue": "mcp-github", "mcp__github__list_issues": "mcp-github",
              "mcp__linear__create_issue": "mcp-linear"}
    cap = Capture(tools=[{"type": "function", "function": {"name": n}} for n in names], valid_tool_names=set(names),
                  names=names, owners=owners)

    class Agent:
        session_id = "s1"

    agent = Agent()
    state = SessionState(session_id="s1", profile="default", agent_ref=weakref.ref(agent), phase=ROUTED,
                         decision=full_surface("x"), capture=cap)
    def lookup(names):
        return resolve(state, names, static={}, registered=lambda name: False)

    res = lookup(["list_issues"])
    assert res.toolsets == ["mcp-github"] and set(res.names) == {"mcp__github__create_issue", "mcp__github__list_issues"}
    assert lookup(["create_issue"]).toolsets == ["mcp-github"]  # ambiguous: the first in captured order


@pytest.mark.parametrize("text, expected", [
    ("move ENG-1423 to In Review", {"mcp-linear"}),          # linear's description shows 'ENG-123'
    ("catch me up on #proj-atlas, been away", {"mcp-slack"}),  # slack's shows 'in:#eng'
    ("在 #研发周报 发个简报", {"mcp-slack"}),
])
def test_shapes_from_the_integrations_own_examples(index, text, expected):
    assert strong(index, text) == expected


@pytest.mark.parametrize("text", ["fix the UTF-8 decoding in src/app.py", "hash it with SHA-256",
                                  "use and/or here", "read src/router.ts", "look at CVE-2024-1234"])
def test_things_that_only_look_like_shapes(index, text):
    assert not strong(index, text)


def test_a_shape_explains_shared_words(index):
    # acme/api is a github slug: "issue" and "comment" there are not Linear's or Notion's.
    assert {m.toolset for m in index.match("comment on issue #77 in acme/api")} == {"mcp-github"}


def test_shapes_only_for_toolsets_whose_descriptions_show_them():
    from hermes_token_router.dynamic_shapes import shapes_of

    assert shapes_of("Get a Linear issue by ID or identifier (e.g. 'ENG-123').") == {"identifier"}
    assert shapes_of("Search syntax (e.g. 'deploy in:#eng from:@alice').") == {"channel", "mention"}
    assert shapes_of("List pull requests in a repository.") == set()


@pytest.mark.parametrize("text", ["把 acme/api 上带 good first issue 标签的 issue 导出成 CSV 存到本地",
                                  "export the open issues in acme/api to a local file"])
def test_integration_only_narrowing_keeps_local_files(index, text):
    d = route(index, text)
    assert d.narrows and {"file", "mcp-github"} <= set(d.toolsets)


def test_a_huge_or_odd_request_is_cheap_and_safe(index):
    import time

    text = "post it to #eng on slack. " + "x" * 200_000
    t0 = time.perf_counter()
    assert strong(index, text) == {"mcp-slack"}
    assert time.perf_counter() - t0 < 0.5
    assert index.match(None) == () and index.match("") == ()


# -- disguised text: the index reads a request the way the rules do ---------------------
# Each pair: a plain request and the same request as a phone, an editor or a hostile paste
# writes it. The index must find exactly what it finds in the plain one.
UNCHANGED_BY_DISGUISE = [
    ("list the open pull requests on github for acme/api", "list the open pull requests on ｇｉｔｈｕｂ for acme/api"),
    ("find the notion page for the Q3 roadmap", "find the ｎｏｔｉｏｎ ｐａｇｅ for the Q3 roadmap"),
    ("post 'deploy finished' to #eng on slack", "post \u2018deploy finished\u2019 to #eng on slack"),
    ('open the "Hiring" database in notion', "open the \u201cHiring\u201d database in notion"),
    ("在github上列出acme/api所有未合并的拉取请求", "在ｇｉｔｈｕｂ上列出acme/api所有未合并的拉取请求"),
    ("往 Notion 的招聘数据库里加一行", "往 Ｎｏｔｉｏｎ 的招聘数据库里加一行"),
    ("спасибо, post it to slack", "спасибо, post it to slack"),  # a whole Cyrillic word stays Cyrillic
]
HIDDEN_WORDS = [
    ("list the open pull requests on github for acme/api", "list the open pull requests on git\u200bhub for acme/api"),
    ("post the build log to slack", "post the build log to sl\u00adack"),
    ("find the notion page for the Q3 roadmap", "find the n\u043eti\u043en page for the Q3 roadmap"),
    ("list the open pull requests on github for acme/api", "list the open pull requests on g\u0456thub for acme/api"),
    ("post the build log to slack", "post the build log to sl\u0430ck"),
]


@pytest.mark.parametrize("plain, disguised", UNCHANGED_BY_DISGUISE)
def test_full_width_quotes_and_chinese_match_like_plain_text(index, plain, disguised):
    assert index.match(disguised) == index.match(plain) != ()


@pytest.mark.parametrize("plain, disguised", HIDDEN_WORDS)
def test_invisible_characters_and_look_alikes_do_not_hide_a_name(index, plain, disguised):
    assert index.match(disguised) == index.match(plain) != ()
