#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Lax parsing and the ICRC's coverage, on real bytes.
mod common;
use common::*;
use roce_parser::*;

fn frames() -> Vec<Vec<u8>> {
    let mut v = vec![hex(V1), hex(V2), hex(V3)];
    // A RoCEv1 RDMA WRITE FIRST with a VLAN tag, and an IPv4 READ request.
    let mut b = FrameBuilder::new(
        Network::RoceV1(GrhRepr {
            ipver: 6,
            hoplmt: 1,
            sgid: [1; 16],
            dgid: [2; 16],
            ..Default::default()
        }),
        BthRepr { opcode: 0x06, pkey: 0xffff, dest_qp: 0x42, psn: 100, ..Default::default() },
    );
    b.vlans[0] = Some(VlanTag { tpid: 0x8100, pcp: 3, dei: false, vid: 100 });
    b.headers.reth = Some(RethRepr { va: 0x1000, rkey: 7, dma_len: 4096 });
    let payload = [0xabu8; 256];
    b.payload = &payload;
    let mut out = vec![0; b.buffer_len()];
    b.emit(&mut out).unwrap();
    v.push(out);
    let mut b = FrameBuilder::new(
        Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]),
        BthRepr {
            opcode: 0x0C,
            pkey: 0xffff,
            dest_qp: 0x43,
            ackreq: true,
            psn: 9,
            ..Default::default()
        },
    );
    b.headers.reth = Some(RethRepr { va: 0x2000, rkey: 8, dma_len: 100 });
    let mut out = vec![0; b.buffer_len()];
    b.emit(&mut out).unwrap();
    v.push(out);
    v
}

/// Every prefix of every test frame parses without panic: an error only when the Ethernet
/// header is incomplete, otherwise a packet holding every header the prefix fully contains,
/// an unverifiable ICRC, and a `stop` or `Truncated` saying why.
#[test]
fn every_prefix_parses_laxly() {
    let cfg = Config::default();
    for f in frames() {
        let full = parse_ethernet(&f, &cfg).unwrap();
        let full_roce = full.roce.unwrap();
        for n in 0..f.len() {
            let prefix = &f[..n];
            let p = match parse_ethernet(prefix, &cfg) {
                Err(e) => {
                    assert!(n < 14, "prefix {n}: {e}");
                    assert_eq!((e.layer, e.needed, e.available), (Layer::Ethernet, 14, n));
                    continue;
                }
                Ok(p) => p,
            };
            assert!(
                p.stop.is_some() || p.problems.contains(Problem::Truncated),
                "prefix {n} of {}",
                f.len()
            );
            if let Some(r) = p.roce {
                assert_eq!(r.bth, full_roce.bth);
                assert_eq!(r.icrc_status, IcrcStatus::Unverifiable, "prefix {n}");
                assert!(full_roce.payload.starts_with(r.payload));
                // Headers are either complete and equal, or absent.
                for h in ExtHeader::ALL {
                    if r.headers.has(h) {
                        assert!(full_roce.headers.has(h));
                    }
                }
                if n >= r.bth_offset + usize::from(r.info.unwrap().header_len) {
                    assert_eq!(r.headers, full_roce.headers, "prefix {n}");
                }
            }
            if let Some(e) = p.stop {
                assert!(e.offset <= n, "stop offset {} beyond prefix {n}", e.offset);
            }
        }
    }
}

/// `parse_ethernet_into` gives what `parse_ethernet` gives, on every prefix, with one slot
/// reused from frame to frame (nothing of the previous frame survives).
#[test]
fn in_place_equals_by_value() {
    let frames = frames();
    let mut slot = Packet::default();
    for cfg in [Config::default(), Config { verify: false, ..Config::default() }] {
        for f in &frames {
            for n in (0..=f.len()).rev() {
                let prefix = &f[..n];
                let r = parse_ethernet_into(prefix, &cfg, &mut slot);
                match parse_ethernet(prefix, &cfg) {
                    Ok(p) => {
                        assert!(r.is_ok(), "prefix {n}");
                        assert_eq!(slot, p, "prefix {n}");
                    }
                    Err(e) => {
                        assert_eq!(r, Err(e), "prefix {n}");
                        assert_eq!(slot.roce, None);
                        assert_eq!(slot.data, prefix);
                    }
                }
            }
        }
    }
}

