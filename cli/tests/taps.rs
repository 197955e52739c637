#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Several captures read as one (`stats A B`, `check A B`): the same capture fed twice with
//! a clock offset is the capture fed once (the offset estimated to the nanosecond, every copy
//! counted once, the same findings frame for frame); two taps on either side of a link, with
//! packets lost between them, give the one-way latency each way and a `CAP-DROP-BETWEEN`
//! naming the frames and the two files; `dissect` shows every frame of every tap, with its
//! file, its number there and the frame it copies (and `-w` saves them as one pcapng, which
//! tshark reads), and `export` writes the same in its packets table, with the loss in its
//! findings; what cannot be read as several taps is refused by name.

mod common;
#[path = "../../testdata/real.rs"]
mod real;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_capture::{Capture, Merge};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn json(args: &[&str]) -> Value {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// A frame of a capture: its time, link type, bytes and (when IP) its addresses.
struct Rec {
    ts: u64,
    link: u32,
    data: Vec<u8>,
    addrs: Option<(IpAddr, IpAddr)>,
    roce: bool,
    /// The BTH's DestQP, when RoCE.
    dest_qp: Option<u32>,
}

fn read(path: &Path) -> Vec<Rec> {
    let cfg = roce_parser::Config::default();
    let mut out = Vec::new();
    roce_analysis::Pass::new(&cfg)
        .run(roce_capture::open(path).unwrap(), |d| {
            let p = d.packet.as_ref().ok();
            out.push(Rec {
                ts: d.frame.ts_ns,
                link: d.frame.link_type.code(),
                data: d.frame.data.to_vec(),
                addrs: p.and_then(roce_conformance::host_pair),
                roce: p.is_some_and(|p| p.roce.is_some()),
                dest_qp: p.and_then(|p| p.roce.as_ref()).map(|r| r.bth.dest_qp),
            });
        })
        .unwrap();
    out
}

/// A nanosecond pcap of `recs` (one link type).
fn write(path: &Path, recs: &[Rec]) {
    let link = recs.first().map_or(1, |r| r.link);
    let mut f = vec![0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    f.extend_from_slice(&262_144u32.to_le_bytes());
    f.extend_from_slice(&link.to_le_bytes());
    for r in recs {
        f.extend_from_slice(&((r.ts / 1_000_000_000) as u32).to_le_bytes());
        f.extend_from_slice(&((r.ts % 1_000_000_000) as u32).to_le_bytes());
        f.extend_from_slice(&(r.data.len() as u32).to_le_bytes());
        f.extend_from_slice(&(r.data.len() as u32).to_le_bytes());
        f.extend_from_slice(&r.data);
    }
    std::fs::write(path, f).unwrap();
}

/// The frames of the merged run, in merge order: (file, number in it).
fn merge_map(files: &[&Path], offsets: &[i64]) -> Vec<(u32, u64)> {
    let caps: Vec<Capture> = files.iter().map(|p| roce_capture::open(p).unwrap()).collect();
    let mut m = Merge::new(caps, offsets);
    let mut out = Vec::new();
    while let Some(f) = m.next_frame() {
        let f = f.unwrap();
        out.push((f.source, f.source_number));
    }
    out
}

fn offsets(doc: &Value) -> Vec<i64> {
    doc["taps"]["taps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["offset_ns"].as_i64().unwrap())
        .collect()
}

/// The merged frame `n` as a number of the first file (the model sees first sightings only,
/// and with the clocks corrected exactly every first sighting of the same capture twice is
/// the first file's).
fn in_first(map: &[(u32, u64)], n: u64) -> u64 {
    let (source, number) = map[(n - 1) as usize];
    assert_eq!(source, 0, "merged frame {n} is a copy's, yet the model took it");
    number
}

/// `text` with every frame number renumbered by `f`: "frame N", "frames N and M",
/// "frames N, M", "frames N..M".
fn renumber(text: &str, f: &dyn Fn(u64) -> u64) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("frame") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let word = if tail.starts_with("frames ") { "frames " } else { "frame " };
        if !tail.starts_with(word) {
            out.push_str("frame");
            rest = &tail[5..];
            continue;
        }
        out.push_str(word);
        rest = &tail[word.len()..];
        // A number, then more after " and ", ", " or "..".
        let mut sep = "";
        loop {
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            if digits == 0 {
                // Not a number after the separator: put it back.
                out.push_str(sep);
                break;
            }
            out.push_str(sep);
            out.push_str(&f(rest[..digits].parse().unwrap()).to_string());
            rest = &rest[digits..];
            match [" and ", ", ", ".."].iter().find(|s| rest.starts_with(**s)) {
                Some(s) => {
                    sep = s;
                    rest = &rest[s.len()..];
                }
                None => break,
            }
        }
    }
    out.push_str(rest);
    out
}

/// `doc` without its `taps` member, every frame number in it renumbered by `f`: members
/// named `frame` or `*_frame` and the lists named `frames` hold frame numbers, and the
/// sentences name them as "frame N".
fn renumbered(doc: &Value, f: &dyn Fn(u64) -> u64) -> Value {
    fn walk(v: &mut Value, key: &str, listed: bool, f: &dyn Fn(u64) -> u64) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    walk(x, k, false, f);
                }
            }
            Value::Array(a) => {
                for x in a.iter_mut() {
                    walk(x, key, true, f);
                }
            }
            // `frames` is a list of frame numbers, or (not in a list) a count of frames.
            Value::Number(n)
                if key == "frame" || key.ends_with("_frame") || (key == "frames" && listed) =>
            {
                if let Some(k) = n.as_u64() {
                    *v = Value::from(f(k));
                }
            }
            Value::String(t) => *t = renumber(t, f),
            _ => {}
        }
    }
    let mut d = doc.clone();
    d.as_object_mut().unwrap().remove("taps");
    walk(&mut d, "", false, f);
    d
}

/// The first member where two documents differ (a readable failure).
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (p, q) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                if let Some(d) = first_difference(p, q, &format!("{at}.{k}")) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]"))),
        _ => (a != b).then(|| format!("{at}: {a} against {b}")),
    }
}

fn assert_same(twice: &Value, once: &Value, what: &str) {
    if let Some(d) = first_difference(twice, once, "") {
        panic!("{what}: fed twice, {d} fed once");
    }
}

