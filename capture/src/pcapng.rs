//! pcapng: sections (SHB) each with their own byte order, interfaces (IDB) each with their own
//! link type and timestamp resolution, and packets in EPB, SPB or the obsolete PB.
//!
//! Hand-written rather than pcap-file's pcapng layer: its typed blocks ignore `if_tsresol`
//! (every EPB timestamp is taken as nanoseconds), collect EPB options in a `Vec` (a heap
//! allocation per frame for files with `epb_flags`), reject option lists without
//! `opt_endofopt` or with non-UTF-8 comments, and its iteration measured 4-5x slower than this
//! reader's (see `mod.rs`). Its `RawBlock` framing alone re-reads the header that must be read
//! here anyway for precise errors, and cost a third of the per-frame time. The common case, a
//! sound EPB wholly in the read window, takes a short path with no diagnostics; everything
//! else takes the fully checked one.
//!
//! Damage handling: a block whose length fields are wrong (too short, not a multiple of 4,
//! past the end, trailer differs) leaves no way to find the next block, so iteration ends. A
//! block with a sound length but a bad body (a captured length past the block, an undefined
//! interface) is reported and skipped, and reading resumes at the next block. A skipped packet
//! block keeps its frame number, so later frames are numbered as Wireshark numbers them in the
//! undamaged file.
//!
//! Two things are only warned about, once, and the packet is read: a captured length above
//! the interface's snap length (once per capture, as for pcap: Wireshark reads such packets),
//! and a timestamp that 64-bit nanoseconds cannot hold with the interface's `if_tsresol` and
//! `if_tsoffset` (once per interface, naming it: its timestamps saturate). Neither is checked
//! on the fast path beyond one comparison each; a packet that fails one takes the checked
//! path, which warns and leaves the block for the next call.

use crate::capture::{Damage, Interface, Rec, TsConv, TsResolution};
use crate::error::{Effect, ErrorKind, MAX_BLOCK_LEN, MAX_INTERFACES};
use crate::link::LinkType;
use crate::source::Source;

/// Block type of a section header; the same in either byte order.
pub(crate) const SHB_TYPE: u32 = 0x0A0D_0D0A;
const IDB_TYPE: u32 = 1;
const PB_TYPE: u32 = 2;
const SPB_TYPE: u32 = 3;
const EPB_TYPE: u32 = 6;
/// Byte-order magic of a section header, as read big-endian.
const BOM_BIG: u32 = 0x1A2B_3C4D;
const BOM_LITTLE: u32 = 0x4D3C_2B1A;
/// Block type + leading length + trailing length.
const BLOCK_OVERHEAD: usize = 12;
/// Offset of the body in a block.
const BODY_AT: usize = 8;
/// Fixed fields of an EPB or PB body before the packet data.
const PACKET_FIELDS: usize = 20;

/// What one block turned out to be.
pub(crate) enum Block {
    Packet(Rec),
    Other,
}

/// State for reading pcapng blocks.
pub(crate) struct PcapNgReader {
    /// Byte order of the current section.
    big_endian: bool,
    /// Every interface of every section so far; a frame's `interface` indexes this.
    interfaces: Vec<Interface>,
    /// Index in `interfaces` of the current section's interface 0.
    section_start: usize,
    /// 0-based number of the current section.
    section: u32,
    seen_section: bool,
    /// The capture's one warning about a packet above its interface's snap length was given.
    snaplen_reported: bool,
}

impl PcapNgReader {
    pub(crate) fn new() -> PcapNgReader {
        PcapNgReader {
            big_endian: false,
            interfaces: Vec::new(),
            section_start: 0,
            section: 0,
            seen_section: false,
            snaplen_reported: false,
        }
    }

    /// Byte order of the current section.
    pub(crate) fn big_endian(&self) -> bool {
        self.big_endian
    }

