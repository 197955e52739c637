//! Throughput of capture iteration with each candidate crate, on one generated 2,000,000-frame
//! pcap (100-600 byte frames), in one run. Ignored by default (it measures, it asserts no
//! timing); run with
//! `cargo test --release -p roce-capture --test bench -- --ignored --nocapture`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::hint::black_box;
use std::time::Instant;

use common::{Pcap, PcapNg};
use roce_capture::Capture;

const FRAMES: usize = 2_000_000;
const ROUNDS: usize = 5;

/// Frame sizes 100..=600 from a fixed LCG, so every run sees the same file.
fn sizes() -> impl Iterator<Item = usize> {
    let mut x: u32 = 12345;
    (0..FRAMES).map(move |_| {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        100 + (x >> 8) as usize % 501
    })
}

fn generate_pcap(frames: usize) -> Vec<u8> {
    let mut p = Pcap::new(false, true, 65535, 1);
    p.out.reserve(frames * 366);
    let frame = common::ethernet_frame(600, 7);
    for (i, size) in sizes().take(frames).enumerate() {
        p.record(1_700_000_000 + (i / 1000) as u32, (i % 1000) as u32 * 1000, &frame[..size]);
    }
    p.bytes()
}

fn generate_pcapng(frames: usize) -> Vec<u8> {
    let mut p = PcapNg::new(false);
    p.out.reserve(frames * 390);
    p.interface(1, 65535, Some(9), None);
    let frame = common::ethernet_frame(600, 7);
    for (i, size) in sizes().take(frames).enumerate() {
        p.epb(0, 1_700_000_000_000_000_000 + i as u64 * 1000, &frame[..size]);
    }
    p.bytes()
}

/// Runs `setup` then `run` `passes` times, timing only `run` (which returns frames seen and a
/// checksum), in `ROUNDS` rounds; prints the best round's ns/frame and frames/s, since other
/// work on the machine only ever slows a round down.
fn measure<S>(
    label: &str,
    passes: usize,
    mut setup: impl FnMut() -> S,
    mut run: impl FnMut(S) -> (usize, u64),
) -> (usize, u64) {
    let mut best = f64::INFINITY;
    let (mut frames, mut sum) = (0, 0);
    for _ in 0..ROUNDS {
        let mut elapsed = std::time::Duration::ZERO;
        for _ in 0..passes {
            let input = setup();
            let start = Instant::now();
            let (n, s) = run(input);
            elapsed += start.elapsed();
            frames = n;
            sum = s;
        }
        best = best.min(elapsed.as_secs_f64());
    }
    let total = (frames * passes) as f64;
    println!(
        "{label:<44} {:>6.1} ns/frame  {:>6.1} M frames/s",
        best * 1e9 / total,
        total / best / 1e6
    );
    (frames, sum)
}

/// A copy of `bytes`, read once after copying: a large copy bypasses the caches, and the
/// crate candidates iterate the original, which is as cached as the data allows.
fn warm_copy(bytes: &[u8]) -> Vec<u8> {
    let copy = bytes.to_vec();
    black_box(copy.iter().step_by(64).fold(0u8, |a, b| a ^ b));
    copy
}

fn ours(mut cap: Capture) -> (usize, u64) {
    let (mut n, mut sum) = (0, 0u64);
    while let Some(frame) = cap.next_frame() {
        let frame = frame.unwrap();
        n += 1;
        sum = sum.wrapping_add(
            u64::from(frame.caplen) ^ frame.ts_ns ^ u64::from(frame.data[frame.data.len() - 1]),
        );
    }
    (n, sum)
}

