#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! The builder re-creates the docs/wire.md vectors byte for byte, and every opcode of the table
//! survives build -> parse with arbitrary field values.
mod common;
use common::*;
use proptest::prelude::*;
use roce_parser::*;

fn build(b: &FrameBuilder) -> Vec<u8> {
    let mut out = vec![0u8; b.buffer_len()];
    let n = b.emit(&mut out).unwrap();
    assert_eq!(n, out.len());
    out
}

#[test]
fn recreates_v1() {
    let payload = hex("4630818be28935d90e9a95505401be885e50");
    let mut b = FrameBuilder::new(
        Network::Ipv4(Ipv4Spec {
            src: [192, 168, 0, 7],
            dst: [192, 168, 0, 7],
            dscp: 0,
            ecn: 1,
            ttl: 64,
            identification: 0x0478,
            dont_fragment: true,
        }),
        BthRepr {
            opcode: 0x24,
            migreq: true,
            pkey: 0xffff,
            dest_qp: 0xd3,
            psn: 0xcf1710,
            ..Default::default()
        },
    );
    b.eth_dst = [0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22];
    b.eth_src = b.eth_dst;
    b.udp_checksum = 0xaca2;
    b.payload = &payload;
    assert_eq!(build(&b), hex(V1));
}

#[test]
fn recreates_v2_cnp() {
    let mut b = FrameBuilder::new(
        Network::Ipv4(Ipv4Spec {
            src: [10, 0, 17, 1],
            dst: [10, 0, 18, 1],
            dscp: 0x30,
            ecn: 2,
            ttl: 64,
            identification: 0x718c,
            dont_fragment: true,
        }),
        BthRepr { opcode: 0x81, pkey: 0xffff, becn: true, dest_qp: 0x118, ..Default::default() },
    );
    b.eth_dst = [0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2];
    b.eth_src = [0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32];
    b.udp_sport = 0;
    b.payload = &[0; 16];
    assert_eq!(build(&b), hex(V2));
}

#[test]
fn recreates_v3_ipv6_ack() {
    let mut src = [0u8; 16];
    src[0] = 0xfe;
    src[1] = 0x80;
    let mut dst = src;
    src[15] = 1;
    dst[15] = 2;
    let mut b = FrameBuilder::new(
        Network::Ipv6(Ipv6Spec {
            src,
            dst,
            traffic_class: 0x20,
            flow_label: 0x12345,
            hop_limit: 64,
        }),
        BthRepr {
            opcode: 0x11,
            pkey: 0xffff,
            becn: true,
            dest_qp: 0x11,
            psn: 5,
            ..Default::default()
        },
    );
    b.eth_dst = [0xff; 6];
    b.eth_src = [0x02, 0xfc, 0, 0, 0, 1];
    b.udp_sport = 0xc350;
    b.udp_checksum = 0x4bf1;
    b.headers.aeth = Some(AethRepr { syndrome: 0x1f, msn: 7 });
    assert_eq!(build(&b), hex(V3));
}

#[test]
fn forced_icrc_is_reported_bad() {
    let mut b = FrameBuilder::new(
        Network::ipv4([1, 1, 1, 1], [2, 2, 2, 2]),
        BthRepr { opcode: 0x04, ..Default::default() },
    );
    b.payload = b"hello";
    b.icrc = Some(0x1234_5678);
    let f = build(&b);
    let r = parse_ethernet(&f, &Config::default()).unwrap().roce.unwrap();
    assert!(matches!(r.icrc_status, IcrcStatus::Bad { .. }));
    assert_eq!(r.icrc, Some(0x1234_5678));
}

/// Every extended header present, each parsed from its own random bytes (so every bit
/// pattern a header can hold on the wire is reachable, reserved bits included).
fn headers_strategy() -> impl Strategy<Value = ExtHeaders> {
    let total: usize = ExtHeader::ALL.iter().map(|h| h.len()).sum();
    proptest::collection::vec(any::<u8>(), total).prop_map(|bytes| {
        let mut all = ExtHeaders::default();
        let mut at = 0;
        for h in ExtHeader::ALL {
            assert!(all.parse_one(h, &bytes[at..]).is_some());
            at += h.len();
        }
        all
    })
}

fn bth_strategy() -> impl Strategy<Value = BthRepr> {
    (
        any::<[bool; 5]>(),
        any::<u8>(),
        any::<u16>(),
        any::<u8>(),
        any::<u32>(),
        any::<u8>(),
        any::<u32>(),
    )
        .prop_map(|(f, tver, pkey, resv6, dest_qp, resv7, psn)| {
            BthRepr {
                opcode: 0,
                se: f[0],
                migreq: f[1],
                padcnt: 0,
                tver,
                pkey,
                fecn: f[2],
                becn: f[3],
                resv6,
                dest_qp,
                ackreq: f[4],
                resv7,
                psn,
            }
            .normalized()
        })
}

