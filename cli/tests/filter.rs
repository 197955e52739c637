//! `-Y EXPR` / `--filter` and `--conn` on real bytes: the frames dissect keeps are those whose
//! JSON object satisfies the same condition (checked here on the JSON, independently of the
//! evaluator), tshark's `-Y` keeps the same frames where the two languages agree, and `check`
//! judges the selected connections whole.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn pcaps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps")
}

mod common;
use common::names::conn_name;
use common::shipped::captures;

fn run(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (text(out.stdout), text(out.stderr), out.status.code().unwrap())
}

fn frames_of_jsonl(out: &str) -> Vec<Value> {
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn numbers(frames: &[Value]) -> Vec<u64> {
    frames.iter().map(|f| f["frame"].as_u64().unwrap()).collect()
}

type Pred = fn(&Value) -> bool;

/// Expressions and the same condition written on the frame's JSON object.
fn cases() -> Vec<(&'static str, Pred)> {
    let cases: Vec<(&'static str, Pred)> = vec![
        ("bth.dest_qp == 0xd67", |f| f["roce"]["bth"]["dest_qp"] == 0xd67),
        ("bth.dest_qp == 0x11 && bth.psn >= 1000 || icrc.status == \"bad\" || problem == \"pad_nonzero\"", |f| {
            (f["roce"]["bth"]["dest_qp"] == 0x11 && f["roce"]["bth"]["psn"].as_u64().is_some_and(|p| p >= 1000))
                || f["roce"]["icrc"]["status"] == "bad"
                || f["problems"].as_array().unwrap().iter().any(|p| p["code"] == "pad_nonzero")
        }),
        ("aeth && !(aeth.kind == \"ack\")", |f| {
            f["roce"]["aeth"].is_object() && f["roce"]["aeth"]["kind"] != "ack"
        }),
        ("roce.aeth.kind != \"ack\"", |f| f["roce"]["aeth"].is_object() && f["roce"]["aeth"]["kind"] != "ack"),
        ("reth and reth.dma_len > 1024 or immdt", |f| {
            f["roce"]["reth"]["dma_len"].as_u64().is_some_and(|l| l > 1024) || f["roce"]["immdt"].is_object()
        }),
        ("ip.src == 10.0.0.2 && not (bth.psn < 3298660)", |f| {
            f["ip"]["src"] == "10.0.0.2" && f["roce"]["bth"]["psn"].as_u64().is_none_or(|p| p >= 3298660)
        }),
        ("ip.version == 6 || bth.opcode == RC_SEND_ONLY", |f| {
            f["ip"]["version"] == 6 || f["roce"]["bth"]["opcode_name"] == "RC_SEND_ONLY"
        }),
        ("bth.psn != 0 && bth.ackreq == true && !cm", |f| {
            f["roce"]["bth"]["psn"].as_u64().is_some_and(|p| p != 0)
                && f["roce"]["bth"]["ackreq"] == true
                && f["roce"]["cm"].is_null()
        }),
        ("problem", |f| !f["problems"].as_array().unwrap().is_empty()),
        ("!roce || bth.becn == 1 || ip.ecn == 3", |f| {
            f["roce"].is_null() || f["roce"]["bth"]["becn"] == true || f["ip"]["ecn"] == 3
        }),
        ("frame >= 5 && frame <= 9 || caplen < 70", |f| {
            let n = f["frame"].as_u64().unwrap();
            (5..=9).contains(&n) || f["caplen"].as_u64().unwrap() < 70
        }),
        ("deth.src_qp == 1 || bth.pkey != 0xffff", |f| {
            f["roce"]["deth"]["src_qp"] == 1 || f["roce"]["bth"]["pkey"].as_u64().is_some_and(|k| k != 0xffff)
        }),
    ];
    cases
}

/// On every capture of pcaps/, `dissect -Y` keeps exactly the frames whose JSON satisfies
/// the condition (and at least one case keeps something, one drops something).
#[test]
fn dissect_keeps_the_frames_that_match() {
    let mut kept_any = [false; 16];
    let mut dropped_any = [false; 16];
    for cap in captures() {
        let c = cap.to_str().unwrap();
        let (all, _, code) = run(&["dissect", "--format", "jsonl", c]);
        assert_eq!(code, 0);
        let all = frames_of_jsonl(&all);
        for (i, (expr, pred)) in cases().into_iter().enumerate() {
            let (out, err, code) = run(&["dissect", "--format", "jsonl", "-Y", expr, c]);
            assert_eq!(code, 0, "{expr}: {err}");
            let want: Vec<u64> =
                numbers(&all.iter().filter(|f| pred(f)).cloned().collect::<Vec<_>>());
            let got = numbers(&frames_of_jsonl(&out));
            assert_eq!(got, want, "{} -Y '{expr}'", cap.display());
            kept_any[i] |= !got.is_empty();
            dropped_any[i] |= got.len() < all.len();
        }
    }
    for (i, (expr, _)) in cases().iter().enumerate() {
        assert!(kept_any[i] && dropped_any[i], "'{expr}' never splits a capture: a weak case");
    }
}

/// `-Y` with `--qp`/`--opcode`/`--frames`: all hold. `--conn` is both directions of the pair.
#[test]
fn filters_combine_and_conn_is_both_directions() {
    let c = pcaps().join("sample.pcap");
    let c = c.to_str().unwrap();
    let (both, _, _) =
        run(&["dissect", "--format", "jsonl", "--qp", "0xd67", "-Y", "bth.psn > 3298660", c]);
    let (one, _, _) = run(&[
        "dissect",
        "--format",
        "jsonl",
        "-Y",
        "bth.dest_qp == 0xd67 && bth.psn > 3298660",
        c,
    ]);
    assert_eq!(numbers(&frames_of_jsonl(&both)), numbers(&frames_of_jsonl(&one)));
    assert!(!one.is_empty());
    let (conn, _, _) =
        run(&["dissect", "--format", "jsonl", "--conn", "10.0.0.1:0xdc1-10.0.0.2:0xd67", c]);
    let conn = frames_of_jsonl(&conn);
    let srcs: std::collections::BTreeSet<&str> =
        conn.iter().map(|f| f["ip"]["src"].as_str().unwrap()).collect();
    assert_eq!(srcs.len(), 2, "both directions");
    let (all, _, _) = run(&["dissect", "--format", "jsonl", c]);
    let want: Vec<Value> = frames_of_jsonl(&all)
        .into_iter()
        .filter(|f| {
            (f["ip"]["src"] == "10.0.0.1"
                && f["ip"]["dst"] == "10.0.0.2"
                && f["roce"]["bth"]["dest_qp"] == 0xd67)
                || (f["ip"]["src"] == "10.0.0.2"
                    && f["ip"]["dst"] == "10.0.0.1"
                    && f["roce"]["bth"]["dest_qp"] == 0xdc1)
        })
        .collect();
    assert_eq!(numbers(&conn), numbers(&want));
    let (with_y, _, _) = run(&[
        "dissect",
        "--conn",
        "10.0.0.1:0xdc1-10.0.0.2:0xd67",
        "-Y",
        "aeth",
        "--frames",
        "1-25",
        c,
    ]);
    let lines: Vec<&str> = with_y.lines().collect();
    // The frames with an AETH (ACKs, NAKs, READ responses that carry one) of the pair.
    assert!(!lines.is_empty() && lines.iter().all(|l| l.contains(" MSN ")), "{with_y}");
}

/// Mistakes: exit 2, the message, the expression with a caret under the column; 100,000
/// nested parentheses are refused, not a stack overflow.
#[test]
fn bad_filters_are_refused_with_the_column() {
    let c = pcaps().join("sample.pcap");
    let c = c.to_str().unwrap();
    for cmd in ["dissect", "stats", "check", "export"] {
        let mut args = vec![cmd, "-Y", "bth.psn >= 1 && bth.dest_q == 3", c];
        if cmd == "export" {
            args.extend(["-o", "/nonexistent-never-written"]);
        }
        let (out, err, code) = run(&args);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(out.is_empty());
        assert!(err.contains("unknown field 'bth.dest_q' (did you mean bth.dest_qp"), "{err}");
        let lines: Vec<&str> = err.lines().collect();
        let at = lines.iter().position(|l| l.trim() == "bth.psn >= 1 && bth.dest_q == 3").unwrap();
        assert_eq!(lines[at + 1].find('^'), Some(lines[at].find("bth.dest_q").unwrap()), "{err}");
    }
    // 100,000 nested parentheses are the unit test's (one argument of the command line is
    // at most 128 KiB on Linux); here 60,000.
    let deep = format!("{}bth.psn == 1{}", "(".repeat(60_000), ")".repeat(60_000));
    let (_, err, code) = run(&["dissect", "-Y", &deep, c]);
    assert_eq!(code, 2);
    assert!(err.contains("longer than 4096 bytes"), "{}", &err[..err.len().min(300)]);
    let deep = format!("{}bth.psn == 1{}", "(".repeat(65), ")".repeat(65));
    let (_, err, code) = run(&["dissect", "-Y", &deep, c]);
    assert_eq!(code, 2);
    assert!(err.contains("nested deeper than 64"), "{err}");
    let (_, err, code) = run(&["dissect", "--conn", "10.0.0.1:0x1", c]);
    assert_eq!(code, 2);
    assert!(err.contains("expected A:QPN-B:QPN"), "{err}");
}

fn check_json(args: &[&str]) -> (Value, i32) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let (out, err, code) = run(&all);
    assert!(code < 2, "{args:?}: {err}");
    (serde_json::from_str(&out).unwrap(), code)
}

