//! The capture: opening, format detection, and the frame loop over the pcap and pcapng
//! readers. Damage found by a reader becomes a `CaptureError` here, with the file name and
//! the frame number attached.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use crate::error::{CaptureError, Effect, ErrorKind};
use crate::link::{l2_start, L2Start, LinkType};
use crate::pcap::{self, PcapReader};
use crate::pcapng::{self, Block, PcapNgReader};
use crate::source::Source;

/// One captured frame, borrowed from the capture's read buffer until the next `next_frame`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// 1-based, as Wireshark numbers frames. In a [`crate::Merge`] of several captures, the
    /// frame's place in the merge (the number it has in the merged capture `-w` writes).
    pub number: u64,
    /// Which capture of a [`crate::Merge`] the frame comes from (its index in the list
    /// given); 0 for a capture read alone.
    pub source: u32,
    /// The frame's number in its own capture (`number` for a capture read alone).
    pub source_number: u64,
    /// Nanoseconds since the Unix epoch (0 for pcapng simple packet blocks, which have none).
    /// For an ERF record, its own timestamp (the capture card's, to the nanosecond), not the
    /// pcap record's.
    pub ts_ns: u64,
    /// Bytes captured (`data.len()`).
    pub caplen: u32,
    /// Length of the frame on the wire.
    pub len: u32,
    /// Link type of the frame's interface: says what `data` starts with.
    pub link_type: LinkType,
    /// Index of the interface among all pcapng IDBs of the file, in file order (0 for pcap).
    pub interface: u32,
    /// Byte offset of the record or block in the (decompressed) file.
    pub offset: u64,
    /// The captured bytes, from the link-layer header on (`caplen` of them).
    pub data: &'a [u8],
}

impl<'a> Frame<'a> {
    /// Where the packet parser starts on this frame (see `l2_start`).
    #[inline]
    pub fn l2(&self) -> L2Start<'a> {
        l2_start(self.link_type, self.data)
    }
}

/// Timestamp resolution of a pcap file or a pcapng interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TsResolution {
    /// Units of 10^-n seconds (6: microseconds, 9: nanoseconds).
    Decimal(u8),
    /// Units of 2^-n seconds.
    Binary(u8),
}

impl TsResolution {
    /// Microseconds: classic pcap (magic 0xA1B2C3D4) and the pcapng default.
    pub const MICRO: TsResolution = TsResolution::Decimal(6);
    /// Nanoseconds: nanosecond pcap (magic 0xA1B23C4D).
    pub const NANO: TsResolution = TsResolution::Decimal(9);

    /// From a pcapng `if_tsresol` value: high bit clear means 10^-n, set means 2^-n.
    pub fn from_if_tsresol(value: u8) -> TsResolution {
        if value & 0x80 == 0 {
            TsResolution::Decimal(value)
        } else {
            TsResolution::Binary(value & 0x7F)
        }
    }
}

impl fmt::Display for TsResolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TsResolution::Decimal(0) => write!(f, "s"),
            TsResolution::Decimal(3) => write!(f, "ms"),
            TsResolution::Decimal(6) => write!(f, "µs"),
            TsResolution::Decimal(9) => write!(f, "ns"),
            TsResolution::Decimal(n) => write!(f, "10^-{n} s"),
            TsResolution::Binary(n) => write!(f, "2^-{n} s"),
        }
    }
}

/// Timestamp ticks to nanoseconds, precomputed per interface so a frame costs one multiply
/// or divide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TsConv {
    scale: Scale,
    /// `if_tsoffset` in nanoseconds; `None` when that overflows (beyond about 292 years).
    offset_ns: Option<i64>,
    /// `if_tsoffset` in seconds, for `saturating_ns`.
    offset_s: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scale {
    Mul(u64),
    Div(u64),
    Shift(u8),
    Zero,
}

