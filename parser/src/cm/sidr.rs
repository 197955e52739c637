//! SIDR_REQ (ServiceIDResReq, attribute 0x0017) and SIDR_REP (ServiceIDResReqResp, 0x0018):
//! service ID resolution for UD QPs (RDMA-CM's UDP port space).
//!
//! SIDR_REQ (from the start of the MAD data): 0 Request ID, 4 P_Key (u16), 8 Service ID, 16
//! Private Data (216).
//! SIDR_REP: 0 Request ID, 4 Status, 5 Additional Info Length, 8 QPN (24 bits), 12 Service ID,
//! 20 Q_Key, 24 Additional Info (72), 96 Private Data (136).

use super::rdma_cm::{self, RdmaCmIpHeader, RdmaCmServiceId};
use super::{clipped, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the SIDR_REQ fields, from the start of the MAD data.
pub mod req_field {
    use core::ops::Range;
    /// Request ID: 4 bytes.
    pub const REQUEST_ID: Range<usize> = 0..4;
    /// P_Key: 2 bytes.
    pub const PKEY: Range<usize> = 4..6;
    /// Service ID: 8 bytes.
    pub const SERVICE_ID: Range<usize> = 8..16;
    /// Private Data: 216 bytes.
    pub const PRIVATE_DATA: Range<usize> = 16..232;
}

/// Byte ranges of the SIDR_REP fields, from the start of the MAD data.
pub mod rep_field {
    use core::ops::Range;
    /// Request ID: 4 bytes.
    pub const REQUEST_ID: Range<usize> = 0..4;
    /// Status: 1 byte.
    pub const STATUS: usize = 4;
    /// Additional Info Length: 1 byte.
    pub const ADDITIONAL_INFO_LENGTH: usize = 5;
    /// QPN: 3 bytes.
    pub const QPN: Range<usize> = 8..11;
    /// Service ID: 8 bytes.
    pub const SERVICE_ID: Range<usize> = 12..20;
    /// Q_Key: 4 bytes.
    pub const QKEY: Range<usize> = 20..24;
    /// Additional Info: 72 bytes.
    pub const ADDITIONAL_INFO: Range<usize> = 24..96;
    /// Private Data: 136 bytes.
    pub const PRIVATE_DATA: Range<usize> = 96..232;
}

/// Length of the SIDR_REQ private data field.
pub const SIDR_REQ_PRIVATE_DATA_LEN: usize = 216;
/// Length of the SIDR_REP additional information field.
pub const SIDR_REP_ADDITIONAL_INFO_LEN: usize = 72;
/// Length of the SIDR_REP private data field.
pub const SIDR_REP_PRIVATE_DATA_LEN: usize = 136;

header_view!(
    /// A zero-copy view of a SIDR_REQ. `LEN` is the fixed part (16 bytes); the whole message
    /// is 232.
    SidrReq,
    Layer::Cm,
    16
);

impl<T: AsRef<[u8]>> SidrReq<T> {
    /// Request ID (bytes 0-3): the requester's 32-bit ID, echoed by the SIDR_REP.
    pub fn request_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), req_field::REQUEST_ID)
    }
    /// P_Key (bytes 4-5): the partition key of the requester's UD QP.
    pub fn pkey(&self) -> u16 {
        be_u16(self.buffer.as_ref(), req_field::PKEY)
    }
    /// Service ID (bytes 8-15): the service to resolve (RDMA-CM: [`RdmaCmServiceId`]).
    pub fn service_id(&self) -> u64 {
        be_u64(self.buffer.as_ref(), req_field::SERVICE_ID)
    }
    /// The private data present (up to 216 bytes).
    pub fn private_data(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), req_field::PRIVATE_DATA)
    }
}

impl<'a> SidrReq<&'a [u8]> {
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, req_field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SidrReq<T> {
    /// Writes the Request ID.
    pub fn set_request_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), req_field::REQUEST_ID, v);
    }
    /// Writes the P_Key.
    pub fn set_pkey(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), req_field::PKEY, v);
    }
    /// Writes the Service ID.
    pub fn set_service_id(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), req_field::SERVICE_ID, v);
    }
    /// Copies up to 216 bytes of `v` and zero-fills the rest of the field.
    pub fn set_private_data(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), req_field::PRIVATE_DATA, v);
    }
}

