//! switchboard-gateway: the aggregating MCP server and the embedded demo servers (the only rmcp server user).
