//! roce-inspect: dissect, count and check RoCE traffic in pcap / pcapng captures.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use roce_inspect::input::InputError;
use roce_inspect::{check, dissect, gen, output, report, stats};
use roce_parser::Config;

#[derive(Parser)]
#[command(
    name = "roce-inspect",
    version = roce_inspect::version(),
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
        2 when the input could not be read, the output could not be written or the command\n\
        line was wrong. A closed pipe (`| head`) ends the output quietly."
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

/// How `stats` and `check` build connections (the one connection model both share).
#[derive(Args, Clone, Copy)]
struct ModelArgs {
    /// PMTU in bytes when no CM exchange was captured (otherwise inferred)
    #[arg(long, value_parser = parse_pmtu)]
    pmtu: Option<u32>,
    /// Flows tracked at once; beyond, a connection not used recently is evicted (and
    /// reported), and reports list this many connections (the busiest)
    #[arg(long, default_value_t = 65536, value_parser = parse_at_least_one)]
    max_flows: usize,
    /// Silence, in milliseconds, after which traffic on the same QPNs at unrelated PSNs
    /// starting a new message is a new connection (QPNs reused without a captured CM exchange)
    #[arg(long = "reconnect-idle", default_value = "1000", value_parser = parse_millis, value_name = "MS")]
    reconnect_idle_ns: u64,
}

/// Splitting the work (docs/parquet.md).
#[derive(Args, Clone, Copy)]
struct ScaleArgs {
    /// Process only the host pairs of shard K of N (0 <= K < N): the stable hash of the
    /// unordered IP pair modulo N, the same on every machine (docs/parquet.md); frames with
    /// no address go to shard 0
    #[arg(long, default_value = "0/1", value_name = "K/N")]
    shard: roce_conformance::Shard,
}

/// The checker's options `report` and `graph` take (a subset of `check`'s).
#[derive(Args, Clone, Copy)]
struct CheckArgs {
    /// The capture is lossless: PSN gaps are requester faults instead of capture loss
    #[arg(long)]
    assume_complete: bool,
}

impl CheckArgs {
    fn options(&self, model: &ModelArgs) -> roce_conformance::Options {
        let m = model.model();
        roce_conformance::Options {
            assume_complete: self.assume_complete,
            pmtu: m.pmtu,
            max_flows: m.max_flows,
            reconnect_idle_ns: m.reconnect_idle_ns,
            ..Default::default()
        }
    }
}

