//! Captures from switch mirrors and overlays, wrapped by an independent builder (scapy,
//! cli/tests/encap/wrap_scapy.py): every frame of pcaps/sample.pcap, of the conformance suite
//! and of the real captures (ROCE_INSPECT_REAL_CAPTURES; the Ethernet ones) in ERSPAN I, II,
//! III (with and without the platform subheader, over IPv4 and IPv6), GRE-TEB, VXLAN, Geneve
//! with an option, ERSPAN II around VXLAN, and ERSPAN II truncating at 96 bytes with its T
//! bit set. For each:
//!
//! - `dissect --format jsonl`: every frame's inner layers (Ethernet, VLAN, IP, UDP, RoCE with
//!   its ICRC verdict, problems) are the plain capture's, and `encap` says what was built;
//!   a truncating mirror gives `unverifiable` where the plain frame was `ok`, never `bad`;
//! - `check --format json`: the findings are the plain capture's, frame for frame (the
//!   connection model keys flows by the inner packet); the truncating mirror none that
//!   the plain capture lacks but the ones a cut frame gives (PKT-* checks on lengths);
//! - `stats --format json`: the tunnel counts per kind and per session / VNI are the frames;
//! - tshark, on the sample and four real captures wrapped: the inner BTH (opcode, DestQP,
//!   PSN) and the outer fields it decodes (outer IP source, GRE key and sequence number,
//!   ERSPAN session ID and index, VXLAN and Geneve VNI) equal ours, frame by frame.
//!
//! Needs scapy in target/pyenv (.ci/run installs it from .ci/requirements.txt) or
//! ROCE_INSPECT_PYTHON, and tshark; without them the test skips with a note, except under
//! CI=true, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

#[path = "common/mod.rs"]
mod common;
#[path = "../../testdata/real.rs"]
mod real;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

/// The tunnels a kind builds, outermost first: each one's code and session / VNI.
type Tunnels = &'static [(&'static str, Option<u64>)];