/// Each shipped capture (and each real one) fed twice, the second copy 1.234567891 s late:
/// the offset is found to the nanosecond, every frame of the second file is a copy, and
/// `stats`, `check` and `diagnose` say what they say of the capture alone, frame for frame.
#[test]
fn the_same_capture_twice_with_an_offset_is_the_capture_once() {
    const LATE: u64 = 1_234_567_891;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join("pcaps/conformance"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    paths.sort();
    paths.push(root().join("pcaps/sample.pcap"));
    paths.push(root().join("pcaps/sample-erspan.pcap"));
    if let Some(dir) = real::real_dir() {
        let mut r: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
            .collect();
        r.sort();
        paths.extend(r);
    }
    let (mut compared, mut findings_compared, mut frames_compared) = (0, 0, 0);
    for path in &paths {
        let recs = read(path);
        // One link type per file (the pcap written back has one); captures with fewer than
        // two RoCE packets give no copies to estimate the clock from.
        if recs.is_empty()
            || recs.iter().any(|r| r.link != recs[0].link)
            || recs.iter().filter(|r| r.roce).count() < 2
        {
            continue;
        }
        let a = tmp(&format!("twice-a-{}.pcap", path.file_stem().unwrap().to_string_lossy()));
        let b = tmp(&format!("twice-b-{}.pcap", path.file_stem().unwrap().to_string_lossy()));
        write(&a, &recs);
        // An ERF record carries its own timestamp (the frame's time): moved by whole seconds
        // there, so that no rounding of its binary fraction enters.
        let erf = recs[0].link == 197;
        let late_ns = if erf { 2_000_000_000 } else { LATE };
        let late: Vec<Rec> = recs
            .iter()
            .map(|r| {
                let mut data = r.data.clone();
                if erf {
                    let ts = u64::from_le_bytes(data[..8].try_into().unwrap()) + (2u64 << 32);
                    data[..8].copy_from_slice(&ts.to_le_bytes());
                }
                Rec { ts: r.ts + late_ns, data, ..*r }
            })
            .collect();
        write(&b, &late);
        let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
        let once_stats = json(&["stats", "--format", "json", sa]);
        let twice_stats = json(&["stats", "--format", "json", sa, sb]);
        let once = json(&["check", "--format", "json", sa]);
        let twice = json(&["check", "--format", "json", sa, sb]);
        let name = path.display();
        // The clock: estimated exactly (both directions of each host pair matched, the
        // latency cancels), within the microsecond the issue asks for at least.
        let off = offsets(&twice);
        assert_eq!(off[0], 0, "{name}");
        assert!(
            (off[1] + late_ns as i64).abs() <= 1_000,
            "{name}: offset {} for {late_ns} late",
            off[1]
        );
        assert_eq!(offsets(&twice_stats), off, "{name}");
        let taps = &twice_stats["taps"]["taps"];
        let frames = recs.len() as u64;
        assert_eq!(taps[0]["frames"], frames, "{name}");
        assert_eq!(taps[1]["frames"], frames, "{name}");
        assert_eq!(twice_stats["taps"]["drops"], 0, "{name}");
        assert_eq!(
            twice["summary"]["by_rule"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["rule"] == "CAP-DROP-BETWEEN")
                .count(),
            0,
            "{name}"
        );
        let map = merge_map(&[&a, &b], &off);
        let first = |n: u64| in_first(&map, n);
        let same = |n: u64| n;
        assert_same(
            &renumbered(&twice_stats, &first),
            &renumbered(&once_stats, &same),
            &format!("{name}: stats"),
        );
        assert_same(
            &renumbered(&twice, &first),
            &renumbered(&once, &same),
            &format!("{name}: check"),
        );
        // diagnose: the same verdicts, sentences and evidence, frame for frame.
        let once_diag = json(&["diagnose", "--format", "json", sa]);
        let twice_diag = json(&["diagnose", "--format", "json", sa, sb]);
        assert_eq!(offsets(&twice_diag), off, "{name}");
        assert_same(
            &renumbered(&twice_diag, &first),
            &renumbered(&once_diag, &same),
            &format!("{name}: diagnose"),
        );
        compared += 1;
        findings_compared += once["findings"].as_array().unwrap().len();
        frames_compared += recs.len();
        for p in [a, b] {
            std::fs::remove_file(p).unwrap();
        }
    }
    println!(
        "{compared} captures fed twice ({frames_compared} frames, {findings_compared} findings): \
         the same as once"
    );
    assert!(compared >= 60, "{compared} captures compared");
}

/// Tap A beside host X, tap B beside host Y, B's clock 250 us ahead, 1.5 us of wire between
/// them; some packets X -> Y are lost between A and B, some Y -> X between B and A. Both
/// clocks and the latency come out, each loss is a `CAP-DROP-BETWEEN` naming the frame at
/// the tap that saw it and the segment, and the model judges the traffic as one tap alone.
#[test]
fn two_taps_give_the_latency_each_way_and_where_packets_were_lost() {
    let bench = tmp("taps-bench.pcap");
    let s = Command::new(BIN)
        .args(["gen", "bench", "--frames", "20000", "--connections", "8", "-o"])
        .arg(&bench)
        .status()
        .unwrap();
    assert!(s.success());
    let recs = read(&bench);
    // Tap A stands beside the lower address of each host pair, tap B beside the higher.
    const CLOCK: u64 = 250_000;
    const WIRE: u64 = 1_500;
    let (mut at_a, mut at_b) = (Vec::new(), Vec::new());
    let (mut lost_ab, mut lost_ba) = (Vec::new(), Vec::new());
    let (mut from_x_seen, mut from_y_seen) = (0u64, 0u64);
    for (i, r) in recs.iter().enumerate() {
        let number = i as u64 + 1;
        let from_x = r.addrs.is_some_and(|(s, d)| s < d);
        // A sees X's packets at r.ts and Y's WIRE later; B the other way round, on a clock
        // CLOCK ahead.
        let (ta, tb) = if from_x { (r.ts, r.ts + WIRE) } else { (r.ts + WIRE, r.ts) };
        if r.roce {
            if from_x {
                from_x_seen += 1;
            } else {
                from_y_seen += 1;
            }
        }
        // Every 701st RoCE packet from X never reaches B; every 997th from Y never reaches A
        // (never in the first or last 500 frames: the silent tap sees the flow around it).
        let lose = r.roce && (500..recs.len() - 500).contains(&i);
        let lost_to_b = lose && from_x && from_x_seen % 701 == 0;
        let lost_to_a = lose && !from_x && from_y_seen % 997 == 0;
        if !lost_to_a {
            at_a.push(Rec { ts: ta, data: r.data.clone(), ..*r });
        }
        if !lost_to_b {
            at_b.push(Rec { ts: tb + CLOCK, data: r.data.clone(), ..*r });
        }
        if lost_to_b {
            lost_ab.push(number);
        }
        if lost_to_a {
            lost_ba.push(number);
        }
    }
    assert!(lost_ab.len() >= 5 && lost_ba.len() >= 3, "{lost_ab:?} {lost_ba:?}");
    // Each file in its own time order (A's and B's views reorder X's and Y's packets).
    at_a.sort_by_key(|r| r.ts);
    at_b.sort_by_key(|r| r.ts);
    let (a, b) = (tmp("tap-a.pcap"), tmp("tap-b.pcap"));
    write(&a, &at_a);
    write(&b, &at_b);
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let stats = json(&["stats", "--format", "json", sa, sb]);
    let check = json(&["check", "--format", "json", "--max-per-rule", "1000", sa, sb]);
    let taps = &stats["taps"];
    // The clock: B's offset is -CLOCK, the wire cancelling out (both directions seen).
    let off = offsets(&stats);
    assert!((off[1] + CLOCK as i64).abs() <= 1_000, "offset {} for a clock {CLOCK} ahead", off[1]);
    // The latency each way: X's packets A -> B, Y's B -> A, WIRE each (3 significant digits).
    let pair = |from: u64, to: u64| {
        taps["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["from"] == from && p["to"] == to)
            .unwrap_or_else(|| panic!("no pair {from} -> {to}: {}", taps["pairs"]))
            .clone()
    };
    for (from, to, lost) in [(0, 1, &lost_ab), (1, 0, &lost_ba)] {
        let p = pair(from, to);
        let l = &p["latency_ns"];
        for q in ["p50", "p99", "max"] {
            let v = l[q].as_i64().unwrap();
            assert!((v - WIRE as i64).abs() <= 1_000 + 2, "tap {from} -> {to} {q} {v}: {p}");
        }
        assert_eq!(p["drops"], lost.len() as u64, "tap {from} -> {to}: {p}");
        println!(
            "tap {} -> tap {}: {} copies, latency p50 {} ns, p99 {} ns, max {} ns, {} lost between them",
            from + 1,
            to + 1,
            p["copies"],
            l["p50"],
            l["p99"],
            l["max"],
            p["drops"]
        );
    }
    // Each loss is a finding citing the frame at the tap that saw it, naming the segment.
    let map = merge_map(&[&a, &b], &off);
    let file_a: Vec<u64> = {
        // The bench capture's frame number of each of A's frames (A is sorted by its time).
        let mut order: Vec<(u64, u64, bool)> = Vec::new();
        for (i, r) in recs.iter().enumerate() {
            let from_x = r.addrs.is_some_and(|(s, d)| s < d);
            let ta = if from_x { r.ts } else { r.ts + WIRE };
            order.push((ta, i as u64 + 1, lost_ba.contains(&(i as u64 + 1))));
        }
        order.retain(|o| !o.2);
        order.sort_by_key(|o| o.0);
        order.iter().map(|o| o.1).collect()
    };
    let drops: Vec<&Value> = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "CAP-DROP-BETWEEN")
        .collect();
    assert_eq!(drops.len(), lost_ab.len() + lost_ba.len(), "{drops:?}");
    let mut named_ab = Vec::new();
    for f in &drops {
        let m = f["message"].as_str().unwrap();
        let cited = map[(f["frames"][0].as_u64().unwrap() - 1) as usize];
        if m.ends_with(&format!("lost between {sa} and {sb}")) {
            assert_eq!(cited.0, 0, "{m}");
            named_ab.push(file_a[(cited.1 - 1) as usize]);
        } else {
            assert!(m.ends_with(&format!("lost between {sb} and {sa}")), "{m}");
            assert_eq!(cited.0, 1, "{m}");
        }
        assert!(f["connection"].is_object(), "{f}");
    }
    named_ab.sort_unstable();
    assert_eq!(named_ab, lost_ab, "the packets lost between A and B, as the bench numbers them");
    // The model saw every packet once: the traffic's findings are the bench capture's own.
    let alone =
        json(&["check", "--format", "json", "--max-per-rule", "1000", bench.to_str().unwrap()]);
    let rules = |d: &Value| -> Vec<String> {
        d["summary"]["by_rule"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["rule"] != "CAP-DROP-BETWEEN")
            .map(|r| r.to_string())
            .collect()
    };
    assert_eq!(rules(&check), rules(&alone));
    assert_eq!(check["summary"]["roce_frames"], alone["summary"]["roce_frames"]);
    // The text names both taps, the latency and the losses.
    let text = Command::new(BIN).args(["stats", sa, sb]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Taps (2 files read as one"), "{text}");
    assert!(text.contains("packet(s) lost between them"), "{text}");
}

/// Per connection, the latency between the taps: tap B sees each connection's packets a
/// wire time after tap A, a different one per connection, every 10th packet 20 us later
/// still (a tail); the clocks are the same (`--tap-offset 2=0`). Each connection's p50 and
/// p99 are the exact quantiles of what was sent, within 1/16; mean and max exact.
#[test]
fn each_connections_latency_quantiles_are_its_own() {
    let bench = tmp("taps-quantiles-bench.pcap");
    let s = Command::new(BIN)
        .args(["gen", "bench", "--frames", "6000", "--connections", "4", "-o"])
        .arg(&bench)
        .status()
        .unwrap();
    assert!(s.success());
    let recs = read(&bench);
    let mut flows: Vec<(IpAddr, IpAddr, u32)> = Vec::new();
    let mut sent: std::collections::BTreeMap<(IpAddr, IpAddr, u32), Vec<u64>> = Default::default();
    let (mut at_a, mut at_b) = (Vec::new(), Vec::new());
    for (i, r) in recs.iter().enumerate() {
        at_a.push(Rec { data: r.data.clone(), ..*r });
        let (Some((src, dst)), Some(qp), true) = (r.addrs, r.dest_qp, r.roce) else {
            at_b.push(Rec { data: r.data.clone(), ..*r });
            continue;
        };
        let key = (src, dst, qp);
        let k = flows.iter().position(|f| *f == key).unwrap_or_else(|| {
            flows.push(key);
            flows.len() - 1
        }) as u64;
        let wire = 700 + 900 * k + if i % 10 == 0 { 20_000 } else { 0 } + (i as u64 * 37) % 50;
        sent.entry(key).or_default().push(wire);
        at_b.push(Rec { ts: r.ts + wire, data: r.data.clone(), ..*r });
    }
    at_b.sort_by_key(|r| r.ts);
    let (a, b) = (tmp("quantiles-a.pcap"), tmp("quantiles-b.pcap"));
    write(&a, &at_a);
    write(&b, &at_b);
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let stats = json(&["stats", "--format", "json", "--tap-offset", "2=0", sa, sb]);
    let listed = stats["taps"]["connections"].as_array().unwrap();
    assert_eq!(listed.len(), sent.len(), "{}", stats["taps"]);
    let quantile =
        |v: &[u64], q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    let mut spreads = Vec::new();
    for c in listed {
        let key = (
            c["src"].as_str().unwrap().parse().unwrap(),
            c["dst"].as_str().unwrap().parse().unwrap(),
            c["dest_qp"].as_u64().unwrap() as u32,
        );
        let mut want = sent[&key].clone();
        want.sort_unstable();
        let p = &c["pairs"][0];
        assert_eq!((p["from"].as_u64(), p["to"].as_u64()), (Some(0), Some(1)), "{c}");
        assert_eq!(p["copies"], want.len() as u64, "{c}");
        let mean = want.iter().sum::<u64>() / want.len() as u64;
        assert_eq!(p["latency_mean_ns"], mean, "{c}");
        assert_eq!(p["latency_max_ns"], want[want.len() - 1], "{c}");
        for (q, name) in [(0.5, "latency_p50_ns"), (0.99, "latency_p99_ns")] {
            let (exact, got) = (quantile(&want, q), p[name].as_u64().unwrap());
            assert!(got.abs_diff(exact) * 16 <= exact, "{key:?} {name}: {got} against {exact}");
        }
        spreads
            .push((p["latency_p50_ns"].as_u64().unwrap(), p["latency_p99_ns"].as_u64().unwrap()));
    }
    // Four connections, each way: eight medians (900 ns apart), each with its tail at p99.
    spreads.sort_unstable();
    assert_eq!(spreads.len(), 8);
    for w in spreads.windows(2) {
        assert!(w[1].0 > w[0].0 + 500, "{spreads:?}");
    }
    assert!(spreads.iter().all(|(p50, p99)| *p99 > p50 + 15_000), "{spreads:?}");
}

#[test]
fn what_cannot_be_read_as_several_taps_is_refused_by_name() {
    let sample = root().join("pcaps/sample.pcap");
    let s = sample.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(BIN).args(args).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // report and graph read the taps a second time: stdin cannot be one of them, and no
    // tap may be the output (it is left as it was).
    let tap = tmp("refused-tap.pcap");
    std::fs::copy(&sample, &tap).unwrap();
    let t = tap.to_str().unwrap();
    let before = std::fs::read(&tap).unwrap();
    for (cmd, extra) in [("report", &["-o", t][..]), ("graph", &["--conn", "x", "-o", t][..])] {
        let mut args = vec![cmd];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[s, t]);
        let (code, err) = run(&args);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert!(err.contains("refused-tap.pcap: that is"), "{cmd}: {err}");
        assert!(err.contains("which this command reads"), "{cmd}: {err}");
        assert_eq!(std::fs::read(&tap).unwrap(), before, "{cmd} touched a tap");
        let out = tmp(&format!("refused-{cmd}.out"));
        let mut args = vec![cmd];
        args.extend_from_slice(&extra[..extra.len() - 1]);
        args.push(out.to_str().unwrap());
        args.extend_from_slice(&[s, "-"]);
        let (code, err) = run(&args);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert!(err.contains("'-' (stdin) cannot be one of several captures"), "{cmd}: {err}");
        assert!(!out.exists(), "{cmd} left an output");
    }
    let (code, err) = run(&["stats", s, "-"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("'-' (stdin) cannot be one of several captures"), "{err}");
    let (code, err) = run(&["stats", "--tap-offset", "3=1ms", s, s]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("there is no file 3 among the 2 given"), "{err}");
    let (code, err) = run(&["stats", "--tap-offset", "x.pcap=1ms", s, s]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("x.pcap is not one of the files given"), "{err}");
    let (code, err) = run(&["stats", "--tap-window", "0", s, s]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("longer than 0"), "{err}");
    let (code, err) = run(&["stats", "--tap-offset", "2=soon", s, s]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a time"), "{err}");
    let nothing = root().join("pcaps/no-such-*.pcap");
    let (code, err) = run(&["stats", nothing.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no file matches"), "{err}");
    let (code, err) = run(&["check", "--annotate", tmp("annotated.pcap").to_str().unwrap(), s, s]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("2 files"), "{err}");
    let missing = root().join("pcaps/missing.pcap");
    let (code, err) = run(&["stats", s, missing.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("missing.pcap"), "{err}");
}

/// A quoted glob is the files it matches, in name order; a given offset is used as given.
#[test]
fn a_quoted_glob_is_its_files_and_a_given_offset_is_used() {
    let dir = tmp("glob-taps");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let recs = read(&root().join("pcaps/sample.pcap"));
    write(&dir.join("tap1.pcap"), &recs);
    let late: Vec<Rec> =
        recs.iter().map(|r| Rec { ts: r.ts + 5_000, data: r.data.clone(), ..*r }).collect();
    write(&dir.join("tap2.pcap"), &late);
    let pattern = dir.join("tap*.pcap");
    let globbed = json(&["stats", "--format", "json", pattern.to_str().unwrap()]);
    let (t1, t2) = (dir.join("tap1.pcap"), dir.join("tap2.pcap"));
    let listed = json(&["stats", "--format", "json", t1.to_str().unwrap(), t2.to_str().unwrap()]);
    assert_eq!(globbed, listed);
    assert_eq!(globbed["taps"]["taps"][1]["offset_from"], "estimated");
    assert_eq!(globbed["taps"]["taps"][1]["offset_ns"], -5_000);
    let given = json(&[
        "stats",
        "--format",
        "json",
        "--tap-offset",
        "2=-5us",
        t1.to_str().unwrap(),
        t2.to_str().unwrap(),
    ]);
    assert_eq!(given["taps"]["taps"][1]["offset_from"], "given");
    assert_eq!(given["taps"]["taps"][1]["offset_ns"], -5_000);
    assert_eq!(given["taps"]["taps"][1]["copies"], recs.len() as u64);
    // A wrong offset given: no copy matches within a 1 us window, every packet counted twice.
    let wrong = json(&[
        "stats",
        "--format",
        "json",
        "--tap-offset",
        "2=+50us",
        "--tap-window",
        "1us",
        t1.to_str().unwrap(),
        t2.to_str().unwrap(),
    ]);
    assert_eq!(wrong["taps"]["taps"][1]["copies"], 0);
    assert_eq!(wrong["frames"], 2 * recs.len() as u64);
}

/// `dissect A B`: every frame of both taps in time order, numbered in the merge, each with its
/// file, its tap and its number there (`source` in JSON, `FILE:FRAME` in text), a copy naming
/// the merged frame it copies; each object otherwise the single capture's, on the corrected
/// clock, and valid against the frame schema.
#[test]
fn dissect_shows_every_frame_of_every_tap_with_its_source() {
    let (t1, t2, n) = two_taps("dissect-taps");
    let (a, b) = (t1.to_str().unwrap(), t2.to_str().unwrap());
    let lines = |args: &[&str]| {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let once: Vec<Value> = lines(&["dissect", "--format", "jsonl", a])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let merged: Vec<Value> =
        lines(&["dissect", "--format", "jsonl", "--tap-offset", "2=-5us", a, b])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    assert_eq!(merged.len(), 2 * n - 1);
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/schema/frame.schema.json")).unwrap(),
    )
    .unwrap();
    let validator =
        jsonschema::options().with_draft(jsonschema::Draft::Draft202012).build(&schema).unwrap();
    // The merge read here without the command line, the same offset given.
    let map = merge_map(&[&t1, &t2], &[0, -5_000]);
    assert_eq!(map.len(), merged.len());
    // Where each frame of tap 1 went in the merge.
    let mut at_tap1 = std::collections::HashMap::new();
    for (i, doc) in merged.iter().enumerate() {
        let n = i as u64 + 1;
        assert_eq!(doc["frame"], n);
        assert!(validator.is_valid(doc), "merged frame {n}: {doc}");
        let (source, number) = map[i];
        let src = &doc["source"];
        assert_eq!(src["tap"], u64::from(source) + 1, "merged frame {n}");
        assert_eq!(src["frame"], number, "merged frame {n}");
        assert_eq!(src["file"], if source == 0 { a } else { b }, "merged frame {n}");
        // Tap 2's frame k is tap 1's k, or k + 1 after the lost frame 20.
        let original = if source == 1 && number >= 20 { number + 1 } else { number };
        if source == 0 {
            assert_eq!(src["copy_of"], Value::Null, "merged frame {n}");
            at_tap1.insert(number, n);
        } else {
            assert_eq!(src["copy_of"], at_tap1[&original], "merged frame {n}");
        }
        // The rest is the single capture's object of that frame, on tap 1's clock.
        let mut got = doc.clone();
        let mut want = once[(original - 1) as usize].clone();
        got.as_object_mut().unwrap().remove("source");
        got["frame"] = Value::Null;
        want["frame"] = Value::Null;
        assert_eq!(got, want, "merged frame {n}");
    }
    assert_eq!(at_tap1.len(), n);
    // The text says the same: `FILE:FRAME` after the merge's number, and the frame copied.
    let text = lines(&["dissect", "--tap-offset", "2=-5us", a, b]);
    let text: Vec<&str> = text.lines().collect();
    assert_eq!(text.len(), merged.len());
    for (line, doc) in text.iter().zip(&merged) {
        let src = &doc["source"];
        let mut want =
            format!("{} {}:{}", doc["frame"], src["file"].as_str().unwrap(), src["frame"]);
        if let Some(of) = src["copy_of"].as_u64() {
            want.push_str(&format!(" (copy of {of})"));
        }
        assert!(line.trim_start().starts_with(&want), "{line:?} does not start with {want:?}");
    }
    // -V: the tree of a copy opens with where it comes from.
    let tree = lines(&["dissect", "-V", "--tap-offset", "2=-5us", "--frames", "2", a, b]);
    assert!(tree.starts_with(&format!("Frame 2: from {b}:1 (copy of 1)\n")), "{tree}");
    // -T fields: the source.* columns are the JSON's source, empty for a first sighting's
    // copy_of; one capture has none of them.
    let fields = ["-e", "frame", "-e", "source.file", "-e", "source.tap", "-e", "source.frame"];
    let mut args = vec!["dissect", "-T", "fields", "-E", "separator=|"];
    args.extend_from_slice(&fields);
    args.extend_from_slice(&["-e", "source.copy_of", "-e", "bth.psn", "--tap-offset", "2=-5us"]);
    let table = lines(&[&args[..], &[a, b]].concat());
    let table: Vec<&str> = table.lines().collect();
    assert_eq!(table.len(), merged.len());
    for (line, doc) in table.iter().zip(&merged) {
        let src = &doc["source"];
        let copy_of = src["copy_of"].as_u64().map_or(String::new(), |n| n.to_string());
        let want = format!(
            "{}|{}|{}|{}|{copy_of}|{}",
            doc["frame"],
            src["file"].as_str().unwrap(),
            src["tap"],
            src["frame"],
            doc["roce"]["bth"]["psn"]
        );
        assert_eq!(*line, want);
    }
    let one = lines(&[&args[..], &[a]].concat());
    assert!(one.lines().next().is_some_and(|l| l.starts_with("1||||")), "{one}");
    let out =
        Command::new(BIN).args(["dissect", "-T", "fields", "-e", "source", a]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("source.file"), "{out:?}");
}

/// Tap 1: the sample; tap 2: the sample 5 us later, without frame 20 (lost between them).
fn two_taps(name: &str) -> (PathBuf, PathBuf, usize) {
    two_taps_of(name, &root().join("pcaps/sample.pcap"))
}

/// [`two_taps`] of `capture`: tap 1 the capture, tap 2 its frames 5 us later but frame 20.
fn two_taps_of(name: &str, capture: &Path) -> (PathBuf, PathBuf, usize) {
    let dir = tmp(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let recs = read(capture);
    let (t1, t2) = (dir.join("tap1.pcap"), dir.join("tap2.pcap"));
    write(&t1, &recs);
    let late: Vec<Rec> = recs
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 19)
        .map(|(_, r)| Rec { ts: r.ts + 5_000, data: r.data.clone(), ..*r })
        .collect();
    write(&t2, &late);
    (t1, t2, recs.len())
}

/// `diagnose A B` and `report A B`: the sample and a second tap 5 us late without frame 20.
/// diagnose gives the verdicts of the sample alone, connection for connection, and its
/// `lossy_path` names the packet lost between the taps (the frame at tap 1, both files); the
/// report's page, as Chromium renders it, has a Taps section with both files, the copies and
/// the loss, and its findings table names the cited frame as `file:frame`, which an
/// independent merge confirms; `graph` draws a connection of the merge.
#[test]
fn diagnose_and_report_of_two_taps_name_the_loss() {
    let (t1, t2, n) = two_taps("taps-diagnose");
    let (a, b) = (t1.to_str().unwrap(), t2.to_str().unwrap());
    let once = json(&["diagnose", "--format", "json", a]);
    let twice = json(&["diagnose", "--format", "json", a, b]);
    // The same frames and connections, each with the same verdicts.
    assert_eq!(twice["frames"], n as u64);
    assert_eq!(twice["taps"]["taps"][1]["copies"], n as u64 - 1, "{}", twice["taps"]);
    assert_eq!(twice["taps"]["drops"], 1, "{}", twice["taps"]);
    let verdicts = |d: &Value| -> Vec<(String, Vec<String>)> {
        d["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let v = c["verdicts"].as_array().unwrap();
                (
                    c["name"].as_str().unwrap().to_string(),
                    v.iter().map(|v| v["verdict"].as_str().unwrap().to_string()).collect(),
                )
            })
            .collect()
    };
    assert_eq!(verdicts(&twice), verdicts(&once));
    // The merged number of tap 1's frame 20, by an independent merge with the offsets used.
    let map = merge_map(&[&t1, &t2], &offsets(&twice));
    let lost = map.iter().position(|&(f, k)| (f, k) == (0, 20)).unwrap() as u64 + 1;
    let lossy: Vec<&Value> = twice["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["verdicts"].as_array().unwrap())
        .filter(|v| v["verdict"] == "lossy_path" && v["evidence"]["lost_between_taps"] == 1)
        .collect();
    assert_eq!(lossy.len(), 1, "{twice}");
    let v = lossy[0];
    assert!(v["frames"].as_array().unwrap().contains(&Value::from(lost)), "{v}");
    let said = v["summary"].as_str().unwrap();
    assert!(said.contains(&format!("seen at {a}:20, not at {b}")), "{said}");
    assert!(said.contains("CAP-DROP-BETWEEN"), "{said}");
    // Text: the frames after the copies, and the Taps section.
    let out = Command::new(BIN).args(["diagnose", a, b]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("Frames    {n} after {} copies at 2 taps", n - 1)), "{text}");
    assert!(text.contains("1 packet(s) lost between taps (CAP-DROP-BETWEEN)"), "{text}");

    // The report.
    let dir = common::browser::scratch("taps-report");
    let page = dir.join("taps.html");
    let out = Command::new(BIN).args(["report", "-o"]).arg(&page).args([a, b]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Taps (2 captures read as one)"), "no Taps section");
    let cited = format!("{lost} ({a}:20)");
    // The loss's row in the Taps section and the finding's frames both name the frame.
    assert_eq!(html.matches(&cited).count(), 2, "{cited} in the page");
    assert!(html.contains(&format!("{} read at 2 taps, {n} after", 2 * n - 1)), "frames line");
    if let Some(chromium) = common::browser::chromium() {
        let r = common::browser::dump_dom(chromium, &page, &dir);
        assert!(r.console.is_empty(), "console: {:?}", r.console);
        assert!(r.dom.contains("data-ready=\"1\""), "the page's script did not run");
        let rows = table_rows(&r.dom);
        let tap_row = |i: usize, file: &str, frames: usize| {
            rows.iter().any(|c| {
                c.len() == 6 && c[0] == i.to_string() && c[1] == file && c[2] == frames.to_string()
            })
        };
        assert!(tap_row(1, a, n) && tap_row(2, b, n - 1), "tap rows: {rows:?}");
        assert!(
            rows.iter().any(|c| c.len() == 5
                && c[0] == "1"
                && c[1] == "2"
                && c[2] == (n - 1).to_string()
                && c[4] == "1"),
            "pair row: {rows:?}"
        );
    }
    // graph: a connection of the merge, with the loss's mark.
    let svg = dir.join("g.svg");
    let out = Command::new(BIN)
        .args(["graph", "--conn", "10.0.0.1 QP 0x000dc1 <-> 10.0.0.2 QP 0x000d67", "-o"])
        .arg(&svg)
        .args([a, b])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("CAP-DROP-BETWEEN"), "the loss is not marked on the graph");
}

/// `check A B` and `diagnose A B` name every frame they cite with its file and its number
/// there (text: `39 (a.pcap:20)`; JSON: `taps.frames_cited`), as an independent merge with
/// the offsets they report numbers them; on captures whose findings cite many frames.
#[test]
fn check_and_diagnose_name_each_cited_frame_with_its_file() {
    let mut cited_in_all = 0;
    for cap in ["pcaps/conformance/pkt-rules.pcap", "pcaps/conformance/req-gbn-retx-same.pcap"] {
        let name = Path::new(cap).file_stem().unwrap().to_str().unwrap();
        let (t1, t2, _) = two_taps_of(&format!("taps-cited-{name}"), &root().join(cap));
        let (a, b) = (t1.to_str().unwrap(), t2.to_str().unwrap());
        let check = json(&["check", "--format", "json", a, b]);
        let map = merge_map(&[&t1, &t2], &offsets(&check));
        let names = [a, b];
        let mut wanted: Vec<u64> = check["findings"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["frames"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()))
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        assert!(wanted.len() >= 2, "{cap}: {} frames cited", wanted.len());
        let expect: Vec<Value> = wanted
            .iter()
            .map(|&n| {
                let (tap, k) = map[(n - 1) as usize];
                serde_json::json!({"frame": n, "tap": tap, "source_frame": k})
            })
            .collect();
        assert_eq!(check["taps"]["frames_cited"], Value::Array(expect), "{cap}");
        // Text: each finding's frames, named.
        let out = Command::new(BIN).args(["check", a, b]).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for f in check["findings"].as_array().unwrap() {
            let named: Vec<String> = f["frames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| {
                    let n = n.as_u64().unwrap();
                    let (tap, k) = map[(n - 1) as usize];
                    format!("{n} ({}:{k})", names[tap as usize])
                })
                .collect();
            let line = format!("{:<16} frames {}", f["rule"].as_str().unwrap(), named.join(","));
            assert!(text.contains(&line), "{cap}: no '{line}' in\n{text}");
            cited_in_all += named.len();
        }
        // diagnose: the frames its verdicts cite.
        let diag = json(&["diagnose", "--format", "json", a, b]);
        let cited = diag["taps"]["frames_cited"].as_array().unwrap();
        assert!(!cited.is_empty(), "{cap}: diagnose cites nothing");
        for c in cited {
            let n = c["frame"].as_u64().unwrap();
            let (tap, k) = map[(n - 1) as usize];
            assert_eq!(
                (c["tap"].as_u64().unwrap(), c["source_frame"].as_u64().unwrap()),
                (u64::from(tap), k),
                "{cap}: frame {n}"
            );
        }
        let out = Command::new(BIN).args(["diagnose", a, b]).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let c = &cited[0];
        let n = c["frame"].as_u64().unwrap();
        let tap = c["tap"].as_u64().unwrap() as usize;
        let shown = format!("{n} ({}:{})", names[tap], c["source_frame"]);
        assert!(text.contains(&shown), "{cap}: no '{shown}' in\n{text}");
    }
    println!("{cited_in_all} cited frames named with their file");
}

/// The cells' text of every table row of a serialized DOM (`<td>` only: header rows are
/// left out).
fn table_rows(dom: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for tr in dom.split("<tr").skip(1) {
        let tr = tr.split("</tr>").next().unwrap_or("");
        let cells: Vec<String> = tr
            .split("<td")
            .skip(1)
            .map(|td| {
                let td = td.split("</td>").next().unwrap_or("");
                let inner = td.split_once('>').map_or("", |(_, t)| t);
                let mut text = String::new();
                let mut in_tag = false;
                for c in inner.chars() {
                    match c {
                        '<' => in_tag = true,
                        '>' => in_tag = false,
                        c if !in_tag => text.push(c),
                        _ => {}
                    }
                }
                text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
            })
            .collect();
        if !cells.is_empty() {
            rows.push(cells);
        }
    }
    rows
}

/// `export A B`: packets.parquet holds every frame of both taps in the merge's order, each
/// with its file, tap, number there and (a copy) the frame it copies, the other columns the
/// single capture's row of that frame (a copy's `retransmission` and `incarnation` too: its
/// first sighting's, the one the model judged); findings.parquet holds `check A B`'s findings, the loss
/// between the taps among them; connections.parquet the single capture's connections.
#[test]
fn export_of_two_taps_is_the_merge_with_each_frames_source() {
    use common::parquet::rows;
    let (t1, t2, n) = two_taps("export-taps");
    let (a, b) = (t1.to_str().unwrap(), t2.to_str().unwrap());
    let (once, merged) = (tmp("export-taps/once"), tmp("export-taps/merged"));
    let run = |args: &[&str]| {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["export", "-o", once.to_str().unwrap(), a]);
    run(&["export", "--tap-offset", "2=-5us", "-o", merged.to_str().unwrap(), a, b]);
    let single = rows(&once.join("packets.parquet"));
    let got = rows(&merged.join("packets.parquet"));
    assert_eq!(single.len(), n);
    assert_eq!(got.len(), 2 * n - 1);
    let map = merge_map(&[&t1, &t2], &[0, -5_000]);
    let mut at_tap1 = std::collections::HashMap::new();
    let (mut copies_judged, mut copies_retransmitted) = (0, 0);
    for (i, row) in got.iter().enumerate() {
        let k = i as u64 + 1;
        let (source, number) = map[i];
        assert_eq!(row["frame"], k);
        assert_eq!(row["source_file"], if source == 0 { a } else { b }, "row {k}");
        assert_eq!(row["source_tap"], u64::from(source) + 1, "row {k}");
        assert_eq!(row["source_frame"], number, "row {k}");
        let original = if source == 1 && number >= 20 { number + 1 } else { number };
        let mut want = single[(original - 1) as usize].clone();
        if source == 0 {
            assert_eq!(row["source_copy_of"], Value::Null, "row {k}");
            at_tap1.insert(number, k);
        } else {
            assert_eq!(row["source_copy_of"], at_tap1[&original], "row {k}");
            copies_judged += usize::from(row["incarnation"] != Value::Null);
            copies_retransmitted += usize::from(row["retransmission"] == Value::Bool(true));
        }
        let mut row = row.clone();
        for c in ["source_file", "source_tap", "source_frame", "source_copy_of"] {
            row.remove(c);
        }
        row["frame"] = Value::Null;
        want["frame"] = Value::Null;
        assert_eq!(row, want, "row {k}");
    }
    // A copy's row is judged as its first sighting's (the sample's go-back-N resends and
    // its second incarnation among them).
    assert!(
        copies_judged >= 30 && copies_retransmitted >= 3,
        "{copies_judged} {copies_retransmitted}"
    );
    // The findings are `check A B`'s: the sample's and the loss between the taps.
    let check = json(&["check", "--format", "json", "--tap-offset", "2=-5us", a, b]);
    let findings = rows(&merged.join("findings.parquet"));
    let want = check["findings"].as_array().unwrap();
    assert_eq!(findings.len(), want.len());
    let rules = |v: Vec<&Value>| {
        let mut r: Vec<String> = v.iter().map(|x| x.as_str().unwrap().to_string()).collect();
        r.sort();
        r
    };
    assert_eq!(
        rules(findings.iter().map(|f| &f["rule"]).collect()),
        rules(want.iter().map(|f| &f["rule"]).collect())
    );
    let drop: Vec<_> = findings.iter().filter(|f| f["rule"] == "CAP-DROP-BETWEEN").collect();
    assert_eq!(drop.len(), 1);
    // Frame 20 of tap 1 is merged frame 39 (tap 2 has a copy of each of the 19 before it).
    assert_eq!(drop[0]["frame"], at_tap1[&20]);
    // The connections are the single capture's, their frames numbered in the merge (every
    // frame the model took is a first sighting, tap 1's).
    let first = |n: u64| in_first(&map, n);
    let conns = |d: &Path, f: &dyn Fn(u64) -> u64| {
        let mut r: Vec<String> = rows(&d.join("connections.parquet"))
            .into_iter()
            .map(|c| Value::Object(c).to_string())
            .map(|c| renumbered(&serde_json::from_str(&c).unwrap(), f).to_string())
            .collect();
        r.sort();
        r
    };
    assert_eq!(conns(&merged, &first), conns(&once, &|n| n));
    // Two shards of the same run: their rows and their findings add up to it, the loss
    // reported once (by the shard of its host pair), by `export` and by `check`.
    let (mut packets, mut losses, mut checked) = (0, 0, 0);
    for k in ["0/2", "1/2"] {
        let dir = tmp(&format!("export-taps/shard-{}", &k[..1]));
        run(&["export", "--shard", k, "--tap-offset", "2=-5us", "-o", dir.to_str().unwrap(), a, b]);
        packets += rows(&dir.join("packets.parquet")).len();
        let f = rows(&dir.join("findings.parquet"));
        losses += f.iter().filter(|f| f["rule"] == "CAP-DROP-BETWEEN").count();
        let c = json(&["check", "--shard", k, "--format", "json", "--tap-offset", "2=-5us", a, b]);
        checked += c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "CAP-DROP-BETWEEN")
            .count();
    }
    assert_eq!(packets, 2 * n - 1);
    assert_eq!((losses, checked), (1, 1));
    // The second tap is an input too: a table that would replace it is refused, the file
    // kept as it was, nothing written.
    let dir = tmp("export-taps/into-tap");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let victim = dir.join("findings.parquet");
    std::fs::copy(&t2, &victim).unwrap();
    let before = std::fs::read(&victim).unwrap();
    let out = Command::new(BIN)
        .args(["export", "-o", dir.to_str().unwrap(), a, victim.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("which this command reads; not overwriting it"), "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), before);
    assert!(!dir.join("packets.parquet").exists());
}

/// `dissect -w OUT.pcapng A B`: the frames kept, in the merge's order, as one pcapng that our
/// reader and tshark read back: the bytes, lengths and (corrected) times of the merge, one
/// interface per tap named after its file, each frame's comment saying where it comes from;
/// `-Y` selects as without `-w`; a `.pcap` name and an input as the output are refused.
#[test]
fn dissect_w_saves_the_merge_as_one_pcapng() {
    let (t1, t2, n) = two_taps("dissect-w-taps");
    let (a, b) = (t1.to_str().unwrap(), t2.to_str().unwrap());
    let out = tmp("dissect-w-taps/merged.pcapng");
    let o = out.to_str().unwrap();
    let run = |args: &[&str]| {
        let r = Command::new(BIN).args(args).output().unwrap();
        (r.status.code(), String::from_utf8_lossy(&r.stderr).into_owned())
    };
    let (code, err) = run(&["dissect", "-w", o, "--tap-offset", "2=-5us", a, b]);
    assert_eq!(code, Some(0), "{err}");
    // What the merge holds, read here without the command line.
    let mut merge = Merge::new(
        vec![roce_capture::open(&t1).unwrap(), roce_capture::open(&t2).unwrap()],
        &[0, -5_000],
    );
    let mut want = Vec::new();
    while let Some(f) = merge.next_frame() {
        let f = f.unwrap();
        want.push((f.ts_ns, f.caplen, f.len, f.source, f.source_number, f.data.to_vec()));
    }
    assert_eq!(want.len(), 2 * n - 1);
    let mut cap = roce_capture::open(&out).unwrap();
    let mut got = Vec::new();
    while let Some(f) = cap.next_frame() {
        let f = f.unwrap();
        got.push((f.ts_ns, f.caplen, f.len, f.interface, f.data.to_vec()));
    }
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!((g.0, g.1, g.2, g.3, &g.4), (w.0, w.1, w.2, w.3, &w.5), "frame {}", i + 1);
    }
    // tshark: the interfaces' names and the comments.
    let tshark = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if tshark {
        let t = Command::new("tshark")
            .args([
                "-n",
                "-r",
                o,
                "-T",
                "fields",
                "-e",
                "frame.interface_name",
                "-e",
                "frame.comment",
            ])
            .output()
            .unwrap();
        assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
        let lines: Vec<String> =
            String::from_utf8(t.stdout).unwrap().lines().map(String::from).collect();
        assert_eq!(lines.len(), want.len());
        let mut first_at = std::collections::HashMap::new();
        for (i, (line, w)) in lines.iter().zip(&want).enumerate() {
            let file = if w.3 == 0 { a } else { b };
            let mut comment = format!("from {file}:{}", w.4);
            if w.3 == 0 {
                first_at.insert(w.4, i + 1);
            } else {
                let original = if w.4 >= 20 { w.4 + 1 } else { w.4 };
                comment.push_str(&format!(", a copy of frame {}", first_at[&original]));
            }
            assert_eq!(line, &format!("{file}\t{comment}"), "frame {}", i + 1);
        }
    } else {
        assert!(std::env::var("CI").is_err(), "CI=true but tshark is missing");
        eprintln!("note: skipped the tshark half of the test: tshark is not installed");
    }
    // -Y: the frame tap 2 lost, alone.
    let lost = tmp("dissect-w-taps/lost.pcapng");
    let (code, err) =
        run(&["dissect", "-Y", "bth.psn == 3298664", "-w", lost.to_str().unwrap(), a, b]);
    assert_eq!(code, Some(0), "{err}");
    let lost = roce_capture::open(&lost).unwrap().next_frame().map(|f| f.unwrap().data.to_vec());
    assert_eq!(lost.as_deref(), Some(&want.iter().find(|w| w.3 == 0 && w.4 == 20).unwrap().5[..]));
    // Refused: a pcap name; an input as the output (kept as it was).
    let (code, err) = run(&["dissect", "-w", tmp("dissect-w-taps/x.pcap").to_str().unwrap(), a, b]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("name it .pcapng"), "{err}");
    let before = std::fs::read(&out).unwrap();
    let (code, err) = run(&["dissect", "-w", o, a, o]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("which this command reads; not overwriting it"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), before);
}
