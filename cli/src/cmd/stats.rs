//! `stats`: totals, the opcode histogram and per-connection counters.

use std::process::ExitCode;

use crate::stats;
use clap::Args;

use super::common::{Common, InputArg, ModelArgs, NicArgs, ScaleArgs, TapArgs};
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Stats` (cmd/mod.rs).
#[derive(Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub input: InputArg,
    #[command(flatten)]
    pub taps: TapArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = stats::Format::Text)]
    pub format: stats::Format,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub scale: ScaleArgs,
    #[command(flatten)]
    pub nic: NicArgs,
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    #[command(flatten)]
    pub common: Common,
}

impl StatsArgs {
    pub fn run(self) -> Outcome {
        let Self { input, taps, format, model, scale, nic, filter, common } = self;
        let nic = nic.input()?;
        let cfg = common.config();
        let filter = filter.filter();
        let scope =
            stats::Scope { shard: scale.shard, threads: common.threads(), filter: filter.as_ref() };
        stats::run(&input.several(taps)?, format, &cfg, model.model(), nic.as_ref(), scope)
            .map(|()| ExitCode::SUCCESS)
    }
}
