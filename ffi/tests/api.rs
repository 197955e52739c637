//! The C interface called from Rust: constants against the parser's, strings, argument
//! checking (NULL, zero length, misalignment, impossible lengths) and the docs/wire.md vectors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::undocumented_unsafe_blocks
)]

use std::ffi::{c_int, CStr};
use std::mem::MaybeUninit;

use roce_parser::{opcode_name, Layer, Problem};
use roce_parser_ffi::*;

const V1: &str = "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3";
const V2: &str = "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a";
const V3: &str = "ffffffffffff02fc0000000186dd62012345001c1140fe800000000000000000000000000001fe800000000000000000000000000002c35012b7001c4bf11100ffff40000011000000051f0000076afb05a0";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn s(p: *const std::ffi::c_char) -> &'static str {
    assert!(!p.is_null());
    unsafe { CStr::from_ptr(p) }.to_str().unwrap()
}

const OK: c_int = roce_status::ROCE_OK as c_int;
const NULL: c_int = roce_status::ROCE_ERR_NULL as c_int;
const TRUNCATED: c_int = roce_status::ROCE_ERR_TRUNCATED as c_int;
const MALFORMED: c_int = roce_status::ROCE_ERR_MALFORMED as c_int;
const NOT_ROCE: c_int = roce_status::ROCE_ERR_NOT_ROCE as c_int;
const INVALID: c_int = roce_status::ROCE_ERR_INVALID_ARG as c_int;

fn frame(bytes: &[u8]) -> (c_int, roce_packet) {
    let mut out = MaybeUninit::<roce_packet>::uninit();
    let st = unsafe { roce_parse_frame(bytes.as_ptr(), bytes.len(), out.as_mut_ptr()) };
    (st, unsafe { out.assume_init() })
}

#[test]
fn zeroed_is_default() {
    // The boundary zeroes `out` with a memset: that must be `roce_packet::default()`.
    let mut out = MaybeUninit::<roce_packet>::uninit();
    unsafe { out.as_mut_ptr().write_bytes(0xa5, 1) };
    let st = unsafe { roce_parse_frame(std::ptr::null(), 0, out.as_mut_ptr()) };
    assert_eq!(st, NULL);
    assert_eq!(unsafe { out.assume_init() }, roce_packet::default());
}

#[test]
fn problem_constants_are_the_parser_bits() {
    let table = [
        (ROCE_PROBLEM_TVER_NONZERO, Problem::TverNonZero),
        (ROCE_PROBLEM_PADCNT_INCONSISTENT, Problem::PadCntInconsistent),
        (ROCE_PROBLEM_PAD_NONZERO, Problem::PadNonZero),
        (ROCE_PROBLEM_UNEXPECTED_PAYLOAD, Problem::UnexpectedPayload),
        (ROCE_PROBLEM_ATOMIC_WRITE_LENGTH, Problem::AtomicWriteLength),
        (ROCE_PROBLEM_UDP_LENGTH_MISMATCH, Problem::UdpLengthMismatch),
        (ROCE_PROBLEM_IP_LENGTH_MISMATCH, Problem::IpLengthMismatch),
        (ROCE_PROBLEM_TRUNCATED, Problem::Truncated),
        (ROCE_PROBLEM_RESERVED_BITS, Problem::ReservedBits),
        (ROCE_PROBLEM_RESERVED_OPCODE, Problem::ReservedOpcode),
        (ROCE_PROBLEM_VENDOR_OPCODE, Problem::VendorOpcode),
        (ROCE_PROBLEM_SHORT_FOR_OPCODE, Problem::ShortForOpcode),
        (ROCE_PROBLEM_CNP_LENGTH, Problem::CnpLength),
        (ROCE_PROBLEM_CNP_BECN_CLEAR, Problem::CnpBecnClear),
        (ROCE_PROBLEM_CNP_PSN_NONZERO, Problem::CnpPsnNonZero),
        (ROCE_PROBLEM_RD_LAYOUT_MISMATCH, Problem::RdLayoutMismatch),
        (ROCE_PROBLEM_QP1_QKEY, Problem::Qp1QKey),
        (ROCE_PROBLEM_IPV4_CHECKSUM, Problem::Ipv4Checksum),
        (ROCE_PROBLEM_IP_FRAGMENT, Problem::IpFragment),
        (ROCE_PROBLEM_MAD_TRUNCATED, Problem::MadTruncated),
        (ROCE_PROBLEM_MAD_UNKNOWN_VERSION, Problem::MadUnknownVersion),
        (ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE, Problem::MadUnknownAttribute),
        (ROCE_PROBLEM_ICRC_BAD, Problem::IcrcBad),
        (ROCE_PROBLEM_GRH_NEXT_HEADER, Problem::GrhNextHeader),
        (ROCE_PROBLEM_SHORT_FOR_BTH, Problem::ShortForBth),
        (ROCE_PROBLEM_SHORT_FOR_ICRC, Problem::ShortForIcrc),
        (ROCE_PROBLEM_IP_HEADER_LENGTH, Problem::IpHeaderLength),
        (ROCE_PROBLEM_TOO_MANY_VLAN_TAGS, Problem::TooManyVlanTags),
        (ROCE_PROBLEM_IPV6_EXTENSION_CHAIN, Problem::Ipv6ExtensionChain),
        (ROCE_PROBLEM_TUNNEL_MALFORMED, Problem::TunnelMalformed),
        (ROCE_PROBLEM_VCRC_BAD, Problem::VcrcBad),
    ];
    assert_eq!(
        table.len(),
        Problem::ALL.len(),
        "a Problem was added: give it a ROCE_PROBLEM_* constant"
    );
    let mut all = 0;
    for (bit, p) in table {
        assert_eq!(bit, p as u32, "{p:?}");
        assert_eq!(s(roce_problem_str(bit)), p.message());
        assert_eq!(s(roce_problem_code(bit)), p.code());
        all |= bit;
    }
    assert_eq!(all, ROCE_PROBLEM_ALL);
    assert_eq!(s(roce_problem_str(0)), "unknown problem");
    assert_eq!(s(roce_problem_str(3)), "unknown problem");
    assert_eq!(s(roce_problem_str(1 << 31)), "unknown problem");
    assert_eq!(s(roce_problem_code(0)), "unknown");
    assert_eq!(s(roce_problem_code(3)), "unknown");
}

#[test]
fn opcode_names_come_from_the_table() {
    for op in 0..=u8::MAX {
        assert_eq!(s(roce_opcode_name(op)), opcode_name(op), "{op:#04x}");
    }
    assert_eq!(s(roce_opcode_name(0x04)), "RC_SEND_ONLY");
    assert_eq!(s(roce_opcode_name(0x81)), "CNP");
    assert_eq!(s(roce_opcode_name(0x15)), "RC_RESERVED");
    assert_eq!(s(roce_opcode_name(0xC0)), "VENDOR_SPECIFIC");
}

