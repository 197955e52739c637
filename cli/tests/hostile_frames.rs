//! Frames the parser stops early on, or whose lengths disagree: every output (the summary
//! line, `-V`, JSON) gives the reason, from the parser's problems.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::PathBuf;
use std::process::{Command, Output};

use roce_parser::{BthRepr, FrameBuilder, Network, Problem};
use serde_json::Value;

const ETH: usize = 14;
const IP4: usize = 20;
const UDP: usize = 8;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [0xA1B2_C3D4u32, 0x0004_0002, 0, 0, 65535, 1] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for (i, f) in frames.iter().enumerate() {
        for v in [1_700_000_000, i as u32, f.len() as u32, f.len() as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(f);
    }
    out
}

fn set_be16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

fn fix_ipv4_checksum(f: &mut [u8]) {
    set_be16(f, ETH + 10, 0);
    let mut sum = 0u32;
    for w in f[ETH..ETH + IP4].chunks(2) {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    set_be16(f, ETH + 10, !(sum as u16));
}

fn send(network: Network) -> Vec<u8> {
    let mut b = FrameBuilder::new(
        network,
        BthRepr { opcode: 0x04, pkey: 0xffff, dest_qp: 0x11, psn: 5, ..Default::default() },
    );
    b.payload = &[7; 8];
    let mut out = vec![0; b.buffer_len()];
    let n = b.emit(&mut out).unwrap();
    out.truncate(n);
    out
}

fn ipv4() -> Vec<u8> {
    send(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]))
}

fn cut_udp_payload(mut f: Vec<u8>, n: usize) -> Vec<u8> {
    f.truncate(ETH + IP4 + UDP + n);
    set_be16(&mut f, ETH + 2, (IP4 + UDP + n) as u16);
    set_be16(&mut f, ETH + IP4 + 4, (UDP + n) as u16);
    fix_ipv4_checksum(&mut f);
    f
}

/// (frame, the problem its outputs must name, whether it is still RoCE).
fn cases() -> Vec<(Vec<u8>, Problem, bool)> {
    let mut v = vec![
        (cut_udp_payload(ipv4(), 6), Problem::ShortForBth, false),
        (cut_udp_payload(ipv4(), 12), Problem::ShortForIcrc, true),
    ];
    let mut ihl = ipv4();
    ihl[ETH] = 0x43;
    v.push((ihl, Problem::IpHeaderLength, false));
    let inner = ipv4();
    let mut vlans = inner[..12].to_vec();
    for _ in 0..9 {
        vlans.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    }
    vlans.extend_from_slice(&inner[12..]);
    v.push((vlans, Problem::TooManyVlanTags, false));
    let mut v6 = send(Network::ipv6([1; 16], [2; 16]));
    let plen = u16::from_be_bytes([v6[ETH + 4], v6[ETH + 5]]);
    set_be16(&mut v6, ETH + 4, plen + 8);
    v6[ETH + 6] = 135;
    v6.splice(ETH + 40..ETH + 40, [17, 0, 0, 0, 0, 0, 0, 0]);
    v.push((v6, Problem::Ipv6ExtensionChain, false));
    let mut long_udp = ipv4();
    let udp_len = u16::from_be_bytes([long_udp[ETH + IP4 + 4], long_udp[ETH + IP4 + 5]]);
    set_be16(&mut long_udp, ETH + IP4 + 4, udp_len + 100);
    // The ICRC covers the UDP length: make it right for the patched header.
    let p = roce_parser::parse_ethernet(&long_udp, &roce_parser::Config::default()).unwrap();
    if let roce_parser::IcrcStatus::Bad { computed } = p.roce.unwrap().icrc_status {
        let n = long_udp.len();
        long_udp[n - 4..].copy_from_slice(&computed.to_le_bytes());
    }
    v.push((long_udp, Problem::UdpLengthMismatch, true));
    v
}

#[test]
fn every_output_gives_the_reason() {
    let cases = cases();
    let frames: Vec<Vec<u8>> = cases.iter().map(|c| c.0.clone()).collect();
    let path: PathBuf =
        std::env::temp_dir().join(format!("roce-inspect-{}-hostile.pcap", std::process::id()));
    std::fs::write(&path, pcap(&frames)).unwrap();
    let p = path.to_str().unwrap();

    let text = stdout(&["dissect", p]);
    let lines: Vec<&str> = text.lines().collect();
    let verbose = stdout(&["dissect", "-V", p]);
    let trees: Vec<&str> = verbose.split("\n\n").filter(|t| !t.trim().is_empty()).collect();
    let jsonl = stdout(&["dissect", "--format", "jsonl", p]);
    let objs: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!((lines.len(), trees.len(), objs.len()), (cases.len(), cases.len(), cases.len()));

    for (i, (_, problem, is_roce)) in cases.iter().enumerate() {
        let msg = problem.message();
        assert!(lines[i].contains(msg), "line {i}: {}", lines[i]);
        assert!(!lines[i].contains("EtherType 0x0000"), "{}", lines[i]);
        assert!(trees[i].contains(&format!("Problem: {msg}")), "tree {i}: {}", trees[i]);
        let o = &objs[i];
        assert_eq!(o["roce"].is_object(), *is_roce, "{o}");
        // Problems by stable code, with their sentence.
        let listed: Vec<&str> = o["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                let code = v["code"].as_str().unwrap();
                assert_eq!(v["message"], Problem::from_code(code).unwrap().message(), "{o}");
                code
            })
            .collect();
        assert!(listed.contains(&problem.code()), "json {i}: {o}");
        // Nothing here is a truncated capture or a bad ICRC.
        for wrong in [Problem::Truncated, Problem::IcrcBad] {
            assert!(!listed.contains(&wrong.code()), "json {i}: {o}");
            assert!(!lines[i].contains(wrong.message()), "line {i}: {}", lines[i]);
        }
    }
    // The 12-byte BTH: no ICRC to judge.
    assert!(lines[1].contains("ICRC unverifiable"), "{}", lines[1]);
    assert_eq!(objs[1]["roce"]["icrc"]["status"], "unverifiable");
    std::fs::remove_file(&path).unwrap();
}
