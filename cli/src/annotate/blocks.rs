//! The raw records of a capture, as stored: pcap records and pcapng blocks, read in order
//! from a stream (gzip already undone) with one reused buffer. Strict: anything that is not
//! a well-formed record is an error naming its offset (a capture to rewrite must be whole).

use std::io::{self, Read};

/// pcapng block types.
pub const SHB: u32 = 0x0A0D_0D0A;
pub const IDB: u32 = 1;
pub const PB: u32 = 2;
pub const SPB: u32 = 3;
pub const EPB: u32 = 6;

/// Blocks and records larger than this are refused (as roce-capture refuses them).
pub const MAX_RECORD: usize = 16 << 20;

/// What the stream turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// pcap: byte order, nanosecond resolution, link type (with the FCS bits), snap length.
    Pcap {
        big: bool,
        nano: bool,
        network: u32,
        snaplen: u32,
    },
    PcapNg,
}

/// A record: a pcap packet record (`ty` 0) or a pcapng block, `bytes` whole as stored.
#[derive(Debug)]
pub struct Record<'a> {
    pub ty: u32,
    /// Whether it takes a frame number: every pcap record, and a pcapng packet block
    /// ([`is_packet`]). Not `ty == 0`: a pcapng block of the reserved type 0 is no packet,
    /// and the capture reader skips it.
    pub packet: bool,
    pub offset: u64,
    pub bytes: &'a [u8],
    /// Byte order of its section (pcapng) or file (pcap).
    pub big: bool,
}

pub struct Records<R> {
    r: R,
    pub kind: Kind,
    big: bool,
    offset: u64,
    buf: Vec<u8>,
    /// The first block's type, read by `new` to tell pcapng from pcap.
    first: Option<[u8; 4]>,
}

fn u32_of(b: &[u8], at: usize, big: bool) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    if big {
        u32::from_be_bytes(w)
    } else {
        u32::from_le_bytes(w)
    }
}

pub fn u16_of(b: &[u8], at: usize, big: bool) -> u16 {
    let mut w = [0u8; 2];
    if let Some(s) = b.get(at..at + 2) {
        w.copy_from_slice(s);
    }
    if big {
        u16::from_be_bytes(w)
    } else {
        u16::from_le_bytes(w)
    }
}