#[test]
fn layer_names_and_status_strings() {
    let layers = [
        (ROCE_LAYER_ETHERNET, Layer::Ethernet),
        (ROCE_LAYER_VLAN, Layer::Vlan),
        (ROCE_LAYER_IPV4, Layer::Ipv4),
        (ROCE_LAYER_IPV6, Layer::Ipv6),
        (ROCE_LAYER_IPV6_EXTENSIONS, Layer::Ipv6Extensions),
        (ROCE_LAYER_UDP, Layer::Udp),
        (ROCE_LAYER_GRH, Layer::Grh),
        (ROCE_LAYER_BTH, Layer::Bth),
        (ROCE_LAYER_RDETH, Layer::Rdeth),
        (ROCE_LAYER_DETH, Layer::Deth),
        (ROCE_LAYER_XRCETH, Layer::Xrceth),
        (ROCE_LAYER_RETH, Layer::Reth),
        (ROCE_LAYER_ATOMIC_ETH, Layer::AtomicEth),
        (ROCE_LAYER_AETH, Layer::Aeth),
        (ROCE_LAYER_ATOMIC_ACK_ETH, Layer::AtomicAckEth),
        (ROCE_LAYER_IMMDT, Layer::ImmDt),
        (ROCE_LAYER_IETH, Layer::Ieth),
        (ROCE_LAYER_FETH, Layer::Feth),
        (ROCE_LAYER_GRE, Layer::Gre),
        (ROCE_LAYER_ERSPAN, Layer::Erspan),
        (ROCE_LAYER_VXLAN, Layer::Vxlan),
        (ROCE_LAYER_GENEVE, Layer::Geneve),
    ];
    for (code, layer) in layers {
        assert_eq!(s(roce_layer_name(code)), layer.name());
    }
    assert_eq!(s(roce_layer_name(ROCE_LAYER_NONE)), "none");
    assert_eq!(s(roce_layer_name(200)), "unknown layer");

    let codes = [OK, NULL, TRUNCATED, MALFORMED, NOT_ROCE, INVALID];
    assert_eq!(codes, [0, -1, -2, -3, -4, -5]);
    let strs: Vec<&str> = codes.iter().map(|&c| s(roce_status_str(c))).collect();
    for (i, a) in strs.iter().enumerate() {
        assert_ne!(*a, "unknown status");
        assert!(strs[i + 1..].iter().all(|b| a != b), "duplicate {a}");
    }
    assert_eq!(s(roce_status_str(1)), "unknown status");
    assert_eq!(s(roce_status_str(c_int::MIN)), "unknown status");
}

#[test]
fn versions() {
    assert_eq!(s(roce_parser_version()), env!("CARGO_PKG_VERSION"));
    assert_eq!(roce_parser_abi_version(), ROCE_PARSER_ABI_VERSION);
    assert_eq!(roce_packet_size(), std::mem::size_of::<roce_packet>());
    assert_eq!(ROCE_V2_UDP_PORT, roce_parser::ROCEV2_UDP_PORT);
}

#[test]
fn null_pointers_zero_lengths_and_bad_arguments() {
    let f = hex(V1);
    let mut out = roce_packet { roce_version: 7, ..Default::default() };
    unsafe {
        // NULL output: nothing written, nothing read.
        assert_eq!(roce_parse_frame(f.as_ptr(), f.len(), std::ptr::null_mut()), NULL);
        assert_eq!(roce_parse_udp_payload(f.as_ptr(), f.len(), std::ptr::null_mut()), NULL);
        // NULL input, with and without a length: `out` zeroed.
        for len in [0, 1, 64] {
            assert_eq!(roce_parse_frame(std::ptr::null(), len, &mut out), NULL);
            assert_eq!(out, roce_packet::default());
            out.roce_version = 7;
            assert_eq!(roce_parse_ip(std::ptr::null(), len, &mut out), NULL);
            assert_eq!(out, roce_packet::default());
            assert_eq!(roce_parse_udp_payload(std::ptr::null(), len, &mut out), NULL);
            assert_eq!(
                roce_parse_ethertype(0x0800, std::ptr::null(), len, std::ptr::null(), &mut out),
                NULL
            );
        }
        // Zero length with a valid pointer: truncated, at the first layer.
        assert_eq!(roce_parse_frame(f.as_ptr(), 0, &mut out), TRUNCATED);
        assert_eq!(out.stop, TRUNCATED);
        assert_eq!(out.stop_layer, ROCE_LAYER_ETHERNET);
        assert_eq!((out.stop_needed, out.stop_available), (14, 0));
        assert_eq!(roce_parse_ip(f.as_ptr(), 0, &mut out), TRUNCATED);
        assert_eq!(roce_parse_udp_payload(f.as_ptr(), 0, &mut out), TRUNCATED);
        assert_eq!(out.stop_layer, ROCE_LAYER_BTH);
        assert_eq!(
            roce_parse_ethertype(0x0800, f.as_ptr(), 0, std::ptr::null(), &mut out),
            TRUNCATED
        );
        assert_eq!(
            roce_parse_ethertype(0x0806, f.as_ptr(), 0, std::ptr::null(), &mut out),
            NOT_ROCE
        );
        // A length no object can have.
        assert_eq!(roce_parse_frame(f.as_ptr(), usize::MAX, &mut out), INVALID);
        assert_eq!(out, roce_packet::default());
        // A misaligned output or options struct.
        let mut buf = vec![MaybeUninit::<roce_packet>::uninit(); 2];
        let odd = buf.as_mut_ptr().cast::<u8>().wrapping_add(1).cast::<roce_packet>();
        assert_eq!(roce_parse_frame(f.as_ptr(), f.len(), odd), INVALID);
        let opts = [0u16; 4];
        let odd_opts = opts.as_ptr().cast::<u8>().wrapping_add(1).cast::<roce_options>();
        assert_eq!(roce_parse_frame_opts(f.as_ptr(), f.len(), odd_opts, &mut out), INVALID);
        // NULL options are the defaults.
        assert_eq!(roce_parse_frame_opts(f.as_ptr(), f.len(), std::ptr::null(), &mut out), OK);
        assert_eq!(out.icrc_status, ROCE_ICRC_OK);
    }
}

#[test]
fn every_truncation_of_every_vector() {
    for v in [V1, V2, V3] {
        let f = hex(v);
        for n in 0..=f.len() {
            let (st, p) = frame(&f[..n]);
            assert!([OK, TRUNCATED].contains(&st), "{n}: {st}");
            assert!(p.payload_offset + p.payload_captured + p.pad_captured <= n);
            assert!(p.opaque_offset + p.opaque_len <= n);
            if p.payload_captured > 0 {
                assert_eq!(p.payload_offset, p.bth_offset + p.header_len);
            }
            if st == OK && n < f.len() {
                assert_ne!(p.icrc_status, ROCE_ICRC_OK);
            }
        }
    }
}

