//! What the command line makes of odd and hostile captures (the reader's own tests are in
//! capture/tests): exit codes, bounded warnings on stderr and in the reports, and the typed
//! reason a frame without Ethernet could not be decoded.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use roce_capture::{Capture, L2Error, LinkType};
use roce_inspect::internal::input::{decode, Undecoded};
use roce_parser::{Config, ErrorKind as ParseErrorKind, Layer};
use serde_json::{json, Value};

#[path = "../../testdata/real.rs"]
mod real;
use real::real_dir;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap()
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("roce-inspect-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn warnings(out: &Output) -> Vec<String> {
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    stderr.lines().filter(|l| l.starts_with("roce-inspect: warning: ")).map(String::from).collect()
}

/// A little-endian microsecond pcap of the given link type.
fn pcap(link_type: u32, snaplen: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [0xA1B2_C3D4u32, 0x0004_0002, 0, 0, snaplen, link_type] {
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

/// read2.pcap with its header's snap length patched below its records' lengths: before, the
/// read stopped at the first longer record (3 of 16 frames at 200; exit 2 at 64). Now every
/// frame is read, with one warning, as libpcap and tshark read them.
#[test]
fn a_wrong_snap_length_costs_one_warning_not_the_frames() {
    let Some(dir) = real_dir() else { return };
    let original = std::fs::read(dir.join("magnate3_linux-riscv-dev_read2.pcap")).unwrap();
    for snaplen in [200u32, 64] {
        let mut bytes = original.clone();
        bytes[16..20].copy_from_slice(&snaplen.to_le_bytes());
        let path = temp(&format!("snaplen-{snaplen}.pcap"), &bytes);
        let out = run(&["stats", "--format", "json", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "snap length {snaplen}");
        let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(stats["frames"], 16);
        assert_eq!(stats["roce_frames"], 13);
        let warnings = warnings(&out);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains(&format!("{}: frame ", path.display())), "{warnings:?}");
        assert!(warnings[0].contains(&format!("snap length {snaplen}")), "{warnings:?}");
        std::fs::remove_file(&path).unwrap();
    }
}

/// A pcapng of 400,000 packets whose interface description block is missing: every packet
/// is skipped with a warning. Before, all 400,000 went to stderr (15 MB) and into memory
/// (163 MB RSS); now the first 20 and one line counting the rest.
#[test]
fn warnings_on_every_block_are_bounded() {
    const PACKETS: usize = 400_000;
    let mut bytes = Vec::with_capacity(28 + PACKETS * 36);
    // Section header: type, length 28, byte-order magic, version 1.0, section length -1.
    for v in [0x0A0D_0D0Au32, 28, 0x1A2B_3C4D, 1, u32::MAX, u32::MAX, 28] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    for i in 0..PACKETS as u32 {
        // EPB: interface 0 (never described), timestamp, 4 of 4 bytes, the bytes, trailer.
        for v in [6u32, 36, 0, 0, i, 4, 4, 0x0000_0045, 36] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    let path = temp("no-idb.pcapng", &bytes);
    let p = path.to_str().unwrap();
    let out = run(&["stats", p]);
    assert_eq!(out.status.code(), Some(0));
    let warnings = warnings(&out);
    assert_eq!(warnings.len(), 21, "20 kept and one count");
    assert!(warnings[0].ends_with(&format!(
        "{p}: frame 1 at byte offset 28: packet names interface 0 but its section defines 0 interface(s)"
    )));
    assert_eq!(
        warnings[20],
        format!("roce-inspect: warning: {p}: ... 399980 more \"unknown interface\" warnings not shown (the first 20 are)")
    );
    assert!(out.stderr.len() < 4096, "{} bytes of stderr", out.stderr.len());
    assert!(out.stdout.len() < 8192, "{} bytes of stdout", out.stdout.len());

    let out = run(&["check", "--format", "json", p]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept = report["capture_warnings"].as_array().unwrap();
    assert_eq!(kept.len(), 21);
    assert!(kept[20].as_str().unwrap().contains("399980 more"));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn committed_snap_length_cases_exit_as_they_should() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/capture");
    for (file, code, frames, warned) in [
        ("records_exceed_snaplen.pcap", 0, 3, 1),
        ("packets_exceed_snaplen.pcapng", 0, 3, 1),
        ("timestamp_out_of_range.pcapng", 0, 2, 1),
        // Above the snap length and cut short: nothing readable.
        ("first_record_exceeds_snaplen.pcap", 2, 0, 0),
        ("caplen_exceeds_snaplen.pcap", 0, 2, 1),
    ] {
        let out = run(&["dissect", "--format", "jsonl", dir.join(file).to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(code), "{file}");
        assert_eq!(out.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count(), frames);
        assert_eq!(warnings(&out).len(), warned, "{file}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(file), "{file}");
    }
}

/// Frames of each link type without Ethernet, read by roce-capture and decoded as the
/// commands decode them, must say why no network layer was found, as a typed reason.
#[test]
fn frames_without_a_network_layer_carry_a_typed_reason() {
    let sll = |protocol: u16, payload: &[u8]| {
        let mut f = vec![0, 0, 0, 1, 0, 6, 2, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0];
        f.extend_from_slice(&protocol.to_be_bytes());
        f.extend_from_slice(payload);
        f
    };
    let sll2 = |protocol: u16, payload: &[u8]| {
        let mut f = protocol.to_be_bytes().to_vec();
        f.extend_from_slice(&[0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 2, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0]);
        f.extend_from_slice(payload);
        f
    };
    let null = |family: u32, payload: &[u8]| {
        let mut f = family.to_le_bytes().to_vec();
        f.extend_from_slice(payload);
        f
    };
    let short_ipv4 = [0x45u8, 0, 0, 20];
    let truncated = |offset: usize, available: usize| {
        Some(roce_parser::Error {
            kind: ParseErrorKind::Truncated,
            layer: Layer::Ipv4,
            offset,
            needed: 20,
            available,
        })
    };
    let cases: Vec<(LinkType, Vec<u8>, Undecoded)> = vec![
        (
            LinkType::LinuxSll,
            sll(0x0806, &[0; 28]),
            Undecoded::Network { link_type: LinkType::LinuxSll, ethertype: 0x0806, stop: None },
        ),
        (
            LinkType::LinuxSll,
            sll(0x0800, &short_ipv4),
            Undecoded::Network {
                link_type: LinkType::LinuxSll,
                ethertype: 0x0800,
                stop: truncated(16, 4),
            },
        ),
        (
            LinkType::LinuxSll,
            vec![0; 10],
            Undecoded::Link(L2Error::Truncated {
                link_type: LinkType::LinuxSll,
                needed: 16,
                available: 10,
            }),
        ),
        (
            LinkType::LinuxSll2,
            sll2(0x0800, &short_ipv4),
            Undecoded::Network {
                link_type: LinkType::LinuxSll2,
                ethertype: 0x0800,
                stop: truncated(20, 4),
            },
        ),
        (
            LinkType::LinuxSll2,
            vec![0; 19],
            Undecoded::Link(L2Error::Truncated {
                link_type: LinkType::LinuxSll2,
                needed: 20,
                available: 19,
            }),
        ),
        (
            LinkType::Raw,
            vec![0x50, 0, 0, 0],
            Undecoded::Link(L2Error::IpVersion { link_type: LinkType::Raw, version: 5 }),
        ),
        (
            LinkType::Raw,
            short_ipv4.to_vec(),
            Undecoded::Network {
                link_type: LinkType::Raw,
                ethertype: 0x0800,
                stop: truncated(0, 4),
            },
        ),
        (
            LinkType::Null,
            null(7, &short_ipv4),
            Undecoded::Link(L2Error::AddressFamily { link_type: LinkType::Null, family: 7 }),
        ),
        (
            LinkType::Null,
            null(2, &short_ipv4),
            Undecoded::Network {
                link_type: LinkType::Null,
                ethertype: 0x0800,
                stop: truncated(4, 4),
            },
        ),
        (
            LinkType::Null,
            vec![2, 0],
            Undecoded::Link(L2Error::Truncated {
                link_type: LinkType::Null,
                needed: 4,
                available: 2,
            }),
        ),
    ];
    let cfg = Config::default();
    for (link_type, frame, want) in &cases {
        let bytes = pcap(link_type.code(), 65535, std::slice::from_ref(frame));
        let mut cap = Capture::from_bytes("link.pcap", bytes.clone()).unwrap();
        let got = decode(cap.next_frame().unwrap().unwrap(), &cfg).packet.err();
        assert_eq!(got.as_ref(), Some(want), "{link_type}: {frame:02x?}");

        // The commands name the frame and say why.
        let path = temp(&format!("link-{}.pcap", link_type.code()), &bytes);
        let out = run(&["dissect", "--format", "jsonl", path.to_str().unwrap()]);
        let line: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(line["frame"], 1);
        assert_eq!(line["undecoded"]["message"], want.to_string());
        assert_eq!(line["undecoded"]["reason"], want.reason());
        std::fs::remove_file(&path).unwrap();
    }
    assert_eq!(
        cases[1].2.to_string(),
        "Linux cooked (SLL) header names EtherType 0x0800, but IPv4 truncated at byte offset 16: needs 20 bytes, only 4 available"
    );
    assert_eq!(
        cases[0].2.to_string(),
        "Linux cooked (SLL) header names EtherType 0x0806, which is not IPv4, IPv6 or RoCEv1"
    );
}

/// A capture of a link type the parser cannot read: `stats` and `check` say so once on stderr
/// (the link type and how many frames it held) and in their JSON, instead of a silent
/// "0 RoCE; 0 error(s)".
#[test]
fn unsupported_link_types_are_one_warning_and_a_json_summary() {
    let frames: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 40]).collect();
    for code in [147u32, 65000] {
        let path = temp(&format!("unsupported-{code}.pcap"), &pcap(code, 65535, &frames));
        let p = path.to_str().unwrap();
        for cmd in ["stats", "check"] {
            let out = run(&[cmd, "--format", "json", p]);
            assert_eq!(out.status.code(), Some(0), "{cmd} {code}");
            let w = warnings(&out);
            assert_eq!(w.len(), 1, "{cmd} {code}: {w:?}");
            assert!(
                w[0].contains(&format!("5 frame(s) not decoded: link type {code} ("))
                    && w[0].contains("is not supported"),
                "{}",
                w[0]
            );
            let j: Value = serde_json::from_slice(&out.stdout).unwrap();
            let u = &j["undecoded"];
            assert_eq!(u.as_array().unwrap().len(), 1, "{cmd} {code}: {u}");
            assert_eq!(u[0]["reason"], "unsupported link type");
            assert_eq!(u[0]["link_type"], code);
            assert_eq!(u[0]["frames"], 5);
            assert_eq!(u[0]["first_frame"], 1);
            assert!(u[0]["message"].as_str().unwrap().contains("not supported"), "{u}");
            // Text too: the warning, once.
            let out = run(&[cmd, p]);
            assert_eq!(warnings(&out).len(), 1, "{cmd} {code} text");
        }
        std::fs::remove_file(&path).unwrap();
    }
}

/// `packet` in an ERF record (type 21, InfiniBand; `record_type` for others).
fn erf_record(record_type: u8, packet: &[u8]) -> Vec<u8> {
    let mut r = vec![0u8; 8];
    r.push(record_type);
    r.push(0);
    r.extend_from_slice(&((16 + packet.len()) as u16).to_be_bytes());
    r.extend_from_slice(&[0, 0]);
    r.extend_from_slice(&(packet.len() as u16).to_be_bytes());
    r.extend_from_slice(packet);
    r
}

/// Native InfiniBand as DLT_INFINIBAND (247) and in ERF records (197): decoded, the same
/// packets either way; an ERF record of a type without a packet is one warning naming it.
#[test]
fn native_infiniband_link_types_are_decoded() {
    use roce_parser::{BthRepr, FrameBuilder, LrhRepr, Network};
    let lrh = LrhRepr { sl: 2, dlid: 7, slid: 3, ..Default::default() };
    let packets: Vec<Vec<u8>> = (0..6u32)
        .map(|i| {
            let bth = BthRepr { opcode: 0x04, dest_qp: 0x11, psn: i, ..Default::default() };
            let mut b = FrameBuilder::new(Network::infiniband(lrh), bth);
            b.payload = b"abcd";
            let mut v = vec![0; b.buffer_len()];
            b.emit(&mut v).unwrap();
            v
        })
        .collect();
    let records: Vec<Vec<u8>> = packets.iter().map(|p| erf_record(21, p)).collect();
    let ib = temp("native-247.pcap", &pcap(247, 65535, &packets));
    let erf = temp("native-197.pcap", &pcap(197, 65535, &records));
    let mut docs = Vec::new();
    for path in [&ib, &erf] {
        let p = path.to_str().unwrap();
        let out = run(&["stats", "--format", "json", p]);
        assert_eq!(warnings(&out), Vec::<String>::new(), "{p}");
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (&j["frames"], &j["infiniband_frames"], &j["roce_frames"]),
            (&json!(6), &json!(6), &json!(0))
        );
        assert_eq!(j["icrc"]["ok"], 6, "{p}");
        assert!(j.get("undecoded").is_none(), "{p}: {j}");
        // Between LIDs, without a GRH: counted, kept out of the connection model, said so.
        assert_eq!(j["infiniband_unmodelled"], 6);
        assert_eq!(j["connections"], json!([]));
        let c: Value =
            serde_json::from_slice(&run(&["check", "--format", "json", p]).stdout).unwrap();
        assert_eq!(c["summary"]["infiniband_unmodelled"], 6, "{p}");
        let text = String::from_utf8(run(&["stats", p]).stdout).unwrap();
        assert!(
            text.contains("6 InfiniBand frames without a GRH are not in the connections"),
            "{text}"
        );
        let out = run(&["dissect", "--format", "jsonl", p]);
        let frames: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|mut v| {
                // The record header makes the lengths differ, and an ERF frame's time is its
                // record's own (0 here, checked below); the packet is the same.
                v.as_object_mut().unwrap().retain(|k, _| k != "caplen" && k != "len" && k != "ts");
                v
            })
            .collect();
        assert_eq!(frames[0]["lrh"]["slid"], 3);
        assert_eq!(frames[5]["roce"]["bth"]["psn"], 5);
        assert_eq!(frames[0]["vcrc"]["status"], "ok");
        docs.push(frames);
    }
    assert_eq!(docs[0], docs[1], "DLT_INFINIBAND and ERF give the same packets");
    let out = run(&["dissect", "--format", "jsonl", "-c", "1", erf.to_str().unwrap()]);
    let first: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(first["ts"], "0.000000000", "the ERF record's time, not the pcap record's");
    // ERF records of types that hold no packet (padding, legacy): one warning naming them.
    let pads: Vec<Vec<u8>> = (0..3).map(|_| erf_record(48, &[0; 8])).collect();
    let pad = temp("erf-pad.pcap", &pcap(197, 65535, &pads));
    let out = run(&["stats", "--format", "json", pad.to_str().unwrap()]);
    let w = warnings(&out);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("3 frame(s) of link type 197 (ERF) not decoded, ERF record type without a packet (first: frame 1: ERF record of type 48 (padding) holds no Ethernet, IP or InfiniBand packet)"), "{}", w[0]);
    for p in [ib, erf, pad] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn the_real_native_infiniband_captures_are_decoded() {
    let Some(real) = real_dir() else { return };
    for (name, frames) in [
        ("magnate3_linux-riscv-dev_ib2.pcap", 127),
        ("srinivaskoritala_rdma-softroce-demo_infiniband.pcap", 43),
    ] {
        let path = real.join(name);
        let out = run(&["stats", "--format", "json", path.to_str().unwrap()]);
        assert_eq!(warnings(&out), Vec::<String>::new(), "{name}");
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["frames"], frames, "{name}");
        assert_eq!(j["infiniband_frames"], frames, "{name}");
        assert_eq!(j["icrc"]["ok"], frames, "{name}: every ICRC verified");
        assert!(j.get("undecoded").is_none(), "{name}");
        let unmodelled = j["infiniband_unmodelled"].as_u64().unwrap_or(0);
        assert!(unmodelled > 0, "{name}: LID-addressed packets");
        let out = run(&["check", "--format", "json", path.to_str().unwrap()]);
        let c: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(c["summary"]["infiniband_frames"], frames);
        assert_eq!(c["summary"]["infiniband_unmodelled"], unmodelled, "{name}");
        // Every packet's VCRC verified, as tshark's infiniband.variant.crc holds it.
        let out = run(&[
            "dissect",
            "-Y",
            "vcrc.status == \"ok\"",
            "-T",
            "fields",
            "-e",
            "frame",
            path.to_str().unwrap(),
        ]);
        assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), frames, "{name}");
    }
}

/// Supported link types with frames of another protocol (ARP over SLL) are counted in the
/// JSON summary but are no warning: they are not damage.
#[test]
fn other_protocols_on_a_supported_link_are_counted_without_a_warning() {
    let mut arp = vec![0, 0, 0, 1, 0, 6, 2, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0, 0x08, 0x06];
    arp.extend_from_slice(&[0; 28]);
    let path = temp("sll-arp.pcap", &pcap(113, 65535, &[arp.clone(), arp]));
    let out = run(&["stats", "--format", "json", path.to_str().unwrap()]);
    assert!(warnings(&out).is_empty(), "{:?}", warnings(&out));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["undecoded"][0]["reason"], "EtherType not IPv4, IPv6 or RoCEv1");
    assert_eq!(j["undecoded"][0]["frames"], 2);
    std::fs::remove_file(&path).unwrap();
}
