//! `check --annotate OUT`: the capture again as pcapng with each finding a packet comment on
//! the frames it cites. tshark (`-Y frame.comment`) lists exactly those frames and texts, and
//! every frame's bytes, lengths, interface and timestamp equal the input's, read with our
//! reader and with tshark: pcap in micro- and nanoseconds, big-endian, gzip, pcapng with
//! several sections (both byte orders) and interfaces (several resolutions), comments of its
//! own and blocks of other types.
//!
//! Without tshark the tshark half skips with a note, except under CI=true, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
use common::{browser, pcapng};

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_conformance::Options;
use roce_parser::Config;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");
/// tshark's separator between several comments of one frame (not in any message).
const AGG: &str = "\u{1e}";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tshark() -> bool {
    let ok = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!browser::ci(), "CI=true but tshark is missing (.ci/run installs it)");
        let _ = writeln!(
            std::io::stderr(),
            "note: skipped the tshark half of the annotation test: tshark is not installed"
        );
    }
    ok
}

/// Every frame as our reader gives it: (ts_ns, caplen, len, link type, interface, bytes).
fn frames(path: &Path) -> Vec<(u64, u32, u32, u32, u32, Vec<u8>)> {
    let mut cap = roce_capture::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(f) = cap.next_frame() {
        let f = f.unwrap();
        v.push((f.ts_ns, f.caplen, f.len, f.link_type.code(), f.interface, f.data.to_vec()));
    }
    v
}

fn tshark_fields(path: &Path, filter: Option<&str>, fields: &[&str]) -> Vec<Vec<String>> {
    let mut c = Command::new("tshark");
    c.arg("-n").arg("-r").arg(path);
    if let Some(f) = filter {
        c.args(["-Y", f]);
    }
    c.args(["-T", "fields", "-E", &format!("aggregator={AGG}"), "-E", "occurrence=a"]);
    for f in fields {
        c.args(["-e", f]);
    }
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "tshark on {}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// Annotates `input` and checks the output against it; `own` are the comments the input
/// holds already, per frame.
fn check_one(input: &Path, dir: &Path, own: &BTreeMap<u64, Vec<String>>, with_tshark: bool) {
    let out =
        dir.join(format!("{}.annotated.pcapng", input.file_name().unwrap().to_str().unwrap()));
    let o = Command::new(BIN).arg("check").arg(input).arg("--annotate").arg(&out).output().unwrap();
    assert!(
        o.status.code().unwrap() <= 1,
        "{}: {}",
        input.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("annotated"));
    let (report, _) =
        roce_inspect::internal::check::check_file(input, &Config::default(), Options::default())
            .unwrap();
    assert!(!report.findings.is_empty(), "{}: pick a capture with findings", input.display());
    let ours = roce_inspect::internal::annotate::comments_of(&report.findings);
    let mut want = own.clone();
    for (n, cs) in &ours {
        want.entry(*n).or_default().extend(cs.iter().cloned());
    }
    // Our reader: every frame the same.
    let (a, b) = (frames(input), frames(&out));
    assert_eq!(a.len(), b.len(), "{}: frame count", input.display());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "{}: frame {}", input.display(), i + 1);
    }
    if !with_tshark {
        return;
    }
    // tshark: the comments, exactly.
    let got: BTreeMap<u64, Vec<String>> =
        tshark_fields(&out, Some("frame.comment"), &["frame.number", "frame.comment"])
            .into_iter()
            .map(|r| (r[0].parse().unwrap(), r[1].split(AGG).map(str::to_string).collect()))
            .collect();
    assert_eq!(got, want, "{}: comments tshark reads", input.display());
    let filtered = tshark_fields(&out, Some("frame.comment contains \"REQ-\""), &["frame.number"]);
    let req = want.iter().filter(|(_, cs)| cs.iter().any(|c| c.contains("REQ-"))).count();
    assert_eq!(filtered.len(), req, "frame.comment contains \"REQ-\"");
    // tshark: times (at the file's precision), lengths, interfaces and bytes the same.
    let fields =
        ["frame.number", "frame.time_epoch", "frame.len", "frame.cap_len", "frame.interface_id"];
    let (ta, tb) = (tshark_fields(input, None, &fields), tshark_fields(&out, None, &fields));
    assert_eq!(ta.len(), a.len());
    for (x, y) in ta.iter().zip(&tb) {
        // A pcap file has no interface ID (one interface): it becomes interface 0.
        let mut x = x.clone();
        if x[4].is_empty() {
            x[4] = "0".into();
        }
        assert_eq!(&x, y, "{}: tshark frame fields {fields:?}", input.display());
    }
}