fn network_strategy() -> impl Strategy<Value = Network> {
    prop_oneof![
        (
            any::<[u8; 4]>(),
            any::<[u8; 4]>(),
            0u8..64,
            0u8..4,
            any::<u8>(),
            any::<u16>(),
            any::<bool>()
        )
            .prop_map(|(src, dst, dscp, ecn, ttl, identification, dont_fragment)| {
                Network::Ipv4(Ipv4Spec { src, dst, dscp, ecn, ttl, identification, dont_fragment })
            }),
        (any::<[u8; 16]>(), any::<[u8; 16]>(), any::<u8>(), 0u32..0x100000, any::<u8>()).prop_map(
            |(src, dst, traffic_class, flow_label, hop_limit)| Network::Ipv6(Ipv6Spec {
                src,
                dst,
                traffic_class,
                flow_label,
                hop_limit
            })
        ),
        (any::<[u8; 16]>(), any::<[u8; 16]>(), any::<u8>(), 0u32..0x100000, any::<u8>()).prop_map(
            |(sgid, dgid, tclass, flow_label, hoplmt)| Network::RoceV1(GrhRepr {
                ipver: 6,
                tclass,
                flow_label,
                paylen: 0,
                nxthdr: 0x1b,
                hoplmt,
                sgid,
                dgid
            })
        ),
        // Native InfiniBand, local and routed (the GRH's fields as RoCEv1's).
        (0u8..16, 0u8..16, any::<u16>(), any::<u16>(), any::<bool>(), any::<[u8; 16]>()).prop_map(
            |(vl, sl, dlid, slid, routed, gid)| {
                let lrh = LrhRepr { vl, sl, dlid, slid, ..Default::default() };
                let grh =
                    GrhRepr { ipver: 6, hoplmt: 1, sgid: gid, dgid: gid, ..Default::default() };
                Network::Infiniband(lrh, routed.then_some(grh))
            }
        ),
    ]
}

