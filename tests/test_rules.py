"""Behaviour of the rule classifier on phrasings that are NOT in the corpus.

Each family is checked in English and Chinese with fresh wording, so a rule that only
memorised the corpus fails here. "Routes" means a confident narrow that includes every
required toolset; "safe" means full or such a narrow (never a narrow that lacks a need).
"""

from __future__ import annotations

import pytest

from hermes_token_router.decision import Decision
from hermes_token_router.rules import RuleSet, default_rules

THRESHOLD = 0.90


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return default_rules()


def routes(d: Decision, *need: str) -> bool:
    return d.action == "narrow" and d.confidence >= THRESHOLD and set(need) <= set(d.toolsets)


def safe(d: Decision, *need: str) -> bool:
    return d.action == "full" or d.confidence < THRESHOLD or set(need) <= set(d.toolsets)


FAMILIES = [
    # (text, required toolsets)
    ("search the internet for cheap flights to lisbon", {"web"}),
    ("any headlines about the chip export ban?", {"web"}),
    ("上网搜一下 2024 年诺贝尔奖得主", {"web"}),
    ("深圳今天天气如何", {"web"}),
    ("open server/app.py and show me the imports", {"file"}),
    ("create a folder named backups and a file inside it", {"file"}),
    ("把 main.go 里的端口号改成 9090", {"file"}),
    ("新建一个文件 plan.md", {"file"}),
    ("run the unit tests again", {"terminal"}),
    ("git pull and rebase", {"terminal"}),
    ("帮我跑一下 pytest", {"terminal"}),
    ("执行一下 ./build.sh", {"terminal"}),
    ("fix the bug in cart.js and rerun the specs", {"file", "terminal"}),
    ("修复 login.py 里的报错", {"file", "terminal"}),
    ("click the login button on example.org", {"browser"}),
    ("用浏览器帮我在官网上填写报名表单", {"browser"}),
    ("what is in the photo at ~/Desktop/cat.jpeg?", {"vision"}),
    ("识别一下这张照片里的车牌", {"vision"}),
    ("generate a picture of a red panda surfing", {"image_gen"}),
    ("帮我画一幅星空下的小镇", {"image_gen"}),
    ("read this out loud for me please", {"tts"}),
    ("把这段新闻稿念出来", {"tts"}),
    ("remind me tomorrow at 9am to pay rent", {"cronjob"}),
    ("每天早上8点提醒我喝水", {"cronjob"}),
    ("remember that my dog's name is biscuit", {"memory"}),
    ("记住我不吃香菜", {"memory"}),
    ("what did we discuss last week about the budget?", {"session_search"}),
    ("我们上次聊过的那个部署方案是什么", {"session_search"}),
    ("save what we just did as a skill called release-flow", {"skills"}),
    ("把这个流程保存成技能", {"skills"}),
    ("spin up two subagents to compare these libraries", {"delegation"}),
    ("派几个子代理分别去调研", {"delegation"}),
    ("simulate a random walk with python", {"code_execution"}),
    ("用 python 算一下 2 的 100 次方", {"code_execution"}),
    ("ask me clarifying questions before writing the spec", {"clarify"}),
    ("先问我几个问题再开始写", {"clarify"}),
    ("turn on the kitchen lights", {"homeassistant"}),
    ("把客厅的空调打开", {"homeassistant"}),
    ("put on some lo-fi music", {"spotify"}),
    ("放一首周杰伦的歌", {"spotify"}),
    ("post the release notes to #announcements on discord", {"discord"}),
    ("在 discord 上删掉 #test 频道", {"discord_admin"}),
    ("create a kanban task for the docs rewrite", {"kanban"}),
    ("看板上有哪些任务还没完成", {"kanban"}),
    ("add a checklist item: update the changelog", {"todo"}),
    ("把“发邮件”加到待办清单", {"todo"}),
    ("what's everyone on twitter saying about the merger", {"x_search"}),
    ("看看推特上关于这场比赛的讨论", {"x_search"}),
    ("summarise the lark doc about onboarding", {"feishu_doc"}),
    ("回复一下飞书文档里的那条评论", {"feishu_drive"}),
    ("send a sticker to the yuanbao group", {"hermes-yuanbao"}),
    ("在元宝群里发个表情包", {"hermes-yuanbao"}),
    ("switch to the website-redesign project", {"project"}),
    ("列出所有项目", {"project"}),
    ("make a short video of a paper plane flying", {"video_gen"}),
    ("生成一段猫咪跳舞的视频", {"video_gen"}),
    ("summarize the recording at ./standup.mp4", {"video"}),
    ("总结一下这个视频 lecture.mov", {"video"}),
    ("take a screenshot of my screen", {"computer_use"}),
    ("把桌面上的截图都拖进一个文件夹", {"computer_use"}),
    ("dismiss the confirm dialog in the browser", {"browser-cdp"}),
    ("浏览器里有个弹窗，帮我点确定", {"browser-cdp"}),
]


@pytest.mark.parametrize("text,need", FAMILIES, ids=[t for t, _ in FAMILIES])
def test_each_family_routes_in_both_languages(rules, text, need):
    d = rules.classify(text)
    assert routes(d, *need), (text, d)
    assert d.source == "rules" and d.intent and d.reason.startswith("matched")


def test_every_registry_toolset_has_a_rule(rules):
    from tests.test_corpus_schema import REGISTRY_TOOLSETS

    assert rules.toolsets == REGISTRY_TOOLSETS


