#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! The MAD of a UD SEND to QP1 is decoded once, while the frame is parsed: `Roce::mad` returns
//! that result, and the MAD's problems are in the packet's problem set (so every consumer, C
//! callers included, sees them without decoding the MAD again).
use roce_parser::*;

/// A UD SEND_ONLY from QP 1 to `dest_qp` carrying `payload`.
fn ud_send(dest_qp: u32, payload: &[u8]) -> Vec<u8> {
    ud(0x64, dest_qp, payload)
}

fn ud(opcode: u8, dest_qp: u32, payload: &[u8]) -> Vec<u8> {
    let mut b = FrameBuilder::new(
        Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]),
        BthRepr { opcode, pkey: 0xffff, dest_qp, psn: 7, ..Default::default() },
    );
    b.headers.deth = Some(DethRepr { qkey: GSI_QKEY, reserved: 0, src_qp: 1 });
    b.payload = payload;
    let mut out = vec![0u8; b.buffer_len()];
    b.emit(&mut out).unwrap();
    out
}

/// A MAD header: base version 1, class CM (7), `class_version`, method Send, `attribute`.
fn mad_header(class_version: u8, attribute: u16) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[..4].copy_from_slice(&[1, 0x07, class_version, 0x03]);
    h[8..16].copy_from_slice(&0x1122_3344_5566_7788u64.to_be_bytes());
    h[16..18].copy_from_slice(&attribute.to_be_bytes());
    h
}

const MAD_BITS: [Problem; 3] =
    [Problem::MadTruncated, Problem::MadUnknownVersion, Problem::MadUnknownAttribute];

fn mad_bits(p: Problems) -> Vec<Problem> {
    MAD_BITS.into_iter().filter(|&b| p.contains(b)).collect()
}

#[test]
fn a_whole_cm_mad_is_decoded_and_clean() {
    let mut mad = [0u8; MAD_LEN];
    CmMessage::Rtu(RtuRepr::new(0x1234, 0x5678)).emit_mad(42, &mut mad).unwrap();
    let frame = ud_send(QP1, &mad);
    let p = parse_ethernet(&frame, &Config::default()).unwrap();
    assert!(p.problems.is_empty(), "{}", p.problems);
    let r = p.roce.unwrap();
    let m = r.mad().unwrap().unwrap();
    assert_eq!(m.header.transaction_id, 42);
    assert_eq!(m.cm.and_then(|c| c.comm_ids()), Some((0x1234, 0x5678)));
    assert_eq!(r.mad(), Some(parse_mad(&mad)));
}

#[test]
fn mad_problems_are_the_packets_problems() {
    // 32 bytes of a CM MAD with attribute 0x0099 (not a CM message): short and unknown.
    let mut mad = mad_header(2, 0x0099).to_vec();
    mad.extend_from_slice(&[0xab; 8]);
    let frame = ud_send(QP1, &mad);
    let p = parse_ethernet(&frame, &Config::default()).unwrap();
    assert_eq!(mad_bits(p.problems), [Problem::MadTruncated, Problem::MadUnknownAttribute]);
    // Nothing else is wrong with the frame: the ICRC and every other layer are fine.
    assert_eq!(p.problems.iter().count(), 2, "{}", p.problems);
    let r = p.roce.unwrap();
    assert_eq!(r.icrc_status, IcrcStatus::Ok);
    let m = r.mad().unwrap().unwrap();
    assert_eq!(m.problems, p.problems);
    assert_eq!(m.cm, Some(CmMessage::Unknown(0x0099)));

    // The UDP payload alone (the C API's roce_parse_udp_payload) reports them too.
    let udp_payload = &frame[14 + 20 + 8..];
    let (r2, problems) = parse_udp_payload(udp_payload, &Config::default()).unwrap();
    assert_eq!(mad_bits(problems), [Problem::MadTruncated, Problem::MadUnknownAttribute]);
    assert_eq!(r2.mad(), r.mad());
}

#[test]
fn unknown_class_version() {
    let mut mad = [0u8; MAD_LEN];
    mad[..24].copy_from_slice(&mad_header(1, 0x0010));
    let frame = ud_send(QP1, &mad);
    let p = parse_ethernet(&frame, &Config::default()).unwrap();
    assert_eq!(mad_bits(p.problems), [Problem::MadUnknownVersion]);
    assert_eq!(p.roce.unwrap().mad().unwrap().unwrap().cm, None);
}

#[test]
fn the_mad_is_read_from_the_packet_not_decoded_again() {
    let mut mad = mad_header(2, 0x0099).to_vec();
    mad.extend_from_slice(&[0; 8]);
    let frame = ud_send(QP1, &mad);
    let mut r = parse_ethernet(&frame, &Config::default()).unwrap().roce.unwrap();
    let decoded = r.mad();
    assert!(matches!(decoded, Some(Ok(_))));
    // Taking the payload away does not change what mad() returns: it is the parse-time result.
    r.payload = &[];
    assert_eq!(r.mad(), decoded);
}

#[test]
fn only_qp1_carries_a_mad() {
    // The same bytes to QP 2 are a plain UD SEND: no MAD, no MAD problem.
    let mut mad = mad_header(1, 0x0099).to_vec();
    mad.extend_from_slice(&[0; 8]);
    let frame = ud_send(2, &mad);
    let p = parse_ethernet(&frame, &Config::default()).unwrap();
    assert!(p.problems.is_empty(), "{}", p.problems);
    assert_eq!(p.roce.unwrap().mad(), None);
}

#[test]
fn a_payload_shorter_than_the_mad_header_is_an_error_not_a_problem() {
    let frame = ud_send(QP1, &[1, 7, 2, 3]);
    let p = parse_ethernet(&frame, &Config::default()).unwrap();
    let e = p.roce.unwrap().mad().unwrap().unwrap_err();
    assert_eq!((e.layer, e.needed, e.available), (Layer::Mad, 24, 4));
    assert!(mad_bits(p.problems).is_empty());
}

#[test]
fn send_with_immediate_to_qp1_carries_a_mad_too() {
    let mut mad = [0u8; MAD_LEN];
    mad[..24].copy_from_slice(&mad_header(2, 0x0099));
    let frame = ud(0x65, QP1, &mad);
    let p = parse_ethernet(&frame, &Config::default()).unwrap();
    let r = p.roce.unwrap();
    assert!(r.is_gsi_mad() && r.headers.immdt.is_some());
    assert_eq!(mad_bits(p.problems), [Problem::MadUnknownAttribute]);
    assert_eq!(r.mad(), Some(parse_mad(&mad)));
}

#[test]
fn the_tables_ud_opcodes_are_the_mad_carriers() {
    // The parser looks for a MAD in UD packets to QP1: that is `is_gsi_mad` only while UD
    // SEND_ONLY and SEND_ONLY_WITH_IMMEDIATE are the only UD opcodes.
    let ud: Vec<u8> =
        OPCODES.iter().filter(|i| i.transport == Transport::Ud).map(|i| i.opcode).collect();
    assert_eq!(ud, [0x64, 0x65]);
}
