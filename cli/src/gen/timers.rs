//! Traces whose timers are known to the nanosecond: the responder's ACK, READ, atomic and
//! NAK delays, the requester's NAK reaction and RNR wait, and timeout retransmissions with a
//! given local ACK timeout and backoff. The conformance suite writes them
//! (pcaps/conformance/timing-*.pcap) and cli/tests/timing.rs asserts what `stats` measures
//! on them against the constants here.

use roce_parser::AethRepr;

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

/// A CM-opened connection (frames 1-3) whose REQ announces Local ACK Timeout `ack_timeout`
/// and RNR Retry Count `rnr_retry_count` (None: 0), which the REP repeats.
fn conn(t: &mut Trace, ack_timeout: u8, rnr_retry_count: Option<u8>) -> RcConn {
    let ip = |d| std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 9, 0, d));
    let c = RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, 1000, 5000);
    let mut cm = Cm::new(77, (0x1111, 0x2222));
    cm.local_ack_timeout = Some(ack_timeout);
    cm.rnr_retry_count = rnr_retry_count;
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
/// [`RNR_WAIT`] later (26), ACK (27). The REQ announces RNR Retry Count 7 (for ever), so
/// the retry is one it allows.
pub fn latencies() -> Trace {
    let mut t = Trace::new();
    let mut c = conn(&mut t, 14, Some(7));
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
    rnr_nak_and_retry(&mut c, &mut t, &s[0]);
    t.advance(ACK_DELAY);
    c.ack(&mut t, true, s[0].psn, 1);
    t
}

/// The responder RNR NAKs `req` [`ACK_DELAY`] after it (timer code [`RNR_CODE`]); the
/// requester resends it [`RNR_WAIT`] after the NAK.
fn rnr_nak_and_retry(c: &mut RcConn, t: &mut Trace, req: &super::conn::Sent) {
    t.advance(ACK_DELAY);
    c.nak(t, true, req.psn, AethRepr::rnr_nak(RNR_CODE, c.sides[0].msn).syndrome);
    t.advance(RNR_WAIT);
    c.emit_request(t, true, req);
}

