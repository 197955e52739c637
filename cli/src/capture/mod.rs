//! Reading captures: pcap and pcapng (optionally gzip-compressed, from a file or stdin),
//! frame by frame, without copying frames and without allocating per frame.
//!
//! ```no_run
//! use roce_inspect::capture::{self, l2_start, L2Start};
//! # fn main() -> Result<(), capture::CaptureError> {
//! let mut cap = capture::open(std::path::Path::new("trace.pcapng"))?;
//! while let Some(frame) = cap.next_frame() {
//!     let frame = match frame {
//!         Ok(frame) => frame,
//!         Err(e) if e.is_fatal() => { eprintln!("warning: {e}"); break }
//!         Err(e) => { eprintln!("warning: {e}"); continue }
//!     };
//!     match l2_start(frame.link_type, frame.data) {
//!         L2Start::Ethernet(bytes) => { /* parse from Ethernet */ }
//!         L2Start::Network { ethertype, data } => { /* parse from the network layer */ }
//!         L2Start::Unsupported(why) => { eprintln!("frame {}: {why}", frame.number) }
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! Crate choice and measurement. pcap is read with pcap-file 2.0, the design's default:
//! `PcapHeader` for the file header and `PcapParser::next_raw_packet` for records (not its
//! checked `next_packet`, which rejects every record whose original length exceeds the snap
//! length, i.e. every capture taken with `-s`). pcapng is read by pcapng.rs, because
//! pcap-file's pcapng layer ignores `if_tsresol`, allocates a `Vec` per EPB with options and
//! measured 1.4-3.5x slower (below). pcap-parser 0.17 was no faster on pcap and also keeps EPB
//! options in a `Vec`. Reading goes through a 1 MiB window filled by `read` (source.rs).
//!
//! Iterating a generated 2,000,000-frame pcap (100-600 byte frames, 732 MB), each candidate
//! in one run, release build, 2-core Xeon VM shared with other builds (load ~1.5-3; under
//! load 4-7 every row was up to 2x slower, in the same order), from
//! `cargo test --release -p roce-inspect --test capture_bench -- --ignored --nocapture`:
//!
//! | candidate                                  | cold, 2M frames      | warm, 2000 x 1000 |
//! |--------------------------------------------|----------------------|-------------------|
//! | hand-written loop, no checks (baseline)    |  91.6 ns (10.9 M/s)  |   6.5 ns (155 M/s) |
//! | pcap-file 2.0 `next_packet`                |  84.7 ns (11.8 M/s)  |  13.4 ns (75 M/s)  |
//! | pcap-file 2.0 `next_raw_packet`            |  87.9 ns (11.4 M/s)  |  13.3 ns (75 M/s)  |
//! | pcap-parser 0.17 `parse_pcap_frame`        |  96.0 ns (10.4 M/s)  |  16.9 ns (59 M/s)  |
//! | this module, pcap file (1 MiB reads)       |  83.9 ns (11.9 M/s)  |  76 ns* (13 M/s)   |
//! | this module, pcap in memory                | 134 ns** (7.5 M/s)   |  27.6 ns** (36 M/s) |
//! | this module, pcapng file (EPBs with flags) |  96.7 ns (10.3 M/s)  |  90 ns* (11 M/s)   |
//! | this module, pcapng in memory              | 158 ns** (6.3 M/s)   |  41 ns** (24 M/s)  |
//! | pcap-file 2.0 `PcapNgParser::next_block`   | 219 ns (4.6 M/s)     | 142 ns (7.0 M/s)   |
//!
//! Cold rows are bound by memory bandwidth: reading a file through the window is as fast as
//! the bare loop over memory, above 10 M frames/s. (*) warm file rows include opening the file
//! and copying 724 kB from the page cache per pass. (**) measured on a fresh copy of the
//! bytes (the capture owns its buffer), which a large copy leaves out of cache; the bench now
//! reads the copy once first. So pcap-file does not hold the pcap path back; its pcapng layer
//! would (and is wrong on timestamps), hence the own pcapng reader.
#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod error;
mod link;
mod pcap;
mod pcapng;
mod source;

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

pub use error::{CaptureError, ErrorKind, MAX_RECORD_LEN};
pub use link::{
    l2_start, L2Error, L2Start, LinkType, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCEV1,
};

