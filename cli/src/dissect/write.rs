//! `dissect -w FILE`: the frames dissect keeps (`--frames`, `-c`, `--qp`, `--opcode`, `-Y`)
//! saved as a capture Wireshark opens, as `tshark -Y ... -w` would.
//!
//! Why a copy and not a re-encoding: the selected records are copied from the input byte for
//! byte (pcap records; pcapng sections, interfaces and the other non-packet blocks with every
//! option, then the selected packet blocks), so data, timestamps, captured and original
//! lengths, interfaces and `if_tsresol` are the input's by construction. The input is read
//! once: the bytes the dissector's reader reads are also kept in a [`Tap`] (crate::tap),
//! and a strict record reader (the one of `check --annotate`) walks them in step with the
//! dissector, record by record, shown or not, so the tap holds only what the dissector's
//! reader read ahead. A pipe, stdin and an interface (`-i`) are saved as a file is. Only a
//! change of container converts: pcap to pcapng as `--annotate` does (one interface, the
//! file's link type and resolution), pcapng to pcap with the first interface's link type, in
//! microseconds when its `if_tsresol` is 6 and nanoseconds otherwise.
//!
//! A record that the strict reader refuses (a damaged block) stops the writing with the
//! offset; what was written stays. The file itself is written through crate::outfile: it
//! appears under its name when complete, never over the capture being read, and a failed
//! write (a full disk) leaves the name as it was.

use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::annotate::blocks::{self, Kind, Records};
use crate::outfile::{Dash, OutFile};
use crate::tap::Tap;

/// Where `-w` writes: a file or stdout (completed by [`Writer::finish`]), or what the caller
/// of [`Writer::with_output`] gave.
enum Dest {
    File(OutFile),
    Other(Box<dyn Write>),
}

impl Write for Dest {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Dest::File(f) => f.write(buf),
            Dest::Other(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Dest::File(f) => f.flush(),
            Dest::Other(w) => w.flush(),
        }
    }
}

/// The container `-w` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    Pcap,
    PcapNg,
}

/// A pcapng interface as the pcapng-to-pcap conversion needs it.
#[derive(Debug, Clone, Copy)]
struct Idb {
    link: u16,
    snaplen: u32,
    /// `if_tsresol` (6 when absent).
    tsresol: u8,
}

/// Writes the selected frames of one input to one output.
pub struct Writer {
    name: PathBuf,
    input: Records<Box<dyn Read>>,
    out: BufWriter<Dest>,
    /// A write to `out` failed: the output is not completed.
    out_failed: bool,
    format: Out,
    /// Packet records of the input passed so far (the last one's frame number).
    passed: u64,
    /// pcapng to pcap: the interfaces so far, and whether the pcap header is out (with its
    /// resolution).
    idbs: Vec<Idb>,
    pcap_nano: Option<bool>,
    /// Something was written (the header comes with the first frame, or at the end).
    started: bool,
    buf: Vec<u8>,
    pub frames: u64,
}

fn out_format(name: &Path, input: Kind) -> Result<Out, String> {
    let s = name.to_string_lossy();
    // Standard output, or a device or FIFO (`-w /dev/null`): no suffix to go by.
    let stream = std::fs::metadata(name).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if s == "-" || stream {
        return Ok(match input {
            Kind::Pcap { .. } => Out::Pcap,
            Kind::PcapNg => Out::PcapNg,
        });
    }
    if s.ends_with(".pcapng") {
        Ok(Out::PcapNg)
    } else if s.ends_with(".pcap") {
        Ok(Out::Pcap)
    } else {
        Err(format!(
            "-w {s}: the name must end in .pcap or .pcapng (or be - for stdout, or a device \
             or FIFO, written in the input's format)"
        ))
    }
}

impl Writer {
    /// Reads the input's records from `tap` (the bytes of the capture being dissected, read
    /// from `input`: a file, or `-` for stdin) and creates `name` ("-": stdout, in the
    /// input's format), refused when it is the input.
    pub fn create(tap: Tap, name: &Path, input: &Path) -> Result<Writer, String> {
        // The name's container first: a wrong suffix is refused before anything is opened.
        let records = Records::new(crate::annotate::open_reader(Box::new(tap))?)
            .map_err(|e| format!("-w {}: the input: {e}", name.display()))?;
        let format = out_format(name, records.kind)?;
        let file = OutFile::create("-w", name, &[input], Dash::Stdout).map_err(|e| e.0)?;
        Ok(Writer::new(name, records, format, Dest::File(file)))
    }

