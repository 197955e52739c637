//! REP (ConnectReply, attribute 0x0013): the passive side's QPN and starting PSN.
//!
//! Offsets are from the start of the MAD data (MAD byte 24); see docs/wire.md.

use super::req::ReqRepr;
use super::{bits, clipped, set_bits, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the REP fields, from the start of the MAD data.
pub mod field {
    use core::ops::Range;
    /// Local Communication ID: 4 bytes.
    pub const LOCAL_COMM_ID: Range<usize> = 0..4;
    /// Remote Communication ID: 4 bytes.
    pub const REMOTE_COMM_ID: Range<usize> = 4..8;
    /// Local Q_Key: 4 bytes.
    pub const LOCAL_QKEY: Range<usize> = 8..12;
    /// Local QPN: 3 bytes.
    pub const LOCAL_QPN: Range<usize> = 12..15;
    /// Local EECN: 3 bytes.
    pub const LOCAL_EECN: Range<usize> = 16..19;
    /// Starting PSN: 3 bytes.
    pub const STARTING_PSN: Range<usize> = 20..23;
    /// Responder Resources: 1 byte.
    pub const RESPONDER_RESOURCES: usize = 24;
    /// Initiator Depth: 1 byte.
    pub const INITIATOR_DEPTH: usize = 25;
    /// Byte 26: target ACK delay, failover accepted, end-to-end flow control.
    pub const BYTE_26: usize = 26;
    /// Target ACK Delay: bits 7..3 of byte 26.
    pub const TARGET_ACK_DELAY_MASK: u8 = 0xF8;
    /// Failover Accepted: bits 2..1 of byte 26.
    pub const FAILOVER_ACCEPTED_MASK: u8 = 0x06;
    /// End-to-End Flow Control: bit 0 of byte 26.
    pub const END_TO_END_FLOW_CONTROL_MASK: u8 = 0x01;
    /// Byte 27: RNR retry count, SRQ.
    pub const BYTE_27: usize = 27;
    /// RNR Retry Count: bits 7..5 of byte 27.
    pub const RNR_RETRY_COUNT_MASK: u8 = 0xE0;
    /// SRQ: bit 4 of byte 27.
    pub const SRQ_MASK: u8 = 0x10;
    /// Local CA GUID: 8 bytes.
    pub const LOCAL_CA_GUID: Range<usize> = 28..36;
    /// Private Data: 196 bytes.
    pub const PRIVATE_DATA: Range<usize> = 36..232;
}

/// Length of the REP private data field.
pub const REP_PRIVATE_DATA_LEN: usize = 196;

header_view!(
    /// A zero-copy view of a REP, from the start of the MAD data. `LEN` is the fixed part (36
    /// bytes, up to the private data); the whole message is 232 bytes.
    Rep,
    Layer::Cm,
    36
);

impl<T: AsRef<[u8]>> Rep<T> {
    /// Local Communication ID (bytes 0-3): the sender's 32-bit handle for the connection.
    pub fn local_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::LOCAL_COMM_ID)
    }
    /// Remote Communication ID (bytes 4-7): the REQ's Local Communication ID.
    pub fn remote_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::REMOTE_COMM_ID)
    }
    /// Local Q_Key (bytes 8-11): the Q_Key of the passive side's QP (used by RD, not RC).
    pub fn local_qkey(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::LOCAL_QKEY)
    }
    /// Local QPN (bytes 12-14): the 24-bit QP number of the passive side, the DestQP of
    /// the active side's packets.
    pub fn local_qpn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::LOCAL_QPN)
    }
    /// Local EECN (bytes 16-18): the 24-bit EE context number (RD only).
    pub fn local_eecn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::LOCAL_EECN)
    }
    /// Starting PSN (bytes 20-22): 24 bits, the PSN the passive side expects to receive
    /// first (the active side's first send PSN).
    pub fn starting_psn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::STARTING_PSN)
    }
    /// Responder Resources (byte 24): RDMA READ and atomic requests the passive side
    /// accepts outstanding, as a responder.
    pub fn responder_resources(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::RESPONDER_RESOURCES)
    }
    /// Initiator Depth (byte 25): RDMA READ and atomic requests the passive side keeps
    /// outstanding, as an initiator.
    pub fn initiator_depth(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::INITIATOR_DEPTH)
    }
    /// Target ACK Delay (byte 26 bits 7..3): the longest the passive side takes to ACK,
    /// 4.096 us * 2^n.
    pub fn target_ack_delay(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_26, field::TARGET_ACK_DELAY_MASK)
    }
    /// Failover Accepted (byte 26 bits 2..1): 0 accepted, 1 not supported, 2 rejected.
    pub fn failover_accepted(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_26, field::FAILOVER_ACCEPTED_MASK)
    }
    /// End-to-End Flow Control (byte 26 bit 0): the passive side's ACKs carry credits.
    pub fn end_to_end_flow_control(&self) -> bool {
        bits(self.buffer.as_ref(), field::BYTE_26, field::END_TO_END_FLOW_CONTROL_MASK) != 0
    }
    /// RNR Retry Count (byte 27 bits 7..5): how often the active side resends after an RNR NAK
    /// from the passive side (7: without limit).
    pub fn rnr_retry_count(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_27, field::RNR_RETRY_COUNT_MASK)
    }
    /// SRQ (byte 27 bit 4): the passive side's QP takes receives from a shared receive queue.
    pub fn srq(&self) -> bool {
        bits(self.buffer.as_ref(), field::BYTE_27, field::SRQ_MASK) != 0
    }
    /// Local CA GUID (bytes 28-35): the 64-bit GUID of the passive side's channel adapter.
    pub fn local_ca_guid(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::LOCAL_CA_GUID)
    }
    /// The private data present (up to 196 bytes).
    pub fn private_data(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), field::PRIVATE_DATA)
    }
}

