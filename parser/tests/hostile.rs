#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Hostile lengths and header stacks: each one is named by a problem (and `stop` where
//! parsing ended), never shown as a well-formed outer protocol or a wrong ICRC verdict.
use roce_parser::*;

const ETH: usize = 14;
const IP4: usize = 20;
const UDP: usize = 8;

/// An IPv4 RC SEND_ONLY with `payload` bytes, its ICRC right.
fn ipv4_send(payload: &[u8]) -> Vec<u8> {
    let mut b = FrameBuilder::new(
        Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]),
        BthRepr { opcode: 0x04, pkey: 0xffff, dest_qp: 0x11, psn: 5, ..Default::default() },
    );
    b.payload = payload;
    let mut out = vec![0; b.buffer_len()];
    let n = b.emit(&mut out).unwrap();
    out.truncate(n);
    out
}

fn set_be16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Recomputes the IPv4 header checksum after a patch.
fn fix_ipv4_checksum(f: &mut [u8]) {
    let ihl = usize::from(f[ETH] & 0xf) * 4;
    set_be16(f, ETH + 10, 0);
    let mut sum = 0u32;
    for w in f[ETH..ETH + ihl].chunks(2) {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    set_be16(f, ETH + 10, !(sum as u16));
}

/// The frame cut to `udp_payload` bytes after the UDP header, with IP and UDP lengths saying so.
fn cut_udp_payload(mut f: Vec<u8>, udp_payload: usize) -> Vec<u8> {
    f.truncate(ETH + IP4 + UDP + udp_payload);
    set_be16(&mut f, ETH + 2, (IP4 + UDP + udp_payload) as u16);
    set_be16(&mut f, ETH + IP4 + 4, (UDP + udp_payload) as u16);
    fix_ipv4_checksum(&mut f);
    f
}

#[test]
fn the_well_formed_frame_has_no_problem() {
    let f = ipv4_send(&[1, 2, 3, 4]);
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    assert!(p.problems.is_empty(), "{}", p.problems);
    assert_eq!(p.roce.unwrap().icrc_status, IcrcStatus::Ok);
}

#[test]
fn a_packet_to_the_roce_port_too_short_for_a_bth_says_so() {
    for n in [0, 4, 11] {
        let f = cut_udp_payload(ipv4_send(&[]), n);
        let p = parse_ethernet(&f, &Config::default()).unwrap();
        assert!(p.roce.is_none());
        assert!(p.udp.is_some());
        assert_eq!(p.problems.iter().collect::<Vec<_>>(), [Problem::ShortForBth], "{n}");
        assert_eq!(p.stop.unwrap().layer, Layer::Bth);
    }
    // A UDP length below the UDP header itself.
    let mut f = ipv4_send(&[]);
    set_be16(&mut f, ETH + IP4 + 4, 6);
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    assert!(p.problems.contains(Problem::ShortForBth) && p.stop.is_some(), "{}", p.problems);
}

#[test]
fn a_bth_without_room_for_the_icrc_is_too_short_not_icrc_bad() {
    for n in [12, 13, 15] {
        let f = cut_udp_payload(ipv4_send(&[]), n);
        for verify in [true, false] {
            let p = parse_ethernet(&f, &Config { verify, ..Config::default() }).unwrap();
            let r = p.roce.unwrap();
            assert_eq!(r.icrc, None);
            let want = if verify { IcrcStatus::Unverifiable } else { IcrcStatus::NotChecked };
            assert_eq!(r.icrc_status, want);
            assert!(p.problems.contains(Problem::ShortForIcrc), "{}", p.problems);
            assert!(!p.problems.contains(Problem::IcrcBad), "{}", p.problems);
            assert!(!p.problems.contains(Problem::Truncated), "{}", p.problems);
        }
    }
    // 16 bytes: BTH and ICRC, and nothing is missing but the opcode's payload rule.
    let f = cut_udp_payload(ipv4_send(&[]), 16);
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    assert!(!p.problems.contains(Problem::ShortForIcrc), "{}", p.problems);
}

#[test]
fn a_udp_length_beyond_the_ip_payload_is_a_mismatch_not_a_truncation() {
    let mut f = ipv4_send(&[9; 8]);
    let udp_len = u16::from_be_bytes([f[ETH + IP4 + 4], f[ETH + IP4 + 5]]);
    // The ICRC covers the UDP length as written: a length change is an ICRC change too,
    // so look at the verdicts with verification off and on.
    set_be16(&mut f, ETH + IP4 + 4, udp_len + 40);
    let p = parse_ethernet(&f, &Config { verify: false, ..Config::default() }).unwrap();
    assert_eq!(p.problems.iter().collect::<Vec<_>>(), [Problem::UdpLengthMismatch]);
    let r = p.roce.unwrap();
    assert_eq!(r.payload_len, 8);
    assert!(r.icrc.is_some());
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    assert!(!p.problems.contains(Problem::Truncated), "{}", p.problems);
    // The ICRC is read where the IP payload ends, and checked there.
    let IcrcStatus::Bad { computed } = p.roce.unwrap().icrc_status else { panic!() };
    let n = f.len();
    f[n - 4..].copy_from_slice(&computed.to_le_bytes());
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    assert_eq!(p.problems.iter().collect::<Vec<_>>(), [Problem::UdpLengthMismatch]);
    assert_eq!(p.roce.unwrap().icrc_status, IcrcStatus::Ok);
    // A frame cut short is still truncated.
    let mut cut = f.clone();
    cut.truncate(f.len() - 6);
    let p = parse_ethernet(&cut, &Config::default()).unwrap();
    assert!(p.problems.contains(Problem::Truncated), "{}", p.problems);
}

#[test]
fn an_ipv4_header_length_below_5_says_so() {
    for ihl in 0..5u8 {
        let mut f = ipv4_send(&[]);
        f[ETH] = 0x40 | ihl;
        let p = parse_ethernet(&f, &Config::default()).unwrap();
        assert!(p.ip.is_none());
        assert_eq!(p.problems.iter().collect::<Vec<_>>(), [Problem::IpHeaderLength]);
        let stop = p.stop.unwrap();
        assert_eq!((stop.layer, stop.offset), (Layer::Ipv4, ETH));
        assert!(stop.to_string().contains("IHL"), "{stop}");
    }
}

#[test]
fn a_vlan_stack_deeper_than_the_parser_walks_says_so() {
    let inner = ipv4_send(&[]);
    for tags in [8usize, 9, 20] {
        let mut f = inner[..12].to_vec();
        for _ in 0..tags {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        }
        f.extend_from_slice(&inner[12..]);
        let p = parse_ethernet(&f, &Config::default()).unwrap();
        if tags <= 8 {
            assert!(p.problems.is_empty() && p.roce.is_some(), "{tags}: {}", p.problems);
        } else {
            assert!(p.ip.is_none());
            assert_eq!(p.problems.iter().collect::<Vec<_>>(), [Problem::TooManyVlanTags]);
            assert_eq!(p.stop.unwrap().layer, Layer::Vlan);
        }
    }
}

/// An IPv6 RoCE frame with `ext` inserted after the fixed header, the next header set to
/// `first`.
fn ipv6_with_ext(first: u8, ext: &[u8]) -> Vec<u8> {
    let mut b = FrameBuilder::new(
        Network::ipv6([1; 16], [2; 16]),
        BthRepr { opcode: 0x04, dest_qp: 3, ..Default::default() },
    );
    b.payload = &[0; 4];
    let mut f = vec![0; b.buffer_len()];
    let n = b.emit(&mut f).unwrap();
    f.truncate(n);
    let plen = u16::from_be_bytes([f[ETH + 4], f[ETH + 5]]);
    set_be16(&mut f, ETH + 4, plen + ext.len() as u16);
    f[ETH + 6] = first;
    f.splice(ETH + 40..ETH + 40, ext.iter().copied());
    f
}

#[test]
fn an_ipv6_extension_chain_the_parser_cannot_follow_says_so() {
    // A destination options header the walk follows: decoded to the BTH (the ICRC skips no
    // extension header: not judged here).
    let f = ipv6_with_ext(60, &[17, 0, 1, 4, 0, 0, 0, 0]);
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    assert!(p.roce.is_some() && !p.problems.contains(Problem::Ipv6ExtensionChain));
    // Mobility (135), HIP (139), Shim6 (140), experimental (253, 254): not walked.
    for first in [135, 139, 140, 253, 254] {
        let f = ipv6_with_ext(first, &[17, 0, 0, 0, 0, 0, 0, 0]);
        let p = parse_ethernet(&f, &Config::default()).unwrap();
        assert_eq!(p.ip.unwrap().protocol, first);
        assert!(p.udp.is_none() && p.roce.is_none());
        assert_eq!(p.problems.iter().collect::<Vec<_>>(), [Problem::Ipv6ExtensionChain]);
        assert_eq!(p.stop.unwrap().layer, Layer::Ipv6Extensions);
    }
    // A destination options header longer than the packet; a hop-by-hop header not first.
    for (first, ext) in [(60u8, [17u8, 200, 0, 0, 0, 0, 0, 0]), (60, [0, 0, 1, 4, 0, 0, 0, 0])] {
        let f = ipv6_with_ext(first, &ext);
        let p = parse_ethernet(&f, &Config::default()).unwrap();
        assert!(p.roce.is_none(), "{ext:?}");
        assert!(p.problems.contains(Problem::Ipv6ExtensionChain), "{}", p.problems);
        assert_eq!(p.stop.unwrap().layer, Layer::Ipv6Extensions);
    }
}