@pytest.mark.parametrize("text,need", [
    ("fix the failing test in foo.py", {"file", "terminal"}),
    ("修复 foo.py 里失败的测试", {"file", "terminal"}),
    ("commit my changes", {"terminal"}),
    ("summarise ./notes.md", {"file"}),
    ("what's the weather in Paris", {"web"}),
    ("remind me at 5pm", {"cronjob"}),
    ("turn off the lights", {"homeassistant"}),
    ("play some jazz", {"spotify"}),
    ("send this to #general on discord", {"discord"}),
    ("analyze orders.csv and chart revenue by month", {"code_execution", "terminal", "file"}),
])
def test_implied_needs(rules, text, need):
    assert routes(rules.classify(text), *need)


@pytest.mark.parametrize("text,need", [
    ("search the web for the nginx changelog and then update our Dockerfile", {"web", "file"}),
    ("dim the lights and put on some jazz", {"homeassistant", "spotify"}),
    ("run the migration script and post the output to discord", {"terminal", "discord"}),
    ("查一下明天的天气，然后每天早上7点提醒我", {"web", "cronjob"}),
    ("把灯关了，再放点音乐", {"homeassistant", "spotify"}),
])
def test_compound_requests_route_to_the_union(rules, text, need):
    d = rules.classify(text)
    assert routes(d, *need), d
    assert "+" in d.intent


@pytest.mark.parametrize("text", [
    "don't run the tests, just explain the failure",
    "do not touch any files; what does this error mean?",
    "no need to schedule anything",
    "without running anything, what would `rm -rf build` do?",
    "不要运行测试",
    "别动我的文件，解释一下这段代码",
    "不用上网查，直接回答",
])
def test_negated_requests_abstain(rules, text):
    d = rules.classify(text)
    assert d.action == "full" and d.reason == "negated"


@pytest.mark.parametrize("text,need", [
    ("don't forget to remind me at 6pm", {"cronjob"}),
    ("别忘了明天早上9点提醒我开会", {"cronjob"}),
    ("识别一下 receipt.jpg 上的金额", {"vision"}),   # 识别 contains 别 but is not a negation
])
def test_words_that_only_look_negated_still_route(rules, text, need):
    assert routes(rules.classify(text), *need)


@pytest.mark.parametrize("text", [
    "explain what a terminal illness is",
    "what does 'file' mean in git?",
    "what is a cron expression",
    "define kanban",
    "什么是看板方法",
    "git 里的 branch 是什么意思",
])
def test_near_misses_do_not_route(rules, text):
    d = rules.classify(text)
    assert d.action == "full"
    assert d.reason == "question" or d.reason.startswith("near_miss:")


def test_questions_about_live_facts_still_route(rules):
    assert routes(rules.classify("what is the weather in Oslo right now?"), "web")


@pytest.mark.parametrize("text", ["can you look at this", "帮我看看这个", "fix it", "try again", "搞定它",
                                  "do the thing we talked about"])
def test_vague_requests_abstain(rules, text):
    d = rules.classify(text)
    assert d.action == "full" and d.reason == "vague"


@pytest.mark.parametrize("text", ["hi!", "thanks a lot", "good night", "haha", "你好呀", "谢谢你", "晚安"])
def test_chitchat_narrows_to_the_floor(rules, text):
    d = rules.classify(text)
    assert (d.action, d.toolsets, d.intent) == ("narrow", (), "chitchat")
    assert d.confidence >= THRESHOLD


@pytest.mark.parametrize("text", ["what can you do?", "List your tools", "which tools are available?",
                                  "你能做什么", "你有哪些功能？", "介绍一下你的能力"])
def test_capability_questions_narrow_to_the_floor(rules, text):
    d = rules.classify(text)
    assert (d.action, d.toolsets, d.intent) == ("narrow", (), "capability_inquiry")


def test_capability_question_with_a_task_routes_normally(rules):
    d = rules.classify("what can you do? also run the tests")
    assert d.intent != "capability_inquiry" and routes(d, "terminal")


@pytest.mark.parametrize("text", ["can you make images?", "can you play music?", "can you browse the web?",
                                  "do you have internet access?", "你能上网吗？", "你会画图吗", "你可以执行代码吗?"])
def test_yes_no_capability_questions_keep_the_floor(rules, text):
    """The catalog in request_toolset's description answers them (issue 12, precision)."""
    d = rules.classify(text)
    assert (d.action, d.toolsets, d.intent) == ("narrow", (), "capability_inquiry")


@pytest.mark.parametrize("text,need", [
    ("can you play some jazz by miles davis?", {"spotify"}),
    ("can you turn off the kitchen lights?", {"homeassistant"}),
    ("你能帮我画一只戴帽子的猫吗", {"image_gen"}),
])
def test_a_request_phrased_as_a_question_is_still_a_request(rules, text, need):
    d = rules.classify(text)
    assert d.intent != "capability_inquiry" and safe(d, *need) and d.action == "narrow"


def test_chitchat_plus_a_task_is_a_task(rules):
    assert routes(rules.classify("thanks! now push to origin"), "terminal")


@pytest.mark.parametrize("text", ["", "   ", None, 42, "x" * 5000])
def test_classify_never_raises_and_abstains_on_junk(rules, text):
    d = rules.classify(text)  # type: ignore[arg-type]
    assert d.action == "full" and d.source == "rules"