#[test]
fn v1_ipv4_uc_send_only() {
    let f = hex(V1);
    let (st, p) = frame(&f);
    assert_eq!(st, OK);
    assert_eq!(p.roce_version, 2);
    assert!(p.opcode_known && p.eth.present && p.ip.present && p.udp.present);
    assert_eq!(s(roce_opcode_name(p.bth.opcode)), "UC_SEND_ONLY");
    assert_eq!((p.bth.padcnt, p.bth.dest_qp), (2, 0xd3));
    assert_eq!((p.icrc, p.icrc_status), (0xF353_F378, ROCE_ICRC_OK));
    assert_eq!((p.payload_len, p.payload_captured, p.pad_captured), (18, 18, 2));
    assert_eq!(p.payload_offset, 14 + 20 + 8 + 12);
    assert_eq!(p.ip.version, 4);
    assert_eq!(&p.ip.src[..12], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
    assert_eq!(&p.ip.src[12..], &[192, 168, 0, 7]);
    assert_eq!(p.udp.dport, 4791);
    assert_eq!(p.problems, 0);
    assert_eq!(p.stop, 0);

    // The same packet from the IP header and from the UDP payload.
    let mut out = roce_packet::default();
    assert_eq!(unsafe { roce_parse_ip(f[14..].as_ptr(), f.len() - 14, &mut out) }, OK);
    assert_eq!((out.bth, out.icrc_status), (p.bth, ROCE_ICRC_OK));
    assert_eq!(out.payload_offset, p.payload_offset - 14);
    assert!(!out.eth.present);
    let bth = 14 + 20 + 8;
    assert_eq!(unsafe { roce_parse_udp_payload(f[bth..].as_ptr(), f.len() - bth, &mut out) }, OK);
    assert_eq!((out.bth, out.icrc_status), (p.bth, ROCE_ICRC_NOT_CHECKED));
    assert_eq!((out.payload_len, out.icrc), (18, 0xF353_F378));

    // Another port: not RoCE, lower layers still there. No verification: not checked.
    let port = roce_options { udp_port: 4792, skip_icrc: 0 };
    assert_eq!(unsafe { roce_parse_frame_opts(f.as_ptr(), f.len(), &port, &mut out) }, NOT_ROCE);
    assert!(out.udp.present && out.roce_version == 0);
    let skip = roce_options { udp_port: 0, skip_icrc: 1 };
    assert_eq!(unsafe { roce_parse_frame_opts(f.as_ptr(), f.len(), &skip, &mut out) }, OK);
    assert_eq!(out.icrc_status, ROCE_ICRC_NOT_CHECKED);
}

#[test]
fn v2_cnp_and_v3_ipv6_ack() {
    let (st, p) = frame(&hex(V2));
    assert_eq!(st, OK);
    assert_eq!(s(roce_opcode_name(p.bth.opcode)), "CNP");
    assert!(p.bth.becn);
    assert_eq!((p.bth.dest_qp, p.payload_len, p.ip.ecn), (0x118, 16, 2));
    assert_eq!(p.icrc_status, ROCE_ICRC_OK);

    let (st, p) = frame(&hex(V3));
    assert_eq!(st, OK);
    assert_eq!(s(roce_opcode_name(p.bth.opcode)), "RC_ACKNOWLEDGE");
    assert!(p.aeth.present && !p.reth.present);
    assert_eq!((p.aeth.syndrome, p.aeth.kind, p.aeth.value), (0x1f, ROCE_AETH_ACK, 0x1f));
    assert_eq!(p.aeth.msn, 7);
    assert_eq!((p.ip.version, p.ip.flow_label), (6, 0x12345));
    assert_eq!(p.ip.src[0], 0xfe);
    assert_eq!(p.icrc_status, ROCE_ICRC_OK);
}

/// The MADX vector of the C test (ffi/tests/check.c, examples/common/mod.rs), as the frame
/// builder writes it: a UD SEND_ONLY to QP1 whose 32-byte CM MAD has attribute ID 0x0099.
const MADX: &str = "0200000000020200000000010800456a0054000040004011262d0a0000010a000002c00012b7004000006400ffff00000001000000078001000000000001010702030000000001020304050607080099000000000000abababababababab472bc881";

fn bad_mad_frame() -> Vec<u8> {
    use roce_parser::GSI_QKEY;
    use roce_parser::{BthRepr, DethRepr};
    use roce_parser::{FrameBuilder, Network};
    let mut mad = [0u8; 32];
    mad[..4].copy_from_slice(&[1, 0x07, 2, 0x03]); // base 1, class CM, class version 2, Send
    mad[8..16].copy_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes());
    mad[16..18].copy_from_slice(&0x0099u16.to_be_bytes());
    mad[24..].copy_from_slice(&[0xab; 8]);
    let bth = BthRepr { opcode: 0x64, pkey: 0xffff, dest_qp: 1, psn: 7, ..Default::default() };
    let mut b = FrameBuilder::new(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), bth);
    b.headers.deth = Some(DethRepr { qkey: GSI_QKEY, reserved: 0, src_qp: 1 });
    b.payload = &mad;
    let mut out = vec![0u8; b.buffer_len()];
    b.emit(&mut out).unwrap();
    out
}

#[test]
fn mad_problems_reach_the_c_interface() {
    let f = bad_mad_frame();
    assert_eq!(f, hex(MADX), "the C test's MADX vector is not what the builder writes");
    let (st, p) = frame(&f);
    assert_eq!(st, OK);
    assert_eq!((p.bth.opcode, p.bth.dest_qp, p.icrc_status), (0x64, 1, ROCE_ICRC_OK));
    assert_eq!(p.problems, ROCE_PROBLEM_MAD_TRUNCATED | ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE);
    let bth = 14 + 20 + 8;
    let mut out = roce_packet::default();
    assert_eq!(unsafe { roce_parse_udp_payload(f[bth..].as_ptr(), f.len() - bth, &mut out) }, OK);
    assert_eq!(out.problems, p.problems);
}

#[test]
fn bad_icrc_gives_the_computed_one() {
    let mut f = hex(V1);
    let n = f.len();
    f[n - 1] ^= 0xff;
    let (st, p) = frame(&f);
    assert_eq!(st, OK);
    assert_eq!(p.icrc_status, ROCE_ICRC_BAD);
    assert_eq!(p.icrc_computed, 0xF353_F378);
    assert_ne!(p.problems & ROCE_PROBLEM_ICRC_BAD, 0);
}

