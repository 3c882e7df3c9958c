"""MCP servers as tool sources: configuration, one connection per server per process, and their tools as
ordinary Tool objects. Plain Python (the SDK, no Django); the admin's side is the mcpservers app."""
