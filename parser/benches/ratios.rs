//! The BENCHMARKS.md ratios, measured interleaved: each case runs a short batch
//! (200 passes over the frame mix, about 9,000 frames) in turn, round after round, and keeps
//! its fastest batch. Criterion (parse.rs) times one case after the other; on a machine
//! shared with other work, load that comes and goes lands on some cases and not others and
//! skews their ratios by up to 1.5x. Interleaving exposes every case to the same load, and
//! the fastest batch is the undisturbed speed.
//!
//! `cargo bench -p roce-parser --bench ratios` (optionally `-- ROUNDS`, default 300).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;
use std::time::Instant;

use roce_parser::*;

mod mix;
use mix::{frame_mix, locate};

const PASSES: usize = 200;

/// A named case: one pass over the frame mix.
type Case<'a> = (&'static str, Box<dyn Fn() + 'a>);

fn main() {
    // `cargo bench` passes `--bench`; a bare number is the round count.
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(300);
    let frames = frame_mix();
    let located = locate(&frames);
    let no_icrc = Config { verify: false, ..Config::default() };
    let cfg = Config::default();

    let cases: Vec<Case> = vec![
        (
            "etherparse SlicedPacket (L2-L4)",
            Box::new(|| {
                for f in &frames {
                    let r = etherparse::SlicedPacket::from_ethernet(black_box(f));
                    black_box(&r);
                }
            }),
        ),
        (
            "parse_ethernet_into, no ICRC",
            Box::new(|| {
                let mut p = Packet::default();
                for f in &frames {
                    let r = parse_ethernet_into(black_box(f), &no_icrc, &mut p);
                    black_box((&r, &p));
                }
            }),
        ),
        (
            "parse_ethernet (by value), no ICRC",
            Box::new(|| {
                for f in &frames {
                    let r = parse_ethernet(black_box(f), &no_icrc);
                    black_box(&r);
                }
            }),
        ),
        (
            "crc32fast over the ICRC's bytes",
            Box::new(|| {
                for l in &located {
                    black_box(crc32fast::hash(black_box(l.span)));
                }
            }),
        ),
        (
            "ICRC alone (icrc::compute_span)",
            Box::new(|| {
                for l in &located {
                    black_box(compute_icrc_span(l.net, black_box(l.span)));
                }
            }),
        ),
        (
            "parse_ethernet_into with ICRC",
            Box::new(|| {
                let mut p = Packet::default();
                for f in &frames {
                    let r = parse_ethernet_into(black_box(f), &cfg, &mut p);
                    black_box((&r, &p));
                }
            }),
        ),
    ];

    let per_batch = (PASSES * frames.len()) as f64;
    let mut best = vec![f64::MAX; cases.len()];
    for _ in 0..rounds {
        for (i, (_, case)) in cases.iter().enumerate() {
            let t = Instant::now();
            for _ in 0..PASSES {
                case();
            }
            let ns = t.elapsed().as_nanos() as f64 / per_batch;
            best[i] = best[i].min(ns);
        }
    }

    let bytes: usize = frames.iter().map(Vec::len).sum();
    println!(
        "frame mix: {} frames, mean {} bytes; {rounds} rounds of {PASSES} passes per case, fastest batch",
        frames.len(),
        bytes / frames.len()
    );
    for ((name, _), ns) in cases.iter().zip(&best) {
        println!("  {name:<38} {ns:>7.1} ns/frame  {:>6.2} M frames/s", 1e3 / ns);
    }
    let [ether, into, by_value, crc, icrc, _] = best[..] else { unreachable!() };
    println!("ratios (ratios of BENCHMARKS.md):");
    println!(
        "  full parse / etherparse slicing:  {:.2}x in place, {:.2}x by value   (target <= 1.2x)",
        into / ether,
        by_value / ether
    );
    println!(
        "  ICRC throughput / raw crc32fast:  {:.2}x                          (target >= 0.9x)",
        crc / icrc
    );
}
