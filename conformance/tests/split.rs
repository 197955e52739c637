//! `check --threads N`'s split: checkers of host-pair shards (`Checker::for_shard`), merged
//! by `merge_shards`, give the one checker's report exactly, on generated traffic that makes
//! findings of every kind the merge places (while frames are fed, at the end per
//! incarnation, CE bursts without a CNP, CAP-TIME); past `--max-flows` the merge refuses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use roce_conformance::{
    merge_shards, Checker, Finding, FrameInfo, Options, Report, Shard, ShardReport,
};
use roce_parser::{parse_ethernet, AethRepr, BthRepr, Config, FrameBuilder, Ipv4Spec, Network};

/// A frame's bytes and time.
struct Gen {
    frames: Vec<(Vec<u8>, u64)>,
}

/// One RC packet of QP `qp` (its host pair `qp / 3`): a SEND_ONLY a -> b asking for an ACK,
/// or the ACK b -> a naming `psn`.
fn packet(qp: usize, send: bool, psn: u32, ce: bool) -> Vec<u8> {
    let host = (qp / 3) as u8;
    let (a, b) = ([10, 1, 0, host], [10, 2, 0, host]);
    let (src, dst, opcode, dqp) =
        if send { (a, b, 0x04u8, 0x100 + qp as u32) } else { (b, a, 0x11, 0x200 + qp as u32) };
    let bth =
        BthRepr { opcode, pkey: 0xffff, dest_qp: dqp, psn, ackreq: send, ..Default::default() };
    let Network::Ipv4(spec) = Network::ipv4(src, dst) else { unreachable!() };
    let net = Network::Ipv4(Ipv4Spec { ecn: if ce { 3 } else { 2 }, ..spec });
    let payload = [0x5au8; 64];
    let mut fb = FrameBuilder::new(net, bth);
    if send {
        fb.payload = &payload;
    } else {
        fb.headers.aeth = Some(AethRepr::ack(0x1f, psn & 0xff_ffff));
    }
    let mut buf = vec![0u8; 256];
    let len = fb.emit(&mut buf).unwrap();
    buf.truncate(len);
    buf
}

/// 12 host pairs, 3 QPs each: SEND_ONLY and its ACK, with faults on some: PSN jumps,
/// corrupted ICRCs, ACKs naming PSNs never sent, CE-marked data without a CNP, and the
/// clock stepping back; at the end, ACKs ahead of every request and requests never
/// acknowledged (judged when the incarnations are finished).
fn traffic(frames: u64) -> Gen {
    let mut out = Vec::new();
    let mut psn = [0u32; 36];
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut ts = 1_000_000_000u64;
    for n in 0..frames {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let qp = (rng % 36) as usize;
        let fault = (rng >> 32) % 97;
        let mut p = psn[qp];
        if fault == 1 {
            p = (p + 5) & 0xff_ffff;
        }
        psn[qp] = (p + 1) & 0xff_ffff;
        ts = if fault == 2 { ts - 3_000 } else { ts + 2_000 };
        let mut send = packet(qp, true, p, fault == 3);
        if fault == 5 {
            let last = send.len() - 1;
            send[last] ^= 0xff;
        }
        out.push((send, ts));
        let acked = if fault == 4 { p + 50 } else { p };
        out.push((packet(qp, false, acked, false), ts + 1));
        if n % 5000 == 4999 {
            // Quiet past every window: bursts and held evidence settle mid-capture too.
            ts += 200_000_000;
        }
    }
    for (qp, &next) in psn.iter().enumerate().take(12) {
        ts += 1_000;
        out.push((packet(qp, qp >= 6, if qp < 6 { next + 20 } else { next }, false), ts));
    }
    // The capture goes on long enough for the unacknowledged requests to be late.
    out.push((packet(35, true, psn[35], false), ts + 1_000_000_000));
    Gen { frames: out }
}

/// Everything a report says but the checker's own state accounting (split, the shards' sum).
fn said(r: &Report) -> String {
    format!(
        "{:?}",
        (
            &r.findings,
            &r.connections,
            r.connections_not_listed,
            (r.frames, r.roce_frames, r.errors, r.warnings, r.suppressed),
            &r.by_rule,
        )
    )
}

/// The one checker's report, and the merge of `count` shard checkers.
fn both(g: &Gen, opts: &Options, count: u32) -> (Report, Result<Report, String>) {
    let mut whole = Checker::new(opts.clone());
    let mut shards: Vec<Checker> = (0..count).map(|_| Checker::for_shard(opts.clone())).collect();
    let mut clock = 0u64;
    for (i, (bytes, ts)) in g.frames.iter().enumerate() {
        let p = parse_ethernet(bytes, &Config::default()).unwrap();
        let n = bytes.len() as u32;
        let info = FrameInfo { number: i as u64 + 1, ts_ns: *ts, caplen: n, len: n };
        whole.feed(&info, &p);
        let c = &mut shards[Shard::of_frame(Some(&p), count) as usize];
        c.tick(clock);
        clock = clock.max(*ts);
        c.feed_shard(&info, &p);
    }
    let parts = shards
        .into_iter()
        .map(|mut c| {
            c.tick(clock);
            c.finish_shard()
        })
        .collect();
    (whole.finish(), merge_shards(opts, parts).map_err(|e| e.to_string()))
}