/// A SIDR_REQ as plain values, borrowing its private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SidrReqRepr<'a> {
    /// The requester's ID, echoed by the SIDR_REP.
    pub request_id: u32,
    /// The partition key.
    pub pkey: u16,
    /// The service to resolve.
    pub service_id: u64,
    /// Up to 216 bytes.
    pub private_data: &'a [u8],
}

impl<'a> SidrReqRepr<'a> {
    /// Parses a SIDR_REQ view; the fixed part (16 bytes) must be present.
    pub fn parse(v: &SidrReq<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < SidrReq::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, SidrReq::<&[u8]>::LEN, len));
        }
        Ok(SidrReqRepr {
            request_id: v.request_id(),
            pkey: v.pkey(),
            service_id: v.service_id(),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message (private data zero-padded, cut at 216 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut SidrReq<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_request_id(self.request_id);
        v.set_pkey(self.pkey);
        v.set_service_id(self.service_id);
        v.set_private_data(self.private_data);
    }

    /// Bytes [`emit`](Self::emit) writes: the whole 232-byte MAD data.
    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// The RDMA-CM port space and port, when the service ID has the RDMA-CM prefix.
    pub const fn rdma_cm_service(&self) -> Option<RdmaCmServiceId> {
        RdmaCmServiceId::from_service_id(self.service_id)
    }

    /// The RDMA-CM IP header at the start of the private data (RDMA-CM service IDs only).
    pub fn rdma_cm_ip_header(&self) -> Option<RdmaCmIpHeader> {
        self.rdma_cm_service()?;
        RdmaCmIpHeader::parse_bytes(self.private_data).ok()
    }

    /// The consumer's private data: after the RDMA-CM IP header when there is one, else all.
    pub fn consumer_private_data(&self) -> &'a [u8] {
        match self.rdma_cm_ip_header() {
            Some(_) => self.private_data.get(rdma_cm::RDMA_CM_IP_HEADER_LEN..).unwrap_or(&[]),
            None => self.private_data,
        }
    }

    /// Writes a whole 256-byte CM MAD (method Send, attribute SIDR_REQ, transaction ID `tid`).
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::SidrReq(*self).emit_mad(tid, out)
    }
}

/// SIDR_REP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum SidrStatus {
    /// 0: the QPN and Q_Key are valid.
    Ok,
    /// 1: service ID not supported.
    Unsupported,
    /// 2: rejected by the service provider.
    Reject,
    /// 3: no QP available.
    NoQp,
    /// 4: redirect (see additional information).
    Redirect,
    /// 5: unsupported class version.
    UnsupportedVersion,
    /// Any other value.
    Other(u8),
}

impl SidrStatus {
    /// The status of a Status byte (every value maps to a variant).
    pub const fn from_u8(v: u8) -> Self {
        match v {
            0 => SidrStatus::Ok,
            1 => SidrStatus::Unsupported,
            2 => SidrStatus::Reject,
            3 => SidrStatus::NoQp,
            4 => SidrStatus::Redirect,
            5 => SidrStatus::UnsupportedVersion,
            _ => SidrStatus::Other(v),
        }
    }
    /// The Status byte (the inverse of [`from_u8`](Self::from_u8)).
    pub const fn to_u8(self) -> u8 {
        match self {
            SidrStatus::Ok => 0,
            SidrStatus::Unsupported => 1,
            SidrStatus::Reject => 2,
            SidrStatus::NoQp => 3,
            SidrStatus::Redirect => 4,
            SidrStatus::UnsupportedVersion => 5,
            SidrStatus::Other(v) => v,
        }
    }
    /// The status in words, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            SidrStatus::Ok => "ok",
            SidrStatus::Unsupported => "service ID not supported",
            SidrStatus::Reject => "rejected",
            SidrStatus::NoQp => "no QP",
            SidrStatus::Redirect => "redirect",
            SidrStatus::UnsupportedVersion => "unsupported class version",
            SidrStatus::Other(_) => "unknown status",
        }
    }
}