    /// Interfaces described so far, across all sections.
    pub(crate) fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    /// Blocks until the next packet, `Ok(None)` at a clean end of file.
    #[inline]
    pub(crate) fn next(&mut self, src: &mut Source) -> Result<Option<Rec>, Box<Damage>> {
        loop {
            match self.block(src)? {
                None => return Ok(None),
                Some(Block::Packet(rec)) => return Ok(Some(rec)),
                Some(Block::Other) => {}
            }
        }
    }

    /// Reads one block; `Ok(None)` at a clean end of file.
    #[inline]
    pub(crate) fn block(&mut self, src: &mut Source) -> Result<Option<Block>, Box<Damage>> {
        match self.fast_epb(src) {
            Some(rec) => Ok(Some(Block::Packet(rec))),
            None => self.any_block(src),
        }
    }

    /// The common case, a sound EPB of a known interface wholly in the window, with no
    /// diagnostics; anything else (including damage) returns `None` for `any_block`.
    #[inline]
    fn fast_epb(&mut self, src: &mut Source) -> Option<Rec> {
        let window = src.avail();
        let head = window.first_chunk::<{ BODY_AT + PACKET_FIELDS }>()?;
        let big = self.big_endian;
        // Constant offsets within `head`: the optimiser drops the checks.
        let u32_at = |i: usize| {
            head.get(i..).and_then(|b| b.first_chunk::<4>()).map_or(0, |b| read_u32(*b, big))
        };
        let length = u32_at(4);
        let len = length as usize;
        if u32_at(0) != EPB_TYPE || length % 4 != 0 || length > MAX_BLOCK_LEN || len > window.len()
        {
            return None;
        }
        let caplen = u32_at(20);
        if len < BLOCK_OVERHEAD + PACKET_FIELDS
            || caplen as usize > len - BLOCK_OVERHEAD - PACKET_FIELDS
        {
            return None;
        }
        let trailer = window.get(len - 4..len)?.first_chunk::<4>()?;
        if read_u32(*trailer, big) != length {
            return None;
        }
        // Interfaces of the current section are the tail of the list.
        let global = self.section_start + u32_at(8) as usize;
        let interface = self.interfaces.get(global)?;
        if caplen > interface.report_caplen_above {
            return None;
        }
        let ticks = (u64::from(u32_at(12)) << 32) | u64::from(u32_at(16));
        let ts_ns = match interface.conv.to_ns(ticks) {
            Some(ns) => ns,
            None if interface.ts_reported => interface.conv.saturating_ns(ticks),
            None => return None,
        };
        let rec = Rec {
            offset: src.offset(),
            data_at: BODY_AT + PACKET_FIELDS,
            caplen,
            len: u32_at(24),
            ts_ns,
            interface: global as u32,
            link_type: interface.link_type,
        };
        let at = src.advance(len);
        Some(Rec { data_at: rec.data_at + at, ..rec })
    }

