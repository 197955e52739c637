//! The frame loop every command shares: open the capture, hand each frame's packet to the
//! command, show progress on a terminal, and turn capture damage into warnings (frames read
//! before it are kept; the first 20 of each kind printed, the rest counted) or, when nothing
//! could be read, into exit code 2.

use std::fmt;
use std::fs::File;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use roce_conformance::Shard;
use roce_parser::{parse_ethernet_into, parse_ethertype_payload, Config, Packet};

use roce_capture::{Capture, Frame, L2Error, L2Start, LinkType, Warnings};

pub use crate::tshark::Window;

/// What a command reads: where its frames come from ([`Source`]), and which of them it
/// reads (`-c`, `--frames`: [`Window`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub source: Source,
    /// The frames outside the window are as if the capture did not hold them (`stats`,
    /// `check`, `export`, `report`, `graph`; `dissect` keeps its window in its filter).
    pub window: Window,
}

/// Where frames come from: a capture file (`-` for stdin) or, with the `live` feature, a
/// network interface (`-i IFACE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A capture file, or `-` for stdin.
    File(PathBuf),
    /// A capture file still being written (`check --follow`): read until SIGINT or SIGTERM,
    /// waiting at its end for more.
    Follow(PathBuf),
    /// A network interface, captured through libpcap until `-a` or SIGINT stops it.
    #[cfg(feature = "live")]
    Interface(crate::live::LiveOptions),
}

impl Input {
    /// Every frame of `source`.
    pub fn new(source: Source) -> Input {
        Input { source, window: Window::default() }
    }

    /// The capture file, if the input is one (`-` included).
    pub fn path(&self) -> Option<&Path> {
        match &self.source {
            Source::File(p) => Some(p),
            Source::Follow(_) => None,
            #[cfg(feature = "live")]
            Source::Interface(_) => None,
        }
    }

    /// The file for a command that reads its input twice (`check --annotate`, `report`),
    /// or why it cannot: `what` names the option.
    pub fn twice(&self, what: &str) -> Result<&Path, InputError> {
        match self.path() {
            Some(p) if p != Path::new("-") => Ok(p),
            _ => Err(InputError(format!(
                "{what} reads the capture a second time: give a file, not {}",
                match &self.source {
                    Source::File(_) => "'-' (stdin)".to_string(),
                    Source::Follow(_) => "one followed as it grows (--follow)".to_string(),
                    #[cfg(feature = "live")]
                    Source::Interface(_) => format!("a live interface ({self})"),
                }
            ))),
        }
    }

    /// Whether frames arrive as they happen (stdin, an interface): read once, and the
    /// output is flushed as it is made.
    pub fn is_stream(&self) -> bool {
        self.path().is_none_or(|p| p == Path::new("-"))
    }

    /// Opens the capture. For an interface, the libpcap capture starts now, on its own
    /// thread, and its frames reach the returned reader as a pcap stream (one reader for
    /// files and interfaces: the same damage checks and frame numbering).
    pub fn open(&self) -> Result<Capture, InputError> {
        match &self.source {
            Source::File(p) => roce_capture::open(p).map_err(|e| InputError(e.to_string())),
            Source::Follow(p) => crate::follow::open(p),
            #[cfg(feature = "live")]
            Source::Interface(o) => crate::live::start(o),
        }
    }