impl TsConv {
    pub(crate) fn from_resolution(resolution: TsResolution, offset_s: i64) -> TsConv {
        let scale = match resolution {
            TsResolution::Decimal(n) if n <= 9 => Scale::Mul(10u64.pow(9 - u32::from(n))),
            // Finer than 10^-28 s: any 64-bit tick count is below one nanosecond.
            TsResolution::Decimal(n) => match 10u64.checked_pow(u32::from(n) - 9) {
                Some(d) => Scale::Div(d),
                None => Scale::Zero,
            },
            TsResolution::Binary(n) => Scale::Shift(n),
        };
        TsConv { scale, offset_ns: offset_s.checked_mul(1_000_000_000), offset_s }
    }

    /// Ticks since the epoch (minus `if_tsoffset`) to nanoseconds since the epoch; `None`
    /// when the result is out of `u64` (before 1970 or after 2554).
    #[inline]
    pub(crate) fn to_ns(self, ticks: u64) -> Option<u64> {
        let ns = match self.scale {
            Scale::Mul(m) => ticks.checked_mul(m)?,
            Scale::Div(d) => ticks / d,
            Scale::Shift(n) => u64::try_from((u128::from(ticks) * 1_000_000_000) >> n).ok()?,
            Scale::Zero => 0,
        };
        ns.checked_add_signed(self.offset_ns?)
    }

    /// `to_ns` clamped to 0 (before 1970) or `u64::MAX` (after 2554) instead of failing;
    /// exact in between. In 128 bits: ticks times 10^9 and the offset in nanoseconds are both
    /// below 2^94.
    #[cold]
    pub(crate) fn saturating_ns(self, ticks: u64) -> u64 {
        let ns = match self.scale {
            Scale::Mul(m) => u128::from(ticks) * u128::from(m),
            Scale::Div(d) => u128::from(ticks / d),
            Scale::Shift(n) => (u128::from(ticks) * 1_000_000_000) >> n,
            Scale::Zero => 0,
        };
        let total =
            i128::try_from(ns).unwrap_or(i128::MAX) + i128::from(self.offset_s) * 1_000_000_000;
        u64::try_from(total.max(0)).unwrap_or(u64::MAX)
    }
}

/// A capture interface: the one implied by a pcap header, or a pcapng IDB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interface {
    /// Link type of the interface's frames (pcap header or IDB `LinkType`).
    pub link_type: LinkType,
    /// 0 when the writer set no limit.
    pub snaplen: u32,
    /// Timestamp units: the pcap magic's, or the IDB's `if_tsresol` (microseconds if absent).
    pub resolution: TsResolution,
    /// pcapng `if_tsoffset`: seconds added to every timestamp (already applied to `ts_ns`).
    pub ts_offset_s: i64,
    /// 0-based pcapng section the interface belongs to.
    pub section: u32,
    /// Byte offset of the pcapng IDB (0 for pcap).
    pub offset: u64,
    pub(crate) conv: TsConv,
    /// Captured lengths above this are reported (once per capture): the snap length until
    /// then, `u32::MAX` for no limit and after the report.
    pub(crate) report_caplen_above: u32,
    /// A timestamp out of range was reported for this interface: later ones saturate quietly.
    pub(crate) ts_reported: bool,
}

/// The container format of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatKind {
    /// Classic libpcap format: one file header, then records.
    Pcap,
    /// pcapng: sections of blocks (SHB, IDBs, EPBs, ...).
    PcapNg,
}

/// How a capture is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// pcap or pcapng (after gzip, if any, is taken off).
    pub kind: FormatKind,
    /// pcap: the file's resolution. pcapng: `None`, since each interface has its own (see
    /// `Capture::interfaces`).
    pub resolution: Option<TsResolution>,
    /// Byte order of the pcap header or of the first pcapng section.
    pub big_endian: bool,
    /// The file was gzip-compressed.
    pub gzip: bool,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            FormatKind::Pcap => "pcap",
            FormatKind::PcapNg => "pcapng",
        };
        write!(f, "{kind}")?;
        if let Some(resolution) = self.resolution {
            write!(f, " ({resolution})")?;
        }
        if self.big_endian {
            write!(f, ", big-endian")?;
        }
        if self.gzip {
            write!(f, ", gzip")?;
        }
        Ok(())
    }
}

