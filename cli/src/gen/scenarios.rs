//! Named scenarios `roce-inspect gen` can write.

use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::conn::{ud_send, Cm, Endpoint, RcConn};
use super::{PcapOut, Rng, Trace};
use roce_parser::AethRepr;

fn v4(d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, d))
}

/// The project's sample capture (pcaps/sample.pcap): a CM-opened RC connection with SEND
/// with immediate, WRITE, READ and an atomic, a lost packet recovered by go-back-N after a
/// NAK, an RNR NAK and retry, ECN-CE marks answered by a CNP, a UD SEND, an IPv6
/// connection, and the CM disconnect.
pub fn sample(seed: u64) -> Trace {
    let mut rng = Rng::new(seed);
    let mut t = Trace::new();
    let a = Endpoint::new(v4(1), 0x100 | rng.below(0x1000) as u32);
    let b = Endpoint::new(v4(2), 0x100 | rng.below(0x1000) as u32);
    let mut c = RcConn::new(a, b, 1024, rng.u24(), rng.u24());
    let mut cm =
        Cm::new(rng.next_u64() & 0xffff_ffff, (rng.next_u64() as u32, rng.next_u64() as u32));
    // The connection retries after an RNR NAK below: its REQ and REP allow it (7: for ever).
    cm.rnr_retry_count = Some(7);
    cm.connect(&mut t, &c, 18515);

    c.send_or_write(&mut t, true, false, 2500, Some(0xdead_beef)); // SEND FIRST/MIDDLE/LAST_IMM
    c.send_or_write(&mut t, false, false, 64, None); // SEND ONLY the other way
    c.send_or_write(&mut t, true, true, 2048, None); // WRITE FIRST/LAST
    c.read(&mut t, true, 3000); // READ, responses FIRST/MIDDLE/LAST
    c.atomic(&mut t, true, false); // FETCH_ADD

    // Go-back-N: the second packet of a WRITE is lost after the capture point; the responder
    // NAKs the PSN it expected, the requester resends from there.
    let pkts = c.message(true, true, 3072, None);
    for p in &pkts {
        c.emit_request(&mut t, true, p);
    }
    c.nak(&mut t, true, pkts[1].psn, AethRepr::nak(0, 0).syndrome);
    t.advance(5_000);
    for p in &pkts[1..] {
        c.emit_request(&mut t, true, p);
    }
    c.ack(&mut t, true, pkts[2].psn, 1);

    // RNR: the responder has no receive posted, NAKs with a 0.01 ms timer; retry after it.
    let pkts = c.message(true, false, 100, None);
    c.emit_request(&mut t, true, &pkts[0]);
    c.nak(&mut t, true, pkts[0].psn, AethRepr::rnr_nak(1, 0).syndrome);
    t.advance(20_000);
    c.emit_request(&mut t, true, &pkts[0]);
    c.ack(&mut t, true, pkts[0].psn, 1);

    // Congestion: data marked CE on the way; the receiver sends a CNP to the sender's QP.
    c.ecn = 3;
    c.send_or_write(&mut t, true, true, 1024, None);
    c.ecn = 2;
    c.cnp(&mut t, true);

    // A UD SEND with immediate data between two other hosts.
    let u1 = Endpoint::new(v4(5), 0x4a1);
    let u2 = Endpoint::new(v4(6), 0x4b2);
    ud_send(&mut t, &u1, &u2, 0x1111_1111, rng.u24(), &[7; 200], Some(42));

    // A small IPv6 connection without CM.
    let mut x = IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 3));
    let y = IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 4));
    let p = Endpoint::new(x, 0x77);
    x = y;
    let q = Endpoint::new(x, 0x88);
    let mut c6 = RcConn::new(p, q, 4096, rng.u24(), rng.u24());
    c6.send_or_write(&mut t, true, true, 300, Some(7));
    c6.read(&mut t, true, 16);

    cm.disconnect(&mut t, &c);
    t
}

/// A large capture for benchmarks, written to `w` as a pcap: `frames` frames over `conns` RC
/// connections (WRITE bursts with ACKs, READs, SENDs), about 570 bytes per frame on average.
/// Streamed: each message's frames are written as soon as they are generated, so memory
/// holds one message whatever `frames` is.
pub fn bench(
    w: impl Write,
    seed: u64,
    frames: usize,
    conns: usize,
    delivery: Option<super::Delivery>,
) -> io::Result<()> {
    let mut out = PcapOut::delivered(w, delivery)?;
    let mut rng = Rng::new(seed);
    let mut t = Trace::new();
    t.gap_ns = 200;
    let mut written = 0;
    let mut cs: Vec<RcConn> = (0..conns.max(1))
        .map(|i| {
            let a = Endpoint::new(
                IpAddr::V4(Ipv4Addr::new(10, 1, (i >> 8) as u8, i as u8)),
                0x1000 + i as u32,
            );
            let b = Endpoint::new(
                IpAddr::V4(Ipv4Addr::new(10, 2, (i >> 8) as u8, i as u8)),
                0x8000 + i as u32,
            );
            RcConn::new(a, b, 1024, rng.u24(), rng.u24())
        })
        .collect();
    while written < frames {
        let k = rng.below(cs.len() as u64) as usize;
        let c = &mut cs[k];
        match rng.below(10) {
            0..=5 => c.send_or_write(&mut t, true, true, 64 + rng.below(2048) as usize, None),
            6 | 7 => {
                c.read(&mut t, true, 32 + rng.below(1024) as usize);
            }
            _ => c.send_or_write(
                &mut t,
                rng.below(2) == 0,
                false,
                16 + rng.below(512) as usize,
                Some(1),
            ),
        }
        // The last message may overshoot: its frames past `frames` are dropped.
        for f in t.frames.drain(..).take(frames - written) {
            out.write(&f)?;
            written += 1;
        }
    }
    out.finish()
}
