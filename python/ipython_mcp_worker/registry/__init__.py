"""Dynamic tools: live callables of the namespace published as extra MCP tools."""
