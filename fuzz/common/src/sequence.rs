//! Packet sequences for the conformance checker.
//!
//! Input layout: byte 0 holds the checker options ([`options`]); then records, each a
//! little-endian `u16` header and that many bytes (cut at the end of the input). Bit 15 of
//! the header clear: the record is an Ethernet frame, fed as is. Set: the record is decoded
//! through `arbitrary` as a [`PktSpec`] and built into a frame: a few hosts and QPs (or as
//! many subnets of them as the fuzzer likes, for state-growth), PSNs in
//! a small window (near the 24-bit wrap), CM messages that name those QPs and PSNs, so
//! connections form, pair, retransmit, NAK and get evicted rather than every packet being a
//! stranger. Seeds are all raw records (captured frame sequences); the fuzzer's mutations
//! turn some into structured ones.

use arbitrary::{Arbitrary, Unstructured};
use core::net::{IpAddr, Ipv4Addr, SocketAddr};
use roce_parser::cm::{
    CmMessage, DrepRepr, DreqRepr, MessageRef, PortSpace, RejRepr, RejectReason, RepRepr, ReqRepr,
    RtuRepr,
};
use roce_parser::headers::*;
use roce_parser::{FrameBuilder, Ipv4Spec, Network};

/// Header bit marking a structured record.
pub const STRUCTURED: u16 = 0x8000;

/// The checker options byte 0 selects: at most 1..=8 flows (so eviction happens), lossless
/// or not, a PMTU option or none, 1 or 4 findings kept per rule.
pub fn options(b: u8) -> roce_conformance::Options {
    roce_conformance::Options {
        assume_complete: b & 0x08 != 0,
        max_flows: 1 + usize::from(b & 0x07),
        pmtu: match (b >> 4) & 7 {
            k @ 0..=4 => Some(256 << k),
            _ => None,
        },
        max_findings_per_rule: if b & 0x80 != 0 { 4 } else { 1 },
        ..Default::default()
    }
}

/// Splits the records off `data` (after the options byte): (structured, bytes).
pub fn records(data: &[u8]) -> impl Iterator<Item = (bool, &[u8])> {
    let mut rest = data.get(1..).unwrap_or(&[]);
    std::iter::from_fn(move || {
        let (head, tail) = rest.split_first_chunk::<2>()?;
        let h = u16::from_le_bytes(*head);
        let len = usize::from(h & !STRUCTURED).min(tail.len());
        let (rec, after) = tail.split_at(len);
        rest = after;
        Some((h & STRUCTURED != 0, rec))
    })
}

/// Encodes frames as raw records after an options byte (for seeds).
pub fn encode(options: u8, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![options];
    for f in frames {
        let len = f.len().min(0x7fff);
        out.extend_from_slice(&(len as u16).to_le_bytes());
        out.extend_from_slice(&f[..len]);
    }
    out
}

/// A CM message between the fuzz hosts.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct CmLite {
    /// REQ, REP, RTU, REJ, DREQ, DREP by this value modulo 6.
    pub kind: u8,
    pub local_comm_id: u8,
    pub remote_comm_id: u8,
    pub qpn: u8,
    pub psn: u16,
    /// Path MTU code 1..=5 (256..4096) by this value modulo 5.
    pub mtu: u8,
}

/// One generated packet.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct PktSpec {
    /// Source host (bits 0-1) and destination host (bits 2-3) among 10.0.N.1-4.
    pub hosts: u8,
    /// N: the hosts' subnet (mostly 0 in seeds: the same four hosts talk).
    pub subnet: u8,
    /// DestQP 0x10-0x17 by its low 3 bits.
    pub qp: u8,
    pub opcode: u8,
    /// PSN: 0xFFFF00 + this, modulo 2^24 (crosses the wrap).
    pub psn: u16,
    /// Nanoseconds added to the clock (negative: time goes back).
    pub ts_step: i32,
    /// SE, M, FECN, BECN, AckReq, ECN CE, bad ICRC, truncated.
    pub flags: u8,
    /// Payload bytes (modulo 4097).
    pub payload_len: u16,
    pub aeth: AethRepr,
    pub reth: RethRepr,
    pub atomic: AtomicEthRepr,
    pub imm: u32,
    /// A CM MAD (a UD SEND_ONLY to QP1) instead of the packet above.
    pub cm: Option<CmLite>,
}

