//! Connection management (IBTA Vol. 1 chapter 12): the MAD header, CM messages on QP1 and
//! RDMA-CM IP private data.
//!
//! RC connections are set up by CM MADs sent as UD SEND_ONLY (opcode 0x64) to DestQP 1
//! ([`QP1`]) with the DETH Q_Key 0x80010000 ([`GSI_QKEY`]). The UD payload is one 256-byte MAD
//! ([`MAD_LEN`]): a 24-byte header ([`mad`]) and 232 bytes of class data ([`MAD_DATA_LEN`]),
//! which for the CM class (0x07, class version 2) is one message chosen by the attribute ID:
//! [`req`], [`rep`], [`rtu`], [`rej`], [`mra`], [`dreq`], [`drep`], [`sidr`] (SIDR_REQ and
//! SIDR_REP) and [`lap`] (LAP and APR: communication IDs only). [`rdma_cm`] takes apart the
//! RDMA-CM service ID and the IP header RDMA-CM puts at the start of REQ private data.
//!
//! Each message has, in the smoltcp style, a zero-copy view over the MAD data (`Req<T>`, ...)
//! with a `field` module of byte ranges, getters and (for `T: AsMut<[u8]>`) setters, and a
//! `...Repr` of plain values with `parse`, `emit` and `buffer_len`. Reprs borrow their private
//! data (`&'a [u8]`), so nothing allocates.
//!
//! [`parse_mad`] is the entry point: it fails only when the 24-byte MAD header is missing and
//! otherwise reports [`Problem`]s:
//! - `MadTruncated` when the MAD is shorter than 256 bytes. A CM message is still decoded when
//!   its fixed fields (everything before the private data) are all present, with the private
//!   data (and REJ ARI / SIDR_REP additional info, which belong to the fixed part) cut to what
//!   is there; otherwise `cm` is `None`.
//! - `MadUnknownVersion` when the base version is not 1, or the CM class version is not 2:
//!   the header is decoded, the body is not (`cm` is `None`).
//! - `MadUnknownAttribute` for a CM attribute ID that is not a CM message
//!   (`cm` is `Some(CmMessage::Unknown(id))`).
//!
//! MADs of other classes are decoded to the header (the class is named by [`MgmtClass`]).
//!
//! To build MADs, every repr has `emit_mad(tid, out)` (and [`CmMessage::emit_mad`] /
//! [`CmMessage::emit_mad_with_header`]) writing a whole zero-padded 256-byte MAD. Templates:
//! [`ReqRepr::rdma_cm`], [`RepRepr::reply_to`], [`RtuRepr::new`], [`DreqRepr::new`],
//! [`DrepRepr::new`], [`RejRepr::new`], [`RdmaCmIpHeader::new`].

use core::ops::Range;

use crate::bytes::{set_u8, u8_at};
use crate::error::{Error, Layer, Result};
use crate::problems::{Problem, Problems};

pub mod drep;
pub mod dreq;
mod ids_and_data;
pub mod lap;
pub mod mad;
pub mod mra;
pub mod rdma_cm;
pub mod rej;
pub mod rep;
pub mod req;
pub mod rtu;
pub mod sidr;

pub use drep::{Drep, DrepRepr};
pub use dreq::{Dreq, DreqRepr};
pub use lap::{Apr, AprRepr, Lap, LapRepr};
pub use mad::{
    CmAttribute, MadHeader, MadHeaderRepr, Method, MgmtClass, CM_CLASS_VERSION, MAD_BASE_VERSION,
    MAD_HEADER_LEN,
};
pub use mra::{Mra, MraRepr};
pub use rdma_cm::{PortSpace, RdmaCmHeader, RdmaCmIpHeader, RdmaCmServiceId};
pub use rej::{MessageRef, Rej, RejRepr, RejectReason};
pub use rep::{Rep, RepRepr};
pub use req::{
    gid_to_ip, ip_to_gid, mtu_bytes, mtu_code, CmPath, CmPathView, Req, ReqRepr,
    TransportServiceType,
};
pub use rtu::{Rtu, RtuRepr};
pub use sidr::{SidrRep, SidrRepRepr, SidrReq, SidrReqRepr, SidrStatus};