#[test]
fn non_roce_and_malformed_frames() {
    // ARP: Ethernet only.
    let mut arp = vec![0xffu8; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    let (st, p) = frame(&arp);
    assert_eq!(st, NOT_ROCE);
    assert!(p.eth.present && !p.ip.present);
    assert_eq!(p.eth.ethertype, 0x0806);
    // A bad IP version under an IPv4 EtherType: malformed, at the IPv4 layer.
    let mut f = hex(V1);
    f[14] = 0x55;
    let (st, p) = frame(&f);
    assert_eq!(st, MALFORMED);
    assert_eq!((p.stop, p.stop_layer, p.stop_offset), (MALFORMED, ROCE_LAYER_IPV4, 14));
    let mut out = roce_packet::default();
    assert_eq!(unsafe { roce_parse_ip(f[14..].as_ptr(), 40, &mut out) }, MALFORMED);
}

#[test]
fn reuse_of_out_leaves_nothing_stale() {
    let (_, a) = frame(&hex(V3));
    let mut out = a;
    let v2 = hex(V2);
    unsafe { roce_parse_frame(v2.as_ptr(), v2.len(), &mut out) };
    assert_eq!(out, frame(&v2).1);
    assert!(!out.aeth.present);
}

#[test]
fn many_threads_at_once() {
    let frames: Vec<Vec<u8>> = [V1, V2, V3].iter().map(|v| hex(v)).collect();
    let expected: Vec<(c_int, roce_packet)> = frames.iter().map(|f| frame(f)).collect();
    std::thread::scope(|sc| {
        for t in 0..8 {
            let (frames, expected) = (&frames, &expected);
            sc.spawn(move || {
                for i in 0..3000 {
                    let k = (i + t) % frames.len();
                    assert_eq!(frame(&frames[k]), expected[k]);
                }
            });
        }
    });
}

fn segments(frame: &[u8], cuts: &[usize]) -> (c_int, roce_packet) {
    let mut segs = Vec::new();
    let mut at = 0;
    for &c in cuts.iter().chain([frame.len()].iter()) {
        segs.push(roce_segment { data: frame[at..c].as_ptr(), len: c - at });
        at = c;
    }
    let mut out = MaybeUninit::<roce_packet>::uninit();
    let st = unsafe {
        roce_parse_frame_segments(segs.as_ptr(), segs.len(), std::ptr::null(), out.as_mut_ptr())
    };
    (st, unsafe { out.assume_init() })
}

#[test]
fn segments_give_the_contiguous_result() {
    for v in [V1, V2, V3] {
        let f = hex(v);
        let want = frame(&f);
        for a in 0..=f.len() {
            assert_eq!(segments(&f, &[a]), want, "cut at {a}");
        }
        // More segments than the stack table holds (16): one byte each.
        let cuts: Vec<usize> = (1..f.len()).collect();
        assert_eq!(segments(&f, &cuts), want);
        let cuts: Vec<usize> = (0..f.len()).step_by(5).collect();
        assert_eq!(segments(&f, &cuts), want);
    }
}

#[test]
fn segments_bad_arguments() {
    let f = hex(V1);
    let mut out = MaybeUninit::<roce_packet>::uninit();
    let o = out.as_mut_ptr();
    unsafe {
        assert_eq!(roce_parse_frame_segments(std::ptr::null(), 1, std::ptr::null(), o), NULL);
        let seg = [roce_segment { data: f.as_ptr(), len: f.len() }];
        assert_eq!(
            roce_parse_frame_segments(seg.as_ptr(), 1, std::ptr::null(), std::ptr::null_mut()),
            NULL
        );
        // A NULL segment of length 0 is an empty segment; of length > 0, an error.
        let seg = [
            roce_segment { data: std::ptr::null(), len: 0 },
            roce_segment { data: f.as_ptr(), len: f.len() },
        ];
        assert_eq!(roce_parse_frame_segments(seg.as_ptr(), 2, std::ptr::null(), o), OK);
        let seg = [roce_segment { data: std::ptr::null(), len: 3 }];
        assert_eq!(roce_parse_frame_segments(seg.as_ptr(), 1, std::ptr::null(), o), NULL);
        assert_eq!(out.assume_init(), roce_packet::default());
        // No segment: an empty frame.
        assert_eq!(roce_parse_frame_segments(seg.as_ptr(), 0, std::ptr::null(), o), TRUNCATED);
        // Lengths adding up past PTRDIFF_MAX.
        let seg = [
            roce_segment { data: f.as_ptr(), len: isize::MAX as usize },
            roce_segment { data: f.as_ptr(), len: 2 },
        ];
        assert_eq!(roce_parse_frame_segments(seg.as_ptr(), 2, std::ptr::null(), o), INVALID);
        // A misaligned segment table.
        let raw = [0u8; 64];
        let mis = raw.as_ptr().add(1) as *const roce_segment;
        assert_eq!(roce_parse_frame_segments(mis, 1, std::ptr::null(), o), INVALID);
        // A count whose table size would not fit isize.
        let seg = [roce_segment { data: f.as_ptr(), len: 1 }];
        assert_eq!(
            roce_parse_frame_segments(seg.as_ptr(), usize::MAX, std::ptr::null(), o),
            INVALID
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Tunnels (roce_packet.tunnels)
// ---------------------------------------------------------------------------------------------

/// The TUN vector of the C test (ffi/tests/check.c): V1 in VXLAN (VNI 0xabcdef, outer IPv4
/// 172.16.0.1 -> 172.16.0.2) mirrored by ERSPAN II (session 7, index 9, GRE sequence 77, outer
/// IPv4 192.0.2.1 -> 192.0.2.9), as `TunnelBuilder` writes it.
const TUN: &str = concat!(
    "0200000000120200000000110800456a00a400004000402fb5b6c0000201c0000209100088be0000004d100ca00700000009",
    "0200000000120200000000110800456a0072000040004011e1edac100001ac100002c00012b5005e000008000000abcdef00",
    "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3",
);

fn wrap(t: roce_parser::Tunnel<'_>, outer: roce_parser::Network, inner: &[u8]) -> Vec<u8> {
    let b = roce_parser::TunnelBuilder::new(outer, t);
    let mut out = vec![0u8; b.buffer_len(inner.len())];
    b.emit(inner, &mut out).unwrap();
    out
}

fn erspan2() -> roce_parser::Tunnel<'static> {
    use roce_parser::{ErspanIIRepr, GreRepr, Tunnel};
    let e = ErspanIIRepr {
        version: 1,
        vlan: 12,
        cos: 5,
        session_id: 7,
        index: 9,
        ..Default::default()
    };
    Tunnel::ErspanII(GreRepr { seq: Some(77), ..Default::default() }, e)
}

fn vxlan() -> roce_parser::Tunnel<'static> {
    use roce_parser::{Tunnel, VxlanRepr};
    Tunnel::Vxlan(VxlanRepr { flags: VxlanRepr::FLAG_I, vni: 0x00ab_cdef })
}

const GENEVE_OPTIONS: [u8; 8] = [0x01, 0x02, 0x80, 0x01, 0xaa, 0xbb, 0xcc, 0xdd];

fn geneve() -> roce_parser::Tunnel<'static> {
    use roce_parser::{GeneveRepr, Tunnel, GRE_PROTOCOL_TEB};
    Tunnel::Geneve(GeneveRepr {
        protocol: GRE_PROTOCOL_TEB,
        vni: 0x42,
        critical: true,
        options: &GENEVE_OPTIONS,
        ..Default::default()
    })
}

fn tun_frame() -> Vec<u8> {
    use roce_parser::Network;
    let inner = hex(V1);
    let vx = wrap(vxlan(), Network::ipv4([172, 16, 0, 1], [172, 16, 0, 2]), &inner);
    wrap(erspan2(), Network::ipv4([192, 0, 2, 1], [192, 0, 2, 9]), &vx)
}

/// The inner fields of a wrapped frame's struct equal the plain frame's, offsets moved by
/// `shift`; the status is the plain one's.
fn assert_inner_is_plain(w: &(c_int, roce_packet), plain: &(c_int, roce_packet), shift: usize) {
    let (ws, w) = w;
    let (ps, p) = plain;
    assert_eq!(ws, ps);
    assert_eq!(
        (w.bth, w.icrc_status, w.icrc, w.problems),
        (p.bth, p.icrc_status, p.icrc, p.problems)
    );
    assert_eq!(
        (w.roce_version, w.opcode_known, w.deth, w.reth, w.aeth),
        (p.roce_version, p.opcode_known, p.deth, p.reth, p.aeth)
    );
    assert_eq!(
        (w.eth.src, w.eth.dst, w.eth.ethertype, w.eth.vlans),
        (p.eth.src, p.eth.dst, p.eth.ethertype, p.eth.vlans)
    );
    assert_eq!(
        (w.ip.src, w.ip.dst, w.ip.version, w.ip.total_len),
        (p.ip.src, p.ip.dst, p.ip.version, p.ip.total_len)
    );
    assert_eq!(w.ip.offset, p.ip.offset + shift);
    assert_eq!((w.udp.dport, w.udp.offset), (p.udp.dport, p.udp.offset + shift));
    assert_eq!(w.bth_offset, p.bth_offset + shift);
    assert_eq!(w.payload_offset, p.payload_offset + shift);
    assert_eq!(
        (w.payload_len, w.payload_captured, w.pad_captured),
        (p.payload_len, p.payload_captured, p.pad_captured)
    );
    assert_eq!(p.tunnel_count, 0);
}

#[test]
fn encap_constants_follow_the_parser_table() {
    assert_eq!(roce_parser::ENCAPSULATIONS.len(), 6, "a kind was added: give it a ROCE_ENCAP_*");
    let codes = [
        ROCE_ENCAP_GRE,
        ROCE_ENCAP_ERSPAN1,
        ROCE_ENCAP_ERSPAN2,
        ROCE_ENCAP_ERSPAN3,
        ROCE_ENCAP_VXLAN,
        ROCE_ENCAP_GENEVE,
    ];
    for (i, (e, code)) in roce_parser::ENCAPSULATIONS.iter().zip(codes).enumerate() {
        assert_eq!(usize::from(code), i + 1, "{:?}: the table's order", e.kind);
        assert_eq!(s(roce_encap_name(code)), e.kind.code());
    }
    assert_eq!(ROCE_ENCAP_NONE, 0);
    assert_eq!(s(roce_encap_name(ROCE_ENCAP_NONE)), "none");
    assert_eq!(s(roce_encap_name(7)), "unknown encapsulation");
    assert_eq!(s(roce_encap_name(255)), "unknown encapsulation");
    assert_eq!(ROCE_PARSER_MAX_TUNNELS, roce_parser::MAX_ENCAP);
    assert_eq!(ROCE_PARSER_ABI_VERSION, 3);
}

#[test]
fn erspan_vxlan_and_geneve_wrapped_frames_through_c() {
    use roce_parser::{BthRepr, FrameBuilder, Network, VlanTag};
    // Inner frames: V1 (UC SEND_ONLY over IPv4) and an RC SEND_ONLY over IPv6 with a tag.
    let bth = BthRepr {
        opcode: 0x04,
        pkey: 0xffff,
        dest_qp: 0x1234,
        psn: 0xabcdef,
        ..Default::default()
    };
    let payload: Vec<u8> = (0..37u8).collect();
    let mut b = FrameBuilder::new(Network::ipv6([0xfe; 16], [0x20; 16]), bth);
    b.payload = &payload;
    b.vlans[0] = Some(VlanTag { tpid: 0x8100, pcp: 3, dei: false, vid: 100 });
    let mut rc6 = vec![0u8; b.buffer_len()];
    b.emit(&mut rc6).unwrap();
    let inners = [hex(V1), rc6];

    let outer4 = Network::ipv4([192, 0, 2, 1], [192, 0, 2, 9]);
    let outer6 = Network::ipv6([0x30; 16], [0x31; 16]);
    for inner in &inners {
        let plain = frame(inner);
        assert_eq!((plain.0, plain.1.icrc_status), (OK, ROCE_ICRC_OK));
        for (t, outer) in [(erspan2(), outer4), (vxlan(), outer6), (geneve(), outer4)] {
            let f = wrap(t, outer, inner);
            let at = f.len() - inner.len();
            let got = frame(&f);
            let (st, p) = &got;
            assert_eq!(*st, OK, "{:?}", t.kind());
            assert_eq!(p.tunnel_count, 1);
            assert_eq!(p.tunnels[1], roce_tunnel::default(), "an unused slot is zero");
            let tn = &p.tunnels[0];
            assert_eq!(tn.inner_offset, at);
            assert!(tn.eth.present && tn.ip.present);
            assert_eq!(tn.ip.version, if matches!(outer, Network::Ipv4(_)) { 4 } else { 6 });
            assert_eq!(tn.eth.src, [0x02, 0, 0, 0, 0, 0x11]);
            match t.kind() {
                roce_parser::EncapKind::ErspanII => {
                    assert_eq!(tn.kind, ROCE_ENCAP_ERSPAN2);
                    assert_eq!(s(roce_encap_name(tn.kind)), "erspan2");
                    assert_eq!(tn.offset, 14 + 20);
                    assert!(tn.gre.present && tn.gre.seq_present && !tn.gre.key_present);
                    assert_eq!((tn.gre.protocol, tn.gre.seq), (0x88be, 77));
                    let e = &tn.erspan;
                    assert!(e.present && !e.truncated);
                    assert_eq!((e.version, e.session_id, e.index, e.vlan, e.cos), (1, 7, 9, 12, 5));
                    assert!(!tn.udp.present && !tn.vxlan.present && !tn.geneve.present);
                    assert_eq!(tn.ip.protocol, 47);
                }
                roce_parser::EncapKind::Vxlan => {
                    assert_eq!(tn.kind, ROCE_ENCAP_VXLAN);
                    assert_eq!(tn.offset, 14 + 40 + 8);
                    assert!(tn.vxlan.present && tn.udp.present && !tn.gre.present);
                    assert_eq!((tn.vxlan.vni, tn.vxlan.flags), (0xabcdef, 0x08));
                    assert_eq!((tn.udp.dport, tn.udp.offset), (4789, 14 + 40));
                    assert_eq!(tn.ip.src, [0x30; 16]);
                }
                roce_parser::EncapKind::Geneve => {
                    assert_eq!(tn.kind, ROCE_ENCAP_GENEVE);
                    let g = &tn.geneve;
                    assert!(g.present && g.critical && !g.oam && tn.udp.present);
                    assert_eq!((g.vni, g.protocol, g.version), (0x42, 0x6558, 0));
                    assert_eq!(tn.offset, 14 + 20 + 8);
                    assert_eq!((g.options_offset, g.options_len), (tn.offset + 8, 8));
                    assert_eq!(
                        &f[g.options_offset..g.options_offset + g.options_len],
                        &GENEVE_OPTIONS
                    );
                    assert_eq!(g.options_offset + g.options_len, at);
                    assert_eq!(tn.udp.dport, 6081);
                }
                k => panic!("{k:?}"),
            }
            assert_inner_is_plain(&got, &plain, at);

            // The same through the IP entry point: no outer Ethernet, offsets from the IP.
            let mut out = roce_packet::default();
            assert_eq!(unsafe { roce_parse_ip(f[14..].as_ptr(), f.len() - 14, &mut out) }, OK);
            assert_eq!((out.tunnel_count, out.tunnels[0].kind), (1, tn.kind));
            assert!(!out.tunnels[0].eth.present && out.tunnels[0].ip.present);
            assert_eq!(out.tunnels[0].inner_offset, at - 14);
            assert_eq!(out.bth, p.bth);
            // Segments give the contiguous struct, cut anywhere.
            for cut in (0..=f.len()).step_by(3) {
                assert_eq!(segments(&f, &[cut]), got, "{:?} cut at {cut}", t.kind());
            }
            // A cut wrapped frame: never a bad ICRC, offsets inside the input.
            for n in 0..f.len() {
                let (st, q) = frame(&f[..n]);
                assert!([OK, TRUNCATED].contains(&st), "{n}: {st}");
                assert_ne!(q.icrc_status, ROCE_ICRC_BAD, "{:?} cut at {n}", t.kind());
                assert_ne!(q.icrc_status, ROCE_ICRC_OK, "{:?} cut at {n}", t.kind());
                assert!(q.payload_offset + q.payload_captured + q.pad_captured <= n);
                for tq in &q.tunnels[..usize::from(q.tunnel_count)] {
                    assert!(
                        tq.inner_offset <= n
                            && tq.geneve.options_offset + tq.geneve.options_len <= n
                    );
                }
            }
        }
    }
}

#[test]
fn a_mirror_of_an_overlay_has_two_tunnels_outermost_first() {
    let f = tun_frame();
    let h: String = f.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(h, TUN, "the C test's TUN vector is not what the builder writes");
    let got = frame(&f);
    let (st, p) = &got;
    assert_eq!(*st, OK);
    assert_eq!(p.tunnel_count, 2);
    let [outer, inner] = &p.tunnels;
    assert_eq!((outer.kind, inner.kind), (ROCE_ENCAP_ERSPAN2, ROCE_ENCAP_VXLAN));
    assert_eq!(outer.erspan.session_id, 7);
    assert_eq!(inner.vxlan.vni, 0xabcdef);
    assert_eq!(&outer.ip.src[12..], &[192, 0, 2, 1]);
    assert_eq!(&inner.ip.src[12..], &[172, 16, 0, 1]);
    assert_eq!((outer.offset, outer.inner_offset), (34, 50));
    assert_eq!((inner.offset, inner.inner_offset), (50 + 42, 100));
    assert_eq!(inner.udp.offset, 50 + 34);
    assert_eq!(&p.ip.src[12..], &[192, 168, 0, 7]);
    assert_inner_is_plain(&got, &frame(&hex(V1)), 100);
    assert_eq!(p.bth.psn, 0xcf1710);

    // Reused for a plain frame: no tunnel left behind.
    let mut out = *p;
    let v2 = hex(V2);
    unsafe { roce_parse_frame(v2.as_ptr(), v2.len(), &mut out) };
    assert_eq!(out, frame(&v2).1);
    assert_eq!(out.tunnel_count, 0);

    // A third tunnel is not decoded: malformed at its layer, the two outer ones kept.
    use roce_parser::{GreRepr, Network, Tunnel, GRE_PROTOCOL_TEB};
    let gre =
        Tunnel::Gre(GreRepr { protocol: GRE_PROTOCOL_TEB, key: Some(0x42), ..Default::default() });
    let third = wrap(gre, Network::ipv4([198, 51, 100, 1], [198, 51, 100, 2]), &f);
    let (st, q) = frame(&third);
    assert_eq!((st, q.roce_version, q.tunnel_count), (MALFORMED, 0, 2));
    assert_eq!((q.tunnels[0].kind, q.tunnels[1].kind), (ROCE_ENCAP_GRE, ROCE_ENCAP_ERSPAN2));
    assert!(q.tunnels[0].gre.key_present && q.tunnels[0].gre.key == 0x42);
    assert_eq!((q.stop, q.stop_layer), (MALFORMED, ROCE_LAYER_VXLAN));

    // A broken ERSPAN header (version 2 under 0x88BE): stop at it, with the problem.
    let mut bad = f.clone();
    bad[34 + 8] = (bad[34 + 8] & 0x0f) | 0x20;
    let (st, q) = frame(&bad);
    assert_eq!((st, q.stop_layer, q.stop_offset), (MALFORMED, ROCE_LAYER_ERSPAN, 42));
    assert_eq!(q.problems & ROCE_PROBLEM_TUNNEL_MALFORMED, ROCE_PROBLEM_TUNNEL_MALFORMED);
    assert_eq!(q.tunnel_count, 0);
}

// ---------------------------------------------------------------------------------------------
// CM MADs (roce_parse_mad)
// ---------------------------------------------------------------------------------------------

fn mad(bytes: &[u8]) -> (c_int, roce_mad) {
    let mut out = MaybeUninit::<roce_mad>::uninit();
    let st = unsafe { roce_parse_mad(bytes.as_ptr(), bytes.len(), out.as_mut_ptr()) };
    (st, unsafe { out.assume_init() })
}

/// An RDMA-CM REQ over IPv4 (TCP port space, 10.0.0.1:50000 -> 10.0.0.2:7471) as a whole MAD.
fn rdma_cm_req_mad() -> [u8; 256] {
    use roce_parser::{PortSpace, RdmaCmIpHeader, ReqRepr};
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    let src = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 50000);
    let dst = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 7471);
    let mut pd = RdmaCmIpHeader::new(src, dst.ip()).to_bytes().to_vec();
    pd.extend_from_slice(&[0xC3; 20]);
    let req = ReqRepr {
        local_comm_id: 0x1234_5678,
        local_qpn: 0x11,
        starting_psn: 0xab_cdef,
        ..ReqRepr::rdma_cm(PortSpace::Tcp, src, dst, &pd)
    };
    let mut m = [0u8; 256];
    assert_eq!(req.emit_mad(0x77, &mut m), Ok(256));
    m
}