def test_unmatched_text_abstains_with_a_reason(rules):
    d = rules.classify("the quarterly numbers look odd to me")
    assert d.action == "full" and d.reason == "no_rule_matched" and d.confidence < THRESHOLD


def test_full_width_and_case_are_normalised(rules):
    assert routes(rules.classify("ＲＵＮ ＴＨＥ ＴＥＳＴＳ"), "terminal")
    assert routes(rules.classify("Git Commit please"), "terminal")


def test_mixed_chinese_english(rules):
    assert routes(rules.classify("帮我 git commit 一下"), "terminal")
    assert routes(rules.classify("把这个 PR merge 掉"), "terminal")


def test_chinese_patterns_do_not_fire_inside_english_words(rules):
    # "laptop" contains "apt"; "github" contains "git": both are whole-word in English rules
    d = rules.classify("search online for reviews of the framework laptop")
    assert d.toolsets == ("web",)


def test_latency_is_recorded(rules):
    assert rules.classify("run the tests").latency_ms > 0


@pytest.mark.parametrize("text", ["don't run the tests, just explain the failure", "please don't push anything yet",
                                  "不要运行测试，解释一下就行", "别提交代码"])
def test_a_negated_tool_action_still_abstains(rules, text):
    assert rules.classify(text).reason == "negated"


@pytest.mark.parametrize("text,need", [
    ("play dreams by fleetwood mac on spotify, the studio version, not live - i don't like the live one", {"spotify"}),
    ("记住：我老婆生日是八月十二，每年提前一周提醒我，别又忘了", {"memory", "cronjob"}),
])
def test_a_negation_about_content_is_part_of_the_request(rules, text, need):
    assert routes(rules.classify(text), *need)


# Classes learnt from blind batch 5 and heavy batch 2 (after their first contact), each in
# fresh wording in English and Chinese: the need is implied by the kind of work, not named.
IMPLIED_BY_CLASS = [
    # moving, renaming or unpacking files needs commands; file tools only read and write text
    ("relocate the old invoices folder into ~/Archive/2023", {"terminal"}),
    ("make a workspace for the podcast and move the episode scripts from Downloads into it", {"terminal"}),
    ("rename every scan in ~/scans to date-based names", {"terminal"}),
    ("unzip backup.tar.gz somewhere and tell me what's inside", {"terminal"}),
    ("把下载目录里的简历文件都挪到求职文件夹里", {"terminal"}),
    ("把这个压缩包解压到桌面", {"terminal"}),
    # building a spreadsheet needs a command or a sandbox
    ("collect the prices from these notes and put them in an excel workbook", {"terminal"}),
    ("把这些报价整理成一个电子表格", {"terminal"}),
    # photos or scans of paper are read with vision
    ("I have a folder of scanned bills, pull out the totals", {"vision"}),
    ("这些收据的照片帮我把金额读出来", {"vision"}),
    # an audiobook or narration is text to speech
    ("make an audio book out of my short story draft", {"tts"}),
    ("把这篇文章做成有声书", {"tts"}),
    # a script that drives the agent's own tools
    ("loop over the city list with tool calls from a python script and collect the results", {"code_execution"}),
    ("写个 python 脚本调用工具把这些城市挨个查一遍", {"code_execution"}),
    # upgrading a project is edits plus installs and runs
    ("upgrade this django app from 3.2 to 4.2", {"file", "terminal"}),
    ("把这个 react 项目升级到 18", {"file", "terminal"}),
    # following or tailing a log is a command
    ("tail the worker logs and tell me when the job finishes", {"terminal"}),
    ("看一下 app.log 最后 100 行", {"terminal"}),
    # a PDF or chart is rendered by a command
    ("export notes.md as a tidy two-column pdf", {"terminal"}),
    ("把这份周报转成 pdf", {"terminal"}),
    ("draw a bar chart of signups per week from the export", {"terminal"}),
    ("帮我画个图表看看每周注册数", {"terminal"}),
    # a generated picture saved to a path lands there with a command
    ("design an icon for the app and store it in assets/icons", {"image_gen", "terminal"}),
    ("画一张生日贺卡的插图，保存到 ~/Pictures 里", {"image_gen", "terminal"}),
    # alternatives to a product are a web question
    ("any good alternatives to notion for a small team?", {"web"}),
    ("notion 有什么平替吗", {"web"}),
    # local files that mention a product are file work
    ("find and replace the old jira links in all .md files here", {"file"}),
    ("把本地文档里的 slack 旧链接都替换掉", {"file"}),
    # TODO markers and a bare project directory are in files
    ("list the FIXME comments under lib/ and summarise them", {"file"}),
    # times in words and Chinese numerals schedule
    ("post the summary at noon tomorrow", {"cronjob"}),
    ("后天上午十点把周报发给我", {"cronjob"}),
    ("下周一晚上八点在群里提醒大家交周报", {"cronjob"}),
    # a styled version of a picture is image generation
    ("make an anime style portrait of my cat", {"image_gen"}),
    ("把我的照片做成q版头像", {"image_gen"}),
    # a desktop application by name is computer use
    ("Inkscape is open, export the drawing for me", {"computer_use"}),
    # "skill" typed inside Chinese text
    ("把这个流程存成skill", {"skills"}),
    # switching to a project space, not just reading its folder
    ("切到 mobile-app 项目，看看 docs 目录下有哪些文件", {"project", "file"}),
    ("hop over to the project space for billing and list what is under its migrations dir", {"project"}),
]