/// One pass of every candidate over `pcap`, `passes` times each; checks they agree.
fn compare(pcap: &[u8], passes: usize) {
    let hand = measure(
        "hand-written loop (baseline, no checks)",
        passes,
        || (),
        |()| {
            let (mut rest, mut n, mut sum) = (&pcap[24..], 0, 0u64);
            while rest.len() >= 16 {
                let caplen = u32::from_le_bytes(rest[8..12].try_into().unwrap()) as usize;
                let ts = u64::from(u32::from_le_bytes(rest[0..4].try_into().unwrap()))
                    * 1_000_000_000
                    + u64::from(u32::from_le_bytes(rest[4..8].try_into().unwrap()));
                let data = &rest[16..16 + caplen];
                sum = sum.wrapping_add(caplen as u64 ^ ts ^ u64::from(data[caplen - 1]));
                n += 1;
                rest = &rest[16 + caplen..];
            }
            (n, sum)
        },
    );

    let pf = measure(
        "pcap-file 2.0 PcapParser::next_packet",
        passes,
        || (),
        |()| {
            let (mut rest, parser) = pcap_file::pcap::PcapParser::new(pcap).unwrap();
            let (mut n, mut sum) = (0, 0u64);
            while !rest.is_empty() {
                let (r, p) = parser.next_packet(rest).unwrap();
                let ts = p.timestamp.as_nanos() as u64;
                sum = sum
                    .wrapping_add(p.data.len() as u64 ^ ts ^ u64::from(p.data[p.data.len() - 1]));
                n += 1;
                rest = r;
            }
            (n, sum)
        },
    );

    let pf_raw = measure(
        "pcap-file 2.0 PcapParser::next_raw_packet",
        passes,
        || (),
        |()| {
            let (mut rest, parser) = pcap_file::pcap::PcapParser::new(pcap).unwrap();
            let (mut n, mut sum) = (0, 0u64);
            while !rest.is_empty() {
                let (r, p) = parser.next_raw_packet(rest).unwrap();
                let ts = u64::from(p.ts_sec) * 1_000_000_000 + u64::from(p.ts_frac);
                sum = sum
                    .wrapping_add(u64::from(p.incl_len) ^ ts ^ u64::from(p.data[p.data.len() - 1]));
                n += 1;
                rest = r;
            }
            (n, sum)
        },
    );

    let pp = measure(
        "pcap-parser 0.17 parse_pcap_frame",
        passes,
        || (),
        |()| {
            let (mut rest, _header) = pcap_parser::parse_pcap_header(pcap).unwrap();
            let (mut n, mut sum) = (0, 0u64);
            while !rest.is_empty() {
                let (r, b) = pcap_parser::parse_pcap_frame(rest).unwrap();
                let ts = u64::from(b.ts_sec) * 1_000_000_000 + u64::from(b.ts_usec);
                sum = sum
                    .wrapping_add(u64::from(b.caplen) ^ ts ^ u64::from(b.data[b.data.len() - 1]));
                n += 1;
                rest = r;
            }
            (n, sum)
        },
    );

    // The capture owns its bytes: the copy is made before the clock starts.
    let mem = measure(
        "roce_capture (in memory)",
        passes,
        || Capture::from_bytes("bench.pcap", warm_copy(pcap)).unwrap(),
        ours,
    );

    let path = std::env::temp_dir().join(format!("roce-capture-bench-{}.pcap", std::process::id()));
    std::fs::write(&path, pcap).unwrap();
    let file = measure(
        "roce_capture (file, 1 MiB reads)",
        passes,
        || (),
        |()| ours(roce_capture::open(&path).unwrap()),
    );
    std::fs::remove_file(&path).unwrap();

    for other in [pf, pf_raw, pp, mem, file] {
        assert_eq!(other, hand, "every candidate sees the same frames");
    }
}

/// Our pcapng reader against pcap-file's typed pcapng path (EPBs carry an epb_flags option).
fn compare_pcapng(ng: &[u8], passes: usize) {
    let a = measure(
        "roce_capture pcapng (in memory)",
        passes,
        || Capture::from_bytes("bench.pcapng", warm_copy(ng)).unwrap(),
        ours,
    );
    let path =
        std::env::temp_dir().join(format!("roce-capture-bench-{}.pcapng", std::process::id()));
    std::fs::write(&path, ng).unwrap();
    let file = measure(
        "roce_capture pcapng (file)",
        passes,
        || (),
        |()| ours(roce_capture::open(&path).unwrap()),
    );
    std::fs::remove_file(&path).unwrap();
    let b = measure(
        "pcap-file 2.0 PcapNgParser::next_block",
        passes,
        || (),
        |()| {
            let (mut rest, mut parser) = pcap_file::pcapng::PcapNgParser::new(ng).unwrap();
            let (mut n, mut sum) = (0, 0u64);
            while !rest.is_empty() {
                let (r, block) = parser.next_block(rest).unwrap();
                if let pcap_file::pcapng::Block::EnhancedPacket(p) = block {
                    let ts = p.timestamp.as_nanos() as u64;
                    sum = sum.wrapping_add(
                        p.data.len() as u64 ^ ts ^ u64::from(p.data[p.data.len() - 1]),
                    );
                    n += 1;
                }
                rest = r;
            }
            (n, sum)
        },
    );
    assert_eq!(a.0, b.0);
    assert_eq!(a, file);
    black_box((a, b));
}

#[test]
#[ignore = "measurement; run explicitly in release mode"]
fn capture_iteration_throughput() {
    let pcap = generate_pcap(FRAMES);
    println!("{FRAMES} frames, {} bytes, one pass, best of {ROUNDS} (memory-bound):", pcap.len());
    compare(&pcap, 1);
    drop(pcap);
    let ng = generate_pcapng(FRAMES);
    compare_pcapng(&ng, 1);
    drop(ng);

    let small = 2_000;
    let pcap = generate_pcap(small);
    println!(
        "\n{small} frames, {} bytes, 1000 passes, best of {ROUNDS} (cache-warm: the per-frame CPU cost):",
        pcap.len()
    );
    compare(&pcap, 1000);
    compare_pcapng(&generate_pcapng(small), 1000);
}