#[test]
fn mad_zeroed_is_default_and_size() {
    let z: roce_mad = unsafe { std::mem::zeroed() };
    assert_eq!(z, roce_mad::default());
    assert_eq!(roce_mad_size(), std::mem::size_of::<roce_mad>());
}

#[test]
fn mad_bad_arguments() {
    let m = rdma_cm_req_mad();
    assert_eq!(unsafe { roce_parse_mad(m.as_ptr(), m.len(), std::ptr::null_mut()) }, NULL);
    let mut out = MaybeUninit::new(roce_mad { problems: 7, ..Default::default() });
    assert_eq!(unsafe { roce_parse_mad(std::ptr::null(), 256, out.as_mut_ptr()) }, NULL);
    assert_eq!(unsafe { out.assume_init() }, roce_mad::default(), "out zeroed on NULL input");
    let st = unsafe { roce_parse_mad(m.as_ptr(), isize::MAX as usize + 1, out.as_mut_ptr()) };
    assert_eq!(st, INVALID);
    // A misaligned `out`.
    let mut buf = vec![MaybeUninit::<roce_mad>::uninit(); 2];
    let p = unsafe { (buf.as_mut_ptr() as *mut u8).add(1) } as *mut roce_mad;
    assert_eq!(unsafe { roce_parse_mad(m.as_ptr(), m.len(), p) }, INVALID);
    assert_eq!(unsafe { roce_parse_mad(NO_BYTES.as_ptr(), 0, out.as_mut_ptr()) }, TRUNCATED);
}