fn vlan_strategy() -> impl Strategy<Value = [Option<VlanTag>; 2]> {
    let tag = (prop_oneof![Just(0x8100u16), Just(0x88a8u16)], 0u8..8, any::<bool>(), 0u16..4096)
        .prop_map(|(tpid, pcp, dei, vid)| VlanTag { tpid, pcp, dei, vid });
    prop_oneof![
        Just([None, None]),
        tag.clone().prop_map(|t| [Some(t), None]),
        (tag.clone(), tag).prop_map(|(a, b)| [Some(a), Some(b)]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Every opcode of the table: build -> parse gives back every field.
    #[test]
    fn every_opcode_round_trips(
        idx in 0..OPCODES.len(),
        bth in bth_strategy(),
        all in headers_strategy(),
        net in network_strategy(),
        vlans in vlan_strategy(),
        payload in proptest::collection::vec(any::<u8>(), 0..600),
        sport in any::<u16>(),
        csum in any::<u16>(),
    ) {
        let info = &OPCODES[idx];
        let mut bth = bth;
        bth.opcode = info.opcode;
        let mut payload = payload;
        match info.payload {
            PayloadRule::Empty => payload.clear(),
            PayloadRule::Exactly(n) => payload.resize(usize::from(n), 0),
            _ => {}
        }
        let payload: &[u8] = &payload;
        let headers = all.as_written(info.headers);
        let mut b = FrameBuilder::new(net, bth);
        b.vlans = vlans;
        b.headers = headers;
        b.payload = payload;
        b.udp_sport = sport;
        b.udp_checksum = csum;
        let frame = build(&b);

        let native = matches!(net, Network::Infiniband(..));
        let p = if native {
            parse_infiniband(&frame, &Config::default()).unwrap()
        } else {
            parse_ethernet(&frame, &Config::default()).unwrap()
        };
        prop_assert_eq!(p.stop, None);
        prop_assert_eq!(p.vlans, if native { [None; MAX_VLANS] } else { vlans });
        let r = p.roce.unwrap();
        let mut expect_bth = bth;
        expect_bth.padcnt = ((4 - payload.len() % 4) % 4) as u8;
        prop_assert_eq!(r.bth, expect_bth);
        prop_assert_eq!(r.info, Some(info));
        prop_assert_eq!(r.headers, headers);
        prop_assert_eq!(r.payload, payload);
        prop_assert_eq!(r.payload_len, payload.len());
        prop_assert_eq!(r.icrc_status, IcrcStatus::Ok);
        match net {
            Network::Ipv4(s) => {
                let ip = p.ip.unwrap();
                prop_assert_eq!((ip.dscp, ip.ecn, ip.ttl, ip.identification), (s.dscp, s.ecn, s.ttl, s.identification));
                prop_assert_eq!(ip.src, core::net::IpAddr::from(s.src));
                let udp = p.udp.unwrap();
                prop_assert_eq!((udp.sport, udp.dport, udp.checksum), (sport, 4791, csum));
                prop_assert_eq!(r.version, RoceVersion::V2);
            }
            Network::Ipv6(s) => {
                let ip = p.ip.unwrap();
                prop_assert_eq!((ip.dscp << 2 | ip.ecn, ip.flow_label, ip.ttl), (s.traffic_class, s.flow_label, s.hop_limit));
                prop_assert_eq!(ip.dst, core::net::IpAddr::from(s.dst));
                prop_assert_eq!(r.version, RoceVersion::V2);
            }
            Network::RoceV1(g) => {
                let got = r.grh.unwrap();
                prop_assert_eq!((got.sgid, got.dgid, got.tclass, got.flow_label, got.hoplmt), (g.sgid, g.dgid, g.tclass, g.flow_label, g.hoplmt));
                prop_assert_eq!(r.version, RoceVersion::V1);
            }
            Network::Infiniband(lrh, grh) => {
                let got = p.lrh.unwrap();
                prop_assert_eq!((got.vl, got.sl, got.dlid, got.slid), (lrh.vl, lrh.sl, lrh.dlid, lrh.slid));
                prop_assert_eq!(got.packet_len() + VCRC_LEN, frame.len());
                prop_assert_eq!(r.grh.map(|g| g.sgid), grh.map(|g| g.sgid));
                prop_assert_eq!(p.vcrc.map(|v| v.status), Some(IcrcStatus::Ok));
                prop_assert_eq!(r.version, RoceVersion::Infiniband);
            }
        }
        // Only the problems the random reserved fields and TVer explain may appear.
        let mut allowed = Problems::NONE;
        allowed.insert(Problem::TverNonZero);
        allowed.insert(Problem::ReservedBits);
        allowed.insert(Problem::RdLayoutMismatch);
        allowed.insert(Problem::Qp1QKey);
        allowed.insert(Problem::CnpBecnClear);
        allowed.insert(Problem::CnpPsnNonZero);
        // A UD SEND that happens to go to QP1 is a MAD: its problems come from the payload.
        if let Some(Ok(m)) = r.mad() {
            allowed.union(m.problems);
        }
        prop_assert_eq!(p.problems.bits() & !allowed.bits(), 0, "{}", p.problems);
    }
}

/// `Packet::ecn` reads the codepoint from the IPv4 TOS, the IPv6 traffic class, or (RoCEv1,
/// no IP header) the GRH TClass, and `ecn_ce` is true for CE alone.
#[test]
fn ecn_codepoint_from_every_network_layer() {
    let bth = BthRepr { opcode: 0x04, pkey: 0xffff, dest_qp: 0x12, psn: 7, ..Default::default() };
    let v4 = |ecn: u8| {
        Network::Ipv4(Ipv4Spec {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            dscp: 26,
            ecn,
            ttl: 64,
            identification: 1,
            dont_fragment: true,
        })
    };
    let v6 = |ecn: u8| {
        Network::Ipv6(Ipv6Spec {
            src: [1; 16],
            dst: [2; 16],
            traffic_class: 26 << 2 | ecn,
            flow_label: 0,
            hop_limit: 64,
        })
    };
    let v1 = |ecn: u8| {
        Network::RoceV1(GrhRepr {
            ipver: 6,
            tclass: 26 << 2 | ecn,
            nxthdr: 0x1b,
            hoplmt: 64,
            sgid: [1; 16],
            dgid: [2; 16],
            ..Default::default()
        })
    };
    let expected = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce];
    for net in [&v4 as &dyn Fn(u8) -> Network, &v6, &v1] {
        for (bits, want) in expected.iter().enumerate() {
            let frame = build(&FrameBuilder::new(net(bits as u8), bth));
            let p = parse_ethernet(&frame, &Config::default()).unwrap();
            assert_eq!(p.ecn(), Some(*want), "{:?}", net(bits as u8));
            assert_eq!(p.ecn_ce(), *want == Ecn::Ce);
            assert_eq!(want.bits(), bits as u8);
            assert_eq!(Ecn::from_bits(want.bits() | 0xfc), *want, "higher bits ignored");
        }
    }
    assert_eq!(Ecn::Ce.name(), "CE");
    // A frame with no network layer the parser knows has no codepoint.
    let mut arp = vec![0u8; 60];
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    let p = parse_ethernet(&arp, &Config::default()).unwrap();
    assert_eq!((p.ecn(), p.ecn_ce()), (None, false));
}
