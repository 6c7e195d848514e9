//! Provider-safe public names: a per-dialect bijection between (server, tool) and the name a model sees.
