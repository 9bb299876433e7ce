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
