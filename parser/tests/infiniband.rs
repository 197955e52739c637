#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Native InfiniBand packets (LRH, GRH when routed): the builder's packets parse back field by
//! field; the ICRC covers what no switch or router changes and the VCRC everything, so a
//! change of each kind of field moves exactly the CRCs it should; a cut packet is
//! unverifiable, never bad. (The real ibdump captures: tests/real_captures.rs.)

use std::net::IpAddr;

use roce_parser::*;

fn lrh() -> LrhRepr {
    LrhRepr { vl: 0, sl: 3, dlid: 0x0002, slid: 0x0001, ..Default::default() }
}

fn grh() -> GrhRepr {
    let mut sgid = [0u8; 16];
    sgid[..2].copy_from_slice(&[0xfe, 0x80]);
    sgid[15] = 1;
    let mut dgid = sgid;
    dgid[15] = 2;
    GrhRepr { ipver: 6, tclass: 0, flow_label: 0, hoplmt: 64, sgid, dgid, ..Default::default() }
}

/// (opcode, payload length) of the packets built: SEND of every pad length, RDMA WRITE with
/// its RETH, an ACK with its AETH, a UD SEND with its DETH.
const SHAPES: &[(u8, usize)] =
    &[(0x04, 0), (0x04, 1), (0x04, 2), (0x04, 3), (0x04, 4), (0x0a, 64), (0x11, 0), (0x64, 256)];

fn build(network: Network, opcode: u8, len: usize) -> Vec<u8> {
    let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
    let bth =
        BthRepr { opcode, pkey: 0xffff, dest_qp: 0x11, psn: 0x00ab_cdef, ..Default::default() };
    let mut b = FrameBuilder::new(network, bth);
    b.payload = &payload;
    let mut out = vec![0u8; b.buffer_len()];
    assert_eq!(b.emit(&mut out).unwrap(), out.len());
    out
}

fn statuses(bytes: &[u8]) -> (IcrcStatus, IcrcStatus) {
    let p = parse_infiniband(bytes, &Config::default()).unwrap();
    (p.roce.map(|r| r.icrc_status).unwrap(), p.vcrc.unwrap().status)
}

fn bad(s: IcrcStatus) -> bool {
    matches!(s, IcrcStatus::Bad { .. })
}

#[test]
fn built_packets_parse_back() {
    for network in [Network::infiniband(lrh()), Network::Infiniband(lrh(), Some(grh()))] {
        for &(opcode, len) in SHAPES {
            let bytes = build(network, opcode, len);
            let p = parse_infiniband(&bytes, &Config::default()).unwrap();
            let l = p.lrh.unwrap();
            assert_eq!((l.sl, l.dlid, l.slid), (3, 2, 1));
            assert_eq!(l.packet_len() + VCRC_LEN, bytes.len(), "PktLen: LRH through ICRC");
            let routed = matches!(network, Network::Infiniband(_, Some(_)));
            assert_eq!(l.lnh, if routed { Lnh::Global } else { Lnh::Local });
            let r = p.roce.unwrap();
            assert_eq!(r.version, RoceVersion::Infiniband);
            assert_eq!((r.bth.opcode, r.bth.dest_qp, r.bth.psn), (opcode, 0x11, 0x00ab_cdef));
            assert_eq!(r.payload.len(), len);
            assert_eq!(r.grh.map(|g| g.dgid), routed.then(|| grh().dgid));
            assert_eq!(r.icrc_status, IcrcStatus::Ok, "{opcode:#x} {len}");
            assert_eq!(p.vcrc.unwrap().status, IcrcStatus::Ok);
            assert!(p.problems.is_empty(), "{}", p.problems);
            assert!(p.eth.is_none() && p.ip.is_none() && p.udp.is_none());
            if opcode == 0x64 {
                assert!(r.mad().is_none(), "a UD SEND to QP 0x11 is not QP1's");
            }
        }
    }
}

