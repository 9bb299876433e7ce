import pytest
from pydantic import ValidationError

from hermes_token_router.skill_router.config import SkillRouterConfig
from hermes_token_router.skill_router.nickname import NicknameMap


def test_defaults_are_off_and_sane():
    cfg = SkillRouterConfig()
    assert cfg.enabled is False and cfg.max_chars == 15000 and cfg.top_k == 3
    assert 0 < cfg.threshold < 1 and cfg.max_total_chars <= 10000  # under Hermes's hook spill cap


def test_bare_nickname_is_rejected_with_the_fix():
    with pytest.raises(ValidationError) as exc:
        SkillRouterConfig(nicknames={"email": "himalaya"})
    assert "the email" in str(exc.value) and "article or possessive" in str(exc.value)


def test_unknown_key_is_rejected():
    with pytest.raises(ValidationError):
        SkillRouterConfig(treshold=0.3)


def test_nickname_matching_case_punctuation_chinese_and_multiple_hits():
    nm = NicknameMap({"the game server": "minecraft-server", "my notes": ["obsidian", "journal"],
                      "我的账本": "personal-ledger"})
    assert [n for _, n in nm.match("Is THE  Game-Server down?")] == ["minecraft-server"]
    assert [n for _, n in nm.match("restart the game server and file it in my notes")] == \
        ["minecraft-server", "obsidian", "journal"]
    assert [n for _, n in nm.match("帮我看看我的账本")] == ["personal-ledger"]
    assert nm.match("bathe game server") == []  # must start on a word boundary
    assert nm.match("what server do you like") == []
