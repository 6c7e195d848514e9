//! switchboard-search: tool retrieval (lexical, dense, hybrid) and its evaluation. No network.