OVER_REACH_BY_CLASS = [
    # "desktop" as a layout beside a viewport is the browser's, not the user's desktop
    ("check the pricing page at a tablet viewport and on desktop", "computer_use"),
    # moving a meeting is not moving files
    ("move the standup to thursday", "terminal"),
    # a chart in a spoken answer is not a picture to generate
    ("make a chart of the sales csv", "image_gen"),
]


@pytest.mark.parametrize("text,scheduled", [
    # a time inside an announcement sent now is its content
    ("post in #general on discord: the demo moved to 4pm tomorrow", False),
    ("在 discord 的 #general 里说一声 今晚的会改到9点", False),
    ("在元宝群里发个通知：周六下午三点团建", False),
    # a time before the send, or a schedule word anywhere, still schedules
    ("tomorrow at 8am post in #general on discord: office is closed", True),
    ("every friday post in #general on discord: timesheets due", True),
    ("明天早上九点在 discord 的 #general 里发一下：今天停电", True),
    ("每周一在元宝群里发个通知：记得打卡", True),
])
def test_a_time_inside_an_announcement_is_content(rules, text, scheduled):
    d = rules.without_learned().classify(text)
    assert d.action == "narrow" and ("cronjob" in d.toolsets) == scheduled, d


# Classes behind blind batches 6 and 7's misses (fresh phrasings, not the batch texts).
BATCH_6_7_CLASSES = [
    # a named pipeline, workflow or build tool, or a build that fails, runs commands beside files
    ("kick off the nextflow workflow in ~/proj/variant-calling and tell me when it ends", {"terminal", "file"}),
    ("run make in the firmware folder and show me the first error", {"terminal", "file"}),
    ("gradle refuses to build since I bumped kotlin, project is ~/apps/notes", {"terminal", "file"}),
    ("my beamer slides won't compile anymore, the source is ~/talks/defense/slides.tex", {"terminal", "file"}),
    ("帮我跑一下 ~/lab/chip-seq 里的 snakemake 流程，跑完告诉我", {"terminal", "file"}),
    ("论文的 latex 编译报错了，项目在 ~/paper，帮我看看", {"terminal", "file"}),
    ("固件編譯失敗了，專案在 ~/fw/sensor-node，幫我修一下", {"terminal", "file"}),
    # durations, lengths or metadata of media files, or a folder of media as a track list
    ("how long is each recording in ~/interviews? give me the total runtime too", {"terminal"}),
    ("make a track list of the mp3s in ~/mixtape with title and length", {"terminal"}),
    ("列出 ~/podcast 里每个音频的时长，写进 episodes.md", {"terminal"}),
    ("把 ~/影片/旅行 資料夾裡每支影片的長度跟解析度整理成表", {"terminal"}),
    # an Office document translated or rewritten needs code (either sandbox)
    ("rewrite the intro of ~/grants/proposal.docx in plain english and save a new copy", {"terminal", "file"}),
    ("把 ~/课件/第三章.pptx 翻译成英文，另存一份", {"terminal", "file"}),
    ("這份 word 文件幫我翻成日文，存成新檔", {"terminal"}),
    # Taiwanese/HK words: 縮圖 and 封面 are images; 影片 is video; 檔案/資料夾 are files
    ("幫我做一張頻道的縮圖，要亮黃色背景", {"image_gen"}),
    ("給我的 podcast 設計一個封面", {"image_gen"}),
    ("幫我總結這段影片的重點", {"video"}),
    ("幫我在桌面資料夾裡新建一個檔案叫 notes.txt", {"file"}),
    # a list of chores to note is a to-do list
    ("note down these errands: pick up dry cleaning, renew passport, call the vet", {"todo"}),
    ("记一下这几件事：取快递、交电费、约牙医", {"todo"}),
    ("記一下這幾件事：繳房租、買貓砂、回覆房東", {"todo"}),
    # a store or site admin page edited with the user's account is the browser
    ("log into the wordpress dashboard and unpublish the draft about the fall sale", {"browser"}),
    ("进我的店铺后台把这款杯子的库存改成 20", {"browser"}),
    ("幫我上網站後台把首頁的公告換掉", {"browser"}),
    # a price on a shopping site is a web lookup
    ("what's the price of the kindle paperwhite on amazon right now, just looking", {"web"}),
    ("看看京东上这个空气炸锅什么价位", {"web"}),
    ("幫我看淘寶上這款耳機大概什麼價位", {"web"}),
    # an image to go with a report or lesson is image generation
    ("write up the lesson plan and generate a diagram of the water cycle to go with it", {"image_gen"}),
    ("整理一份讲义，再配一张光合作用的示意图", {"image_gen"}),
    ("幫我整理成講義，再配一張細胞分裂的示意圖", {"image_gen"}),
    # pulling a page from a named site, an official account, sources to cite: the web
    ("what are people on X saying about the levy, and grab the ballot text from the county site", {"x_search", "web"}),
    ("fact-check this quote for me, i need sources i can cite", {"web"}),
    ("帮我找几篇最近关于钠离子电池的论文", {"web"}),
    ("幫我找一下最近很紅的露營話題", {"web"}),
    # Traditional and Cantonese home devices
    ("幫我把睡房冷氣較到25度", {"homeassistant"}),
    ("幫我鎖好前門", {"homeassistant"}),
    # parallel sub-tasks written object first
    ("这三个模块的单测要补，开几个子任务并行写", {"delegation"}),
    # a server's logs and a full disk are commands
    ("check the nginx logs on the box, something is throwing 502s", {"terminal"}),
    ("the disk on db-03 is at 91%, find what's eating space", {"terminal"}),
    ("线上 gunicorn 的日志帮我看一下有没有报错", {"terminal"}),
    # a stats test is computed with code
    ("run a paired t-test on these two columns: 3 4 5 / 4 5 7", {"code_execution"}),
    ("帮我做个卡方检验：男 30/20，女 25/25", {"code_execution"}),
    # network capture and throttling are the devtools protocol
    ("record a HAR of the signup flow with the network throttled to slow 3G", {"browser-cdp"}),
    ("用弱网模式抓一下登录页的请求", {"browser-cdp"}),
    # pinning a message or changing a channel topic is Discord admin
    ("pin the rules message in #general on our discord", {"discord_admin"}),
    ("在 discord 的 #公告 频道把这条消息置顶", {"discord_admin"}),
]