#[test]
fn the_merged_shards_are_the_one_checkers_report() {
    let g = traffic(30_000);
    for opts in [
        Options::default(),
        Options { assume_complete: true, ..Options::default() },
        Options { max_findings_per_rule: 2, ..Options::default() },
    ] {
        for count in [2, 3, 5] {
            let (one, merged) = both(&g, &opts, count);
            let rules: Vec<&str> = one.by_rule.iter().map(|c| c.rule).collect();
            for kind in ["CAP-TIME", "CC-CNP", "PKT-ICRC", "CAP-GAP", "RSP-ACKREQ"] {
                assert!(rules.contains(&kind), "the traffic makes {kind}: {rules:?}");
            }
            assert!(one.suppressed > 0 || opts.max_findings_per_rule > 2, "capped findings");
            let merged = merged.unwrap_or_else(|e| panic!("{count} shards refused: {e}"));
            assert_eq!(said(&merged), said(&one), "{count} shards");
        }
    }
}

/// A caller merging the shards itself (a Spark job over groups of host pairs): each shard's
/// findings with their `order_keys`, sorted by the keys as bytes, are the one checker's
/// findings in its order (less CAP-TIME, a finding of the whole capture's clock).
#[test]
fn the_shards_findings_sorted_by_their_order_keys_are_the_one_checkers() {
    let g = traffic(30_000);
    let opts = Options::default();
    let mut whole = Checker::new(opts.clone());
    let count = 4;
    let mut shards: Vec<Checker> = (0..count).map(|_| Checker::for_shard(opts.clone())).collect();
    for (i, (bytes, ts)) in g.frames.iter().enumerate() {
        let p = parse_ethernet(bytes, &Config::default()).unwrap();
        let n = bytes.len() as u32;
        let info = FrameInfo { number: i as u64 + 1, ts_ns: *ts, caplen: n, len: n };
        whole.feed(&info, &p);
        let shard = Shard::of_frame(Some(&p), count) as usize;
        for (k, c) in shards.iter_mut().enumerate() {
            if k == shard {
                c.feed_shard(&info, &p);
            } else {
                c.tick(*ts);
            }
        }
    }
    let one = whole.finish();
    let parts: Vec<ShardReport> = shards.into_iter().map(Checker::finish_shard).collect();
    // The shards are given in reverse: the keys place them, not the order they come in.
    let mut keyed: Vec<(Vec<u8>, &Finding)> = Vec::new();
    for part in parts.iter().rev() {
        let keys = part.order_keys();
        assert_eq!(keys.len(), part.report().findings.len());
        keyed.extend(keys.into_iter().zip(&part.report().findings));
    }
    // Findings proven at each kind of place: while a frame was fed (tag 0), at the end of an
    // incarnation (1), a CE burst without a CNP (2).
    let tags: std::collections::BTreeSet<u8> = keyed.iter().map(|(k, _)| k[0]).collect();
    assert_eq!(tags.into_iter().collect::<Vec<u8>>(), [0, 1, 2]);
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let merged: Vec<&Finding> = keyed.into_iter().map(|(_, f)| f).collect();
    let want: Vec<&Finding> = one.findings.iter().filter(|f| f.rule != "CAP-TIME").collect();
    let rules: Vec<&str> = want.iter().map(|f| f.rule).collect();
    for kind in ["CC-CNP", "PKT-ICRC", "CAP-GAP", "RSP-ACKREQ"] {
        assert!(rules.contains(&kind), "the traffic makes {kind}: {rules:?}");
    }
    assert!(parts.iter().filter(|p| !p.report().findings.is_empty()).count() > 1);
    assert_eq!(format!("{merged:?}"), format!("{want:?}"));
}

#[test]
fn past_the_flow_cap_the_merge_refuses() {
    // 36 QPs are 72 flows.
    let g = traffic(2_000);
    let opts = Options { max_flows: 40, ..Options::default() };
    let (one, merged) = both(&g, &opts, 2);
    assert!(one.state.evicted > 0, "one run evicts");
    assert!(merged.unwrap_err().contains("--max-flows"));
    let (_, merged) = both(&g, &Options { max_flows: 72, ..Options::default() }, 2);
    assert!(merged.is_ok(), "at the cap, nothing is evicted: {merged:?}");
}
