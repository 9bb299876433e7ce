"""Unit tests for the pure pre_tool_call guard decision."""

from __future__ import annotations

import pytest

from hermes_token_router import admission as A
from hermes_token_router import admission_policy as P
from hermes_token_router.guard import guard_decision

OWNERS = {"read_file": "file", "write_file": "file", "kanban_show": "kanban", "kanban_list": "kanban",
          "kanban_complete": "kanban", "vault_open": "vault", "tool_call": None}
CAPTURE = ("read_file", "kanban_show", "tool_call")


def owner_of(name):
    return OWNERS.get(name)


def env_for(protected=(), pins=(), **kw):
    adm = P.parse_admission({"schema_version": 1, "protected_toolsets": list(protected),
                             "pinned_tool_names": list(pins)})
    return A.bind(adm, CAPTURE, OWNERS, **kw)


def is_block(decision):
    return isinstance(decision, dict) and decision.get("action") == "block" and isinstance(decision.get("message"), str)


def test_uncaptured_protected_tool_is_blocked_with_a_clear_message():
    d = guard_decision("vault_open", env_for(["vault"]), owner_of)
    assert is_block(d)
    assert "vault_open" in d["message"] and "'vault'" in d["message"] and "tool_call" in d["message"]
    assert set(d) == {"action", "message"}


def test_captured_protected_tool_passes_even_if_pruned_by_the_router():
    assert guard_decision("kanban_show", env_for(["kanban"]), owner_of) is None


def test_uncaptured_sibling_of_an_admitted_protected_tool_is_blocked():
    assert is_block(guard_decision("kanban_list", env_for(["kanban"]), owner_of))


def test_uncaptured_pinned_name_is_blocked_even_if_its_toolset_is_ordinary():
    d = guard_decision("write_file", env_for((), ["write_file"]), owner_of)
    assert is_block(d) and "pinned" in d["message"]


def test_ordinary_uncaptured_tool_passes():
    assert guard_decision("write_file", env_for(["kanban"]), owner_of) is None


@pytest.mark.parametrize("name", ["connectors__batch_1", "tool_search", "mcp_unknown"])
def test_unregistered_names_pass_documented_limit(name):
    assert guard_decision(name, env_for(["kanban", "vault"]), owner_of) is None


def test_registry_lookup_error_passes_documented_limit():
    def broken(name):
        raise RuntimeError("registry unavailable")

    assert guard_decision("vault_open", env_for(["vault"]), broken) is None


def test_non_string_owner_passes():
    assert guard_decision("vault_open", env_for(["vault"]), lambda n: 3) is None


def test_no_envelope_or_bad_name_passes():
    assert guard_decision("vault_open", None, owner_of) is None
    assert guard_decision(None, env_for(["vault"]), owner_of) is None
    assert guard_decision("", env_for(["vault"]), owner_of) is None


def test_empty_policy_never_blocks():
    env = env_for()
    for name in OWNERS:
        assert guard_decision(name, env, owner_of) is None


def test_invalid_policy_blocks_every_registered_uncaptured_tool():
    env = A.bind(P.parse_admission(None), CAPTURE, OWNERS)
    assert env.authority == A.INVALID_MODE
    assert is_block(guard_decision("write_file", env, owner_of))
    assert "invalid" in guard_decision("write_file", env, owner_of)["message"]
    assert guard_decision("read_file", env, owner_of) is None  # captured
    assert guard_decision("connectors__x", env, owner_of) is None  # unregistered


def test_no_authority_guard_uses_the_bound_surface():
    env = env_for(["vault"], provenance=False)
    assert is_block(guard_decision("vault_open", env, owner_of))
    assert guard_decision("write_file", env, owner_of) is None


def test_installed_only_and_uncapturable_still_guard_protected():
    adm = P.parse_admission({"schema_version": 1, "protected_toolsets": ["vault"], "pinned_tool_names": []})
    for env in (A.bind(adm, CAPTURE, OWNERS, attachable=False), A.bind(adm, None, OWNERS)):
        assert is_block(guard_decision("vault_open", env, owner_of))
        assert guard_decision("write_file", env, owner_of) is None