#[test]
fn each_field_moves_the_crcs_it_is_covered_by() {
    let local = build(Network::infiniband(lrh()), 0x04, 5);
    let routed = build(Network::Infiniband(lrh(), Some(grh())), 0x04, 5);
    // (packet, byte, bit mask, ICRC changes): the VCRC covers every byte before it.
    let cases: &[(&[u8], usize, u8, bool)] = &[
        (&local, 0, 0xf0, false),       // VL: rewritten by switches, masked
        (&local, 1, 0x30, true),        // SL
        (&local, 3, 0x01, true),        // DLID (no router in between: covered)
        (&local, 8 + 4, 0x80, false),   // BTH FECN: masked
        (&local, 8 + 12, 0x01, true),   // payload
        (&routed, 3, 0x01, false),      // DLID behind a GRH: a router rewrites the LRH
        (&routed, 7, 0x01, false),      // SLID likewise
        (&routed, 8 + 7, 0x01, false),  // GRH hop limit: masked
        (&routed, 8 + 1, 0x10, false),  // GRH traffic class: masked
        (&routed, 8 + 24, 0x01, true),  // DGID
        (&routed, 48 + 4, 0x40, false), // BTH BECN: masked
    ];
    for &(packet, at, mask, icrc_moves) in cases {
        let mut b = packet.to_vec();
        b[at] ^= mask;
        let (icrc, vcrc) = statuses(&b);
        assert!(bad(vcrc), "byte {at}: the VCRC covers it");
        assert_eq!(bad(icrc), icrc_moves, "byte {at} mask {mask:#x}: ICRC {icrc:?}");
    }
    // The VCRC itself damaged: the ICRC still holds.
    let mut b = local.clone();
    *b.last_mut().unwrap() ^= 1;
    let (icrc, vcrc) = statuses(&b);
    assert_eq!(icrc, IcrcStatus::Ok);
    assert!(bad(vcrc));
    let p = parse_infiniband(&b, &Config::default()).unwrap();
    assert!(p.problems.contains(Problem::VcrcBad) && !p.problems.contains(Problem::IcrcBad));
}

#[test]
fn a_cut_packet_is_unverifiable_never_bad() {
    for network in [Network::infiniband(lrh()), Network::Infiniband(lrh(), Some(grh()))] {
        let bytes = build(network, 0x0a, 64);
        for cut in 0..bytes.len() {
            let Ok(p) = parse_infiniband(&bytes[..cut], &Config::default()) else {
                assert!(cut < LrhRepr::LEN, "only a cut LRH fails");
                continue;
            };
            assert_eq!(p.vcrc.unwrap().status, IcrcStatus::Unverifiable, "cut at {cut}");
            if let Some(r) = p.roce {
                assert!(!bad(r.icrc_status), "cut at {cut}: {:?}", r.icrc_status);
                assert!(p.problems.contains(Problem::Truncated), "cut at {cut}");
            }
            assert!(!p.problems.contains(Problem::VcrcBad));
        }
        // Bytes after the VCRC (a capture record's pad) change nothing.
        let mut padded = bytes.clone();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(statuses(&padded), (IcrcStatus::Ok, IcrcStatus::Ok));
    }
}

#[test]
fn other_transports_yield_their_lrh() {
    let mut b = build(Network::infiniband(lrh()), 0x04, 4);
    b[1] = (b[1] & !3) | Lnh::Ipv6.bits();
    let p = parse_infiniband(&b, &Config::default()).unwrap();
    assert_eq!(p.lrh.map(|l| l.lnh), Some(Lnh::Ipv6));
    assert!(p.roce.is_none() && p.stop.is_none());
    // Verification off: neither CRC checked.
    let cfg = Config { verify: false, ..Config::default() };
    let b = build(Network::infiniband(lrh()), 0x04, 4);
    let p = parse_infiniband(&b, &cfg).unwrap();
    assert_eq!(p.vcrc.unwrap().status, IcrcStatus::NotChecked);
    assert_eq!(p.roce.unwrap().icrc_status, IcrcStatus::NotChecked);
}

#[test]
fn the_prefix_has_the_parses_gids_or_none() {
    let routed = build(Network::Infiniband(lrh(), Some(grh())), 0x04, 4);
    let p = parse_infiniband(&routed, &Config::default()).unwrap();
    let g = p.roce.unwrap().grh.unwrap();
    let prefix = parse_infiniband_prefix(&routed).unwrap().unwrap();
    let want = (IpAddr::V6(g.sgid_addr()), IpAddr::V6(g.dgid_addr()));
    assert_eq!(prefix.host_pair(), want);
    assert_eq!((prefix.network_offset, prefix.network_len), (8, 40));
    // Without a GRH the endpoints are LIDs: no address pair.
    let local = build(Network::infiniband(lrh()), 0x04, 4);
    assert_eq!(parse_infiniband_prefix(&local).unwrap(), None);
    // Cut inside the LRH, or inside the GRH it announces: the layer and offset.
    let e = parse_infiniband_prefix(&routed[..5]).unwrap_err();
    assert_eq!(e.layer, Layer::Lrh);
    let e = parse_infiniband_prefix(&routed[..30]).unwrap_err();
    assert_eq!((e.layer, e.offset), (Layer::Grh, 8));
}
