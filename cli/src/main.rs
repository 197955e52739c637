//! roce-inspect: dissect, count and check RoCE traffic in pcap / pcapng captures.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use roce_inspect::input::{Input, InputError, Source, Window};
use roce_inspect::outfile::{Dash, OutFile};
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
        roce-inspect dissect -V --frames 10-20,25 -r capture.pcapng\n  \
        roce-inspect dissect --format jsonl --qp 0x152 --opcode RC_ACKNOWLEDGE capture.pcap\n  \
        roce-inspect stats capture.pcap.gz\n  \
        tcpdump -w - -i eth0 udp port 4791 | roce-inspect stats -\n\n\
        As in tshark:\n  \
        -r FILE                      tshark -r FILE (the positional FILE works too)\n  \
        -c N (any command)           tshark -c N\n  \
        dissect --frames 1-10,15,20- tshark -Y 'frame.number in {1..10 15 20..}'\n  \
        --port 4791 --port 4792      tshark -d udp.port==4792,infiniband (both decoded)\n  \
        -n                           tshark -n (accepted: names are never resolved)\n  \
        dissect -V                   tshark -V\n  \
        dissect -T fields -e bth.psn tshark -T fields -e infiniband.bth.psn (-E as tshark's)\n  \
        dissect -x                   tshark -x (hex and ASCII of each frame)\n  \
        dissect -t r|a|ad|e|d        tshark -t (a and ad in UTC: tshark -t u|ud)\n  \
        check -l, dissect -l         tshark -l (flush per finding / frame)\n  \
        dissect --qp 0x11 -w out.pcap  tshark -Y 'infiniband.bth.destqp == 0x11' -w out.pcap\n  \
        dissect -P -w out.pcap       tshark -P -w out.pcap (print while saving)\n  \
        -Y 'bth.dest_qp == 0x11'     tshark -Y 'infiniband.bth.destqp == 0x11' (docs/filter.md)\n  \
        --conn A:QPN-B:QPN           both directions of one QP pair\n  \
        -i eth0 -f 'udp port 4791'   tshark -i eth0 -f 'udp port 4791' (feature live)\n  \
        -a duration:10 -a packets:N  tshark -a duration:10 -a packets:N (with -i)\n\n\
        Exit status: 0 on success (warnings about damaged input go to stderr),\n\
        2 when the input could not be read, the output could not be written or the command\n\
        line was wrong. A closed pipe (`| head`) ends the output quietly."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Common {
    /// UDP destination port that carries RoCEv2; repeatable, each one decoded as RoCEv2
    /// (tshark: -d udp.port==N,infiniband). Default 4791; `--port 4792` alone replaces it,
    /// `--port 4791 --port 4792` decodes both
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    port: Vec<u16>,
    /// Accepted for tshark habits (tshark -n): addresses are never resolved
    #[arg(short = 'n')]
    no_resolve: bool,
    /// Threads to use: the capture is read ahead on one while the others work, check splits
    /// it by host pair over N checkers (docs/threads.md); 1 is the single-thread path.
    /// Default: every core for dissect, check and export, 1 for the others. At most 4 x the
    /// cores (more is capped, with a note). report and graph accept it and run on one thread
    #[arg(long, value_name = "N")]
    threads: Option<roce_inspect::threads::Threads>,
}

impl Common {
    fn config(&self) -> Config {
        roce_inspect::tshark::config_for_ports(&self.port)
    }

    /// `--threads`, by default every core (`dissect`, `check`, `export`).
    fn threads(&self) -> roce_inspect::threads::Threads {
        self.threads.map_or_else(roce_inspect::threads::Threads::all_cores, capped)
    }

    /// `--threads`, by default one: for `stats` reading ahead measured no faster
    /// than one thread (BENCHMARKS.md, "Threads"), so it is only on request.
    fn threads_or_one(&self) -> roce_inspect::threads::Threads {
        self.threads.map_or(roce_inspect::threads::Threads::ONE, capped)
    }
}

