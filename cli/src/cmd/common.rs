//! The argument groups several commands share, and their conversions to the library's
//! options: the input (`InputArg`), the connection model (`ModelArgs`: the checker's
//! `Options` and `ModelOptions` are built from it here, nowhere else), the checker's view,
//! the shard, NIC counters, and the options common to every capture-reading command.

use std::path::PathBuf;

use crate::check;
use crate::input::{Input, InputError, Source, TapSetup, Window};
use clap::Args;
use roce_conformance::ModelOptions;
use roce_parser::Config;

#[derive(Args, Clone)]
pub struct Common {
    /// UDP destination port that carries RoCEv2; repeatable, each one decoded as RoCEv2
    /// (tshark: -d udp.port==N,infiniband). Default 4791; `--port 4792` alone replaces it,
    /// `--port 4791 --port 4792` decodes both
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub port: Vec<u16>,
    /// Accepted for tshark habits (tshark -n): addresses are never resolved
    #[arg(short = 'n')]
    pub no_resolve: bool,
    /// Threads to use: the capture is read ahead, and its checksums verified, on one while
    /// the others work; check splits it by host pair over N checkers (docs/threads.md); 1 is
    /// the single-thread path. Default: every core. At most 4 x the cores (more is capped,
    /// with a note)
    #[arg(long, value_name = "N")]
    pub threads: Option<crate::threads::Threads>,
}

impl Common {
    pub fn config(&self) -> Config {
        crate::tshark::config_for_ports(&self.port)
    }

    /// `--threads`, by default every core.
    pub fn threads(&self) -> crate::threads::Threads {
        self.threads.map_or_else(crate::threads::Threads::all_cores, capped)
    }
}

/// `--threads N` capped at `Threads::max` (4 x the cores), with a note on stderr when it was.
pub fn capped(n: crate::threads::Threads) -> crate::threads::Threads {
    let (n, note) = n.capped();
    if let Some(note) = note {
        crate::output::note(format!("roce-inspect: note: {note}"));
    }
    n
}

/// The capture: positional, or `-r FILE` as tshark and tcpdump read one.
#[derive(Args, Clone)]
#[group(skip)]
#[cfg_attr(not(feature = "live"), command(group(input_group(&["file", "read"]))))]
#[cfg_attr(feature = "live", command(group(input_group(&["file", "read", "interface"]))))]
pub struct InputArg {
    /// Capture file (pcap or pcapng, optionally gzip-compressed), or '-' for stdin. Every
    /// command but gen takes several (or a quoted glob, 'taps/*.pcap'): the captures of
    /// several taps, read as one in time order, each packet's copies counted once
    /// (docs/taps.md)
    #[arg(id = "file", value_name = "FILE")]
    pub file: Vec<PathBuf>,
    /// The capture file, as tshark -r / tcpdump -r (the same as the positional FILE)
    #[arg(short = 'r', long = "read", value_name = "FILE")]
    pub read: Option<PathBuf>,
    /// Capture from a network interface through libpcap, as tshark -i / tcpdump -i, until
    /// Ctrl-C (SIGINT), SIGTERM or -a; the report is printed when it ends
    #[cfg(feature = "live")]
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Option<String>,
    #[cfg(feature = "live")]
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub window: WindowArgs,
}

/// How several captures are read as one (crate::input::TapSetup), for the commands
/// that take several files.
#[derive(Args, Clone)]
#[group(skip)]
pub struct TapArgs {
    /// Several files: a packet seen at another tap within this time of its first sighting is
    /// a copy, counted once (ns, us, ms or s; default 1ms)
    #[arg(long, value_name = "TIME", value_parser = crate::taps::parse_window)]
    pub tap_window: Option<u64>,
    /// Several files: FILE's clock offset, added to its timestamps (FILE its place from 1 or
    /// its name; e.g. 2=-1.5ms); repeatable. Without it each file's offset against the first
    /// is estimated from the copies they share
    #[arg(long, value_name = "FILE=TIME", value_parser = crate::taps::parse_offset)]
    pub tap_offset: Vec<(String, i64)>,
}

