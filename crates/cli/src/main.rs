//! The `switchboard` command line: the only crate that prints and uses anyhow.

mod eval;

fn main() {}