    /// Any block, with full checks and diagnostics.
    #[cold]
    fn any_block(&mut self, src: &mut Source) -> Result<Option<Block>, Box<Damage>> {
        let offset = src.offset();
        let have = src.ensure(BLOCK_OVERHEAD).map_err(|e| Damage::io(e, src, offset))?;
        if have == 0 {
            return Ok(None);
        }
        let Some(head) = src.avail().first_chunk::<BLOCK_OVERHEAD>() else {
            return Err(Damage::fatal(
                ErrorKind::TruncatedBlockHeader { available: have as u64 },
                offset,
            ));
        };
        let is_shb = head[..4] == SHB_TYPE.to_be_bytes();
        let big = if is_shb {
            match u32::from_be_bytes([head[8], head[9], head[10], head[11]]) {
                BOM_BIG => true,
                BOM_LITTLE => false,
                bom => return Err(Damage::fatal(ErrorKind::BadByteOrderMagic(bom), offset)),
            }
        } else {
            self.big_endian
        };
        let block_type = read_u32([head[0], head[1], head[2], head[3]], big);
        let length = read_u32([head[4], head[5], head[6], head[7]], big);
        check_length(block_type, length, offset)?;

        let len = length as usize;
        let have = src.ensure(len).map_err(|e| Damage::io(e, src, offset))?;
        if have < len {
            let kind = ErrorKind::BlockPastEnd { block_type, length, available: have as u64 };
            return Err(Damage::fatal(kind, offset));
        }
        let window = src.avail();
        let trailer = window.get(len - 4..len).and_then(|t| t.first_chunk::<4>());
        let trailer = trailer.map_or(0, |t| read_u32(*t, big));
        if trailer != length {
            let kind = ErrorKind::BlockTrailerMismatch { block_type, length, trailer };
            return Err(Damage::fatal(kind, offset));
        }
        let body = window.get(BODY_AT..len - 4).unwrap_or_default();

        let outcome = match block_type {
            EPB_TYPE | PB_TYPE => self.packet(block_type, body, big, offset),
            SPB_TYPE => self.simple_packet(body, big, offset),
            IDB_TYPE => self.interface(body, big, offset),
            SHB_TYPE => self.section_header(body, big, offset),
            _ => Ok(Block::Other),
        };
        let outcome = match outcome {
            // The block stays: the next call reads it, and does not warn again.
            Err(damage) if damage.effect == Effect::Warning => return Err(damage),
            outcome => outcome,
        };
        let at = src.advance(len);
        match outcome {
            Ok(Block::Packet(mut rec)) => {
                rec.data_at += at;
                Ok(Some(Block::Packet(rec)))
            }
            Ok(other) => Ok(Some(other)),
            Err(damage) => Err(damage),
        }
    }

    /// A new section: its byte order applies to every block up to the next SHB, and its
    /// interfaces are numbered from 0 again.
    fn section_header(
        &mut self,
        body: &[u8],
        big: bool,
        offset: u64,
    ) -> Result<Block, Box<Damage>> {
        let (Some(major), Some(minor)) = (read_u16_at(body, 4, big), read_u16_at(body, 6, big))
        else {
            let kind = too_short(SHB_TYPE, body, 16);
            return Err(Damage::fatal(kind, offset));
        };
        if major != 1 {
            return Err(Damage::fatal(ErrorKind::UnsupportedVersion { major, minor }, offset));
        }
        if self.seen_section {
            self.section += 1;
        }
        self.seen_section = true;
        self.big_endian = big;
        self.section_start = self.interfaces.len();
        Ok(Block::Other)
    }

    /// An interface: link type, snap length, and the two options that change timestamps.
    fn interface(&mut self, body: &[u8], big: bool, offset: u64) -> Result<Block, Box<Damage>> {
        if self.interfaces.len() >= MAX_INTERFACES as usize {
            let kind = ErrorKind::TooManyInterfaces { limit: MAX_INTERFACES };
            return Err(Damage::skipped(kind, offset, false));
        }
        let (Some(link), Some(snaplen)) = (read_u16_at(body, 0, big), read_u32_at(body, 4, big))
        else {
            // Keep the numbering of later interfaces right; frames on this one get a clear
            // "unsupported link type" from l2_start.
            self.push_interface(LinkType::Other(u32::MAX), 0, None, None, offset);
            return Err(Damage::skipped(too_short(IDB_TYPE, body, 8), offset, false));
        };
        let (tsresol, tsoffset) = scan_options(body.get(8..).unwrap_or_default(), big);
        let link_type = LinkType::from_code(u32::from(link));
        self.push_interface(link_type, snaplen, tsresol, tsoffset, offset);
        Ok(Block::Other)
    }

    fn push_interface(
        &mut self,
        link_type: LinkType,
        snaplen: u32,
        tsresol: Option<u8>,
        tsoffset: Option<i64>,
        offset: u64,
    ) {
        let resolution = tsresol.map_or(TsResolution::MICRO, TsResolution::from_if_tsresol);
        let ts_offset_s = tsoffset.unwrap_or(0);
        let no_report = snaplen == 0 || self.snaplen_reported;
        self.interfaces.push(Interface {
            link_type,
            snaplen,
            resolution,
            ts_offset_s,
            section: self.section,
            offset,
            conv: TsConv::from_resolution(resolution, ts_offset_s),
            report_caplen_above: if no_report { u32::MAX } else { snaplen },
            ts_reported: false,
        });
    }

