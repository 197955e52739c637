//! The frame loop every command shares: open the capture, hand each frame's packet to the
//! command, show progress on a terminal, and turn capture damage into warnings (frames read
//! before it are kept) or, when nothing could be read, into exit code 2.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use roce_parser::{parse_ethernet_into, parse_ethertype_payload, Config, Packet, Problems};

use crate::capture::{self, CaptureError, Frame, L2Start};

/// A frame and what the parser made of it.
pub struct Decoded<'a> {
    pub frame: Frame<'a>,
    /// `Err` when the frame could not be handed to the parser at all (unsupported link type,
    /// a frame shorter than its link or Ethernet header), with the reason.
    pub packet: Result<Packet<'a>, String>,
}

/// Decodes one frame with the parser, starting where its link type says.
pub fn decode<'a>(frame: Frame<'a>, cfg: &Config) -> Decoded<'a> {
    let mut d = Decoded { frame, packet: Ok(Packet::default()) };
    decode_into(&mut d, cfg);
    d
}

/// `decode` in place: the packet is parsed straight into `d.packet` (a `Packet` is about
/// 500 bytes; building it elsewhere and moving it here cost a copy per frame).
fn decode_into(d: &mut Decoded<'_>, cfg: &Config) {
    match d.frame.l2() {
        L2Start::Ethernet(bytes) => {
            if let Ok(p) = &mut d.packet {
                if let Err(e) = parse_ethernet_into(bytes, cfg, p) {
                    d.packet = Err(e.to_string());
                }
            }
        }
        L2Start::Network { ethertype, data } => {
            d.packet = Ok(parse_ethertype_payload(ethertype, data, cfg))
        }
        L2Start::Unsupported(why) => d.packet = Err(why.to_string()),
    }
}

/// Everything wrong with a packet: the parser's problems plus, for a MAD on QP1, the MAD's
/// own (short MAD, unknown class version, unknown CM attribute).
pub fn problems(p: &Packet<'_>) -> Problems {
    let mut all = p.problems;
    if let Some(Ok(mad)) = p.roce.as_ref().and_then(|r| r.mad()) {
        all.union(mad.problems);
    }
    all
}

/// How reading ended.
#[derive(Debug, Default)]
pub struct ReadSummary {
    pub frames: u64,
    /// Damage found after some frames were read (already printed to stderr as warnings).
    pub warnings: Vec<String>,
}

/// Why a command could not read its input (exit code 2).
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads every frame of `path` ("-" for stdin) and calls `f` with it, decoded. Damage after
/// the first frame is reported on stderr and reading goes on where the format allows; an
/// unreadable file or damage before any frame is an `InputError`.
pub fn for_each_frame(
    path: &Path,
    cfg: &Config,
    mut f: impl FnMut(&Decoded<'_>),
) -> Result<ReadSummary, InputError> {
    let mut cap = capture::open(path).map_err(|e| InputError(e.to_string()))?;
    let progress = progress_bar(cap.bytes_total());
    let mut summary = ReadSummary::default();
    let mut since_tick = 0u32;
    while let Some(next) = cap.next_frame() {
        match next {
            Ok(frame) => {
                summary.frames += 1;
                let mut d = Decoded { frame, packet: Ok(Packet::default()) };
                decode_into(&mut d, cfg);
                f(&d);
            }
            Err(e) => {
                if e.nothing_read() && e.is_fatal() {
                    if let Some(pb) = &progress {
                        pb.finish_and_clear();
                    }
                    return Err(InputError(e.to_string()));
                }
                warn(&e);
                summary.warnings.push(e.to_string());
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
    Ok(summary)
}

fn warn(e: &CaptureError) {
    eprintln!("roce-inspect: warning: {e}");
}

/// A byte-based progress bar on stderr, only when stderr is a terminal and the input is a
/// file large enough to be worth it.
fn progress_bar(total: Option<u64>) -> Option<ProgressBar> {
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
