//! Frames held in several pieces (a DPDK mbuf chain, an iovec): parsed where they lie.
//!
//! [`parse_ethernet_segments`] gives the result [`parse_ethernet_into`](crate::parse_ethernet_into)
//! gives for the same bytes laid end to end, without joining them. The headers are parsed from a
//! contiguous *head*: the first segment when it holds the first 256 bytes of the frame (or the
//! whole frame), else a copy of those bytes in the caller's [`SegmentScratch`]. Only when the
//! headers reach past that (long IPv6 extension chains) is a longer head copied, up to
//! [`SEGMENT_HEAD_MAX`] bytes. The rest is read where it lies: the ICRC is streamed over the
//! segments (crc32fast is fed piece by piece, so the masked-prefix trick of [`crate::icrc`]
//! works unchanged), the pad and a CNP's reserved body are checked in place, and the ICRC field is
//! read across a boundary if it straddles one. The one copy of payload is a MAD's first 256
//! bytes, when a UD packet to QP1 reaches past the head (the CM decoder reads a contiguous
//! MAD).

use crate::cm::{self, MAD_LEN};
use crate::error::{Error, ErrorKind, Result};
use crate::opcode::Transport;
use crate::packet::{parse_ethernet_head, Config, Packet};

/// The head is the first segment when it holds this many bytes of the frame (or all of it);
/// else this many bytes are copied. Covers every header but long IPv6 extension chains
/// (14 Ethernet + 36 VLAN + 60 IPv4 + 8 UDP + 52 BTH and extended headers = 170).
pub const SEGMENT_HEAD_MIN: usize = 256;
/// The longest head copied, for headers beyond [`SEGMENT_HEAD_MIN`] bytes (IPv6 extension headers).
/// Headers reaching past it give [`ErrorKind::BufferTooSmall`]: parse such a frame contiguously.
pub const SEGMENT_HEAD_MAX: usize = 2048;

/// Stack room for a segmented parse: the head copies and a MAD copy (2.5 KiB).
#[derive(Debug, Clone)]
pub struct SegmentScratch {
    small: [u8; SEGMENT_HEAD_MIN],
    big: [u8; SEGMENT_HEAD_MAX],
    mad: [u8; MAD_LEN],
}

impl Default for SegmentScratch {
    fn default() -> Self {
        SegmentScratch {
            small: [0; SEGMENT_HEAD_MIN],
            big: [0; SEGMENT_HEAD_MAX],
            mad: [0; MAD_LEN],
        }
    }
}

/// The result of [`parse_ethernet_segments`].
///
/// `packet` is what the contiguous parse of the joined frame gives, with one difference:
/// `packet.data` is the head (the frame's first bytes, not all of them), and the `payload`,
/// `pad` and `opaque` slices of `packet.roce` are empty when those bytes are not all in the
/// head; their lengths are always [`Roce::payload_captured`](crate::Roce::payload_captured)
/// and the like, and [`Segmented::pieces`] gives the bytes where they lie. Offsets are
/// offsets in the frame.
#[derive(Debug, Clone, Copy)]
pub struct Segmented<'a> {
    /// The parse of the joined frame (`data` is the head only).
    pub packet: Packet<'a>,
    /// The frame's length (all segments).
    pub len: usize,
    segs: &'a [&'a [u8]],
}

impl<'a> Segmented<'a> {
    /// The frame's bytes `start..end`, as sub-slices of the segments, in order.
    pub fn pieces(&self, start: usize, end: usize) -> Pieces<'a> {
        Segs(self.segs).pieces(start, end)
    }

    /// The captured payload, as sub-slices of the segments (empty for a packet without RoCE).
    pub fn payload_pieces(&self) -> Pieces<'a> {
        match &self.packet.roce {
            Some(r) => {
                let start = r.bth_offset + r.header_len();
                self.pieces(start, start + r.payload_captured())
            }
            None => self.pieces(0, 0),
        }
    }
}

