//! `check --expect` / `--write-expect` against wrong and hostile files, on a real capture
//! (`ROCE_INSPECT_REAL_CAPTURES`; without it, on a committed conformance capture, and the
//! skip is reported): an unknown rule ID, a PMTU `--pmtu` refuses, a JSON error (file, line
//! and column), `--format json` with either, writing over the capture or over another
//! capture, a huge, deeply nested or 10^6-finding file, a finding's frames empty or 0
//! (refused) or out of order or repeated (read sorted, with a warning naming the finding),
//! text of the file echoed quoted (escape sequences escaped, 100 KB cut to 80 characters).
//! Every refusal is exit 2 with the file named; a UTF-8 BOM is accepted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../../testdata/real.rs"]
mod real;

/// A real capture with two reviewed findings (REQ-PSN, RSP-DUP; see check_real.rs).
const REAL: &str = "sanderw71_SoftRoce_rping_3072_faillire.pcapng";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The real capture, or a committed one when the real captures are not configured.
fn capture() -> PathBuf {
    static CAPTURE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CAPTURE
        .get_or_init(|| match real::real_dir() {
            Some(d) => d.join(REAL),
            None => root().join("pcaps/conformance/clean-sample.pcap"),
        })
        .clone()
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("roce-expect-{}-{name}", std::process::id()))
}

/// Exit code, stdout, stderr.
fn run(args: &[&Path]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn p(s: &str) -> &Path {
    Path::new(s)
}

/// The expect file of the capture, as `--write-expect` writes it.
fn written(name: &str) -> (PathBuf, String) {
    let cap = capture();
    let e = tmp(name);
    let (code, out, err) = run(&[p("check"), &cap, p("--write-expect"), &e]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&e).unwrap();
    (e, text)
}

fn expect(e: &Path) -> (i32, String, String) {
    run(&[p("check"), &capture(), p("--expect"), e])
}

#[test]
fn written_file_replays_and_a_bom_is_accepted() {
    let (e, text) = written("roundtrip.json");
    let (code, out, err) = expect(&e);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("as expected"), "{out}");
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(text.as_bytes());
    std::fs::write(&e, bom).unwrap();
    let (code, out, err) = expect(&e);
    assert_eq!(code, 0, "a BOM is refused: {out}{err}");
    std::fs::remove_file(&e).unwrap();
}