/// `--threads N` capped at `Threads::max` (4 x the cores), with a note on stderr when it was.
fn capped(n: roce_inspect::threads::Threads) -> roce_inspect::threads::Threads {
    let (n, note) = n.capped();
    if let Some(note) = note {
        roce_inspect::output::note(format!("roce-inspect: note: {note}"));
    }
    n
}

/// The capture: positional, or `-r FILE` as tshark and tcpdump read one.
#[derive(Args, Clone)]
#[group(skip)]
#[cfg_attr(not(feature = "live"), command(group(input_group(&["file", "read"]))))]
#[cfg_attr(feature = "live", command(group(input_group(&["file", "read", "interface"]))))]
struct InputArg {
    /// Capture file (pcap or pcapng, optionally gzip-compressed), or '-' for stdin
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// The capture file, as tshark -r / tcpdump -r (the same as the positional FILE)
    #[arg(short = 'r', long = "read", value_name = "FILE")]
    read: Option<PathBuf>,
    /// Capture from a network interface through libpcap, as tshark -i / tcpdump -i, until
    /// Ctrl-C (SIGINT), SIGTERM or -a; the report is printed when it ends
    #[cfg(feature = "live")]
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    interface: Option<String>,
    #[cfg(feature = "live")]
    #[command(flatten)]
    live: LiveArgs,
    #[command(flatten)]
    window: WindowArgs,
}

/// `-c` and `--frames`: the frames a command reads (roce_inspect::tshark::Window).
#[derive(Args, Clone)]
#[group(skip)]
struct WindowArgs {
    /// Only these frames (1-based, as Wireshark): a list of numbers and ranges,
    /// `1-10,15,20-` ("A-" runs to the end); reading stops after the last one. stats, check,
    /// export, report and graph see only these frames, as if the capture held no others
    #[arg(long, value_parser = roce_inspect::tshark::FrameSelection::parse, value_name = "LIST")]
    frames: Option<roce_inspect::tshark::FrameSelection>,
    /// Read at most N frames, then stop (tshark -c)
    #[arg(short = 'c', value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
}

/// One of the inputs, exactly one.
fn input_group(args: &[&'static str]) -> clap::ArgGroup {
    clap::ArgGroup::new("input").required(true).multiple(false).args(args)
}

/// How `-i` captures (tshark's -f and -a).
#[cfg(feature = "live")]
#[derive(Args, Clone)]
#[group(skip)]
struct LiveArgs {
    /// Capture filter in libpcap's BPF syntax, as tcpdump's (with -i), e.g. 'udp port 4791'
    #[arg(short = 'f', value_name = "BPF", conflicts_with_all = ["file", "read"])]
    capture_filter: Option<String>,
    /// Stop the capture (with -i): duration:SECS or packets:N, repeatable (the first met
    /// stops it), as tshark -a
    #[arg(short = 'a', value_name = "COND", conflicts_with_all = ["file", "read"],
          value_parser = roce_inspect::live::parse_autostop)]
    autostop: Vec<roce_inspect::live::Autostop>,
}

