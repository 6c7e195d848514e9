//! Runs the CLI's `switchboard eval` code (crates/cli/src/eval.rs) as an example binary:
//! `cargo run --release -p switchboard-search --example eval -- retrieval --catalog ... --queries ...`.

#[path = "../../cli/src/eval.rs"]
mod eval;

use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: eval::EvalArgs,
}

fn main() -> anyhow::Result<std::process::ExitCode> {
    eval::run(Cli::parse().args)
}