/// What each kind of the script builds.
const KINDS: &[(&str, Tunnels)] = &[
    ("erspan1", &[("erspan1", None)]),
    ("erspan2", &[("erspan2", Some(7))]),
    ("erspan3", &[("erspan3", Some(1001))]),
    ("erspan3-platform", &[("erspan3", Some(1002))]),
    ("gre", &[("gre", None)]),
    ("vxlan", &[("vxlan", Some(5000))]),
    ("geneve", &[("geneve", Some(77))]),
    ("erspan2-vxlan", &[("erspan2", Some(9)), ("vxlan", Some(6000))]),
    ("erspan2-cut", &[("erspan2", Some(8))]),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// An interpreter with scapy importable.
fn python() -> Option<PathBuf> {
    let candidates = std::env::var_os("ROCE_INSPECT_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([root().join("target/pyenv/bin/python")]);
    candidates.into_iter().find(|py| {
        Command::new(py)
            .args(["-c", "import scapy.contrib.erspan, scapy.contrib.geneve"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn run(args: &[&str]) -> String {
    let o = Command::new(BIN).args(args).output().unwrap();
    // `check` exits 1 when it has findings; anything else is a failure.
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn frames(path: &Path) -> Vec<Value> {
    run(&["dissect", "--format", "jsonl", path.to_str().unwrap()])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn findings(path: &Path) -> Value {
    let v: Value =
        serde_json::from_str(&run(&["check", "--format", "json", path.to_str().unwrap()])).unwrap();
    v["findings"].clone()
}

/// The inputs: the shipped captures and the real Ethernet ones.
fn inputs() -> Vec<PathBuf> {
    let mut v = common::shipped::captures();
    if let Some(dir) = real::real_dir() {
        let mut r: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
            .collect();
        r.sort();
        v.extend(r);
    }
    v
}

/// Wraps every input as `kind`, in `dir/kind/`; returns (plain, wrapped) pairs.
fn wrap_all(py: &Path, kind: &str, inputs: &[PathBuf], dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let out = dir.join(kind);
    std::fs::create_dir_all(&out).unwrap();
    let o = Command::new(py)
        .arg(root().join("cli/tests/encap/wrap_scapy.py"))
        .arg(kind)
        .arg(&out)
        .args(inputs)
        .output()
        .unwrap();
    assert!(o.status.success(), "scapy {kind}: {}", String::from_utf8_lossy(&o.stderr));
    inputs
        .iter()
        .filter_map(|p| {
            let name = format!("{}.pcap", p.file_stem().unwrap().to_str().unwrap());
            let w = out.join(name);
            w.exists().then(|| (p.clone(), w))
        })
        .collect()
}

/// The frame object without what a tunnel changes: the lengths, the `encap` list and the
/// offsets of where decoding stopped.
fn inner_view(f: &Value) -> Value {
    let mut f = f.clone();
    let o = f.as_object_mut().unwrap();
    for k in ["caplen", "len", "encap"] {
        o.remove(k);
    }
    if let Some(stop) = o.get_mut("stop").and_then(Value::as_object_mut) {
        for k in ["offset", "message"] {
            stop.remove(k);
        }
    }
    f
}

/// A plain capture's frames and findings, read once for every kind.
type Plain = HashMap<PathBuf, (Vec<Value>, Value)>;

fn check_kind(
    kind: &str,
    tunnels: &[(&str, Option<u64>)],
    pairs: &[(PathBuf, PathBuf)],
    plain_runs: &mut Plain,
) -> (usize, usize) {
    let cut = kind.ends_with("-cut");
    let (mut frames_seen, mut unverifiable) = (0, 0);
    for (plain, wrapped) in pairs {
        let name = format!("{kind} {}", plain.file_name().unwrap().to_str().unwrap());
        let (p, plain_findings) =
            plain_runs.entry(plain.clone()).or_insert_with(|| (frames(plain), findings(plain)));
        let w = frames(wrapped);
        assert_eq!(p.len(), w.len(), "{name}: frames");
        for (a, b) in p.iter().zip(&w) {
            let n = &b["frame"];
            let kinds: Vec<&str> = b["encap"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["kind"].as_str().unwrap())
                .collect();
            let want: Vec<&str> = tunnels.iter().map(|t| t.0).collect();
            assert_eq!(kinds, want, "{name} frame {n}");
            for (e, (_, id)) in b["encap"].as_array().unwrap().iter().zip(tunnels) {
                let got = e["erspan"]["session_id"]
                    .as_u64()
                    .or(e["vxlan"]["vni"].as_u64())
                    .or(e["geneve"]["vni"].as_u64());
                assert_eq!(got, *id, "{name} frame {n}: session / VNI");
            }
            if !cut || a["len"].as_u64() <= Some(96) {
                assert_eq!(inner_view(a), inner_view(b), "{name} frame {n}");
            } else {
                // Cut by the mirror: the headers are the plain frame's, the ICRC cannot be
                // verified, and it is never called bad.
                assert_eq!(a["roce"]["bth"], b["roce"]["bth"], "{name} frame {n}");
                let (sa, sb) = (&a["roce"]["icrc"]["status"], &b["roce"]["icrc"]["status"]);
                if !sa.is_null() {
                    assert_ne!(sb, "bad", "{name} frame {n}");
                    if sa == "ok" {
                        assert_eq!(sb, "unverifiable", "{name} frame {n}");
                        unverifiable += 1;
                    }
                }
            }
            frames_seen += 1;
        }
        if !cut {
            assert_eq!(*plain_findings, findings(wrapped), "{name}: check's findings");
        }
        let stats: Value =
            serde_json::from_str(&run(&["stats", "--format", "json", wrapped.to_str().unwrap()]))
                .unwrap();
        let counted: BTreeMap<String, (u64, Vec<u64>)> = stats["tunnels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let ids = t.get("sessions").or(t.get("vnis")).and_then(Value::as_array);
                let ids = ids
                    .map(|a| a.iter().map(|i| i["id"].as_u64().unwrap()).collect())
                    .unwrap_or_default();
                (t["kind"].as_str().unwrap().to_string(), (t["frames"].as_u64().unwrap(), ids))
            })
            .collect();
        let want: BTreeMap<String, (u64, Vec<u64>)> = tunnels
            .iter()
            .map(|(k, id)| (k.to_string(), (w.len() as u64, id.iter().copied().collect())))
            .collect();
        assert_eq!(counted, want, "{name}: stats' tunnel counts");
    }
    (frames_seen, unverifiable)
}

#[test]
fn mirrored_and_overlaid_captures_give_the_plain_captures_results() {
    let Some(py) = python() else {
        assert!(!ci(), "CI=true but no python with scapy (.ci/run makes target/pyenv)");
        eprintln!("SKIPPED: no python with scapy (run .ci/run, or set ROCE_INSPECT_PYTHON)");
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("encap");
    let _ = std::fs::remove_dir_all(&dir);
    let inputs = inputs();
    // Two kinds at a time: scapy is the slow part.
    let results: Vec<(String, Vec<(PathBuf, PathBuf)>)> = std::thread::scope(|s| {
        let chunks: Vec<_> = KINDS
            .chunks(KINDS.len().div_ceil(2))
            .map(|chunk| {
                let (py, inputs, dir) = (&py, &inputs, &dir);
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(k, _)| (k.to_string(), wrap_all(py, k, inputs, dir)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut plain_runs = Plain::new();
    for ((kind, tunnels), (_, pairs)) in KINDS.iter().zip(&results) {
        let (n, unverifiable) = check_kind(kind, tunnels, pairs, &mut plain_runs);
        eprintln!(
            "{kind}: {} captures, {n} frames checked against the plain ones{}",
            pairs.len(),
            if kind.ends_with("-cut") {
                format!(", {unverifiable} cut from ok to unverifiable")
            } else {
                String::new()
            }
        );
        assert!(
            pairs.len() >= common::shipped::captures().len(),
            "{kind}: every shipped capture wrapped"
        );
        if kind.ends_with("-cut") {
            assert!(unverifiable > 0, "the cut mirror cut some verified frame");
        }
    }
    tshark_agrees(&results);
    // The mirrored sample shipped for the README (made by this script, kind erspan2).
    let shipped = [(root().join("pcaps/sample.pcap"), root().join("pcaps/sample-erspan.pcap"))];
    check_kind("erspan2", KINDS[1].1, &shipped, &mut plain_runs);
}

/// The captures tshark reads wrapped (a tshark run is the slow part): the sample and four
/// real ones, RC, UD and CM traffic between them.
const TSHARK_ON: &[&str] = &[
    "sample.pcap",
    "magnate3_linux-riscv-dev_rdma-nccl2.pcap",
    "magnate3_linux-riscv-dev_rocev2_test.pcap",
    "oferby_proxy_roce.pcap",
    "sanderw71_SoftRoce_RoCE_capture_10_packets.pcapng",
];

/// tshark's reading of the wrapped sample and real captures, field by field.
fn tshark_agrees(results: &[(String, Vec<(PathBuf, PathBuf)>)]) {
    if Command::new("tshark").arg("--version").output().is_err() {
        assert!(!ci(), "CI=true but no tshark");
        eprintln!("SKIPPED: tshark comparison (no tshark)");
        return;
    }
    // (tshark field, the value ours gives, from the frame object)
    type Get = fn(&Value) -> Option<String>;
    let outer = |f: &Value| f["encap"][0].clone();
    let fields: &[(&str, Get)] = &[
        ("infiniband.bth.opcode", |f| f["roce"]["bth"]["opcode"].as_u64().map(|v| v.to_string())),
        ("infiniband.bth.destqp", |f| f["roce"]["bth"]["dest_qp"].as_u64().map(|v| v.to_string())),
        ("infiniband.bth.psn", |f| f["roce"]["bth"]["psn"].as_u64().map(|v| v.to_string())),
        ("erspan.spanid", |f| {
            f["encap"][0]["erspan"]["session_id"].as_u64().map(|v| v.to_string())
        }),
        ("erspan.index", |f| f["encap"][0]["erspan"]["index"].as_u64().map(|v| v.to_string())),
        ("erspan.timestamp", |f| {
            f["encap"][0]["erspan"]["timestamp"].as_u64().map(|v| v.to_string())
        }),
        ("gre.key", |f| f["encap"][0]["gre"]["key"].as_u64().map(|v| v.to_string())),
        ("gre.sequence_number", |f| f["encap"][0]["gre"]["seq"].as_u64().map(|v| v.to_string())),
        ("vxlan.vni", |f| {
            f["encap"]
                .as_array()?
                .iter()
                .find_map(|e| e["vxlan"]["vni"].as_u64())
                .map(|v| v.to_string())
        }),
        ("geneve.vni", |f| f["encap"][0]["geneve"]["vni"].as_u64().map(|v| v.to_string())),
        ("geneve.option.class", |f| {
            f["encap"][0]["geneve"]["options"][0]["class"].as_u64().map(|v| v.to_string())
        }),
    ];
    let mut compared = 0usize;
    let mut plain_tshark: HashMap<PathBuf, Vec<Vec<String>>> = HashMap::new();
    for (kind, pairs) in results {
        for (plain, wrapped) in
            pairs.iter().filter(|(p, _)| TSHARK_ON.iter().any(|n| p.ends_with(n)))
        {
            let ours = frames(wrapped);
            let mut args: Vec<String> = vec![
                "-r".into(),
                wrapped.to_str().unwrap().into(),
                "-T".into(),
                "fields".into(),
                "-E".into(),
                "occurrence=f".into(),
            ];
            args.extend(["-e".into(), "ip.src".into(), "-e".into(), "ipv6.src".into()]);
            for (f, _) in fields {
                args.extend(["-e".into(), f.to_string()]);
            }
            let rows = tshark_rows(wrapped, &args);
            assert_eq!(rows.len(), ours.len(), "{kind} {}: frames", plain.display());
            // tshark on the plain capture: a frame whose BTH it does not decode there (its
            // heuristics, the main tshark test's faults) is not compared on the BTH.
            let plain_rows = plain_tshark.entry(plain.clone()).or_insert_with(|| {
                let mut plain_args = args.clone();
                plain_args[1] = plain.to_str().unwrap().into();
                tshark_rows(plain, &plain_args)
            });
            for ((row, prow), f) in rows.iter().zip(plain_rows.iter()).zip(&ours) {
                let n = &f["frame"];
                // The outer source: tshark's first IP source (IPv4 or IPv6).
                let v6 = outer(f)["ip"]["version"] == 6;
                let src = if v6 { &row[1] } else { &row[0] };
                assert_eq!(
                    Some(src.to_string()),
                    outer(f)["ip"]["src"].as_str().map(str::to_string),
                    "{kind} frame {n}: outer source"
                );
                for (((name, get), t), pt) in fields.iter().zip(&row[2..]).zip(&prow[2..]) {
                    let t = (!t.trim().is_empty()).then(|| parse_num(t.trim()));
                    if name.starts_with("infiniband") {
                        let pt = (!pt.trim().is_empty()).then(|| parse_num(pt.trim()));
                        if !kind.ends_with("-cut") {
                            assert_eq!(
                                t,
                                pt,
                                "{kind} {} frame {n}: tshark's {name} wrapped and plain",
                                plain.display()
                            );
                        }
                        if pt.is_none() || (t.is_none() && kind.ends_with("-cut")) {
                            continue;
                        }
                    }
                    assert_eq!(t, get(f), "{kind} {} frame {n}: {name}", plain.display());
                    compared += usize::from(t.is_some());
                }
            }
        }
    }
    eprintln!("tshark: {compared} field values compared, all equal");
    assert!(compared > 1000, "tshark compared too little: {compared}");
}

/// `tshark -T fields` of `args` (the capture among them), one row of fields per frame.
fn tshark_rows(cap: &Path, args: &[String]) -> Vec<Vec<String>> {
    let o = Command::new("tshark").args(args).output().unwrap();
    assert!(o.status.success(), "tshark {}: {}", cap.display(), String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    text.lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

/// tshark writes numbers in decimal or as 0x hex.
fn parse_num(s: &str) -> String {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap().to_string(),
        None => s.parse::<u64>().map_or_else(|_| s.to_string(), |v| v.to_string()),
    }
}

/// `gen --mirror KIND`: the sample as each encapsulation delivers it, through our builder:
/// the same inner frames and findings as the plain sample, the tunnel and its ID as asked.
#[test]
fn gen_mirror_writes_the_sample_as_each_encapsulation_delivers_it() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gen-mirror");
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("plain.pcap");
    run(&["gen", "sample", "-o", plain.to_str().unwrap()]);
    let (p, plain_findings) = (frames(&plain), findings(&plain));
    for code in ["erspan1", "erspan2", "erspan3", "gre", "vxlan", "geneve"] {
        let w = dir.join(format!("{code}.pcap"));
        run(&["gen", "sample", "--mirror", code, "--mirror-id", "42", "-o", w.to_str().unwrap()]);
        let wf = frames(&w);
        assert_eq!(p.len(), wf.len(), "{code}");
        for (i, (a, b)) in p.iter().zip(&wf).enumerate() {
            assert_eq!(inner_view(a), inner_view(b), "{code} frame {}", i + 1);
            let e = &b["encap"][0];
            assert_eq!(e["kind"], code);
            assert_eq!(e["ip"]["src"], "192.0.2.1");
            let id = e["erspan"]["session_id"]
                .as_u64()
                .or(e["vxlan"]["vni"].as_u64())
                .or(e["geneve"]["vni"].as_u64())
                .or(e["gre"]["key"].as_u64());
            assert_eq!(id, (code != "erspan1").then_some(42), "{code}");
            if code == "erspan2" {
                assert_eq!(
                    e["erspan"]["index"].as_u64(),
                    Some(i as u64),
                    "the index counts frames"
                );
            }
        }
        assert_eq!(plain_findings, findings(&w), "{code}: check's findings");
    }
    let o =
        Command::new(BIN).args(["gen", "sample", "--mirror", "nvgre", "-o", "-"]).output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown encapsulation \"nvgre\"") && err.contains("erspan2"), "{err}");
}