impl InputArg {
    fn input(self) -> Input {
        let window = Window { frames: self.window.frames, count: self.window.count };
        #[cfg(feature = "live")]
        if let Some(interface) = self.interface {
            use roce_inspect::live::{Autostop, LiveOptions};
            let mut o = LiveOptions {
                interface,
                capture_filter: self.live.capture_filter,
                duration: None,
                packets: None,
            };
            for a in self.live.autostop {
                match a {
                    Autostop::Duration(d) => o.duration = Some(o.duration.map_or(d, |x| x.min(d))),
                    Autostop::Packets(n) => o.packets = Some(o.packets.map_or(n, |x| x.min(n))),
                }
            }
            return Input { source: Source::Interface(o), window };
        }
        Input { source: Source::File(self.file.or(self.read).unwrap_or_default()), window }
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

/// How `check` shows its text report.
#[derive(Args, Clone, Copy)]
struct ViewArgs {
    /// Findings listed per rule (the first ones); the rest are counted in a line. 0 lists
    /// all. Text only: --format json has every finding
    #[arg(long, default_value_t = check::DEFAULT_MAX_PER_RULE, value_name = "N")]
    max_per_rule: usize,
    /// The first line and the per-rule summary only; the exit status says the rest
    #[arg(short, long)]
    quiet: bool,
    /// Colour severities: auto (a terminal, and NO_COLOR not set), always, never
    #[arg(long, value_enum, default_value_t, value_name = "WHEN")]
    color: roce_inspect::style::ColorWhen,
    /// Live (tshark -l): print each finding as soon as it is proven, flushed, then the report
    /// without them. On by itself when the capture is read from stdin ('-'), as from
    /// `tcpdump -U -w - | roce-inspect check -`
    #[arg(short = 'l')]
    live: bool,
}

impl ViewArgs {
    fn view(&self, input: &Input) -> check::TextView {
        check::TextView {
            max_per_rule: (self.max_per_rule > 0).then_some(self.max_per_rule),
            quiet: self.quiet,
            paint: roce_inspect::style::Paint::for_stdout(self.color),
            live: self.live || input.is_stream(),
        }
    }
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

/// `stats --nic-counters BEFORE AFTER --nic-host IP` (docs/nic-counters.md).
#[derive(Args, Clone)]
struct NicArgs {
    /// Two snapshots of a host's RDMA hardware counters (`name value` or `name: value` per
    /// line: hw_counters, ethtool -S), reconciled with what the capture shows for that host
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"], requires = "nic_host")]
    nic_counters: Option<Vec<PathBuf>>,
    /// The host whose counters these are (its IP address)
    #[arg(long, value_name = "IP", requires = "nic_counters")]
    nic_host: Option<std::net::IpAddr>,
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
        #[command(flatten)]
        input: InputArg,
        /// Print the full field tree of each frame, every extended header decoded
        #[arg(short = 'V', long)]
        verbose: bool,
        /// Output format (-T as tshark's: text, json, jsonl, fields)
        #[arg(long, short = 'T', value_enum, default_value_t = dissect::Format::Text)]
        format: dissect::Format,
        /// With -T fields: a field to print, repeatable, in order (the names of -Y and of the
        /// JSON: frame, ip.src, bth.dest_qp, bth.psn, aeth.syndrome, icrc.status, ...)
        #[arg(short = 'e', value_name = "FIELD", value_parser = dissect::fields::Column::parse)]
        field: Vec<dissect::fields::Column>,
        /// With -T fields, as tshark -E: header=y|n, separator=/t|/s|C, aggregator=/s|C,
        /// quote=d|s|n
        #[arg(short = 'E', value_name = "OPT=VALUE", value_parser = dissect::fields::FieldOption::parse)]
        field_option: Vec<dissect::fields::FieldOption>,
        /// Only RoCE frames to this DestQP (or from this UD source QP); decimal or 0x-hex
        #[arg(long, value_parser = parse_qpn, value_name = "QPN")]
        qp: Option<u32>,
        /// Only RoCE frames with this opcode: a name (RC_SEND_ONLY, CNP, ...) or a number
        #[arg(long, value_parser = parse_opcode, value_name = "OPCODE")]
        opcode: Option<u8>,
        /// Colour bad ICRCs: auto (a terminal, and NO_COLOR not set), always, never
        #[arg(long, value_enum, default_value_t, value_name = "WHEN")]
        color: roce_inspect::style::ColorWhen,
        /// Time column: r (since the first frame), a (time of day, UTC), ad (date and time,
        /// UTC), e (since the epoch), d (since the previous frame); as tshark -t
        #[arg(short = 't', value_enum, default_value_t, value_name = "FORMAT")]
        time: roce_inspect::tshark::TimeFormat,
        /// After each frame its bytes in hex and ASCII, as tshark -x
        #[arg(short = 'x')]
        hex: bool,
        /// Flush after every frame (tshark -l); on by itself when the capture comes from
        /// stdin ('-') and stdout is a pipe (`tcpdump -U -w - | roce-inspect dissect - | grep`)
        #[arg(short = 'l')]
        live: bool,
        /// Save the frames selected to FILE instead of printing them, byte for byte with their
        /// timestamps (tshark -w): pcap if it ends in .pcap, pcapng if .pcapng, '-' the
        /// input's format to stdout; the capture is read once (a file, stdin or -i)
        #[arg(short = 'w', value_name = "FILE")]
        write: Option<std::path::PathBuf>,
        /// With -w FILE, print the frames too (tshark -P)
        #[arg(short = 'P', requires = "write")]
        print: bool,
        #[command(flatten)]
        filter: roce_inspect::filter::FilterArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Summarise a capture: totals, ICRC counts, the opcode histogram, and per connection
    /// packets, bytes, messages, ACKs, NAKs by kind, RNR NAKs, CNPs, ECN-CE marks,
    /// retransmitted PSNs, duration and goodput; connections opened by CM with their outcome.
    Stats {
        #[command(flatten)]
        input: InputArg,
        /// Output format
        #[arg(long, value_enum, default_value_t = stats::Format::Text)]
        format: stats::Format,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        scale: ScaleArgs,
        #[command(flatten)]
        nic: NicArgs,
        #[command(flatten)]
        filter: roce_inspect::filter::FilterArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Check a capture against the InfiniBand transport rules: replay it through a
    /// reference queue-pair model and report which side broke which rule, with frames.
    ///
    /// Exit status: 0 when no error-severity finding (warnings alone leave it 0), 1 when at
    /// least one, 2 when the input could not be read or the command line was wrong.
    Check {
        #[command(flatten)]
        input: InputArg,
        /// Keep reading FILE as it grows (tail -f): findings as they are proven, the report
        /// on Ctrl-C (SIGINT) or SIGTERM; a record not yet written whole is waited for. When
        /// FILE is truncated or replaced (rotated), a warning says so and the following stops
        /// there, as at Ctrl-C (the new file is not followed: run check again on it)
        #[arg(long)]
        follow: bool,
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
        /// The local ACK timeout exponent T the QPs were configured with (ibv_modify_qp
        /// `timeout`, perftest -u, NCCL_IB_TIMEOUT): a timeout retransmission earlier than
        /// 4.096 us x 2^T (less 10 %) is REQ-QP-TIMEOUT (docs/timing.md)
        #[arg(long = "qp-timeout", value_name = "T", value_parser = clap::value_parser!(u8).range(1..=31))]
        qp_timeout: Option<u8>,
        /// The notification point's configured CNP pacing, DURATION[,qp|pair|dest] (e.g.
        /// 4us, 50us,pair): two CNPs to one QP (default, mlx5's per-QP pacing), from one IP to
        /// another (pair) or to one IP (dest) closer than DURATION are CC-CNP-PACING
        /// (docs/congestion.md)
        #[arg(long = "cnp-min-interval", value_name = "DURATION[,SCOPE]", value_parser = roce_conformance::CnpPacing::parse)]
        cnp_min_interval: Option<roce_conformance::CnpPacing>,
        /// The responder QPs' configured minimum RNR NAK timer code (ibv_modify_qp
        /// min_rnr_timer, 0..31, IBTA table 45): an RNR NAK advertising another code is
        /// RSP-RNR-TIMER; a retry before the advertised timer is REQ-RNR-WAIT anyway
        #[arg(long = "rnr-timer", value_name = "CODE", value_parser = clap::value_parser!(u8).range(0..=31))]
        rnr_timer: Option<u8>,
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
        view: ViewArgs,
        #[command(flatten)]
        scale: ScaleArgs,
        #[command(flatten)]
        filter: roce_inspect::filter::FilterArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Write the capture as Parquet for DuckDB, Spark or pandas: DIR/packets.parquet (one
    /// row per frame), DIR/connections.parquet and DIR/findings.parquet (the checker's
    /// report); docs/parquet.md. Exit status as `check`: 1 when an error-severity finding
    #[cfg(feature = "parquet")]
    Export {
        #[command(flatten)]
        input: InputArg,
        /// Output directory (created when missing; the tables in it are replaced when the new
        /// ones are complete, and left as they were when the export fails)
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// The most rows of packets.parquet; the frames after them go on in
        /// packets-000001.parquet, packets-000002.parquet, ... (read them together as
        /// 'DIR/packets*.parquet'). Bounds memory on an endless capture (rounded up to
        /// row groups of 8192)
        #[arg(long, value_name = "N", default_value_t = roce_inspect::export::ROWS_PER_FILE,
              value_parser = clap::value_parser!(u64).range(1..))]
        rows_per_file: u64,
        #[command(flatten)]
        checking: CheckArgs,
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        scale: ScaleArgs,
        #[command(flatten)]
        filter: roce_inspect::filter::FilterArgs,
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
        /// (a file: not stdin, it is read twice)
        #[command(flatten)]
        input: InputArg,
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
        filter: roce_inspect::filter::FilterArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Write the time-sequence graph of one connection as SVG (for a bug report)
    Graph {
        /// (a file: not stdin, it is read twice)
        #[command(flatten)]
        input: InputArg,
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
    Rules {
        /// Output format (json: docs/json.md, "rules --format json")
        #[arg(long, value_enum, default_value_t = check::Format::Text)]
        format: check::Format,
    },
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

impl Command {
    /// The options every capture-reading command shares.
    fn common(&self) -> Option<&Common> {
        match self {
            Command::Dissect { common, .. }
            | Command::Stats { common, .. }
            | Command::Check { common, .. }
            | Command::Report { common, .. }
            | Command::Graph { common, .. } => Some(common),
            _ => None,
        }
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

/// `gen -o FILE` (`-` for stdout): the capture `write` makes, completed only when whole
/// (crate::outfile).
fn generate(
    path: &std::path::Path,
    write: impl FnOnce(&mut std::io::BufWriter<OutFile>) -> std::io::Result<()>,
) -> Result<(), InputError> {
    let mut w = std::io::BufWriter::new(OutFile::create("-o", path, &[], Dash::Stdout)?);
    write(&mut w).and_then(|()| w.flush()).map_err(|e| w.get_ref().error(e))?;
    w.into_parts().0.commit()
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
    if let Some(Err(e)) = cli.command.common().map(|c| roce_inspect::tshark::check_ports(&c.port)) {
        output::error(e);
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Dissect {
            input,
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
        } => {
            let mut input = input.input();
            if print && write.as_deref() == Some(std::path::Path::new("-")) {
                output::error("-P prints to stdout, where -w - writes the capture: give -w a file");
                return ExitCode::from(2);
            }
            let fields = match (format == dissect::Format::Fields, field.is_empty()) {
                (true, false) => Some(dissect::fields::Fields::new(field, &field_option)),
                (true, true) => {
                    output::error(
                        "-T fields needs at least one -e FIELD (e.g. -e frame -e bth.psn)",
                    );
                    return ExitCode::from(2);
                }
                (false, empty) if !empty || !field_option.is_empty() => {
                    output::error("-e and -E go with -T fields");
                    return ExitCode::from(2);
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
                paint: roce_inspect::style::Paint::for_stdout(color),
                line_flush: live || (input.is_stream() && output::stdout_is_pipe()),
                time,
                hex,
                write,
                print,
                threads: common.threads(),
                fields,
            };
            dissect::run(&input, &opts)
        }
        Command::Stats { input, format, model, scale, nic, filter, common } => {
            let nic = match (&nic.nic_counters, nic.nic_host) {
                (Some(files), Some(host)) if files.len() == 2 => {
                    roce_inspect::nic_counters::NicInput::read(&files[0], &files[1], host)
                        .map(Some)
                        .map_err(roce_inspect::input::InputError)
                }
                _ => Ok(None),
            };
            nic.and_then(|nic| {
                let cfg = common.config();
                let filter = filter.filter();
                let scope = stats::Scope {
                    shard: scale.shard,
                    threads: common.threads_or_one(),
                    filter: filter.as_ref(),
                };
                stats::run(&input.input(), format, &cfg, model.model(), nic.as_ref(), scope)
            })
        }
        #[cfg(feature = "parquet")]
        Command::Export {
            input,
            output,
            rows_per_file,
            checking,
            model,
            scale,
            filter,
            common,
        } => {
            let opts = checking.options(&model);
            let input = input.input();
            let (cfg, threads, filter) = (common.config(), common.threads(), filter.filter());
            let scope = stats::Scope { shard: scale.shard, threads, filter: filter.as_ref() };
            let res = roce_inspect::export::run(&input, &output, &cfg, opts, scope, rows_per_file);
            return match res {
                Ok(w) => {
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
                    ExitCode::from(u8::from(w.errors > 0))
                }
                Err(e) => {
                    output::error(e);
                    ExitCode::from(2)
                }
            };
        }
        Command::Check {
            input,
            follow,
            format,
            assume_complete,
            reorder_window_ns,
            retx_timeout_ns,
            qp_timeout,
            cnp_min_interval,
            rnr_timer,
            model,
            disable,
            enable,
            expect,
            write_expect,
            annotate,
            view,
            scale,
            filter,
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
                qp_timeout,
                cnp_min_interval,
                rnr_timer,
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
            let filter = filter.filter();
            let windowed = input.window.frames.is_some() || input.window.count.is_some();
            if (filter.is_some() || windowed) && (expect.is_some() || write_expect.is_some()) {
                output::error(
                    "-Y/--filter, --conn, -c and --frames cannot be used with --expect or \
                     --write-expect: an expect file holds the findings of the whole capture",
                );
                return ExitCode::from(2);
            }
            let cfg = common.config();
            let input = match (input.input(), follow) {
                (Input { source: Source::File(p), window }, true)
                    if p != std::path::Path::new("-") =>
                {
                    Input { source: Source::Follow(p), window }
                }
                (i, true) => {
                    output::error(format!(
                        "--follow reads a file as it grows: give a file, not {}",
                        if i.path().is_some() { "'-' (stdin)".into() } else { i.to_string() }
                    ));
                    return ExitCode::from(2);
                }
                (i, false) => i,
            };
            let res = match (expect, write_expect, input.path()) {
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
            };
            return match res {
                Ok(code) => ExitCode::from(code),
                Err(e) => {
                    output::error(e);
                    ExitCode::from(2)
                }
            };
        }
        Command::Report { input, output, graphs, checking, model, filter, common } => {
            let input = input.input();
            let opts = checking.options(&model);
            let (cfg, filter) = (common.config(), filter.filter());
            let reading = report::Reading { input: &input, cfg: &cfg, filter: filter.as_ref() };
            let res = report::run_report(&reading, &output, opts, graphs);
            return match res {
                Ok(done) => {
                    output::note(format_args!(
                        "wrote {}: {} bytes, {} connection(s) graphed, {} finding(s)",
                        check::shown_name(&output),
                        done.bytes,
                        done.graphs,
                        done.findings
                    ));
                    ExitCode::from(u8::from(done.errors > 0))
                }
                Err(e) => {
                    output::error(e);
                    ExitCode::from(2)
                }
            };
        }
        Command::Graph { input, conn, output, checking, model, common } => {
            let (input, cfg) = (input.input(), common.config());
            let reading = report::Reading { input: &input, cfg: &cfg, filter: None };
            report::run_graph(&reading, &output, checking.options(&model), &conn)
        }
        Command::Rules { format: check::Format::Text } => {
            output::stdout(check::list_rules().as_bytes())
        }
        Command::Rules { format: check::Format::Json } => {
            output::stdout(check::list_rules_json().as_bytes())
        }
        Command::Gen { scenario: GenScenario::Suite { output } } => check::write_suite(&output),
        Command::Gen { scenario: GenScenario::Sample { output, seed } } => {
            generate(&output, |w| gen::scenarios::sample(seed).write_pcap(w))
        }
        Command::Gen { scenario: GenScenario::Bench { output, frames, connections, seed } } => {
            // Streamed: frames are written as they are generated, memory stays flat.
            generate(&output, |w| gen::scenarios::bench(w, seed, frames, connections))
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
