//! The RoCE transport part of a packet: BTH, the extended headers the opcode table lists,
//! payload, pad and ICRC, with the problems found on the way; for a UD SEND to QP1, the MAD,
//! decoded here once so that every consumer (dissector, statistics, checker, C callers) reads
//! the same result and the MAD's problems are the packet's.

use crate::cm::{self, Mad, GSI_QKEY};
use crate::error::{Error, Layer};
use crate::headers::{Bth, BthRepr, ExtHeaders, GrhRepr};
use crate::icrc::{self, IcrcNetwork, IcrcStatus};
use crate::opcode::{self, OpcodeInfo, Operation, PayloadRule, Transport};
use crate::problems::{Problem, Problems};
use crate::segments::Source;

/// ICRC length.
pub const ICRC_LEN: usize = 4;
/// Body of a CNP after the BTH.
pub const CNP_BODY_LEN: usize = 16;

/// RoCE version of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum RoceVersion {
    /// EtherType 0x8915, GRH.
    V1,
    /// UDP destination port 4791 (or the configured one).
    V2,
    /// Not RoCE: a native InfiniBand packet, the same transport after an LRH (and a GRH
    /// when routed) instead of Ethernet ([`crate::parse_infiniband`]).
    Infiniband,
}

impl RoceVersion {
    /// 1 or 2; 0 for native InfiniBand.
    pub const fn number(self) -> u8 {
        match self {
            RoceVersion::V1 => 1,
            RoceVersion::V2 => 2,
            RoceVersion::Infiniband => 0,
        }
    }
}

/// A parsed RoCE packet, borrowing its payload from the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roce<'a> {
    /// RoCEv1 (GRH over Ethernet) or RoCEv2 (UDP).
    pub version: RoceVersion,
    /// The GRH of a RoCEv1 packet.
    pub grh: Option<GrhRepr>,
    /// Offset of the BTH in the input handed to the parser.
    pub bth_offset: usize,
    /// The Base Transport Header.
    pub bth: BthRepr,
    /// The opcode's table row; `None` for reserved and manufacturer-specific opcodes.
    pub info: Option<&'static OpcodeInfo>,
    /// The extended headers present (those the opcode lists and the packet holds).
    pub headers: ExtHeaders,
    /// Payload bytes captured (shorter than `payload_len` when the frame is truncated).
    pub payload: &'a [u8],
    /// Payload length the packet's lengths announce (UDP or GRH length minus headers, pad and
    /// ICRC); 0 when the lengths are too short even for the headers.
    pub payload_len: usize,
    /// Pad bytes captured.
    pub pad: &'a [u8],
    /// For opcodes the table does not define: the bytes after the BTH up to the ICRC.
    pub opaque: &'a [u8],
    /// The ICRC as stored (little-endian u32 of the last four bytes), if captured.
    pub icrc: Option<u32>,
    /// The outcome of the ICRC check.
    pub icrc_status: IcrcStatus,
    /// The MAD of a UD SEND to QP1, decoded once by the parser ([`Roce::mad`]).
    pub(crate) mad: Option<Result<Mad<'a>, Error>>,
    /// Captured lengths of payload, pad and opaque bytes: the lengths of those slices, except
    /// in a segmented parse ([`crate::segments`]), where the slices are empty when the bytes
    /// lie outside the contiguous head.
    pub(crate) captured: Captured,
    /// The payload's CRC-32, when a thread that read the bytes gave it ([`Roce::payload_crc32`]).
    pub(crate) payload_crc: PayloadCrc,
}

/// The CRC-32 of a packet's captured payload, computed where the frame was read and given
/// with [`crate::Checksums::apply`]: a cache, so it takes no part in comparing packets (a
/// packet given it equals the same packet without it) and shows as its value or `None`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PayloadCrc(pub(crate) Option<u32>);

impl PartialEq for PayloadCrc {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for PayloadCrc {}

/// Captured lengths of the parts of a [`Roce`] that may lie outside a segmented parse's head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Captured {
    pub payload: usize,
    pub pad: usize,
    pub opaque: usize,
}

