//! REQ (ConnectRequest, attribute 0x0010): the active side's QPN, starting PSN, path MTU,
//! transport service type and the primary and alternate paths.
//!
//! Offsets are from the start of the MAD data (MAD byte 24); see docs/wire.md and Linux
//! `include/rdma/ibta_vol1_c12.h`. Reserved bytes and bits are written as zero by `emit`.

use core::net::{IpAddr, Ipv6Addr};

use super::rdma_cm::{self, PortSpace, RdmaCmIpHeader, RdmaCmServiceId};
use super::{bits, clipped, set_bits, write_clipped, zero_fill, MAD_DATA_LEN};
use crate::bytes::*;
use crate::error::Layer;

/// Byte ranges of the REQ fields, from the start of the MAD data.
pub mod field {
    use core::ops::Range;
    /// Local Communication ID: 4 bytes.
    pub const LOCAL_COMM_ID: Range<usize> = 0..4;
    /// Service ID: 8 bytes.
    pub const SERVICE_ID: Range<usize> = 8..16;
    /// Local CA GUID: 8 bytes.
    pub const LOCAL_CA_GUID: Range<usize> = 16..24;
    /// Local Q_Key: 4 bytes.
    pub const LOCAL_QKEY: Range<usize> = 28..32;
    /// Local QPN: 3 bytes.
    pub const LOCAL_QPN: Range<usize> = 32..35;
    /// Responder Resources: 1 byte.
    pub const RESPONDER_RESOURCES: usize = 35;
    /// Local EECN: 3 bytes.
    pub const LOCAL_EECN: Range<usize> = 36..39;
    /// Initiator Depth: 1 byte.
    pub const INITIATOR_DEPTH: usize = 39;
    /// Remote EECN: 3 bytes.
    pub const REMOTE_EECN: Range<usize> = 40..43;
    /// Byte 43: remote CM response timeout, transport service type, end-to-end flow control.
    pub const BYTE_43: usize = 43;
    /// Remote CM Response Timeout: bits 7..3 of byte 43.
    pub const REMOTE_CM_RESPONSE_TIMEOUT_MASK: u8 = 0xF8;
    /// Transport Service Type: bits 2..1 of byte 43.
    pub const TRANSPORT_SERVICE_TYPE_MASK: u8 = 0x06;
    /// End-to-End Flow Control: bit 0 of byte 43.
    pub const END_TO_END_FLOW_CONTROL_MASK: u8 = 0x01;
    /// Starting PSN: 3 bytes.
    pub const STARTING_PSN: Range<usize> = 44..47;
    /// Byte 47: local CM response timeout, retry count.
    pub const BYTE_47: usize = 47;
    /// Local CM Response Timeout: bits 7..3 of byte 47.
    pub const LOCAL_CM_RESPONSE_TIMEOUT_MASK: u8 = 0xF8;
    /// Retry Count: bits 2..0 of byte 47.
    pub const RETRY_COUNT_MASK: u8 = 0x07;
    /// P_Key: 2 bytes.
    pub const PKEY: Range<usize> = 48..50;
    /// Byte 50: path MTU, RDC exists, RNR retry count.
    pub const BYTE_50: usize = 50;
    /// Path Packet Payload MTU: bits 7..4 of byte 50.
    pub const PATH_MTU_MASK: u8 = 0xF0;
    /// RDC Exists: bit 3 of byte 50.
    pub const RDC_EXISTS_MASK: u8 = 0x08;
    /// RNR Retry Count: bits 2..0 of byte 50.
    pub const RNR_RETRY_COUNT_MASK: u8 = 0x07;
    /// Byte 51: max CM retries, SRQ, extended transport type.
    pub const BYTE_51: usize = 51;
    /// Max CM Retries: bits 7..4 of byte 51.
    pub const MAX_CM_RETRIES_MASK: u8 = 0xF0;
    /// SRQ: bit 3 of byte 51.
    pub const SRQ_MASK: u8 = 0x08;
    /// Extended Transport Type: bits 2..0 of byte 51.
    pub const EXTENDED_TRANSPORT_TYPE_MASK: u8 = 0x07;
    /// Primary path: 44 bytes ([`super::path_field`]).
    pub const PRIMARY_PATH: Range<usize> = 52..96;
    /// Alternate path: 44 bytes ([`super::path_field`]), all zero without one.
    pub const ALTERNATE_PATH: Range<usize> = 96..140;
    /// Private Data: 92 bytes.
    pub const PRIVATE_DATA: Range<usize> = 140..232;
}

/// Byte ranges of a path record inside a REQ (44 bytes; primary at 52, alternate at 96).
pub mod path_field {
    use core::ops::Range;
    /// Local Port LID: 2 bytes.
    pub const LOCAL_LID: Range<usize> = 0..2;
    /// Remote Port LID: 2 bytes.
    pub const REMOTE_LID: Range<usize> = 2..4;
    /// Local Port GID: 16 bytes.
    pub const LOCAL_GID: Range<usize> = 4..20;
    /// Remote Port GID: 16 bytes.
    pub const REMOTE_GID: Range<usize> = 20..36;
    /// Flow label: the top 20 bits of this big-endian u32.
    pub const FLOW_LABEL: Range<usize> = 36..40;
    /// Byte 39: packet rate in the low 6 bits.
    pub const PACKET_RATE: usize = 39;
    /// Packet Rate: bits 5..0 of byte 39.
    pub const PACKET_RATE_MASK: u8 = 0x3F;
    /// Traffic Class: 1 byte.
    pub const TRAFFIC_CLASS: usize = 40;
    /// Hop Limit: 1 byte.
    pub const HOP_LIMIT: usize = 41;
    /// Byte 42: SL, subnet local.
    pub const BYTE_42: usize = 42;
    /// SL: bits 7..4 of byte 42.
    pub const SL_MASK: u8 = 0xF0;
    /// Subnet Local: bit 3 of byte 42.
    pub const SUBNET_LOCAL_MASK: u8 = 0x08;
    /// Byte 43: local ACK timeout.
    pub const LOCAL_ACK_TIMEOUT: usize = 43;
    /// Local ACK Timeout: bits 7..3 of byte 43.
    pub const LOCAL_ACK_TIMEOUT_MASK: u8 = 0xF8;
}