/// A FETCH_ADD and its ATOMIC_ACKNOWLEDGE [`ATOMIC_DELAY`] later.
fn atomic(c: &mut RcConn, t: &mut Trace) {
    let psn = c.sides[0].next_psn;
    c.sides[0].next_psn = (psn + 1) & 0x00ff_ffff;
    let s = super::conn::Sent {
        opcode: op::FETCH_ADD,
        psn,
        headers: roce_parser::ExtHeaders {
            atomic_eth: Some(roce_parser::AtomicEthRepr {
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
    let headers = roce_parser::ExtHeaders {
        aeth: Some(AethRepr::ack(0x1f, c.sides[0].msn)),
        atomic_ack_eth: Some(roce_parser::AtomicAckEthRepr { orig: 41 }),
        ..Default::default()
    };
    c.emit_response(t, true, op::ATOMIC_ACK, psn, headers, &[]);
}

/// CM (1-3, the REQ announcing Local ACK Timeout `announced`); a SEND ACKed (4, 5); a
/// WRITE_ONLY (6) that gets no answer, resent after each of `timeouts` (ns, one per retry:
/// 7, 8, ...), then ACKed [`ACK_DELAY`] after the last.
pub fn timeouts(announced: u8, timeouts: &[u64]) -> Trace {
    let mut t = Trace::new();
    let mut c = conn(&mut t, announced, None);
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

/// CM (1-3, the REQ and REP announcing RNR Retry Count `count`); a SEND (4) RNR NAKed with
/// timer code [`RNR_CODE`] (5) and retried [`RNR_WAIT`] later (6), NAKed and retried again
/// `retries` times in all (retry k is frame 4 + 2k, its RNR NAK the frame before), then ACKed
/// [`ACK_DELAY`] after the last retry.
pub fn rnr_retries(count: u8, retries: usize) -> Trace {
    let mut t = Trace::new();
    let mut c = conn(&mut t, 14, Some(count));
    let s = c.message(true, false, 100, None);
    c.emit_request(&mut t, true, &s[0]);
    for _ in 0..retries {
        rnr_nak_and_retry(&mut c, &mut t, &s[0]);
    }
    t.advance(ACK_DELAY);
    c.ack(&mut t, true, s[0].psn, 1);
    t
}

/// CNP pacing of [`congestion`]: rounds this far apart (ns), each connection's CNP this long
/// after the first CE-marked packet of its round.
pub const CNP_ROUND: u64 = 50_000;
pub const CE_TO_CNP: u64 = 4_000;
/// In each round, the second and third connections send this long after the first.
pub const SECOND_OFFSET: u64 = 20_000;
pub const THIRD_OFFSET: u64 = 30_000;
/// The first connection's CE-marked WRITE_ONLYs per round (one each round for the others),
/// [`PACKET_GAP`] apart: the sender slowing down after each CNP.
pub const BURSTS: [usize; 4] = [4, 3, 2, 1];
/// Payload of each WRITE_ONLY.
pub const CNP_WRITE_LEN: usize = 1024;

/// Three CM-opened connections whose data is CE-marked, each answered by a CNP
/// [`CE_TO_CNP`] after the first mark of a round, rounds [`CNP_ROUND`] apart:
/// - 10.9.0.1 QP 0x111 -> 10.9.0.2 QP 0x222 (CM 1-3): a burst of [`BURSTS`]`[k]` WRITEs at
///   the round's start, CNP from 10.9.0.2 to QP 0x111, ACK [`PACKET_GAP`] x 2 after the CNP;
/// - 10.9.0.1 QP 0x113 -> 10.9.0.2 QP 0x223 (CM 4-6): one WRITE [`SECOND_OFFSET`] into the
///   round, CNP to QP 0x113, ACK;
/// - 10.9.0.1 QP 0x115 -> 10.9.0.4 QP 0x444 (CM 7-9): one WRITE [`THIRD_OFFSET`] into the
///   round, CNP from 10.9.0.4 to QP 0x115, ACK.
///
/// Per QP the CNPs are 50 us apart; per IP pair 10.9.0.2 -> 10.9.0.1, 20 and 30 us apart in
/// turn; per destination 10.9.0.1 (from both NPs), 20, 10, 20 us.
pub fn congestion() -> Trace {
    let mut t = Trace::new();
    let ip = |d| std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 9, 0, d));
    let mut conns = [
        RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, 1000, 5000),
        RcConn::new(Endpoint::new(ip(1), 0x113), Endpoint::new(ip(2), 0x223), 1024, 2000, 6000),
        RcConn::new(Endpoint::new(ip(1), 0x115), Endpoint::new(ip(4), 0x444), 1024, 3000, 7000),
    ];
    for (k, c) in conns.iter().enumerate() {
        let k32 = k as u32;
        let mut cm = Cm::new(90 + k as u64, (0x3100 + k32, 0x4100 + k32));
        cm.connect(&mut t, c, 4000 + k as u16);
    }
    t.gap_ns = 0;
    t.advance(PACKET_GAP);
    let start = t.now_ns;
    for (round, &burst) in BURSTS.iter().enumerate() {
        let base = start + round as u64 * CNP_ROUND;
        for (k, c) in conns.iter_mut().enumerate() {
            let at = base + [0, SECOND_OFFSET, THIRD_OFFSET][k];
            let n = if k == 0 { burst } else { 1 };
            t.now_ns = at;
            c.ecn = 3;
            let mut last = 0;
            for j in 0..n {
                t.now_ns = at + j as u64 * PACKET_GAP;
                let w = c.message(true, true, CNP_WRITE_LEN, None);
                c.emit_request(&mut t, true, &w[0]);
                last = w[0].psn;
            }
            c.ecn = 2;
            t.now_ns = at + CE_TO_CNP;
            c.cnp(&mut t, true);
            t.now_ns = at + CE_TO_CNP + 2 * PACKET_GAP;
            c.ack(&mut t, true, last, n as u32);
        }
    }
    t
}