/// A record as a reader found it: where its data lies in the window, and its metadata.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec {
    pub(crate) offset: u64,
    /// Window index of the frame data (see `Source::window_slice`).
    pub(crate) data_at: usize,
    pub(crate) caplen: u32,
    pub(crate) len: u32,
    pub(crate) ts_ns: u64,
    pub(crate) interface: u32,
    pub(crate) link_type: LinkType,
}

/// Damage a reader found (or a warning), before the file name and frame number are attached.
/// Boxed where it is returned, so the per-frame `Result` stays small.
#[derive(Debug)]
pub(crate) struct Damage {
    pub(crate) kind: ErrorKind,
    pub(crate) offset: u64,
    pub(crate) effect: Effect,
    /// The damaged record was a packet, so it uses up a frame number.
    pub(crate) counts_frame: bool,
}

impl Damage {
    pub(crate) fn fatal(kind: ErrorKind, offset: u64) -> Box<Damage> {
        Box::new(Damage { kind, offset, effect: Effect::Fatal, counts_frame: true })
    }

    pub(crate) fn skipped(kind: ErrorKind, offset: u64, counts_frame: bool) -> Box<Damage> {
        Box::new(Damage { kind, offset, effect: Effect::Skipped, counts_frame })
    }

    /// A warning about the record at `offset`, which the reader has not consumed: the next
    /// call reads it (the reader makes sure it does not warn again).
    #[cold]
    pub(crate) fn warning(kind: ErrorKind, offset: u64) -> Box<Damage> {
        Box::new(Damage { kind, offset, effect: Effect::Warning, counts_frame: false })
    }

    pub(crate) fn io(e: io::Error, src: &Source, offset: u64) -> Box<Damage> {
        Damage::fatal(ErrorKind::from_io(e, src.is_gzip()), offset)
    }
}

enum Reader {
    Pcap(PcapReader),
    PcapNg(PcapNgReader),
}

/// An open capture, read frame by frame with `next_frame`.
pub struct Capture {
    name: Arc<str>,
    src: Source,
    reader: Reader,
    /// pcap's single interface (pcapng keeps its own list).
    pcap_interface: Option<Interface>,
    format: Format,
    /// Frame numbers used so far (damaged packet records included).
    numbered: u64,
    /// Frames handed out.
    yielded: u64,
    done: bool,
    /// Window index of the last frame's data ([`Capture::last_frame_at`]).
    last_at: usize,
}

/// Opens a capture file, or stdin for `-`; detects pcap, pcapng and gzip by their magic
/// numbers, never by the file name. The file header is read here, so a file that is not a
/// capture fails now (an error for which `nothing_read()` is true).
pub fn open(path: &Path) -> Result<Capture, CaptureError> {
    let name: Arc<str> = Arc::from(path.to_string_lossy().as_ref());
    let src = Source::open(path)
        .map_err(|e| CaptureError::new(Arc::clone(&name), None, 0, ErrorKind::Io(e)))?;
    Capture::start(name, src)
}

impl Capture {
    /// A capture held in memory (tests, fuzzing); `name` appears in error messages. gzip data
    /// is recognised as from a file.
    pub fn from_bytes(name: &str, bytes: impl Into<Vec<u8>>) -> Result<Capture, CaptureError> {
        Capture::start(Arc::from(name), Source::from_bytes(bytes.into()))
    }

    /// A capture read from any byte stream (a pipe, a socket, a live capture's pcap stream);
    /// `name` appears in error messages. Formats are detected as for a file; the stream's
    /// length is unknown, so there is no progress total.
    ///
    /// ```
    /// let mut pcap = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
    /// pcap.extend_from_slice(&[0; 8]); // thiszone, sigfigs
    /// pcap.extend_from_slice(&65535u32.to_le_bytes());
    /// pcap.extend_from_slice(&1u32.to_le_bytes()); // Ethernet
    /// let cap = roce_capture::Capture::from_reader("pipe", std::io::Cursor::new(pcap)).unwrap();
    /// assert_eq!(cap.bytes_total(), None);
    /// ```
    pub fn from_reader(
        name: &str,
        reader: impl std::io::Read + Send + 'static,
    ) -> Result<Capture, CaptureError> {
        Capture::from_reader_with_len(name, reader, None)
    }