header_view!(
    /// A zero-copy view of a SIDR_REP. `LEN` is the fixed part (96 bytes, additional info
    /// included); the whole message is 232.
    SidrRep,
    Layer::Cm,
    96
);

impl<T: AsRef<[u8]>> SidrRep<T> {
    /// Request ID (bytes 0-3): the SIDR_REQ's.
    pub fn request_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), rep_field::REQUEST_ID)
    }
    /// Status (byte 4): whether the service was resolved.
    pub fn status(&self) -> SidrStatus {
        SidrStatus::from_u8(u8_at(self.buffer.as_ref(), rep_field::STATUS))
    }
    /// Additional Info Length (byte 5): how many additional info bytes are meaningful.
    pub fn additional_info_length(&self) -> u8 {
        u8_at(self.buffer.as_ref(), rep_field::ADDITIONAL_INFO_LENGTH)
    }
    /// QPN (bytes 8-10): the 24-bit UD QP that serves the service ID.
    pub fn qpn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), rep_field::QPN)
    }
    /// Service ID (bytes 12-19): the resolved service.
    pub fn service_id(&self) -> u64 {
        be_u64(self.buffer.as_ref(), rep_field::SERVICE_ID)
    }
    /// Q_Key (bytes 20-23): the Q_Key to send to that QP with.
    pub fn qkey(&self) -> u32 {
        be_u32(self.buffer.as_ref(), rep_field::QKEY)
    }
    /// The whole 72-byte additional information field.
    pub fn additional_info(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), rep_field::ADDITIONAL_INFO)
    }
    /// The private data present (up to 136 bytes).
    pub fn private_data(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), rep_field::PRIVATE_DATA)
    }
}

impl<'a> SidrRep<&'a [u8]> {
    /// The additional information field, borrowed for the buffer's lifetime.
    pub fn additional_info_ref(&self) -> &'a [u8] {
        clipped(self.buffer, rep_field::ADDITIONAL_INFO)
    }
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, rep_field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SidrRep<T> {
    /// Writes the Request ID.
    pub fn set_request_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), rep_field::REQUEST_ID, v);
    }
    /// Writes the Status.
    pub fn set_status(&mut self, v: SidrStatus) {
        set_u8(self.buffer.as_mut(), rep_field::STATUS, v.to_u8());
    }
    /// Writes Additional Info Length.
    pub fn set_additional_info_length(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), rep_field::ADDITIONAL_INFO_LENGTH, v);
    }
    /// Writes the QPN: the low 24 bits of `v`.
    pub fn set_qpn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), rep_field::QPN, v);
    }
    /// Writes the Service ID.
    pub fn set_service_id(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), rep_field::SERVICE_ID, v);
    }
    /// Writes the Q_Key.
    pub fn set_qkey(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), rep_field::QKEY, v);
    }
    /// Copies up to 72 bytes of `v` and zero-fills the rest of the field.
    pub fn set_additional_info(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), rep_field::ADDITIONAL_INFO, v);
    }
    /// Copies up to 136 bytes of `v` and zero-fills the rest of the field.
    pub fn set_private_data(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), rep_field::PRIVATE_DATA, v);
    }
}

/// A SIDR_REP as plain values, borrowing its additional information and private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SidrRepRepr<'a> {
    /// The SIDR_REQ's Request ID.
    pub request_id: u32,
    /// Whether the service was resolved.
    pub status: SidrStatus,
    /// How many additional info bytes are meaningful.
    pub additional_info_length: u8,
    /// 24 bits: the UD QP that serves the service ID.
    pub qpn: u32,
    /// The resolved service.
    pub service_id: u64,
    /// The Q_Key to send to [`qpn`](Self::qpn) with.
    pub qkey: u32,
    /// The whole additional information field as on the wire (72 bytes from a whole MAD).
    pub additional_info: &'a [u8],
    /// Up to 136 bytes.
    pub private_data: &'a [u8],
}