    /// The interface `id` of the current section, with its global index.
    #[inline]
    fn lookup(&self, id: u32, offset: u64) -> Result<(usize, Interface), Box<Damage>> {
        let section = self.interfaces.get(self.section_start..).unwrap_or_default();
        match section.get(id as usize) {
            Some(interface) => Ok((self.section_start + id as usize, *interface)),
            None => {
                let defined = section.len() as u32;
                Err(Damage::skipped(
                    ErrorKind::UnknownInterface { interface: id, defined },
                    offset,
                    true,
                ))
            }
        }
    }

    /// EPB and the obsolete PB: interface, 64-bit timestamp, lengths, data.
    #[inline]
    fn packet(
        &mut self,
        block_type: u32,
        body: &[u8],
        big: bool,
        offset: u64,
    ) -> Result<Block, Box<Damage>> {
        let Some(fields) = body.first_chunk::<PACKET_FIELDS>() else {
            return Err(Damage::skipped(
                too_short(block_type, body, PACKET_FIELDS as u32),
                offset,
                true,
            ));
        };
        let id = if block_type == PB_TYPE {
            u32::from(read_u16([fields[0], fields[1]], big))
        } else {
            read_u32([fields[0], fields[1], fields[2], fields[3]], big)
        };
        let ts_high = read_u32([fields[4], fields[5], fields[6], fields[7]], big);
        let ts_low = read_u32([fields[8], fields[9], fields[10], fields[11]], big);
        let caplen = read_u32([fields[12], fields[13], fields[14], fields[15]], big);
        let len = read_u32([fields[16], fields[17], fields[18], fields[19]], big);
        let room = (body.len() - PACKET_FIELDS) as u32;
        if caplen > room {
            return Err(Damage::skipped(
                ErrorKind::CaptureLengthPastBlock { caplen, room },
                offset,
                true,
            ));
        }
        let (global, interface) = self.lookup(id, offset)?;
        if caplen > interface.report_caplen_above {
            return Err(self.snaplen_exceeded(caplen, interface.snaplen, global, offset));
        }
        let ticks = (u64::from(ts_high) << 32) | u64::from(ts_low);
        let ts_ns = match interface.conv.to_ns(ticks) {
            Some(ns) => ns,
            None if interface.ts_reported => interface.conv.saturating_ns(ticks),
            None => return Err(self.timestamp_out_of_range(ticks, &interface, global, offset)),
        };
        Ok(Block::Packet(Rec {
            offset,
            data_at: BODY_AT + PACKET_FIELDS,
            caplen,
            len,
            ts_ns,
            interface: global as u32,
            link_type: interface.link_type,
        }))
    }

    /// The capture's one warning about a packet above its interface's snap length; no later
    /// packet of any interface is reported.
    #[cold]
    fn snaplen_exceeded(
        &mut self,
        caplen: u32,
        snaplen: u32,
        global: usize,
        offset: u64,
    ) -> Box<Damage> {
        self.snaplen_reported = true;
        for interface in &mut self.interfaces {
            interface.report_caplen_above = u32::MAX;
        }
        let interface = Some(global as u32);
        Damage::warning(ErrorKind::RecordExceedsSnapLen { caplen, snaplen, interface }, offset)
    }

    /// The interface's one warning about a timestamp out of range; later ones saturate.
    #[cold]
    fn timestamp_out_of_range(
        &mut self,
        ticks: u64,
        interface: &Interface,
        global: usize,
        offset: u64,
    ) -> Box<Damage> {
        if let Some(i) = self.interfaces.get_mut(global) {
            i.ts_reported = true;
        }
        Damage::warning(
            ErrorKind::TimestampOutOfRange {
                interface: global as u32,
                idb_offset: interface.offset,
                ticks,
                resolution: interface.resolution,
                ts_offset_s: interface.ts_offset_s,
                saturated_ns: interface.conv.saturating_ns(ticks),
            },
            offset,
        )
    }

