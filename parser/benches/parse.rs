//! Parse and ICRC throughput over a realistic frame mix, next to etherparse slicing alone
//! and raw crc32fast over the same bytes (DESIGN.md "Performance").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use roce_parser::headers::*;
use roce_parser::icrc::{self, IcrcNetwork};
use roce_parser::*;

/// RDMA WRITE bursts with ACKs, READs with responses, small SENDs, CNPs; IPv4 and IPv6.
fn frame_mix() -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    let payload = vec![0x5au8; 1024];
    let v4 = Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let v6 = Network::ipv6([0xfd; 16], [0xfe; 16]);
    let mut push = |net: Network, opcode: u8, headers: ExtHeaders, len: usize| {
        let mut b = FrameBuilder::new(
            net,
            BthRepr { opcode, pkey: 0xffff, dest_qp: 0x1234, psn: 77, ..Default::default() },
        );
        b.headers = headers;
        b.payload = &payload[..len];
        let mut out = vec![0; b.buffer_len()];
        b.emit(&mut out).unwrap();
        frames.push(out);
    };
    let reth = ExtHeaders {
        reth: Some(RethRepr { va: 0x1000, rkey: 5, dma_len: 4096 }),
        ..Default::default()
    };
    let aeth = ExtHeaders { aeth: Some(AethRepr::ack(0x1f, 3)), ..Default::default() };
    for net in [v4, v4, v4, v6] {
        push(net, 0x06, reth, 1024);
        push(net, 0x07, ExtHeaders::default(), 1024);
        push(net, 0x07, ExtHeaders::default(), 1024);
        push(net, 0x08, ExtHeaders::default(), 500);
        push(net, 0x11, aeth, 0);
        push(net, 0x0c, reth, 0);
        push(net, 0x0d, aeth, 1024);
        push(net, 0x0f, aeth, 300);
        push(net, 0x04, ExtHeaders::default(), 64);
        push(net, 0x11, aeth, 0);
        push(net, 0x81, ExtHeaders::default(), 16);
    }
    frames
}

/// (IPv4?, IP header, UDP header, BTH .. before ICRC).
type Located<'a> = (bool, &'a [u8], &'a [u8], &'a [u8]);

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

    g.bench_function("etherparse_slice_l2_l4", |b| {
        b.iter(|| {
            for f in &frames {
                black_box(etherparse::SlicedPacket::from_ethernet(black_box(f)).ok());
            }
        })
    });
    let no_icrc = Config { verify: false, ..Config::default() };
    g.bench_function("roce_parse_no_icrc", |b| {
        b.iter(|| {
            for f in &frames {
                black_box(parse_ethernet(black_box(f), &no_icrc).ok());
            }
        })
    });
    let cfg = Config::default();
    g.bench_function("roce_parse_with_icrc", |b| {
        b.iter(|| {
            for f in &frames {
                black_box(parse_ethernet(black_box(f), &cfg).ok());
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
    // The ICRC alone, over slices located once up front.
    let located: Vec<Located> = frames
        .iter()
        .map(|f| {
            let p = parse_ethernet(f, &no_icrc).unwrap();
            let ip = p.ip.unwrap();
            let udp = p.udp.unwrap();
            let r = p.roce.unwrap();
            let end = udp.offset + usize::from(udp.len) - 4;
            (
                ip.version == 4,
                &f[ip.offset..ip.offset + ip.header_len],
                &f[udp.offset..udp.offset + 8],
                &f[r.bth_offset..end],
            )
        })
        .collect();
    g.bench_function("icrc_only", |b| {
        b.iter(|| {
            for (v4, ip, udp, t) in &located {
                let net = if *v4 { IcrcNetwork::Ipv4(ip) } else { IcrcNetwork::Ipv6(ip) };
                black_box(icrc::compute(net, udp, t));
            }
        })
    });
    g.finish();
}

criterion_group!(parse, benches);
criterion_main!(parse);
