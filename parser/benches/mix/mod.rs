//! The frame mix both parser benches run (parse.rs under criterion, ratios.rs interleaved).
#![allow(dead_code)]

use roce_parser::*;

/// RDMA WRITE bursts with ACKs, READs with responses, small SENDs, CNPs; IPv4 and IPv6.
pub fn frame_mix() -> Vec<Vec<u8>> {
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

/// Where a frame's ICRC inputs sit.
pub struct Located<'a> {
    pub net: IcrcNetwork<'a>,
    pub udp: &'a [u8],
    /// BTH up to the ICRC.
    pub transport: &'a [u8],
    /// IP header to the ICRC, as in the frame: the bytes the ICRC covers (without its 8
    /// leading ones), what raw crc32fast is timed over.
    pub span: &'a [u8],
}

/// Locates every frame's ICRC inputs (parsed once, outside the timed loops).
pub fn locate(frames: &[Vec<u8>]) -> Vec<Located<'_>> {
    let cfg = Config { verify: false, ..Config::default() };
    frames
        .iter()
        .map(|f| {
            let p = parse_ethernet(f, &cfg).unwrap();
            let ip = p.ip.unwrap();
            let udp = p.udp.unwrap();
            let r = p.roce.unwrap();
            let end = udp.offset + usize::from(udp.len) - 4;
            let h = &f[ip.offset..ip.offset + ip.header_len];
            Located {
                net: if ip.version == 4 { IcrcNetwork::Ipv4(h) } else { IcrcNetwork::Ipv6(h) },
                udp: &f[udp.offset..udp.offset + 8],
                transport: &f[r.bth_offset..end],
                span: &f[ip.offset..end],
            }
        })
        .collect()
}