impl<'a> Roce<'a> {
    /// The opcode name: the table's, or `<TRANSPORT>_RESERVED` / `VENDOR_SPECIFIC`.
    pub fn opcode_name(&self) -> &'static str {
        opcode::name(self.bth.opcode)
    }

    /// The transport of the opcode (bits 7..5), defined in the table or not.
    pub fn transport(&self) -> Transport {
        Transport::of(self.bth.opcode)
    }

    /// Whether this is a UD SEND to QP1 (a MAD for the General Services Interface, CM).
    pub fn is_gsi_mad(&self) -> bool {
        matches!(self.bth.opcode, 0x64 | 0x65) && self.bth.dest_qp == crate::cm::QP1
    }

    /// Whether this is a UD SEND to QP0 or QP1: a MAD, of subnet management (SMPs, to QP0)
    /// or of the General Services Interface (CM, SA, ... to QP1).
    pub fn is_mad(&self) -> bool {
        matches!(self.bth.opcode, 0x64 | 0x65) && self.bth.dest_qp <= crate::cm::QP1
    }

    /// The MAD of a UD SEND to QP0 or QP1 (CM messages, or the MAD header of other management
    /// classes); `None` for other packets. The parser decoded it once, while parsing the
    /// packet, and merged its problems into the packet's: this returns that result, it does
    /// not decode again. `Err` when the payload is shorter than the 24-byte MAD header.
    #[inline]
    pub fn mad(&self) -> Option<Result<Mad<'a>, Error>> {
        self.mad
    }

    /// Payload bytes captured: `payload.len()`, also in a segmented parse where `payload`
    /// is empty because the payload is not in the head (offset `bth_offset + header_len`).
    #[inline]
    pub fn payload_captured(&self) -> usize {
        self.captured.payload
    }

    /// Pad bytes captured (`pad.len()`, as [`Roce::payload_captured`]).
    #[inline]
    pub fn pad_captured(&self) -> usize {
        self.captured.pad
    }

    /// Opaque bytes captured (`opaque.len()`, as [`Roce::payload_captured`]; offset
    /// `bth_offset + 12`).
    #[inline]
    pub fn opaque_captured(&self) -> usize {
        self.captured.opaque
    }

    /// Bytes from the BTH to the payload (the opcode table's header length; 12, the BTH,
    /// for opcodes it does not define).
    #[inline]
    pub fn header_len(&self) -> usize {
        self.info.map_or(BthRepr::LEN, |i| usize::from(i.header_len))
    }

    /// The CRC-32 (IEEE, as `crc32fast::hash`) of the captured payload: what a consumer
    /// that compares payloads keys them by (the checker's REQ-RETX-SAME holds a
    /// retransmission to its original's). Computed here over `payload`, unless the packet
    /// was given it by the thread that read the frame ([`crate::Checksums::with_payload_crc`]
    /// and [`crate::Checksums::apply`]), where the bytes were still in that core's cache.
    #[inline]
    pub fn payload_crc32(&self) -> u32 {
        match self.payload_crc.0 {
            Some(crc) => crc,
            None => crc32fast::hash(self.payload),
        }
    }
}

/// Where the transport bytes sit, for the ICRC.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Framing<'a> {
    pub version: RoceVersion,
    pub grh: Option<GrhRepr>,
    /// Network header and UDP header to cover; `None` when they are not known.
    pub icrc_net: Option<(IcrcNetwork<'a>, &'a [u8])>,
    /// When the network header, UDP header and transport lie back to back in the input: the
    /// input from the network header on, for the one-pass ICRC (`compute_icrc_span`).
    pub icrc_span: Option<&'a [u8]>,
    /// Offset of the BTH in the input (for error offsets).
    pub base: usize,
    /// Length of the transport part (BTH .. ICRC inclusive) as the lengths announce it.
    pub claimed_len: usize,
    pub verify_icrc: bool,
}

