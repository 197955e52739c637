//! Per-frame cost of the Rust API next to the C interface, over every Ethernet frame of a
//! capture held in memory, best of 5 runs of ROUNDS passes (the same measurement as
//! `ffi/tests/bench.c`). Printed, never asserted.
//!
//! ```sh
//! cargo run --release -p roce-parser-ffi --example bench_rust -- CAPTURE ROUNDS
//! ```
#![allow(clippy::print_stdout)]

mod common;

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use roce_parser::{parse_ethernet_into, Config, Packet};
use roce_parser_ffi::{parse_frame_into, roce_options, roce_packet, roce_parse_frame_opts};

fn best_of_5(frames: &[Vec<u8>], rounds: u32, mut one: impl FnMut(&[u8]) -> u32) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let mut acc = 0u32;
        let t0 = Instant::now();
        for _ in 0..rounds {
            for f in frames {
                acc = acc.wrapping_add(one(black_box(f)));
            }
        }
        black_box(acc);
        let per = t0.elapsed().as_nanos() as f64 / (f64::from(rounds) * frames.len() as f64);
        best = best.min(per);
    }
    best
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, rounds] = args.as_slice() else {
        return Err("usage: bench_rust CAPTURE ROUNDS".into());
    };
    let rounds: u32 = rounds.parse().map_err(|e| format!("ROUNDS: {e}"))?;
    let mut frames = Vec::new();
    common::for_each_frame(Path::new(path), |lt, f| {
        if lt == 1 {
            frames.push(f.to_vec());
        }
    })?;
    if frames.is_empty() || rounds == 0 {
        return Err("no Ethernet frames, or ROUNDS is 0".into());
    }
    let verify = Config::default();
    let noverify = Config { verify: false, ..verify };
    let rust = |cfg: Config| {
        move |f: &[u8]| {
            let mut p = Packet::default();
            match parse_ethernet_into(f, &cfg, &mut p) {
                Ok(()) => {
                    let p = black_box(&p);
                    p.roce.map_or(0, |r| r.bth.psn) ^ p.problems.bits()
                }
                Err(_) => 1,
            }
        }
    };
    let mut out = roce_packet::default();
    let via_c = |opts: roce_options| {
        move |f: &[u8]| {
            // SAFETY: `f` is a live slice and `out` a live, exclusive roce_packet.
            let st = unsafe { roce_parse_frame_opts(f.as_ptr(), f.len(), &opts, &mut out) };
            black_box(&out);
            (st as u32) ^ out.bth.psn
        }
    };
    let skip = roce_options { udp_port: 0, skip_icrc: 1 };
    best_of_5(&frames, 1, rust(verify)); // warm up
    println!(
        "Rust parse_ethernet_into (ICRC verified) {:7.1} ns/frame  ({} frames x {rounds} rounds, best of 5)",
        best_of_5(&frames, rounds, rust(verify)),
        frames.len()
    );
    println!(
        "Rust parse_ethernet_into (verify: false) {:7.1} ns/frame",
        best_of_5(&frames, rounds, rust(noverify))
    );
    let mut out2 = roce_packet::default();
    println!(
        "Rust parse_frame_into (to roce_packet)   {:7.1} ns/frame",
        best_of_5(&frames, rounds, |f| {
            let st = parse_frame_into(f, roce_options::default(), &mut out2);
            black_box(&out2);
            (st as u32) ^ out2.bth.psn
        })
    );
    println!(
        "Rust -> extern \"C\" roce_parse_frame_opts {:7.1} ns/frame",
        best_of_5(&frames, rounds, via_c(roce_options::default()))
    );
    println!(
        "Rust -> extern \"C\" (skip_icrc)           {:7.1} ns/frame",
        best_of_5(&frames, rounds, via_c(skip))
    );
    Ok(())
}