BATCH_6_7_OVER_REACH = [
    # "记住我喜欢..." stays memory, not a to-do list
    ("记住我喜欢靠窗的座位", "todo"),
    ("記住我不吃牛肉", "todo"),
    # a YouTube topic or thumbnail is not a video to watch
    ("幫我想幾個 YouTube 上很紅的題材", "video"),
    ("make a youtube thumbnail for my cooking video", "video"),
    # a chart is not a picture to generate
    ("画个折线图看看每月的销量", "image_gen"),
    ("draw a bar chart of the survey results", "image_gen"),
    # a sensor's driver is firmware, not a home device
    ("write a driver for the bmp390 sensor in ~/fw/drivers/", "homeassistant"),
    ("写一个温湿度传感器的驱动", "homeassistant"),
    # moving or dragging a Word file does not read it
    ("move the .docx files on my desktop into ~/archive", "code_execution"),
    # "7 pm" is a time, not a private message; "brew" in a name is not homebrew
    ("ping me at 7 pm to stretch", "hermes-yuanbao"),
    ("design a sign that says 'Bao & Brew'", "terminal"),
    # an abbreviation is not a C file
    ("queue up the new d.c. album", "file"),
]


# Classes behind blind batch 8's and heavy batch 3's misses (fresh phrasings, not the batch texts).
BATCH_8_CLASSES = [
    # word counts over a folder of files are a command
    ("give me the word count of every chapter in ~/novel/drafts", {"terminal"}),
    ("统计 ~/稿件 文件夹里每篇文章的字数", {"terminal"}),
    ("統計 ~/稿件 資料夾裡每篇文章的字數", {"terminal"}),
    # "make sure it still builds" after an edit is a build run
    ("swap every fmt.Println for log.Println in cmd/ and make sure it still compiles", {"terminal", "file"}),
    ("把 utils.go 里的旧接口全换掉，确保还能编译通过", {"terminal", "file"}),
    ("把 utils.go 裡的舊介面換掉，確保還能編譯通過", {"terminal", "file"}),
    # renaming everything in a folder is a command
    ("rename all of ~/scans to scan_001.pdf, scan_002.pdf and so on", {"terminal"}),
    ("把 ~/scans 里的全部文件批量重命名成 scan_001 这种", {"terminal"}),
    # an animated title card or an N-second loop is a generated video
    ("make an animated logo sting for the channel intro", {"video_gen"}),
    ("make an 8 second loop of rain on a window for the stream background", {"video_gen"}),
    ("做一个片头动画，五秒左右", {"video_gen"}),
    ("幫我做一段無縫循環動畫，咖啡冒煙的", {"video_gen"}),
    # a poster asked beside a video is still a picture
    ("make a teaser clip for the bake sale and a matching flyer for the noticeboard", {"video_gen", "image_gen"}),
    ("做一个新品宣传视频，再设计一张海报", {"video_gen", "image_gen"}),
    # a folder written with its slash after a place verb is file work
    ("look in middleware/ for anything still using the old logger", {"file"}),
    ("remember i use tabs, and check utils/ for files with spaces", {"memory", "file"}),
    # a Feishu comment by link (no 飞书 word), a Discord role (身份组) and channel permissions
    ("在 https://acme.feishu.cn/docx/abc123 这段下面回复一下：收到", {"feishu_drive"}),
    ("在 Discord 里给这几个人都加上「版主」身份组", {"discord_admin"}),
    ("請在 Discord 把 #規則 頻道設成只有管理員能發言", {"discord_admin"}),
    ("turn on slowmode in #chat for ten minutes", {"discord_admin"}),
    ("create a role called lurker that can't post in any channel and assign it to new joins", {"discord_admin"}),
    # a #channel on our server is Discord
    ("post the raffle results in #events on our server", {"discord"}),
    # sub-tasks that each take a part are delegation
    ("开三个子任务分别调研这三家公司的融资情况", {"delegation"}),
    ("開幾個子任務分別整理這三份報告", {"delegation"}),
    # a new document created in a workspace is a file
    ("在工作区「年会」里新建一份流程文档", {"file"}),
    ("在工作區「年會」裡新建一份流程文檔", {"file"}),
    # a file in downloads or documents is a file
    ("the lease pdf in my downloads, what's the move-out notice period?", {"file"}),
    ("下载文件夹里那个报价单 pdf，总价是多少", {"file"}),
    # looking through a set of photos is vision
    ("look through the photos from the site visit and list any damage you see", {"vision"}),
    ("帮我看看这些照片里有没有人闭眼", {"vision"}),
    ("幫我看看這些相片裡有沒有人閉眼", {"vision"}),
    # a frame saved from a video is a command
    ("find where the forklift tips in yard.mp4 and save that frame as a png", {"terminal"}),
    ("找到视频里出问题的地方，把那一帧截图存下来", {"terminal"}),
    # a DevTools port written with a hyphen, a status page, a local code, a priced comparison
    ("chrome is running with --remote-debugging-port=9333, grab the console errors from it", {"browser-cdp"}),
    ("is the stripe status page showing an incident right now?", {"web"}),
    ("what does the building code in austin say about deck railing height", {"web"}),
    ("compare notion and obsidian for a small team, pricing mostly", {"web"}),
    ("帮我看下 GitHub 状态页有没有故障", {"web"}),
    ("對比一下這兩家雲服務的價格", {"web"}),
    ("查一下当地的卫生法规，熟食能放多久", {"web"}),
    # going on a named site to look something up is the browser
    ("go on the county clerk site and look up the permit for 14 oak st", {"browser"}),
    # X named as a place to search
    ("search X for complaints about the outage this morning", {"x_search"}),
    # what I talked about with you (跟你聊的, Cantonese 同你講過) is a past session; 記低 is memory
    ("我之前跟你聊的那个露营清单叫什么来着", {"session_search"}),
    ("我上次同你講過嗰間餐廳叫咩名？記低佢嘅地址", {"session_search", "memory"}),
    # Traditional and Cantonese times and reminders
    ("聽日下晝3點提我去拎衫", {"cronjob"}),
    ("明天早上8點提醒我繳電費", {"cronjob"}),
    # an error pasted first, then "fix it"
    ("这个报错帮我修一下：KeyError: 'user_id'", {"file", "terminal"}),
    ("here's the traceback, can you fix it: AttributeError in models.py", {"file", "terminal"}),
    # OBS scenes are a desktop app
    ("switch OBS to the 'Gameplay' scene and start streaming", {"computer_use"}),
    ("在 OBS 里切到「访谈」场景然后开始录制", {"computer_use"}),
    # Traditional audio file words
    ("把這份講稿做成語音檔", {"tts"}),
]