/// The QP of the General Services Interface, where CM MADs go.
pub const QP1: u32 = 1;
/// The Q_Key of QP1 (the DETH of every CM MAD carries it).
pub const GSI_QKEY: u32 = 0x8001_0000;
/// Length of a MAD.
pub const MAD_LEN: usize = 256;
/// Length of the class data after the MAD header (every CM message is this long).
pub const MAD_DATA_LEN: usize = MAD_LEN - MAD_HEADER_LEN;

/// The bits of byte `at` under `mask`, shifted down.
fn bits(b: &[u8], at: usize, mask: u8) -> u8 {
    (u8_at(b, at) & mask).checked_shr(mask.trailing_zeros()).unwrap_or(0)
}

/// Writes `v` into the bits of byte `at` under `mask`, keeping the other bits.
fn set_bits(b: &mut [u8], at: usize, mask: u8, v: u8) {
    let shifted = v.checked_shl(mask.trailing_zeros()).unwrap_or(0) & mask;
    set_u8(b, at, (u8_at(b, at) & !mask) | shifted);
}

/// The part of `r` inside `b` (empty when `b` ends before `r` starts).
fn clipped(b: &[u8], r: Range<usize>) -> &[u8] {
    let end = r.end.min(b.len());
    b.get(r.start..end).unwrap_or(&[])
}

fn clipped_mut(b: &mut [u8], r: Range<usize>) -> &mut [u8] {
    let end = r.end.min(b.len());
    b.get_mut(r.start..end).unwrap_or(&mut [])
}

/// Copies `src` into the part of field `r` inside `b`, cut at the field's end; the rest of the
/// field is zero.
fn write_clipped(b: &mut [u8], r: Range<usize>, src: &[u8]) {
    for (i, d) in clipped_mut(b, r).iter_mut().enumerate() {
        *d = src.get(i).copied().unwrap_or(0);
    }
}

fn zero_fill(b: &mut [u8], r: Range<usize>) {
    clipped_mut(b, r).fill(0);
}