#[test]
fn truncated_error_names_layer_and_lengths() {
    let f = hex(V3);
    // Cut inside the AETH: Ethernet 14 + IPv6 40 + UDP 8 + BTH 12 + 2 bytes.
    let p = parse_ethernet(&f[..76], &Config::default()).unwrap();
    let e = p.stop.unwrap();
    assert_eq!((e.layer, e.offset, e.needed, e.available), (Layer::Aeth, 74, 4, 2));
    assert_eq!(e.to_string(), "AETH truncated at byte offset 74: needs 4 bytes, only 2 available");
}

/// Offsets, from the start of each vector, of bytes the ICRC masks.
fn masked(frame: &[u8]) -> Vec<usize> {
    if frame[12..14] == [0x08, 0x00] {
        // IPv4 TOS, TTL, checksum; UDP checksum; BTH byte 4 (FECN/BECN/resv6).
        vec![15, 22, 24, 25, 40, 41, 34 + 8 + 4]
    } else {
        // IPv6 traffic class + flow label (low nibble of byte 0 .. byte 3), hop limit.
        vec![15, 16, 17, 21, 14 + 40 + 6, 14 + 40 + 7, 14 + 48 + 4]
    }
}

#[test]
fn icrc_ignores_masked_fields_and_catches_covered_ones() {
    let cfg = Config { verify: false, ..Config::default() };
    let verify = Config::default();
    for f in [hex(V1), hex(V2), hex(V3)] {
        let roce_end = {
            let p = parse_ethernet(&f, &cfg).unwrap();
            let r = p.roce.unwrap();
            r.bth_offset
                + r.info.unwrap().header_len as usize
                + r.payload_len
                + r.bth.padcnt as usize
        };
        let masked = masked(&f);
        for at in 0..roce_end {
            for flip in [0x01u8, 0x80, 0x10] {
                let mut g = f.clone();
                g[at] ^= flip;
                let Ok(p) = parse_ethernet(&g, &verify) else {
                    continue;
                };
                let Some(r) = p.roce else { continue };
                if at < 14 {
                    // Ethernet is not covered at all.
                    assert_eq!(r.icrc_status, IcrcStatus::Ok, "byte {at}");
                } else if masked.contains(&at) || (at == 14 && f[12] == 0x86 && flip & 0x0f != 0) {
                    // (IPv6 byte 0: the low nibble belongs to the traffic class.)
                    assert_eq!(r.icrc_status, IcrcStatus::Ok, "masked byte {at} flip {flip:#x}");
                } else if !p.problems.contains(Problem::Truncated) && r.icrc.is_some() {
                    // A covered byte changed (length fields may make it unverifiable instead).
                    assert!(
                        matches!(r.icrc_status, IcrcStatus::Bad { .. } | IcrcStatus::Unverifiable),
                        "covered byte {at} flip {flip:#x}: {:?}",
                        r.icrc_status
                    );
                }
            }
        }
    }
}

#[test]
fn unknown_opcodes_keep_opaque_bytes() {
    for op in [0x15u8, 0x1e, 0x82, 0xc5, 0xff] {
        let mut b = FrameBuilder::new(
            Network::ipv4([1, 2, 3, 4], [5, 6, 7, 8]),
            BthRepr { opcode: op, ..Default::default() },
        );
        b.payload = &[9, 9, 9, 9, 9, 9, 9, 9];
        let mut out = vec![0; b.buffer_len()];
        b.emit(&mut out).unwrap();
        let p = parse_ethernet(&out, &Config::default()).unwrap();
        let r = p.roce.unwrap();
        assert!(r.info.is_none());
        assert_eq!(r.opaque, &[9; 8]);
        assert_eq!(r.icrc_status, IcrcStatus::Ok);
        let expect = if op >= 0xc0 { Problem::VendorOpcode } else { Problem::ReservedOpcode };
        assert!(p.problems.contains(expect), "{op:#x}: {}", p.problems);
    }
}