impl<'a> SidrRepRepr<'a> {
    /// Parses a SIDR_REP view; the fixed part (96 bytes) must be present.
    pub fn parse(v: &SidrRep<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < SidrRep::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, SidrRep::<&[u8]>::LEN, len));
        }
        Ok(SidrRepRepr {
            request_id: v.request_id(),
            status: v.status(),
            additional_info_length: v.additional_info_length(),
            qpn: v.qpn(),
            service_id: v.service_id(),
            qkey: v.qkey(),
            additional_info: v.additional_info_ref(),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message (additional info and private data zero-padded and
    /// cut at their field lengths).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut SidrRep<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_request_id(self.request_id);
        v.set_status(self.status);
        v.set_additional_info_length(self.additional_info_length);
        v.set_qpn(self.qpn);
        v.set_service_id(self.service_id);
        v.set_qkey(self.qkey);
        v.set_additional_info(self.additional_info);
        v.set_private_data(self.private_data);
    }

    /// Bytes [`emit`](Self::emit) writes: the whole 232-byte MAD data.
    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// Writes a whole 256-byte CM MAD (method Send, attribute SIDR_REP, transaction ID `tid`).
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::SidrRep(*self).emit_mad(tid, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cm::rdma_cm::PortSpace;
    use core::net::{IpAddr, Ipv4Addr};

    #[test]
    fn parse_emit_literal_sidr_req() {
        // RDMA-CM UDP port space, port 4791... as a SIDR_REQ with an IPv4 header.
        let mut data = [0u8; 232];
        data[..16]
            .copy_from_slice(&[0, 0, 0, 9, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0x01, 0x11, 0x12, 0xb7]);
        data[16..20].copy_from_slice(&[0x00, 0x40, 0x12, 0x34]);
        data[32..36].copy_from_slice(&[10, 0, 0, 1]);
        data[48..52].copy_from_slice(&[10, 0, 0, 2]);
        let r = SidrReqRepr::parse(&SidrReq::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!((r.request_id, r.pkey, r.service_id), (9, 0xffff, 0x0000_0000_0111_12b7));
        let svc = r.rdma_cm_service().unwrap();
        assert_eq!((svc.port_space, svc.port), (PortSpace::Udp, 4791));
        let h = r.rdma_cm_ip_header().unwrap();
        assert_eq!(h.src_port, 0x1234);
        assert_eq!(h.src_ip, IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
        assert_eq!(h.dst_ip, IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)));
        assert_eq!(r.consumer_private_data().len(), 216 - 36);
        let mut out = [0xEEu8; 232];
        r.emit(&mut SidrReq::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        assert!(SidrReqRepr::parse(&SidrReq::new_unchecked(&data[..15])).is_err());
    }

    #[test]
    fn parse_emit_literal_sidr_rep() {
        let mut data = [0u8; 232];
        data[..24].copy_from_slice(&[
            0, 0, 0, 9, 3, 2, 0, 0, 0x00, 0x01, 0x23, 0, 0, 0, 0, 0, 0x01, 0x11, 0x12, 0xb7, 0x80,
            0x01, 0x00, 0x00,
        ]);
        data[24..26].copy_from_slice(&[7, 8]);
        data[96] = 0x55;
        let r = SidrRepRepr::parse(&SidrRep::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!(r.request_id, 9);
        assert_eq!(r.status, SidrStatus::NoQp);
        assert_eq!(r.status.name(), "no QP");
        assert_eq!(r.additional_info_length, 2);
        assert_eq!(r.qpn, 0x123);
        assert_eq!(r.service_id, 0x0000_0000_0111_12b7);
        assert_eq!(r.qkey, 0x8001_0000);
        assert_eq!(&r.additional_info[..3], &[7, 8, 0]);
        assert_eq!(r.additional_info.len(), 72);
        assert_eq!((r.private_data.len(), r.private_data[0]), (136, 0x55));
        let mut out = [0xEEu8; 232];
        r.emit(&mut SidrRep::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        assert!(SidrRepRepr::parse(&SidrRep::new_unchecked(&data[..95])).is_err());
        for v in 0..=255u8 {
            assert_eq!(SidrStatus::from_u8(v).to_u8(), v);
        }
    }
}