#[test]
fn unknown_rule_is_refused() {
    let e = tmp("unknown-rule.json");
    for (rule, says) in
        [("NO-SUCH-RULE", "roce-inspect rules"), ("req-psn", "did you mean 'REQ-PSN'")]
    {
        let text = format!(r#"{{"findings": [{{"rule": "{rule}", "frames": [1]}}]}}"#);
        std::fs::write(&e, text).unwrap();
        let (code, out, err) = expect(&e);
        assert_eq!(code, 2, "{rule}: {out}{err}");
        assert!(err.contains(&e.display().to_string()), "file not named: {err}");
        assert!(err.contains(&format!("findings[0]: unknown rule '{rule}'")), "{err}");
        assert!(err.contains(says), "{err}");
    }
    std::fs::remove_file(&e).unwrap();
}

#[test]
fn pmtu_is_validated_as_pmtu_is() {
    let (e, text) = written("pmtu.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for (pmtu, ok) in [(0, false), (1, false), (1000, false), (4097, false), (1024, true)] {
        let mut v = v.clone();
        v["options"]["pmtu"] = pmtu.into();
        std::fs::write(&e, v.to_string()).unwrap();
        let (code, out, err) = expect(&e);
        if ok {
            assert_ne!(code, 2, "PMTU {pmtu} refused: {out}{err}");
        } else {
            assert_eq!(code, 2, "PMTU {pmtu} accepted: {out}{err}");
            assert!(err.contains(&e.display().to_string()), "{err}");
            assert!(
                err.contains(&format!("options.pmtu: {pmtu} is not a PMTU: use 256, 512")),
                "{err}"
            );
        }
    }
    std::fs::remove_file(&e).unwrap();
}

#[test]
fn network_options_are_validated_and_written() {
    // Out of range in a file: refused, the option and the range named.
    let (e, text) = written("net.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for (name, value, says) in [
        ("expect_dscp", 64, "options.expect_dscp: 64 is not a DSCP (0..63)"),
        ("expect_cnp_dscp", 200, "options.expect_cnp_dscp: 200 is not a DSCP (0..63)"),
        ("expect_pcp", 8, "options.expect_pcp: 8 is not an 802.1Q PCP (0..7)"),
    ] {
        let mut v = v.clone();
        v["options"][name] = value.into();
        std::fs::write(&e, v.to_string()).unwrap();
        let (code, out, err) = expect(&e);
        assert_eq!(code, 2, "{name} {value} accepted: {out}{err}");
        assert!(err.contains(&e.display().to_string()) && err.contains(says), "{err}");
    }
    std::fs::remove_file(&e).unwrap();
    // Out of range on the command line: clap refuses it.
    for (flag, value) in
        [("--expect-dscp", "64"), ("--expect-cnp-dscp", "64"), ("--expect-pcp", "8")]
    {
        let (code, out, err) = run(&[p("check"), &capture(), p(flag), p(value)]);
        assert_eq!(code, 2, "{flag} {value}: {out}{err}");
        assert!(err.contains(flag) && err.contains(value), "{err}");
    }
    // What --write-expect records, --expect replays: the suite's net-pcp with its options.
    let cap = root().join("pcaps/conformance/net-pcp.pcap");
    let e = tmp("net-written.json");
    let args = ["--expect-dscp", "26", "--expect-cnp-dscp", "46", "--expect-pcp", "3"];
    let mut all: Vec<&Path> = vec![p("check"), &cap, p("--write-expect"), &e];
    all.extend(args.iter().map(|a| p(a)));
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{out}{err}");
    let w: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&e).unwrap()).unwrap();
    assert_eq!(w["options"]["expect_dscp"], 26);
    assert_eq!(w["options"]["expect_cnp_dscp"], 46);
    assert_eq!(w["options"]["expect_pcp"], 3);
    let rules: Vec<&str> =
        w["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, ["NET-PCP"; 7], "{w}");
    let (code, out, err) = run(&[p("check"), &cap, p("--expect"), &e]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::remove_file(&e).unwrap();
}

#[test]
fn json_errors_name_the_file_line_and_column() {
    let e = tmp("syntax.json");
    for (text, at) in [
        (
            "{\n  \"findings\": [\n    {\"rule\": \"REQ-PSN\", \"frames\": [1,]}\n  ]\n}\n",
            "line 3, column",
        ),
        ("{\"findings\": 7}", "line 1, column"),
        ("", "line 1, column 0"),
        ("\u{feff}\u{feff}{\"findings\": []}", "line 1, column"),
        ("{\"findings\": [], \"option\": {\"pmtu\": 1024}}", "line 1, column 25"),
        ("{\"findings\": [], \"options\": {\"assume_completed\": true}}", "line 1, column"),
    ] {
        std::fs::write(&e, text).unwrap();
        let (code, out, err) = expect(&e);
        assert_eq!(code, 2, "{text:?}: {out}{err}");
        assert!(err.contains(&format!("{}: {at}", e.display())), "{text:?}: {err}");
        assert!(err.contains("not an expect file"), "{err}");
        assert!(!err.contains(" at line "), "position said twice: {err}");
    }
    std::fs::write(&e, b"{\"findings\": [], \"description\": \"\xff\"}").unwrap();
    let (code, _, err) = expect(&e);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("line 1, column"), "{err}");
    let (code, _, err) = expect(&tmp("no-such-file.json"));
    assert_eq!(code, 2);
    assert!(err.contains("no-such-file.json"), "{err}");
    std::fs::remove_file(&e).unwrap();
}