    /// [`Input::open`], with a copy of every byte the capture reads kept for a second reader
    /// ([`crate::tap`]): a capture read once, stdin and interfaces included, and its records
    /// copied byte for byte (`dissect -w`).
    pub fn open_tapped(&self) -> Result<(Capture, crate::tap::Tap), InputError> {
        let (name, raw, total): (String, Box<dyn Read + Send>, Option<u64>) = match &self.source {
            Source::File(p) if p == Path::new("-") => {
                ("-".into(), Box::new(std::io::stdin()), None)
            }
            Source::File(p) => {
                let name = p.display().to_string();
                let file = File::open(p).map_err(|e| InputError(format!("{name}: {e}")))?;
                let meta = file.metadata().map_err(|e| InputError(format!("{name}: {e}")))?;
                (name, Box::new(file), meta.is_file().then_some(meta.len()))
            }
            Source::Follow(p) => {
                let (name, r) = crate::follow::stream(p)?;
                (name, Box::new(r), None)
            }
            #[cfg(feature = "live")]
            Source::Interface(o) => {
                let (name, r) = crate::live::stream(o)?;
                (name, Box::new(r), None)
            }
        };
        let (tee, tap) = crate::tap::tee(raw);
        let cap = Capture::from_reader_with_len(&name, tee, total)
            .map_err(|e| InputError(e.to_string()))?;
        Ok((cap, tap))
    }
}

impl From<&Path> for Input {
    fn from(p: &Path) -> Input {
        Input::new(Source::File(p.to_path_buf()))
    }
}

/// The file's name as given, or `interface NAME`: the first word of reports.
impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::File(p) | Source::Follow(p) => write!(f, "{}", p.display()),
            #[cfg(feature = "live")]
            Source::Interface(o) => write!(f, "interface {}", o.interface),
        }
    }
}

/// A frame and what the parser made of it.
pub struct Decoded<'a> {
    pub frame: Frame<'a>,
    /// `Err` when no network layer could be decoded from the frame, with the reason.
    pub packet: Result<Packet<'a>, Undecoded>,
}

/// Why a frame was not decoded, typed (and allocation-free: a capture of a link type the
/// parser cannot read has this on every frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undecoded {
    /// roce-capture found no network layer: an unsupported link type, a frame shorter than
    /// its link header, an unknown null/loopback address family or raw IP version.
    Link(L2Error),
    /// The frame is shorter than an Ethernet header.
    Ethernet(roce_parser::Error),
    /// After a link header without Ethernet (Linux cooked SLL/SLL2, raw IP, null/loopback)
    /// the parser found no network layer: the header names an EtherType other than IPv4,
    /// IPv6 and RoCEv1 (`stop` is `None`), or the layer it names is cut short or malformed
    /// (`stop`, with its offset counted from the start of the frame).
    Network { link_type: LinkType, ethertype: u16, stop: Option<roce_parser::Error> },
}

impl fmt::Display for Undecoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undecoded::Link(e) => write!(f, "{e}"),
            Undecoded::Ethernet(e) => write!(f, "{e}"),
            Undecoded::Network { link_type, ethertype, stop: None } => write!(
                f,
                "{} header names EtherType 0x{ethertype:04x}, which is not IPv4, IPv6 or RoCEv1",
                link_type.name()
            ),
            Undecoded::Network { link_type, ethertype, stop: Some(e) } => {
                write!(f, "{} header names EtherType 0x{ethertype:04x}, but {e}", link_type.name())
            }
        }
    }
}

impl std::error::Error for Undecoded {}

/// [`Undecoded::reason`] of a frame whose link type is not supported.
pub const UNSUPPORTED_LINK_TYPE: &str = "unsupported link type";

impl Undecoded {
    /// The kind of reason, a short stable phrase (the key of [`UndecodedGroup`]).
    pub fn reason(&self) -> &'static str {
        match self {
            Undecoded::Link(L2Error::LinkType(_)) => UNSUPPORTED_LINK_TYPE,
            Undecoded::Link(L2Error::Truncated { .. }) => "shorter than its link header",
            Undecoded::Link(L2Error::AddressFamily { .. }) => "unknown address family",
            Undecoded::Link(L2Error::IpVersion { .. }) => "IP version neither 4 nor 6",
            Undecoded::Link(_) => "link header not decoded",
            Undecoded::Ethernet(_) => "shorter than an Ethernet header",
            Undecoded::Network { stop: None, .. } => "EtherType not IPv4, IPv6 or RoCEv1",
            Undecoded::Network { stop: Some(_), .. } => "network layer cut short or malformed",
        }
    }

    /// Whether the reason is the link layer's (roce-capture could not hand the frame to the
    /// parser): a warning on stderr, unlike frames of other protocols on a supported link.
    pub fn is_link(&self) -> bool {
        matches!(self, Undecoded::Link(_))
    }
}