use pcap::PcapReader;
use pcapng::{Block, PcapNgReader};
use source::Source;

/// One captured frame, borrowed from the capture's read buffer until the next `next_frame`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// 1-based, as Wireshark numbers frames.
    pub number: u64,
    /// Nanoseconds since the Unix epoch (0 for pcapng simple packet blocks, which have none).
    pub ts_ns: u64,
    /// Bytes captured (`data.len()`).
    pub caplen: u32,
    /// Length of the frame on the wire.
    pub len: u32,
    pub link_type: LinkType,
    /// Index of the interface among all pcapng IDBs of the file, in file order (0 for pcap).
    pub interface: u32,
    /// Byte offset of the record or block in the (decompressed) file.
    pub offset: u64,
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
    pub const MICRO: TsResolution = TsResolution::Decimal(6);
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
    offset_ns: i64,
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
            TsResolution::Decimal(n) => match 10u64.checked_pow(u32::from(n) - 9) {
                Some(d) => Scale::Div(d),
                None => Scale::Zero,
            },
            TsResolution::Binary(n) => Scale::Shift(n),
        };
        TsConv { scale, offset_ns: offset_s.saturating_mul(1_000_000_000) }
    }

    /// Ticks since the epoch (minus `if_tsoffset`) to nanoseconds since the epoch; saturates
    /// instead of wrapping on absurd values.
    #[inline]
    pub(crate) fn to_ns(self, ticks: u64) -> u64 {
        let ns = match self.scale {
            Scale::Mul(m) => ticks.saturating_mul(m),
            Scale::Div(d) => ticks / d,
            Scale::Shift(n) => {
                let wide = (u128::from(ticks) * 1_000_000_000) >> n;
                u64::try_from(wide).unwrap_or(u64::MAX)
            }
            Scale::Zero => 0,
        };
        ns.saturating_add_signed(self.offset_ns)
    }
}

/// A capture interface: the one implied by a pcap header, or a pcapng IDB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interface {
    pub link_type: LinkType,
    /// 0 when the writer set no limit.
    pub snaplen: u32,
    pub resolution: TsResolution,
    /// pcapng `if_tsoffset`: seconds added to every timestamp (already applied to `ts_ns`).
    pub ts_offset_s: i64,
    /// 0-based pcapng section the interface belongs to.
    pub section: u32,
    pub(crate) conv: TsConv,
}

/// The container format of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatKind {
    Pcap,
    PcapNg,
}

/// How a capture is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
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
    offset: u64,
    /// Window index of the frame data (see `Source::window_slice`).
    data_at: usize,
    caplen: u32,
    len: u32,
    ts_ns: u64,
    interface: u32,
    link_type: LinkType,
}

/// Damage a reader found, before the file name and frame number are attached. Boxed where
/// it is returned, so the per-frame `Result` stays small.
#[derive(Debug)]
pub(crate) struct Damage {
    kind: ErrorKind,
    offset: u64,
    /// Iteration ends.
    fatal: bool,
    /// The damaged record was a packet, so it uses up a frame number.
    counts_frame: bool,
}

impl Damage {
    pub(crate) fn fatal(kind: ErrorKind, offset: u64) -> Box<Damage> {
        Box::new(Damage { kind, offset, fatal: true, counts_frame: true })
    }

    pub(crate) fn skipped(kind: ErrorKind, offset: u64, counts_frame: bool) -> Box<Damage> {
        Box::new(Damage { kind, offset, fatal: false, counts_frame })
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
        })
    }

    /// The next frame, an error naming the damage, or `None` at the end. After an error for
    /// which `is_fatal()` is true, `None` follows; otherwise the damaged block was skipped
    /// and reading goes on.
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
                Some(Ok(Frame {
                    number: self.numbered,
                    ts_ns: rec.ts_ns,
                    caplen: rec.caplen,
                    len: rec.len,
                    link_type: rec.link_type,
                    interface: rec.interface,
                    offset: rec.offset,
                    data: self.src.window_slice(rec.data_at, rec.caplen as usize),
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
        if damage.fatal {
            self.done = true;
        }
        CaptureError::new(Arc::clone(&self.name), Some(frame), damage.offset, damage.kind)
            .with_progress(self.yielded, damage.fatal)
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
