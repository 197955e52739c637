//! RSP-MSN on coalesced ACKs: the MSN of an ACK must rise by the messages its requests
//! completed since the previous ACK, across the 24-bit PSN wrap, with multi-packet SENDs
//! counted once, and with many requests in flight after the ACK's PSN (the count walks the
//! remembered requests from the back and stops at the previous ACK).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use roce_conformance::{Checker, FrameInfo, Options, Report};
use roce_parser::{parse_ethernet, AethRepr, BthRepr, Config, FrameBuilder, Network};

const SEND_FIRST: u8 = 0x00;
const SEND_LAST: u8 = 0x02;
const SEND_ONLY: u8 = 0x04;
const ACK: u8 = 0x11;

/// A request a -> b (QP 0x100) or an ACK b -> a (QP 0x200) with `msn`.
fn packet(opcode: u8, psn: u32, msn: u32) -> Vec<u8> {
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let ack = opcode == ACK;
    let (src, dst, dqp) = if ack { (b, a, 0x200) } else { (a, b, 0x100) };
    let bth = BthRepr { opcode, pkey: 0xffff, dest_qp: dqp, psn, ..Default::default() };
    let payload = [0x5au8; 256];
    let mut fb = FrameBuilder::new(Network::ipv4(src, dst), bth);
    if ack {
        fb.headers.aeth = Some(AethRepr::ack(0x1f, msn));
    } else {
        fb.payload = &payload;
    }
    let mut buf = vec![0u8; 512];
    let len = fb.emit(&mut buf).unwrap();
    buf.truncate(len);
    buf
}

/// Checks the frames (1 µs apart) and returns the report.
fn check(frames: &[Vec<u8>]) -> Report {
    let mut c = Checker::new(Options::default());
    for (i, bytes) in frames.iter().enumerate() {
        let p = parse_ethernet(bytes, &Config::default()).unwrap();
        let n = bytes.len() as u32;
        let info =
            FrameInfo { number: i as u64 + 1, ts_ns: 1_000 * (i as u64 + 1), caplen: n, len: n };
        c.feed(&info, &p);
    }
    c.finish()
}

/// The RSP-MSN findings' frames.
fn msn_findings(r: &Report) -> Vec<Vec<u64>> {
    r.findings.iter().filter(|f| f.rule == "RSP-MSN").map(|f| f.frames.clone()).collect()
}

/// Requests from PSN 0xffff00 (across the wrap): per round, `per_ack` messages of which the
/// second is a two-packet SEND (FIRST, LAST), then one ACK of the last PSN with the MSN
/// `msn_of(round, messages so far)`. Returns the frames and each ACK's frame number.
fn rounds(rounds: u32, per_ack: u32, msn_of: impl Fn(u32, u32) -> u32) -> (Vec<Vec<u8>>, Vec<u64>) {
    let (mut frames, mut acks) = (Vec::new(), Vec::new());
    let (mut psn, mut messages) = (0xff_ff00u32, 0u32);
    for round in 0..rounds {
        for m in 0..per_ack {
            if m == 1 {
                frames.push(packet(SEND_FIRST, psn, 0));
                psn = (psn + 1) & 0xff_ffff;
                frames.push(packet(SEND_LAST, psn, 0));
            } else {
                frames.push(packet(SEND_ONLY, psn, 0));
            }
            psn = (psn + 1) & 0xff_ffff;
            messages += 1;
        }
        let last = (psn + 0xff_ffff) & 0xff_ffff;
        frames.push(packet(ACK, last, msn_of(round, messages) & 0xff_ffff));
        acks.push(frames.len() as u64);
    }
    (frames, acks)
}

#[test]
fn coalesced_acks_across_the_wrap_are_silent() {
    // 4 messages (5 packets) per ACK, 100 rounds: the PSNs cross 0xffffff -> 0.
    let (frames, _) = rounds(100, 4, |_, messages| messages);
    let r = check(&frames);
    assert!(msn_findings(&r).is_empty(), "{:?}", r.findings);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn a_wrong_msn_across_the_wrap_fires_once_with_both_acks() {
    // Round 60 (past the wrap: 60 * 5 packets from 0xffff00) says one message too many,
    // and the later ACKs go on from the true count + 1: one jump, one finding.
    let (frames, acks) =
        rounds(100, 4, |round, messages| if round >= 60 { messages + 1 } else { messages });
    let r = check(&frames);
    assert_eq!(msn_findings(&r), vec![vec![acks[59], acks[60]]], "{:?}", r.findings);
}

#[test]
fn many_requests_in_flight_after_the_acked_psn_are_not_counted() {
    // One SEND and its ACK (MSN 1) first; then 200 SEND_ONLY, an ACK of the first 150
    // (MSN 151), then one of all 200 (MSN 201): the 50 requests after the middle ACK's PSN
    // are walked over, not counted.
    let psn = |i: u32| (0xff_ff80 + i) & 0xff_ffff;
    let mut frames = vec![packet(SEND_ONLY, psn(0), 0), packet(ACK, psn(0), 1)];
    frames.extend((1..=200).map(|i| packet(SEND_ONLY, psn(i), 0)));
    frames.push(packet(ACK, psn(150), 151));
    frames.push(packet(ACK, psn(200), 201));
    let r = check(&frames);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    // One message off on the last ACK: found, naming both ACKs.
    let n = frames.len();
    frames[n - 1] = packet(ACK, psn(200), 202);
    let r = check(&frames);
    assert_eq!(msn_findings(&r), vec![vec![n as u64 - 1, n as u64]], "{:?}", r.findings);
}