impl ModelArgs {
    fn model(&self) -> roce_conformance::ModelOptions {
        roce_conformance::ModelOptions {
            max_flows: self.max_flows,
            pmtu: self.pmtu,
            reconnect_idle_ns: self.reconnect_idle_ns,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Show every frame: one line each (frame, time, addresses, opcode, DestQP, PSN, flags,
    /// payload length, ICRC status, problems), the full field tree (-V), or JSON.
    ///
    /// Non-RoCE frames are listed too, so frame numbers match Wireshark's. JSON field names
    /// are a stable contract.
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
        #[arg(long, value_parser = parse_qpn, value_name = "QPN")]
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
        model: ModelArgs,
        #[command(flatten)]
        scale: ScaleArgs,
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
        /// Output format of the report. Not with --expect or --write-expect, which print a
        /// diff or a line of text: `--format json` with either is an error (exit 2)
        #[arg(long, value_enum, default_value_t = check::Format::Text)]
        format: check::Format,
        /// The capture is lossless (mirror port with counters checked, generated traffic):
        /// PSN gaps are requester faults instead of capture loss
        #[arg(long)]
        assume_complete: bool,
        /// How long a response may precede its request in the capture, in microseconds
        #[arg(long = "reorder-window", default_value = "500", value_parser = parse_micros, value_name = "US")]
        reorder_window_ns: u64,
        /// Silence after which a retransmission counts as a timeout retry, in microseconds
        #[arg(long = "retx-timeout", default_value = "1000", value_parser = parse_micros, value_name = "US")]
        retx_timeout_ns: u64,
        #[command(flatten)]
        model: ModelArgs,
        /// Turn a rule off (repeatable); `roce-inspect rules` lists them
        #[arg(long, value_name = "RULE")]
        disable: Vec<String>,
        /// Turn only these rules on (repeatable)
        #[arg(long, value_name = "RULE")]
        enable: Vec<String>,
        /// Compare the findings with a reviewed expect file: exit 0 when they are exactly
        /// the expected ones, 1 with a diff otherwise (options in the file apply). A file
        /// that is not valid (JSON error, with its line and column; an unknown key or rule
        /// ID; a PMTU --pmtu would refuse; larger than 64 MiB) is an error, exit 2
        #[arg(long, value_name = "FILE", conflicts_with = "write_expect")]
        expect: Option<PathBuf>,
        /// Write the findings as an expect file, to review and commit. Refuses to write over
        /// the capture being checked or over any pcap, pcapng or gzip file (exit 2)
        #[arg(long, value_name = "FILE")]
        write_expect: Option<PathBuf>,
        /// Also write the capture as pcapng to FILE with each finding as a packet comment
        /// on every frame it cites (Wireshark: Expert Info > Comments, `frame.comment`);
        /// everything else unchanged (bytes, lengths, interfaces, timestamps)
        #[arg(long, value_name = "FILE", conflicts_with_all = ["expect", "write_expect"])]
        annotate: Option<PathBuf>,
        #[command(flatten)]
        scale: ScaleArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Write the capture as Parquet for DuckDB, Spark or pandas: DIR/packets.parquet (one
    /// row per frame), DIR/connections.parquet and DIR/findings.parquet (the checker's
    /// report); docs/parquet.md. Exit status as `check`: 1 when an error-severity finding
    #[cfg(feature = "parquet")]
    Export {
        /// Capture file (pcap or pcapng, optionally gzip-compressed), or '-' for stdin
        file: PathBuf,
        /// Output directory (created when missing; the three files in it are overwritten)
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        #[command(flatten)]
        checking: CheckArgs,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        scale: ScaleArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Write an HTML report: summary, findings, and per connection a time-sequence graph
    /// (PSN over time: new and retransmitted requests, the ACK line, NAKs, RNR and fatal
    /// NAKs, READ and atomic spans, ECN-CE, CNPs, CM, findings) with goodput; docs/report.md
    ///
    /// The page is one file with no network access (inline SVG, a Content-Security-Policy);
    /// open it in a browser. Exit status as `check`: 1 when an error-severity finding.
    Report {
        /// Capture file (pcap or pcapng, optionally gzip-compressed); not stdin (read twice)
        file: PathBuf,
        /// Output HTML file
        #[arg(short, long)]
        output: PathBuf,
        /// Connections graphed (the busiest); the others are listed with their counters
        #[arg(long, default_value_t = roce_inspect::report::DEFAULT_GRAPHS, value_name = "N")]
        graphs: usize,
        #[command(flatten)]
        checking: CheckArgs,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Write the time-sequence graph of one connection as SVG (for a bug report)
    Graph {
        /// Capture file (pcap or pcapng, optionally gzip-compressed); not stdin (read twice)
        file: PathBuf,
        /// The connection, as `stats` and `check` name it ("10.0.0.1 QP 0x000011 <-> 10.0.0.2
        /// QP 0x000012"), or a part of that name that only it has (e.g. "0x000011")
        #[arg(long, value_name = "NAME")]
        conn: String,
        /// Output SVG file
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        checking: CheckArgs,
        #[command(flatten)]
        model: ModelArgs,
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
    /// Print a shell completion script, generated from this command line's definition.
    ///
    /// bash: `roce-inspect completions bash > ~/.local/share/bash-completion/completions/roce-inspect`;
    /// zsh: `roce-inspect completions zsh > ~/.zfunc/_roce-inspect` (with ~/.zfunc in $fpath);
    /// fish: `roce-inspect completions fish > ~/.config/fish/completions/roce-inspect.fish`.
    Completions {
        /// The shell to complete for
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), generated from this command line's definition:
    /// `roce-inspect man > roce-inspect.1`, or `roce-inspect man dissect` for
    /// roce-inspect-dissect(1).
    Man {
        /// A subcommand, for its own page
        subcommand: Option<String>,
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
        /// Number of RC connections (at least 1)
        #[arg(long, default_value_t = 64, value_parser = parse_at_least_one)]
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

/// A QPN: 24 bits, decimal or 0x-hex.
fn parse_qpn(s: &str) -> Result<u32, String> {
    let n = parse_u32(s)?;
    if n > 0xff_ffff {
        return Err(format!("QPN {s} does not fit in 24 bits (at most 0xffffff = 16777215)"));
    }
    Ok(n)
}

/// Microseconds, as the checker's nanoseconds: what does not fit is refused, not wrapped.
fn parse_micros(s: &str) -> Result<u64, String> {
    let us: u64 = s.parse().map_err(|e| format!("'{s}' is not a number of microseconds: {e}"))?;
    us.checked_mul(1000).ok_or_else(|| {
        format!(
            "{us} microseconds do not fit in the checker's nanosecond clock (at most {} microseconds)",
            u64::MAX / 1000
        )
    })
}

fn parse_millis(s: &str) -> Result<u64, String> {
    let ms: u64 = s.parse().map_err(|e| format!("'{s}' is not a number of milliseconds: {e}"))?;
    ms.checked_mul(1_000_000).ok_or_else(|| {
        format!(
            "{ms} milliseconds do not fit in the checker's nanosecond clock (at most {} milliseconds)",
            u64::MAX / 1_000_000
        )
    })
}

/// A count that must be at least 1.
fn parse_at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("'{s}' is not a number: {e}")),
    }
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
    // The same check as an expect file's options.pmtu.
    s.parse::<u32>()
        .ok()
        .and_then(|m| check::valid_pmtu(m).ok())
        .ok_or_else(|| format!("'{s}' is not a PMTU: use 256, 512, 1024, 2048 or 4096"))
}

fn parse_range(s: &str) -> Result<std::ops::RangeInclusive<u64>, String> {
    let bad = || format!("'{s}' is not a frame range like 10-20, 10- or 7");
    let (a, b): (u64, u64) = match s.split_once('-') {
        Some((a, "")) => (a.parse().map_err(|_| bad())?, u64::MAX),
        Some((a, b)) => (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?),
        None => {
            let n = s.parse().map_err(|_| bad())?;
            (n, n)
        }
    };
    if a == 0 {
        return Err(format!("'{s}': frames are numbered from 1, as in Wireshark"));
    }
    if a > b {
        return Err(format!("'{s}' is an empty range: frame {a} comes after frame {b}"));
    }
    Ok(a..=b)
}

fn create(path: &std::path::Path) -> Result<std::io::BufWriter<std::fs::File>, InputError> {
    let file = std::fs::File::create(path)
        .map_err(|e| InputError(format!("{}: cannot create: {e}", path.display())))?;
    Ok(std::io::BufWriter::new(file))
}

fn writing(path: &std::path::Path) -> impl Fn(std::io::Error) -> InputError + '_ {
    move |e| InputError(format!("writing {}: {e}", path.display()))
}

/// `completions SHELL`: generated into memory (clap_complete panics on a failed write), then
/// written out.
fn completions(shell: clap_complete::Shell) -> Result<(), InputError> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "roce-inspect", &mut script);
    output::stdout(&script)
}

/// `man [SUBCOMMAND]`: roce-inspect(1), or roce-inspect-SUBCOMMAND(1) with its options.
fn man(subcommand: Option<&str>) -> Result<(), InputError> {
    let cmd = Cli::command();
    let page = match subcommand {
        None => cmd,
        Some(name) => {
            let Some(sub) = cmd.find_subcommand(name) else {
                return Err(InputError(format!("no subcommand '{name}' to document")));
            };
            let name = sub.get_name();
            sub.clone()
                .display_name(format!("roce-inspect-{name}"))
                .bin_name(format!("roce-inspect {name}"))
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .source(format!("roce-inspect {}", roce_inspect::version()))
        .manual("roce-inspect manual")
        .render(&mut roff)
        .map_err(|e| InputError(format!("rendering the manual page: {e}")))?;
    output::stdout(&roff)
}

/// Help and version (stdout: a failed write is an error, exit 2, a closed pipe is not) and
/// command-line errors (stderr, exit 2).
fn clap_exit(e: &clap::Error) -> ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    let printed = e.print();
    if e.use_stderr() {
        return ExitCode::from(code);
    }
    match output::written(printed.and_then(|()| std::io::stdout().flush())) {
        Ok(()) => ExitCode::from(code),
        Err(err) => {
            output::error(err);
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
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
        Command::Stats { file, format, model, scale, common } => {
            stats::run(&file, format, &common.config(), model.model(), scale.shard)
        }
        #[cfg(feature = "parquet")]
        Command::Export { file, output, checking, model, scale, common } => {
            let opts = checking.options(&model);
            let res =
                roce_inspect::export::run(&file, &output, &common.config(), opts, scale.shard);
            return match res {
                Ok(w) => {
                    eprintln!(
                        "wrote {}: {} packets, {} connections, {} findings",
                        output.display(),
                        w.packets,
                        w.connections,
                        w.findings
                    );
                    ExitCode::from(u8::from(w.errors > 0))
                }
                Err(e) => {
                    output::error(e);
                    ExitCode::from(2)
                }
            };
        }
        Command::Check {
            file,
            format,
            assume_complete,
            reorder_window_ns,
            retx_timeout_ns,
            model,
            disable,
            enable,
            expect,
            write_expect,
            annotate,
            scale,
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
                output::error(e);
                return ExitCode::from(2);
            }
            let m = model.model();
            let opts = roce_conformance::Options {
                assume_complete,
                pmtu: m.pmtu,
                reorder_window_ns,
                retx_timeout_ns,
                max_flows: m.max_flows,
                reconnect_idle_ns: m.reconnect_idle_ns,
                rules,
                ..Default::default()
            };
            if format == check::Format::Json && (expect.is_some() || write_expect.is_some()) {
                let with = if expect.is_some() { "--expect" } else { "--write-expect" };
                output::error(format!(
                    "--format json cannot be used with {with}: its output is a diff (or a \
                     line naming the file written), not the JSON report; run `check --format \
                     json` on its own for that"
                ));
                return ExitCode::from(2);
            }
            if !scale.shard.is_all() && (expect.is_some() || write_expect.is_some()) {
                output::error(
                    "--shard cannot be used with --expect or --write-expect: an expect file \
                     holds the findings of the whole capture",
                );
                return ExitCode::from(2);
            }
            let cfg = common.config();
            let res = match (expect, write_expect) {
                (Some(e), _) => check::run_expect(&file, &e, &cfg, opts),
                (None, Some(w)) => check::run_write_expect(&file, &w, &cfg, opts),
                (None, None) => {
                    check::run(&file, format, &cfg, opts, annotate.as_deref(), scale.shard)
                }
            };
            return match res {
                Ok(code) => ExitCode::from(code),
                Err(e) => {
                    output::error(e);
                    ExitCode::from(2)
                }
            };
        }
        Command::Report { file, output, graphs, checking, model, common } => {
            let opts = checking.options(&model);
            return match report::run_report(&file, &output, &common.config(), opts, graphs) {
                Ok(done) => {
                    eprintln!(
                        "wrote {}: {} bytes, {} connection(s) graphed, {} finding(s)",
                        output.display(),
                        done.bytes,
                        done.graphs,
                        done.findings
                    );
                    ExitCode::from(u8::from(done.errors > 0))
                }
                Err(e) => {
                    output::error(e);
                    ExitCode::from(2)
                }
            };
        }
        Command::Graph { file, conn, output, checking, model, common } => {
            report::run_graph(&file, &output, &common.config(), checking.options(&model), &conn)
        }
        Command::Rules => output::stdout(check::list_rules().as_bytes()),
        Command::Gen { scenario: GenScenario::Suite { output } } => check::write_suite(&output),
        Command::Gen { scenario: GenScenario::Sample { output, seed } } => create(&output)
            .and_then(|w| gen::scenarios::sample(seed).write_pcap(w).map_err(writing(&output))),
        Command::Gen { scenario: GenScenario::Bench { output, frames, connections, seed } } => {
            // Streamed: frames are written as they are generated, memory stays flat.
            create(&output).and_then(|w| {
                gen::scenarios::bench(w, seed, frames, connections).map_err(writing(&output))
            })
        }
        Command::Completions { shell } => completions(shell),
        Command::Man { subcommand } => man(subcommand.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            output::error(e);
            ExitCode::from(2)
        }
    }
}
