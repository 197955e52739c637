#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Tunnels taken off before the RoCE parse: every encapsulation of the table wraps the same
//! RoCE frames (each opcode shape of the builder's, IPv4 and IPv6 inside and outside, VLAN
//! tags inside and outside) and the inner parse must equal the plain frame's, with its ICRC
//! verified on the inner packet; a mirror that cuts the frame gives `unverifiable`, never
//! `bad`; broken tunnel headers stop with a typed error at their offset; the segmented parse
//! of a wrapped frame equals the contiguous one.

use roce_parser::*;

fn inner_frames() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let payload: Vec<u8> = (0..37u8).collect();
    let nets = [Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), Network::ipv6([0xfe; 16], [0x20; 16])];
    for net in nets {
        for (opcode, len) in [(0x04u8, 37usize), (0x0a, 37), (0x11, 0), (0x64, 0), (0x81, 0)] {
            let bth = BthRepr {
                opcode,
                pkey: 0xffff,
                dest_qp: 0x1234,
                psn: 0xfffffe,
                ..Default::default()
            };
            let mut b = FrameBuilder::new(net, bth);
            b.payload = &payload[..len];
            if opcode == 0x0a {
                b.vlans[0] = Some(VlanTag { tpid: 0x8100, pcp: 3, dei: false, vid: 100 });
            }
            let mut buf = vec![0u8; b.buffer_len()];
            b.emit(&mut buf).unwrap();
            out.push(buf);
        }
    }
    out
}

fn tunnels() -> Vec<Tunnel<'static>> {
    let gre = GreRepr::default();
    vec![
        Tunnel::Gre(GreRepr { protocol: GRE_PROTOCOL_TEB, key: Some(0x42), ..gre }),
        Tunnel::ErspanI(gre),
        Tunnel::ErspanII(
            GreRepr { seq: Some(77), ..gre },
            ErspanIIRepr {
                version: 1,
                vlan: 12,
                cos: 5,
                session_id: 7,
                index: 9,
                ..Default::default()
            },
        ),
        Tunnel::ErspanIII(
            GreRepr { seq: Some(78), ..gre },
            ErspanIIIRepr {
                version: 2,
                session_id: 1000,
                timestamp: 0xdead_beef,
                sgt: 99,
                hw_id: 5,
                direction: true,
                granularity: 3,
                platform: Some(ErspanPlatform { id: 3, info: 0x0123_4567_89ab }),
                ..Default::default()
            },
        ),
        Tunnel::ErspanIII(
            GreRepr { checksum: Some(0), key: Some(1), seq: Some(1), ..gre },
            ErspanIIIRepr { version: 2, session_id: 3, ..Default::default() },
        ),
        Tunnel::Vxlan(VxlanRepr { flags: VxlanRepr::FLAG_I, vni: 0x00ab_cdef }),
        Tunnel::Geneve(GeneveRepr {
            protocol: GRE_PROTOCOL_TEB,
            vni: 0x42,
            options: &[0x01, 0x02, 0x80, 0x01, 0xaa, 0xbb, 0xcc, 0xdd],
            ..Default::default()
        }),
    ]
}

fn wrap(t: Tunnel<'_>, outer: Network, outer_vlan: bool, inner: &[u8]) -> Vec<u8> {
    let mut b = TunnelBuilder::new(outer, t);
    if outer_vlan {
        b.vlans = [
            Some(VlanTag { tpid: 0x88a8, pcp: 0, dei: false, vid: 10 }),
            Some(VlanTag { tpid: 0x8100, pcp: 1, dei: false, vid: 20 }),
        ];
    }
    let mut buf = vec![0u8; b.buffer_len(inner.len())];
    b.emit(inner, &mut buf).unwrap();
    buf
}

/// The inner packet of `wrapped` equals the plain parse of `inner`, shifted by `shift`.
fn assert_same_inner(wrapped: &Packet<'_>, plain: &Packet<'_>, shift: usize) {
    assert_eq!(wrapped.eth, plain.eth);
    assert_eq!(wrapped.vlans, plain.vlans);
    let (w, p) = (wrapped.ip.unwrap(), plain.ip.unwrap());
    assert_eq!(
        (w.src, w.dst, w.protocol, w.total_len, w.offset),
        (p.src, p.dst, p.protocol, p.total_len, p.offset + shift)
    );
    assert_eq!(
        wrapped.udp.map(|u| (u.sport, u.dport, u.len)),
        plain.udp.map(|u| (u.sport, u.dport, u.len))
    );
    assert_eq!(wrapped.problems, plain.problems);
    assert_eq!(wrapped.stop, plain.stop.map(|e| e.at(shift)));
    let (w, p) = (wrapped.roce.unwrap(), plain.roce.unwrap());
    assert_eq!(w.bth, p.bth);
    assert_eq!(w.icrc_status, p.icrc_status);
    assert_eq!(w.icrc_status, IcrcStatus::Ok);
    assert_eq!(w.payload, p.payload);
    assert_eq!(w.bth_offset, p.bth_offset + shift);
}