fn pcap_us(dir: &Path, from: &Path) -> PathBuf {
    // A microsecond little-endian pcap of the same frames (timestamps cut to microseconds).
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&65535u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    for (ts, len, data) in pcapng::frames(from) {
        b.extend_from_slice(&((ts / 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((ts / 1000 % 1_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(&data);
    }
    let p = dir.join("us.pcap");
    std::fs::write(&p, b).unwrap();
    p
}

fn gzip(dir: &Path, from: &Path) -> PathBuf {
    let p = dir.join(format!("{}.gz", from.file_name().unwrap().to_str().unwrap()));
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&std::fs::read(from).unwrap()).unwrap();
    std::fs::write(&p, e.finish().unwrap()).unwrap();
    p
}

/// Two sections (little-, then big-endian), three interfaces (ns, µs, ns), a comment of the
/// capture's own, a name resolution block and a custom block copied through.
fn multi_section(dir: &Path, from: &Path) -> (PathBuf, BTreeMap<u64, Vec<String>>) {
    let frames = pcapng::frames(from);
    let half = frames.len() / 2;
    let mut w = pcapng::Writer::new();
    let mut own = BTreeMap::new();
    w.section(false, &[(4, b"test writer")]);
    w.interface(1, 0, &[(2, b"eth0"), (9, &[9])]);
    w.interface(1, 262144, &[(2, b"eth1"), (9, &[6])]);
    w.other(4, &[0, 0, 0, 0]); // an empty name resolution block
    for (i, (ts, len, data)) in frames[..half].iter().enumerate() {
        let n = i as u64 + 1;
        if i % 2 == 0 {
            if n == 2 || n == 1 {
                own.insert(n, vec!["a comment of the capture's own".to_string()]);
                w.packet(0, *ts, data, *len, &[(1, b"a comment of the capture's own")]);
            } else {
                w.packet(0, *ts, data, *len, &[]);
            }
        } else {
            w.packet(1, ts / 1000, data, *len, &[]);
        }
    }
    w.section(true, &[]);
    w.interface(1, 0, &[(9, &[9]), (2, b"eth2")]);
    w.other(5, &[0; 12]); // an interface statistics block (interface 0, no options)
    for (ts, len, data) in &frames[half..] {
        w.packet(0, *ts, data, *len, &[(2, &[0, 0, 0, 1])]);
    }
    let p = dir.join("multi.pcapng");
    std::fs::write(&p, &w.out).unwrap();
    (p, own)
}

#[test]
fn annotate_keeps_every_frame_and_adds_the_findings() {
    let dir = browser::scratch("annotate");
    let with_tshark = tshark();
    let none = BTreeMap::new();
    let ns = root().join("pcaps/conformance/req-gbn-retx-same.pcap");
    check_one(&ns, &dir, &none, with_tshark);
    check_one(&root().join("pcaps/conformance/req-rnr-wait.pcap"), &dir, &none, with_tshark);
    check_one(&pcap_us(&dir, &ns), &dir, &none, with_tshark);
    check_one(&gzip(&dir, &ns), &dir, &none, with_tshark);
    let (multi, own) = multi_section(&dir, &root().join("pcaps/conformance/req-gbn-new-psn.pcap"));
    check_one(&multi, &dir, &own, with_tshark);
    check_one(&gzip(&dir, &multi), &dir, &own, with_tshark);
    check_one(&with_reserved_blocks(&dir, &ns), &dir, &none, with_tshark);
}

/// `input` as pcapng (through `dissect -w`) with a block of the reserved type 0 after the
/// interface block and after every second packet block: such a block takes no frame number
/// (our reader and tshark skip it), so the comments go to the frames after it unmoved.
fn with_reserved_blocks(dir: &Path, input: &Path) -> PathBuf {
    let ng = dir.join("reserved-source.pcapng");
    let o = Command::new(BIN).arg("dissect").arg("-w").arg(&ng).arg(input).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = pcapng::with_reserved_blocks(&std::fs::read(&ng).unwrap());
    let p = dir.join("reserved.pcapng");
    std::fs::write(&p, out).unwrap();
    p
}

/// Damaged or unreadable input: a clear error naming the file and the offset, no output left.
#[test]
fn annotate_refuses_damage() {
    let dir = browser::scratch("annotate-bad");
    let ns = std::fs::read(root().join("pcaps/conformance/req-gbn-retx-same.pcap")).unwrap();
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &ns[..ns.len() - 7]).unwrap();
    let out = dir.join("out.pcapng");
    let o = Command::new(BIN).arg("check").arg(&cut).arg("--annotate").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cut.pcap") && err.contains("offset"), "{err}");
    assert!(!out.exists(), "a partial output was left");
    let o = Command::new(BIN).arg("check").arg(&cut).arg("--annotate").arg(&cut).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not overwriting"));
}