impl<'a> Rep<&'a [u8]> {
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Rep<T> {
    /// Writes the Local Communication ID.
    pub fn set_local_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::LOCAL_COMM_ID, v);
    }
    /// Writes the Remote Communication ID.
    pub fn set_remote_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::REMOTE_COMM_ID, v);
    }
    /// Writes the Local Q_Key.
    pub fn set_local_qkey(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::LOCAL_QKEY, v);
    }
    /// Writes the Local QPN: the low 24 bits of `v`.
    pub fn set_local_qpn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::LOCAL_QPN, v);
    }
    /// Writes the Local EECN: the low 24 bits of `v`.
    pub fn set_local_eecn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::LOCAL_EECN, v);
    }
    /// Writes the Starting PSN: the low 24 bits of `v`.
    pub fn set_starting_psn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::STARTING_PSN, v);
    }
    /// Writes Responder Resources.
    pub fn set_responder_resources(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::RESPONDER_RESOURCES, v);
    }
    /// Writes Initiator Depth.
    pub fn set_initiator_depth(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::INITIATOR_DEPTH, v);
    }
    /// Writes Target ACK Delay (low 5 bits of `v`), keeping the rest of byte 26.
    pub fn set_target_ack_delay(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_26, field::TARGET_ACK_DELAY_MASK, v);
    }
    /// Writes Failover Accepted (low 2 bits of `v`), keeping the rest of byte 26.
    pub fn set_failover_accepted(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_26, field::FAILOVER_ACCEPTED_MASK, v);
    }
    /// Writes End-to-End Flow Control, keeping the rest of byte 26.
    pub fn set_end_to_end_flow_control(&mut self, v: bool) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_26, field::END_TO_END_FLOW_CONTROL_MASK, u8::from(v));
    }
    /// Writes RNR Retry Count (low 3 bits of `v`), keeping the rest of byte 27.
    pub fn set_rnr_retry_count(&mut self, v: u8) {
        set_bits(self.buffer.as_mut(), field::BYTE_27, field::RNR_RETRY_COUNT_MASK, v);
    }
    /// Writes SRQ, keeping the rest of byte 27.
    pub fn set_srq(&mut self, v: bool) {
        set_bits(self.buffer.as_mut(), field::BYTE_27, field::SRQ_MASK, u8::from(v));
    }
    /// Writes the Local CA GUID.
    pub fn set_local_ca_guid(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::LOCAL_CA_GUID, v);
    }
    /// Copies up to 196 bytes of `v` and zero-fills the rest of the field.
    pub fn set_private_data(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), field::PRIVATE_DATA, v);
    }
}