/// Parses the transport part into `slot` (in place: a `Roce` is a few hundred bytes, and
/// returning it by value cost a copy per frame). `seg` holds the captured bytes from the BTH
/// on (possibly more than `claimed_len`, e.g. Ethernet padding, which is ignored; or fewer,
/// when truncated). Returns, when the capture ends inside a header, where it stopped; `Err`
/// (and `slot` left alone) when even the BTH is incomplete.
#[inline(always)]
pub(crate) fn parse_transport<'a, S: Source>(
    seg: &'a [u8],
    f: &Framing<'a>,
    problems: &mut Problems,
    slot: &mut Option<Roce<'a>>,
    t: S,
) -> Result<Option<Error>, Error> {
    let Some(bth_bytes) = seg.first_chunk::<{ BthRepr::LEN }>() else {
        return Err(Error::truncated(Layer::Bth, f.base, BthRepr::LEN, seg.len()));
    };
    let bth = BthRepr::parse(&Bth::new_unchecked(bth_bytes));
    let claimed = f.claimed_len;
    // The input from the BTH on: `seg` in a contiguous parse; in a segmented one, `seg` is
    // the part in the head and `t` knows the rest.
    let seg_len = t.rest_len(seg, f.base);
    let truncated = seg_len < claimed;
    // Bytes that really belong to the packet and were captured (`avail_len` of them; `avail`
    // is cut at the head's end in a segmented parse).
    let avail_len = claimed.min(seg_len);
    let avail = seg.get(..avail_len).unwrap_or(seg);
    // Problems gather in a register and reach the caller's set once, at the end.
    let mut found = Problems::NONE;
    found.flag(truncated, Problem::Truncated);
    found.flag(bth.tver != 0, Problem::TverNonZero);
    found.flag(bth.resv6 != 0 || bth.resv7 != 0, Problem::ReservedBits);

    let info = opcode::lookup(bth.opcode);
    // The ICRC closes every RoCE packet, whatever the opcode.
    // (Not inside the BTH: a packet with no room for it after the BTH has no ICRC.)
    let icrc_at = claimed.checked_sub(ICRC_LEN).filter(|&at| at >= BthRepr::LEN);
    found.flag(icrc_at.is_none(), Problem::ShortForIcrc);
    let icrc = icrc_at
        .and_then(|at| match seg.get(at..).and_then(|s| s.first_chunk::<ICRC_LEN>()) {
            Some(b) => Some(*b),
            None => t.read::<ICRC_LEN>(f.base + at),
        })
        .map(u32::from_le_bytes);
    let roce = slot.insert(Roce {
        version: f.version,
        grh: f.grh,
        bth_offset: f.base,
        bth,
        info,
        headers: ExtHeaders::default(),
        payload: &[],
        payload_len: 0,
        pad: &[],
        opaque: &[],
        icrc,
        icrc_status: IcrcStatus::NotChecked,
        mad: None,
        captured: Captured::default(),
        payload_crc: PayloadCrc::default(),
    });
    let mut stop = None;

    match info {
        None => {
            let p =
                if bth.opcode >= 0xC0 { Problem::VendorOpcode } else { Problem::ReservedOpcode };
            found.insert(p);
            let end = icrc_at.unwrap_or(0).max(BthRepr::LEN).min(avail_len);
            roce.captured.opaque = end.saturating_sub(BthRepr::LEN);
            roce.opaque = avail.get(BthRepr::LEN..end).unwrap_or(&[]);
        }
        Some(info) => {
            let hl = usize::from(info.header_len);
            let mut at = BthRepr::LEN;
            let mut reserved = false;
            for &h in info.headers {
                let bytes = avail.get(at..).unwrap_or(&[]);
                let Some(set) = roce.headers.parse_one(h, bytes) else {
                    if claimed < hl + ICRC_LEN {
                        found.insert(Problem::ShortForOpcode);
                    }
                    stop = Some(Error::truncated(h.layer(), f.base + at, h.len(), bytes.len()));
                    break;
                };
                reserved |= set;
                at += h.len();
            }
            found.flag(reserved, Problem::ReservedBits);
            let padcnt = usize::from(bth.padcnt);
            match claimed.checked_sub(hl + padcnt + ICRC_LEN) {
                Some(len) => {
                    roce.payload_len = len;
                    let end = (hl + len).min(avail_len);
                    let start = hl.min(end);
                    roce.captured.payload = end - start;
                    roce.payload = avail.get(start..end).unwrap_or(&[]);
                    let pad_end = (hl + len + padcnt).min(avail_len);
                    roce.captured.pad = pad_end - end.min(pad_end);
                    roce.pad = avail.get(end.min(pad_end)..pad_end).unwrap_or(&[]);
                    let pad_nonzero = if roce.pad.len() == roce.captured.pad {
                        roce.pad.iter().any(|&b| b != 0)
                    } else {
                        t.any_nonzero(f.base + end, f.base + pad_end)
                    };
                    found.flag(pad_nonzero, Problem::PadNonZero);
                    found.flag((len + padcnt) % 4 != 0, Problem::PadCntInconsistent);
                }
                None => {
                    if claimed >= hl + ICRC_LEN {
                        // Headers fit but PadCnt eats into them.
                        found.insert(Problem::PadCntInconsistent);
                    } else {
                        found.insert(Problem::ShortForOpcode);
                    }
                }
            }
            check_opcode_rules(info, roce, &mut found, f.base, t);
        }
    }

    if f.verify_icrc {
        roce.icrc_status = match (f.icrc_net, icrc_at) {
            (_, None) => IcrcStatus::Unverifiable,
            _ if truncated => IcrcStatus::Unverifiable,
            (None, Some(_)) => IcrcStatus::NotChecked,
            (Some((net, udp)), Some(at)) => {
                let before_bth = net.header().len() + udp.len();
                let computed = match f.icrc_span.and_then(|s| s.get(..before_bth + at)) {
                    Some(span) => icrc::compute_icrc_span(net, span),
                    // Segmented, and the ICRC's bytes reach past the head: streamed over the
                    // segments.
                    None if S::SEGMENTED => {
                        let from = f.base - before_bth.min(f.base);
                        match f.icrc_span {
                            Some(span) => icrc::compute_span_segments(net, span, |h, k| {
                                t.feed(h, from + k, f.base + at);
                            }),
                            None => icrc::compute_segments(net, udp, avail, |h| {
                                t.feed(h, f.base + BthRepr::LEN, f.base + at);
                            }),
                        }
                    }
                    None => icrc::compute_icrc(net, udp, avail.get(..at).unwrap_or(&[])),
                };
                if Some(computed) == roce.icrc {
                    IcrcStatus::Ok
                } else {
                    IcrcStatus::Bad { computed }
                }
            }
        };
        found.flag(matches!(roce.icrc_status, IcrcStatus::Bad { .. }), Problem::IcrcBad);
    }
    problems.union(found);
    Ok(stop)
}

