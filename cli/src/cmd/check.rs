//! `check`: the conformance check, its report, `--expect` and `--write-expect`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::check;
use crate::input::{Input, InputError, Source};
use clap::Args;

use super::common::{Common, InputArg, JudgingArgs, ModelArgs, ScaleArgs, TapArgs, ViewArgs};
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Check` (cmd/mod.rs).
#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArg,
    #[command(flatten)]
    pub taps: TapArgs,
    /// Keep reading FILE as it grows (tail -f): findings as they are proven, the report
    /// on Ctrl-C (SIGINT) or SIGTERM; a record not yet written whole is waited for. When
    /// FILE is truncated or replaced (rotated), a warning says so and the following stops
    /// there, as at Ctrl-C (the new file is not followed: run check again on it)
    #[arg(long)]
    pub follow: bool,
    /// Output format of the report. Not with --expect or --write-expect, which print a
    /// diff or a line of text: `--format json` with either is an error (exit 2)
    #[arg(long, value_enum, default_value_t = check::Format::Text)]
    pub format: check::Format,
    #[command(flatten)]
    pub judging: JudgingArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Turn a rule off (repeatable); `roce-inspect rules` lists them
    #[arg(long, value_name = "RULE")]
    pub disable: Vec<String>,
    /// Turn only these rules on (repeatable)
    #[arg(long, value_name = "RULE")]
    pub enable: Vec<String>,
    /// Compare the findings with a reviewed expect file: exit 0 when they are exactly
    /// the expected ones, 1 with a diff otherwise (options in the file apply). A file
    /// that is not valid (JSON error, with its line and column; an unknown key or rule
    /// ID; a PMTU --pmtu would refuse; larger than 64 MiB) is an error, exit 2
    #[arg(long, value_name = "FILE", conflicts_with = "write_expect")]
    pub expect: Option<PathBuf>,
    /// Write the findings as an expect file, to review and commit. Refuses to write over
    /// the capture being checked or over any pcap, pcapng or gzip file (exit 2)
    #[arg(long, value_name = "FILE")]
    pub write_expect: Option<PathBuf>,
    /// Also write the capture as pcapng to FILE with each finding as a packet comment
    /// on every frame it cites (Wireshark: Expert Info > Comments, `frame.comment`);
    /// everything else unchanged (bytes, lengths, interfaces, timestamps)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["expect", "write_expect"])]
    pub annotate: Option<PathBuf>,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub scale: ScaleArgs,
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    #[command(flatten)]
    pub common: Common,
}

impl CheckArgs {
    /// The checker's options: the connection model's (`ModelArgs::options`), the timings,
    /// the configured QP values and the rules turned on.
    fn options(&self) -> Result<roce_conformance::Options, InputError> {
        let mut rules = roce_conformance::RuleSet::default();
        if !self.enable.is_empty() {
            rules.disable_all();
        }
        self.enable
            .iter()
            .try_for_each(|r| rules.enable(r))
            .and_then(|()| self.disable.iter().try_for_each(|r| rules.disable(r)))
            .map_err(InputError)?;
        Ok(roce_conformance::Options { rules, ..self.judging.options(&self.model) })
    }

    pub fn run(self) -> Outcome {
        let opts = self.options()?;
        let Self {
            input,
            taps,
            follow,
            format,
            expect,
            write_expect,
            annotate,
            view,
            scale,
            filter,
            common,
            ..
        } = self;
        if format == check::Format::Json && (expect.is_some() || write_expect.is_some()) {
            let with = if expect.is_some() { "--expect" } else { "--write-expect" };
            return Err(InputError(format!(
                "--format json cannot be used with {with}: its output is a diff (or a \
                 line naming the file written), not the JSON report; run `check --format \
                 json` on its own for that"
            )));
        }
        if !scale.shard.is_all() && (expect.is_some() || write_expect.is_some()) {
            return Err(InputError(
                "--shard cannot be used with --expect or --write-expect: an expect file \
                 holds the findings of the whole capture"
                    .into(),
            ));
        }
        let filter = filter.filter();
        let windowed = input.window.frames.is_some() || input.window.count.is_some();
        if (filter.is_some() || windowed) && (expect.is_some() || write_expect.is_some()) {
            return Err(InputError(
                "-Y/--filter, --conn, -c and --frames cannot be used with --expect or \
                 --write-expect: an expect file holds the findings of the whole capture"
                    .into(),
            ));
        }
        let cfg = common.config();
        let input = match (input.several(taps)?, follow) {
            (Input { source: Source::File(p), window, taps }, true)
                if p != std::path::Path::new("-") =>
            {
                Input { source: Source::Follow(p), window, taps }
            }
            (i, true) => {
                return Err(InputError(format!(
                    "--follow reads a file as it grows: give a file, not {}",
                    if i.path().is_some() { "'-' (stdin)".into() } else { i.to_string() }
                )));
            }
            (i, false) => i,
        };
        let code = match (expect, write_expect, input.path()) {
            (Some(e), _, Some(file)) => check::run_expect(file, &e, &cfg, opts),
            (None, Some(w), Some(file)) => check::run_write_expect(file, &w, &cfg, opts),
            (Some(_), _, None) | (None, Some(_), None) => Err(InputError(format!(
                "--expect and --write-expect compare a capture file's findings: give a \
                 file, not {input}"
            ))),
            (None, None, _) => {
                let how = check::Output {
                    format,
                    view: view.view(&input),
                    annotate: annotate.as_deref(),
                    shard: scale.shard,
                    threads: common.threads(),
                    filter: filter.as_ref(),
                };
                check::run(&input, &cfg, opts, &how)
            }
        }?;
        Ok(ExitCode::from(code))
    }
}