/// A REP as plain values, borrowing its private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RepRepr<'a> {
    /// The passive side's Local Communication ID.
    pub local_comm_id: u32,
    /// The REQ's local communication ID.
    pub remote_comm_id: u32,
    /// The passive side's Q_Key (RD).
    pub local_qkey: u32,
    /// 24 bits: the passive side's QP.
    pub local_qpn: u32,
    /// 24 bits.
    pub local_eecn: u32,
    /// 24 bits: the PSN the passive side expects to receive first.
    pub starting_psn: u32,
    /// RDMA READ / atomic requests accepted outstanding.
    pub responder_resources: u8,
    /// RDMA READ / atomic requests kept outstanding.
    pub initiator_depth: u8,
    /// 5 bits.
    pub target_ack_delay: u8,
    /// 2 bits: 0 accepted, 1 not supported, 2 rejected.
    pub failover_accepted: u8,
    /// The passive side's ACKs carry end-to-end credits.
    pub end_to_end_flow_control: bool,
    /// 3 bits.
    pub rnr_retry_count: u8,
    /// The passive side's QP uses a shared receive queue.
    pub srq: bool,
    /// GUID of the passive side's channel adapter.
    pub local_ca_guid: u64,
    /// Up to 196 bytes.
    pub private_data: &'a [u8],
}