/// `-c` and `--frames`: the frames a command reads (crate::tshark::Window).
#[derive(Args, Clone)]
#[group(skip)]
pub struct WindowArgs {
    /// Only these frames (1-based, as Wireshark): a list of numbers and ranges,
    /// `1-10,15,20-` ("A-" runs to the end); reading stops after the last one. stats, check,
    /// export, report and graph see only these frames, as if the capture held no others
    #[arg(long, value_parser = crate::tshark::FrameSelection::parse, value_name = "LIST")]
    pub frames: Option<crate::tshark::FrameSelection>,
    /// Read at most N frames, then stop (tshark -c)
    #[arg(short = 'c', value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
}

/// One of the inputs, exactly one.
pub fn input_group(args: &[&'static str]) -> clap::ArgGroup {
    clap::ArgGroup::new("input").required(true).multiple(false).args(args)
}

/// How `-i` captures (tshark's -f and -a).
#[cfg(feature = "live")]
#[derive(Args, Clone)]
#[group(skip)]
pub struct LiveArgs {
    /// Capture filter in libpcap's BPF syntax, as tcpdump's (with -i), e.g. 'udp port 4791'
    #[arg(short = 'f', value_name = "BPF", conflicts_with_all = ["file", "read"])]
    pub capture_filter: Option<String>,
    /// Stop the capture (with -i): duration:SECS or packets:N, repeatable (the first met
    /// stops it), as tshark -a
    #[arg(short = 'a', value_name = "COND", conflicts_with_all = ["file", "read"],
          value_parser = crate::live::parse_autostop)]
    pub autostop: Vec<crate::live::Autostop>,
}

impl InputArg {
    pub fn input(self) -> Input {
        let window = Window { frames: self.window.frames, count: self.window.count };
        #[cfg(feature = "live")]
        if let Some(interface) = self.interface {
            use crate::live::{Autostop, LiveOptions};
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
            return Input { source: Source::Interface(o), window, taps: TapSetup::default() };
        }
        let taps = TapSetup::default();
        let mut files = self.file;
        files.extend(self.read);
        let source = match files.len() {
            0 => Source::File(PathBuf::new()),
            1 => Source::File(files.remove(0)),
            _ => Source::Files(files),
        };
        Input { source, window, taps }
    }

    /// [`InputArg::input`] for a command that reads several files as one: quoted glob
    /// patterns expanded (crate::taps::expand; a pattern matching one file is that
    /// file), and `taps` for how their copies are matched.
    pub fn several(mut self, taps: TapArgs) -> Result<Input, InputError> {
        let globbed =
            self.file.iter().any(|p| !p.exists() && p.to_string_lossy().contains(['*', '?', '[']));
        if globbed {
            self.file = crate::taps::expand(std::mem::take(&mut self.file))?;
        }
        let mut input = self.input();
        if let Some(w) = taps.tap_window {
            input.taps.window_ns = w;
        }
        input.taps.offsets = taps.tap_offset;
        Ok(input)
    }
}

/// How `stats` and `check` build connections (the one connection model both share).
#[derive(Args, Clone, Copy)]
pub struct ModelArgs {
    /// PMTU in bytes when no CM exchange was captured (otherwise inferred)
    #[arg(long, value_parser = parse_pmtu)]
    pub pmtu: Option<u32>,
    /// Flows tracked at once; beyond, a connection not used recently is evicted (and
    /// reported), and reports list this many connections (the busiest)
    #[arg(long, default_value_t = default_max_flows(), value_parser = parse_at_least_one)]
    pub max_flows: usize,
    /// Silence, in milliseconds, after which traffic on the same QPNs at unrelated PSNs
    /// starting a new message is a new connection (QPNs reused without a captured CM exchange)
    #[arg(long = "reconnect-idle", default_value = "1000", value_parser = parse_millis, value_name = "MS")]
    pub reconnect_idle_ns: u64,
}

/// How `check` shows its text report.
#[derive(Args, Clone, Copy)]
pub struct ViewArgs {
    /// Findings listed per rule (the first ones); the rest are counted in a line. 0 lists
    /// all. Text only: --format json has every finding
    #[arg(long, default_value_t = check::DEFAULT_MAX_PER_RULE, value_name = "N")]
    pub max_per_rule: usize,
    /// The first line and the per-rule summary only; the exit status says the rest
    #[arg(short, long)]
    pub quiet: bool,
    /// Colour severities: auto (a terminal, and NO_COLOR not set), always, never
    #[arg(long, value_enum, default_value_t, value_name = "WHEN")]
    pub color: crate::style::ColorWhen,
    /// Live (tshark -l): print each finding as soon as it is proven, flushed, then the report
    /// without them. On by itself when the capture is read from stdin ('-'), as from
    /// `tcpdump -U -w - | roce-inspect check -`
    #[arg(short = 'l')]
    pub live: bool,
}

