//! `diagnose`: verdicts on the capture and on each connection incarnation (docs/diagnose.md).

use std::process::ExitCode;

use crate::diagnose;
use clap::Args;

use super::common::{parse_millis, Common, InputArg, JudgingArgs, ModelArgs, NicArgs, TapArgs};
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Diagnose` (cmd/mod.rs).
#[derive(Args)]
pub struct DiagnoseArgs {
    #[command(flatten)]
    pub input: InputArg,
    #[command(flatten)]
    pub taps: TapArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = diagnose::Format::Text)]
    pub format: diagnose::Format,
    /// Failures within this many milliseconds after the first one are listed as following
    /// it (a flush cascade)
    #[arg(long = "cascade-window", default_value = "100", value_parser = parse_millis, value_name = "MS")]
    pub cascade_window_ns: u64,
    #[command(flatten)]
    pub judging: JudgingArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub nic: NicArgs,
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    #[command(flatten)]
    pub common: Common,
}

impl DiagnoseArgs {
    pub fn run(self) -> Outcome {
        let Self { input, taps, format, cascade_window_ns, judging, model, nic, filter, common } =
            self;
        let nic = nic.input()?;
        let input = input.several(taps)?;
        let (cfg, filter) = (common.config(), filter.filter());
        let run = diagnose::Run {
            input: &input,
            cfg: &cfg,
            opts: judging.options(&model),
            window_ns: cascade_window_ns,
            threads: common.threads(),
            filter: filter.as_ref(),
            format,
            nic: nic.as_ref(),
        };
        diagnose::run(&run).map(ExitCode::from)
    }
}