const NO_BYTES: [u8; 1] = [0];

#[test]
fn rdma_cm_req_fields() {
    let m = rdma_cm_req_mad();
    let (st, o) = mad(&m);
    assert_eq!(st, OK);
    assert_eq!(o.problems, 0);
    assert_eq!(o.cm_kind, ROCE_CM_REQ);
    assert!(o.cm_decoded);
    assert_eq!(o.data_len, 232);
    assert_eq!((o.header.base_version, o.header.mgmt_class, o.header.class_version), (1, 7, 2));
    assert_eq!((o.header.transaction_id, o.header.attribute_id), (0x77, 0x10));
    let r = &o.req;
    assert_eq!((r.local_comm_id, r.local_qpn, r.starting_psn), (0x1234_5678, 0x11, 0xab_cdef));
    assert_eq!(r.private_data_offset, 24 + 140);
    assert_eq!(r.private_data_len, 92);
    let rc = &r.rdma_cm;
    assert!(rc.service_present && rc.ip_present);
    assert_eq!((rc.port_space, rc.dst_port, rc.ip_version, rc.src_port), (0x06, 7471, 4, 50000));
    assert_eq!(rc.src_ip[12..], [10, 0, 0, 1]);
    assert_eq!(rc.dst_ip[12..], [10, 0, 0, 2]);
    assert_eq!(m[r.private_data_offset + 36], 0xC3);
    // Only the REQ struct is filled.
    assert_eq!(o.rep, roce_cm_rep::default());
    assert_eq!(o.sidr_req, roce_cm_sidr_req::default());
}