/// Parses an Ethernet frame given as consecutive segments (empty segments are allowed) with
/// the result the contiguous parse of their concatenation gives (see [`Segmented`]).
///
/// Errors as [`parse_ethernet`](crate::parse_ethernet), plus `BufferTooSmall` when the
/// headers reach past the first [`SEGMENT_HEAD_MAX`] bytes and the frame is longer than that.
pub fn parse_ethernet_segments<'a>(
    segs: &'a [&'a [u8]],
    cfg: &Config,
    scratch: &'a mut SegmentScratch,
) -> Result<Segmented<'a>> {
    let len = segs.iter().fold(0usize, |n, s| n.saturating_add(s.len()));
    let SegmentScratch { small, big, mad } = scratch;
    let first = segs.iter().copied().find(|s| !s.is_empty()).unwrap_or(&[]);
    let mut packet = Packet::default();
    // One segment holding the frame (the common case) is parsed as contiguous.
    if first.len() == len {
        parse_ethernet_head(first, cfg, &mut packet, Whole)?;
        return Ok(Segmented { packet, len, segs });
    }
    let t = Tail { len, segs: Segs(segs) };
    let want = len.min(SEGMENT_HEAD_MIN);
    let head: &'a [u8] = if first.len() >= want { first } else { copy(segs, small, want) };
    let mut res = parse_ethernet_head(head, cfg, &mut packet, t);
    if head.len() < len && needs_more(&res, &packet) {
        let mut head_len = head.len();
        let want = len.min(SEGMENT_HEAD_MAX);
        if want > head_len {
            let head = copy(segs, big, want);
            res = parse_ethernet_head(head, cfg, &mut packet, t);
            head_len = head.len();
        }
        // Still cut by the head's end (also a first segment longer than SEGMENT_HEAD_MAX that ends
        // inside the headers): what follows is not in the head, so the contiguous parse's
        // answer cannot be given.
        if head_len < len {
            if let Some(e) = cut_at_head(&res, &packet, head_len) {
                return Err(Error::buffer_too_small(
                    e.layer,
                    e.offset + e.needed,
                    SEGMENT_HEAD_MAX,
                ));
            }
        }
    }
    res?;
    finish_mad(&mut packet, Segs(segs), mad);
    Ok(Segmented { packet, len, segs })
}

/// The truncation error of a parse, if any.
fn truncation(res: &Result<()>, p: &Packet<'_>) -> Option<Error> {
    let e = match res {
        Err(e) => *e,
        Ok(()) => p.stop?,
    };
    (e.kind == ErrorKind::Truncated).then_some(e)
}

/// Whether a parse over a head shorter than the frame may have run out of head: any
/// truncation (a longer head settles it).
fn needs_more(res: &Result<()>, p: &Packet<'_>) -> bool {
    truncation(res, p).is_some()
}

/// The truncation that a head of `head` bytes caused: a header that needed bytes past it.
fn cut_at_head(res: &Result<()>, p: &Packet<'_>, head: usize) -> Option<Error> {
    truncation(res, p).filter(|e| e.offset.saturating_add(e.needed) > head)
}

/// Copies the frame's first `want` bytes into `buf` (`want <= buf.len()`).
fn copy<'b>(segs: &[&[u8]], buf: &'b mut [u8], want: usize) -> &'b [u8] {
    let mut n = 0;
    for piece in Segs(segs).pieces(0, want) {
        if let Some(dst) = buf.get_mut(n..n + piece.len()) {
            dst.copy_from_slice(piece);
        }
        n += piece.len();
    }
    buf.get(..n.min(want)).unwrap_or(&[])
}

/// The MAD of a UD packet to QP0 or QP1 whose payload reached past the head: decoded from a copy of
/// its first 256 bytes (all the decoder reads), as the contiguous parse decodes it.
fn finish_mad<'a>(p: &mut Packet<'a>, segs: Segs<'a>, buf: &'a mut [u8; MAD_LEN]) {
    let Some(r) = p.roce.as_mut() else { return };
    let gsi = r.info.is_some_and(|i| i.transport == Transport::Ud) && r.bth.dest_qp <= cm::QP1;
    if !gsi || r.mad.is_some() {
        return;
    }
    let start = r.bth_offset + r.header_len();
    let n = copy_range(segs, buf, start, start + r.payload_captured().min(MAD_LEN));
    let mad = cm::parse_mad(buf.get(..n).unwrap_or(&[]));
    if let Ok(m) = &mad {
        p.problems.union(m.problems);
    }
    r.mad = Some(mad);
}