impl ViewArgs {
    pub fn view(&self, input: &Input) -> check::TextView {
        check::TextView {
            max_per_rule: (self.max_per_rule > 0).then_some(self.max_per_rule),
            quiet: self.quiet,
            paint: crate::style::Paint::for_stdout(self.color),
            live: self.live || input.is_stream(),
        }
    }
}

/// Splitting the work (docs/parquet.md).
#[derive(Args, Clone, Copy)]
pub struct ScaleArgs {
    /// Process only the host pairs of shard K of N (0 <= K < N): the stable hash of the
    /// unordered IP pair modulo N, the same on every machine (docs/parquet.md); frames with
    /// no address go to shard 0
    #[arg(long, default_value = "0/1", value_name = "K/N")]
    pub shard: roce_conformance::Shard,
}

/// `stats --nic-counters BEFORE AFTER --nic-host IP` (docs/nic-counters.md).
#[derive(Args, Clone)]
pub struct NicArgs {
    /// Two snapshots of a host's RDMA hardware counters (`name value` or `name: value` per
    /// line: hw_counters, ethtool -S), reconciled with what the capture shows for that host
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"], requires = "nic_host")]
    pub nic_counters: Option<Vec<PathBuf>>,
    /// The host whose counters these are (its IP address)
    #[arg(long, value_name = "IP", requires = "nic_counters")]
    pub nic_host: Option<std::net::IpAddr>,
}

impl NicArgs {
    /// Both snapshots read (an error names the file and line), when the options are given.
    pub fn input(&self) -> Result<Option<crate::nic_counters::NicInput>, InputError> {
        match (&self.nic_counters, self.nic_host) {
            (Some(files), Some(host)) if files.len() == 2 => {
                crate::nic_counters::NicInput::read(&files[0], &files[1], host)
                    .map(Some)
                    .map_err(InputError)
            }
            _ => Ok(None),
        }
    }
}

/// The checker's options `report` and `graph` take (a subset of `check`'s).
#[derive(Args, Clone, Copy)]
pub struct CheckingArgs {
    /// The capture is lossless: PSN gaps are requester faults instead of capture loss
    #[arg(long)]
    pub assume_complete: bool,
}

impl CheckingArgs {
    /// The checker's options of `export`, `report` and `graph`.
    pub fn options(&self, model: &ModelArgs) -> roce_conformance::Options {
        roce_conformance::Options { assume_complete: self.assume_complete, ..model.options() }
    }
}

impl ModelArgs {
    /// The connection model's options (`stats`; the checker's are `options`).
    pub fn model(&self) -> roce_conformance::ModelOptions {
        roce_conformance::ModelOptions {
            max_flows: self.max_flows,
            pmtu: self.pmtu,
            reconnect_idle_ns: self.reconnect_idle_ns,
        }
    }

    /// The checker's options with this connection model, the others at their defaults: what
    /// every command that checks starts from (`check`, `export`, `report`, `graph`).
    pub fn options(&self) -> roce_conformance::Options {
        let ModelOptions { max_flows, pmtu, reconnect_idle_ns } = self.model();
        roce_conformance::Options { max_flows, pmtu, reconnect_idle_ns, ..Default::default() }
    }
}

/// `--max-flows` when not given: the checker's own default, so that the number is written
/// in one place (roce_conformance::Options).
fn default_max_flows() -> usize {
    roce_conformance::Options::default().max_flows
}

pub fn parse_millis(s: &str) -> Result<u64, String> {
    let ms: u64 = s.parse().map_err(|e| format!("'{s}' is not a number of milliseconds: {e}"))?;
    ms.checked_mul(1_000_000).ok_or_else(|| {
        format!(
            "{ms} milliseconds do not fit in the checker's nanosecond clock (at most {} milliseconds)",
            u64::MAX / 1_000_000
        )
    })
}

/// A count that must be at least 1.
pub fn parse_at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("'{s}' is not a number: {e}")),
    }
}

pub fn parse_pmtu(s: &str) -> Result<u32, String> {
    // The same check as an expect file's options.pmtu.
    s.parse::<u32>()
        .ok()
        .and_then(|m| check::valid_pmtu(m).ok())
        .ok_or_else(|| format!("'{s}' is not a PMTU: use 256, 512, 1024, 2048 or 4096"))
}

