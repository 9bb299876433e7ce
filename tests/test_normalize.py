"""``normalize.fold``: what the rules and the dynamic index read."""

from __future__ import annotations

import string

from hypothesis import given, strategies as st

from hermes_token_router.normalize import fold


@given(st.text(alphabet=string.printable, max_size=200))
def test_ascii_fast_path_equals_the_full_fold(text):
    # A trailing zero-width space sends the same text down the full path, which removes it.
    assert fold(text) == fold(text + "\u200b")


def test_disguises_fold_to_plain_words():
    assert fold("Don\u2019t  ＲＵＮ the\u00a0te\u200bsts") == "don't run the tests"
    assert fold("g\u0456thub") == "github"          # a Cyrillic i inside a Latin word
    assert fold("спасибо") == "спасибо"            # a whole Cyrillic word is left alone