/// Frames not decoded for one reason on one link type: counted, with the first one's
/// message (for the warning and the JSON outputs of `stats` and `check`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct UndecodedGroup {
    pub reason: &'static str,
    pub link_type: u32,
    pub link_type_name: &'static str,
    pub frames: u64,
    pub first_frame: u64,
    /// The first frame's reason in full.
    pub message: String,
    #[serde(skip)]
    link: bool,
}

impl fmt::Display for UndecodedGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reason == UNSUPPORTED_LINK_TYPE {
            // The message names the link type and why it is not read.
            return write!(f, "{} frame(s) not decoded: {}", self.frames, self.message);
        }
        write!(
            f,
            "{} frame(s) of link type {} ({}) not decoded, {} (first: frame {}: {})",
            self.frames,
            self.link_type,
            self.link_type_name,
            self.reason,
            self.first_frame,
            self.message
        )
    }
}

/// Counts a frame that was not decoded into its group (allocating only for a new group).
pub(crate) fn count_undecoded(
    groups: &mut Vec<UndecodedGroup>,
    frame: &Frame<'_>,
    why: &Undecoded,
) {
    let reason = why.reason();
    let code = frame.link_type.code();
    match groups.iter_mut().find(|g| g.reason == reason && g.link_type == code) {
        Some(g) => g.frames += 1,
        None => groups.push(UndecodedGroup {
            reason,
            link_type: code,
            link_type_name: frame.link_type.name(),
            frames: 1,
            first_frame: frame.number,
            message: why.to_string(),
            link: why.is_link(),
        }),
    }
}

/// One warning per group of frames roce-capture could not hand to the parser (an
/// unsupported link type, link headers cut short), not one per frame.
pub fn warn_undecoded(groups: &[UndecodedGroup]) {
    for g in groups.iter().filter(|g| g.link) {
        warn(g);
    }
}

/// Decodes one frame with the parser, starting where its link type says.
pub fn decode<'a>(frame: Frame<'a>, cfg: &Config) -> Decoded<'a> {
    let mut d = Decoded { frame, packet: Ok(Packet::default()) };
    decode_into(&mut d, cfg);
    d
}

/// `decode` in place: the packet is parsed straight into `d.packet` (a `Packet` is about
/// 500 bytes; building it elsewhere and moving it here cost a copy per frame).
pub(crate) fn decode_into(d: &mut Decoded<'_>, cfg: &Config) {
    match d.frame.l2() {
        L2Start::Ethernet(bytes) => {
            if let Ok(p) = &mut d.packet {
                if let Err(e) = parse_ethernet_into(bytes, cfg, p) {
                    d.packet = Err(Undecoded::Ethernet(e));
                }
            }
        }
        L2Start::Network { ethertype, data } => {
            let p = parse_ethertype_payload(ethertype, data, cfg);
            d.packet = if p.ip.is_some() || p.roce.is_some() {
                Ok(p)
            } else {
                // The parser's offsets count from `data`, after the link header.
                let header_len = d.frame.data.len().saturating_sub(data.len());
                let stop = p.stop.map(|e| roce_parser::Error {
                    offset: e.offset.saturating_add(header_len),
                    ..e
                });
                Err(Undecoded::Network { link_type: d.frame.link_type, ethertype, stop })
            };
        }
        L2Start::Unsupported(why) => d.packet = Err(Undecoded::Link(why)),
    }
}