/// A decoded CM message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum CmMessage<'a> {
    /// REQ (ConnectRequest, attribute 0x0010).
    Req(ReqRepr<'a>),
    /// REP (ConnectReply, 0x0013).
    Rep(RepRepr<'a>),
    /// RTU (ReadyToUse, 0x0014).
    Rtu(RtuRepr<'a>),
    /// REJ (ConnectReject, 0x0012).
    Rej(RejRepr<'a>),
    /// MRA (MsgRcptAck, 0x0011).
    Mra(MraRepr<'a>),
    /// DREQ (DisconnectRequest, 0x0015).
    Dreq(DreqRepr<'a>),
    /// DREP (DisconnectReply, 0x0016).
    Drep(DrepRepr<'a>),
    /// SIDR_REQ (ServiceIDResReq, 0x0017).
    SidrReq(SidrReqRepr<'a>),
    /// SIDR_REP (ServiceIDResReqResp, 0x0018).
    SidrRep(SidrRepRepr<'a>),
    /// Communication IDs only.
    Lap(LapRepr),
    /// Communication IDs only.
    Apr(AprRepr),
    /// Recognised, not decoded.
    ClassPortInfo,
    /// An attribute ID that is not a CM message.
    Unknown(u16),
}

impl<'a> CmMessage<'a> {
    /// The attribute this message is sent as.
    pub const fn attribute(&self) -> CmAttribute {
        match self {
            CmMessage::Req(_) => CmAttribute::Req,
            CmMessage::Rep(_) => CmAttribute::Rep,
            CmMessage::Rtu(_) => CmAttribute::Rtu,
            CmMessage::Rej(_) => CmAttribute::Rej,
            CmMessage::Mra(_) => CmAttribute::Mra,
            CmMessage::Dreq(_) => CmAttribute::Dreq,
            CmMessage::Drep(_) => CmAttribute::Drep,
            CmMessage::SidrReq(_) => CmAttribute::SidrReq,
            CmMessage::SidrRep(_) => CmAttribute::SidrRep,
            CmMessage::Lap(_) => CmAttribute::Lap,
            CmMessage::Apr(_) => CmAttribute::Apr,
            CmMessage::ClassPortInfo => CmAttribute::ClassPortInfo,
            CmMessage::Unknown(id) => CmAttribute::Unknown(*id),
        }
    }

    /// The short name ("REQ", "REP", ...).
    pub const fn name(&self) -> &'static str {
        self.attribute().name()
    }

    /// The (local, remote) communication IDs of a connection message (a REQ has no remote
    /// one: 0); `None` for SIDR (which has a request ID instead), ClassPortInfo and unknown
    /// attributes.
    pub const fn comm_ids(&self) -> Option<(u32, u32)> {
        match self {
            CmMessage::Req(m) => Some((m.local_comm_id, 0)),
            CmMessage::Rep(m) => Some((m.local_comm_id, m.remote_comm_id)),
            CmMessage::Rtu(m) => Some((m.local_comm_id, m.remote_comm_id)),
            CmMessage::Rej(m) => Some((m.local_comm_id, m.remote_comm_id)),
            CmMessage::Mra(m) => Some((m.local_comm_id, m.remote_comm_id)),
            CmMessage::Dreq(m) => Some((m.local_comm_id, m.remote_comm_id)),
            CmMessage::Drep(m) => Some((m.local_comm_id, m.remote_comm_id)),
            CmMessage::Lap(m) => Some((m.local_comm_id, m.remote_comm_id)),
            CmMessage::Apr(m) => Some((m.local_comm_id, m.remote_comm_id)),
            CmMessage::SidrReq(_)
            | CmMessage::SidrRep(_)
            | CmMessage::ClassPortInfo
            | CmMessage::Unknown(_) => None,
        }
    }

    /// Decodes the message of `attribute` from the MAD data (`data` starts at MAD byte 24).
    /// Errors (truncated, `Layer::Cm`) when the message's fixed fields are not all present;
    /// variable parts (private data, ARI, additional info) are cut to what `data` holds.
    pub fn parse(attribute: CmAttribute, data: &'a [u8]) -> Result<Self> {
        let data = clipped(data, 0..MAD_DATA_LEN);
        Ok(match attribute {
            CmAttribute::Req => CmMessage::Req(ReqRepr::parse(&Req::new_unchecked(data))?),
            CmAttribute::Rep => CmMessage::Rep(RepRepr::parse(&Rep::new_unchecked(data))?),
            CmAttribute::Rtu => CmMessage::Rtu(RtuRepr::parse(&Rtu::new_unchecked(data))?),
            CmAttribute::Rej => CmMessage::Rej(RejRepr::parse(&Rej::new_unchecked(data))?),
            CmAttribute::Mra => CmMessage::Mra(MraRepr::parse(&Mra::new_unchecked(data))?),
            CmAttribute::Dreq => CmMessage::Dreq(DreqRepr::parse(&Dreq::new_unchecked(data))?),
            CmAttribute::Drep => CmMessage::Drep(DrepRepr::parse(&Drep::new_unchecked(data))?),
            CmAttribute::SidrReq => {
                CmMessage::SidrReq(SidrReqRepr::parse(&SidrReq::new_unchecked(data))?)
            }
            CmAttribute::SidrRep => {
                CmMessage::SidrRep(SidrRepRepr::parse(&SidrRep::new_unchecked(data))?)
            }
            CmAttribute::Lap => CmMessage::Lap(LapRepr::parse(&Lap::new_unchecked(data))?),
            CmAttribute::Apr => CmMessage::Apr(AprRepr::parse(&Apr::new_unchecked(data))?),
            CmAttribute::ClassPortInfo => CmMessage::ClassPortInfo,
            CmAttribute::Unknown(id) => CmMessage::Unknown(id),
        })
    }

    /// Writes the message into the MAD data `data` (232 bytes from MAD byte 24; a shorter
    /// buffer gets what fits). Variable parts longer than their fields are cut; use
    /// [`CmMessage::check_lengths`] to refuse them. ClassPortInfo and unknown attributes
    /// write zeros.
    pub fn emit(&self, data: &mut [u8]) {
        match self {
            CmMessage::Req(m) => m.emit(&mut Req::new_unchecked(data)),
            CmMessage::Rep(m) => m.emit(&mut Rep::new_unchecked(data)),
            CmMessage::Rtu(m) => m.emit(&mut Rtu::new_unchecked(data)),
            CmMessage::Rej(m) => m.emit(&mut Rej::new_unchecked(data)),
            CmMessage::Mra(m) => m.emit(&mut Mra::new_unchecked(data)),
            CmMessage::Dreq(m) => m.emit(&mut Dreq::new_unchecked(data)),
            CmMessage::Drep(m) => m.emit(&mut Drep::new_unchecked(data)),
            CmMessage::SidrReq(m) => m.emit(&mut SidrReq::new_unchecked(data)),
            CmMessage::SidrRep(m) => m.emit(&mut SidrRep::new_unchecked(data)),
            CmMessage::Lap(m) => m.emit(&mut Lap::new_unchecked(data)),
            CmMessage::Apr(m) => m.emit(&mut Apr::new_unchecked(data)),
            CmMessage::ClassPortInfo | CmMessage::Unknown(_) => {
                zero_fill(data, 0..MAD_DATA_LEN);
            }
        }
    }

    /// The bytes `emit` writes: always the whole MAD data (232).
    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// Errors (`BufferTooSmall`, `Layer::Cm`, with the lengths) when a private data, ARI or
    /// additional info slice is longer than its field.
    pub fn check_lengths(&self) -> Result<()> {
        let fits = |v: &[u8], field: Range<usize>| {
            let max = field.end.saturating_sub(field.start);
            if v.len() > max {
                Err(Error::buffer_too_small(Layer::Cm, v.len(), max))
            } else {
                Ok(())
            }
        };
        match self {
            CmMessage::Req(m) => fits(m.private_data, req::field::PRIVATE_DATA),
            CmMessage::Rep(m) => fits(m.private_data, rep::field::PRIVATE_DATA),
            CmMessage::Rtu(m) => fits(m.private_data, rtu::field::PRIVATE_DATA),
            CmMessage::Rej(m) => {
                fits(m.ari, rej::field::ARI)?;
                fits(m.private_data, rej::field::PRIVATE_DATA)
            }
            CmMessage::Mra(m) => fits(m.private_data, mra::field::PRIVATE_DATA),
            CmMessage::Dreq(m) => fits(m.private_data, dreq::field::PRIVATE_DATA),
            CmMessage::Drep(m) => fits(m.private_data, drep::field::PRIVATE_DATA),
            CmMessage::SidrReq(m) => fits(m.private_data, sidr::req_field::PRIVATE_DATA),
            CmMessage::SidrRep(m) => {
                fits(m.additional_info, sidr::rep_field::ADDITIONAL_INFO)?;
                fits(m.private_data, sidr::rep_field::PRIVATE_DATA)
            }
            CmMessage::Lap(_)
            | CmMessage::Apr(_)
            | CmMessage::ClassPortInfo
            | CmMessage::Unknown(_) => Ok(()),
        }
    }

    /// Writes a whole 256-byte MAD: the CM header Linux sends (base version 1, class CM,
    /// class version 2, method Send, this message's attribute ID, transaction ID `tid`), the
    /// message, zeros to byte 256. Returns 256.
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> Result<usize> {
        self.emit_mad_with_header(&MadHeaderRepr::cm(self.attribute(), tid), out)
    }

    /// Writes a whole 256-byte MAD with the header given as is (its attribute ID is not
    /// checked against the message). Errors when `out` is shorter than 256 bytes
    /// (`BufferTooSmall`, `Layer::Mad`) or a variable part is longer than its field
    /// ([`CmMessage::check_lengths`]); `out` is untouched then. Returns 256.
    pub fn emit_mad_with_header(&self, header: &MadHeaderRepr, out: &mut [u8]) -> Result<usize> {
        let available = out.len();
        let (head, data) = match out.get_mut(..MAD_LEN) {
            Some(mad) => mad.split_at_mut(MAD_HEADER_LEN),
            None => return Err(Error::buffer_too_small(Layer::Mad, MAD_LEN, available)),
        };
        self.check_lengths()?;
        head.fill(0);
        header.emit(&mut MadHeader::new_unchecked(head));
        self.emit(data);
        Ok(MAD_LEN)
    }
}

/// A decoded MAD: the header, the CM message when the class is CM, and the problems found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mad<'a> {
    /// The 24-byte MAD header.
    pub header: MadHeaderRepr,
    /// The CM message: `None` for other classes, unknown versions and CM messages whose fixed
    /// fields are cut short.
    pub cm: Option<CmMessage<'a>>,
    /// The MAD's own problems (`MadTruncated`, `MadUnknownVersion`, `MadUnknownAttribute`);
    /// a parsed packet's problems include them.
    pub problems: Problems,
    /// The class data present after the header (up to 232 bytes), for classes not decoded.
    pub data: &'a [u8],
}

impl Mad<'_> {
    /// The CM attribute, when the MAD is of the CM class.
    pub const fn cm_attribute(&self) -> Option<CmAttribute> {
        match self.header.mgmt_class {
            MgmtClass::Cm => Some(self.header.cm_attribute()),
            _ => None,
        }
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Mad<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> core::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct ProblemList(Problems);
        impl serde::Serialize for ProblemList {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> core::result::Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().map(Problem::message))
            }
        }
        let mut st = s.serialize_struct("Mad", 3)?;
        st.serialize_field("header", &self.header)?;
        st.serialize_field("cm", &self.cm)?;
        st.serialize_field("problems", &ProblemList(self.problems))?;
        st.end()
    }
}

/// Decodes a MAD (the payload of a UD SEND to QP1; bytes past 256 are ignored).
///
/// Errors (truncated, `Layer::Mad`, offset 0) only when the 24-byte header is missing; every
/// other defect is a problem in [`Mad::problems`] (see [connection management](crate#connection-management)).
///
/// The frame parser calls this once for every UD SEND to QP1: read its result with
/// [`Roce::mad`](crate::Roce::mad), whose packet's problems already hold the MAD's.
pub fn parse_mad(bytes: &[u8]) -> Result<Mad<'_>> {
    let header = MadHeaderRepr::parse(&MadHeader::new_checked(bytes)?);
    let mad = clipped(bytes, 0..MAD_LEN);
    let data = clipped(mad, MAD_HEADER_LEN..MAD_LEN);
    let mut problems = Problems::NONE;
    problems.flag(mad.len() < MAD_LEN, Problem::MadTruncated);
    let mut out = Mad { header, cm: None, problems, data };
    if header.base_version != MAD_BASE_VERSION {
        out.problems.insert(Problem::MadUnknownVersion);
        return Ok(out);
    }
    if header.mgmt_class != MgmtClass::Cm {
        return Ok(out);
    }
    if header.class_version != CM_CLASS_VERSION {
        out.problems.insert(Problem::MadUnknownVersion);
        return Ok(out);
    }
    let attribute = header.cm_attribute();
    out.problems.flag(matches!(attribute, CmAttribute::Unknown(_)), Problem::MadUnknownAttribute);
    // The only error `CmMessage::parse` returns is a cut fixed part: flagged above already.
    out.cm = CmMessage::parse(attribute, data).ok();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::{IpAddr, Ipv4Addr, SocketAddr};
    use std::vec::Vec;

    /// A whole MAD: `header` then `data` (zero-padded to 256 bytes).
    fn mad_bytes(header: [u8; 24], data: &[u8]) -> [u8; 256] {
        let mut m = [0u8; 256];
        m[..24].copy_from_slice(&header);
        m[24..24 + data.len()].copy_from_slice(data);
        m
    }

    fn cm_header(attr: u16) -> [u8; 24] {
        let [a, b] = attr.to_be_bytes();
        [
            0x01, 0x07, 0x02, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x0b, 0x29, 0x75, 0xef, 0x73, a, b, 0, 0,
            0, 0, 0, 0,
        ]
    }

    /// The REQ MAD of read2.pcap frame 4 (its data as req.rs's tests write it out).
    fn req_mad() -> [u8; 256] {
        mad_bytes(cm_header(0x0010), &super::req::tests::read2_req_data())
    }

    #[test]
    fn req_mad_parses_and_emits_same_bytes() {
        let bytes = req_mad();
        let mad = parse_mad(&bytes).unwrap();
        assert!(mad.problems.is_empty(), "{}", mad.problems);
        assert_eq!(mad.header, MadHeaderRepr::cm(CmAttribute::Req, 0xb_2975_ef73));
        assert_eq!(mad.cm_attribute(), Some(CmAttribute::Req));
        let Some(CmMessage::Req(req)) = mad.cm else { panic!("not a REQ: {:?}", mad.cm) };
        assert_eq!(req.local_qpn, 0x139);
        assert_eq!(req.pmtu_bytes(), Some(1024));
        assert_eq!(mad.cm.unwrap().comm_ids(), Some((0x73ef_7529, 0)));
        let mut out = [0x77u8; 300];
        assert_eq!(req.emit_mad(0xb_2975_ef73, &mut out), Ok(256));
        assert_eq!(out[..256], bytes[..]);
        assert!(out[256..].iter().all(|&b| b == 0x77));
    }

    #[test]
    fn every_message_round_trips_through_a_whole_mad() {
        let pd = [0xC3u8; 20];
        let src = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 50000);
        let dst = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 7471);
        let ip = RdmaCmIpHeader::new(src, dst.ip()).to_bytes();
        let req = ReqRepr {
            local_comm_id: 0x1111,
            local_qpn: 0x12,
            starting_psn: 0x345,
            local_ca_guid: 0xabc,
            ..ReqRepr::rdma_cm(PortSpace::Tcp, src, dst, &ip)
        };
        let rep = RepRepr::reply_to(&req, 0x2222, 0x13, 0x678, 0xdef);
        let messages = [
            CmMessage::Req(req),
            CmMessage::Rep(RepRepr { private_data: &pd, ..rep }),
            CmMessage::Rtu(RtuRepr::new(0x1111, 0x2222)),
            CmMessage::Rej(RejRepr {
                ari: &pd,
                reject_info_length: 20,
                ..RejRepr::new(0x2222, 0x1111, MessageRef::Req, RejectReason::ConsumerDefined)
            }),
            CmMessage::Mra(MraRepr {
                local_comm_id: 1,
                remote_comm_id: 2,
                message_mraed: MessageRef::Other,
                service_timeout: 31,
                private_data: &pd,
            }),
            CmMessage::Dreq(DreqRepr::new(0x1111, 0x2222, 0x13)),
            CmMessage::Drep(DrepRepr::new(0x2222, 0x1111)),
            CmMessage::SidrReq(SidrReqRepr {
                request_id: 5,
                pkey: 0xffff,
                service_id: rdma_cm::service_id(PortSpace::Udp, 7471),
                private_data: &ip,
            }),
            CmMessage::SidrRep(SidrRepRepr {
                request_id: 5,
                status: SidrStatus::Ok,
                additional_info_length: 0,
                qpn: 0x99,
                service_id: rdma_cm::service_id(PortSpace::Udp, 7471),
                qkey: 0x1234_5678,
                additional_info: &[],
                private_data: &pd,
            }),
            CmMessage::Lap(LapRepr { local_comm_id: 7, remote_comm_id: 8 }),
            CmMessage::Apr(AprRepr { local_comm_id: 8, remote_comm_id: 7 }),
            CmMessage::ClassPortInfo,
        ];
        for m in messages {
            let mut out = [0xFFu8; 256];
            assert_eq!(m.emit_mad(42, &mut out), Ok(256), "{}", m.name());
            let mad = parse_mad(&out).unwrap();
            assert!(mad.problems.is_empty(), "{}: {}", m.name(), mad.problems);
            assert_eq!(mad.header.transaction_id, 42);
            assert_eq!(mad.header.attribute_id, m.attribute().to_u16());
            let back = mad.cm.unwrap();
            assert_eq!(back.attribute(), m.attribute());
            // Emitting the parsed message gives the same bytes (variable parts come back
            // zero-padded to their field lengths, so compare bytes, not reprs).
            let mut again = [0u8; 256];
            back.emit_mad(42, &mut again).unwrap();
            assert_eq!(again, out, "{}", m.name());
        }
        let mut b = [0u8; 256];
        req.emit_mad(1, &mut b).unwrap();
        let Some(CmMessage::Req(r)) = parse_mad(&b).unwrap().cm else { panic!() };
        let h = r.rdma_cm_ip_header().unwrap();
        assert_eq!((h.src_ip, h.dst_ip, h.src_port), (src.ip(), dst.ip(), 50000));
        assert_eq!(r.rdma_cm_service().unwrap().port, 7471);
        assert_eq!(r.primary_path.local_ip(), src.ip());
        assert_eq!(r.primary_path.remote_ip(), dst.ip());
    }

    #[test]
    fn emit_mad_refuses_small_buffers_and_long_private_data() {
        let mut small = [0u8; 255];
        let e = RtuRepr::new(1, 2).emit_mad(1, &mut small).unwrap_err();
        assert_eq!((e.layer, e.needed, e.available), (Layer::Mad, 256, 255));
        let long = [1u8; 225];
        let rtu = RtuRepr { private_data: &long, ..RtuRepr::new(1, 2) };
        let mut out = [0u8; 256];
        let e = rtu.emit_mad(1, &mut out).unwrap_err();
        assert_eq!((e.layer, e.needed, e.available), (Layer::Cm, 225, 224));
        assert!(out.iter().all(|&b| b == 0));
        let ok = RtuRepr { private_data: &long[..224], ..rtu };
        assert_eq!(ok.emit_mad(1, &mut out), Ok(256));
    }

    #[test]
    fn every_prefix_of_a_req_mad_parses_without_panic() {
        let bytes = req_mad();
        for n in 0..=bytes.len() {
            let r = parse_mad(&bytes[..n]);
            if n < 24 {
                let e = r.unwrap_err();
                assert_eq!((e.layer, e.offset, e.needed, e.available), (Layer::Mad, 0, 24, n));
                continue;
            }
            let mad = r.unwrap();
            assert_eq!(mad.problems.contains(Problem::MadTruncated), n < 256, "{n}");
            match mad.cm {
                // The fixed part of a REQ is 140 bytes: MAD byte 164.
                Some(CmMessage::Req(req)) => {
                    assert!(n >= 164, "{n}");
                    assert_eq!(req.private_data.len(), n - 164);
                    assert_eq!(req.local_qpn, 0x139);
                    assert_eq!(req.rdma_cm_ip_header().is_some(), n >= 164 + 36);
                }
                None => assert!(n < 164, "{n}"),
                Some(other) => panic!("{other:?}"),
            }
        }
        // Longer input: bytes past 256 are ignored.
        let mut long = [0u8; 300];
        long[..256].copy_from_slice(&bytes);
        let mad = parse_mad(&long).unwrap();
        assert!(mad.problems.is_empty());
        assert_eq!(mad.data.len(), 232);
    }

    #[test]
    fn unknown_versions_attributes_and_short_mads_give_problems() {
        // CM class version 1: header decoded, body skipped.
        let mut b = req_mad();
        b[2] = 1;
        let mad = parse_mad(&b).unwrap();
        assert!(mad.problems.contains(Problem::MadUnknownVersion));
        assert_eq!(mad.cm, None);
        assert_eq!(mad.header.class_version, 1);
        assert_eq!(mad.header.transaction_id, 0xb_2975_ef73);
        // Base version 2.
        let mut b = req_mad();
        b[0] = 2;
        let mad = parse_mad(&b).unwrap();
        assert!(mad.problems.contains(Problem::MadUnknownVersion));
        assert_eq!(mad.cm, None);
        // Unknown CM attribute.
        let b = mad_bytes(cm_header(0x0033), &[]);
        let mad = parse_mad(&b).unwrap();
        assert!(mad.problems.contains(Problem::MadUnknownAttribute));
        assert_eq!(mad.cm, Some(CmMessage::Unknown(0x0033)));
        // ClassPortInfo is known.
        let b = mad_bytes(cm_header(0x0001), &[]);
        let mad = parse_mad(&b).unwrap();
        assert!(mad.problems.is_empty());
        assert_eq!(mad.cm, Some(CmMessage::ClassPortInfo));
        // Short DREQ: 11 of its 12 fixed bytes.
        let b = mad_bytes(cm_header(0x0015), &[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 3]);
        let mad = parse_mad(&b[..24 + 11]).unwrap();
        assert_eq!(mad.problems, {
            let mut p = Problems::NONE;
            p.insert(Problem::MadTruncated);
            p
        });
        assert_eq!(mad.cm, None);
        let mad = parse_mad(&b[..24 + 12]).unwrap();
        assert!(mad.problems.contains(Problem::MadTruncated));
        assert_eq!(
            mad.cm,
            Some(CmMessage::Dreq(DreqRepr { private_data: &[], ..DreqRepr::new(1, 2, 3) }))
        );
    }

    #[test]
    fn other_classes_are_named_and_not_decoded() {
        // An SA GetResp.
        let mut h = cm_header(0x0035);
        h[1] = 0x03;
        h[3] = 0x81;
        let b = mad_bytes(h, &[1, 2, 3]);
        let mad = parse_mad(&b).unwrap();
        assert!(mad.problems.is_empty());
        assert_eq!(mad.header.mgmt_class, MgmtClass::SubnAdm);
        assert_eq!(mad.header.method, Method::GetResp);
        assert_eq!(mad.cm, None);
        assert_eq!(mad.cm_attribute(), None);
        assert_eq!(&mad.data[..3], &[1, 2, 3]);
        // A directed-route SMP with class version 1 is fine (only CM's class version is checked).
        h[1] = 0x81;
        h[2] = 0x01;
        let b = mad_bytes(h, &[]);
        let mad = parse_mad(&b).unwrap();
        assert!(mad.problems.is_empty());
        assert_eq!(mad.header.mgmt_class.name(), "SubnMgmt (directed route)");
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_cm_round_trips() {
        // A cheap deterministic fuzz: xorshift bytes under every CM attribute.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..2000 {
            let mut b: Vec<u8> = (0..256).map(|_| next() as u8).collect();
            b[0] = 1;
            b[1] = 7;
            b[2] = 2;
            b[16] = 0;
            b[17] = [0x01, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A]
                [round % 12];
            let len = if round % 3 == 0 { (next() % 257) as usize } else { 256 };
            let Ok(mad) = parse_mad(&b[..len]) else {
                continue;
            };
            let Some(cm) = mad.cm else { continue };
            if len < 256 {
                continue;
            }
            // Parse, emit, parse again: the same message.
            let mut out = [0u8; 256];
            cm.emit_mad_with_header(&mad.header, &mut out).unwrap();
            let again = parse_mad(&out).unwrap();
            assert_eq!(again.header, mad.header);
            assert_eq!(again.cm, Some(cm), "round {round}");
        }
    }
}
