//! The one pass over a capture: each frame read once (roce-capture), decoded once (the
//! parser, from where its link type says), and handed to the caller's consumers, in capture
//! order. Capture damage after the first frame becomes a warning and reading goes on where
//! the format allows (frames read before it are kept); damage before any frame is the
//! error. Warnings are bounded (the first 20 of each kind, then a count), as is everything
//! the pass holds: nothing per frame.

use std::fmt;

use roce_capture::{CaptureError, ReadFrames, Warnings};
use roce_parser::{Config, Packet};

use crate::frame::{count_undecoded, decode_into, Decoded, ReadSummary};

/// What [`Pass::on_warning`] is given: a callback taking each warning.
pub type WarningSink<'a> = &'a mut dyn FnMut(&dyn fmt::Display);

/// Frames between two progress reports ([`Pass::on_progress`]).
pub const PROGRESS_EVERY: u32 = 65_536;

/// How a pass reads a capture: the parser's configuration, which frames, and what it tells
/// the caller on the way.
///
/// ```
/// use roce_analysis::Pass;
/// use roce_parser::Config;
///
/// // A pcap file header (Ethernet) and one record holding a 14-byte Ethernet header.
/// let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// file.extend_from_slice(&[0xff, 0xff, 0, 0, 1, 0, 0, 0]);
/// file.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0, 14, 0, 0, 0]);
/// file.extend_from_slice(&[0x02; 12]);
/// file.extend_from_slice(&[0x08, 0x00]);
/// let cap = roce_capture::Capture::from_bytes("example.pcap", file)?;
///
/// let cfg = Config::default();
/// let mut roce = 0;
/// let summary = Pass::new(&cfg).run(cap, |d| {
///     roce += d.packet.as_ref().map_or(0, |p| u64::from(p.roce.is_some()));
/// })?;
/// assert_eq!((summary.frames, roce), (1, 0));
/// # Ok::<(), roce_capture::CaptureError>(())
/// ```
pub struct Pass<'a> {
    cfg: &'a Config,
    window: Option<&'a dyn Fn(u64) -> bool>,
    last: Option<u64>,
    on_warning: Option<WarningSink<'a>>,
    on_progress: Option<&'a mut dyn FnMut(u64)>,
}

impl<'a> Pass<'a> {
    /// A pass over every frame, parsed with `cfg`.
    pub fn new(cfg: &'a Config) -> Self {
        Pass { cfg, window: None, last: None, on_warning: None, on_progress: None }
    }

    /// How frames are parsed.
    pub fn config(&self) -> &'a Config {
        self.cfg
    }

    /// Only the frames whose number `window` accepts are decoded and handed on (the others
    /// are as if the capture did not hold them); reading stops after frame `last`.
    pub fn frames(mut self, window: &'a dyn Fn(u64) -> bool, last: Option<u64>) -> Self {
        self.window = Some(window);
        self.last = last;
        self
    }

    /// Reading stops after frame `last` (the rest of the capture is not read at all).
    pub fn until(mut self, last: Option<u64>) -> Self {
        self.last = last;
        self
    }

    /// Each warning as it is found (damage after the first frame, and at the end one line
    /// per kind of the warnings beyond the first 20).
    pub fn on_warning(mut self, f: WarningSink<'a>) -> Self {
        self.on_warning = Some(f);
        self
    }

    /// The bytes read so far, every [`PROGRESS_EVERY`] frames (for a progress bar).
    pub fn on_progress(mut self, f: &'a mut dyn FnMut(u64)) -> Self {
        self.on_progress = Some(f);
        self
    }

    /// Reads `cap` to its end (or to the last frame asked for), calling `consume` with each
    /// frame of the window, decoded. Damage before any frame is the error; after, a warning.
    /// `cap` is a [`roce_capture::Capture`], or a [`roce_capture::Merge`] of several read as
    /// one, in time order.
    pub fn run(
        mut self,
        mut cap: impl ReadFrames,
        mut consume: impl FnMut(&Decoded<'_>),
    ) -> Result<ReadSummary, CaptureError> {
        let mut summary = ReadSummary::default();
        let mut warnings = Warnings::default();
        let mut since_tick = 0u32;
        while let Some(next) = cap.next_frame() {
            match next {
                Ok(frame) => {
                    let number = frame.number;
                    if self.window.is_none_or(|w| w(number)) {
                        summary.frames += 1;
                        let mut d = Decoded { frame, packet: Ok(Packet::default()) };
                        decode_into(&mut d, self.cfg);
                        if let Err(why) = &d.packet {
                            count_undecoded(&mut summary.undecoded, &d.frame, why);
                        }
                        consume(&d);
                    }
                    if self.last.is_some_and(|l| number >= l) {
                        break;
                    }
                }
                Err(e) => {
                    if e.nothing_read() && e.is_fatal() {
                        if let Some(warn) = self.on_warning.as_mut() {
                            warnings.omitted().for_each(|omitted| warn(&omitted));
                        }
                        return Err(e);
                    }
                    if let Some(e) = warnings.add(e) {
                        if let Some(warn) = self.on_warning.as_mut() {
                            warn(e);
                        }
                    }
                }
            }
            since_tick += 1;
            if since_tick == PROGRESS_EVERY {
                since_tick = 0;
                if let Some(progress) = self.on_progress.as_mut() {
                    progress(cap.bytes_read());
                }
            }
        }
        summary.warnings = warnings.kept().iter().map(ToString::to_string).collect();
        for omitted in warnings.omitted() {
            if let Some(warn) = self.on_warning.as_mut() {
                warn(&omitted);
            }
            summary.warnings.push(omitted.to_string());
        }
        Ok(summary)
    }
}