#[test]
fn every_encapsulation_gives_the_plain_parse_of_the_inner_frame() {
    let cfg = Config::default();
    let outers =
        [Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]), Network::ipv6([0x30; 16], [0x31; 16])];
    let mut seen = 0;
    for inner in inner_frames() {
        let plain = parse_ethernet(&inner, &cfg).unwrap();
        for t in tunnels() {
            for outer in outers {
                for outer_vlan in [false, true] {
                    let frame = wrap(t, outer, outer_vlan, &inner);
                    let p = parse_ethernet(&frame, &cfg).unwrap();
                    let e = p.encap[0].expect("a tunnel");
                    assert_eq!(e.tunnel, t.with_protocol_of_kind(), "{:?}", t.kind());
                    assert!(p.encap[1].is_none());
                    assert_eq!(e.inner_offset, frame.len() - inner.len());
                    assert_eq!(e.vlans[1].is_some(), outer_vlan);
                    let oip = e.ip.unwrap();
                    assert_eq!(oip.version, if matches!(outer, Network::Ipv4(_)) { 4 } else { 6 });
                    assert_eq!(
                        e.udp.is_some(),
                        matches!(t.kind(), EncapKind::Vxlan | EncapKind::Geneve)
                    );
                    assert_same_inner(&p, &plain, e.inner_offset);
                    seen += 1;
                }
            }
        }
    }
    assert_eq!(seen, 10 * 7 * 2 * 2);
}

/// What the tunnel should read back as: the GRE protocol the kind implies.
trait WithProtocol {
    fn with_protocol_of_kind(self) -> Self;
}

impl WithProtocol for Tunnel<'_> {
    fn with_protocol_of_kind(self) -> Self {
        match self {
            Tunnel::ErspanI(g) => Tunnel::ErspanI(GreRepr { protocol: GRE_PROTOCOL_ERSPAN, ..g }),
            Tunnel::ErspanII(g, e) => {
                Tunnel::ErspanII(GreRepr { protocol: GRE_PROTOCOL_ERSPAN, ..g }, e)
            }
            Tunnel::ErspanIII(g, e) => {
                Tunnel::ErspanIII(GreRepr { protocol: GRE_PROTOCOL_ERSPAN3, ..g }, e)
            }
            t => t,
        }
    }
}

#[test]
fn a_mirror_of_an_overlay_keeps_both_tunnels_outermost_first() {
    let cfg = Config::default();
    let inner = &inner_frames()[0];
    let ts = tunnels();
    let vxlan = wrap(ts[5], Network::ipv4([172, 16, 0, 1], [172, 16, 0, 2]), false, inner);
    let mirrored = wrap(ts[2], Network::ipv4([192, 0, 2, 1], [192, 0, 2, 9]), false, &vxlan);
    let p = parse_ethernet(&mirrored, &cfg).unwrap();
    let kinds: Vec<_> = p.tunnels().map(Encap::kind).collect();
    assert_eq!(kinds, [EncapKind::ErspanII, EncapKind::Vxlan]);
    assert_eq!(p.encap_kind(), Some(EncapKind::Vxlan));
    assert_eq!(p.encap[1].unwrap().ip.unwrap().src.to_string(), "172.16.0.1");
    assert_eq!(p.ip.unwrap().src.to_string(), "10.0.0.1");
    assert_eq!(p.roce.unwrap().icrc_status, IcrcStatus::Ok);
    // A third tunnel is not decoded: the parse stops there, saying so.
    let third = wrap(ts[0], Network::ipv4([198, 51, 100, 1], [198, 51, 100, 2]), false, &mirrored);
    let p = parse_ethernet(&third, &cfg).unwrap();
    assert!(p.roce.is_none());
    let stop = p.stop.unwrap();
    assert_eq!(stop.layer, Layer::Vxlan);
    assert!(matches!(stop.kind, ErrorKind::Malformed(_)));
}