/// Length of a REQ path record.
pub const PATH_LEN: usize = 44;
/// Length of the REQ private data field.
pub const REQ_PRIVATE_DATA_LEN: usize = 92;

/// Path MTU code to bytes: 1=256, 2=512, 3=1024, 4=2048, 5=4096, anything else `None`.
pub const fn mtu_bytes(code: u8) -> Option<u16> {
    match code {
        1 => Some(256),
        2 => Some(512),
        3 => Some(1024),
        4 => Some(2048),
        5 => Some(4096),
        _ => None,
    }
}

/// Bytes to path MTU code (the inverse of [`mtu_bytes`]).
pub const fn mtu_code(bytes: u16) -> Option<u8> {
    match bytes {
        256 => Some(1),
        512 => Some(2),
        1024 => Some(3),
        2048 => Some(4),
        4096 => Some(5),
        _ => None,
    }
}

/// A GID as an IP address: IPv4 when IPv4-mapped (`::ffff:a.b.c.d`, how RoCE writes IPv4
/// GIDs), IPv6 otherwise.
pub fn gid_to_ip(gid: [u8; 16]) -> IpAddr {
    let v6 = Ipv6Addr::from(gid);
    match v6.to_ipv4_mapped() {
        Some(v4) => IpAddr::V4(v4),
        None => IpAddr::V6(v6),
    }
}

/// An IP address as a RoCE GID: IPv4 becomes IPv4-mapped (`::ffff:a.b.c.d`).
pub fn ip_to_gid(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// Transport service type (REQ byte 43 bits 2..1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum TransportServiceType {
    /// 0: reliable connection.
    Rc,
    /// 1: unreliable connection.
    Uc,
    /// 3: XRC (with extended transport type 1).
    Xrc,
    /// Any other value (2 is RD in the IBTA, unused by RoCE).
    Other(u8),
}

impl TransportServiceType {
    /// The type of the 2-bit field (bits 2..1 of REQ byte 43, already shifted down).
    pub const fn from_bits(v: u8) -> Self {
        match v {
            0 => TransportServiceType::Rc,
            1 => TransportServiceType::Uc,
            3 => TransportServiceType::Xrc,
            _ => TransportServiceType::Other(v),
        }
    }
    /// The 2-bit field value.
    pub const fn to_bits(self) -> u8 {
        match self {
            TransportServiceType::Rc => 0,
            TransportServiceType::Uc => 1,
            TransportServiceType::Xrc => 3,
            TransportServiceType::Other(v) => v,
        }
    }
    /// "RC", "UC", "XRC", "RD", or "unknown transport".
    pub const fn name(self) -> &'static str {
        match self {
            TransportServiceType::Rc => "RC",
            TransportServiceType::Uc => "UC",
            TransportServiceType::Xrc => "XRC",
            TransportServiceType::Other(2) => "RD",
            TransportServiceType::Other(_) => "unknown transport",
        }
    }
}

header_view!(
    /// A zero-copy view of a REQ path record (44 bytes).
    CmPathView,
    Layer::Cm,
    PATH_LEN
);

impl<T: AsRef<[u8]>> CmPathView<T> {
    /// Local Port LID (bytes 0-1): the active side's 16-bit InfiniBand LID; RoCE has none,
    /// Linux writes 0xFFFF (permissive).
    pub fn local_lid(&self) -> u16 {
        be_u16(self.buffer.as_ref(), path_field::LOCAL_LID)
    }
    /// Remote Port LID (bytes 2-3): the passive side's LID (0xFFFF on RoCE, as the local).
    pub fn remote_lid(&self) -> u16 {
        be_u16(self.buffer.as_ref(), path_field::REMOTE_LID)
    }
    /// Local Port GID (bytes 4-19): the active side's 128-bit GID, its IP address on RoCEv2
    /// ([`gid_to_ip`]).
    pub fn local_gid(&self) -> [u8; 16] {
        gid_at(self.buffer.as_ref(), path_field::LOCAL_GID)
    }
    /// Remote Port GID (bytes 20-35): the passive side's GID, its IP address on RoCEv2.
    pub fn remote_gid(&self) -> [u8; 16] {
        gid_at(self.buffer.as_ref(), path_field::REMOTE_GID)
    }
    /// 20 bits.
    pub fn flow_label(&self) -> u32 {
        be_u32(self.buffer.as_ref(), path_field::FLOW_LABEL) >> 12
    }
    /// Packet Rate (byte 39 bits 5..0): the 6-bit IB rate code (3 = 10 Gb/s, 7 = 40 Gb/s).
    pub fn packet_rate(&self) -> u8 {
        bits(self.buffer.as_ref(), path_field::PACKET_RATE, path_field::PACKET_RATE_MASK)
    }
    /// Traffic Class (byte 40): the 8-bit traffic class of the path's GRH or IP header.
    pub fn traffic_class(&self) -> u8 {
        u8_at(self.buffer.as_ref(), path_field::TRAFFIC_CLASS)
    }
    /// Hop Limit (byte 41).
    pub fn hop_limit(&self) -> u8 {
        u8_at(self.buffer.as_ref(), path_field::HOP_LIMIT)
    }
    /// SL (byte 42 bits 7..4): the 4-bit service level.
    pub fn sl(&self) -> u8 {
        bits(self.buffer.as_ref(), path_field::BYTE_42, path_field::SL_MASK)
    }
    /// Subnet Local (byte 42 bit 3): the remote port is in the local subnet.
    pub fn subnet_local(&self) -> bool {
        bits(self.buffer.as_ref(), path_field::BYTE_42, path_field::SUBNET_LOCAL_MASK) != 0
    }
    /// Local ACK Timeout (byte 43 bits 7..3): the transport's ACK timeout, 4.096 us * 2^n.
    pub fn local_ack_timeout(&self) -> u8 {
        bits(
            self.buffer.as_ref(),
            path_field::LOCAL_ACK_TIMEOUT,
            path_field::LOCAL_ACK_TIMEOUT_MASK,
        )
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> CmPathView<T> {
    /// Writes the Local Port LID.
    pub fn set_local_lid(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), path_field::LOCAL_LID, v);
    }
    /// Writes the Remote Port LID.
    pub fn set_remote_lid(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), path_field::REMOTE_LID, v);
    }
    /// Writes the Local Port GID.
    pub fn set_local_gid(&mut self, v: [u8; 16]) {
        set_bytes(self.buffer.as_mut(), path_field::LOCAL_GID, &v);
    }
    /// Writes the Remote Port GID.
    pub fn set_remote_gid(&mut self, v: [u8; 16]) {
        set_bytes(self.buffer.as_mut(), path_field::REMOTE_GID, &v);
    }
    /// Writes the low 20 bits of `v` to the top 20 bits of bytes 36-39, keeping the rest.
    pub fn set_flow_label(&mut self, v: u32) {
        let b = self.buffer.as_mut();
        let old = be_u32(b, path_field::FLOW_LABEL);
        set_be_u32(b, path_field::FLOW_LABEL, (old & 0xFFF) | ((v & 0xF_FFFF) << 12));
    }
    /// Writes Packet Rate (low 6 bits of `v`), keeping the rest of byte 39.
    pub fn set_packet_rate(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, path_field::PACKET_RATE, path_field::PACKET_RATE_MASK, v);
    }
    /// Writes Traffic Class.
    pub fn set_traffic_class(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), path_field::TRAFFIC_CLASS, v);
    }
    /// Writes Hop Limit.
    pub fn set_hop_limit(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), path_field::HOP_LIMIT, v);
    }
    /// Writes SL (low 4 bits of `v`), keeping the rest of byte 42.
    pub fn set_sl(&mut self, v: u8) {
        set_bits(self.buffer.as_mut(), path_field::BYTE_42, path_field::SL_MASK, v);
    }
    /// Writes Subnet Local, keeping the rest of byte 42.
    pub fn set_subnet_local(&mut self, v: bool) {
        let b = self.buffer.as_mut();
        set_bits(b, path_field::BYTE_42, path_field::SUBNET_LOCAL_MASK, u8::from(v));
    }
    /// Writes Local ACK Timeout (low 5 bits of `v`), keeping the rest of byte 43.
    pub fn set_local_ack_timeout(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, path_field::LOCAL_ACK_TIMEOUT, path_field::LOCAL_ACK_TIMEOUT_MASK, v);
    }
}