#[test]
fn problems_are_reported_without_stopping() {
    // ATOMIC_WRITE with 4 bytes, TVer 1, reserved bits, non-zero pad.
    let mut b = FrameBuilder::new(
        Network::ipv4([1, 2, 3, 4], [5, 6, 7, 8]),
        BthRepr { opcode: 0x1d, tver: 1, resv7: 1, ..Default::default() },
    );
    b.payload = &[1, 2, 3, 4, 5];
    let mut out = vec![0; b.buffer_len()];
    b.emit(&mut out).unwrap();
    // Make the last pad byte non-zero (then the ICRC no longer matches).
    let pad_at = out.len() - 5;
    out[pad_at] = 0xee;
    let p = parse_ethernet(&out, &Config::default()).unwrap();
    for pr in [
        Problem::AtomicWriteLength,
        Problem::TverNonZero,
        Problem::ReservedBits,
        Problem::PadNonZero,
        Problem::IcrcBad,
    ] {
        assert!(p.problems.contains(pr), "missing {pr}: {}", p.problems);
    }
    assert_eq!(p.roce.unwrap().headers.reth.unwrap(), RethRepr::default());

    // A READ request carrying payload; a UDP length that disagrees with IPv4's.
    let mut b = FrameBuilder::new(
        Network::ipv4([1, 2, 3, 4], [5, 6, 7, 8]),
        BthRepr { opcode: 0x0c, ..Default::default() },
    );
    b.payload = &[0; 8];
    let mut out = vec![0; b.buffer_len()];
    b.emit(&mut out).unwrap();
    let p = parse_ethernet(&out, &Config::default()).unwrap();
    assert!(p.problems.contains(Problem::UnexpectedPayload));
    let udp_len_at = 14 + 20 + 4;
    out[udp_len_at + 1] -= 4;
    let p = parse_ethernet(&out, &Config::default()).unwrap();
    assert!(p.problems.contains(Problem::UdpLengthMismatch), "{}", p.problems);
    // IPv4 total length beyond the frame.
    out[14 + 3] += 40;
    let p = parse_ethernet(&out, &Config::default()).unwrap();
    assert!(
        p.problems.contains(Problem::Truncated) && p.problems.contains(Problem::Ipv4Checksum),
        "{}",
        p.problems
    );
}

#[test]
fn other_port_and_entry_points() {
    let f = hex(V2);
    let cfg = Config { udp_port: 4792, ..Config::default() };
    assert!(parse_ethernet(&f, &cfg).unwrap().roce.is_none());
    // A second port beside another one decodes 4791 again, as Wireshark's Decode As does.
    let both = Config { udp_port: 4792, extra_udp_ports: [4791, 0, 0], ..Config::default() };
    assert_eq!(parse_ethernet(&f, &both).unwrap().roce.unwrap().icrc_status, IcrcStatus::Ok);
    let unused = Config { udp_port: 4792, extra_udp_ports: [0, 4793, 0], ..Config::default() };
    assert!(parse_ethernet(&f, &unused).unwrap().roce.is_none());
    let ip = &f[14..];
    let p = parse_ip(ip, &Config::default()).unwrap();
    assert_eq!(p.roce.unwrap().icrc_status, IcrcStatus::Ok);
    let (r, problems) = parse_udp_payload(&f[14 + 20 + 8..], &Config::default()).unwrap();
    assert_eq!(r.opcode_name(), "CNP");
    assert_eq!(r.icrc_status, IcrcStatus::NotChecked);
    assert!(problems.is_empty());
    assert!(parse_ip(&[0x50], &Config::default()).is_err());
}