/// How the checker judges: the capture's completeness, its timing windows and the QPs'
/// configured values (`check` and `diagnose`).
#[derive(Args, Clone, Copy)]
pub struct JudgingArgs {
    /// The capture is lossless (mirror port with counters checked, generated traffic):
    /// PSN gaps are requester faults instead of capture loss
    #[arg(long)]
    pub assume_complete: bool,
    /// How long a response may precede its request in the capture, in microseconds
    #[arg(long = "reorder-window", default_value = "500", value_parser = parse_micros, value_name = "US")]
    pub reorder_window_ns: u64,
    /// Silence after which a retransmission counts as a timeout retry, in microseconds
    #[arg(long = "retx-timeout", default_value = "1000", value_parser = parse_micros, value_name = "US")]
    pub retx_timeout_ns: u64,
    /// The local ACK timeout exponent T the QPs were configured with (ibv_modify_qp
    /// `timeout`, perftest -u, NCCL_IB_TIMEOUT): a timeout retransmission earlier than
    /// 4.096 us x 2^T (less 10 %) is REQ-QP-TIMEOUT (docs/timing.md)
    #[arg(long = "qp-timeout", value_name = "T", value_parser = clap::value_parser!(u8).range(1..=31))]
    pub qp_timeout: Option<u8>,
    /// The notification point's configured CNP pacing, DURATION[,qp|pair|dest] (e.g.
    /// 4us, 50us,pair): two CNPs to one QP (default, mlx5's per-QP pacing), from one IP to
    /// another (pair) or to one IP (dest) closer than DURATION are CC-CNP-PACING
    /// (docs/congestion.md)
    #[arg(long = "cnp-min-interval", value_name = "DURATION[,SCOPE]", value_parser = roce_conformance::CnpPacing::parse)]
    pub cnp_min_interval: Option<roce_conformance::CnpPacing>,
    /// The responder QPs' configured minimum RNR NAK timer code (ibv_modify_qp
    /// min_rnr_timer, 0..31, IBTA table 45): an RNR NAK advertising another code is
    /// RSP-RNR-TIMER; a retry before the advertised timer is REQ-RNR-WAIT anyway
    #[arg(long = "rnr-timer", value_name = "CODE", value_parser = clap::value_parser!(u8).range(0..=31))]
    pub rnr_timer: Option<u8>,
    /// The DSCP (0..63) the hosts were configured to send RoCE traffic at (traffic class,
    /// RDMA-CM ToS, mlx5 trust dscp): a RoCEv2 packet other than a CNP (requests, responses,
    /// CM MADs) at another DSCP is NET-DSCP
    #[arg(long = "expect-dscp", value_name = "D", value_parser = clap::value_parser!(u8).range(0..=63))]
    pub expect_dscp: Option<u8>,
    /// The DSCP (0..63) the notification points were configured to send CNPs at (mlx5
    /// cnp_dscp, 48 by default): a CNP at another DSCP is NET-CNP-DSCP
    #[arg(long = "expect-cnp-dscp", value_name = "D", value_parser = clap::value_parser!(u8).range(0..=63))]
    pub expect_cnp_dscp: Option<u8>,
    /// The 802.1Q priority (PCP, 0..7) RoCE frames were configured to carry, the PFC
    /// priority: a frame whose outermost VLAN tag has another PCP, or an untagged frame, is
    /// NET-PCP
    #[arg(long = "expect-pcp", value_name = "P", value_parser = clap::value_parser!(u8).range(0..=7))]
    pub expect_pcp: Option<u8>,
}

impl JudgingArgs {
    /// The checker's options: these and the connection model's (`ModelArgs::options`),
    /// every rule on.
    pub fn options(&self, model: &ModelArgs) -> roce_conformance::Options {
        roce_conformance::Options {
            assume_complete: self.assume_complete,
            reorder_window_ns: self.reorder_window_ns,
            retx_timeout_ns: self.retx_timeout_ns,
            qp_timeout: self.qp_timeout,
            cnp_min_interval: self.cnp_min_interval,
            rnr_timer: self.rnr_timer,
            expect_dscp: self.expect_dscp,
            expect_cnp_dscp: self.expect_cnp_dscp,
            expect_pcp: self.expect_pcp,
            ..model.options()
        }
    }
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
