//! switchboard-host: the library facade over sessions, catalog, translation and dispatch.
