//! switchboard-mcp: live sessions to MCP servers over stdio and Streamable HTTP (the only rmcp client user).