fn gid_at(b: &[u8], r: core::ops::Range<usize>) -> [u8; 16] {
    b.get(r).and_then(|s| <[u8; 16]>::try_from(s).ok()).unwrap_or([0; 16])
}

/// A REQ path (primary or alternate) as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct CmPath {
    /// Local Port LID (0xFFFF on RoCE).
    pub local_lid: u16,
    /// Remote Port LID (0xFFFF on RoCE).
    pub remote_lid: u16,
    /// Local Port GID: the active side's address on RoCEv2.
    pub local_gid: [u8; 16],
    /// Remote Port GID: the passive side's address on RoCEv2.
    pub remote_gid: [u8; 16],
    /// 20 bits.
    pub flow_label: u32,
    /// 6 bits (IB rate code, e.g. 3 = 10 Gb/s, 7 = 40 Gb/s).
    pub packet_rate: u8,
    /// Traffic Class.
    pub traffic_class: u8,
    /// Hop Limit.
    pub hop_limit: u8,
    /// 4 bits.
    pub sl: u8,
    /// Subnet Local: the remote port is in the local subnet.
    pub subnet_local: bool,
    /// 5 bits (4.096 us * 2^n).
    pub local_ack_timeout: u8,
}

impl CmPath {
    /// Bytes on the wire: 44.
    pub const LEN: usize = PATH_LEN;

    /// A RoCEv2 path between two IP addresses, as Linux fills it: permissive LIDs (0xFFFF),
    /// hop limit 64, 40 Gb/s packet rate code, local ACK timeout 19 (the values of the REQ in
    /// read2.pcap).
    pub fn roce_v2(local: IpAddr, remote: IpAddr) -> Self {
        CmPath {
            local_lid: 0xFFFF,
            remote_lid: 0xFFFF,
            local_gid: ip_to_gid(local),
            remote_gid: ip_to_gid(remote),
            flow_label: 0,
            packet_rate: 7,
            traffic_class: 0,
            hop_limit: 64,
            sl: 0,
            subnet_local: false,
            local_ack_timeout: 19,
        }
    }

    /// The local GID as an IP address (IPv4 when IPv4-mapped).
    pub fn local_ip(&self) -> IpAddr {
        gid_to_ip(self.local_gid)
    }

    /// The remote GID as an IP address (IPv4 when IPv4-mapped).
    pub fn remote_ip(&self) -> IpAddr {
        gid_to_ip(self.remote_gid)
    }

    /// All-zero GIDs and LIDs: the alternate path of a REQ that has none.
    pub fn is_empty(&self) -> bool {
        self.local_lid == 0
            && self.remote_lid == 0
            && self.local_gid == [0; 16]
            && self.remote_gid == [0; 16]
    }

    /// Reads every field of a path view.
    pub fn parse<T: AsRef<[u8]>>(v: &CmPathView<T>) -> Self {
        CmPath {
            local_lid: v.local_lid(),
            remote_lid: v.remote_lid(),
            local_gid: v.local_gid(),
            remote_gid: v.remote_gid(),
            flow_label: v.flow_label(),
            packet_rate: v.packet_rate(),
            traffic_class: v.traffic_class(),
            hop_limit: v.hop_limit(),
            sl: v.sl(),
            subnet_local: v.subnet_local(),
            local_ack_timeout: v.local_ack_timeout(),
        }
    }

