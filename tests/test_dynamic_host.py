"""Which toolsets the host adapter calls dynamic, on the real Hermes 0.19.0 registry of the
test profile (a web backend and a browser endpoint, so ``browser-cdp`` is registered)."""

from __future__ import annotations


def test_builtin_registry_toolsets_are_not_dynamic(runtime, plugin_module):
    host = plugin_module("host")
    from tools.registry import registry

    assert registry.get_tool_names_for_toolset("browser-cdp")  # registry-only, built in
    for name in ("browser-cdp", "file", "terminal", "web", "router", None, ""):
        assert not host.is_dynamic_toolset(name), name
    assert host.is_dynamic_toolset("mcp-github")


def test_a_plugin_toolset_is_dynamic(runtime, plugin_module):
    host = plugin_module("host")
    from tools.registry import registry

    registry.register(name="acme_ledger_balance", toolset="acme-ledger",
                      schema={"name": "acme_ledger_balance", "description": "Ledger balance",
                              "parameters": {"type": "object", "properties": {}}},
                      handler=lambda args, **kw: "0")
    try:
        assert host.is_dynamic_toolset("acme-ledger")
        assert host.short_tool_name("mcp__github__list_issues", "mcp-github") == "list_issues"
    finally:
        registry.deregister("acme_ledger_balance")


def test_catalog_names_the_tools_of_a_deferred_integration(runtime, plugin_module):
    """With Hermes's tool_search active the MCP tools are not in the surface; the catalog
    still says what the integration offers, from the deferred names the capture recorded."""
    surface = plugin_module("surface")
    session_plan = plugin_module("session_plan")
    names = ("read_file", "tool_search", "tool_call")
    cap = surface.Capture(tools=[{"type": "function", "function": {"name": n}} for n in names],
                          valid_tool_names=set(names), names=names,
                          owners={"read_file": "file", "tool_search": None, "tool_call": None},
                          deferred={"mcp-github": ("mcp__github__list_pull_requests", "mcp__github__create_issue")})
    text = session_plan.catalog_text(cap, {})
    line = next(x for x in text.splitlines() if x.startswith("- mcp-github"))
    assert "list_pull_requests" in line and "create_issue" in line and "via tool_search" in line


def test_the_classifier_sees_a_dynamic_toolset_as_the_catalog_describes_it(runtime, plugin_module):
    """No shipped blurb knows an MCP server: the classifier is shown the catalog's tool list
    for it (cut to its own line length by the same ranking), never a bare name."""
    surface = plugin_module("surface")
    session_plan = plugin_module("session_plan")
    contract = plugin_module("classifier.contract")
    github = tuple(f"mcp__github__{t}" for t in ("list_pull_requests", "create_issue", "get_file_contents"))
    notion = tuple(f"mcp__notion__{verb}_{thing}_{n}" for verb in ("create", "update", "archive")
                   for thing in ("database_item", "page_property") for n in range(6))  # a long list
    names = ("read_file", "request_toolset") + github + notion
    owners = {"read_file": "file", "request_toolset": "router", **{n: "mcp-github" for n in github},
              **{n: "mcp-notion" for n in notion}}
    cap = surface.Capture(tools=[{"type": "function", "function": {"name": n}} for n in names],
                          valid_tool_names=set(names), names=names, owners=owners)
    offered = dict(session_plan.classifier_toolsets(cap, {"file": "Read, write and search files"}))
    assert list(offered) == ["file", "mcp-github", "mcp-notion"]  # the router's own toolset is not offered
    assert offered["file"] == "Read, write and search files"
    catalog_lines = {line.split(":", 1)[0][2:]: line.split(": ", 1)[1]
                     for line in session_plan.catalog_text(cap, {}).splitlines() if line.startswith("- mcp-")}
    assert offered["mcp-github"] == catalog_lines["mcp-github"] == \
        "tools: list_pull_requests, create_issue, get_file_contents"
    long = offered["mcp-notion"]
    assert len(long) <= contract.MAX_DESCRIPTION_CHARS and long.startswith("36 tools, e.g. ")
    assert long.endswith("more)") and "mcp__" not in long
    prompt = contract.build_messages("hi", list(offered.items()))[0]["content"]
    assert "- mcp-github: tools: list_pull_requests, create_issue, get_file_contents" in prompt
    assert f"- mcp-notion: {long}" in prompt  # whole: not cut mid-name by the prompt's own limit
