//! `report`: the HTML report (docs/report.md).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::{check, output, report};
use clap::Args;

use super::common::{CheckingArgs, Common, InputArg, ModelArgs, TapArgs};
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Report` (cmd/mod.rs).
#[derive(Args)]
pub struct ReportArgs {
    /// (a file, or several taps' files: not stdin, each is read twice)
    #[command(flatten)]
    pub input: InputArg,
    #[command(flatten)]
    pub taps: TapArgs,
    /// Output HTML file
    #[arg(short, long)]
    pub output: PathBuf,
    /// Connections graphed (the busiest); the others are listed with their counters
    #[arg(long, default_value_t = crate::report::DEFAULT_GRAPHS, value_name = "N")]
    pub graphs: usize,
    #[command(flatten)]
    pub checking: CheckingArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    #[command(flatten)]
    pub common: Common,
}

impl ReportArgs {
    pub fn run(self) -> Outcome {
        let Self { input, taps, output, graphs, checking, model, filter, common } = self;
        let input = input.several(taps)?;
        let opts = checking.options(&model);
        let (cfg, filter) = (common.config(), filter.filter());
        let threads = common.threads();
        let reading =
            report::Reading { input: &input, cfg: &cfg, filter: filter.as_ref(), threads };
        let done = report::run_report(&reading, &output, opts, graphs)?;
        output::note(format_args!(
            "wrote {}: {} bytes, {} connection(s) graphed, {} finding(s)",
            check::shown_name(&output),
            done.bytes,
            done.graphs,
            done.findings
        ));
        Ok(ExitCode::from(u8::from(done.errors > 0)))
    }
}
