//! `export` and `--shard K/N`: the Parquet files hold every frame, and the union of N shards'
//! outputs equals the single run's, checked by DuckDB (rows, counts, sums, the recipes of
//! docs/parquet.md) and by Spark in local mode (the recipes over the shards' files).
//!
//! DuckDB and pyspark come from PyPI: `.ci/run` installs them in a venv under target/
//! (`target/pyenv`); `ROCE_INSPECT_PYTHON` names another interpreter. Without them the
//! DuckDB/Spark test skips with a note, except under CI=true, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

#[path = "../../testdata/real.rs"]
mod real;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn tmp(name: &str) -> PathBuf {
    let d =
        std::env::temp_dir().join(format!("roce-inspect-parquet-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn export(capture: &Path, out: &Path, shard: &str) {
    let o = bin()
        .args(["export", "--assume-complete", "--shard", shard, "-o"])
        .arg(out)
        .arg(capture)
        .output()
        .unwrap();
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}: {}",
        capture.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// An interpreter with duckdb (and pyspark) importable.
fn python() -> Option<PathBuf> {
    let candidates = std::env::var_os("ROCE_INSPECT_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([root().join("target/pyenv/bin/python")]);
    for py in candidates {
        let ok = Command::new(&py)
            .args(["-c", "import duckdb, pyspark"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(py);
        }
    }
    None
}

/// The captures the union is checked on: the sample, every conformance capture (findings of
/// every rule) and a generated capture of 64 connections over 16 host pairs.
fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut v = common::shipped::captures();
    let bench = dir.join("bench.pcap");
    let o = bin()
        .args(["gen", "bench", "--frames", "20000", "--connections", "64", "-o"])
        .arg(&bench)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    v.push(bench);
    v
}

const SHARDS: u32 = 3;

#[test]
fn shards_union_equals_the_single_run_in_duckdb_and_spark() {
    let Some(py) = python() else {
        assert!(
            !ci(),
            "CI=true but no python with duckdb and pyspark (.ci/run makes target/pyenv)"
        );
        eprintln!(
            "SKIPPED: no python with duckdb and pyspark (run .ci/run, or set ROCE_INSPECT_PYTHON)"
        );
        return;
    };
    let dir = tmp("union");
    let mut cases = Vec::new();
    for cap in captures(&dir) {
        let name = cap.file_stem().unwrap().to_string_lossy().to_string();
        let single = dir.join(format!("{name}.all"));
        export(&cap, &single, "0/1");
        let shards: Vec<PathBuf> = (0..SHARDS)
            .map(|k| {
                let d = dir.join(format!("{name}.{k}"));
                export(&cap, &d, &format!("{k}/{SHARDS}"));
                d
            })
            .collect();
        cases.push(serde_json::json!({
            "name": name,
            "single": single,
            "shards": shards,
            // Spark's start-up is seconds: one case, the generated capture (every recipe's
            // answer non-empty there or in the suite, see below).
            "spark": name == "bench",
        }));
    }
    let cases_file = dir.join("cases.json");
    std::fs::write(&cases_file, serde_json::to_vec(&cases).unwrap()).unwrap();
    let o = Command::new(&py)
        .arg(root().join("cli/tests/parquet/union.py"))
        .arg(&cases_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "union.py failed:\n{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The recipes answered something somewhere (a query that never matches proves nothing).
    for q in [
        "naks_by_qp",
        "cnp_rate_by_destination",
        "retransmitted_bytes_by_host_pair",
        "findings_by_rule",
    ] {
        let rows: u64 = summary
            .as_object()
            .unwrap()
            .values()
            .map(|c| c[format!("{q}:single")].as_u64().unwrap())
            .sum();
        assert!(rows > 0, "recipe {q} answered nothing on any capture: {summary}");
    }
    assert!(summary["bench"]["naks_by_qp:spark"].is_u64(), "Spark did not run: {summary}");
    // Every shard holds something of the 16 host pairs of the generated capture.
    for k in 0..SHARDS {
        let d = dir.join(format!("bench.{k}/packets.parquet"));
        assert!(std::fs::metadata(&d).unwrap().len() > 10_000, "{} nearly empty", d.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// docs/parquet.md's column tables are the column lists (regenerate with
/// `ROCE_INSPECT_BLESS=1 cargo test -p roce-inspect --test parquet`).
#[test]
fn docs_parquet_md_lists_every_column() {
    let path = root().join("docs/parquet.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- columns: generated -->\n", "<!-- end of columns -->");
    let start = doc.find(begin).expect("docs/parquet.md has the generated marker") + begin.len();
    let stop = doc.find(end).unwrap();
    let want = roce_inspect::internal::export::schema_markdown();
    if std::env::var_os("ROCE_INSPECT_BLESS").is_some() {
        let new = format!("{}{want}{}", &doc[..start], &doc[stop..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        &doc[start..stop],
        want,
        "docs/parquet.md is stale: ROCE_INSPECT_BLESS=1 regenerates it"
    );
    // The recipes the DuckDB/Spark test runs are the document's.
    let py = std::fs::read_to_string(root().join("cli/tests/parquet/union.py")).unwrap();
    for line in py.lines().filter(|l| {
        l.starts_with("SELECT ") || l.starts_with("FROM ") || l.starts_with("GROUP BY ")
    }) {
        assert!(doc.contains(line), "docs/parquet.md lacks the recipe line {line:?}");
    }
}

/// Without DuckDB: `export` writes a row per frame (the count it reports equals `stats`'
/// frames), three Parquet files, and refuses a bad output directory or input with exit 2.
#[test]
fn export_counts_every_frame_and_refuses_bad_output() {
    let dir = tmp("count");
    let cap = root().join("pcaps/sample.pcap");
    let o = bin().args(["export", "-o"]).arg(dir.join("out")).arg(&cap).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stderr).to_string();
    let stats = bin().args(["stats", "--format", "json"]).arg(&cap).output().unwrap();
    let s: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    let frames = s["frames"].as_u64().unwrap();
    assert!(said.contains(&format!(" {frames} packets,")), "{said}");
    for f in ["packets.parquet", "connections.parquet", "findings.parquet"] {
        let bytes = std::fs::read(dir.join("out").join(f)).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"), "{f} is not Parquet");
    }
    // -o naming a file, and a capture that is not there: exit 2, the path named.
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let o = bin().args(["export", "-o"]).arg(&file).arg(&cap).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("a-file"));
    let o = bin()
        .args(["export", "-o"])
        .arg(dir.join("x"))
        .arg(dir.join("missing.pcap"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.pcap"));
    // A bad shard is refused by the command line.
    let o = bin().args(["stats", "--shard", "3/3"]).arg(&cap).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// 20,000 generated frames: packets.parquet gets three row groups (8,192 rows each, the
/// last partial).
fn three_row_groups(dir: &Path) -> PathBuf {
    let cap = dir.join("bench-20000.pcap");
    let o = bin()
        .args(["gen", "bench", "--connections", "16", "--frames", "20000", "-o"])
        .arg(&cap)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    cap
}

/// With 2 and 3 threads the row groups are encoded on a thread of their own (and with 3 the
/// capture is read ahead): the three files are the single thread's, byte for byte, over
/// several row groups, each handed to the encoder while the next fills.
#[test]
fn export_on_the_encoder_thread_writes_the_same_files() {
    let dir = tmp("encoder");
    let cap = three_row_groups(&dir);
    let mut first: Option<Vec<Vec<u8>>> = None;
    for threads in ["1", "2", "3"] {
        let out = dir.join(format!("out-{threads}"));
        let o = bin().args(["export", "--threads", threads, "-o"]).arg(&out).arg(&cap).output();
        let o = o.unwrap();
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(said.contains(" 20000 packets,"), "--threads {threads}: {said}");
        let files: Vec<Vec<u8>> = ["packets.parquet", "connections.parquet", "findings.parquet"]
            .iter()
            .map(|f| std::fs::read(out.join(f)).unwrap())
            .collect();
        match &first {
            None => first = Some(files),
            Some(one) => assert!(one == &files, "export --threads {threads} differs from 1"),
        }
    }
    assert_eq!(common::parquet::rows(&dir.join("out-2/packets.parquet")).len(), 20_000);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A full disk (packets.parquet linked to /dev/full): export stops with exit status 2 and
/// a message naming the file, on one thread and with the encoder thread, which stops at its
/// first failed row group and hands its error back.
#[test]
fn export_to_a_full_disk_names_the_file() {
    if !Path::new("/dev/full").exists() {
        eprintln!("no /dev/full here: skipped");
        return;
    }
    let dir = tmp("full");
    let cap = three_row_groups(&dir);
    for threads in ["1", "2"] {
        let out = dir.join(format!("out-{threads}"));
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink("/dev/full", out.join("packets.parquet")).unwrap();
        let o = bin().args(["export", "--threads", threads, "-o"]).arg(&out).arg(&cap).output();
        let o = o.unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--threads {threads}: {err}");
        assert!(
            err.contains("packets.parquet") && err.contains("No space left"),
            "--threads {threads}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// connections.parquet holds, for every connection `stats --format json` lists, `stats`'
/// counters of it (the same numbers, read back from the file), on captures that have NAKs,
/// RNR NAKs, CNPs, ECN-CE and retransmissions (the sample, the suite's go-back-N capture, a
/// generated capture of 64 connections).
#[test]
fn connections_parquet_counters_are_stats_counters() {
    let dir = tmp("counters");
    let mut caps = vec![root().join("pcaps/sample.pcap")];
    let bench = dir.join("bench.pcap");
    let o = bin()
        .args(["gen", "bench", "--frames", "5000", "--connections", "8", "-o"])
        .arg(&bench)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    caps.push(bench);
    // Timers and congestion known to the nanosecond (cli/src/gen/timers.rs).
    for name in [
        "clean-timing-latencies",
        "clean-timing-timeout-t14",
        "clean-timing-backoff",
        "clean-congestion-pacing",
    ] {
        caps.push(root().join(format!("pcaps/conformance/{name}.pcap")));
    }
    // connections.parquet's timing and congestion columns and the `stats` JSON member each
    // comes from (a summary's field; the timeout count is the list plus those not listed).
    let figures: [(&str, &[&str]); 9] = [
        ("timing_ack_latency_ns_p50", &["timing", "ack_latency_ns", "p50"]),
        ("timing_ack_latency_ns_p99", &["timing", "ack_latency_ns", "p99"]),
        ("timing_ack_latency_ns_max", &["timing", "ack_latency_ns", "max"]),
        ("timing_inferred_timeout_exponent", &["timing", "inferred_timeout_exponent", "exponent"]),
        ("congestion_ce_to_cnp_ns_p50", &["congestion", "ce_to_cnp_ns", "p50"]),
        ("congestion_ce_to_cnp_ns_max", &["congestion", "ce_to_cnp_ns", "max"]),
        ("congestion_cnp_interval_ns_qp_min", &["congestion", "cnp_interval_ns", "qp", "min"]),
        ("congestion_cnp_interval_ns_qp_p50", &["congestion", "cnp_interval_ns", "qp", "p50"]),
        ("ecn_ce", &["congestion", "ce_marked"]),
    ];
    let counters = [
        "bytes",
        "payload_bytes",
        "requests",
        "responses",
        "messages",
        "acks",
        "rnr_naks",
        "cnps",
        "ecn_ce",
        "duration_ns",
        "packets",
        "first_frame",
        "last_frame",
    ];
    let naks = [
        "psn_sequence_error",
        "invalid_request",
        "remote_access_error",
        "remote_operational_error",
        "invalid_rd_request",
        "reserved",
    ];
    let mut nonzero = std::collections::BTreeSet::new();
    for cap in &caps {
        let out = dir.join(cap.file_stem().unwrap());
        export(cap, &out, "0/1");
        let stats = bin().args(["stats", "--format", "json"]).arg(cap).output().unwrap();
        let s: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
        let table = common::parquet::rows(&out.join("connections.parquet"));
        let listed = s["connections"].as_array().unwrap();
        assert_eq!(table.len(), listed.len(), "{}: one row per connection", cap.display());
        for c in listed {
            let id = &c["connection"];
            let row = table
                .iter()
                .find(|r| {
                    r["connection_a"] == id["a"]
                        && r["connection_b"] == id["b"]
                        && r["connection_qpn_a"] == id["qpn_a"]
                        && r["connection_qpn_b"] == id["qpn_b"]
                        && r["connection_incarnation"] == id["incarnation"]
                })
                .unwrap_or_else(|| panic!("{}: no row for {id}", cap.display()));
            for k in counters {
                assert_eq!(row[k], c[k], "{}: {id}: {k}", cap.display());
                if c[k].as_u64().is_some_and(|n| n > 0) {
                    nonzero.insert(k.to_string());
                }
            }
            for k in naks {
                let col = format!("naks_{k}");
                assert_eq!(row[&col], c["naks"][k], "{}: {id}: {col}", cap.display());
                if c["naks"][k].as_u64().is_some_and(|n| n > 0) {
                    nonzero.insert(col);
                }
            }
            for (col, path) in figures {
                // A member that is null (or absent under a null parent) is a null cell.
                let want = path.iter().try_fold(c, |v, k| v.get(*k).filter(|x| !x.is_null()));
                let want = want.cloned().unwrap_or(serde_json::Value::Null);
                assert_eq!(row[col], want, "{}: {id}: {col}", cap.display());
                if !want.is_null() {
                    nonzero.insert(col.to_string());
                }
            }
            assert_eq!(row["cnps"], c["congestion"]["cnps"], "{id}: cnps");
            let t = &c["timing"];
            let timeouts = t["timeout_retransmissions"].as_array().unwrap().len() as u64
                + t["timeout_retransmissions_not_listed"].as_u64().unwrap();
            assert_eq!(row["timing_timeout_retransmissions"], timeouts, "{id}: timeouts");
            if timeouts > 0 {
                nonzero.insert("timing_timeout_retransmissions".into());
            }
            assert_eq!(row["stats_retransmissions"], c["retransmissions"], "{id}");
            if c["retransmissions"].as_u64().is_some_and(|n| n > 0) {
                nonzero.insert("retransmissions".into());
            }
        }
    }
    // The comparison proved something: every kind of event occurred somewhere.
    for k in ["bytes", "acks", "rnr_naks", "cnps", "ecn_ce", "retransmissions"] {
        assert!(nonzero.contains(k), "no capture had {k}: {nonzero:?}");
    }
    assert!(nonzero.contains("naks_psn_sequence_error"), "{nonzero:?}");
    for (col, _) in figures {
        assert!(nonzero.contains(col), "no capture had {col}: {nonzero:?}");
    }
    assert!(nonzero.contains("timing_timeout_retransmissions"), "{nonzero:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn json_of(args: &[&str], cap: &Path) -> serde_json::Value {
    let o = bin().args(args).arg(cap).output().unwrap();
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A table's rows in a canonical order (the union of shards' rows is compared as a multiset).
fn sorted_rows(files: &[PathBuf]) -> Vec<String> {
    let mut v: Vec<String> = files
        .iter()
        .flat_map(|f| common::parquet::rows(f))
        .map(|r| serde_json::Value::Object(r).to_string())
        .collect();
    v.sort();
    v
}

/// `--shard K/N` on every real capture: the union of the shards' `packets.parquet`,
/// `connections.parquet` and `findings.parquet` rows is the single run's (CAP-TIME, one
/// finding per capture, compared as fired-or-not: docs/parquet.md), and the shards' `stats`
/// add up to the single run's, undecoded frames included (they belong to shard 0 only).
#[test]
fn shards_of_the_real_captures_add_up_to_the_single_run() {
    let Some(real) = real::real_dir() else { return };
    let dir = tmp("real-shards");
    let mut caps: Vec<PathBuf> = std::fs::read_dir(&real)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    caps.sort();
    assert!(caps.len() >= 20, "{}: {} captures", real.display(), caps.len());
    let mut native_ib_seen = 0u64;
    let mut split = 0;
    for cap in &caps {
        let name = cap.file_stem().unwrap().to_string_lossy().to_string();
        let single = dir.join(format!("{name}.all"));
        export(cap, &single, "0/1");
        let shards: Vec<PathBuf> = (0..SHARDS)
            .map(|k| {
                let d = dir.join(format!("{name}.{k}"));
                export(cap, &d, &format!("{k}/{SHARDS}"));
                d
            })
            .collect();
        let files = |t: &str| shards.iter().map(|d| d.join(t)).collect::<Vec<_>>();
        for t in ["packets.parquet", "connections.parquet"] {
            assert_eq!(
                sorted_rows(&files(t)),
                sorted_rows(&[single.join(t)]),
                "{name}: the shards' {t} rows are not the single run's"
            );
        }
        let not_cap_time = |rows: Vec<String>| -> (Vec<String>, bool) {
            let fired = rows.iter().any(|r| r.contains("\"rule\":\"CAP-TIME\""));
            (rows.into_iter().filter(|r| !r.contains("\"rule\":\"CAP-TIME\"")).collect(), fired)
        };
        assert_eq!(
            not_cap_time(sorted_rows(&files("findings.parquet"))),
            not_cap_time(sorted_rows(&[single.join("findings.parquet")])),
            "{name}: the shards' findings are not the single run's"
        );
        if shards
            .iter()
            .filter(|d| !common::parquet::rows(&d.join("packets.parquet")).is_empty())
            .count()
            > 1
        {
            split += 1;
        }
        // stats: the shards' frame counts and undecoded groups add up to the single run's.
        let all = json_of(&["stats", "--format", "json"], cap);
        let parts: Vec<serde_json::Value> = (0..SHARDS)
            .map(|k| {
                json_of(&["stats", "--format", "json", "--shard", &format!("{k}/{SHARDS}")], cap)
            })
            .collect();
        for k in ["frames", "roce_frames", "undecoded_frames", "infiniband_frames"] {
            let sum: u64 = parts.iter().map(|p| p[k].as_u64().unwrap_or(0)).sum();
            assert_eq!(sum, all[k].as_u64().unwrap_or(0), "{name}: stats {k}");
        }
        let groups: Vec<&serde_json::Value> =
            parts.iter().flat_map(|p| p["undecoded"].as_array().into_iter().flatten()).collect();
        let want: Vec<&serde_json::Value> =
            all["undecoded"].as_array().into_iter().flatten().collect();
        assert_eq!(groups, want, "{name}: stats' undecoded groups over the shards");
        native_ib_seen += all["infiniband_frames"].as_u64().unwrap_or(0);
    }
    // The comparison had something to split and native InfiniBand (the ERF captures: routed
    // packets placed by their GIDs, the rest by no address) to place.
    assert!(split > 0, "no real capture had host pairs in two shards");
    assert!(native_ib_seen > 0, "no real capture had native InfiniBand frames");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--rows-per-file`: packets.parquet holds at most that many rows (whole row groups) and
/// the frames after them go on in packets-000001.parquet, ...: the parts' rows, in order,
/// are the single file's, on one thread and with the encoder thread. A later export with
/// fewer parts removes the stale ones (a query over packets*.parquet would count them).
#[test]
fn packets_go_on_in_part_files_that_add_up_to_the_single_file() {
    let dir = tmp("parts");
    let cap = three_row_groups(&dir);
    let whole = dir.join("whole");
    let o = bin().args(["export", "-o"]).arg(&whole).arg(&cap).output().unwrap();
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
    let want = common::parquet::rows(&whole.join("packets.parquet"));
    assert_eq!(want.len(), 20_000);
    for threads in ["1", "2"] {
        let out = dir.join(format!("parts-{threads}"));
        let o = bin()
            .args(["export", "--threads", threads, "--rows-per-file", "8000", "-o"])
            .arg(&out)
            .arg(&cap)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(said.contains("20000 packets (packets.parquet and 2 parts)"), "{said}");
        let parts = ["packets.parquet", "packets-000001.parquet", "packets-000002.parquet"];
        let got: Vec<_> = parts.iter().flat_map(|p| common::parquet::rows(&out.join(p))).collect();
        // 8,000 rows round up to one row group of 8,192.
        assert_eq!(common::parquet::rows(&out.join(parts[0])).len(), 8192, "--threads {threads}");
        assert_eq!(got, want, "--threads {threads}: the parts differ from the single file");
        // Again with one file: the stale parts go, the other files stay.
        std::fs::write(out.join("notes.txt"), b"mine").unwrap();
        let o = bin().args(["export", "-o"]).arg(&out).arg(&cap).output().unwrap();
        assert!(o.status.code().is_some_and(|c| c <= 1));
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["connections.parquet", "findings.parquet", "notes.txt", "packets.parquet"],
            "--threads {threads}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The three columns `--raw` adds.
const RAW: [&str; 3] = ["raw", "link_type", "host_pair"];

/// Each frame of a capture as roce-capture reads it: its link type's number and its bytes.
fn captured(path: &Path) -> Vec<(u32, Vec<u8>)> {
    let mut cap = roce_capture::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(f) = cap.next_frame() {
        let f = f.unwrap();
        v.push((f.link_type.code(), f.data.to_vec()));
    }
    v
}

/// A pcapng of two interfaces, Ethernet and raw IP (LINKTYPE_RAW, 101): the sample's first
/// frames on each (on the second without their Ethernet header), and, on the Ethernet one,
/// frames without addresses: an ARP request, an LLDP frame, and 6 bytes (shorter than an
/// Ethernet header: not decoded).
fn mixed_capture(dir: &Path) -> PathBuf {
    let sample = common::pcapng::frames(&root().join("pcaps/sample.pcap"));
    let mut w = common::pcapng::Writer::new();
    w.section(false, &[]);
    w.interface(1, 65_535, &[]);
    w.interface(101, 65_535, &[]);
    let mut ts = 1_000_000u64;
    let mut put = |w: &mut common::pcapng::Writer, iface: u32, data: &[u8]| {
        ts += 10;
        w.packet(iface, ts, data, data.len() as u32, &[]);
    };
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[0x02, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    arp.extend_from_slice(&[0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    let mut lldp = vec![0x01, 0x80, 0xc2, 0, 0, 0x0e, 0x02, 0, 0, 0, 0, 1, 0x88, 0xcc];
    lldp.extend_from_slice(&[0x02, 0x07, 0x04, 0x02, 0, 0, 0, 0, 1, 0, 0]);
    for (i, (_, _, frame)) in sample.iter().enumerate() {
        put(&mut w, 0, frame);
        put(&mut w, 1, &frame[14..]);
        match i {
            1 => put(&mut w, 0, &arp),
            3 => put(&mut w, 0, &lldp),
            5 => put(&mut w, 0, &[0x02, 0, 0, 0, 0, 1]),
            _ => {}
        }
    }
    let path = dir.join("mixed.pcapng");
    std::fs::write(&path, &w.out).unwrap();
    path
}

/// The host-pair hash of a row's addresses (the IP header's, or RoCEv1's GIDs), from its
/// own columns, as the signed BIGINT `host_pair` holds; null without addresses.
fn want_host_pair(row: &serde_json::Map<String, serde_json::Value>) -> serde_json::Value {
    let addr = |k: &str| row[k].as_str().map(|a| a.parse::<std::net::IpAddr>().unwrap());
    let pair = match (addr("ip_src"), addr("ip_dst"), addr("grh_sgid"), addr("grh_dgid")) {
        (Some(a), Some(b), _, _) | (None, None, Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    match pair {
        Some((a, b)) => serde_json::json!(roce_conformance::host_pair_hash(a, b) as i64),
        None => serde_json::Value::Null,
    }
}

/// `export --raw` on the sample, a generated capture of 16 host pairs and a pcapng of two
/// link types with frames without addresses: every row's `raw` is the frame's bytes as
/// roce-capture reads them, `link_type` its interface's, `host_pair` the hash of the row's
/// addresses (10.0.0.1 with 10.0.0.2 the pinned 0x45376971daba9929) or null; the other
/// columns are the rows without --raw, whose file has none of the three. Exported with
/// `--shard K/3`, each row's `host_pair`, unsigned, is K modulo 3 (and the docs' DuckDB
/// recipe says the same, when DuckDB is here).
#[test]
fn export_raw_holds_each_frames_bytes_link_type_and_host_pair() {
    let dir = tmp("raw");
    let bench = dir.join("bench.pcap");
    let o = bin()
        .args(["gen", "bench", "--frames", "5000", "--connections", "16", "-o"])
        .arg(&bench)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let caps = [root().join("pcaps/sample.pcap"), bench.clone(), mixed_capture(&dir)];
    let (mut nulls, mut link_types, mut pinned) = (0, std::collections::BTreeSet::new(), 0);
    for cap in &caps {
        let name = cap.file_stem().unwrap().to_string_lossy().to_string();
        let (with, without) = (dir.join(format!("{name}.raw")), dir.join(format!("{name}.plain")));
        for (out, raw) in [(&with, true), (&without, false)] {
            let mut cmd = bin();
            cmd.args(["export", "-o"]).arg(out).arg(cap);
            if raw {
                cmd.arg("--raw");
            }
            let o = cmd.output().unwrap();
            assert!(
                o.status.code().is_some_and(|c| c <= 1),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let frames = captured(cap);
        let got = common::parquet::rows(&with.join("packets.parquet"));
        let plain = common::parquet::rows(&without.join("packets.parquet"));
        assert_eq!(got.len(), frames.len(), "{name}: a row per frame");
        assert_eq!(plain.len(), frames.len(), "{name}");
        let hashes: std::collections::BTreeSet<String> =
            got.iter().map(|r| r["host_pair"].to_string()).collect();
        for (i, ((link_type, bytes), (row, plain_row))) in
            frames.iter().zip(got.iter().zip(&plain)).enumerate()
        {
            let at = format!("{name} frame {}", i + 1);
            assert_eq!(row["frame"], serde_json::json!(i + 1), "{at}");
            assert_eq!(row["raw"], serde_json::json!(bytes), "{at}: raw");
            assert_eq!(row["caplen"], serde_json::json!(bytes.len()), "{at}");
            assert_eq!(row["link_type"], serde_json::json!(link_type), "{at}: link_type");
            assert_eq!(row["host_pair"], want_host_pair(row), "{at}: host_pair");
            nulls += usize::from(row["host_pair"].is_null());
            link_types.insert(*link_type);
            if row["ip_src"] == "10.0.0.1" && row["ip_dst"] == "10.0.0.2" {
                assert_eq!(row["host_pair"], serde_json::json!(0x4537_6971_daba_9929i64), "{at}");
                pinned += 1;
            }
            // Without --raw: the same row, none of the three columns.
            let mut rest = row.clone();
            RAW.iter().for_each(|k| drop(rest.remove(*k)));
            assert_eq!(&rest, plain_row, "{at}: the columns before --raw's");
            assert!(RAW.iter().all(|k| !plain_row.contains_key(*k)), "{at}: {plain_row:?}");
        }
        if name == "bench" {
            assert!(hashes.len() >= 16, "{name}: {} host pairs", hashes.len());
        }
    }
    // What the comparison covered: frames without addresses, two link types, the pinned pair.
    assert_eq!(nulls, 3, "the ARP, LLDP and short frames");
    assert_eq!(link_types.into_iter().collect::<Vec<_>>(), [1, 101]);
    assert!(pinned > 0);
    // `--shard K/3 --raw`: a row's host_pair, unsigned, modulo 3 is its shard.
    let py = python();
    let doc = std::fs::read_to_string(root().join("docs/parquet.md")).unwrap();
    let recipe = doc
        .lines()
        .skip_while(|l| !l.starts_with("SELECT (host_pair::HUGEINT"))
        .take_while(|l| !l.starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(recipe.contains("% 4 AS shard"), "docs/parquet.md's shard recipe: {recipe:?}");
    let mut total = 0;
    for k in 0..SHARDS {
        let out = dir.join(format!("bench.shard-{k}"));
        let o = bin()
            .args(["export", "--raw", "--shard", &format!("{k}/{SHARDS}"), "-o"])
            .arg(&out)
            .arg(&bench)
            .output()
            .unwrap();
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
        let got = common::parquet::rows(&out.join("packets.parquet"));
        assert!(!got.is_empty(), "shard {k} is empty");
        for row in &got {
            let h = row["host_pair"].as_i64().unwrap() as u64;
            assert_eq!(h % u64::from(SHARDS), u64::from(k), "shard {k}: {}", row["frame"]);
        }
        total += got.len();
        let Some(py) = &py else { continue };
        let file = out.join("packets.parquet");
        let sql = recipe
            .replace("% 4 AS shard", &format!("% {SHARDS} AS shard"))
            .replace("'out/packets.parquet'", &format!("'{}'", file.display()));
        let script =
            format!("import duckdb, json; print(json.dumps(duckdb.sql({sql:?}).fetchall()))");
        let o = Command::new(py).args(["-c", &script]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let answer: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(answer, serde_json::json!([[k, got.len()]]), "the recipe on shard {k}");
    }
    assert_eq!(total, 5000, "the shards' rows are the capture's frames");
    if py.is_none() {
        assert!(!ci(), "CI=true but no python with duckdb (.ci/run makes target/pyenv)");
        eprintln!("SKIPPED: the docs' DuckDB shard recipe (no python with duckdb and pyspark)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
