//! Parse and ICRC throughput over a realistic frame mix, next to etherparse slicing alone
//! and raw crc32fast over the same bytes (BENCHMARKS.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use roce_parser::*;

mod mix;
use mix::{frame_mix, locate};

fn benches(c: &mut Criterion) {
    let frames = frame_mix();
    let bytes: usize = frames.iter().map(Vec::len).sum();
    println!(
        "frame mix: {} frames, {} bytes, mean {} bytes",
        frames.len(),
        bytes,
        bytes / frames.len()
    );
    let mut g = c.benchmark_group("frame_mix");
    g.throughput(Throughput::Elements(frames.len() as u64));

    // Every case makes its result observable with `black_box(&result)`: a by-value
    // `black_box(result)` would add a copy of the result to the time measured.
    g.bench_function("etherparse_slice_l2_l4", |b| {
        b.iter(|| {
            for f in &frames {
                let r = etherparse::SlicedPacket::from_ethernet(black_box(f));
                black_box(&r);
            }
        })
    });
    let no_icrc = Config { verify: false, ..Config::default() };
    // `parse_ethernet` returns the ~500-byte Packet by value (one copy per frame).
    g.bench_function("roce_parse_no_icrc", |b| {
        b.iter(|| {
            for f in &frames {
                let r = parse_ethernet(black_box(f), &no_icrc);
                black_box(&r);
            }
        })
    });
    // `parse_ethernet_into` fills a packet in place, as the CLI's frame loop does.
    g.bench_function("roce_parse_into_no_icrc", |b| {
        let mut p = Packet::default();
        b.iter(|| {
            for f in &frames {
                let r = parse_ethernet_into(black_box(f), &no_icrc, &mut p);
                black_box((&r, &p));
            }
        })
    });
    let cfg = Config::default();
    g.bench_function("roce_parse_with_icrc", |b| {
        b.iter(|| {
            for f in &frames {
                let r = parse_ethernet(black_box(f), &cfg);
                black_box(&r);
            }
        })
    });
    g.bench_function("roce_parse_into_with_icrc", |b| {
        let mut p = Packet::default();
        b.iter(|| {
            for f in &frames {
                let r = parse_ethernet_into(black_box(f), &cfg, &mut p);
                black_box((&r, &p));
            }
        })
    });
    g.bench_function("crc32fast_raw_whole_frame", |b| {
        b.iter(|| {
            for f in &frames {
                black_box(crc32fast::hash(black_box(f)));
            }
        })
    });
    // The ICRC alone, over spans located once up front, next to raw crc32fast over the
    // same bytes (the IP header to the ICRC; the ICRC adds 8 leading ones and masks).
    let located = locate(&frames);
    g.bench_function("crc32fast_raw_icrc_bytes", |b| {
        b.iter(|| {
            for l in &located {
                black_box(crc32fast::hash(black_box(l.span)));
            }
        })
    });
    g.bench_function("icrc_only", |b| {
        b.iter(|| {
            for l in &located {
                black_box(compute_icrc_span(l.net, black_box(l.span)));
            }
        })
    });
    // The masked-prefix way (two crc32fast calls), kept for headers that are not back to back.
    g.bench_function("icrc_only_masked_prefix", |b| {
        b.iter(|| {
            for l in &located {
                black_box(compute_icrc(l.net, l.udp, black_box(l.transport)));
            }
        })
    });
    g.finish();
}

criterion_group!(parse, benches);
criterion_main!(parse);