    /// [`Capture::from_reader`] for a stream whose length is known (a file read through a
    /// wrapper): `len` is the [`Capture::bytes_total`] a progress bar shows.
    pub fn from_reader_with_len(
        name: &str,
        reader: impl std::io::Read + Send + 'static,
        len: Option<u64>,
    ) -> Result<Capture, CaptureError> {
        let name: Arc<str> = Arc::from(name);
        let src = Source::from_reader(Box::new(reader), len)
            .map_err(|e| CaptureError::new(Arc::clone(&name), None, 0, ErrorKind::Io(e)))?;
        Capture::start(name, src)
    }

    fn start(name: Arc<str>, mut src: Source) -> Result<Capture, CaptureError> {
        let header_error = |kind| CaptureError::new(Arc::clone(&name), None, 0, kind);
        let gzip = src.is_gzip();
        let have = src
            .ensure(pcap::FILE_HEADER_LEN)
            .map_err(|e| header_error(ErrorKind::from_io(e, gzip)))?;
        let Some(magic) = src.avail().first_chunk::<4>().copied() else {
            return Err(if have == 0 {
                header_error(ErrorKind::Empty)
            } else {
                header_error(ErrorKind::TruncatedFileHeader { needed: 4, available: have as u64 })
            });
        };
        let is_pcap = matches!(
            u32::from_le_bytes(magic),
            0xA1B2_C3D4 | 0xA1B2_3C4D | 0xD4C3_B2A1 | 0x4D3C_B2A1
        );
        let (reader, pcap_interface, kind, resolution, big_endian) = if is_pcap {
            let (reader, interface) = PcapReader::open(&mut src).map_err(header_error)?;
            let big = reader.big_endian();
            (
                Reader::Pcap(reader),
                Some(interface),
                FormatKind::Pcap,
                Some(interface.resolution),
                big,
            )
        } else if u32::from_be_bytes(magic) == pcapng::SHB_TYPE {
            let mut reader = PcapNgReader::new();
            // The first section header is the file header: damage there means nothing can
            // be read.
            match reader.block(&mut src) {
                Ok(Some(Block::Other)) => {}
                Ok(_) => {
                    let available = have as u64;
                    return Err(header_error(ErrorKind::TruncatedFileHeader {
                        needed: 28,
                        available,
                    }));
                }
                Err(damage) => return Err(header_error(damage.kind)),
            }
            let big = reader.big_endian();
            (Reader::PcapNg(reader), None, FormatKind::PcapNg, None, big)
        } else {
            return Err(header_error(ErrorKind::BadMagic(magic)));
        };
        Ok(Capture {
            name,
            src,
            reader,
            pcap_interface,
            format: Format { kind, resolution, big_endian, gzip },
            numbered: 0,
            yielded: 0,
            done: false,
            last_at: 0,
        })
    }