fn copy_range(segs: Segs<'_>, buf: &mut [u8], start: usize, end: usize) -> usize {
    let mut n = 0;
    for piece in segs.pieces(start, end) {
        if let Some(dst) = buf.get_mut(n..n + piece.len()) {
            dst.copy_from_slice(piece);
            n += piece.len();
        }
    }
    n
}

/// What the parser knows of the input beyond the contiguous bytes it parses: nothing
/// ([`Whole`]: they are the input), or its length and segments ([`Tail`]). Generic, so the
/// contiguous parse compiles without a trace of the segmented one.
pub(crate) trait Source: Copy {
    /// The input's length from `off`, where the contiguous bytes from `off` are `rest`.
    fn rest_len(self, rest: &[u8], off: usize) -> usize;
    /// The `N` bytes at `at`, read across segments (`None` past the end or when contiguous).
    fn read<const N: usize>(self, at: usize) -> Option<[u8; N]>;
    /// Whether a byte in `start..end` is not zero (`false` when contiguous: the caller reads
    /// the contiguous bytes itself).
    fn any_nonzero(self, start: usize, end: usize) -> bool;
    /// Whether the input is in segments.
    const SEGMENTED: bool;
    /// Feeds the input's bytes `start..end` to a CRC (nothing when contiguous).
    fn feed(self, h: &mut crc32fast::Hasher, start: usize, end: usize);
}

/// A contiguous input: everything is in the bytes parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Whole;

impl Source for Whole {
    const SEGMENTED: bool = false;
    #[inline(always)]
    fn rest_len(self, rest: &[u8], _off: usize) -> usize {
        rest.len()
    }
    #[inline(always)]
    fn read<const N: usize>(self, _at: usize) -> Option<[u8; N]> {
        None
    }
    #[inline(always)]
    fn any_nonzero(self, _start: usize, _end: usize) -> bool {
        false
    }
    #[inline(always)]
    fn feed(self, _h: &mut crc32fast::Hasher, _start: usize, _end: usize) {}
}

/// A segmented input: its whole length, and its segments.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tail<'s> {
    pub len: usize,
    pub segs: Segs<'s>,
}

impl Source for Tail<'_> {
    const SEGMENTED: bool = true;
    fn rest_len(self, _rest: &[u8], off: usize) -> usize {
        self.len.saturating_sub(off)
    }
    fn read<const N: usize>(self, at: usize) -> Option<[u8; N]> {
        let mut out = [0u8; N];
        let n = copy_range(self.segs, &mut out, at, at.checked_add(N)?);
        (n == N).then_some(out)
    }
    fn any_nonzero(self, start: usize, end: usize) -> bool {
        self.segs.pieces(start, end).any(|p| p.iter().any(|&b| b != 0))
    }
    fn feed(self, h: &mut crc32fast::Hasher, start: usize, end: usize) {
        self.segs.feed(h, start, end);
    }
}

/// The segments of a frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segs<'s>(pub &'s [&'s [u8]]);

impl<'s> Segs<'s> {
    /// The bytes `start..end` of the frame, piece by piece.
    pub fn pieces(self, start: usize, end: usize) -> Pieces<'s> {
        Pieces { segs: self.0.iter(), pos: 0, start, end }
    }

    /// Feeds the bytes `start..end` to a CRC.
    pub fn feed(self, h: &mut crc32fast::Hasher, start: usize, end: usize) {
        for p in self.pieces(start, end) {
            h.update(p);
        }
    }
}

/// The bytes of a range of a segmented frame, as sub-slices of its segments
/// ([`Segmented::pieces`]).
#[derive(Debug, Clone)]
pub struct Pieces<'s> {
    segs: core::slice::Iter<'s, &'s [u8]>,
    /// Frame offset of the next segment's first byte.
    pos: usize,
    start: usize,
    end: usize,
}

impl<'s> Iterator for Pieces<'s> {
    type Item = &'s [u8];

    fn next(&mut self) -> Option<&'s [u8]> {
        while self.pos < self.end {
            let seg = *self.segs.next()?;
            let seg_start = self.pos;
            self.pos += seg.len();
            let from = self.start.max(seg_start) - seg_start;
            let to = self.end.min(self.pos).saturating_sub(seg_start);
            if from < to {
                return seg.get(from..to);
            }
        }
        None
    }
}