#[test]
fn every_truncation_of_a_req_mad_agrees_with_rust() {
    let full = rdma_cm_req_mad();
    for len in 0..=full.len() {
        // An exact-size heap copy, so a read past `len` would be caught by a sanitizer.
        let bytes: Vec<u8> = full[..len].to_vec();
        let (st, o) = mad(&bytes);
        match roce_parser::parse_mad(&bytes) {
            Err(_) => {
                assert_eq!(st, TRUNCATED, "len {len}");
                assert_eq!(o, roce_mad::default(), "len {len}");
            }
            Ok(m) => {
                assert_eq!(st, OK, "len {len}");
                assert_eq!(o.problems, m.problems.bits(), "len {len}");
                assert_eq!(o.cm_decoded, m.cm.is_some(), "len {len}");
                assert_eq!(o.data_len, m.data.len(), "len {len}");
                assert_eq!(o.problems & ROCE_PROBLEM_MAD_TRUNCATED != 0, len < 256, "len {len}");
                if let Some(roce_parser::CmMessage::Req(r)) = m.cm {
                    assert_eq!(o.req.private_data_len, r.private_data.len(), "len {len}");
                    assert!(o.req.private_data_offset + o.req.private_data_len <= len);
                    assert_eq!(o.req.rdma_cm.ip_present, r.rdma_cm_ip_header().is_some());
                } else {
                    assert_eq!(o.req, roce_cm_req::default(), "len {len}");
                }
            }
        }
    }
    // Bytes past 256 are ignored.
    let mut long = full.to_vec();
    long.extend_from_slice(&[0xEE; 44]);
    assert_eq!(mad(&long), mad(&full));
}

#[test]
fn mad_versions_and_attributes() {
    let mut m = rdma_cm_req_mad();
    m[2] = 3; // CM class version 3
    let (st, o) = mad(&m);
    assert_eq!(st, OK);
    assert_eq!(o.problems, ROCE_PROBLEM_MAD_UNKNOWN_VERSION);
    assert_eq!((o.cm_kind, o.cm_decoded), (ROCE_CM_REQ, false));
    let mut m = rdma_cm_req_mad();
    m[17] = 0x99; // attribute 0x0099
    let (_, o) = mad(&m);
    assert_eq!(o.problems, ROCE_PROBLEM_MAD_UNKNOWN_ATTRIBUTE);
    assert_eq!((o.cm_kind, o.cm_decoded), (ROCE_CM_UNKNOWN, false));
    let mut m = rdma_cm_req_mad();
    m[1] = 0x03; // not CM (SA): header only
    let (_, o) = mad(&m);
    assert_eq!((o.problems, o.cm_kind, o.cm_decoded), (0, ROCE_CM_NONE, false));
    assert_eq!(o.header.mgmt_class, 3);
}