    /// The next frame, an error naming the damage, or `None` at the end. After an error for
    /// which `is_fatal()` is true, `None` follows; otherwise the damaged block was skipped,
    /// or nothing was lost (`Effect::Warning`: the frame warned about comes next), and
    /// reading goes on.
    #[inline]
    pub fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>> {
        if self.done {
            return None;
        }
        let next = match &mut self.reader {
            Reader::Pcap(r) => r.next(&mut self.src),
            Reader::PcapNg(r) => r.next(&mut self.src),
        };
        match next {
            Ok(Some(rec)) => {
                self.numbered += 1;
                self.yielded += 1;
                self.last_at = rec.data_at;
                let data = self.src.window_slice(rec.data_at, rec.caplen as usize);
                // An ERF record carries the capture card's own timestamp, finer than the
                // pcap record's (which libpcap rounds to it): the frame's time, as tshark's.
                let ts_ns = match rec.link_type {
                    LinkType::Erf => crate::link::erf_ts_ns(data).unwrap_or(rec.ts_ns),
                    _ => rec.ts_ns,
                };
                Some(Ok(Frame {
                    number: self.numbered,
                    source: 0,
                    source_number: self.numbered,
                    ts_ns,
                    caplen: rec.caplen,
                    len: rec.len,
                    link_type: rec.link_type,
                    interface: rec.interface,
                    offset: rec.offset,
                    data,
                }))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(damage) => Some(Err(self.damage(*damage))),
        }
    }

    #[cold]
    fn damage(&mut self, damage: Damage) -> CaptureError {
        let frame = self.numbered + 1;
        if damage.counts_frame {
            self.numbered = frame;
        }
        if damage.effect == Effect::Fatal {
            self.done = true;
        }
        CaptureError::new(Arc::clone(&self.name), Some(frame), damage.offset, damage.kind)
            .with_progress(self.yielded, damage.effect)
    }

    /// Lends the capture's read windows to the caller, so that frames can be handed to other
    /// threads without a copy (`--threads`). `buf` becomes the next window read into. From
    /// now on, when reading moves on to a new window, the filled one is kept whole: after
    /// each [`Capture::next_frame`], [`Capture::take_retired_window`] returns it (once),
    /// holding the data of every frame handed out since the window before, at the indexes
    /// [`Capture::last_frame_at`] gave. Give a buffer back (any `Vec`, e.g. a window the
    /// caller is done with) before the next `next_frame`, or a new one is allocated.
    pub fn lend_window(&mut self, buf: Vec<u8>) {
        self.src.lend(buf);
    }

    /// The window reading moved on from during the last [`Capture::next_frame`], if it did
    /// (only while lending, [`Capture::lend_window`]). Frames returned before that call
    /// have their data in it; the frame that call returned, if any, is in the next one.
    pub fn take_retired_window(&mut self) -> Option<Vec<u8>> {
        self.src.take_retired()
    }

    /// Moves reading on to a new window now, as when the current one is used up: the
    /// frames handed out since the last retired window stay in this one, which the next
    /// [`Capture::take_retired_window`] returns (only while lending, and when a frame was
    /// handed out of it). For a reader that bounds the frames per window: a window of tiny
    /// frames (a bomb of 16-byte records) would otherwise hand out some 16,000 of them, and
    /// whatever is made per frame (a dissect worker's text) grows with that.
    pub fn retire_window(&mut self) {
        self.src.retire(0);
    }

    /// The current window, taken whole; the capture reads nothing more (`next_frame` gives
    /// `None`). For the frames handed out of it since the last retired window.
    pub fn take_window(&mut self) -> Vec<u8> {
        self.done = true;
        self.src.take_window()
    }

    /// Where the data of the last frame returned lies in its window: `data` is
    /// `window[at..at + caplen]` (see [`Capture::lend_window`]).
    pub fn last_frame_at(&self) -> usize {
        self.last_at
    }

    /// The data of the last frame returned (`caplen` bytes at [`Capture::last_frame_at`]),
    /// still in the window until the next `next_frame`.
    pub(crate) fn last_frame_data(&self, caplen: u32) -> &[u8] {
        self.src.window_slice(self.last_at, caplen as usize)
    }

    /// The name given to `open` or `from_bytes`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Container, resolution, byte order and compression.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Interfaces known so far: pcap's single one, or every pcapng IDB read up to now (a
    /// frame's `interface` indexes this list).
    pub fn interfaces(&self) -> &[Interface] {
        match (&self.reader, &self.pcap_interface) {
            (Reader::PcapNg(r), _) => r.interfaces(),
            (Reader::Pcap(_), Some(interface)) => std::slice::from_ref(interface),
            (Reader::Pcap(_), None) => &[],
        }
    }

    /// Size of the input file (compressed size for gzip); `None` for stdin and pipes.
    pub fn bytes_total(&self) -> Option<u64> {
        self.src.bytes_total()
    }

    /// How much of the input file has been read, in the same unit as `bytes_total`, for a
    /// progress bar.
    pub fn bytes_read(&self) -> u64 {
        self.src.bytes_read()
    }

    /// Frames handed out so far.
    pub fn frames_read(&self) -> u64 {
        self.yielded
    }
}