BATCH_8_NEGATIONS_ABOUT_CONTENT = [
    # a reason ("so you don't"), or a limit on the edit ("don't change anything else", 其他别动)
    ("add my flight to notes.md so you don't book anything that day", {"file"}),
    ("fix the typo in README.md and don't change anything else", {"file"}),
    ("把 config.toml 里的端口改成 8081，其他别动", {"file"}),
    ("把 app.yaml 里的 replicas 改成 3，其余的不要改", {"file"}),
    # "without the" about content, not a tool
    ("post in #rules on discord: no selling without the mods' ok", {"discord"}),
]


BATCH_8_OVER_REACH = [
    # an essay length is not a word count over files
    ("write me a 300 word essay on the french revolution", "terminal"),
    # a path through ~/Desktop/ is a file, not the desktop to drive
    ("what does ~/Desktop/receipt.png say the total is", "computer_use"),
    # "our PM" is a product manager, "bj-pm" part of a host: no private message
    ("summarise the spec our PM shared in notes.md", "hermes-yuanbao"),
    # a desktop file dragged to the trash is computer_use, not file work
    ("drag the old invoice on my desktop into the trash", "file"),
    # a Slack workspace is not a desktop project
    ("open the acme slack workspace and read #general", "project"),
    # a new Feishu doc is the suite's, not a local file
    ("在飞书里新建一个周报文档", "file"),
    # an essay with a banner in it is not a picture request
    ("write a landing page with a banner that says welcome", "image_gen"),
]


@pytest.mark.parametrize("text", [
    "don't post anything yet, just draft the release note for discord",
    "draft the reply but don't send it",
    "先别发，帮我起草一下给房东的消息",
])
def test_a_negated_send_beside_a_draft_still_abstains(rules, text):
    assert rules.classify(text).reason == "negated"


@pytest.mark.parametrize("text", ["dm jordan that standup moved to 10", "私信 Jordan：周会改到周四"])
def test_a_dm_with_no_platform_is_not_yuanbao(rules, text):
    assert "hermes-yuanbao" not in rules.without_learned().classify(text).toolsets


