#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! The three ICRC test vectors of docs/wire.md: parsed field by field, ICRC verified.
mod common;
use common::*;
use roce_parser::*;

#[test]
fn v1_ipv4_uc_send_only() {
    let f = hex(V1);
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    let r = p.roce.unwrap();
    assert_eq!(r.opcode_name(), "UC_SEND_ONLY");
    assert_eq!(r.bth.padcnt, 2);
    assert_eq!(r.bth.dest_qp, 0xd3);
    assert_eq!(r.icrc, Some(0xF353_F378));
    assert_eq!(r.icrc_status, IcrcStatus::Ok);
    assert_eq!(r.payload_len, 18);
    assert_eq!(r.pad, &[0, 0]);
    assert!(p.problems.is_empty(), "{}", p.problems);
}

#[test]
fn v2_cnp() {
    let f = hex(V2);
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    let r = p.roce.unwrap();
    assert_eq!(r.opcode_name(), "CNP");
    assert!(r.bth.becn);
    assert_eq!(r.bth.dest_qp, 0x118);
    assert_eq!(r.payload_len, 16);
    assert_eq!(r.icrc, Some(u32::from_le_bytes([0x82, 0xfd, 0x00, 0x2a])));
    assert_eq!(r.icrc_status, IcrcStatus::Ok);
    assert_eq!(p.ip.unwrap().ecn, 2);
    assert!(p.problems.is_empty(), "{}", p.problems);
}

#[test]
fn v3_ipv6_ack() {
    let f = hex(V3);
    let p = parse_ethernet(&f, &Config::default()).unwrap();
    let r = p.roce.unwrap();
    assert_eq!(r.opcode_name(), "RC_ACKNOWLEDGE");
    let aeth = r.headers.aeth.unwrap();
    assert_eq!((aeth.syndrome, aeth.msn), (0x1f, 7));
    assert_eq!(r.icrc, Some(u32::from_le_bytes([0x6a, 0xfb, 0x05, 0xa0])));
    assert_eq!(r.icrc_status, IcrcStatus::Ok);
    assert_eq!(p.ip.unwrap().flow_label, 0x12345);
    assert!(p.problems.is_empty(), "{}", p.problems);
}
