//! tshark's command-line habits: `-r FILE`, `-c N`, `--frames` lists and ranges (reading
//! stops after the last selected frame), a repeatable `--port`, `-n` accepted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps/sample.pcap")
}

fn run(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (text(out.stdout), text(out.stderr), out.status.code().unwrap())
}

fn frame_numbers(text: &str) -> Vec<u64> {
    text.lines().map(|l| l.split_whitespace().next().unwrap().parse().unwrap()).collect()
}

#[test]
fn read_flag_is_the_positional_file() {
    let p = sample();
    let p = p.to_str().unwrap();
    for cmd in ["dissect", "stats", "check"] {
        let (a, _, ca) = run(&[cmd, p]);
        let (b, _, cb) = run(&[cmd, "-r", p]);
        assert_eq!((a, ca), (b, cb), "{cmd} -r");
    }
    let (_, err, code) = run(&["dissect", "-r", p, p]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot be used with"), "{err}");
    let (_, err, code) = run(&["dissect"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn frame_lists_count_and_n() {
    let p = sample();
    let p = p.to_str().unwrap();
    let (out, _, _) = run(&["dissect", "--frames", "1-3,7,37-", "-n", p]);
    assert_eq!(frame_numbers(&out), [1, 2, 3, 7, 37, 38, 39]);
    let (out, _, _) = run(&["dissect", "-c", "4", p]);
    assert_eq!(frame_numbers(&out), [1, 2, 3, 4]);
    let (out, _, _) = run(&["dissect", "-c", "4", "--frames", "3-", p]);
    assert_eq!(frame_numbers(&out), [3, 4]);
    for (bad, why) in [
        ("", "empty frame list"),
        ("9-3", "'9-3' is an empty range"),
        ("1,,2", "empty item"),
        ("0", "numbered from 1"),
    ] {
        let (_, err, code) = run(&["dissect", "--frames", bad, p]);
        assert_eq!(code, 2, "{bad:?}");
        assert!(err.contains(why), "{bad:?}: {err}");
    }
}

/// Reading stops after the last selected frame: with the capture on a pipe whose writer
/// never closes it, `dissect --frames 2,4` still ends (a reader that read on would wait for
/// the end of the input forever).
#[test]
fn reading_stops_after_the_last_selected_frame() {
    let bytes = std::fs::read(sample()).unwrap();
    for args in [&["--frames", "2,4"][..], &["-c", "4"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .arg("dissect")
            .args(args)
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&bytes).unwrap();
        stdin.flush().unwrap();
        // The writer holds the pipe open while the command runs to its end.
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let want: &[u64] = if args[0] == "-c" { &[1, 2, 3, 4] } else { &[2, 4] };
        assert_eq!(frame_numbers(&String::from_utf8(out.stdout).unwrap()), want);
        drop(stdin);
    }
}

#[test]
fn repeatable_port_decodes_each() {
    let p = sample();
    let p = p.to_str().unwrap();
    let roce = |args: &[&str]| {
        let (out, _, _) = run(&[&["stats"], args, &[p]].concat());
        out.lines().find(|l| l.starts_with("Frames")).unwrap().to_string()
    };
    let default = roce(&[]);
    assert!(default.contains("(39 RoCE"), "{default}");
    assert!(roce(&["--port", "4792"]).contains("(0 RoCE"));
    assert_eq!(roce(&["--port", "4792", "--port", "4791"]), default);
    let (_, err, code) = run(&["stats", "--port", "0", p]);
    assert_eq!(code, 2, "{err}");
    let five = ["--port", "1", "--port", "2", "--port", "3", "--port", "4", "--port", "5"];
    // Every command that takes --port refuses a fifth (export decoded the first four
    // silently before).
    let dir = std::env::temp_dir().join(format!("roce-inspect-ports-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    for cmd in [
        &["stats"][..],
        &["check"],
        &["dissect"],
        &["report", "-o", "-"],
        &["graph", "--conn", "x", "-o", "-"],
        &["export", "-o", d],
    ] {
        let (_, err, code) = run(&[cmd, &five[..], &[p]].concat());
        assert_eq!(code, 2, "{cmd:?}: {err}");
        assert!(err.contains("at most 4 RoCEv2 ports"), "{cmd:?}: {err}");
    }
    assert!(!dir.exists(), "export wrote its folder before refusing the ports");
}

/// tshark, or None (with a note) when it is not installed; under CI=true it must be.
fn tshark() -> Option<&'static str> {
    let found = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "CI=true: tshark is required");
        eprintln!("note: tshark not found, skipping the comparison with tshark -x / -t");
        return None;
    }
    Some("tshark")
}

fn tshark_out(args: &[&str]) -> String {
    let out = Command::new("tshark").args(args).output().unwrap();
    assert!(out.status.success(), "tshark {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `-x` prints each frame's bytes exactly as tshark -x does (our summary line above each
/// dump aside); `-t e` and `-t ad` give tshark's `-t e` and `-t ud` times, on every frame.
#[test]
fn hex_dump_and_times_are_tsharks() {
    let Some(ts) = tshark() else { return };
    for name in ["sample.pcap", "conformance/cap-time-burst.pcap", "conformance/req-psn-skip.pcap"]
    {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps").join(name);
        let p = p.to_str().unwrap();
        let ours = run(&["dissect", "-x", p]).0;
        let hex: String = ours
            .lines()
            .filter(|l| l.is_empty() || l.starts_with(|c: char| c.is_ascii_hexdigit()))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(hex, tshark_out(&["-r", p, "-x"]), "{name}: -x");
        let time = |line: &str, words: usize| -> String {
            line.split_whitespace().skip(1).take(words).collect::<Vec<_>>().join(" ")
        };
        for (ours, theirs, words) in [("e", "e", 1), ("ad", "ud", 2)] {
            let a: Vec<String> =
                run(&["dissect", "-t", ours, p]).0.lines().map(|l| time(l, words)).collect();
            let b: Vec<String> = tshark_out(&["-r", p, "-t", theirs, "-T", "tabs"])
                .lines()
                .map(|l| time(l, words))
                .collect();
            assert_eq!(a, b, "{name}: -t {ours} against {ts} -t {theirs}");
        }
    }
}
