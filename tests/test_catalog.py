"""The capability catalog: compact, deterministic, complete."""

from __future__ import annotations

from hermes_token_router.catalog import CatalogEntry, entries_for, render, router_definition, short_blurb


def test_limited_to_names_the_admitted_tools_only_when_partial():
    entries = entries_for(["kanban", "file"], {"kanban": ("kanban_show",), "file": ("read_file", "patch")},
                          {"kanban": ("kanban_list", "kanban_show"), "file": ("patch", "read_file")},
                          {"file": "read and write files"}, {"kanban": "Kanban multi-agent coordination — only x"})
    text = render(entries, bridge=False)
    assert "- kanban (limited to: kanban_show): Kanban multi-agent coordination" in text
    assert "- file: read and write files" in text


def test_past_sixty_entries_names_without_descriptions_and_nothing_dropped():
    entries = [CatalogEntry(f"ts{i}", f"blurb {i}") for i in range(75)]
    text = render(entries, bridge=True)
    for i in range(75):
        assert f"ts{i}" in text
    assert "blurb 59" in text and "blurb 60" not in text
    assert "tool_search" in text


def test_render_is_deterministic_and_definition_is_a_new_dict():
    entries = [CatalogEntry("file", "files"), CatalogEntry("web", "web")]
    assert render(entries, bridge=False) == render(list(entries), bridge=False)
    a, b = router_definition("x"), router_definition("x")
    assert a == b and a is not b and a["function"]["parameters"] is not b["function"]["parameters"]


def test_short_blurb_falls_back_to_first_clause_of_host_description():
    assert short_blurb("zz", {}, "Zap things — with many details (and more)") == "Zap things"
    assert short_blurb("zz", {}, "Plugin toolset: zz") == ""
