"""Against the real Hermes 0.19.0 (in a subprocess: HERMES_HOME must precede Hermes's import)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("live_hermes_script.py")


@pytest.fixture(scope="module")
def live():
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=180)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, f"live script failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(line[len("RESULT "):])


def test_disabled_skill_reaches_provider_in_user_turn(live):
    assert live["disabled_skill_absent_from_index"]
    assert live["match_user_starts_with_message"] and live["match_user_has_skill"]


def test_non_matching_message_reaches_provider_unchanged(live):
    assert live["nomatch_user_unchanged"]


def test_trim_write_shrinks_the_system_prompt(live):
    assert live["after_trim_lists_kept"]
    assert live["skills_listed_after"] <= 3 and live["skills_listed_before"] >= 100
    assert live["system_tokens_after_trim"] < live["system_tokens_before_trim"] - 2000
