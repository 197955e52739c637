//! `-c N` and `--frames LIST` on `stats`, `check`, `export`, `report` and `graph`: the
//! command sees only those frames, as if the capture held nothing else.
//!
//! The reference is a real cut capture: `dissect -c N -w cut.pcap` writes the first N
//! records byte for byte, and every command on the cut file must say exactly what it says
//! with `-c N` on the whole one (the JSON's `window` member aside).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;
use common::shipped::captures;

fn run(args: &[&str]) -> (Vec<u8>, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap();
    (out.stdout, String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code().unwrap())
}

fn tempdir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roce-inspect-window-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(args: &[&str]) -> Value {
    let (out, err, code) = run(args);
    assert!(code < 2, "{args:?}: {err}");
    serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn frames_in(cap: &Path) -> u64 {
    json(&["stats", "--format", "json", cap.to_str().unwrap()])["frames"].as_u64().unwrap()
}

/// The first `n` frames of `cap`, as their own capture.
fn cut(cap: &Path, n: u64, dir: &Path) -> PathBuf {
    let out = dir.join(format!("{}-{n}.pcap", cap.file_stem().unwrap().to_string_lossy()));
    let (_, err, code) =
        run(&["dissect", "-c", &n.to_string(), "-w", out.to_str().unwrap(), cap.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    out
}

/// `stats` and `check` (JSON, and the exit status) with `-c N` equal the same command on
/// the first N frames written out, on every shipped capture and three cut points.
#[test]
fn count_is_the_capture_cut_after_n_frames() {
    let dir = tempdir("count");
    let mut compared = 0;
    for cap in captures() {
        let total = frames_in(&cap);
        let c = cap.to_str().unwrap();
        for n in [1, total / 2, total.saturating_sub(1)] {
            if n == 0 {
                continue;
            }
            let short = cut(&cap, n, &dir);
            let s = short.to_str().unwrap();
            let ns = n.to_string();
            for cmd in ["stats", "check"] {
                let (a, err_a, code_a) = run(&[cmd, "--format", "json", "-c", &ns, c]);
                let (b, err_b, code_b) = run(&[cmd, "--format", "json", s]);
                assert_eq!(code_a, code_b, "{cmd} -c {n} {c}: {err_a} / {err_b}");
                let mut a: Value = serde_json::from_slice(&a).unwrap();
                let b: Value = serde_json::from_slice(&b).unwrap();
                let window = a.as_object_mut().unwrap().remove("window");
                assert_eq!(window, Some(serde_json::json!({ "count": n })), "{cmd} -c {n} {c}");
                assert_eq!(a, b, "{cmd} -c {n} {c} against the capture cut after {n} frames");
                compared += 1;
            }
        }
        // The reader thread applies the window as the single-thread loop does.
        let list = format!("2-{},{}-", total / 2, total / 2 + 2);
        for cmd in ["stats", "check"] {
            let one = run(&[cmd, "--format", "json", "--frames", &list, "-c", "40", c]);
            for threads in ["2", "3"] {
                let more = run(&[
                    cmd,
                    "--threads",
                    threads,
                    "--format",
                    "json",
                    "--frames",
                    &list,
                    "-c",
                    "40",
                    c,
                ]);
                assert!(more == one, "{cmd} --threads {threads} --frames {list} -c 40 {c}");
            }
        }
    }
    assert!(compared > 200, "{compared} comparisons");
}

/// `export -c N` writes the same Parquet files, byte for byte, as `export` of the cut capture.
#[test]
#[cfg(feature = "parquet")]
fn export_count_is_the_capture_cut() {
    let dir = tempdir("export");
    for name in
        ["sample.pcap", "conformance/req-psn-skip.pcap", "conformance/cm-reconnect-faults.pcap"]
    {
        let cap = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps").join(name);
        let n = frames_in(&cap) / 2;
        let short = cut(&cap, n, &dir);
        let (a, b) = (dir.join("a"), dir.join("b"));
        let (_, err, code) = run(&[
            "export",
            "-c",
            &n.to_string(),
            cap.to_str().unwrap(),
            "-o",
            a.to_str().unwrap(),
        ]);
        assert!(code < 2, "{err}");
        let (_, err, code) = run(&["export", short.to_str().unwrap(), "-o", b.to_str().unwrap()]);
        assert!(code < 2, "{err}");
        for file in ["packets.parquet", "connections.parquet", "findings.parquet"] {
            let (x, y) =
                (std::fs::read(a.join(file)).unwrap(), std::fs::read(b.join(file)).unwrap());
            assert!(x == y, "{name}: {file} of export -c {n} differs from the cut capture's");
        }
        std::fs::remove_dir_all(&a).unwrap();
        std::fs::remove_dir_all(&b).unwrap();
    }
}

/// `--frames A-B`: only those frames are read and judged: the counts are theirs, every
/// finding and connection lies inside, and frames outside change nothing.
#[test]
fn frames_is_a_window_of_the_capture() {
    let mut windows = 0;
    for cap in captures() {
        let total = frames_in(&cap);
        if total < 6 {
            continue;
        }
        let c = cap.to_str().unwrap();
        let (a, b) = (total / 3, 2 * total / 3);
        let list = format!("{a}-{b}");
        let check = json(&["check", "--format", "json", "--frames", &list, c]);
        assert_eq!(check["summary"]["frames"].as_u64(), Some(b - a + 1), "{c} --frames {list}");
        assert_eq!(check["window"]["frames"], list.as_str());
        for f in check["findings"].as_array().unwrap() {
            for n in f["frames"].as_array().unwrap() {
                let n = n.as_u64().unwrap();
                assert!((a..=b).contains(&n), "{c} --frames {list}: a finding cites frame {n}");
            }
        }
        for conn in check["connections"].as_array().unwrap() {
            let (first, last) = (conn["first_frame"].as_u64(), conn["last_frame"].as_u64());
            assert!(first >= Some(a) && last <= Some(b), "{c} --frames {list}: {conn}");
        }
        let stats = json(&["stats", "--format", "json", "--frames", &list, c]);
        assert_eq!(stats["frames"].as_u64(), Some(b - a + 1));
        // Two pieces and the frames between them: the same as the range read whole.
        let split = format!("{a}-{},{}-{b}", a + 1, a + 2);
        let again = json(&["stats", "--format", "json", "--frames", &split, c]);
        let mut again = again.as_object().unwrap().clone();
        let mut once = stats.as_object().unwrap().clone();
        again.remove("window");
        once.remove("window");
        assert_eq!(again, once, "{c}: --frames {split} is --frames {list}");
        windows += 1;
    }
    assert!(windows > 50, "{windows} captures windowed");
}

/// The text reports and the HTML report say what was read; `--expect`, `--write-expect` and
/// `--nic-counters` refuse a window (they describe the whole capture); bad lists are refused.
#[test]
fn windows_are_stated_and_refused_where_they_would_mislead() {
    let dir = tempdir("said");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps/sample.pcap");
    let s = sample.to_str().unwrap();
    let said = "read only the frames of --frames 5-20 and -c 12";
    for cmd in ["stats", "check"] {
        let (out, err, code) = run(&[cmd, "--frames", "5-20", "-c", "12", s]);
        assert!(code < 2, "{err}");
        assert!(String::from_utf8_lossy(&out).contains(said), "{cmd}");
    }
    let html = dir.join("r.html");
    let (_, err, code) =
        run(&["report", "--frames", "5-20", "-c", "12", s, "-o", html.to_str().unwrap()]);
    assert!(code < 2, "{err}");
    assert!(std::fs::read_to_string(&html).unwrap().contains(said));

    let expect = dir.join("x.expect.json");
    for args in [
        vec!["check", "-c", "5", "--write-expect", expect.to_str().unwrap(), s],
        vec!["check", "--frames", "1-5", "--expect", expect.to_str().unwrap(), s],
    ] {
        let (_, err, code) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("cannot be used with --expect or"), "{err}");
    }
    assert!(!expect.exists());
    let nic = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/nic-counters");
    let (b, a) = (nic.join("before.txt"), nic.join("after-disagree.txt"));
    let (_, err, code) = run(&[
        "stats",
        "-c",
        "9",
        s,
        "--nic-counters",
        b.to_str().unwrap(),
        a.to_str().unwrap(),
        "--nic-host",
        "10.0.0.2",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--nic-counters") && err.contains("-c or --frames"), "{err}");
    for bad in ["", "0", "9-3", "x", "3,,4"] {
        let (_, err, code) = run(&["check", "--frames", bad, s]);
        assert_eq!(code, 2, "--frames '{bad}'");
        assert!(err.contains("--frames"), "--frames '{bad}': {err}");
    }
    let (_, err, code) = run(&["stats", "-c", "0", s]);
    assert_eq!(code, 2, "{err}");
}