    /// [`Writer::create`] into the output `open` makes (memory for the fuzz target); `name`
    /// gives the container and names the output in messages.
    pub fn with_output(
        tap: Tap,
        name: &Path,
        open: impl FnOnce(&Path) -> Result<Box<dyn Write>, String>,
    ) -> Result<Writer, String> {
        let records = Records::new(crate::annotate::open_reader(Box::new(tap))?)
            .map_err(|e| format!("-w {}: the input: {e}", name.display()))?;
        let format = out_format(name, records.kind)?;
        let out = open(name)?;
        Ok(Writer::new(name, records, format, Dest::Other(out)))
    }

    fn new(name: &Path, input: Records<Box<dyn Read>>, format: Out, out: Dest) -> Writer {
        Writer {
            name: name.to_path_buf(),
            input,
            out: BufWriter::with_capacity(1 << 16, out),
            out_failed: false,
            format,
            passed: 0,
            idbs: Vec::new(),
            pcap_nano: None,
            started: false,
            buf: Vec::with_capacity(4096),
            frames: 0,
        }
    }

    /// Whether stdout was closed by its reader (`-w - | head`): nothing more to write.
    pub fn closed(&self) -> bool {
        matches!(self.out.get_ref(), Dest::File(f) if f.closed())
    }

    /// Writes `header` then `self.buf` to the output.
    fn emit(&mut self, header: &[u8]) -> Result<(), String> {
        let res = self.out.write_all(header).and_then(|()| self.out.write_all(&self.buf));
        res.map_err(|e| {
            self.out_failed = true;
            self.werr(e)
        })
    }

    /// Whether the output is stdout (then dissect prints no text).
    pub fn to_stdout(&self) -> bool {
        self.name == Path::new("-")
    }

    fn werr(&self, e: io::Error) -> String {
        werr(&self.name, e)
    }

    /// Frame `number` was read (called for every frame, in order): its record is written
    /// when `keep`, with the non-packet blocks before it.
    pub fn pass(&mut self, number: u64, keep: bool) -> Result<(), String> {
        while self.passed < number {
            let want = keep.then_some(number);
            if !self.step(want)? {
                return Err(format!(
                    "-w {}: frame {number} not found by the record reader",
                    self.name.display()
                ));
            }
        }
        if keep {
            self.frames += 1;
        }
        Ok(())
    }

    /// Reads one input record and writes what belongs in the output: non-packet blocks
    /// always (pcapng), packet `want`. `false` at the end of the input.
    fn step(&mut self, want: Option<u64>) -> Result<bool, String> {
        let name = self.name.display().to_string();
        let kind = self.input.kind;
        let Some(rec) = self.input.next_record().map_err(|e| format!("-w {name}: {e}"))? else {
            return Ok(false);
        };
        let packet = rec.packet;
        if packet {
            self.passed += 1;
        }
        let selected = packet && want == Some(self.passed);
        self.buf.clear();
        let mut header: Vec<u8> = Vec::new();
        match (kind, self.format) {
            (Kind::Pcap { big, nano, network, snaplen }, Out::Pcap) => {
                if !self.started {
                    pcap_file_header(&mut header, big, nano, network, snaplen);
                }
                if selected {
                    self.buf.extend_from_slice(rec.bytes);
                }
            }
            (Kind::Pcap { big, nano, network, snaplen }, Out::PcapNg) => {
                if !self.started {
                    crate::annotate::pcap_header(&mut header, nano, network, snaplen)
                        .map_err(|e| werr(&self.name, e))?;
                }
                if selected {
                    crate::annotate::pcap_record(rec.bytes, big, nano, &[], &mut self.buf);
                }
            }
            (Kind::PcapNg, Out::PcapNg) => {
                if !packet || selected {
                    self.buf.extend_from_slice(rec.bytes);
                }
            }
            (Kind::PcapNg, Out::Pcap) => {
                if rec.ty == blocks::IDB {
                    self.idbs.push(idb(rec.bytes, rec.big));
                } else if selected {
                    let (bytes, big) = (rec.bytes.to_vec(), rec.big);
                    self.pcapng_packet_as_pcap(&bytes, big, &mut header)?;
                }
            }
        }
        let started = self.started || !header.is_empty() || !self.buf.is_empty();
        self.emit(&header)?;
        self.started = started;
        Ok(true)
    }

