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
    let mut v = vec![root().join("pcaps/sample.pcap")];
    let mut suite: Vec<PathBuf> = std::fs::read_dir(root().join("pcaps/conformance"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    suite.sort();
    v.extend(suite);
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
    let want = roce_inspect::export::schema_markdown();
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
