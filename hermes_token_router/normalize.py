"""What the rules read: the user's text with the tricks that hide a word folded away.

Why: negation is the rules' most important guard ("don't run the tests" must keep the
full surface), and it is written with an ASCII apostrophe. Phones and editors type
U+2019, and a pasted or hostile message can carry zero-width characters or Cyrillic
look-alikes inside the word. So before any pattern runs: NFKC (full-width and styled
letters), typographic quotes and apostrophes to ASCII, invisible characters removed, and
look-alike letters mapped to Latin inside words that already mix them with Latin letters
(a whole Cyrillic or Greek word is left alone: it is that language, not a disguise).

Also here: the text of a message whose content is a list of parts (multimodal), which is
routed on its text parts only, never on the repr of an image's data URL. Pure: no Hermes.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_QUOTES = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u02bc": "'", "\u02b9": "'",
    "\u00b4": "'", "\uff07": "'", "\u2035": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
})
# Format characters that render as nothing (zero-width space/joiners, word joiner, BOM,
# soft hyphen, bidi controls, Mongolian vowel separator, invisible operators).
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")
# Letters drawn like Latin ones (Unicode confusables, lower case after folding).
_LOOKALIKE = str.maketrans({
    "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y", "\u0445": "x",
    "\u0456": "i", "\u0458": "j", "\u0455": "s", "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04bb": "h",
    "\u0432": "b", "\u043a": "k", "\u043c": "m", "\u043d": "h", "\u0442": "t", "\u0457": "i", "\u04cf": "l",
    "\u03bf": "o", "\u03b1": "a", "\u03bd": "v", "\u03c1": "p", "\u03b9": "i", "\u03ba": "k", "\u03c4": "t",
    "\u03c5": "u", "\u03c7": "x", "\u0261": "g", "\u0269": "i", "\u026a": "i", "\u0131": "i", "\u1d0f": "o",
    "\u1d1b": "t", "\u0578": "n", "\u057c": "n", "\u0585": "o", "\u0566": "q",
})
# Any of those letters: without one, unmasking (a Python call per word) changes nothing.
_HAS_LOOKALIKE = re.compile("[" + "".join(chr(c) for c in _LOOKALIKE) + "]")
# Han characters (unified, extension A, compatibility): what the rules, the learned model and the
# dynamic index each treat as "Chinese", one definition so they cannot drift apart.
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_LATIN = re.compile(r"[a-z]")
_WORD = re.compile(r"[^\s'\"]+")


def _unmask(match: "re.Match[str]") -> str:
    word = match.group(0)
    if word.isascii() or not _LATIN.search(word):
        return word
    return word.translate(_LOOKALIKE)


# Written Cantonese words -> their Mandarin (Simplified) equivalents, so rules and the learned
# model written for Mandarin read "睇下聽日天文台有冇黃雨警告" as "看下明天天文台有没有黄雨警告".
# Only words that mean the same wherever they appear; characters that are also Mandarin in
# other words are mapped in context (呢 only before a classifier, 係 not inside 關係, 相 only
# after a classifier, as in 呢張相).
_CANTONESE = {
    "聽日": "明天", "听日": "明天", "琴日": "昨天", "尋日": "昨天", "寻日": "昨天", "而家": "现在",
    "邊個": "谁", "边个": "谁", "邊度": "哪里", "边度": "哪里", "點樣": "怎么", "点样": "怎么",
    "點解": "为什么", "点解": "为什么", "幾時": "什么时候", "几时": "什么时候", "乜嘢": "什么",
    "唔好": "不要", "唔該": "麻烦", "唔该": "麻烦", "幫手": "帮忙", "帮手": "帮忙", "影相": "拍照",
    "轉做": "转成", "转做": "转成", "寫低": "写下", "写低": "写下", "我哋": "我们", "你哋": "你们",
    "佢哋": "他们", "傾偈": "聊天",
    "睇": "看", "冇": "没有", "嘅": "的", "喺": "在", "咗": "了", "唔": "不", "嘢": "东西", "畀": "给",
    "俾": "给", "攞": "拿", "搵": "找", "噉": "这样", "咁": "这么", "啲": "些", "嗰": "那", "咩": "什么",
    "佢": "他", "哋": "们", "吓": "下",
}
_CANTONESE_RX = re.compile(
    "|".join(sorted(map(re.escape, _CANTONESE), key=len, reverse=True))
    + r"|呢(?=[個个張张份條条啲些度排間间部本首段封位款隻只件])|(?<![關关聯联體体派維维])係|(?<=[張张啲些幅])相(?![关關同信似比对對片机機册冊簿])")
_MANDARIN = {**_CANTONESE, "呢": "这", "係": "是", "相": "照片"}  # the three in context above


def cantonese(text: str) -> str:
    """``text`` with written Cantonese words replaced by their Mandarin equivalents."""
    return _CANTONESE_RX.sub(lambda m: _MANDARIN[m.group(0)], text)


def fold(text: str) -> str:
    """Lower-cased, NFKC, quotes folded, invisible characters gone, disguised letters
    mapped, whitespace collapsed to single spaces."""
    if text.isascii():  # nothing to fold but case: every step below only touches non-ASCII
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text).translate(_QUOTES).lower()
    if _HAS_LOOKALIKE.search(text) is not None:  # most non-ASCII text is Chinese: skip the per-word pass
        text = _WORD.sub(_unmask, text)
    return " ".join(text.split())


def message_text(content: Any) -> str:
    """The routable text of a user message: a string as is; for a list of parts (the
    OpenAI multimodal shape), the ``text`` of its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, (list, tuple)):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in ("text", "input_text", None) \
                    and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return ""
