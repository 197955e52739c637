//! `check`'s text report is readable on a capture where one rule fires on every frame: the
//! per-rule summary comes before the detail, `--max-per-rule` lists the first findings of
//! each rule and counts the rest, `--quiet` prints the summary only, `--color` colours the
//! severities (never when NO_COLOR is set or stdout is not a terminal, unless `always`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::process::Command;

use roce_inspect::internal::gen::{Endpoint, RcConn, Trace};

fn ip(d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 9, 0, d))
}

/// 30 SEND_ONLY frames with their ACKs (frames 1..60), every SEND's ICRC broken: 30
/// PKT-ICRC errors.
fn bad_icrc_capture() -> PathBuf {
    let mut t = Trace::new();
    let mut c =
        RcConn::new(Endpoint::new(ip(1), 0x111), Endpoint::new(ip(2), 0x222), 1024, 1000, 5000);
    for _ in 0..30 {
        c.send_or_write(&mut t, true, false, 16, None);
    }
    for f in t.frames.iter_mut().step_by(2) {
        let last = f.data.len() - 1;
        f.data[last] ^= 0xff;
    }
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("roce-inspect-view-{}-{n}.pcap", std::process::id());
    let path = std::env::temp_dir().join(name);
    t.write_pcap(std::fs::File::create(&path).unwrap()).unwrap();
    path
}

fn check(args: &[&str], no_color: bool) -> (String, i32) {
    let path = bad_icrc_capture();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_roce-inspect"));
    cmd.arg("check").args(args).arg(&path);
    if no_color {
        cmd.env("NO_COLOR", "1");
    } else {
        cmd.env_remove("NO_COLOR");
    }
    let out = cmd.output().unwrap();
    std::fs::remove_file(&path).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // The report names the file: name it the same in every run.
    (text.replace(path.to_str().unwrap(), "capture.pcap"), out.status.code().unwrap())
}

fn detail_lines(text: &str) -> usize {
    text.lines().filter(|l| l.trim_start().starts_with("error   PKT-ICRC")).count()
}

#[test]
fn the_summary_comes_first_and_the_detail_is_capped_per_rule() {
    let (text, code) = check(&[], false);
    assert_eq!(code, 1);
    let summary = text.find("Findings by rule").expect("a per-rule summary");
    let first = text.find("error   PKT-ICRC").expect("the detail");
    assert!(summary < first, "summary before detail:\n{text}");
    let line = text.lines().find(|l| l.trim_start().starts_with("PKT-ICRC ")).unwrap();
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols, ["PKT-ICRC", "error", "sender", "30"], "{line}");
    assert_eq!(detail_lines(&text), roce_inspect::internal::check::DEFAULT_MAX_PER_RULE);
    assert!(text.contains("not listed: 20 more PKT-ICRC"), "{text}");
    // The first ones, in capture order: frames 1, 3, ...
    assert!(text.contains("frames 1 PSN 1000:"), "{text}");
}

#[test]
fn max_per_rule_zero_lists_all_and_n_lists_n() {
    let (all, _) = check(&["--max-per-rule", "0"], false);
    assert_eq!(detail_lines(&all), 30);
    assert!(!all.contains("not listed"), "{all}");
    let (three, _) = check(&["--max-per-rule", "3"], false);
    assert_eq!(detail_lines(&three), 3);
    assert!(three.contains("not listed: 27 more PKT-ICRC"), "{three}");
}

#[test]
fn quiet_prints_the_summary_and_keeps_the_exit_status() {
    let (text, code) = check(&["--quiet"], false);
    assert_eq!(code, 1);
    assert_eq!(detail_lines(&text), 0, "{text}");
    assert!(text.contains("30 error(s)"), "{text}");
    assert!(text.contains("PKT-ICRC"), "{text}");
    assert!(!text.contains("Connections"), "{text}");
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    // stdout is a pipe here: auto is plain, always is coloured, NO_COLOR wins over auto.
    let (auto, _) = check(&[], false);
    assert!(!auto.contains('\x1b'), "auto on a pipe wrote escapes");
    let (never, _) = check(&["--color", "never"], false);
    assert!(!never.contains('\x1b'));
    let (always, _) = check(&["--color", "always"], false);
    assert!(always.contains("\x1b[1m\x1b[31merror  \x1b[0m PKT-ICRC"), "{always}");
    let (no_color, _) = check(&["--color", "auto"], true);
    assert!(!no_color.contains('\x1b'));
    // The colour is around the words: without the escapes the text is the plain report.
    let stripped: String = strip(&always);
    assert_eq!(stripped, auto, "{always}");
}

/// The text without ANSI SGR sequences.
fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn dissect_colours_bad_icrcs_only() {
    let path = bad_icrc_capture();
    let run = |color: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(["dissect", "--color", color])
            .arg(&path)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let (plain, coloured) = (run("never"), run("always"));
    std::fs::remove_file(&path).unwrap();
    assert!(!plain.contains('\x1b'));
    let lines: Vec<&str> = coloured.lines().collect();
    assert_eq!(lines.len(), 60);
    // SENDs (odd frames) have a broken ICRC, their ACKs a good one.
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l.contains("\x1b[1m\x1b[31mICRC bad\x1b[0m"), i % 2 == 0, "{l}");
        assert_eq!(l.contains('\x1b'), i % 2 == 0, "{l}");
    }
    assert_eq!(strip(&coloured), plain);
}