BATCH_9_CLASSES = [
    # a first message that continues earlier work needs the earlier session too
    ("alright, now run the same cleanup on ~/photos/2023/", {"session_search", "file"}),
    ("let's pick up where we left off on the grant budget", {"session_search"}),
    ("carry on from yesterday with the migration notes", {"session_search"}),
    ("same as last time: summarise ~/inbox/week42.md", {"session_search", "file"}),
    ("按上次那个格式把 ~/notes/周报.md 再整理一遍", {"session_search", "file"}),
    ("销售额也按这个口径汇总一下 ~/data/q3.csv", {"session_search", "file"}),
    ("這份 ~/docs/月報.md 跟上次一樣處理", {"session_search", "file"}),
    ("接着昨天的把 ~/blog/draft.md 写完", {"session_search", "file"}),
    ("之前聊天里提过一个记账 app，叫什么来着", {"session_search"}),
    # continuing to write an earlier document: it is on disk
    ("继续写上周没写完的部署说明文档", {"file"}),
    # a web form, a registration on a site, a hotel or table booked online need the browser
    ("there's a signup form at https://example.org/join, fill it out with my details", {"browser"}),
    ("register me for the 10k on the city marathon website", {"browser"}),
    ("book us a hotel room near the venue for friday", {"browser"}),
    ("reserve a table for four at an italian place downtown", {"browser"}),
    ("帮我在官网上报名下个月的马拉松", {"browser"}),
    ("幫我訂一間台中的民宿，週六入住", {"browser"}),
    ("帮我预订周五晚上的餐厅包厢", {"browser"}),
    ("把这份报名表填一下，网址在 https://example.cn/form", {"browser"}),
    # a reminder for an event whose time must be looked up needs web too
    ("ping me 15 minutes before the next falcon 9 launch", {"cronjob", "web"}),
    ("wake me up an hour before sunrise on saturday", {"cronjob", "web"}),
    ("remind me 10 min before kickoff of the arsenal match", {"cronjob", "web"}),
    ("流星雨极大的时候提醒我出门看", {"cronjob", "web"}),
    ("比賽開始前半小時提醒我", {"cronjob", "web"}),
    # rewriting a document to match figures or guidelines looked up online needs web
    ("grab the latest IRS mileage rates and update ~/expenses/policy.docx to match", {"web", "file", "terminal"}),
    ("查一下今年的个税起征点，然后改 ~/hr/说明.docx 里的数字", {"web", "file", "terminal"}),
    ("2025年度最低工资标准出来了吗？出来的话更新 ~/hr/工资.xlsx", {"web", "file"}),
    # listing a project workspace's files needs file as well as project
    ("switch to the thesis project workspace and list the files in it", {"project", "file"}),
    ("打开「装修」项目工作区，看看里面有哪些文件", {"project", "file"}),
    ("切到「旅行」專案的工作區，把檔案列出來", {"file"}),
    # a service's health dashboard or an outage is a web lookup
    ("any outages on azure in west europe right now?", {"web"}),
    ("check the github status dashboard before we deploy", {"web"}),
    # "if so ..." after a question keeps its own verb
    ("is notes.md older than a week? if so search for a newer template", {"file", "web"}),
    # command-line media tools, a crash-looping pod, duplicates over a folder, a batch of PDFs
    ("ffmpeg: concat the clips in ~/edit/ into one mp4", {"terminal"}),
    ("the api pod is crashlooping in staging, figure out why", {"terminal"}),
    ("dedupe the photos in ~/camera/ by checksum", {"terminal"}),
    ("pull the totals out of these 12 pdfs in ~/receipts/", {"terminal"}),
    ("把 ~/合同/ 里的 30 份 PDF 的签约日期整理出来", {"terminal"}),
    ("把相册文件夹里重复的照片去重", {"terminal"}),
    # a loop that uses the agent's own web tool
    ("write a script that uses the web tool to check each link in links.txt", {"code_execution", "web"}),
    # outdoor lights and the heat are home devices
    ("switch off the garden floodlights at 11", {"homeassistant"}),
    ("turn the heat down a bit in the bedroom", {"homeassistant"}),
    # Cantonese and Traditional music requests
    ("我想聽下張學友嘅歌", {"spotify"}),
    ("播首周杰倫的歌來聽", {"spotify"}),
    # a thumbnail with its size beside a video is still a picture
    ("make a 10s loop of rain on a window and a 1280x720 thumbnail", {"video_gen", "image_gen"}),
    # a Feishu comment after a link: the URL's colon does not open a list
    ("打开 https://acme.feishu.cn/docx/abc 看下数字，跟表格对一下，有问题就在飞书文档里加评论", {"feishu_drive"}),
]


BATCH_9_OVER_REACH = [
    # "do the same for" inside one request is not a continuation
    ("fix the typo in a.md and do the same for b.md", "session_search"),
    # a layout that is the same as before is a bug report, not earlier work
    ("升级以后界面跟之前一样没变化", "session_search"),
    # a hotel question stays web; a book is not a booking
    ("how much is a hotel room in kyoto in april?", "browser"),
    ("recommend a book about hotel management", "browser"),
    ("北京的酒店一般多少钱一晚", "browser"),
    # a reminder whose time is given needs no lookup
    ("remind me at 6pm to call mom", "web"),
    ("每天早上7点提醒我跑步，一直到比赛那天", "web"),
    # a chat about kubernetes is not a command
    ("thanks for helping with k8s today, long day", "terminal"),
    # lyrics that mention a porch light are not a device
    ("read these lyrics aloud: the porch light hums and the tide goes out", "homeassistant"),
    # a tax form is not a schedule
    ("still stuck on schedule c, ugh", "cronjob"),
    # listening to a song's lyrics explained is not playback
    ("這首歌的歌詞在講什麼", "spotify"),
    # a single pdf read is not a batch job
    ("what does the lease.pdf say about pets", "terminal"),
]