/// `check -Y`: a connection with one matching frame is judged on all its frames: its
/// findings are exactly those of the unfiltered run, the other connections' are gone, and
/// the counts and exit status follow.
#[test]
fn check_judges_selected_connections_whole() {
    let mut split = 0;
    for cap in captures() {
        let c = cap.to_str().unwrap();
        let (whole, whole_code) = check_json(&[c]);
        let conns = whole["connections"].as_array().unwrap();
        for conn in conns {
            let id = &conn["connection"];
            let first = conn["first_frame"].as_u64().unwrap();
            // One frame of this connection only: the filter matches nothing else.
            let expr = format!("frame == {first}");
            let (picked, code) = check_json(&["-Y", &expr, c]);
            let mine: Vec<&Value> = whole["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["connection"].is_null() || &f["connection"] == id)
                .collect();
            let got: Vec<&Value> = picked["findings"].as_array().unwrap().iter().collect();
            assert_eq!(got, mine, "{c} -Y '{expr}'");
            let listed: Vec<&Value> = picked["connections"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| &c["connection"])
                .collect();
            assert!(listed.contains(&id), "{c} -Y '{expr}': {listed:?}");
            // The JSON says what the filter selected.
            let sel = &picked["selection"];
            assert_eq!(sel["filter"], expr.as_str());
            assert_eq!(sel["frames_matched"], 1, "{c} -Y '{expr}'");
            assert_eq!(sel["connections_selected"].as_u64(), Some(listed.len() as u64));
            let errors = mine.iter().filter(|f| f["severity"] == "error").count() as u64;
            assert_eq!(picked["summary"]["errors"].as_u64(), Some(errors));
            assert_eq!(code, i32::from(errors > 0));
            if got.len() < whole["findings"].as_array().unwrap().len() {
                split += 1;
            }
        }
        // Nothing matches: no connection, no finding but the capture's own.
        let (none, _) = check_json(&["-Y", "frame == 0", c]);
        assert!(none["connections"].as_array().unwrap().is_empty());
        assert!(none["findings"].as_array().unwrap().iter().all(|f| f["connection"].is_null()));
        let _ = whole_code;
    }
    assert!(split > 0, "no capture where a filter dropped some findings");
}

/// `check -l -Y`: live output prints only selected connections' findings, and the ones whose
/// connection was selected after they were proven still come, at the end.
#[test]
fn live_check_honours_the_filter() {
    for name in ["req-psn-skip.pcap", "pkt-rules.pcap", "cm-reconnect-faults.pcap"] {
        let c = pcaps().join("conformance").join(name);
        let c = c.to_str().unwrap();
        let (whole, _) = check_json(&[c]);
        let Some(last) = whole["connections"]
            .as_array()
            .unwrap()
            .iter()
            .max_by_key(|c| c["last_frame"].as_u64())
        else {
            continue;
        };
        // The last frame of a connection: all its findings are proven before it matches.
        let expr = format!("frame == {}", last["last_frame"]);
        let (filtered, _) = check_json(&["-Y", &expr, c]);
        let (live, err, code) = run(&["check", "-l", "--max-per-rule", "0", "-Y", &expr, c]);
        assert!(code < 2, "{err}");
        let printed = live
            .lines()
            .filter(|l| l.starts_with("  warning ") || l.starts_with("  error "))
            .count();
        assert_eq!(printed, filtered["findings"].as_array().unwrap().len(), "{name}:\n{live}");
        let errors = filtered["summary"]["errors"].as_u64().unwrap();
        assert!(live.contains(&format!("{errors} error(s)")), "{name}:\n{live}");
    }
}

/// `stats -Y`: the connection table lists the selected connections with all their packets.
#[test]
fn stats_lists_selected_connections_whole() {
    let c = pcaps().join("sample.pcap");
    let c = c.to_str().unwrap();
    let (all, _, _) = run(&["stats", "--format", "json", c]);
    let all: Value = serde_json::from_str(&all).unwrap();
    let (some, err, code) =
        run(&["stats", "--format", "json", "-Y", "bth.dest_qp == 0x88 && frame == 36", c]);
    assert_eq!(code, 0, "{err}");
    let some: Value = serde_json::from_str(&some).unwrap();
    let conns = some["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1);
    let same = all["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["connection"] == conns[0]["connection"]);
    assert_eq!(same, Some(&conns[0]), "the whole connection, all its packets");
    assert_eq!(some["frames"], all["frames"], "the totals stay the capture's");
    let (text, _, _) = run(&["stats", "--conn", "fd00::3:0x77-fd00::4:0x88", c]);
    assert!(text.contains("1 connection(s) selected"), "{text}");
    assert!(text.contains("Connections (1)"), "{text}");
}

/// The connection's name as the HTML report writes it.
fn html_escaped(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// `report -Y`: the page covers the connections `check -Y` selects, judged whole: the same
/// findings count, those connections listed and graphed, the others absent.
#[test]
fn report_covers_the_selected_connections() {
    let dir =
        std::env::temp_dir().join(format!("roce-inspect-filter-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for name in
        ["sample.pcap", "conformance/cm-reconnect-faults.pcap", "conformance/req-psn-skip.pcap"]
    {
        let cap = pcaps().join(name);
        let c = cap.to_str().unwrap();
        let (whole, _) = check_json(&[c]);
        let conns = whole["connections"].as_array().unwrap();
        let rc: Vec<&Value> = conns.iter().filter(|x| x["transport"] == "RC").collect();
        let Some(chosen) = rc.first() else { continue };
        let expr = format!("frame == {}", chosen["first_frame"]);
        let (picked, code) = check_json(&["-Y", &expr, c]);
        let html = dir.join("r.html");
        let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(["report", "-Y", &expr, c, "-o", html.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{name}: {err}");
        let findings = picked["findings"].as_array().unwrap().len();
        assert!(err.contains(&format!("{findings} finding(s)")), "{name}: {err}");
        assert!(err.contains("1 connection(s) graphed"), "{name}: {err}");
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains(&format!("filter {expr}: 1 frame(s) matched")), "{name}");
        for conn in rc {
            let id = format!(">{}<", html_escaped(&conn_name(&conn["connection"])));
            let selected = picked["connections"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["connection"] == conn["connection"]);
            assert_eq!(page.contains(&id), selected, "{name} -Y '{expr}': {id}");
        }
        checked += 1;
    }
    assert!(checked >= 2);
}

/// tshark `-Y` keeps the same frames where the two languages agree.
#[test]
fn same_frames_as_tshark() {
    let found = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "CI=true: tshark is required");
        eprintln!("note: tshark not found, skipping the comparison with tshark -Y");
        return;
    }
    let pairs = [
        ("bth.dest_qp == 0xd67", "infiniband.bth.destqp == 0x000d67"),
        (
            "bth.dest_qp == 0x11 || bth.dest_qp == 0x12",
            "infiniband.bth.destqp == 0x11 || infiniband.bth.destqp == 0x12",
        ),
        (
            "bth.psn >= 3298660 && bth.psn < 3298666",
            "infiniband.bth.psn >= 3298660 && infiniband.bth.psn < 3298666",
        ),
        // tshark decodes no AETH in XRC acknowledgements (opcodes 0xa0-0xbf): compared below.
        ("aeth && bth.opcode < 0xa0", "infiniband.aeth && infiniband.bth.opcode < 0xa0"),
        ("reth && !immdt", "infiniband.reth && !infiniband.immdt"),
        ("bth.opcode == 17", "infiniband.bth.opcode == 17"),
        ("ip.src == 10.0.0.2 && udp.dport == 4791", "ip.src == 10.0.0.2 && udp.dstport == 4791"),
        ("deth.src_qp == 1", "infiniband.deth.srcqp == 1"),
    ];
    let mut compared = 0;
    for cap in captures() {
        let c = cap.to_str().unwrap();
        for (ours, theirs) in pairs {
            let (out, _, _) = run(&["dissect", "-Y", ours, c]);
            let got: Vec<u64> = out
                .lines()
                .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
                .collect();
            let t = Command::new("tshark")
                .args(["-r", c, "-Y", theirs, "-T", "fields", "-e", "frame.number"])
                .output()
                .unwrap();
            assert!(
                t.status.success(),
                "tshark -Y '{theirs}': {}",
                String::from_utf8_lossy(&t.stderr)
            );
            let want: Vec<u64> = String::from_utf8(t.stdout)
                .unwrap()
                .lines()
                .map(|l| l.trim().parse().unwrap())
                .collect();
            assert_eq!(got, want, "{c}: ours '{ours}' vs tshark '{theirs}'");
            compared += usize::from(!want.is_empty());
        }
    }
    assert!(compared > 20, "only {compared} non-empty comparisons");
}