/// The messages the captures do not hold (MRA, SIDR_REQ/REP, LAP, APR), written by the Rust
/// emitter and read back through the C interface.
#[test]
fn mra_sidr_lap_apr_through_c() {
    use roce_parser::{
        AprRepr, CmMessage, LapRepr, MessageRef, MraRepr, SidrRepRepr, SidrReqRepr, SidrStatus,
    };
    let pd = [0x5Au8; 12];
    let ai = [0x11u8; 3];
    let msgs = [
        CmMessage::Mra(MraRepr {
            local_comm_id: 1,
            remote_comm_id: 2,
            message_mraed: MessageRef::Rep,
            service_timeout: 9,
            private_data: &pd,
        }),
        CmMessage::SidrReq(SidrReqRepr {
            request_id: 3,
            pkey: 0xffff,
            service_id: 0x0111_1234,
            private_data: &pd,
        }),
        CmMessage::SidrRep(SidrRepRepr {
            request_id: 4,
            status: SidrStatus::Unsupported,
            additional_info_length: 3,
            qpn: 0x77,
            service_id: 5,
            qkey: 6,
            additional_info: &ai,
            private_data: &pd,
        }),
        CmMessage::Lap(LapRepr { local_comm_id: 7, remote_comm_id: 8 }),
        CmMessage::Apr(AprRepr { local_comm_id: 9, remote_comm_id: 10 }),
        CmMessage::ClassPortInfo,
    ];
    for msg in msgs {
        let mut m = [0u8; 256];
        assert_eq!(msg.emit_mad(1, &mut m), Ok(256));
        let (st, o) = mad(&m);
        assert_eq!((st, o.problems, o.cm_decoded), (OK, 0, true), "{}", msg.name());
        let pd_at = |off: usize, len: usize| m[off..off + len].to_vec();
        match msg {
            CmMessage::Mra(_) => {
                assert_eq!(o.cm_kind, ROCE_CM_MRA);
                assert_eq!((o.mra.local_comm_id, o.mra.remote_comm_id), (1, 2));
                assert_eq!((o.mra.message_mraed, o.mra.service_timeout), (1, 9));
                assert_eq!(pd_at(o.mra.private_data_offset, 12), pd);
            }
            CmMessage::SidrReq(_) => {
                assert_eq!(o.cm_kind, ROCE_CM_SIDR_REQ);
                let r = &o.sidr_req;
                assert_eq!((r.request_id, r.pkey, r.service_id), (3, 0xffff, 0x0111_1234));
                assert!(r.rdma_cm.service_present);
                assert_eq!((r.rdma_cm.port_space, r.rdma_cm.dst_port), (0x11, 0x1234));
                assert_eq!(pd_at(r.private_data_offset, 12), pd);
            }
            CmMessage::SidrRep(_) => {
                assert_eq!(o.cm_kind, ROCE_CM_SIDR_REP);
                let r = &o.sidr_rep;
                assert_eq!((r.request_id, r.status, r.additional_info_length), (4, 1, 3));
                assert_eq!((r.qpn, r.service_id, r.qkey), (0x77, 5, 6));
                assert_eq!(pd_at(r.additional_info_offset, 3), ai);
                assert_eq!(pd_at(r.private_data_offset, 12), pd);
            }
            CmMessage::Lap(_) => {
                assert_eq!(o.cm_kind, ROCE_CM_LAP);
                assert_eq!((o.lap.local_comm_id, o.lap.remote_comm_id), (7, 8));
            }
            CmMessage::Apr(_) => {
                assert_eq!(o.cm_kind, ROCE_CM_APR);
                assert_eq!((o.apr.local_comm_id, o.apr.remote_comm_id), (9, 10));
            }
            _ => assert_eq!(o.cm_kind, ROCE_CM_CLASS_PORT_INFO),
        }
    }
}

/// Native InfiniBand through the C interface: `roce_parse_infiniband` fills `lrh` (and the
/// VCRC), `grh` when routed, and the transport as the Rust parse gives them.
#[test]
fn native_infiniband_packets() {
    use roce_parser::{BthRepr, FrameBuilder, GrhRepr, LrhRepr, Network};
    let lrh = LrhRepr { vl: 3, sl: 7, dlid: 0x0012, slid: 0x000c, ..Default::default() };
    let grh =
        GrhRepr { ipver: 6, hoplmt: 2, sgid: [0xfe; 16], dgid: [0x20; 16], ..Default::default() };
    for (network, routed) in
        [(Network::infiniband(lrh), false), (Network::Infiniband(lrh, Some(grh)), true)]
    {
        let bth = BthRepr { opcode: 0x04, dest_qp: 0x29, psn: 1234, ..Default::default() };
        let mut b = FrameBuilder::new(network, bth);
        b.payload = b"hello";
        let mut bytes = vec![0; b.buffer_len()];
        b.emit(&mut bytes).unwrap();
        let mut out = roce_packet::default();
        // SAFETY: a live slice and a live struct.
        let st = unsafe { roce_parse_infiniband(bytes.as_ptr(), bytes.len(), &mut out) };
        assert_eq!(st, OK);
        assert_eq!(out.roce_version, ROCE_VERSION_INFINIBAND);
        let l = out.lrh;
        assert!(l.present && l.vcrc_present);
        assert_eq!(
            (l.vl, l.sl, l.dlid, l.slid, l.lnh),
            (3, 7, 0x12, 0x0c, if routed { 3 } else { 2 })
        );
        assert_eq!(usize::from(l.pkt_len) * 4 + 2, bytes.len());
        assert_eq!((l.vcrc_status, out.icrc_status), (ROCE_ICRC_OK, ROCE_ICRC_OK));
        assert_eq!(l.vcrc, u16::from_le_bytes([bytes[bytes.len() - 2], bytes[bytes.len() - 1]]));
        assert_eq!(out.grh.present, routed);
        assert!(!out.eth.present && !out.ip.present && !out.udp.present);
        assert_eq!((out.bth.dest_qp, out.bth.psn, out.payload_len), (0x29, 1234, 5));
        assert_eq!(out.bth_offset, if routed { 48 } else { 8 });
        // The VCRC damaged: bad, with what it should be; the ICRC still holds.
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() ^= 1;
        let st = parse_infiniband_into(&bad, roce_options::default(), &mut out);
        assert_eq!(st, OK);
        assert_eq!((out.lrh.vcrc_status, out.icrc_status), (ROCE_ICRC_BAD, ROCE_ICRC_OK));
        assert_eq!(out.lrh.vcrc_computed, l.vcrc);
        assert_ne!(out.problems & ROCE_PROBLEM_VCRC_BAD, 0);
        // Cut inside the LRH: truncated, at the LRH.
        let st = parse_infiniband_into(&bytes[..5], roce_options::default(), &mut out);
        assert_eq!((st, out.stop_layer), (TRUNCATED, ROCE_LAYER_LRH));
        assert_eq!(s(roce_layer_name(ROCE_LAYER_LRH)), "LRH");
    }
    // Another transport (LNH 1): its LRH, no RoCE packet.
    let raw = [0x00, 0x01, 0, 2, 0, 3, 0, 1, 0, 0, 0, 0];
    let mut out = roce_packet::default();
    assert_eq!(parse_infiniband_into(&raw, roce_options::default(), &mut out), NOT_ROCE);
    assert!(out.lrh.present && out.lrh.lnh == 1 && out.roce_version == 0);
}
