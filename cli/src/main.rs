//! roce-inspect: dissect, count and check RoCE traffic in pcap / pcapng captures.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use roce_inspect::input::InputError;
use roce_inspect::{check, dissect, gen, stats};
use roce_parser::Config;

#[derive(Parser)]
#[command(
    name = "roce-inspect",
    version,
    about = "Dissect, count and check RoCEv2 / RoCEv1 traffic in pcap and pcapng captures",
    long_about = "Dissect, count and check RoCEv2 / RoCEv1 traffic in pcap and pcapng captures.\n\n\
        Reads pcap (micro- and nanosecond) and pcapng, plain or gzip-compressed, from a file or\n\
        '-' for stdin; link types Ethernet, Linux cooked (SLL, SLL2), raw IP and null/loopback.\n\
        RoCEv2 is recognised by its UDP destination port (4791, or --port), never by the source\n\
        port; RoCEv1 by EtherType 0x8915. Every ICRC is verified.",
    after_help = "Examples:\n  \
        roce-inspect dissect capture.pcap\n  \
        roce-inspect dissect -V --frames 10-20 capture.pcapng\n  \
        roce-inspect dissect --format jsonl --qp 0x152 --opcode RC_ACKNOWLEDGE capture.pcap\n  \
        roce-inspect stats capture.pcap.gz\n  \
        tcpdump -w - -i eth0 udp port 4791 | roce-inspect stats -\n\n\
        Exit status: 0 on success (warnings about damaged input go to stderr),\n\
        2 when the input could not be read or the command line was wrong."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone, Copy)]
struct Common {
    /// UDP destination port that carries RoCEv2 (labs sometimes move it from 4791)
    #[arg(long, default_value_t = roce_parser::ROCEV2_UDP_PORT, value_name = "N")]
    port: u16,
}