    /// Writes every field; reserved bits become zero.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut CmPathView<T>) {
        zero_fill(v.buffer.as_mut(), 0..PATH_LEN);
        v.set_local_lid(self.local_lid);
        v.set_remote_lid(self.remote_lid);
        v.set_local_gid(self.local_gid);
        v.set_remote_gid(self.remote_gid);
        v.set_flow_label(self.flow_label);
        v.set_packet_rate(self.packet_rate);
        v.set_traffic_class(self.traffic_class);
        v.set_hop_limit(self.hop_limit);
        v.set_sl(self.sl);
        v.set_subnet_local(self.subnet_local);
        v.set_local_ack_timeout(self.local_ack_timeout);
    }

    /// Bytes [`emit`](Self::emit) writes: 44.
    pub const fn buffer_len(&self) -> usize {
        PATH_LEN
    }
}

header_view!(
    /// A zero-copy view of a REQ, from the start of the MAD data. `LEN` is the fixed part
    /// (140 bytes, up to the private data); the whole message is 232 bytes.
    Req,
    Layer::Cm,
    140
);

impl<T: AsRef<[u8]>> Req<T> {
    /// Local Communication ID (bytes 0-3): the sender's 32-bit handle for the connection.
    pub fn local_comm_id(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::LOCAL_COMM_ID)
    }
    /// Service ID (bytes 8-15): the 64-bit ID of the listener asked for (RDMA-CM:
    /// [`RdmaCmServiceId`]).
    pub fn service_id(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::SERVICE_ID)
    }
    /// Local CA GUID (bytes 16-23): the 64-bit GUID of the active side's channel adapter.
    pub fn local_ca_guid(&self) -> u64 {
        be_u64(self.buffer.as_ref(), field::LOCAL_CA_GUID)
    }
    /// Local Q_Key (bytes 28-31): the Q_Key of the active side's QP (used by RD, not RC).
    pub fn local_qkey(&self) -> u32 {
        be_u32(self.buffer.as_ref(), field::LOCAL_QKEY)
    }
    /// Local QPN (bytes 32-34): the 24-bit QP number of the active side, the DestQP of the
    /// passive side's packets.
    pub fn local_qpn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::LOCAL_QPN)
    }
    /// Responder Resources (byte 35): RDMA READ and atomic requests the active side accepts
    /// outstanding, as a responder.
    pub fn responder_resources(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::RESPONDER_RESOURCES)
    }
    /// Local EECN (bytes 36-38): the 24-bit EE context number (RD only).
    pub fn local_eecn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::LOCAL_EECN)
    }
    /// Initiator Depth (byte 39): RDMA READ and atomic requests the active side keeps
    /// outstanding, as an initiator.
    pub fn initiator_depth(&self) -> u8 {
        u8_at(self.buffer.as_ref(), field::INITIATOR_DEPTH)
    }
    /// Remote EECN (bytes 40-42): the passive side's EE context (RD only).
    pub fn remote_eecn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::REMOTE_EECN)
    }
    /// Remote CM Response Timeout (byte 43 bits 7..3): how long the active side waits for
    /// the passive side's CM answer, 4.096 us * 2^n.
    pub fn remote_cm_response_timeout(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_43, field::REMOTE_CM_RESPONSE_TIMEOUT_MASK)
    }
    /// Transport Service Type (byte 43 bits 2..1): RC, UC or XRC.
    pub fn transport_service_type(&self) -> TransportServiceType {
        TransportServiceType::from_bits(bits(
            self.buffer.as_ref(),
            field::BYTE_43,
            field::TRANSPORT_SERVICE_TYPE_MASK,
        ))
    }
    /// End-to-End Flow Control (byte 43 bit 0): the active side's ACKs carry credits.
    pub fn end_to_end_flow_control(&self) -> bool {
        bits(self.buffer.as_ref(), field::BYTE_43, field::END_TO_END_FLOW_CONTROL_MASK) != 0
    }
    /// Starting PSN (bytes 44-46): 24 bits, the PSN the active side expects to receive
    /// first (the passive side's first send PSN).
    pub fn starting_psn(&self) -> u32 {
        be_u24(self.buffer.as_ref(), field::STARTING_PSN)
    }
    /// Local CM Response Timeout (byte 47 bits 7..3): how long the active side takes to
    /// answer CM messages, 4.096 us * 2^n.
    pub fn local_cm_response_timeout(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_47, field::LOCAL_CM_RESPONSE_TIMEOUT_MASK)
    }
    /// Retry Count (byte 47 bits 2..0): how often the passive side resends after a transport
    /// (ACK) timeout.
    pub fn retry_count(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_47, field::RETRY_COUNT_MASK)
    }
    /// P_Key (bytes 48-49): the partition key the connection's BTHs carry.
    pub fn pkey(&self) -> u16 {
        be_u16(self.buffer.as_ref(), field::PKEY)
    }
    /// The path MTU code (1=256 ... 5=4096).
    pub fn path_mtu(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_50, field::PATH_MTU_MASK)
    }
    /// RDC Exists (byte 50 bit 3): RD only.
    pub fn rdc_exists(&self) -> bool {
        bits(self.buffer.as_ref(), field::BYTE_50, field::RDC_EXISTS_MASK) != 0
    }
    /// RNR Retry Count (byte 50 bits 2..0): how often the passive side resends after an RNR
    /// NAK from the active side (7: without limit).
    pub fn rnr_retry_count(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_50, field::RNR_RETRY_COUNT_MASK)
    }
    /// Max CM Retries (byte 51 bits 7..4): how often the CM resends this REQ unanswered.
    pub fn max_cm_retries(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_51, field::MAX_CM_RETRIES_MASK)
    }
    /// SRQ (byte 51 bit 3): the active side's QP takes receives from a shared receive queue.
    pub fn srq(&self) -> bool {
        bits(self.buffer.as_ref(), field::BYTE_51, field::SRQ_MASK) != 0
    }
    /// Extended Transport Type (byte 51 bits 2..0): 1 with XRC.
    pub fn extended_transport_type(&self) -> u8 {
        bits(self.buffer.as_ref(), field::BYTE_51, field::EXTENDED_TRANSPORT_TYPE_MASK)
    }
    /// The primary path (bytes 52-95), clipped to the buffer.
    pub fn primary_path(&self) -> CmPathView<&[u8]> {
        CmPathView::new_unchecked(clipped(self.buffer.as_ref(), field::PRIMARY_PATH))
    }
    /// The alternate path (bytes 96-139), clipped to the buffer.
    pub fn alternate_path(&self) -> CmPathView<&[u8]> {
        CmPathView::new_unchecked(clipped(self.buffer.as_ref(), field::ALTERNATE_PATH))
    }
    /// The private data present (up to 92 bytes; fewer when the buffer is short).
    pub fn private_data(&self) -> &[u8] {
        clipped(self.buffer.as_ref(), field::PRIVATE_DATA)
    }
}

