//! `dissect`: every frame, as text, a field tree, JSON or tshark's fields.

use std::process::ExitCode;

use crate::dissect;
use crate::input::InputError;
use crate::output;
use clap::Args;

use super::common::{Common, InputArg, TapArgs};
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Dissect` (cmd/mod.rs).
#[derive(Args)]
pub struct DissectArgs {
    #[command(flatten)]
    pub input: InputArg,
    #[command(flatten)]
    pub taps: TapArgs,
    /// Print the full field tree of each frame, every extended header decoded
    #[arg(short = 'V', long)]
    pub verbose: bool,
    /// Output format (-T as tshark's: text, json, jsonl, fields)
    #[arg(long, short = 'T', value_enum, default_value_t = dissect::Format::Text)]
    pub format: dissect::Format,
    /// With -T fields: a field to print, repeatable, in order (the names of -Y and of the
    /// JSON: frame, ip.src, bth.dest_qp, bth.psn, aeth.syndrome, icrc.status, ...)
    #[arg(short = 'e', value_name = "FIELD", value_parser = dissect::fields::Column::parse)]
    pub field: Vec<dissect::fields::Column>,
    /// With -T fields, as tshark -E: header=y|n, separator=/t|/s|C, aggregator=/s|C,
    /// quote=d|s|n
    #[arg(short = 'E', value_name = "OPT=VALUE", value_parser = dissect::fields::FieldOption::parse)]
    pub field_option: Vec<dissect::fields::FieldOption>,
    /// Only RoCE frames to this DestQP (or from this UD source QP); decimal or 0x-hex
    #[arg(long, value_parser = parse_qpn, value_name = "QPN")]
    pub qp: Option<u32>,
    /// Only RoCE frames with this opcode: a name (RC_SEND_ONLY, CNP, ...) or a number
    #[arg(long, value_parser = parse_opcode, value_name = "OPCODE")]
    pub opcode: Option<u8>,
    /// Colour bad ICRCs: auto (a terminal, and NO_COLOR not set), always, never
    #[arg(long, value_enum, default_value_t, value_name = "WHEN")]
    pub color: crate::style::ColorWhen,
    /// Time column: r (since the first frame), a (time of day, UTC), ad (date and time,
    /// UTC), e (since the epoch), d (since the previous frame); as tshark -t
    #[arg(short = 't', value_enum, default_value_t, value_name = "FORMAT")]
    pub time: crate::tshark::TimeFormat,
    /// After each frame its bytes in hex and ASCII, as tshark -x
    #[arg(short = 'x')]
    pub hex: bool,
    /// Flush after every frame (tshark -l); on by itself when the capture comes from
    /// stdin ('-') and stdout is a pipe (`tcpdump -U -w - | roce-inspect dissect - | grep`)
    #[arg(short = 'l')]
    pub live: bool,
    /// Save the frames selected to FILE instead of printing them, byte for byte with their
    /// timestamps (tshark -w): pcap if it ends in .pcap, pcapng if .pcapng, '-' the
    /// input's format to stdout; the capture is read once (a file, stdin or -i)
    #[arg(short = 'w', value_name = "FILE")]
    pub write: Option<std::path::PathBuf>,
    /// With -w FILE, print the frames too (tshark -P)
    #[arg(short = 'P', requires = "write")]
    pub print: bool,
    #[command(flatten)]
    pub filter: crate::filter::FilterArgs,
    #[command(flatten)]
    pub common: Common,
}

impl DissectArgs {
    pub fn run(self) -> Outcome {
        let Self {
            input,
            taps,
            verbose,
            format,
            field,
            field_option,
            qp,
            opcode,
            color,
            time,
            hex,
            live,
            write,
            print,
            filter,
            common,
        } = self;
        let mut input = input.several(taps)?;
        if print && write.as_deref() == Some(std::path::Path::new("-")) {
            return Err(InputError(
                "-P prints to stdout, where -w - writes the capture: give -w a file".into(),
            ));
        }
        let fields = match (format == dissect::Format::Fields, field.is_empty()) {
            (true, false) => Some(dissect::fields::Fields::new(field, &field_option)),
            (true, true) => {
                return Err(InputError(
                    "-T fields needs at least one -e FIELD (e.g. -e frame -e bth.psn)".into(),
                ));
            }
            (false, empty) if !empty || !field_option.is_empty() => {
                return Err(InputError("-e and -E go with -T fields".into()));
            }
            (false, _) => None,
        };
        // dissect reads the frames before its window too (-t r, -t d count them).
        let window = std::mem::take(&mut input.window);
        let opts = dissect::Options {
            format,
            verbose,
            filter: dissect::Filter { qp, opcode, window, expr: filter.filter() },
            config: common.config(),
            paint: crate::style::Paint::for_stdout(color),
            line_flush: live || (input.is_stream() && output::stdout_is_pipe()),
            time,
            hex,
            write,
            print,
            threads: common.threads(),
            fields,
        };
        dissect::run(&input, &opts).map(|()| ExitCode::SUCCESS)
    }
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("'{s}' is not a number: {e}"))
}

/// A QPN: 24 bits, decimal or 0x-hex.
fn parse_qpn(s: &str) -> Result<u32, String> {
    let n = parse_u32(s)?;
    if n > 0xff_ffff {
        return Err(format!("QPN {s} does not fit in 24 bits (at most 0xffffff = 16777215)"));
    }
    Ok(n)
}

fn parse_opcode(s: &str) -> Result<u8, String> {
    if let Ok(n) = parse_u32(s) {
        return u8::try_from(n).map_err(|_| format!("opcode {n} is above 255"));
    }
    let want = s.to_ascii_uppercase();
    roce_parser::OPCODES
        .iter()
        .find(|i| i.name == want)
        .map(|i| i.opcode)
        .ok_or_else(|| format!("unknown opcode name '{s}' (try RC_SEND_ONLY, RC_ACKNOWLEDGE, UD_SEND_ONLY, CNP, or a number)"))
}