fn host(subnet: u8, i: u8) -> [u8; 4] {
    [10, 0, subnet, 1 + (i & 3)]
}

fn qpn(q: u8) -> u32 {
    0x10 + u32::from(q & 7)
}

/// The frame of a structured record (`None` when the bytes do not decode), and the clock step.
pub fn build(rec: &[u8]) -> Option<(Vec<u8>, i64)> {
    let s = PktSpec::arbitrary(&mut Unstructured::new(rec)).ok()?;
    let (src, dst) = (host(s.subnet, s.hosts), host(s.subnet, s.hosts >> 2));
    let flag = |bit: u8| s.flags & (1 << bit) != 0;
    let network = Network::Ipv4(Ipv4Spec {
        src,
        dst,
        dscp: 26,
        ecn: if flag(5) { 3 } else { 2 },
        ttl: 64,
        identification: 0,
        dont_fragment: true,
    });
    let mad;
    let payload_len = usize::from(s.payload_len) % 4097;
    let zeros = vec![0u8; payload_len];
    let mut bth = BthRepr {
        opcode: s.opcode,
        se: flag(0),
        migreq: flag(1),
        pkey: 0xffff,
        fecn: flag(2),
        becn: flag(3),
        dest_qp: qpn(s.qp),
        ackreq: flag(4),
        psn: (0xFF_FF00 + u32::from(s.psn)) & 0xFF_FFFF,
        ..Default::default()
    };
    let mut headers = ExtHeaders {
        aeth: Some(s.aeth.normalized()),
        reth: Some(s.reth),
        atomic_eth: Some(s.atomic),
        immdt: Some(ImmDtRepr { data: s.imm }),
        ieth: Some(IethRepr { rkey: s.imm }),
        ..Default::default()
    };
    let payload: &[u8] = match s.cm {
        Some(cm) => {
            bth.opcode = 0x64;
            bth.dest_qp = 1;
            headers.deth = Some(DethRepr { qkey: 0x8001_0000, reserved: 0, src_qp: 1 });
            mad = cm_mad(&cm, src, dst)?;
            &mad
        }
        None => &zeros,
    };
    let mut b = FrameBuilder::new(network, bth);
    b.headers = headers;
    b.payload = payload;
    if flag(6) {
        b.icrc = Some(0);
    }
    let mut out = vec![0u8; b.buffer_len()];
    b.emit(&mut out).ok()?;
    if flag(7) {
        out.truncate(out.len() / 2);
    }
    Some((out, i64::from(s.ts_step)))
}

fn cm_mad(cm: &CmLite, src: [u8; 4], dst: [u8; 4]) -> Option<[u8; 256]> {
    let a = SocketAddr::new(IpAddr::V4(Ipv4Addr::from(src)), 40000);
    let b = SocketAddr::new(IpAddr::V4(Ipv4Addr::from(dst)), 7471);
    let lc = u32::from(cm.local_comm_id);
    let rc = u32::from(cm.remote_comm_id);
    let psn = (0xFF_FF00 + u32::from(cm.psn)) & 0xFF_FFFF;
    let req = ReqRepr {
        local_comm_id: lc,
        local_qpn: qpn(cm.qpn),
        starting_psn: psn,
        path_mtu: 1 + cm.mtu % 5,
        ..ReqRepr::rdma_cm(PortSpace::Tcp, a, b, &[])
    };
    let msg = match cm.kind % 6 {
        0 => CmMessage::Req(req),
        1 => CmMessage::Rep(RepRepr {
            remote_comm_id: rc,
            ..RepRepr::reply_to(&req, lc, qpn(cm.qpn), psn, 0)
        }),
        2 => CmMessage::Rtu(RtuRepr::new(lc, rc)),
        3 => CmMessage::Rej(RejRepr::new(lc, rc, MessageRef::Req, RejectReason::from_u16(28))),
        4 => CmMessage::Dreq(DreqRepr::new(lc, rc, qpn(cm.qpn))),
        _ => CmMessage::Drep(DrepRepr::new(lc, rc)),
    };
    let mut out = [0u8; 256];
    msg.emit_mad(u64::from(lc), &mut out).ok()?;
    Some(out)
}