impl<'a> Req<&'a [u8]> {
    /// The private data, borrowed for the buffer's lifetime.
    pub fn private_data_ref(&self) -> &'a [u8] {
        clipped(self.buffer, field::PRIVATE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Req<T> {
    /// Writes the Local Communication ID.
    pub fn set_local_comm_id(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::LOCAL_COMM_ID, v);
    }
    /// Writes the Service ID.
    pub fn set_service_id(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::SERVICE_ID, v);
    }
    /// Writes the Local CA GUID.
    pub fn set_local_ca_guid(&mut self, v: u64) {
        set_be_u64(self.buffer.as_mut(), field::LOCAL_CA_GUID, v);
    }
    /// Writes the Local Q_Key.
    pub fn set_local_qkey(&mut self, v: u32) {
        set_be_u32(self.buffer.as_mut(), field::LOCAL_QKEY, v);
    }
    /// Writes the Local QPN: the low 24 bits of `v`.
    pub fn set_local_qpn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::LOCAL_QPN, v);
    }
    /// Writes Responder Resources.
    pub fn set_responder_resources(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::RESPONDER_RESOURCES, v);
    }
    /// Writes the Local EECN: the low 24 bits of `v`.
    pub fn set_local_eecn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::LOCAL_EECN, v);
    }
    /// Writes Initiator Depth.
    pub fn set_initiator_depth(&mut self, v: u8) {
        set_u8(self.buffer.as_mut(), field::INITIATOR_DEPTH, v);
    }
    /// Writes the Remote EECN: the low 24 bits of `v`.
    pub fn set_remote_eecn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::REMOTE_EECN, v);
    }
    /// Writes Remote CM Response Timeout (low 5 bits), keeping the rest of byte 43.
    pub fn set_remote_cm_response_timeout(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_43, field::REMOTE_CM_RESPONSE_TIMEOUT_MASK, v);
    }
    /// Writes Transport Service Type, keeping the rest of byte 43.
    pub fn set_transport_service_type(&mut self, v: TransportServiceType) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_43, field::TRANSPORT_SERVICE_TYPE_MASK, v.to_bits());
    }
    /// Writes End-to-End Flow Control, keeping the rest of byte 43.
    pub fn set_end_to_end_flow_control(&mut self, v: bool) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_43, field::END_TO_END_FLOW_CONTROL_MASK, u8::from(v));
    }
    /// Writes the Starting PSN: the low 24 bits of `v`.
    pub fn set_starting_psn(&mut self, v: u32) {
        set_be_u24(self.buffer.as_mut(), field::STARTING_PSN, v);
    }
    /// Writes Local CM Response Timeout (low 5 bits), keeping the rest of byte 47.
    pub fn set_local_cm_response_timeout(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_47, field::LOCAL_CM_RESPONSE_TIMEOUT_MASK, v);
    }
    /// Writes Retry Count (low 3 bits), keeping the rest of byte 47.
    pub fn set_retry_count(&mut self, v: u8) {
        set_bits(self.buffer.as_mut(), field::BYTE_47, field::RETRY_COUNT_MASK, v);
    }
    /// Writes the P_Key.
    pub fn set_pkey(&mut self, v: u16) {
        set_be_u16(self.buffer.as_mut(), field::PKEY, v);
    }
    /// Writes the path MTU code (low 4 bits), keeping the rest of byte 50.
    pub fn set_path_mtu(&mut self, v: u8) {
        set_bits(self.buffer.as_mut(), field::BYTE_50, field::PATH_MTU_MASK, v);
    }
    /// Writes RDC Exists, keeping the rest of byte 50.
    pub fn set_rdc_exists(&mut self, v: bool) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_50, field::RDC_EXISTS_MASK, u8::from(v));
    }
    /// Writes RNR Retry Count (low 3 bits), keeping the rest of byte 50.
    pub fn set_rnr_retry_count(&mut self, v: u8) {
        set_bits(self.buffer.as_mut(), field::BYTE_50, field::RNR_RETRY_COUNT_MASK, v);
    }
    /// Writes Max CM Retries (low 4 bits), keeping the rest of byte 51.
    pub fn set_max_cm_retries(&mut self, v: u8) {
        set_bits(self.buffer.as_mut(), field::BYTE_51, field::MAX_CM_RETRIES_MASK, v);
    }
    /// Writes SRQ, keeping the rest of byte 51.
    pub fn set_srq(&mut self, v: bool) {
        set_bits(self.buffer.as_mut(), field::BYTE_51, field::SRQ_MASK, u8::from(v));
    }
    /// Writes Extended Transport Type (low 3 bits), keeping the rest of byte 51.
    pub fn set_extended_transport_type(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        set_bits(b, field::BYTE_51, field::EXTENDED_TRANSPORT_TYPE_MASK, v);
    }
    /// The primary path, writable (empty when the buffer is short of it).
    pub fn primary_path_mut(&mut self) -> CmPathView<&mut [u8]> {
        let b = self.buffer.as_mut();
        CmPathView::new_unchecked(b.get_mut(field::PRIMARY_PATH).unwrap_or(&mut []))
    }
    /// The alternate path, writable (empty when the buffer is short of it).
    pub fn alternate_path_mut(&mut self) -> CmPathView<&mut [u8]> {
        let b = self.buffer.as_mut();
        CmPathView::new_unchecked(b.get_mut(field::ALTERNATE_PATH).unwrap_or(&mut []))
    }
    /// Copies up to 92 bytes of `v` into the private data and zero-fills the rest of the field
    /// (within the buffer).
    pub fn set_private_data(&mut self, v: &[u8]) {
        write_clipped(self.buffer.as_mut(), field::PRIVATE_DATA, v);
    }
}

