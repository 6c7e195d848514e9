//! switchboard-lint: rules that read a tool definition the way a model and a provider will. Pure.
