//! `graph`: one connection's time-sequence graph as SVG.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::report;
use clap::Args;

use super::common::{CheckingArgs, Common, InputArg, ModelArgs, TapArgs};
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Graph` (cmd/mod.rs).
#[derive(Args)]
pub struct GraphArgs {
    /// (a file, or several taps' files: not stdin, each is read twice)
    #[command(flatten)]
    pub input: InputArg,
    #[command(flatten)]
    pub taps: TapArgs,
    /// The connection, as `stats` and `check` name it ("10.0.0.1 QP 0x000011 <-> 10.0.0.2
    /// QP 0x000012"), or a part of that name that only it has (e.g. "0x000011")
    #[arg(long, value_name = "NAME")]
    pub conn: String,
    /// Output SVG file
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub checking: CheckingArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub common: Common,
}

impl GraphArgs {
    pub fn run(self) -> Outcome {
        let Self { input, taps, conn, output, checking, model, common } = self;
        let (input, cfg) = (input.several(taps)?, common.config());
        let threads = common.threads();
        let reading = report::Reading { input: &input, cfg: &cfg, filter: None, threads };
        report::run_graph(&reading, &output, checking.options(&model), &conn)
            .map(|()| ExitCode::SUCCESS)
    }
}