#[test]
fn format_json_with_expect_is_refused() {
    let (e, _) = written("format.json");
    let cap = capture();
    let (code, out, err) = run(&[p("check"), &cap, p("--format"), p("json"), p("--expect"), &e]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("--format json cannot be used with --expect"), "{err}");
    let w = tmp("format-written.json");
    let (code, _, err) =
        run(&[p("check"), &cap, p("--write-expect"), &w, p("--format"), p("json")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format json cannot be used with --write-expect"), "{err}");
    assert!(!w.exists(), "written anyway");
    // Text, the default, said explicitly, is what --expect prints anyway.
    let (code, _, err) = run(&[p("check"), &cap, p("--format"), p("text"), p("--expect"), &e]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_file(&e).unwrap();
}

#[test]
fn write_expect_does_not_overwrite_captures() {
    let original = std::fs::read(capture()).unwrap();
    let dir = tmp("overwrite");
    std::fs::create_dir_all(&dir).unwrap();
    let cap = dir.join("capture.pcapng");
    std::fs::write(&cap, &original).unwrap();
    let link = dir.join("link.pcapng");
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(&cap, &link).unwrap();
    let other = dir.join("other.pcap");
    std::fs::copy(root().join("pcaps/sample.pcap"), &other).unwrap();
    let dotted = dir.join(".").join("capture.pcapng");
    for out in [&cap, &dotted, &link] {
        let (code, stdout, err) = run(&[p("check"), &cap, p("--write-expect"), out]);
        assert_eq!(code, 2, "{}: {stdout}{err}", out.display());
        assert!(err.contains("that is the capture being checked"), "{err}");
        assert!(err.contains(&out.display().to_string()), "{err}");
    }
    let (code, stdout, err) = run(&[p("check"), &cap, p("--write-expect"), &other]);
    assert_eq!(code, 2, "{stdout}{err}");
    assert!(err.contains("the file is a capture"), "{err}");
    assert_eq!(std::fs::read(&cap).unwrap(), original, "the capture was changed");
    assert_eq!(
        std::fs::read(&other).unwrap(),
        std::fs::read(root().join("pcaps/sample.pcap")).unwrap()
    );
    // An existing expect file is overwritten, as before.
    let e = dir.join("capture.expect.json");
    std::fs::write(&e, "{}").unwrap();
    let (code, _, err) = run(&[p("check"), &cap, p("--write-expect"), &e]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&e).unwrap().contains("findings"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `check --expect` on a hostile file: it must end, quickly.
fn hostile(name: &str, bytes: &[u8]) -> (i32, String, String, Duration) {
    let e = tmp(name);
    std::fs::write(&e, bytes).unwrap();
    let start = Instant::now();
    let (code, out, err) = expect(&e);
    let took = start.elapsed();
    std::fs::remove_file(&e).unwrap();
    (code, out, err, took)
}

#[test]
fn hostile_files_end() {
    // Deeply nested, where a finding or an unknown key would be: refused at the first level
    // that is not an expect file's (serde_json's recursion limit stays for the rest).
    for (name, head) in [("nested.json", "{\"findings\": "), ("nested-key.json", "{\"x\": ")] {
        let mut nested = head.as_bytes().to_vec();
        nested.extend(std::iter::repeat_n(b'[', 1_000_000));
        nested.extend(std::iter::repeat_n(b']', 1_000_000));
        nested.push(b'}');
        let (code, _, err, took) = hostile(name, &nested);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("line 1, column") && err.contains("not an expect file"), "{err}");
        assert!(took < Duration::from_secs(30), "{took:?}");
    }

    // 10^6 findings, each expected and missing: a diff that lists 1000 and counts the rest.
    let mut many = String::from("{\"findings\": [");
    for i in 0..1_000_000u32 {
        if i > 0 {
            many.push(',');
        }
        many.push_str(&format!(
            "{{\"rule\":\"REQ-PSN\",\"frames\":[{}]}}",
            u64::from(i) + 1_000_000
        ));
    }
    many.push_str("]}");
    let (code, out, err, took) = hostile("many.json", many.as_bytes());
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("(1000000 expected"), "{}", &out[..out.len().min(500)]);
    assert!(out.contains("and 999000 more missing"), "{}", &out[out.len().saturating_sub(500)..]);
    assert!(out.lines().count() < 2100, "{} lines", out.lines().count());
    assert!(took < Duration::from_secs(60), "{took:?}");

    // Over the cap: refused before it is parsed (a sparse file, nothing written).
    let e = tmp("huge.json");
    let f = std::fs::File::create(&e).unwrap();
    f.set_len((64 << 20) + 1).unwrap();
    drop(f);
    let (code, _, err) = expect(&e);
    std::fs::remove_file(&e).unwrap();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("larger than the 64 MiB an expect file may have"), "{err}");
}

/// `check --expect` of pcaps/conformance/req-psn-skip.pcap (one finding: REQ-PSN on frames
/// 4 and 6) with `findings` replaced by the given JSON.
fn psn_skip(name: &str, findings: &str) -> (PathBuf, i32, String, String) {
    let e = tmp(name);
    let text = format!(r#"{{"options": {{"assume_complete": true}}, "findings": {findings}}}"#);
    std::fs::write(&e, text).unwrap();
    let cap = root().join("pcaps/conformance/req-psn-skip.pcap");
    let (code, out, err) = run(&[p("check"), &cap, p("--expect"), &e]);
    (e, code, out, err)
}

#[test]
fn frames_out_of_order_or_repeated_are_read_sorted_with_a_warning() {
    // The committed expect file itself: no warning.
    let (e, code, out, err) =
        psn_skip("psn-sorted.json", r#"[{"rule": "REQ-PSN", "frames": [4, 6]}]"#);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.is_empty(), "{err}");
    std::fs::remove_file(&e).unwrap();
    for (frames, what, read) in [
        ("[6, 4]", "frames 6,4 out of order: read as 4,6", "4,6"),
        ("[4, 4, 6]", "frames 4,4,6 repeated: read as 4,6", "4,6"),
        ("[6, 4, 6, 4]", "frames 6,4,6,4 out of order, repeated: read as 4,6", "4,6"),
    ] {
        let findings = format!(
            r#"[{{"rule": "CAP-GAP", "frames": [1, 2]}}, {{"rule": "REQ-PSN", "frames": {frames}}}]"#
        );
        let (e, code, out, err) = psn_skip("psn-normalised.json", &findings);
        // CAP-GAP on 1,2 is not found: the diff names it, and REQ-PSN matched as 4,6.
        assert_eq!(code, 1, "{frames}: {out}{err}");
        assert!(out.contains("missing     CAP-GAP"), "{frames}: {out}");
        assert!(!out.contains("REQ-PSN"), "{frames}: REQ-PSN did not match as {read}: {out}");
        let want = format!("roce-inspect: warning: {}: findings[1] (REQ-PSN): {what}", e.display());
        assert!(err.contains(&want), "{frames}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        std::fs::remove_file(&e).unwrap();
    }
    // Only the normalised finding: as expected (exit 0) after the warning.
    let (e, code, out, err) =
        psn_skip("psn-only.json", r#"[{"rule": "REQ-PSN", "frames": [6, 4]}]"#);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 findings, as expected"), "{out}");
    assert!(err.contains("findings[0] (REQ-PSN): frames 6,4 out of order"), "{err}");
    std::fs::remove_file(&e).unwrap();
    // Many such findings: ten warnings, then a count.
    let many: Vec<String> =
        (0..25).map(|i| format!(r#"{{"rule": "REQ-PSN", "frames": [{}, 4]}}"#, 100 + i)).collect();
    let (e, code, _, err) = psn_skip("psn-many.json", &format!("[{}]", many.join(",")));
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 11, "{err}");
    assert!(
        err.contains("and 15 more findings whose frames were out of order or repeated"),
        "{err}"
    );
    std::fs::remove_file(&e).unwrap();
}

#[test]
fn empty_or_zero_frames_are_refused() {
    for (frames, says) in [
        ("[]", "findings[1] (REQ-PSN): no frames"),
        ("[0, 4, 6]", "findings[1] (REQ-PSN): frame 0 (frames are numbered from 1"),
        ("[6, 0]", "findings[1] (REQ-PSN): frame 0"),
    ] {
        let findings = format!(
            r#"[{{"rule": "REQ-PSN", "frames": [4, 6]}}, {{"rule": "REQ-PSN", "frames": {frames}}}]"#
        );
        let (e, code, out, err) = psn_skip("psn-refused.json", &findings);
        assert_eq!(code, 2, "{frames}: {out}{err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains(&format!("{}: {says}", e.display())), "{frames}: {err}");
        std::fs::remove_file(&e).unwrap();
    }
}

#[test]
fn text_of_the_file_is_quoted_in_messages() {
    let e = tmp("quoted.json");
    let long = "A".repeat(100_000);
    for (text, shown) in [
        // An escape sequence (red text) and a bidi override: escaped, not sent to the terminal.
        (
            r#"{"findings": [{"rule": "NO\u001b[31mRULE\u202e", "frames": [1]}]}"#.to_string(),
            r"findings[0]: unknown rule 'NO\u{1b}[31mRULE\u{202e}'".to_string(),
        ),
        (
            format!(r#"{{"findings": [{{"rule": "{long}", "frames": [1]}}]}}"#),
            format!("findings[0]: unknown rule '{}…' (100000 bytes)", "A".repeat(80)),
        ),
        (
            r#"{"schema": "x\u001b]0;title\u0007", "findings": []}"#.to_string(),
            r"schema 'x\u{1b}]0;title\u{7}'".to_string(),
        ),
        (
            format!(r#"{{"schema": "{long}", "findings": []}}"#),
            format!("schema '{}…' (100000 bytes)", "A".repeat(80)),
        ),
        (
            format!(r#"{{"options": {{"cnp_min_interval": "{long}"}}, "findings": []}}"#),
            format!("options.cnp_min_interval '{}…' (100000 bytes)", "A".repeat(80)),
        ),
        (
            r#"{"options": {"cnp_min_interval": "5\u001b[2Jus"}, "findings": []}"#.to_string(),
            r#"options.cnp_min_interval: "5\u{1b}[2Jus""#.to_string(),
        ),
    ] {
        std::fs::write(&e, &text).unwrap();
        let (code, out, err) = expect(&e);
        assert_eq!(code, 2, "{out}{}", &err[..err.len().min(300)]);
        assert!(
            err.contains(&format!("{}: {shown}", e.display())),
            "{}",
            &err[..err.len().min(300)]
        );
        assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
        assert!(err.len() < 1000, "{} bytes of message", err.len());
    }
    std::fs::remove_file(&e).unwrap();
}
