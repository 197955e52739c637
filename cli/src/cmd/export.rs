//! `export`: the capture as Parquet tables (docs/parquet.md).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::{output, stats};
use clap::Args;

use super::common::{CheckingArgs, Common, InputArg, ModelArgs, ScaleArgs, TapArgs};
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Export` (cmd/mod.rs).
#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub input: InputArg,
    #[command(flatten)]
    pub taps: TapArgs,
    /// Output directory (created when missing; the tables in it are replaced when the new
    /// ones are complete, and left as they were when the export fails)
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The most rows of packets.parquet; the frames after them go on in
    /// packets-000001.parquet, packets-000002.parquet, ... (read them together as
    /// 'DIR/packets*.parquet'). Bounds memory on an endless capture (rounded up to
    /// row groups of 8192)
    #[arg(long, value_name = "N", default_value_t = crate::export::ROWS_PER_FILE,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub rows_per_file: u64,
    /// Adds to packets.parquet, after its columns, each frame's bytes as captured (`raw`,
    /// BINARY), its link type (`link_type`) and the 64-bit hash of its host pair that
    /// --shard splits by (`host_pair`, null without addresses): what a job that replays
    /// the frames per host pair needs (docs/parquet.md)
    #[arg(long)]
    pub raw: bool,
    #[command(flatten)]
    pub checking: CheckingArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub scale: ScaleArgs,
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    #[command(flatten)]
    pub common: Common,
}

impl ExportArgs {
    pub fn run(self) -> Outcome {
        let Self {
            input,
            taps,
            output,
            rows_per_file,
            raw,
            checking,
            model,
            scale,
            filter,
            common,
        } = self;
        let opts = checking.options(&model);
        let input = input.several(taps)?;
        let (cfg, threads, filter) = (common.config(), common.threads(), filter.filter());
        let scope = stats::Scope { shard: scale.shard, threads, filter: filter.as_ref() };
        let packets = crate::export::PacketFiles { rows_per_file, raw };
        let w = crate::export::run(&input, &output, &cfg, opts, scope, packets)?;
        let parts = match w.packet_files {
            1 => String::new(),
            n => format!(" (packets.parquet and {} parts)", n - 1),
        };
        output::note(format_args!(
            "wrote {}: {} packets{parts}, {} connections, {} findings",
            output.display(),
            w.packets,
            w.connections,
            w.findings
        ));
        Ok(ExitCode::from(u8::from(w.errors > 0)))
    }
}