    /// SPB: original length and data only; interface 0, no timestamp (reported as 0). The
    /// captured length is what the block holds, capped by the interface's snap length.
    fn simple_packet(&self, body: &[u8], big: bool, offset: u64) -> Result<Block, Box<Damage>> {
        let Some(len) = read_u32_at(body, 0, big) else {
            return Err(Damage::skipped(too_short(SPB_TYPE, body, 4), offset, true));
        };
        let (global, interface) = self.lookup(0, offset)?;
        let room = (body.len() - 4) as u32;
        let mut caplen = len.min(room);
        if interface.snaplen != 0 {
            caplen = caplen.min(interface.snaplen);
        }
        Ok(Block::Packet(Rec {
            offset,
            data_at: BODY_AT + 4,
            caplen,
            len,
            ts_ns: 0,
            interface: global as u32,
            link_type: interface.link_type,
        }))
    }
}

/// Length checks that must pass before the block is read: otherwise the next block cannot
/// be found, so these end iteration.
fn check_length(block_type: u32, length: u32, offset: u64) -> Result<(), Box<Damage>> {
    let kind = if length < BLOCK_OVERHEAD as u32 {
        ErrorKind::BlockTooShort { block_type, length }
    } else if !length.is_multiple_of(4) {
        ErrorKind::BlockMisaligned { block_type, length }
    } else if length > MAX_BLOCK_LEN {
        ErrorKind::BlockTooLong { block_type, length }
    } else {
        return Ok(());
    };
    Err(Damage::fatal(kind, offset))
}

fn too_short(block_type: u32, body: &[u8], needed: u32) -> ErrorKind {
    ErrorKind::BlockBodyTooShort { block_type, body: body.len() as u32, needed }
}

/// Finds `if_tsresol` (code 9) and `if_tsoffset` (code 14) in an IDB's options. Malformed
/// options end the scan quietly: they only lose these two values, not the packets.
fn scan_options(mut options: &[u8], big: bool) -> (Option<u8>, Option<i64>) {
    let (mut tsresol, mut tsoffset) = (None, None);
    while let Some((header, rest)) = options.split_first_chunk::<4>() {
        let code = read_u16([header[0], header[1]], big);
        let len = usize::from(read_u16([header[2], header[3]], big));
        if code == 0 {
            break;
        }
        let Some(value) = rest.get(..len) else { break };
        match (code, value) {
            (9, [resol]) => tsresol = Some(*resol),
            (14, v) => {
                if let Some(bytes) = v.first_chunk::<8>().filter(|_| v.len() == 8) {
                    tsoffset = Some(if big {
                        i64::from_be_bytes(*bytes)
                    } else {
                        i64::from_le_bytes(*bytes)
                    });
                }
            }
            _ => {}
        }
        options = rest.get(len.next_multiple_of(4)..).unwrap_or_default();
    }
    (tsresol, tsoffset)
}

#[inline]
fn read_u32(bytes: [u8; 4], big: bool) -> u32 {
    if big {
        u32::from_be_bytes(bytes)
    } else {
        u32::from_le_bytes(bytes)
    }
}

#[inline]
fn read_u16(bytes: [u8; 2], big: bool) -> u16 {
    if big {
        u16::from_be_bytes(bytes)
    } else {
        u16::from_le_bytes(bytes)
    }
}

fn read_u32_at(body: &[u8], at: usize, big: bool) -> Option<u32> {
    body.get(at..).and_then(|b| b.first_chunk::<4>()).map(|b| read_u32(*b, big))
}

fn read_u16_at(body: &[u8], at: usize, big: bool) -> Option<u16> {
    body.get(at..).and_then(|b| b.first_chunk::<2>()).map(|b| read_u16(*b, big))
}