/// Decodes the MAD of a UD SEND to QP1, once per packet, for every consumer: the result is
/// kept in the packet ([`Roce::mad`]) and the MAD's problems join the packet's. Out of line:
/// MADs are rare, and the common path stays small.
#[cold]
#[inline(never)]
fn decode_mad(roce: &mut Roce<'_>, problems: &mut Problems) {
    let mad = cm::parse_mad(roce.payload);
    if let Ok(m) = &mad {
        problems.union(m.problems);
    }
    roce.mad = Some(mad);
}

/// Problems the opcode table lets us see on a single packet; and, for a UD packet to QP1, the
/// MAD it carries.
#[inline]
fn check_opcode_rules<S: Source>(
    info: &OpcodeInfo,
    roce: &mut Roce<'_>,
    problems: &mut Problems,
    base: usize,
    t: S,
) {
    // In a segmented parse, a payload that reaches past the head is read from the segments.
    let in_head = roce.payload.len() == roce.captured.payload;
    let len = roce.payload_len;
    match info.payload {
        PayloadRule::Empty => problems.flag(len > 0, Problem::UnexpectedPayload),
        PayloadRule::Exactly(n) if info.operation == Operation::AtomicWrite => {
            problems.flag(len != usize::from(n), Problem::AtomicWriteLength)
        }
        _ => {}
    }
    if info.operation == Operation::Cnp {
        problems.flag(len != CNP_BODY_LEN, Problem::CnpLength);
        problems.flag(!roce.bth.becn, Problem::CnpBecnClear);
        problems.flag(roce.bth.psn != 0, Problem::CnpPsnNonZero);
        let nonzero = if in_head {
            roce.payload.iter().any(|&b| b != 0)
        } else {
            let start = base + roce.header_len();
            t.any_nonzero(start, start + roce.captured.payload)
        };
        problems.flag(nonzero, Problem::ReservedBits);
    }
    if info.transport == Transport::Rd {
        // Mellanox DC reuses the RD opcodes with a header layout of its own; RD proper keeps
        // the RDETH/DETH reserved bytes zero, so a non-zero one says "not RD".
        let rd_misfit = roce.headers.rdeth.is_some_and(|h| h.reserved != 0)
            || roce.headers.deth.is_some_and(|h| h.reserved != 0);
        problems.flag(rd_misfit, Problem::RdLayoutMismatch);
    }
    if info.transport == Transport::Ud && roce.bth.dest_qp <= cm::QP1 {
        // UD SEND_ONLY and SEND_ONLY_WITH_IMMEDIATE are the table's only UD opcodes: this is
        // `Roce::is_mad`, tested where the transport is known already. QP1 (GSI) takes the
        // well-known Q_Key; QP0 (subnet management) takes any.
        if let (Some(deth), cm::QP1) = (roce.headers.deth, roce.bth.dest_qp) {
            problems.flag(deth.qkey != GSI_QKEY, Problem::Qp1QKey);
        }
        if in_head {
            decode_mad(roce, problems);
        }
        // Else the segmented parse decodes it from a copy (`segments::finish_mad`).
    }
}
