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
