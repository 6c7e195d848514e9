//! `switchboard eval`: measure tool retrieval on a catalog and a query set.

use std::process::ExitCode;

/// Arguments of `switchboard eval`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {}

/// Run the command.
pub fn run(_args: EvalArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("eval is not built yet")
}
