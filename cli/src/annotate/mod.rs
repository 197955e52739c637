//! `check --annotate OUT`: the capture written again as pcapng with each finding as a packet
//! comment (EPB `opt_comment`) on every frame it cites, so Wireshark shows the findings
//! under Expert Info > Comments and `frame.comment contains "REQ-GBN"` filters them.
//!
//! Nothing else changes: pcapng blocks are copied byte for byte (sections, interfaces,
//! statistics, name resolution, every packet's bytes, lengths, interface, timestamp and
//! options), a cited EPB only gains its comments before its end of options. A pcap file
//! becomes one section with one interface of the file's link type, snap length and
//! resolution (`if_tsresol` 6 or 9: timestamps keep every digit). gzip input is read
//! uncompressed; the output is not compressed. Streaming: one record in memory at a time.

pub mod blocks;
pub mod meta;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use blocks::{Kind, Records};

/// Opens a capture file, undoing gzip.
pub fn open(path: &Path) -> Result<Box<dyn Read>, String> {
    let f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    open_reader(Box::new(f)).map_err(|e| format!("{}: {e}", path.display()))
}

/// [`open`] over any byte stream: buffered, and decompressed when it starts as gzip does.
pub fn open_reader(mut f: Box<dyn Read>) -> Result<Box<dyn Read>, String> {
    let mut magic = [0u8; 2];
    let mut n = 0;
    while n < 2 {
        match f.read(magic.get_mut(n..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let head = io::Cursor::new(magic.get(..n).unwrap_or_default().to_vec());
    let r = BufReader::with_capacity(1 << 16, head.chain(f));
    if magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::with_capacity(1 << 16, flate2::read::MultiGzDecoder::new(r))))
    } else {
        Ok(Box::new(r))
    }
}

/// What was written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub frames: u64,
    /// Frames that got comments.
    pub annotated: u64,
    pub comments: u64,
    /// Cited frames stored as simple packet blocks, which have no options: not annotated.
    pub simple_not_annotated: u64,
}

fn put16(o: &mut Vec<u8>, v: u16, big: bool) {
    o.extend_from_slice(&if big { v.to_be_bytes() } else { v.to_le_bytes() });
}

fn put32(o: &mut Vec<u8>, v: u32, big: bool) {
    o.extend_from_slice(&if big { v.to_be_bytes() } else { v.to_le_bytes() });
}

/// An option (code, value) padded to 4 bytes; values longer than an option can hold are cut
/// at a character boundary.
fn put_option(o: &mut Vec<u8>, code: u16, value: &[u8], big: bool) {
    let value = value.get(..value.len().min(0xfff0)).unwrap_or_default();
    put16(o, code, big);
    put16(o, value.len() as u16, big);
    o.extend_from_slice(value);
    o.resize(o.len() + (4 - value.len() % 4) % 4, 0);
}

fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    s.get(..i).unwrap_or_default()
}

/// A packet block (`ty` EPB or PB, whole as stored) with `comments` added before its end of
/// options, in its section's byte order.
fn with_comments(block: &[u8], ty: u32, big: bool, comments: &[String], o: &mut Vec<u8>) {
    let Some(at) = blocks::options_at(ty, block, big) else {
        o.extend_from_slice(block);
        return;
    };
    // The block's own options stay byte for byte; the comments go after them.
    let end = blocks::options_end(block.get(..block.len() - 4).unwrap_or_default(), at, big);
    o.clear();
    o.extend_from_slice(block.get(..end).unwrap_or_default());
    for c in comments {
        put_option(o, 1, cut(c, 0xfff0).as_bytes(), big);
    }
    put32(o, 0, big); // opt_endofopt
    put32(o, 0, big); // the trailing length, set below
    let len = o.len() as u32;
    let len_bytes = if big { len.to_be_bytes() } else { len.to_le_bytes() };
    if let Some(l) = o.get_mut(4..8) {
        l.copy_from_slice(&len_bytes);
    }
    let n = o.len();
    if let Some(l) = o.get_mut(n - 4..) {
        l.copy_from_slice(&len_bytes);
    }
}