    /// A pcapng EPB, PB or SPB as a pcap record (into `self.buf`), the pcap file header
    /// into `header` first.
    fn pcapng_packet_as_pcap(
        &mut self,
        b: &[u8],
        big: bool,
        header: &mut Vec<u8>,
    ) -> Result<(), String> {
        let u32_at = |at| blocks::read_u32(b, at, big);
        let (iface, ticks, caplen, len, data_at) = match u32_at(0) {
            blocks::SPB => {
                (0, None, u32_at(8).min(b.len().saturating_sub(16) as u32), u32_at(8), 12)
            }
            blocks::PB => {
                let iface = u32::from(blocks::u16_of(b, 8, big));
                let ticks = (u64::from(u32_at(12)) << 32) | u64::from(u32_at(16));
                (iface, Some(ticks), u32_at(20), u32_at(24), 28)
            }
            _ => {
                let ticks = (u64::from(u32_at(12)) << 32) | u64::from(u32_at(16));
                (u32_at(8), Some(ticks), u32_at(20), u32_at(24), 28)
            }
        };
        let name = self.name.display().to_string();
        let Some(i) = self.idbs.get(iface as usize).copied() else {
            return Err(format!("-w {name}: a packet on interface {iface}, which has no IDB"));
        };
        let nano = match self.pcap_nano {
            Some(n) => n,
            None => {
                let nano = i.tsresol != 6;
                pcap_file_header(header, false, nano, u32::from(i.link), i.snaplen);
                self.pcap_nano = Some(nano);
                nano
            }
        };
        if let Some(first) = self.idbs.first() {
            if first.link != i.link {
                return Err(format!(
                    "-w {name}: interface {iface} has link type {} and interface 0 {}: a pcap \
                     file holds one link type, write .pcapng",
                    i.link, first.link
                ));
            }
        }
        let ns = ticks.map_or(0, |t| ticks_to_ns(t, i.tsresol));
        let unit: u128 = if nano { 1_000_000_000 } else { 1_000_000 };
        let per_unit = 1_000_000_000 / unit;
        let secs = u32::try_from(ns / 1_000_000_000).unwrap_or(u32::MAX);
        let frac = ((ns % 1_000_000_000) / per_unit) as u32;
        let data = b.get(data_at..data_at + caplen as usize).unwrap_or_default();
        for v in [secs, frac, data.len() as u32, len] {
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    /// Writes the header when no frame was selected, flushes and completes the output (a
    /// file appears under its name). A damaged input record stops the writing but keeps what
    /// was written (completed, then the error); a failed write completes nothing.
    pub fn finish(mut self) -> Result<u64, String> {
        let tail = self.tail();
        if self.out_failed {
            return Err(tail.err().unwrap_or_else(|| {
                format!("-w {}: a write failed; nothing written", self.name.display())
            }));
        }
        let frames = self.frames;
        let completed = match self.out.into_inner() {
            Ok(Dest::File(f)) => f.commit().map_err(|e| e.0),
            Ok(Dest::Other(_)) => Ok(()),
            Err(e) => {
                Err(werr(&self.name, io::Error::new(e.error().kind(), e.error().to_string())))
            }
        };
        tail?;
        completed?;
        Ok(frames)
    }

    /// The headers when no frame was selected, then a flush.
    fn tail(&mut self) -> Result<(), String> {
        // No frame selected: the headers (pcapng: the blocks before the first packet).
        while self.frames == 0 {
            let before = self.passed;
            if !self.step(None)? || self.passed > before {
                break;
            }
        }
        if !self.started && self.format == Out::Pcap {
            // pcapng to pcap with no frame: the first interface's header (Ethernet if none).
            let i = self.idbs.first().copied().unwrap_or(Idb { link: 1, snaplen: 0, tsresol: 6 });
            let mut header = Vec::new();
            pcap_file_header(&mut header, false, i.tsresol != 6, u32::from(i.link), i.snaplen);
            self.buf.clear();
            self.emit(&header)?;
        }
        self.out.flush().map_err(|e| {
            self.out_failed = true;
            self.werr(e)
        })
    }
}

/// A write error naming the output.
fn werr(name: &Path, e: io::Error) -> String {
    if name == Path::new("-") {
        format!("-w -: writing to stdout: {e}")
    } else {
        format!("-w {}: writing: {e}", name.display())
    }
}

/// Nanoseconds of `ticks` in units of `if_tsresol`.
fn ticks_to_ns(ticks: u64, tsresol: u8) -> u128 {
    let t = u128::from(ticks);
    if tsresol & 0x80 != 0 {
        (t * 1_000_000_000) >> (tsresol & 0x7f).min(127)
    } else if tsresol <= 9 {
        t * 10u128.pow(9 - u32::from(tsresol))
    } else {
        t / 10u128.pow(u32::from(tsresol - 9).min(38))
    }
}

/// The interface an IDB describes (`if_tsresol` 6 when absent).
fn idb(b: &[u8], big: bool) -> Idb {
    let body_end = b.len().saturating_sub(4);
    let opts = blocks::options(b.get(..body_end).unwrap_or_default(), 16, big);
    let tsresol = opts.iter().find(|(c, _)| *c == 9).and_then(|(_, v)| v.first()).copied();
    Idb {
        link: blocks::u16_of(b, 8, big),
        snaplen: blocks::read_u32(b, 12, big),
        tsresol: tsresol.unwrap_or(6),
    }
}

/// A pcap file header in the input's byte order and resolution.
fn pcap_file_header(o: &mut Vec<u8>, big: bool, nano: bool, network: u32, snaplen: u32) {
    let magic: u32 = if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    let put32 = |o: &mut Vec<u8>, v: u32| {
        o.extend_from_slice(&if big { v.to_be_bytes() } else { v.to_le_bytes() })
    };
    let put16 = |o: &mut Vec<u8>, v: u16| {
        o.extend_from_slice(&if big { v.to_be_bytes() } else { v.to_le_bytes() })
    };
    put32(o, magic);
    put16(o, 2);
    put16(o, 4);
    put32(o, 0);
    put32(o, 0);
    put32(o, snaplen);
    put32(o, network);
}

/// `dissect -w FILE` over several captures read as one (docs/taps.md): the frames kept, in the
/// merge's order, as one pcapng section. Their records cannot be copied byte for byte (they
/// come from several files, pcap and pcapng mixed), so each is written anew: an interface
/// per interface of each file met (its link type, named `FILE` or `FILE#N`, nanosecond
/// timestamps), each frame an enhanced packet block with its bytes, lengths and timestamp on
/// the merge's corrected clock, and a comment saying where it comes from (`from FILE:FRAME`,
/// `a copy of frame N`). Written through crate::outfile as the copier's output is.
pub struct MergedWriter {
    out: BufWriter<OutFile>,
    names: Vec<String>,
    /// (file, its interface) to the output's interface number, in order of first use.
    interfaces: Vec<((u32, u32), u32)>,
    block: Vec<u8>,
    frames: u64,
    failed: Option<String>,
}

impl MergedWriter {
    /// Opens `name` (`-` standard output), refusing any of the `files` read as one and a
    /// name not ending in `.pcapng` (several files' interfaces need pcapng).
    pub fn create(name: &Path, files: &[PathBuf]) -> Result<MergedWriter, String> {
        let pcapng = name.extension().is_some_and(|e| e.eq_ignore_ascii_case("pcapng"));
        if !pcapng && name != Path::new("-") {
            return Err(format!(
                "-w {}: several captures are written as pcapng (one interface per tap); name \
                 it .pcapng, or - for stdout",
                name.display()
            ));
        }
        let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let file = OutFile::create("-w", name, &inputs, Dash::Stdout).map_err(|e| e.0)?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let shb = crate::annotate::pcapng_shb();
        out.write_all(&shb).map_err(|e| werr(name, e))?;
        Ok(MergedWriter {
            out,
            names: files.iter().map(|p| p.display().to_string()).collect(),
            interfaces: Vec::new(),
            block: Vec::with_capacity(4096),
            frames: 0,
            failed: None,
        })
    }

    /// Whether its reader closed standard output (nothing more is written).
    pub fn closed(&self) -> bool {
        self.out.get_ref().closed()
    }

    /// Writes frame `d` (a copy of merged frame `copy_of`, if one); the first error is kept
    /// for [`MergedWriter::finish`] and stops the writing.
    pub fn frame(&mut self, d: &crate::input::Decoded<'_>, copy_of: Option<u64>) {
        if self.failed.is_some() {
            return;
        }
        let f = &d.frame;
        let file = self.names.get(f.source as usize).map_or("?", String::as_str);
        let key = (f.source, f.interface);
        let id = match self.interfaces.iter().find(|(k, _)| *k == key) {
            Some(&(_, id)) => id,
            None => {
                let id = self.interfaces.len() as u32;
                let name = if f.interface == 0 {
                    file.to_string()
                } else {
                    format!("{file}#{}", f.interface)
                };
                let link = u16::try_from(f.link_type.code()).unwrap_or(u16::MAX);
                let idb = crate::annotate::pcapng_idb(link, &name);
                if let Err(e) = self.out.write_all(&idb) {
                    self.failed = Some(werr(self.out.get_ref().path(), e));
                    return;
                }
                self.interfaces.push((key, id));
                id
            }
        };
        let mut comment = format!("from {file}:{}", f.source_number);
        if let Some(n) = copy_of {
            comment.push_str(&format!(", a copy of frame {n}"));
        }
        crate::annotate::pcapng_epb(id, f.ts_ns, f.len, f.data, &[comment], &mut self.block);
        if let Err(e) = self.out.write_all(&self.block) {
            self.failed = Some(werr(self.out.get_ref().path(), e));
            return;
        }
        self.frames += 1;
    }

    /// Completes the file (it appears under its name now): the frames written, or the first
    /// error (the name then left as it was).
    pub fn finish(self) -> Result<u64, String> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let name = self.out.get_ref().path().to_path_buf();
        let file = self.out.into_inner().map_err(|e| werr(&name, e.into_error()))?;
        file.commit().map_err(|e| e.0)?;
        Ok(self.frames)
    }
}