impl Common {
    fn config(&self) -> Config {
        Config { udp_port: self.port, ..Config::default() }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Show every frame: one line each (frame, time, addresses, opcode, DestQP, PSN, flags,
    /// payload length, ICRC status, problems), the full field tree (-V), or JSON.
    ///
    /// Non-RoCE frames are listed too, so frame numbers match Wireshark's. JSON field names
    /// are a stable contract: see DESIGN.md.
    Dissect {
        /// Capture file (pcap or pcapng, optionally gzip-compressed), or '-' for stdin
        file: PathBuf,
        /// Print the full field tree of each frame, every extended header decoded
        #[arg(short = 'V', long)]
        verbose: bool,
        /// Output format
        #[arg(long, value_enum, default_value_t = dissect::Format::Text)]
        format: dissect::Format,
        /// Only RoCE frames to this DestQP (or from this UD source QP); decimal or 0x-hex
        #[arg(long, value_parser = parse_u32, value_name = "QPN")]
        qp: Option<u32>,
        /// Only RoCE frames with this opcode: a name (RC_SEND_ONLY, CNP, ...) or a number
        #[arg(long, value_parser = parse_opcode, value_name = "OPCODE")]
        opcode: Option<u8>,
        /// Only frames numbered A to B (1-based, inclusive); "A-" runs to the end
        #[arg(long, value_parser = parse_range, value_name = "A-B")]
        frames: Option<std::ops::RangeInclusive<u64>>,
        #[command(flatten)]
        common: Common,
    },
    /// Summarise a capture: totals, ICRC counts, the opcode histogram, and per connection
    /// packets, bytes, messages, ACKs, NAKs by kind, RNR NAKs, CNPs, ECN-CE marks,
    /// retransmitted PSNs, duration and goodput; connections opened by CM with their outcome.
    Stats {
        /// Capture file (pcap or pcapng, optionally gzip-compressed), or '-' for stdin
        file: PathBuf,
        /// Output format
        #[arg(long, value_enum, default_value_t = stats::Format::Text)]
        format: stats::Format,
        #[command(flatten)]
        common: Common,
    },
    /// Check a capture against the InfiniBand transport rules: replay it through a
    /// reference queue-pair model and report which side broke which rule, with frames.
    ///
    /// Exit status: 0 when no error-severity finding (warnings alone leave it 0), 1 when at
    /// least one, 2 when the input could not be read or the command line was wrong.
    Check {
        /// Capture file (pcap or pcapng, optionally gzip-compressed), or '-' for stdin
        file: PathBuf,
        /// Output format
        #[arg(long, value_enum, default_value_t = check::Format::Text)]
        format: check::Format,
        /// The capture is lossless (mirror port with counters checked, generated traffic):
        /// PSN gaps are requester faults instead of capture loss
        #[arg(long)]
        assume_complete: bool,
        /// PMTU in bytes when no CM exchange was captured (otherwise inferred)
        #[arg(long, value_parser = parse_pmtu)]
        pmtu: Option<u32>,
        /// How long a response may precede its request in the capture, in microseconds
        #[arg(long, default_value_t = 500, value_name = "US")]
        reorder_window: u64,
        /// Silence after which a retransmission counts as a timeout retry, in microseconds
        #[arg(long, default_value_t = 1000, value_name = "US")]
        retx_timeout: u64,
        /// Flows tracked at once; the least recently used is evicted (and reported)
        #[arg(long, default_value_t = 65536)]
        max_flows: usize,
        /// Turn a rule off (repeatable); `roce-inspect rules` lists them
        #[arg(long, value_name = "RULE")]
        disable: Vec<String>,
        /// Turn only these rules on (repeatable)
        #[arg(long, value_name = "RULE")]
        enable: Vec<String>,
        /// Compare the findings with a reviewed expect file: exit 0 when they are exactly
        /// the expected ones, 1 with a diff otherwise (options in the file apply)
        #[arg(long, value_name = "FILE", conflicts_with = "write_expect")]
        expect: Option<PathBuf>,
        /// Write the findings as an expect file, to review and commit
        #[arg(long, value_name = "FILE")]
        write_expect: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// List the conformance rules: ID, severity, the side judged, what it checks, source
    Rules,
    /// Write a generated capture (nanosecond pcap) built with the roce-parser builder.
    Gen {
        #[command(subcommand)]
        scenario: GenScenario,
    },
}

#[derive(Subcommand)]
enum GenScenario {
    /// The sample of pcaps/: CM, SEND with immediate, WRITE, READ, atomic, NAK and go-back-N,
    /// RNR NAK and retry, ECN-CE with a CNP, UD, IPv6
    Sample {
        /// Output file
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// The conformance suite: for every rule a capture where it fires and clean captures,
    /// each with its .expect.json (replay with `check --expect`)
    Suite {
        /// Output directory
        #[arg(short, long)]
        output: PathBuf,
    },
    /// A large capture for benchmarks: RC WRITE / READ / SEND traffic over many connections
    Bench {
        #[arg(short, long)]
        output: PathBuf,
        /// Number of frames
        #[arg(long, default_value_t = 200_000)]
        frames: usize,
        /// Number of RC connections
        #[arg(long, default_value_t = 64)]
        connections: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("'{s}' is not a number: {e}"))
}

fn parse_opcode(s: &str) -> Result<u8, String> {
    if let Ok(n) = parse_u32(s) {
        return u8::try_from(n).map_err(|_| format!("opcode {n} is above 255"));
    }
    let want = s.to_ascii_uppercase();
    roce_parser::opcode::OPCODES
        .iter()
        .find(|i| i.name == want)
        .map(|i| i.opcode)
        .ok_or_else(|| format!("unknown opcode name '{s}' (try RC_SEND_ONLY, RC_ACKNOWLEDGE, UD_SEND_ONLY, CNP, or a number)"))
}

fn parse_pmtu(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(m @ (256 | 512 | 1024 | 2048 | 4096)) => Ok(m),
        _ => Err(format!("'{s}' is not a PMTU: use 256, 512, 1024, 2048 or 4096")),
    }
}

fn parse_range(s: &str) -> Result<std::ops::RangeInclusive<u64>, String> {
    let bad = || format!("'{s}' is not a frame range like 10-20, 10- or 7");
    let (a, b) = match s.split_once('-') {
        Some((a, "")) => (a.parse().map_err(|_| bad())?, u64::MAX),
        Some((a, b)) => (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?),
        None => {
            let n = s.parse().map_err(|_| bad())?;
            (n, n)
        }
    };
    Ok(a..=b)
}

fn write_trace(trace: &gen::Trace, path: &std::path::Path) -> Result<(), InputError> {
    let file = std::fs::File::create(path)
        .map_err(|e| InputError(format!("{}: cannot create: {e}", path.display())))?;
    trace
        .write_pcap(std::io::BufWriter::new(file))
        .map_err(|e| InputError(format!("{}: {e}", path.display())))
}

/// `gen suite` is handled before the single-capture scenarios.
fn unreachable_suite() -> (gen::Trace, PathBuf) {
    (gen::Trace::new(), PathBuf::new())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dissect { file, verbose, format, qp, opcode, frames, common } => {
            let opts = dissect::Options {
                format,
                verbose,
                filter: dissect::Filter { qp, opcode, frames },
                config: common.config(),
            };
            dissect::run(&file, &opts)
        }
        Command::Stats { file, format, common } => stats::run(&file, format, &common.config()),
        Command::Check {
            file,
            format,
            assume_complete,
            pmtu,
            reorder_window,
            retx_timeout,
            max_flows,
            disable,
            enable,
            expect,
            write_expect,
            common,
        } => {
            let mut rules = roce_conformance::RuleSet::default();
            if !enable.is_empty() {
                rules.disable_all();
            }
            let set = enable
                .iter()
                .try_for_each(|r| rules.enable(r))
                .and_then(|()| disable.iter().try_for_each(|r| rules.disable(r)));
            if let Err(e) = set {
                eprintln!("roce-inspect: error: {e}");
                return ExitCode::from(2);
            }
            let opts = roce_conformance::Options {
                assume_complete,
                pmtu,
                reorder_window_ns: reorder_window * 1000,
                retx_timeout_ns: retx_timeout * 1000,
                max_flows: max_flows.max(1),
                rules,
                ..Default::default()
            };
            let cfg = common.config();
            let res = match (expect, write_expect) {
                (Some(e), _) => check::run_expect(&file, &e, &cfg, opts),
                (None, Some(w)) => check::run_write_expect(&file, &w, &cfg, opts),
                (None, None) => check::run(&file, format, &cfg, opts),
            };
            return match res {
                Ok(code) => ExitCode::from(code),
                Err(e) => {
                    eprintln!("roce-inspect: error: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Command::Rules => {
            print!("{}", check::list_rules());
            Ok(())
        }
        Command::Gen { scenario: GenScenario::Suite { output } } => check::write_suite(&output),
        Command::Gen { scenario } => {
            let (trace, output) = match scenario {
                GenScenario::Suite { .. } => unreachable_suite(),
                GenScenario::Sample { output, seed } => (gen::scenarios::sample(seed), output),
                GenScenario::Bench { output, frames, connections, seed } => {
                    (gen::scenarios::bench(seed, frames, connections), output)
                }
            };
            write_trace(&trace, &output)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roce-inspect: error: {e}");
            ExitCode::from(2)
        }
    }
}