#[test]
fn ip_in_gre_and_geneve_and_erspan_iii_frame_type_ip() {
    let cfg = Config::default();
    let inner = &inner_frames()[0];
    let ip_packet = &inner[14..];
    let plain = parse_ethernet(inner, &cfg).unwrap();
    let outer = Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]);
    for t in [
        Tunnel::Gre(GreRepr { protocol: ETHERTYPE_IPV4, ..Default::default() }),
        Tunnel::Geneve(GeneveRepr { protocol: ETHERTYPE_IPV4, vni: 5, ..Default::default() }),
        Tunnel::ErspanIII(
            GreRepr { seq: Some(1), ..Default::default() },
            ErspanIIIRepr { version: 2, frame_type: 2, session_id: 4, ..Default::default() },
        ),
    ] {
        let frame = wrap(t, outer, false, ip_packet);
        let p = parse_ethernet(&frame, &cfg).unwrap();
        assert!(p.eth.is_none(), "{:?}: no inner Ethernet", t.kind());
        let w = p.roce.unwrap();
        assert_eq!((w.bth, w.icrc_status), (plain.roce.unwrap().bth, IcrcStatus::Ok));
        assert_eq!(p.encap[0].unwrap().inner_offset, frame.len() - ip_packet.len());
    }
}

#[test]
fn a_truncating_mirror_gives_unverifiable_never_bad() {
    let cfg = Config::default();
    let inner = &inner_frames()[0];
    let mut t = tunnels()[2];
    if let Tunnel::ErspanII(_, e) = &mut t {
        e.truncated = true;
    }
    let frame = wrap(t, Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]), false, inner);
    let inner_at = frame.len() - inner.len();
    // Cut anywhere inside the inner frame past its BTH: headers kept, ICRC unverifiable.
    for cut in inner_at + 14 + 20 + 8 + 12..frame.len() {
        let p = parse_ethernet(&frame[..cut], &cfg).unwrap();
        assert!(p.encap[0].unwrap().tunnel.truncated());
        let r = p.roce.unwrap_or_else(|| panic!("cut at {cut}: {:?}", p.stop));
        assert_eq!(r.icrc_status, IcrcStatus::Unverifiable, "cut at {cut}");
        assert!(p.problems.contains(Problem::Truncated), "cut at {cut}");
    }
    // Cut inside the outer headers: a truncation at the outer layer, never a panic.
    for cut in 0..inner_at + 14 {
        match parse_ethernet(&frame[..cut], &cfg) {
            Ok(p) => {
                assert!(p.roce.is_none());
                assert_eq!(p.stop.unwrap().kind, ErrorKind::Truncated, "cut at {cut}");
            }
            Err(e) => assert_eq!((e.layer, e.kind), (Layer::Ethernet, ErrorKind::Truncated)),
        }
    }
}

#[test]
fn broken_tunnel_headers_stop_with_a_typed_error_at_their_offset() {
    let cfg = Config::default();
    let inner = &inner_frames()[0];
    let outer = Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]);
    let ts = tunnels();
    let gre_at = 14 + 20;
    // ERSPAN II with version 2: not type II.
    let mut f = wrap(ts[2], outer, false, inner);
    f[gre_at + 8] = (f[gre_at + 8] & 0x0f) | 0x20;
    let p = parse_ethernet(&f, &cfg).unwrap();
    let e = p.stop.unwrap();
    assert_eq!((e.layer, e.offset), (Layer::Erspan, gre_at + 8));
    assert!(p.problems.contains(Problem::TunnelMalformed));
    assert!(p.roce.is_none());
    // GRE with the routing bit: not taken apart.
    let mut f = wrap(ts[0], outer, false, inner);
    f[gre_at] |= 0x40;
    let p = parse_ethernet(&f, &cfg).unwrap();
    assert_eq!(p.stop.unwrap().layer, Layer::Gre);
    // Geneve whose option length runs past the frame: a truncation at Geneve.
    let mut f = wrap(ts[6], outer, false, inner);
    let geneve_at = 14 + 20 + 8;
    f[geneve_at] = 63;
    f.truncate(geneve_at + 40);
    let p = parse_ethernet(&f, &cfg).unwrap();
    let e = p.stop.unwrap();
    assert_eq!((e.layer, e.offset, e.kind), (Layer::Geneve, geneve_at, ErrorKind::Truncated));
    // GRE carrying something else (PPP): kept as a GRE packet, no tunnel, no problem.
    let mut f = wrap(ts[0], outer, false, inner);
    f[gre_at + 2..gre_at + 4].copy_from_slice(&0x880bu16.to_be_bytes());
    let p = parse_ethernet(&f, &cfg).unwrap();
    assert!(p.encap[0].is_none() && p.roce.is_none() && p.stop.is_none());
    assert_eq!(p.ip.unwrap().protocol, IP_PROTOCOL_GRE);
}

