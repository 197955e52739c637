//! Packet sequences for the conformance checker.
//!
//! Input layout: bytes 0 and 1 hold the checker options ([`options`]); then records, each a
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
use roce_parser::*;

/// Header bit marking a structured record.
pub const STRUCTURED: u16 = 0x8000;

/// Bytes before the records: the checker options ([`options`]).
pub const OPTION_BYTES: usize = 2;

/// `--qp-timeout` exponents byte 1 selects (bits 0-2; 0: off). The raw records are 1 us
/// apart, so the small ones judge what the fuzzer's retransmissions do.
const QP_TIMEOUTS: [u8; 7] = [1, 2, 4, 8, 12, 14, 20];
/// `--cnp-min-interval` byte 1 selects (bits 3-5; 0: off): the interval (ns) and scope.
const CNP_PACINGS: [(u64, roce_conformance::CnpScope); 7] = {
    use roce_conformance::CnpScope::{Dest, Pair, Qp};
    [
        (1_000, Qp),
        (50_000, Qp),
        (4_000, Pair),
        (50_000, Pair),
        (4_000, Dest),
        (50_000, Dest),
        (1_000_000, Qp),
    ]
};
/// `--rnr-timer` codes byte 1 selects (bits 6-7; 0: off): 655.36 ms, 1.28 ms, 491.52 ms.
const RNR_TIMERS: [u8; 3] = [0, 14, 31];

/// The checker options the two option bytes select. Byte 0: at most 1..=8 flows (so
/// eviction happens), lossless or not, a PMTU option or none, 1 or 4 findings kept per rule.
/// Byte 1: the options that turn measured timers into findings, each off when its bits are
/// 0 (so an input whose byte 1 is 0 is checked as before the byte existed): bits 0-2
/// `--qp-timeout` ([`QP_TIMEOUTS`]), bits 3-5 `--cnp-min-interval` ([`CNP_PACINGS`]), bits 6-7
/// `--rnr-timer` ([`RNR_TIMERS`]).
pub fn options(b: [u8; OPTION_BYTES]) -> roce_conformance::Options {
    let [b, t] = b;
    let pick = |bits: u8| usize::from(bits).checked_sub(1);
    roce_conformance::Options {
        assume_complete: b & 0x08 != 0,
        max_flows: 1 + usize::from(b & 0x07),
        pmtu: match (b >> 4) & 7 {
            k @ 0..=4 => Some(256 << k),
            _ => None,
        },
        max_findings_per_rule: if b & 0x80 != 0 { 4 } else { 1 },
        qp_timeout: pick(t & 7).and_then(|i| QP_TIMEOUTS.get(i).copied()),
        cnp_min_interval: pick((t >> 3) & 7)
            .and_then(|i| CNP_PACINGS.get(i))
            .map(|&(min_ns, scope)| roce_conformance::CnpPacing { min_ns, scope }),
        rnr_timer: pick(t >> 6).and_then(|i| RNR_TIMERS.get(i).copied()),
        ..Default::default()
    }
}

/// The option bytes of an input (missing ones are 0).
pub fn option_bytes(data: &[u8]) -> [u8; OPTION_BYTES] {
    let mut o = [0; OPTION_BYTES];
    for (d, s) in o.iter_mut().zip(data) {
        *d = *s;
    }
    o
}

/// Splits the records off `data` (after the option bytes): (structured, bytes).
pub fn records(data: &[u8]) -> impl Iterator<Item = (bool, &[u8])> {
    let mut rest = data.get(OPTION_BYTES..).unwrap_or(&[]);
    std::iter::from_fn(move || {
        let (head, tail) = rest.split_first_chunk::<2>()?;
        let h = u16::from_le_bytes(*head);
        let len = usize::from(h & !STRUCTURED).min(tail.len());
        let (rec, after) = tail.split_at(len);
        rest = after;
        Some((h & STRUCTURED != 0, rec))
    })
}

/// Encodes frames as raw records after the option bytes (for seeds).
pub fn encode(options: [u8; OPTION_BYTES], frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = options.to_vec();
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

#[cfg(test)]
mod tests {
    use super::*;
    use roce_conformance::CnpScope;

    #[test]
    fn byte_1_zero_is_the_one_byte_format_and_each_field_selects_its_option() {
        // The corpus of the one-byte format got a 0 inserted as byte 1: checked as before.
        let old = options([0xD7, 0x00]);
        assert_eq!((old.qp_timeout, old.cnp_min_interval, old.rnr_timer), (None, None, None));
        assert_eq!((old.max_flows, old.max_findings_per_rule, old.pmtu), (8, 4, None));
        let o = options([0x00, 0x49]);
        assert_eq!(o.qp_timeout, Some(1));
        let p = o.cnp_min_interval.unwrap();
        assert_eq!((p.min_ns, p.scope), (1_000, CnpScope::Qp));
        assert_eq!(o.rnr_timer, Some(0));
        let o = options([0x00, 0xff]);
        assert_eq!(o.qp_timeout, Some(20));
        assert_eq!(o.cnp_min_interval.unwrap().min_ns, 1_000_000);
        assert_eq!(o.rnr_timer, Some(31));
        assert_eq!(options([0x00, 0x28]).cnp_min_interval.unwrap().scope, CnpScope::Dest);
        // Records start after both bytes; a one-byte input has none.
        let data = encode([1, 2], &[vec![0xaa, 0xbb]]);
        assert_eq!(option_bytes(&data), [1, 2]);
        assert_eq!(records(&data).collect::<Vec<_>>(), vec![(false, &[0xaa, 0xbb][..])]);
        assert_eq!(option_bytes(&[7]), [7, 0]);
        assert_eq!(records(&[7]).count(), 0);
    }
}
