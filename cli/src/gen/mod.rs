//! The traffic generator: RoCE conversations written with the roce-parser builder, as
//! real stacks would put them on the wire, into pcap files. `roce-inspect gen` uses it for
//! the captures under pcaps/ (the sample, benchmark captures, the conformance suite).

pub mod conn;
pub mod diagnose;
pub mod scenarios;
pub mod suite;
pub mod timers;

use std::io::{self, Write};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, PcapError, TsResolution};
use roce_parser::FrameBuilder;

pub use conn::{Endpoint, RcConn};

/// A small deterministic PRNG (SplitMix64): the same seed gives the same capture on every
/// machine, which is what golden files need.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// A random 24-bit PSN or QPN.
    pub fn u24(&mut self) -> u32 {
        (self.next_u64() & 0x00ff_ffff) as u32
    }
}

/// One generated frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenFrame {
    pub ts_ns: u64,
    pub data: Vec<u8>,
}

/// A capture being generated: frames with timestamps.
#[derive(Debug, Clone)]
pub struct Trace {
    pub frames: Vec<GenFrame>,
    /// Timestamp of the next frame.
    pub now_ns: u64,
    /// Time between consecutive frames unless `advance` says otherwise.
    pub gap_ns: u64,
}

impl Trace {
    /// A trace starting at 2026-01-01 00:00:00 UTC.
    pub fn new() -> Self {
        Trace { frames: Vec::new(), now_ns: 1_767_225_600_000_000_000, gap_ns: 1_000 }
    }

    pub fn advance(&mut self, ns: u64) {
        self.now_ns += ns;
    }

    /// Emits `b` at the current time.
    pub fn push(&mut self, b: &FrameBuilder<'_>) {
        let mut data = vec![0; b.buffer_len()];
        // The builder only fails on a short buffer, which buffer_len rules out.
        if b.emit(&mut data).is_ok() {
            self.push_bytes(data);
        }
    }

    pub fn push_bytes(&mut self, data: Vec<u8>) {
        self.frames.push(GenFrame { ts_ns: self.now_ns, data });
        self.now_ns += self.gap_ns;
    }

    /// Writes a nanosecond pcap (Ethernet).
    pub fn write_pcap(&self, w: impl Write) -> io::Result<()> {
        let mut out = PcapOut::new(w)?;
        for f in &self.frames {
            out.write(f)?;
        }
        out.finish()
    }
}

/// A nanosecond Ethernet pcap written frame by frame, for captures too large to hold
/// (`gen bench`).
pub struct PcapOut<W: Write> {
    writer: PcapWriter<W>,
}

/// The I/O error itself: pcap-file's wrapper displays as "Error reading bytes", even when
/// writing.
fn io_error(e: PcapError) -> io::Error {
    match e {
        PcapError::IoError(e) => e,
        other => io::Error::other(other),
    }
}

impl<W: Write> PcapOut<W> {
    /// Writes the file header.
    pub fn new(w: W) -> io::Result<Self> {
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            snaplen: 65535,
            ..Default::default()
        };
        Ok(PcapOut { writer: PcapWriter::with_header(w, header).map_err(io_error)? })
    }

    pub fn write(&mut self, f: &GenFrame) -> io::Result<()> {
        let len = u32::try_from(f.data.len()).unwrap_or(u32::MAX);
        let pkt = PcapPacket::new(Duration::from_nanos(f.ts_ns), len, &f.data);
        self.writer.write_packet(&pkt).map(drop).map_err(io_error)
    }

    /// Flushes what is buffered.
    pub fn finish(self) -> io::Result<()> {
        self.writer.into_writer().flush()
    }
}

impl Default for Trace {
    fn default() -> Self {
        Self::new()
    }
}
