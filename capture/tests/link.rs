//! From (link type, frame) to the parser's starting point: every supported link type, the
//! byte-order variants of null/loopback, and clear refusals for the rest.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use common::{Pcap, PcapNg};
use roce_capture::{
    l2_start, Capture, L2Error, L2Start, LinkType, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCEV1,
};

const IPV4: [u8; 20] = [0x45, 0, 0, 20, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
const IPV6: [u8; 8] = [0x60, 0, 0, 0, 0, 8, 17, 64];

fn sll(protocol: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 1, 0, 6, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0];
    f.extend_from_slice(&protocol.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn sll2(protocol: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = protocol.to_be_bytes().to_vec();
    f.extend_from_slice(&[0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0]);
    f.extend_from_slice(payload);
    f
}

fn null(family: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut f = family.to_vec();
    f.extend_from_slice(payload);
    f
}

#[test]
fn ethernet_is_handed_over_whole() {
    let frame = [0u8; 60];
    assert_eq!(l2_start(LinkType::Ethernet, &frame), L2Start::Ethernet(&frame[..]));
}

#[test]
fn linux_cooked_gives_the_protocol_field() {
    let f = sll(0x0800, &IPV4);
    assert_eq!(
        l2_start(LinkType::LinuxSll, &f),
        L2Start::Network { ethertype: ETHERTYPE_IPV4, data: &IPV4[..] }
    );
    let grh = [0x60u8; 40];
    let f = sll(0x8915, &grh);
    assert_eq!(
        l2_start(LinkType::LinuxSll, &f),
        L2Start::Network { ethertype: ETHERTYPE_ROCEV1, data: &grh[..] }
    );
    let f = sll2(0x86DD, &IPV6);
    assert_eq!(
        l2_start(LinkType::LinuxSll2, &f),
        L2Start::Network { ethertype: ETHERTYPE_IPV6, data: &IPV6[..] }
    );
    assert_eq!(
        l2_start(LinkType::LinuxSll, &[0u8; 15]),
        L2Start::Unsupported(L2Error::Truncated {
            link_type: LinkType::LinuxSll,
            needed: 16,
            available: 15
        })
    );
    let L2Start::Unsupported(e) = l2_start(LinkType::LinuxSll2, &[0u8; 19]) else { panic!() };
    assert_eq!(
        e.to_string(),
        "frame of 19 bytes is shorter than its Linux cooked v2 (SLL2) header (20 bytes)"
    );
}

#[test]
fn raw_ip_takes_the_version_nibble() {
    for lt in [LinkType::Raw, LinkType::from_code(12), LinkType::from_code(14)] {
        assert_eq!(
            l2_start(lt, &IPV4),
            L2Start::Network { ethertype: ETHERTYPE_IPV4, data: &IPV4[..] },
            "{lt}"
        );
        assert_eq!(
            l2_start(lt, &IPV6),
            L2Start::Network { ethertype: ETHERTYPE_IPV6, data: &IPV6[..] },
            "{lt}"
        );
        assert_eq!(
            l2_start(lt, &[0x50]),
            L2Start::Unsupported(L2Error::IpVersion { link_type: lt, version: 5 })
        );
        assert!(matches!(l2_start(lt, &[]), L2Start::Unsupported(L2Error::Truncated { .. })));
    }
    assert_eq!(LinkType::from_code(12).code(), 12);
    assert_eq!(
        l2_start(LinkType::Ipv4, &IPV4),
        L2Start::Network { ethertype: ETHERTYPE_IPV4, data: &IPV4[..] }
    );
    assert_eq!(
        l2_start(LinkType::Ipv6, &IPV6),
        L2Start::Network { ethertype: ETHERTYPE_IPV6, data: &IPV6[..] }
    );
}

#[test]
fn null_and_loop_take_the_address_family_in_either_byte_order() {
    for lt in [LinkType::Null, LinkType::Loop] {
        for family in [2u32.to_le_bytes(), 2u32.to_be_bytes()] {
            let f = null(family, &IPV4);
            assert_eq!(
                l2_start(lt, &f),
                L2Start::Network { ethertype: ETHERTYPE_IPV4, data: &IPV4[..] }
            );
        }
        for af in [24u32, 28, 30] {
            for family in [af.to_le_bytes(), af.to_be_bytes()] {
                let f = null(family, &IPV6);
                assert_eq!(
                    l2_start(lt, &f),
                    L2Start::Network { ethertype: ETHERTYPE_IPV6, data: &IPV6[..] }
                );
            }
        }
        let f = null(7u32.to_le_bytes(), &IPV4);
        let L2Start::Unsupported(e) = l2_start(lt, &f) else { panic!() };
        assert_eq!(e, L2Error::AddressFamily { link_type: lt, family: 7 });
        assert!(e.to_string().contains("address family 7"), "{e}");
        assert!(matches!(
            l2_start(lt, &[2, 0, 0]),
            L2Start::Unsupported(L2Error::Truncated { needed: 4, .. })
        ));
    }
}

/// An ERF record: 16 bytes of header (timestamp, type, flags, rlen, lctr, wlen), `exts`
/// extension headers of 8 bytes, then `body`.
fn erf(record_type: u8, exts: usize, body: &[u8]) -> Vec<u8> {
    let rlen = (16 + 8 * exts + body.len()) as u16;
    let mut f = vec![0x11; 8];
    f.push(record_type | if exts > 0 { 0x80 } else { 0 });
    f.push(0x04);
    f.extend_from_slice(&rlen.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&(body.len() as u16).to_be_bytes());
    for i in 0..exts {
        // Each extension header's top bit says another follows.
        f.push(if i + 1 < exts { 0x81 } else { 0x01 });
        f.extend_from_slice(&[0x55; 7]);
    }
    f.extend_from_slice(body);
    f
}

#[test]
fn erf_records_by_type() {
    let lrh = [0x00, 0x02, 0, 2, 0, 5, 0, 1];
    for exts in [0, 1, 3] {
        let at = 16 + 8 * exts;
        let f = erf(21, exts, &lrh);
        assert_eq!(l2_start(LinkType::Erf, &f), L2Start::Infiniband(&f[at..]), "{exts} ext");
        let f = erf(25, exts, &lrh);
        assert_eq!(l2_start(LinkType::Erf, &f), L2Start::Infiniband(&f[at..]));
        let f = erf(22, exts, &IPV4);
        let want = L2Start::Network { ethertype: ETHERTYPE_IPV4, data: &IPV4[..] };
        assert_eq!(l2_start(LinkType::Erf, &f), want);
        let f = erf(23, exts, &IPV6);
        let want = L2Start::Network { ethertype: ETHERTYPE_IPV6, data: &IPV6[..] };
        assert_eq!(l2_start(LinkType::Erf, &f), want);
        // Ethernet records (and the colored ones): offset and pad bytes before the frame.
        let mut eth = vec![0, 0];
        eth.extend_from_slice(&[0x02; 12]);
        eth.extend_from_slice(&[0x08, 0x00]);
        for t in [2, 11, 16, 20] {
            let f = erf(t, exts, &eth);
            assert_eq!(l2_start(LinkType::Erf, &f), L2Start::Ethernet(&f[at + 2..]), "type {t}");
        }
    }
    // Bytes after the record's length are not the packet's; a record cut by the snap
    // length hands over what there is.
    let mut f = erf(21, 0, &lrh);
    f.extend_from_slice(&[0xee; 5]);
    assert_eq!(l2_start(LinkType::Erf, &f), L2Start::Infiniband(&f[16..24]));
    let f = erf(21, 0, &lrh);
    assert_eq!(l2_start(LinkType::Erf, &f[..20]), L2Start::Infiniband(&f[16..20]));
    // Native InfiniBand (247) is the packet from its LRH.
    assert_eq!(l2_start(LinkType::Infiniband, &lrh), L2Start::Infiniband(&lrh[..]));
    assert!(LinkType::Erf.is_supported() && LinkType::Infiniband.is_supported());
}

#[test]
fn erf_damage_is_named() {
    // Shorter than the record header, or than an extension header the type announces.
    for f in [&erf(21, 0, &[])[..15], &erf(21, 2, &[])[..20], &erf(21, 2, &[])[..31]] {
        let L2Start::Unsupported(e) = l2_start(LinkType::Erf, f) else { panic!("{f:?}") };
        assert!(matches!(e, L2Error::Truncated { link_type: LinkType::Erf, .. }), "{e:?}");
        assert!(e.to_string().contains("shorter than its ERF header"), "{e}");
    }
    // An extension chain that never ends stops at 16 headers.
    let mut f = erf(21, 40, &[]);
    for i in 0..40 {
        f[16 + 8 * i] = 0x81;
    }
    assert!(matches!(l2_start(LinkType::Erf, &f), L2Start::Unsupported(L2Error::Truncated { .. })));
    // Record types without a packet are refused by name.
    for (t, name) in [(48, "padding"), (27, "metadata"), (3, "ATM/AAL"), (99, "unknown")] {
        let L2Start::Unsupported(e) = l2_start(LinkType::Erf, &erf(t, 0, &[0; 8])) else {
            panic!()
        };
        assert_eq!(e, L2Error::ErfType { record_type: t });
        assert_eq!(
            e.to_string(),
            format!("ERF record of type {t} ({name}) holds no Ethernet, IP or InfiniBand packet")
        );
    }
    // An Ethernet record without room for its two bytes of offset and pad.
    assert!(matches!(
        l2_start(LinkType::Erf, &erf(2, 0, &[0])),
        L2Start::Unsupported(L2Error::Truncated { needed: 18, .. })
    ));
}

#[test]
fn unsupported_link_types_are_named() {
    let L2Start::Unsupported(e) = l2_start(LinkType::from_code(105), &[0u8; 40]) else { panic!() };
    assert_eq!(
        e.to_string(),
        "link type 105 (IEEE 802.11) is not supported: roce-inspect reads Ethernet, Linux cooked (SLL, SLL2), raw IP, null/loopback, InfiniBand and ERF captures"
    );
    assert_eq!(LinkType::from_code(4242), LinkType::Other(4242));
    assert!(!LinkType::Other(4242).is_supported() && LinkType::LinuxSll2.is_supported());
    for code in [0, 1, 12, 14, 101, 108, 113, 197, 228, 229, 247, 276, 4242] {
        assert_eq!(LinkType::from_code(code).code(), code);
    }
}

/// End to end: files of each link type, read and handed to `l2_start`.
#[test]
fn captures_of_each_link_type() {
    let cases: Vec<(u32, Vec<u8>, u16)> = vec![
        (113, sll(0x0800, &IPV4), ETHERTYPE_IPV4),
        (113, sll(0x8915, &[0x60; 40]), ETHERTYPE_ROCEV1),
        (276, sll2(0x86DD, &IPV6), ETHERTYPE_IPV6),
        (0, null(2u32.to_le_bytes(), &IPV4), ETHERTYPE_IPV4),
        (0, null(30u32.to_be_bytes(), &IPV6), ETHERTYPE_IPV6),
        (108, null(24u32.to_be_bytes(), &IPV6), ETHERTYPE_IPV6),
        (101, IPV4.to_vec(), ETHERTYPE_IPV4),
        (12, IPV6.to_vec(), ETHERTYPE_IPV6),
        (14, IPV4.to_vec(), ETHERTYPE_IPV4),
        (228, IPV4.to_vec(), ETHERTYPE_IPV4),
        (229, IPV6.to_vec(), ETHERTYPE_IPV6),
    ];
    for (code, frame, ethertype) in cases {
        let mut p = Pcap::new(false, false, 65535, code);
        p.record(1, 0, &frame);
        let mut ng = PcapNg::new(true);
        ng.interface(code as u16, 0, None, None);
        ng.epb(0, 1, &frame);
        for bytes in [p.bytes(), ng.bytes()] {
            let mut cap = Capture::from_bytes("link", bytes).unwrap();
            let f = cap.next_frame().unwrap().unwrap();
            assert_eq!(f.link_type.code(), code);
            match f.l2() {
                L2Start::Network { ethertype: e, data } => {
                    assert_eq!(e, ethertype, "link type {code}");
                    assert_eq!(
                        data.first().map(|b| b >> 4),
                        Some(if e == ETHERTYPE_IPV4 { 4 } else { 6 })
                    );
                }
                other => panic!("link type {code}: {other:?}"),
            }
            assert_eq!(cap.interfaces()[0].link_type.code(), code);
        }
    }
}

#[test]
fn fcs_bits_of_the_pcap_link_type_field_are_ignored() {
    // Bits 28-31 say an FCS of some length follows each frame (pcap spec).
    let mut p = Pcap::new(false, false, 65535, 0x1000_0000 | 1);
    p.record(1, 0, &[0u8; 64]);
    let mut cap = Capture::from_bytes("fcs.pcap", p.bytes()).unwrap();
    assert_eq!(cap.next_frame().unwrap().unwrap().link_type, LinkType::Ethernet);
}

/// An ERF record's own timestamp (32.32 fixed point, the fraction rounded to the nearest
/// nanosecond) is the frame's time, not the pcap record's (microseconds).
#[test]
fn erf_frames_take_the_records_timestamp() {
    let mut rec = erf(21, 0, &[0x00, 0x02, 0, 2, 0, 5, 0, 1]);
    // 1,700,000,000 s and 0x4000_0001 / 2^32 s = 0.250000000232... s: 250000000 ns.
    let ts: u64 = (1_700_000_000u64 << 32) | 0x4000_0001;
    rec[..8].copy_from_slice(&ts.to_le_bytes());
    let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    file.extend_from_slice(&65535u32.to_le_bytes());
    file.extend_from_slice(&197u32.to_le_bytes());
    // The pcap record says 1,700,000,000.25 s to the microsecond, 5 us off.
    file.extend_from_slice(&1_700_000_000u32.to_le_bytes());
    file.extend_from_slice(&250_005u32.to_le_bytes());
    file.extend_from_slice(&(rec.len() as u32).to_le_bytes());
    file.extend_from_slice(&(rec.len() as u32).to_le_bytes());
    file.extend_from_slice(&rec);
    // A second record whose fraction rounds up: 0xffff_ffff / 2^32 s is 999999999.77 ns.
    let mut rec2 = rec.clone();
    rec2[..8].copy_from_slice(&((1_700_000_000u64 << 32) | 0xffff_ffff).to_le_bytes());
    file.extend_from_slice(&1_700_000_001u32.to_le_bytes());
    file.extend_from_slice(&0u32.to_le_bytes());
    file.extend_from_slice(&(rec2.len() as u32).to_le_bytes());
    file.extend_from_slice(&(rec2.len() as u32).to_le_bytes());
    file.extend_from_slice(&rec2);
    let mut cap = Capture::from_bytes("erf.pcap", file).unwrap();
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!(f.ts_ns, 1_700_000_000_250_000_000);
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!(f.ts_ns, 1_700_000_001_000_000_000);
}
