//! Traces whose timers are known to the nanosecond: the responder's ACK, READ, atomic and
//! NAK delays, the requester's NAK reaction and RNR wait, and timeout retransmissions with a
//! given local ACK timeout and backoff. The conformance suite writes them
//! (pcaps/conformance/timing-*.pcap) and cli/tests/timing.rs asserts what `stats` measures
//! on them against the constants here.

use roce_parser::headers::AethRepr;

use super::conn::{op, Cm};
use super::{Endpoint, RcConn, Trace};

/// Delays of [`latencies`], in ns.
pub const ACK_DELAY: u64 = 3_000;
pub const READ_FIRST_DELAY: u64 = 5_000;
/// Between the responses of one READ.
pub const READ_GAP: u64 = 1_000;
pub const ATOMIC_DELAY: u64 = 4_000;
/// From the packet after the lost one to the NAK.
pub const NAK_DELAY: u64 = 2_500;
/// From the NAK to the retransmission.
pub const NAK_REACTION: u64 = 1_500;
/// The RNR NAK's timer code (1.28 ms) and the requester's wait after it.
pub const RNR_CODE: u8 = 14;
pub const RNR_WAIT: u64 = 1_300_000;
/// Between consecutive request packets.
pub const PACKET_GAP: u64 = 1_000;

/// 4.096 us x 2^t.
pub const fn ack_timeout(t: u8) -> u64 {
    4096 << t
}

/// A CM-opened connection (frames 1-3) whose REQ announces Local ACK Timeout `ack_timeout`.
fn conn(t: &mut Trace, ack_timeout: u8) -> RcConn {
    let ip = |d| std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 9, 0, d));
    let c = RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, 1000, 5000);
    let mut cm = Cm::new(77, (0x1111, 0x2222));
    cm.local_ack_timeout = Some(ack_timeout);
    cm.connect(t, &c, 4000);
    // From here every time is set by `advance`.
    t.gap_ns = 0;
    t.advance(PACKET_GAP);
    c
}

/// CM (1-3); three SENDs each ACKed after [`ACK_DELAY`] (4-9); a 3-PSN READ answered after
/// [`READ_FIRST_DELAY`], [`READ_GAP`] between responses (10-13); a FETCH_ADD ACKed after
/// [`ATOMIC_DELAY`] (14, 15); a 3-packet WRITE whose FIRST is lost downstream (16-18), the
/// NAK [`NAK_DELAY`] after the MIDDLE (19, after the LAST), the resend [`NAK_REACTION`] after it (20-22),
/// ACK (23); a SEND (24) RNR NAKed (25) with timer code [`RNR_CODE`], retried
/// [`RNR_WAIT`] later (26), ACK (27).
pub fn latencies() -> Trace {
    let mut t = Trace::new();
    let mut c = conn(&mut t, 14);
    for _ in 0..3 {
        let s = c.message(true, false, 100, None);
        c.emit_request(&mut t, true, &s[0]);
        t.advance(ACK_DELAY);
        c.ack(&mut t, true, s[0].psn, 1);
        t.advance(PACKET_GAP);
    }
    let len = 3000;
    let read = c.read_request(&mut t, true, len);
    t.advance(READ_FIRST_DELAY);
    let msn = c.sides[0].msn + 1;
    c.sides[0].msn = msn;
    for k in 0..3 {
        if k > 0 {
            t.advance(READ_GAP);
        }
        c.read_response(&mut t, true, read.psn, len, k, msn);
    }
    t.advance(PACKET_GAP);
    atomic(&mut c, &mut t);
    t.advance(PACKET_GAP);
    let w = c.message(true, true, 3000, None);
    for (k, s) in w.iter().enumerate() {
        if k > 0 {
            t.advance(PACKET_GAP);
        }
        c.emit_request(&mut t, true, s);
    }
    // The FIRST was lost downstream: the responder NAKs it NAK_DELAY after the MIDDLE
    // (the LAST, sent before the NAK came, is in flight).
    t.advance(NAK_DELAY - PACKET_GAP);
    c.nak(&mut t, true, w[0].psn, AethRepr::nak(0, c.sides[0].msn).syndrome);
    t.advance(NAK_REACTION);
    for (k, s) in w.iter().enumerate() {
        if k > 0 {
            t.advance(PACKET_GAP);
        }
        c.emit_request(&mut t, true, s);
    }
    t.advance(ACK_DELAY);
    c.ack(&mut t, true, w[2].psn, 1);
    t.advance(PACKET_GAP);
    let s = c.message(true, false, 100, None);
    c.emit_request(&mut t, true, &s[0]);
    t.advance(ACK_DELAY);
    c.nak(&mut t, true, s[0].psn, AethRepr::rnr_nak(RNR_CODE, c.sides[0].msn).syndrome);
    t.advance(RNR_WAIT);
    c.emit_request(&mut t, true, &s[0]);
    t.advance(ACK_DELAY);
    c.ack(&mut t, true, s[0].psn, 1);
    t
}

/// A FETCH_ADD and its ATOMIC_ACKNOWLEDGE [`ATOMIC_DELAY`] later.
fn atomic(c: &mut RcConn, t: &mut Trace) {
    let psn = c.sides[0].next_psn;
    c.sides[0].next_psn = (psn + 1) & 0x00ff_ffff;
    let s = super::conn::Sent {
        opcode: op::FETCH_ADD,
        psn,
        headers: roce_parser::headers::ExtHeaders {
            atomic_eth: Some(roce_parser::headers::AtomicEthRepr {
                va: 0x7f00_0000_1000,
                rkey: 0x9abc,
                swap_add: 1,
                compare: 0,
            }),
            ..Default::default()
        },
        payload: Vec::new(),
        ackreq: true,
    };
    c.emit_request(t, true, &s);
    t.advance(ATOMIC_DELAY);
    c.sides[0].msn = (c.sides[0].msn + 1) & 0x00ff_ffff;
    let headers = roce_parser::headers::ExtHeaders {
        aeth: Some(AethRepr::ack(0x1f, c.sides[0].msn)),
        atomic_ack_eth: Some(roce_parser::headers::AtomicAckEthRepr { orig: 41 }),
        ..Default::default()
    };
    c.emit_response(t, true, op::ATOMIC_ACK, psn, headers, &[]);
}

/// CM (1-3, the REQ announcing Local ACK Timeout `announced`); a SEND ACKed (4, 5); a
/// WRITE_ONLY (6) that gets no answer, resent after each of `timeouts` (ns, one per retry:
/// 7, 8, ...), then ACKed [`ACK_DELAY`] after the last.
pub fn timeouts(announced: u8, timeouts: &[u64]) -> Trace {
    let mut t = Trace::new();
    let mut c = conn(&mut t, announced);
    let s = c.message(true, false, 100, None);
    c.emit_request(&mut t, true, &s[0]);
    t.advance(ACK_DELAY);
    c.ack(&mut t, true, s[0].psn, 1);
    t.advance(PACKET_GAP);
    let w = c.message(true, true, 512, None);
    c.emit_request(&mut t, true, &w[0]);
    for &ns in timeouts {
        t.advance(ns);
        c.emit_request(&mut t, true, &w[0]);
    }
    t.advance(ACK_DELAY);
    c.ack(&mut t, true, w[0].psn, 1);
    t
}