/// How reading ended.
#[derive(Debug, Default)]
pub struct ReadSummary {
    pub frames: u64,
    /// Damage and oddities found after some frames were read (already printed to stderr as
    /// warnings): the first `Warnings::PER_KIND` of each kind, then one "... N more" line per
    /// kind, so a file with a fault in every block cannot flood the output or the memory.
    pub warnings: Vec<String>,
    /// Frames not decoded, grouped by reason and link type, in order of first appearance.
    pub undecoded: Vec<UndecodedGroup>,
}

impl ReadSummary {
    /// The summary as shard `shard` reports it (`--shard K/N`). Frames not decoded have no
    /// host pair and belong to shard 0 ([`Shard::owns`]), so shard 0 lists them all and the
    /// other shards none: the shards' `undecoded` lists add up to the single run's. Capture
    /// warnings describe the file, which every shard reads whole: each shard keeps them.
    pub fn of_shard(mut self, shard: Shard) -> ReadSummary {
        if shard.index() != 0 {
            self.undecoded.clear();
        }
        self
    }
}

/// Why a command could not read its input (exit code 2).
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads every frame of `input` ("-" for stdin) and calls `f` with it, decoded. Damage after
/// the first frame is reported on stderr and reading goes on where the format allows; an
/// unreadable file or damage before any frame is an `InputError`.
pub fn for_each_frame(
    input: &Input,
    cfg: &Config,
    f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    for_each_frame_until(input, cfg, None, f)
}

/// [`for_each_frame`] that stops reading after frame number `last` (`dissect --frames 1-10`,
/// `-c 10`): the rest of the capture is not read at all.
pub fn for_each_frame_until(
    input: &Input,
    cfg: &Config,
    last: Option<u64>,
    f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    let cap = input.open()?;
    read_frames(cap, &input.window, cfg, last, f)
}

/// The frame loop of [`for_each_frame_until`] over a capture already open: the frames of
/// `window` up to `last`.
pub(crate) fn read_frames(
    mut cap: Capture,
    window: &Window,
    cfg: &Config,
    last: Option<u64>,
    mut f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    let last = window.last_or(last);
    let progress = progress_bar(cap.bytes_total());
    let mut summary = ReadSummary::default();
    let mut warnings = Warnings::default();
    let mut since_tick = 0u32;
    while let Some(next) = cap.next_frame() {
        match next {
            Ok(frame) => {
                let number = frame.number;
                if window.contains(number) {
                    summary.frames += 1;
                    let mut d = Decoded { frame, packet: Ok(Packet::default()) };
                    decode_into(&mut d, cfg);
                    if let Err(why) = &d.packet {
                        count_undecoded(&mut summary.undecoded, &d.frame, why);
                    }
                    f(&d);
                }
                if last.is_some_and(|l| number >= l) {
                    break;
                }
            }
            Err(e) => {
                if e.nothing_read() && e.is_fatal() {
                    if let Some(pb) = &progress {
                        pb.finish_and_clear();
                    }
                    warnings.omitted().for_each(|omitted| warn(&omitted));
                    return Err(InputError(e.to_string()));
                }
                if let Some(e) = warnings.add(e) {
                    warn(e);
                }
            }
        }
        since_tick += 1;
        if since_tick == 65_536 {
            since_tick = 0;
            if let Some(pb) = &progress {
                pb.set_position(cap.bytes_read());
            }
        }
    }
    if let Some(pb) = &progress {
        pb.finish_and_clear();
    }
    summary.warnings = warnings.kept().iter().map(ToString::to_string).collect();
    for omitted in warnings.omitted() {
        warn(&omitted);
        summary.warnings.push(omitted.to_string());
    }
    Ok(summary)
}

fn warn(e: &dyn fmt::Display) {
    crate::output::warning(e);
}

/// A byte-based progress bar on stderr, only when stderr is a terminal and the input is a
/// file large enough to be worth it.
pub(crate) fn progress_bar(total: Option<u64>) -> Option<ProgressBar> {
    let total = total?;
    if total < 64 << 20 || !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb.enable_steady_tick(Duration::from_millis(200));
    Some(pb)
}