/// A pcapng section header block (little-endian, section length unknown) naming this tool
/// in `shb_userappl`.
pub(crate) fn pcapng_shb() -> Vec<u8> {
    let mut shb = Vec::with_capacity(64);
    put32(&mut shb, blocks::SHB, false);
    put32(&mut shb, 0, false);
    put32(&mut shb, 0x1A2B_3C4D, false);
    put16(&mut shb, 1, false);
    put16(&mut shb, 0, false);
    shb.extend_from_slice(&u64::MAX.to_le_bytes());
    put_option(&mut shb, 4, format!("roce-inspect {}", crate::version()).as_bytes(), false);
    put32(&mut shb, 0, false);
    put32(&mut shb, 0, false);
    finish_len(&mut shb);
    shb
}

/// A pcapng interface description block (little-endian): link type `network`, no snap
/// length, nanosecond timestamps, named `name` (`if_name`).
pub(crate) fn pcapng_idb(network: u16, name: &str) -> Vec<u8> {
    let mut idb = Vec::with_capacity(64);
    put32(&mut idb, blocks::IDB, false);
    put32(&mut idb, 0, false);
    put16(&mut idb, network, false);
    put16(&mut idb, 0, false);
    put32(&mut idb, 0, false);
    put_option(&mut idb, 2, cut(name, 0xfff0).as_bytes(), false);
    put_option(&mut idb, 9, &[9], false);
    put32(&mut idb, 0, false);
    put32(&mut idb, 0, false);
    finish_len(&mut idb);
    idb
}

/// A pcap file's header as a pcapng section and interface (little-endian).
pub(crate) fn pcap_header(
    out: &mut impl Write,
    nano: bool,
    network: u32,
    snaplen: u32,
) -> io::Result<()> {
    let shb = pcapng_shb();
    let mut idb = Vec::with_capacity(32);
    put32(&mut idb, blocks::IDB, false);
    put32(&mut idb, 0, false);
    put16(&mut idb, (network & 0xffff) as u16, false);
    put16(&mut idb, 0, false);
    put32(&mut idb, snaplen, false);
    put_option(&mut idb, 9, &[if nano { 9 } else { 6 }], false);
    // pcap's FCS bits (28-31 of the link type): `if_fcslen`.
    if network & 0x1000_0000 != 0 {
        put_option(&mut idb, 13, &[((network >> 29) & 7) as u8 * 2], false);
    }
    put32(&mut idb, 0, false);
    put32(&mut idb, 0, false);
    finish_len(&mut idb);
    out.write_all(&shb)?;
    out.write_all(&idb)
}

fn finish_len(b: &mut [u8]) {
    let len = (b.len() as u32).to_le_bytes();
    if let Some(l) = b.get_mut(4..8) {
        l.copy_from_slice(&len);
    }
    let n = b.len();
    if let Some(l) = b.get_mut(n - 4..) {
        l.copy_from_slice(&len);
    }
}

/// A pcap record as an EPB on interface 0 (timestamp in the file's units).
pub(crate) fn pcap_record(rec: &[u8], big: bool, nano: bool, comments: &[String], o: &mut Vec<u8>) {
    let secs = u64::from(blocks::read_u32(rec, 0, big));
    let frac = u64::from(blocks::read_u32(rec, 4, big));
    let len = blocks::read_u32(rec, 12, big);
    let ts = secs * if nano { 1_000_000_000 } else { 1_000_000 } + frac;
    // The record's bytes (the strict reader hands whole records: `caplen` of them).
    let data = rec.get(16..).unwrap_or_default();
    pcapng_epb(0, ts, len, data, comments, o);
}