pub fn read_u32(b: &[u8], at: usize, big: bool) -> u32 {
    u32_of(b, at, big)
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` at a clean end (nothing read).
fn fill(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        let Some(rest) = buf.get_mut(got..) else { break };
        match r.read(rest) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "cut short")),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

impl<R: Read> Records<R> {
    /// Reads the file header (pcap) or looks at the first block (pcapng).
    pub fn new(mut r: R) -> Result<Self, String> {
        let mut head = [0u8; 4];
        if !fill(&mut r, &mut head).map_err(|e| format!("reading the file header: {e}"))? {
            return Err("empty file: not a pcap or pcapng capture".into());
        }
        let magic = u32::from_le_bytes(head);
        let (big, nano) = match magic {
            0xa1b2_c3d4 => (false, false),
            0xd4c3_b2a1 => (true, false),
            0xa1b2_3c4d => (false, true),
            0x4d3c_b2a1 => (true, true),
            SHB => {
                let buf = Vec::with_capacity(4096);
                let first = Some(head);
                return Ok(Records { r, kind: Kind::PcapNg, big: false, offset: 0, buf, first });
            }
            _ => return Err(format!("not a pcap or pcapng capture (first bytes {head:02x?})")),
        };
        let mut rest = [0u8; 20];
        if !fill(&mut r, &mut rest).map_err(|e| format!("pcap file header: {e}"))? {
            return Err("pcap file header cut short".into());
        }
        let snaplen = u32_of(&rest, 12, big);
        let network = u32_of(&rest, 16, big);
        let kind = Kind::Pcap { big, nano, network, snaplen };
        Ok(Records { r, kind, big, offset: 24, buf: Vec::with_capacity(4096), first: None })
    }

    /// The next record, or `None` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, String> {
        let at = self.offset;
        let e = |what: String| format!("record at byte offset {at}: {what}");
        match self.kind {
            Kind::Pcap { .. } => {
                self.buf.resize(16, 0);
                if !fill(&mut self.r, &mut self.buf).map_err(|x| e(format!("header {x}")))? {
                    return Ok(None);
                }
                let caplen = u32_of(&self.buf, 8, self.big) as usize;
                if caplen > MAX_RECORD {
                    return Err(e(format!("captured length {caplen} is larger than {MAX_RECORD}")));
                }
                self.buf.resize(16 + caplen, 0);
                let data = self.buf.get_mut(16..).unwrap_or_default();
                if !fill(&mut self.r, data).map_err(|x| e(format!("packet data {x}")))?
                    && caplen > 0
                {
                    return Err(e("packet data missing".into()));
                }
                self.offset += (16 + caplen) as u64;
                Ok(Some(Record {
                    ty: 0,
                    packet: true,
                    offset: at,
                    bytes: &self.buf,
                    big: self.big,
                }))
            }
            Kind::PcapNg => self.block(at),
        }
    }

    fn block(&mut self, at: u64) -> Result<Option<Record<'_>>, String> {
        let e = |what: String| format!("pcapng block at byte offset {at}: {what}");
        self.buf.clear();
        self.buf.resize(12, 0);
        match self.first.take() {
            Some(ty) => {
                self.buf.get_mut(..4).unwrap_or_default().copy_from_slice(&ty);
                let head = self.buf.get_mut(4..12).unwrap_or_default();
                if !fill(&mut self.r, head).map_err(|x| e(format!("header {x}")))? {
                    return Err(e("header cut short".into()));
                }
            }
            None => {
                if !fill(&mut self.r, &mut self.buf).map_err(|x| e(format!("header {x}")))? {
                    return Ok(None);
                }
            }
        }
        let ty = u32_of(&self.buf, 0, self.big);
        if ty == SHB {
            self.big = match u32_of(&self.buf, 8, false) {
                0x1A2B_3C4D => false,
                0x4D3C_2B1A => true,
                bom => {
                    return Err(e(format!(
                        "section header with an unknown byte-order mark 0x{bom:08x}"
                    )))
                }
            };
        }
        let len = u32_of(&self.buf, 4, self.big) as usize;
        if len < 12 || !len.is_multiple_of(4) || len > MAX_RECORD {
            return Err(e(format!(
                "block length {len} is not a multiple of 4 between 12 and {MAX_RECORD}"
            )));
        }
        self.buf.resize(len, 0);
        let body = self.buf.get_mut(12..).unwrap_or_default();
        if !body.is_empty() && !fill(&mut self.r, body).map_err(|x| e(format!("body {x}")))? {
            return Err(e("body missing".into()));
        }
        let trailer = u32_of(&self.buf, len - 4, self.big) as usize;
        if trailer != len {
            return Err(e(format!("trailing length {trailer} differs from the length {len}")));
        }
        self.offset += len as u64;
        let ty = u32_of(&self.buf, 0, self.big);
        let packet = is_packet(ty);
        Ok(Some(Record { ty, packet, offset: at, bytes: &self.buf, big: self.big }))
    }
}

/// Whether a pcapng block type is a packet (it takes a frame number).
pub fn is_packet(ty: u32) -> bool {
    matches!(ty, PB | SPB | EPB)
}

/// The options of a pcapng block body starting at `at`: (code, value) until opt_endofopt or
/// the end; a malformed option ends the list.
pub fn options(body: &[u8], at: usize, big: bool) -> Vec<(u16, &[u8])> {
    let mut v = Vec::new();
    let mut i = at;
    while i + 4 <= body.len() {
        let code = u16_of(body, i, big);
        let len = usize::from(u16_of(body, i + 2, big));
        if code == 0 {
            break;
        }
        let Some(val) = body.get(i + 4..i + 4 + len) else { break };
        v.push((code, val));
        i += 4 + len.div_ceil(4) * 4;
    }
    v
}

/// Where the options list starting at `at` ends: at its opt_endofopt, or where the next
/// option would not fit.
pub fn options_end(body: &[u8], at: usize, big: bool) -> usize {
    let mut i = at;
    while i + 4 <= body.len() {
        let code = u16_of(body, i, big);
        let len = usize::from(u16_of(body, i + 2, big));
        let next = i + 4 + len.div_ceil(4) * 4;
        if code == 0 || next > body.len() {
            break;
        }
        i = next;
    }
    i
}

/// Where a block's options start (offset in the whole block, header included), `None` for
/// blocks without options or cut short.
pub fn options_at(ty: u32, block: &[u8], big: bool) -> Option<usize> {
    let at = match ty {
        SHB => 8 + 16,
        IDB => 8 + 8,
        EPB => {
            let caplen = read_u32(block, 8 + 12, big) as usize;
            8 + 20 + caplen.div_ceil(4) * 4
        }
        PB => {
            let caplen = read_u32(block, 8 + 12, big) as usize;
            8 + 20 + caplen.div_ceil(4) * 4
        }
        _ => return None,
    };
    (at <= block.len().saturating_sub(4)).then_some(at)
}