# Classes added in the ninth session from the misses of blind batches 24-26 and heavy 12-14
# (seen by then); each written as a new request, not a batch text.
SESSION_9_CLASSES = [
    # a clip cut or trimmed out of a recording, or a frame grabbed, is a new file (ffmpeg)
    ("find where the keynote mentions pricing in launch.mp4 and cut that into its own clip", {"terminal"}),
    ("trim the last 30 seconds off the outro of episode 12's recording", {"terminal"}),
    ("把 meeting.mp4 里第5分钟到第8分钟剪出来单独存一个视频", {"terminal"}),
    ("從這支影片截一張清楚的畫面存成 jpg", {"terminal"}),
    # transcribing recorded audio runs speech-to-text over the files
    ("transcribe the three interview recordings in ~/audio/ into text files", {"terminal", "file"}),
    ("把 /data/rec/ 下面的录音都转写成文字稿", {"terminal", "file"}),
    # a full-page screenshot of a site is rendered in a browser
    ("take full-page screenshots of both vendors' pricing pages", {"browser"}),
    ("grab screenshots of the three candidates' homepages for the archive", {"browser"}),
    # a preference stated with "note" is for memory
    ("please note: I'm vegetarian and I live in Lyon", {"memory"}),
    ("note that I prefer metric units and short answers", {"memory"}),
    # a named PDF is a local file
    ("how many pages does thesis.pdf have?", {"file"}),
    ("thesis.pdf 有多少字？", {"file"}),
    # tagging a release and pushing the tag is git
    ("tag v2.4.0 on main and push the tag", {"terminal"}),
    ("给 release/2.0 打个 v2.0.1 的 tag 推上去", {"terminal"}),
    # after blind batch 27's row: a device switched later or for a while needs a timed job
    ("switch the porch light off in 45 minutes", {"homeassistant", "cronjob"}),
    ("turn on the dehumidifier for two hours and then switch it off", {"homeassistant", "cronjob"}),
    ("半小时后把空调关掉", {"homeassistant", "cronjob"}),
    # a room's temperature set to a number, and a song by its title in 《》
    ("把會議室的溫度調到22度", {"homeassistant"}),
    ("放一下陈奕迅的《十年》", {"spotify"}),
    # after blind batch 28's row: a message for a #channel with no platform named is Discord's
    ("let everyone in #front-desk know the lift is fixed", {"discord"}),
    ("在 #staff 频道说一声房间价格改了", {"discord"}),
    # a bare domain with a path is a page; a booking engine or booking page is the browser
    ("is the menu on trattoria-luca.it/menu still the summer one?", {"web"}),
    ("check the September rates on our booking engine", {"browser"}),
    ("看一下訂房頁面上的價格有沒有更新", {"browser"}),
    # what the user told the agent is memory; what was said in an earlier chat, and "the way
    # you just did it" in a new chat, are past sessions
    ("check what I told you about the Lins' dietary needs", {"memory"}),
    ("上週聊天時說的接送價格是多少", {"session_search"}),
    ("turn the way you just formatted the invoice into a skill", {"session_search", "skills"}),
    # after heavy batch 16's row: a security advisory is read where it is published
    ("read GHSA-x2c9-7m4q-pp3r and tell me if our lockfile is affected", {"web"}),
    ("openssl 出了个安全公告，看看影响哪些版本", {"web"}),
    # after blind batch 30's row: scanned pages are pictures to read
    ("the signed consent forms are scanned in ~/office/scans/, list who has not signed", {"vision"}),
    ("把扫描件里的发票号码都抄出来", {"vision"}),
]

SESSION_9_OVER_REACH = [
    # a video summarised is not a clip cut
    ("summarise the keynote in launch.mp4 in five bullets", "terminal"),
    # a note about the content is not a preference to keep
    ("note the date format in the csv is day-first when you read sales.csv", "memory"),
    # transcribing a photo of a whiteboard is vision, not speech-to-text
    ("transcribe the equations in whiteboard.jpg into latex", "terminal"),
    # a word with "tag" in it is not a git tag
    ("add the tag 'urgent' to my todo about the invoice", "terminal"),
    # a duration that is not a device switched later, and a book title in 《》
    ("summarise the talk, it runs for 40 minutes then there's q&a", "cronjob"),
    ("帮我总结一下《三体》的第一部", "spotify"),
    # a hashtag in a caption is not a channel; a module path is not a domain
    ("write a caption for the sunset photo with #goldenhour and #seaside", "discord"),
    ("read src/app.py and docs/index.md", "web"),
    # "booking" as a noun in a local script is not the browser
    ("fix the date parsing in booking.py", "browser"),
    # scanning a machine is not a scanned page
    ("扫描一下这台机器的端口", "vision"),
]

# Each class list above is written once, next to where its classes came from; these two tests
# serve all of them.
ALL_IMPLIED = IMPLIED_BY_CLASS + BATCH_6_7_CLASSES + BATCH_8_CLASSES + BATCH_8_NEGATIONS_ABOUT_CONTENT + BATCH_9_CLASSES + SESSION_9_CLASSES
ALL_OVER_REACH = OVER_REACH_BY_CLASS + BATCH_6_7_OVER_REACH + BATCH_8_OVER_REACH + BATCH_9_OVER_REACH + SESSION_9_OVER_REACH


@pytest.mark.parametrize("text,need", ALL_IMPLIED, ids=[t for t, _ in ALL_IMPLIED])
def test_implied_needs_by_class(rules, text, need):
    d = rules.without_learned().classify(text)
    assert routes(d, *need), (text, d)


@pytest.mark.parametrize("text,absent", ALL_OVER_REACH, ids=[f"{t} !{a}" for t, a in ALL_OVER_REACH])
def test_class_rules_do_not_over_reach(rules, text, absent):
    assert absent not in rules.without_learned().classify(text).toolsets


def test_a_url_colon_does_not_open_a_listed_span():
    from hermes_token_router.coverage import mask_content
    t = "open https://a.example/x 里的数字, 跟 b 对一下, 在飞书文档里加评论"
    assert mask_content(t) == t
    assert mask_content("items: a, b, c").strip() == "items"