impl<'a> RepRepr<'a> {
    /// Parses a REP view; the fixed part (36 bytes) must be present.
    pub fn parse(v: &Rep<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < Rep::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, Rep::<&[u8]>::LEN, len));
        }
        Ok(RepRepr {
            local_comm_id: v.local_comm_id(),
            remote_comm_id: v.remote_comm_id(),
            local_qkey: v.local_qkey(),
            local_qpn: v.local_qpn(),
            local_eecn: v.local_eecn(),
            starting_psn: v.starting_psn(),
            responder_resources: v.responder_resources(),
            initiator_depth: v.initiator_depth(),
            target_ack_delay: v.target_ack_delay(),
            failover_accepted: v.failover_accepted(),
            end_to_end_flow_control: v.end_to_end_flow_control(),
            rnr_retry_count: v.rnr_retry_count(),
            srq: v.srq(),
            local_ca_guid: v.local_ca_guid(),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message (reserved bytes zero, private data zero-padded and
    /// cut at 196 bytes).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Rep<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_local_comm_id(self.local_comm_id);
        v.set_remote_comm_id(self.remote_comm_id);
        v.set_local_qkey(self.local_qkey);
        v.set_local_qpn(self.local_qpn);
        v.set_local_eecn(self.local_eecn);
        v.set_starting_psn(self.starting_psn);
        v.set_responder_resources(self.responder_resources);
        v.set_initiator_depth(self.initiator_depth);
        v.set_target_ack_delay(self.target_ack_delay);
        v.set_failover_accepted(self.failover_accepted);
        v.set_end_to_end_flow_control(self.end_to_end_flow_control);
        v.set_rnr_retry_count(self.rnr_retry_count);
        v.set_srq(self.srq);
        v.set_local_ca_guid(self.local_ca_guid);
        v.set_private_data(self.private_data);
    }

    /// Bytes [`emit`](Self::emit) writes: the whole 232-byte MAD data.
    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// The REP a Linux passive side sends for `req`: remote comm ID = the REQ's local comm ID,
    /// responder resources and initiator depth mirrored from the REQ, target ACK delay 16 and
    /// the REQ's flow control, RNR retry count and SRQ (as in read2.pcap); no private data.
    pub fn reply_to(
        req: &ReqRepr<'_>,
        local_comm_id: u32,
        local_qpn: u32,
        starting_psn: u32,
        local_ca_guid: u64,
    ) -> RepRepr<'static> {
        RepRepr {
            local_comm_id,
            remote_comm_id: req.local_comm_id,
            local_qkey: 0,
            local_qpn,
            local_eecn: 0,
            starting_psn,
            responder_resources: req.initiator_depth,
            initiator_depth: req.responder_resources,
            target_ack_delay: 16,
            failover_accepted: 0,
            end_to_end_flow_control: req.end_to_end_flow_control,
            rnr_retry_count: req.rnr_retry_count,
            srq: req.srq,
            local_ca_guid,
            private_data: &[],
        }
    }

    /// Writes a whole 256-byte CM MAD (method Send, attribute REP, transaction ID `tid`).
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::Rep(*self).emit_mad(tid, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The REP data of read2.pcap frame 5 (MAD bytes 24..256).
    fn read2_rep_data() -> [u8; 232] {
        let mut d = [0u8; 232];
        d[..36].copy_from_slice(&[
            0xd6, 0x5b, 0x8b, 0x76, 0x73, 0xef, 0x75, 0x29, 0, 0, 0, 0, 0x00, 0x01, 0x69, 0x00, 0,
            0, 0, 0, 0x6a, 0xf7, 0xe4, 0x00, 0x03, 0x03, 0x80, 0x00, 0x08, 0xc0, 0xeb, 0x03, 0x00,
            0xda, 0xe2, 0xca,
        ]);
        d
    }

    #[test]
    fn parse_emit_literal_rep() {
        let data = read2_rep_data();
        let r = RepRepr::parse(&Rep::new_checked(&data[..]).unwrap()).unwrap();
        let expect = RepRepr {
            local_comm_id: 0xd65b_8b76,
            remote_comm_id: 0x73ef_7529,
            local_qkey: 0,
            local_qpn: 0x169,
            local_eecn: 0,
            starting_psn: 0x6af7e4,
            responder_resources: 3,
            initiator_depth: 3,
            target_ack_delay: 0x10,
            failover_accepted: 0,
            end_to_end_flow_control: false,
            rnr_retry_count: 0,
            srq: false,
            local_ca_guid: 0x08c0_eb03_00da_e2ca,
            private_data: &[0; 196],
        };
        assert_eq!(r, expect);
        let mut out = [0xFFu8; 232];
        r.emit(&mut Rep::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
    }

    #[test]
    fn flags_round_trip() {
        let r = RepRepr {
            local_comm_id: 1,
            remote_comm_id: 2,
            local_qkey: 3,
            local_qpn: 0xFF_FFFF,
            local_eecn: 0xFF_FFFF,
            starting_psn: 0xFF_FFFF,
            responder_resources: 0xFF,
            initiator_depth: 0xFF,
            target_ack_delay: 0x1F,
            failover_accepted: 3,
            end_to_end_flow_control: true,
            rnr_retry_count: 7,
            srq: true,
            local_ca_guid: u64::MAX,
            private_data: &[1, 2, 3],
        };
        let mut out = [0u8; 232];
        r.emit(&mut Rep::new_unchecked(&mut out[..]));
        assert_eq!([out[26], out[27]], [0xFF, 0xF0]);
        assert_eq!([out[15], out[19], out[23]], [0, 0, 0]);
        let back = RepRepr::parse(&Rep::new_unchecked(&out[..])).unwrap();
        assert_eq!(back.private_data.len(), 196);
        assert_eq!(&back.private_data[..4], &[1, 2, 3, 0]);
        assert_eq!(RepRepr { private_data: &[1, 2, 3], ..back }, r);
    }

    #[test]
    fn short_rep_is_truncated() {
        let data = read2_rep_data();
        assert!(RepRepr::parse(&Rep::new_unchecked(&data[..35])).is_err());
        assert_eq!(RepRepr::parse(&Rep::new_unchecked(&data[..36])).unwrap().private_data.len(), 0);
    }
}