/// An enhanced packet block (little-endian) into `o` (cleared first): `data` captured of a
/// `len`-byte frame on `interface` at `ts` (in the interface's units), with `comments`.
pub(crate) fn pcapng_epb(
    interface: u32,
    ts: u64,
    len: u32,
    data: &[u8],
    comments: &[String],
    o: &mut Vec<u8>,
) {
    let caplen = data.len() as u32;
    o.clear();
    put32(o, blocks::EPB, false);
    put32(o, 0, false);
    put32(o, interface, false);
    put32(o, (ts >> 32) as u32, false);
    put32(o, ts as u32, false);
    put32(o, caplen, false);
    put32(o, len, false);
    o.extend_from_slice(data);
    o.resize(o.len() + (4 - data.len() % 4) % 4, 0);
    if !comments.is_empty() {
        for c in comments {
            put_option(o, 1, cut(c, 0xfff0).as_bytes(), false);
        }
        put32(o, 0, false);
    }
    put32(o, 0, false);
    finish_len(o);
}

/// Copies capture `input` to `out` as pcapng, `comments[frame]` added to those frames.
pub fn annotate(
    input: impl Read,
    out: &mut impl Write,
    comments: &BTreeMap<u64, Vec<String>>,
) -> Result<Written, String> {
    let mut recs = Records::new(input)?;
    let kind = recs.kind;
    let werr = |e: io::Error| format!("writing: {e}");
    if let Kind::Pcap { nano, network, snaplen, .. } = kind {
        pcap_header(out, nano, network, snaplen).map_err(werr)?;
    }
    let mut w = Written::default();
    let mut buf = Vec::with_capacity(4096);
    let none: Vec<String> = Vec::new();
    while let Some(rec) = recs.next_record()? {
        let packet = rec.packet;
        if packet {
            w.frames += 1;
        }
        let mine = if packet { comments.get(&w.frames).unwrap_or(&none) } else { &none };
        if !mine.is_empty() {
            w.annotated += 1;
            w.comments += mine.len() as u64;
        }
        match kind {
            Kind::Pcap { nano, .. } => {
                pcap_record(rec.bytes, rec.big, nano, mine, &mut buf);
                out.write_all(&buf).map_err(werr)?;
            }
            Kind::PcapNg if mine.is_empty() => out.write_all(rec.bytes).map_err(werr)?,
            Kind::PcapNg if rec.ty == blocks::SPB => {
                w.annotated -= 1;
                w.comments -= mine.len() as u64;
                w.simple_not_annotated += 1;
                out.write_all(rec.bytes).map_err(werr)?;
            }
            Kind::PcapNg => {
                with_comments(rec.bytes, rec.ty, rec.big, mine, &mut buf);
                out.write_all(&buf).map_err(werr)?;
            }
        }
    }
    Ok(w)
}

/// The comment a finding puts on each frame it cites.
pub fn comment(f: &roce_conformance::Finding) -> String {
    let sev = match f.severity {
        roce_conformance::Severity::Error => "error",
        roce_conformance::Severity::Warning => "warning",
    };
    let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
    format!("{} {sev}: {} [roce-inspect check, frames {}]", f.rule, f.message, frames.join(","))
}

/// Comments per frame for `findings` (in the order the findings come).
pub fn comments_of(findings: &[roce_conformance::Finding]) -> BTreeMap<u64, Vec<String>> {
    let mut m: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for f in findings {
        let c = comment(f);
        let mut frames = f.frames.clone();
        frames.sort_unstable();
        frames.dedup();
        for n in frames {
            m.entry(n).or_default().push(c.clone());
        }
    }
    m
}

/// Annotates the file `input` into `output`, which is completed when the whole capture is
/// written (crate::outfile: a staged file is renamed then, and removed on an error; a device
/// or FIFO is written in place and left as it is).
pub fn annotate_file(
    input: &Path,
    output: crate::outfile::OutFile,
    comments: &BTreeMap<u64, Vec<String>>,
) -> Result<Written, String> {
    let r = open(input)?;
    let shown = output.path().display().to_string();
    let mut w = BufWriter::with_capacity(1 << 16, output);
    let res = annotate(r, &mut w, comments)
        .and_then(|n| w.flush().map(|()| n).map_err(|e| format!("writing: {e}")));
    let fail =
        |e: String| format!("--annotate {shown}: {}: {e} (nothing written)", input.display());
    let n = res.map_err(fail)?;
    let out = w.into_inner().map_err(|e| fail(format!("writing: {}", e.error())))?;
    out.commit().map_err(|e| e.0)?;
    Ok(n)
}