/// A REQ as plain values, borrowing its private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ReqRepr<'a> {
    /// The active side's Local Communication ID.
    pub local_comm_id: u32,
    /// The listener's service ID.
    pub service_id: u64,
    /// GUID of the active side's channel adapter.
    pub local_ca_guid: u64,
    /// The active side's Q_Key (RD).
    pub local_qkey: u32,
    /// 24 bits: the active side's QP.
    pub local_qpn: u32,
    /// RDMA READ / atomic requests accepted outstanding.
    pub responder_resources: u8,
    /// 24 bits.
    pub local_eecn: u32,
    /// RDMA READ / atomic requests kept outstanding.
    pub initiator_depth: u8,
    /// 24 bits.
    pub remote_eecn: u32,
    /// 5 bits.
    pub remote_cm_response_timeout: u8,
    /// RC, UC or XRC.
    pub transport_service_type: TransportServiceType,
    /// The active side's ACKs carry end-to-end credits.
    pub end_to_end_flow_control: bool,
    /// 24 bits: the PSN the active side expects to receive first.
    pub starting_psn: u32,
    /// 5 bits.
    pub local_cm_response_timeout: u8,
    /// 3 bits.
    pub retry_count: u8,
    /// The partition key of the connection.
    pub pkey: u16,
    /// 4 bits: the path MTU code (see [`ReqRepr::pmtu_bytes`]).
    pub path_mtu: u8,
    /// RD only.
    pub rdc_exists: bool,
    /// 3 bits.
    pub rnr_retry_count: u8,
    /// 4 bits.
    pub max_cm_retries: u8,
    /// The active side's QP uses a shared receive queue.
    pub srq: bool,
    /// 3 bits.
    pub extended_transport_type: u8,
    /// The primary path.
    pub primary_path: CmPath,
    /// The alternate path (all zero without one).
    pub alternate_path: CmPath,
    /// Up to 92 bytes (what the MAD holds; 92 for a whole MAD).
    pub private_data: &'a [u8],
}

impl<'a> ReqRepr<'a> {
    /// Parses a REQ view; the fixed part (140 bytes) must be present, the private data is what
    /// follows it (up to 92 bytes).
    pub fn parse(v: &Req<&'a [u8]>) -> crate::Result<Self> {
        let len = v.buffer.len();
        if len < Req::<&[u8]>::LEN {
            return Err(crate::Error::truncated(Layer::Cm, 0, Req::<&[u8]>::LEN, len));
        }
        Ok(ReqRepr {
            local_comm_id: v.local_comm_id(),
            service_id: v.service_id(),
            local_ca_guid: v.local_ca_guid(),
            local_qkey: v.local_qkey(),
            local_qpn: v.local_qpn(),
            responder_resources: v.responder_resources(),
            local_eecn: v.local_eecn(),
            initiator_depth: v.initiator_depth(),
            remote_eecn: v.remote_eecn(),
            remote_cm_response_timeout: v.remote_cm_response_timeout(),
            transport_service_type: v.transport_service_type(),
            end_to_end_flow_control: v.end_to_end_flow_control(),
            starting_psn: v.starting_psn(),
            local_cm_response_timeout: v.local_cm_response_timeout(),
            retry_count: v.retry_count(),
            pkey: v.pkey(),
            path_mtu: v.path_mtu(),
            rdc_exists: v.rdc_exists(),
            rnr_retry_count: v.rnr_retry_count(),
            max_cm_retries: v.max_cm_retries(),
            srq: v.srq(),
            extended_transport_type: v.extended_transport_type(),
            primary_path: CmPath::parse(&v.primary_path()),
            alternate_path: CmPath::parse(&v.alternate_path()),
            private_data: v.private_data_ref(),
        })
    }

