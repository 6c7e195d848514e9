//! The `switchboard` command line: the only crate that prints and uses anyhow.

fn main() {}
