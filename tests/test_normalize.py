"""``normalize.fold``: what the rules and the dynamic index read."""

from __future__ import annotations

import string

from hypothesis import given, strategies as st

from hermes_token_router import normalize as normalize_mod
from hermes_token_router.normalize import fold


@given(st.text(alphabet=string.printable, max_size=200))
def test_ascii_fast_path_equals_the_full_fold(text):
    # A trailing zero-width space sends the same text down the full path, which removes it.
    assert fold(text) == fold(text + "\u200b")


def test_disguises_fold_to_plain_words():
    assert fold("Don\u2019t  ＲＵＮ the\u00a0te\u200bsts") == "don't run the tests"
    assert fold("g\u0456thub") == "github"          # a Cyrillic i inside a Latin word
    assert fold("спасибо") == "спасибо"            # a whole Cyrillic word is left alone


@given(st.text(alphabet=string.ascii_letters + " 提醒文件，？\u2019\u0430\u0435\u043e\u03bf\u0456\u1d0f\u0578é", max_size=80))
def test_skipping_the_unmask_pass_without_a_look_alike_letter_changes_nothing(text):
    """``fold`` runs the per-word unmasking only when a look-alike letter occurs; the pass
    it skips would have returned the text unchanged."""
    lowered = text.lower()
    if normalize_mod._HAS_LOOKALIKE.search(lowered) is None:
        assert normalize_mod._WORD.sub(normalize_mod._unmask, lowered) == lowered
    assert fold(text) == " ".join(normalize_mod._WORD.sub(normalize_mod._unmask, fold(text)).split())


def test_written_cantonese_reads_as_mandarin_for_the_rules():
    from hermes_token_router.normalize import cantonese
    from hermes_token_router.rules import default_rules, normalize

    assert cantonese("睇下聽日有冇落雨") == "看下明天有没有落雨"
    assert cantonese("將呢張相存喺桌面") == "將这張照片存在桌面"
    # characters that are Mandarin in other words stay: 呢 as a particle, 係 in 關係, 相 in 互相
    assert cantonese("你呢？") == "你呢？" and cantonese("我哋嘅關係") == "我们的關係"
    assert cantonese("互相幫手") == "互相帮忙" and cantonese("佢係老師") == "他是老師"
    assert normalize("check the logs") == "check the logs"  # no Chinese: nothing to do
    # the negation guard written for Mandarin now reads Cantonese too
    assert default_rules().classify("唔好改我嘅code，淨係解釋下").reason == "negated"


@given(st.text(alphabet="睇冇嘅喺咗唔呢係相關張你我他的了是在不要看一二三，？abc ", max_size=40))
def test_the_cantonese_fold_is_idempotent_and_never_raises(text):
    from hermes_token_router.normalize import cantonese

    once = cantonese(text)
    assert cantonese(once) == once