    /// Writes the whole 232-byte message: reserved bytes zero, private data zero-padded (and
    /// cut at 92 bytes; [`super::CmMessage::emit_mad`] refuses longer private data instead).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut Req<T>) {
        zero_fill(v.buffer.as_mut(), 0..MAD_DATA_LEN);
        v.set_local_comm_id(self.local_comm_id);
        v.set_service_id(self.service_id);
        v.set_local_ca_guid(self.local_ca_guid);
        v.set_local_qkey(self.local_qkey);
        v.set_local_qpn(self.local_qpn);
        v.set_responder_resources(self.responder_resources);
        v.set_local_eecn(self.local_eecn);
        v.set_initiator_depth(self.initiator_depth);
        v.set_remote_eecn(self.remote_eecn);
        v.set_remote_cm_response_timeout(self.remote_cm_response_timeout);
        v.set_transport_service_type(self.transport_service_type);
        v.set_end_to_end_flow_control(self.end_to_end_flow_control);
        v.set_starting_psn(self.starting_psn);
        v.set_local_cm_response_timeout(self.local_cm_response_timeout);
        v.set_retry_count(self.retry_count);
        v.set_pkey(self.pkey);
        v.set_path_mtu(self.path_mtu);
        v.set_rdc_exists(self.rdc_exists);
        v.set_rnr_retry_count(self.rnr_retry_count);
        v.set_max_cm_retries(self.max_cm_retries);
        v.set_srq(self.srq);
        v.set_extended_transport_type(self.extended_transport_type);
        self.primary_path.emit(&mut v.primary_path_mut());
        self.alternate_path.emit(&mut v.alternate_path_mut());
        v.set_private_data(self.private_data);
    }

    /// The bytes `emit` writes: the whole message (232).
    pub const fn buffer_len(&self) -> usize {
        MAD_DATA_LEN
    }

    /// The path MTU in bytes (256 ... 4096), `None` for a reserved code.
    pub const fn pmtu_bytes(&self) -> Option<u16> {
        mtu_bytes(self.path_mtu)
    }

    /// The RDMA-CM port space and destination port, when the service ID has the RDMA-CM
    /// prefix 0x0000000001.
    pub const fn rdma_cm_service(&self) -> Option<RdmaCmServiceId> {
        RdmaCmServiceId::from_service_id(self.service_id)
    }

    /// The RDMA-CM IP header at the start of the private data, when the service ID has the
    /// RDMA-CM prefix and the header parses (IP version 4 or 6).
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

    /// An RC REQ as Linux RDMA-CM (rxe) sends it over RoCEv2 from `src` to `dst` in port space
    /// `port_space`: service ID = RDMA-CM prefix, port space, `dst` port; paths from the IPs;
    /// 1024-byte path MTU; the CM timeouts, retry counts and resources of the REQ in read2.pcap.
    /// `private_data` is the whole private data, normally an [`RdmaCmIpHeader`] followed by
    /// the consumer's data:
    ///
    /// ```
    /// use core::net::{IpAddr, Ipv4Addr, SocketAddr};
    /// use roce_parser::{PortSpace, RdmaCmIpHeader, ReqRepr};
    /// let src = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 50000);
    /// let dst = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 7471);
    /// let pd = RdmaCmIpHeader::new(src, dst.ip()).to_bytes();
    /// let req = ReqRepr {
    ///     local_comm_id: 0x1234,
    ///     local_qpn: 0x11,
    ///     starting_psn: 0xabcdef,
    ///     ..ReqRepr::rdma_cm(PortSpace::Tcp, src, dst, &pd)
    /// };
    /// let mut mad = [0u8; 256];
    /// assert_eq!(req.emit_mad(1, &mut mad), Ok(256));
    /// assert_eq!(req.rdma_cm_ip_header().unwrap().dst_ip, dst.ip());
    /// ```
    pub fn rdma_cm(
        port_space: PortSpace,
        src: core::net::SocketAddr,
        dst: core::net::SocketAddr,
        private_data: &'a [u8],
    ) -> Self {
        ReqRepr {
            local_comm_id: 0,
            service_id: rdma_cm::service_id(port_space, dst.port()),
            local_ca_guid: 0,
            local_qkey: 0,
            local_qpn: 0,
            responder_resources: 3,
            local_eecn: 0,
            initiator_depth: 3,
            remote_eecn: 0,
            remote_cm_response_timeout: 22,
            transport_service_type: TransportServiceType::Rc,
            end_to_end_flow_control: false,
            starting_psn: 0,
            local_cm_response_timeout: 22,
            retry_count: 3,
            pkey: 0xFFFF,
            path_mtu: 3,
            rdc_exists: false,
            rnr_retry_count: 0,
            max_cm_retries: 15,
            srq: false,
            extended_transport_type: 0,
            primary_path: CmPath::roce_v2(src.ip(), dst.ip()),
            alternate_path: CmPath::default(),
            private_data,
        }
    }

    /// Writes a whole 256-byte CM MAD (header: base version 1, class CM, class version 2,
    /// method Send, attribute REQ, transaction ID `tid`) to `out`; returns 256.
    pub fn emit_mad(&self, tid: u64, out: &mut [u8]) -> crate::Result<usize> {
        super::CmMessage::Req(*self).emit_mad(tid, out)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use core::net::Ipv4Addr;
    use std::vec::Vec;

    /// The REQ data of read2.pcap frame 4 (MAD bytes 24..256), written out from the capture.
    pub(crate) fn read2_req_data() -> [u8; 232] {
        let mut d = [0u8; 232];
        let parts: &[(usize, &[u8])] = &[
            (0, &[0x73, 0xef, 0x75, 0x29]),
            (8, &[0, 0, 0, 0, 0x01, 0x06, 0x30, 0x39]),
            (16, &[0x08, 0xc0, 0xeb, 0x03, 0x00, 0xda, 0xe2, 0xe6]),
            (32, &[0x00, 0x01, 0x39, 0x03, 0, 0, 0, 0x03, 0, 0, 0, 0xb0, 0xf0, 0x45, 0xd0, 0xb3]),
            (48, &[0xff, 0xff, 0x30, 0xf0, 0xff, 0xff, 0xff, 0xff]),
            (66, &[0xff, 0xff, 0xac, 0x11, 0xf2, 0x2f]),
            (82, &[0xff, 0xff, 0xac, 0x11, 0xf2, 0x38]),
            (88, &[0x00, 0x00, 0x00, 0x07, 0x00, 0x40, 0x00, 0x98]),
            (141, &[0x40, 0xc7, 0xfe]),
            (156, &[0xac, 0x11, 0xf2, 0x2f]),
            (172, &[0xac, 0x11, 0xf2, 0x38]),
        ];
        for (at, bytes) in parts {
            d[*at..*at + bytes.len()].copy_from_slice(bytes);
        }
        d
    }

    #[test]
    fn parse_emit_literal_req() {
        let data = read2_req_data();
        let r = ReqRepr::parse(&Req::new_checked(&data[..]).unwrap()).unwrap();
        assert_eq!(r.local_comm_id, 0x73ef_7529);
        assert_eq!(r.service_id, 0x0000_0000_0106_3039);
        assert_eq!(r.local_ca_guid, 0x08c0_eb03_00da_e2e6);
        assert_eq!(r.local_qkey, 0);
        assert_eq!(r.local_qpn, 0x139);
        assert_eq!(r.responder_resources, 3);
        assert_eq!(r.local_eecn, 0);
        assert_eq!(r.initiator_depth, 3);
        assert_eq!(r.remote_eecn, 0);
        assert_eq!(r.remote_cm_response_timeout, 0x16);
        assert_eq!(r.transport_service_type, TransportServiceType::Rc);
        assert!(!r.end_to_end_flow_control);
        assert_eq!(r.starting_psn, 0xf045d0);
        assert_eq!(r.local_cm_response_timeout, 0x16);
        assert_eq!(r.retry_count, 3);
        assert_eq!(r.pkey, 0xffff);
        assert_eq!(r.path_mtu, 3);
        assert_eq!(r.pmtu_bytes(), Some(1024));
        assert!(!r.rdc_exists);
        assert_eq!(r.rnr_retry_count, 0);
        assert_eq!(r.max_cm_retries, 15);
        assert!(!r.srq);
        assert_eq!(r.extended_transport_type, 0);
        let p = r.primary_path;
        assert_eq!((p.local_lid, p.remote_lid), (0xffff, 0xffff));
        assert_eq!(p.local_ip(), IpAddr::V4(Ipv4Addr::new(172, 17, 242, 47)));
        assert_eq!(p.remote_ip(), IpAddr::V4(Ipv4Addr::new(172, 17, 242, 56)));
        assert_eq!(p.flow_label, 0);
        assert_eq!(p.packet_rate, 7);
        assert_eq!((p.traffic_class, p.hop_limit, p.sl), (0, 0x40, 0));
        assert!(!p.subnet_local);
        assert_eq!(p.local_ack_timeout, 0x13);
        assert!(r.alternate_path.is_empty());
        assert_eq!(r.private_data.len(), 92);
        let svc = r.rdma_cm_service().unwrap();
        assert_eq!((svc.port_space, svc.port), (PortSpace::Tcp, 12345));
        let ip = r.rdma_cm_ip_header().unwrap();
        assert_eq!((ip.version, ip.ip_version, ip.src_port), (0, 4, 0xc7fe));
        assert_eq!(ip.src_ip, IpAddr::V4(Ipv4Addr::new(172, 17, 242, 47)));
        assert_eq!(ip.dst_ip, IpAddr::V4(Ipv4Addr::new(172, 17, 242, 56)));
        assert_eq!(r.consumer_private_data().len(), 92 - 36);

        let mut out = [0xAAu8; 232];
        r.emit(&mut Req::new_unchecked(&mut out[..]));
        assert_eq!(out, data);
        assert_eq!(r.buffer_len(), 232);
    }

    #[test]
    fn every_bit_field_round_trips() {
        let pd = [0x5Au8; 92];
        let path = CmPath {
            local_lid: 0xFFFF,
            remote_lid: 0xFFFF,
            local_gid: [0xFF; 16],
            remote_gid: [0xFF; 16],
            flow_label: 0xF_FFFF,
            packet_rate: 0x3F,
            traffic_class: 0xFF,
            hop_limit: 0xFF,
            sl: 0xF,
            subnet_local: true,
            local_ack_timeout: 0x1F,
        };
        let r = ReqRepr {
            local_comm_id: u32::MAX,
            service_id: u64::MAX,
            local_ca_guid: u64::MAX,
            local_qkey: u32::MAX,
            local_qpn: 0xFF_FFFF,
            responder_resources: 0xFF,
            local_eecn: 0xFF_FFFF,
            initiator_depth: 0xFF,
            remote_eecn: 0xFF_FFFF,
            remote_cm_response_timeout: 0x1F,
            transport_service_type: TransportServiceType::Xrc,
            end_to_end_flow_control: true,
            starting_psn: 0xFF_FFFF,
            local_cm_response_timeout: 0x1F,
            retry_count: 7,
            pkey: 0xFFFF,
            path_mtu: 0xF,
            rdc_exists: true,
            rnr_retry_count: 7,
            max_cm_retries: 0xF,
            srq: true,
            extended_transport_type: 7,
            primary_path: path,
            alternate_path: CmPath { sl: 1, ..path },
            private_data: &pd,
        };
        let mut out = [0u8; 232];
        r.emit(&mut Req::new_unchecked(&mut out[..]));
        let back = ReqRepr::parse(&Req::new_checked(&out[..]).unwrap()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.pmtu_bytes(), None);
        // Every byte is all ones except the reserved ones.
        let reserved: Vec<usize> = (0..140).filter(|&i| out[i] != 0xFF).collect();
        assert_eq!(
            reserved,
            [
                4,
                5,
                6,
                7,
                24,
                25,
                26,
                27,
                52 + 38,
                52 + 39,
                52 + 42,
                52 + 43,
                96 + 38,
                96 + 39,
                96 + 42,
                96 + 43
            ]
        );
        // Byte 38: low nibble reserved; 39: top 2 bits reserved; 42: low 3 bits; 43: low 3.
        assert_eq!([out[90], out[91], out[94], out[95]], [0xF0, 0x3F, 0xF8, 0xF8]);
        assert_eq!([out[134], out[135], out[138], out[139]], [0xF0, 0x3F, 0x18, 0xF8]);
    }

    #[test]
    fn short_req_is_truncated() {
        let data = read2_req_data();
        let e = ReqRepr::parse(&Req::new_unchecked(&data[..139])).unwrap_err();
        assert_eq!((e.layer, e.needed, e.available), (Layer::Cm, 140, 139));
        let r = ReqRepr::parse(&Req::new_unchecked(&data[..150])).unwrap();
        assert_eq!(r.private_data.len(), 10);
        assert!(r.rdma_cm_ip_header().is_none());
    }

    #[test]
    fn mtu_and_gid_helpers() {
        for code in 0..16u8 {
            if let Some(b) = mtu_bytes(code) {
                assert_eq!(mtu_code(b), Some(code));
            }
        }
        assert_eq!(mtu_bytes(1), Some(256));
        assert_eq!(mtu_bytes(5), Some(4096));
        assert_eq!(mtu_bytes(6), None);
        let v6 = IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 1, 2, 3, 4));
        assert_eq!(gid_to_ip(ip_to_gid(v6)), v6);
        let v4 = IpAddr::V4(Ipv4Addr::new(192, 168, 0, 7));
        assert_eq!(gid_to_ip(ip_to_gid(v4)), v4);
        assert_eq!(TransportServiceType::from_bits(2).name(), "RD");
        for v in 0..4 {
            assert_eq!(TransportServiceType::from_bits(v).to_bits(), v);
        }
    }
}