#[test]
fn segmented_parse_of_a_wrapped_frame_equals_the_contiguous_one() {
    let cfg = Config::default();
    let inner = &inner_frames()[1];
    let mirrored = wrap(tunnels()[3], Network::ipv6([0x30; 16], [0x31; 16]), true, inner);
    let want = parse_ethernet(&mirrored, &cfg).unwrap();
    for cut in 0..=mirrored.len() {
        let segs: [&[u8]; 2] = [&mirrored[..cut], &mirrored[cut..]];
        let mut scratch = SegmentScratch::default();
        let got = parse_ethernet_segments(&segs, &cfg, &mut scratch).unwrap();
        assert_eq!(got.packet.encap, want.encap, "cut at {cut}");
        assert_eq!(
            got.packet.roce.map(|r| (r.bth, r.icrc_status)),
            want.roce.map(|r| (r.bth, r.icrc_status))
        );
        assert_eq!(got.packet.problems, want.problems);
    }
}

#[test]
fn the_prefix_places_a_tunnelled_frame_by_its_inner_hosts_as_the_parse_does() {
    let cfg = Config::default();
    let pair = |p: &Packet<'_>| p.ip.map(|ip| (ip.src, ip.dst));
    for inner in inner_frames().iter().step_by(3) {
        for t in tunnels() {
            let frame = wrap(t, Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]), true, inner);
            let prefix = parse_prefix(&frame).unwrap().unwrap();
            let p = parse_ethernet(&frame, &cfg).unwrap();
            assert_eq!(Some(prefix.host_pair()), pair(&p), "{:?}", t.kind());
            assert_eq!((prefix.tunnels, prefix.network_offset), (1, p.ip.unwrap().offset));
            // Every cut: the prefix's pair is the parse's whenever the prefix gives one.
            for cut in 0..frame.len() {
                let p = parse_ethernet(&frame[..cut], &cfg);
                match parse_prefix(&frame[..cut]) {
                    Ok(Some(got)) => {
                        assert_eq!(
                            Some(got.host_pair()),
                            pair(&p.unwrap()),
                            "{:?} cut at {cut}",
                            t.kind()
                        )
                    }
                    Ok(None) => panic!("cut at {cut}: no network header"),
                    Err(_) => {
                        assert!(p.map_or(true, |p| p.ip.is_none()), "{:?} cut at {cut}", t.kind())
                    }
                }
            }
        }
    }
}

/// Found by the `encap` fuzz target: the builder's length is what it writes, whatever GRE
/// header it is given (ERSPAN II without a sequence number, ERSPAN I with one).
#[test]
fn the_builder_writes_the_length_it_announces_for_every_gre_header() {
    let inner = &inner_frames()[0];
    let gre = [
        GreRepr::default(),
        GreRepr { seq: Some(3), key: Some(4), checksum: Some(5), ..Default::default() },
    ];
    for g in gre {
        for t in [
            Tunnel::ErspanI(g),
            Tunnel::ErspanII(g, ErspanIIRepr { version: 1, session_id: 3, ..Default::default() }),
            Tunnel::ErspanIII(g, ErspanIIIRepr { version: 2, session_id: 3, ..Default::default() }),
            Tunnel::Gre(GreRepr { protocol: GRE_PROTOCOL_TEB, ..g }),
        ] {
            let b = TunnelBuilder::new(Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]), t);
            let mut buf = vec![0u8; b.buffer_len(inner.len()) + 16];
            let n = b.emit(inner, &mut buf).unwrap();
            assert_eq!(n, b.buffer_len(inner.len()), "{t:?}");
            assert_eq!(&buf[n - inner.len()..n], &inner[..], "{t:?}: the inner frame at the end");
            let p = parse_ethernet(&buf[..n], &Config::default()).unwrap();
            assert_eq!(p.encap_kind(), Some(t.kind()), "{t:?}");
            assert_eq!(p.roce.unwrap().icrc_status, IcrcStatus::Ok, "{t:?}");
        }
    }
}

/// Found by the `encap` fuzz target: a tunnel whose inner frame has no network layer (ARP
/// in VXLAN) has no host pair in the prefix, as the parse has no IP layer.
#[test]
fn a_tunnelled_frame_without_ip_has_no_prefix() {
    let mut arp = vec![0u8; 42];
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    let frame = wrap(tunnels()[5], Network::ipv4([192, 0, 2, 1], [192, 0, 2, 2]), false, &arp);
    let p = parse_ethernet(&frame, &Config::default()).unwrap();
    assert_eq!((p.encap_kind(), p.ip), (Some(EncapKind::Vxlan), None));
    assert_eq!(parse_prefix(&frame).unwrap(), None);
}
