//! `diagnose` against its ground truth: every scenario of `gen diagnose` (a peer that never
//! answers, retries exhausted at Retry Count 3 and 7, loss with go-back-N, congestion with
//! and without working congestion control, an RNR storm, a remote access error, REJ, REQ
//! without REP, REP without RTU, a cascade of 40 connections after one failure) gets
//! exactly the verdicts the scenario was built to show, on the connection it names, with
//! the measured values in the evidence; and the real captures' verdicts are those reviewed
//! one by one in testdata/diagnose-real.txt.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_inspect::internal::gen::diagnose::{scenarios, Failing, Scenario};
use serde_json::Value;

#[path = "../../testdata/real.rs"]
mod real;

fn diagnose(pcap: &Path, format: &str) -> (Option<i32>, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["diagnose", "--format", format])
        .arg(pcap)
        .output()
        .unwrap();
    // Warnings only (a real capture's undecoded frames), never an error.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.lines().all(|l| l.starts_with("roce-inspect: warning: ")),
        "{}: {stderr}",
        pcap.display()
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}: {stderr}", pcap.display());
    (out.status.code(), out.stdout)
}

/// A folder of the test's own (tests run in parallel).
fn dir(test: &str) -> PathBuf {
    let d =
        std::env::temp_dir().join(format!("roce-inspect-diagnose-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn names(c: &Value, f: &Failing) -> bool {
    let ip = |v: &Value| v.as_str().unwrap().to_string();
    let q = |v: &Value| v.as_u64().map(|x| x as u32);
    let (a, qa, b, qb) = (ip(&c["a"]), q(&c["qpn_a"]), ip(&c["b"]), q(&c["qpn_b"]));
    let same = |x: &str, qx: Option<u32>, y: &str, qy: Option<u32>| {
        x == f.a.to_string()
            && y == f.b.to_string()
            && (qx == f.qpn_a || qx.is_none())
            && (qy == f.qpn_b || qy.is_none())
    };
    same(&a, qa, &b, qb) || same(&b, qb, &a, qa)
}

/// Every verdict given, as (connection object, verdict).
fn verdicts(doc: &Value) -> Vec<(Value, Value)> {
    let mut v = Vec::new();
    for c in doc["connections"].as_array().unwrap().iter().chain(doc["setup"].as_array().unwrap()) {
        for x in c["verdicts"].as_array().unwrap() {
            v.push((c["connection"].clone(), x.clone()));
        }
    }
    v
}

fn check_scenario(s: &Scenario, path: &Path) {
    let name = s.name;
    let (code, out) = diagnose(path, "json");
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let given = verdicts(&doc);
    let mut got: BTreeSet<&str> =
        given.iter().map(|(_, v)| v["verdict"].as_str().unwrap()).collect();
    let want: BTreeSet<&str> = s.verdicts.iter().copied().collect();
    if !want.contains("healthy") {
        got.remove("healthy");
    }
    assert_eq!(got, want, "{name}: verdicts");
    // Exit status 1 exactly when a verdict is a failure.
    let failed = given.iter().any(|(_, v)| v["severity"] == "failure");
    assert_eq!(code, Some(i32::from(failed)), "{name}: exit status");
    // The connection the scenario makes fail carries the verdict; a failure is first.
    if let Some(f) = &s.first_failure {
        let on_it: BTreeSet<&str> = given
            .iter()
            .filter(|(c, _)| names(c, f))
            .map(|(_, v)| v["verdict"].as_str().unwrap())
            .collect();
        assert!(
            on_it.iter().any(|v| want.contains(v)),
            "{name}: the scenario's connection has {on_it:?}, not one of {want:?}"
        );
        if failed {
            let first = &doc["timeline"]["first"];
            assert!(names(&first["connection"], f), "{name}: first failure {first}");
        }
    } else {
        assert!(doc["timeline"]["first"].is_null(), "{name}: a first failure without one");
    }
    if let Some(n) = s.followed {
        let t = &doc["timeline"];
        let followed = t["followed"].as_array().unwrap().len() as u64
            + t["followed_not_listed"].as_u64().unwrap();
        assert_eq!(followed, u64::from(n), "{name}: failures following the first");
        assert_eq!(t["followed_same_host"], u64::from(n), "{name}: all share 10.0.0.1");
    }
    if let Some(o) = s.offending {
        let (_, v) = given.iter().find(|(_, v)| v["verdict"] == "application_error").unwrap();
        let r = &v["evidence"]["offending_request"];
        assert_eq!(r["va"], format!("0x{:016x}", o.va), "{name}");
        assert_eq!(r["rkey"], format!("0x{:08x}", o.rkey), "{name}");
        assert_eq!(r["length"], o.length, "{name}");
        assert_eq!(v["evidence"]["nak"], "remote access error", "{name}");
    }
    let evidence = |kind: &str| {
        given
            .iter()
            .find(|(_, v)| v["verdict"] == kind)
            .map(|(_, v)| v["evidence"].clone())
            .unwrap()
    };
    match name {
        "retry_exhausted_rc3" | "retry_exhausted_rc7" => {
            let e = evidence("retry_exhausted");
            let rc: u64 = if name.ends_with('3') { 3 } else { 7 };
            assert_eq!(e["retry_count"], rc, "{name}");
            assert_eq!(e["retry_count_source"], "cm", "{name}");
            assert_eq!(e["tries"], rc + 1, "{name}: the PSN sent Retry Count + 1 times");
            let gaps = e["gaps_ns"].as_array().unwrap();
            assert_eq!(gaps.len() as u64, rc, "{name}");
            assert_eq!(e["inferred_timeout_exponent"], e["negotiated_local_ack_timeout"], "{name}");
        }
        "unanswered" => {
            let e = evidence("unanswered");
            assert!(e["cm"].is_null(), "{name}: no CM exchange");
            assert_eq!(e["most_tries_of_one_psn"], 8, "{name}");
        }
        "lossy_path" => {
            let e = evidence("lossy_path");
            assert_eq!(e["sequence_error_naks"], 8, "{name}");
            assert_eq!(e["retransmissions"], 40, "{name}");
            assert_eq!(e["missing_from_capture"], 0, "{name}: the loss is on the wire");
        }
        "rnr_storm" => {
            let e = evidence("receiver_not_ready");
            assert_eq!(e["rnr_naks"], 18, "{name}");
            assert_eq!(e["max_rnr_retries"], 3, "{name}");
            assert_eq!(e["rnr_retry_count"], 7, "{name}");
        }
        "ce_without_cnp" | "not_ect" | "cnp_no_reduction" => {
            let cause = match name {
                "ce_without_cnp" => "ce_without_cnp",
                "not_ect" => "not_ect",
                _ => "cnp_without_reduction",
            };
            assert_eq!(evidence("congestion_control_not_working")["cause"], cause, "{name}");
        }
        "congested" => {
            let e = evidence("congested");
            assert_eq!((e["ce_marked"].as_u64(), e["cnps"].as_u64()), (Some(8), Some(4)));
            assert_eq!(e["slowed"], 4, "{name}: the sender slowed after each CNP");
        }
        "rejected" => {
            let e = evidence("connection_setup_failed");
            assert_eq!(e["outcome"], "rejected", "{name}");
            assert!(e["reject_reason"].is_string(), "{name}");
        }
        "req_without_rep" => {
            let e = evidence("connection_setup_failed");
            assert_eq!((e["outcome"].as_str(), e["reqs"].as_u64()), (Some("requested"), Some(3)));
        }
        "one_udp_port" => {
            let e = evidence("network_configuration");
            let c = &e["causes"][0];
            assert_eq!(
                (c["cause"].as_str(), c["qps"].as_u64()),
                (Some("udp_sport_entropy"), Some(8))
            );
            assert_eq!(c["udp_sport"], 49152, "{name}");
        }
        "cnp_dscp_and_acks_at_zero" => {
            let e = evidence("network_configuration");
            let c = &e["causes"][0];
            assert_eq!(c["cause"], "dscp_asymmetry", "{name}");
            assert_eq!(
                (c["requests_dscp"].as_u64(), c["responses_dscp"].as_u64()),
                (Some(26), Some(0))
            );
            // Stated, the CNPs' DSCP is a finding of the catalog's NET-CNP-DSCP too.
            let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
                .args(["diagnose", "--format", "json", "--expect-cnp-dscp", "46"])
                .arg(path)
                .output()
                .unwrap();
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            let (_, v) = verdicts(&doc)
                .into_iter()
                .find(|(_, v)| v["verdict"] == "network_configuration")
                .unwrap();
            assert_eq!(v["rules"], serde_json::json!(["NET-CNP-DSCP"]), "{name}");
            let stated = v["evidence"]["causes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["cause"] == "stated")
                .unwrap();
            assert_eq!(stated["findings"], 4, "{name}: the four CNPs");
        }
        "cm_qpn_mismatch" => {
            let e = evidence("connection_setup_failed");
            assert_eq!(e["outcome"], "established", "{name}");
            assert_eq!(e["data_dest_qps"], serde_json::json!([0x5679, 0x1235]), "{name}");
        }
        "rep_without_rtu" => {
            assert_eq!(evidence("connection_setup_failed")["outcome"], "replied", "{name}");
        }
        _ => {}
    }
    // The text says the same: each verdict's title is in the headline.
    let (_, text) = diagnose(path, "text");
    let text = String::from_utf8(text).unwrap();
    let headline = text.lines().find(|l| l.starts_with("Verdict")).unwrap();
    for v in &want {
        let title = roce_analysis::VERDICTS.iter().find(|k| k.1 == *v).unwrap().2;
        assert!(headline.contains(title), "{name}: {headline}");
    }
}

#[test]
fn every_scenario_gets_the_verdicts_it_was_built_to_show() {
    let d = dir("scenarios");
    let all = scenarios();
    assert!(all.len() >= 15);
    for s in &all {
        let path = d.join(format!("{}.pcap", s.name));
        s.trace.write_pcap(std::fs::File::create(&path).unwrap()).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .arg("diagnose")
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.stderr.is_empty(), "{}: {}", s.name, String::from_utf8_lossy(&out.stderr));
        check_scenario(s, &path);
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// testdata/diagnose-real.txt: per real capture, the verdicts of its connections (as
/// `VERDICT xN`, sorted) after `#` lines giving the reason each is right.
#[test]
fn the_real_captures_get_the_verdicts_reviewed_for_them() {
    let Some(dir) = real::real_dir() else { return };
    let reviewed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/diagnose-real.txt"),
    )
    .unwrap();
    let mut n = 0;
    for line in reviewed.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (file, want) = line.split_once(':').unwrap();
        let (_, out) = diagnose(&dir.join(file.trim()), "json");
        let doc: Value = serde_json::from_slice(&out).unwrap();
        let counts: Vec<String> =
            doc["verdicts"].as_object().unwrap().iter().map(|(k, v)| format!("{k} x{v}")).collect();
        assert_eq!(counts.join(", "), want.trim(), "{file}");
        n += 1;
    }
    assert!(n >= 20, "only {n} real captures reviewed");
}

/// README.md opens with `diagnose` on a real capture: its output there is the output now.
#[test]
fn the_readme_shows_what_diagnose_prints() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let at = readme.find("<!-- diagnose-example: ").expect("README's diagnose example");
    let block = &readme[at..];
    let start = block.find("```text\n").unwrap() + "```text\n".len();
    let end = block[start..].find("```").unwrap() + start;
    let shown = &block[start..end];
    let (command, printed) = shown.split_once('\n').unwrap();
    let file = command.strip_prefix("$ roce-inspect diagnose ").unwrap();
    let Some(dir) = real::real_dir() else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["diagnose", file])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), printed, "README.md's diagnose example");
}

/// `report` opens with the same diagnosis: its headline, and a row per verdict with a
/// problem (the cascade's 41).
#[test]
fn the_report_opens_with_the_diagnosis() {
    let d = dir("report");
    let s = scenarios().into_iter().find(|s| s.name == "cascade").unwrap();
    let pcap = d.join("cascade.pcap");
    s.trace.write_pcap(std::fs::File::create(&pcap).unwrap()).unwrap();
    let (_, out) = diagnose(&pcap, "json");
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let html = d.join("cascade.html");
    let status = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["report", "-o"])
        .arg(&html)
        .arg(&pcap)
        .status()
        .unwrap();
    assert!(matches!(status.code(), Some(0 | 1)));
    let page = std::fs::read_to_string(&html).unwrap();
    let at = page.find("<h2 id=\"diagnosis\">Diagnosis</h2>").expect("a diagnosis section");
    assert!(at < page.find("<h2 id=\"summary\">").unwrap(), "the diagnosis comes first");
    let headline = doc["headline"].as_str().unwrap().replace('<', "&lt;").replace('>', "&gt;");
    assert!(page.contains(&headline), "the page's headline is diagnose's: {headline}");
    let section = &page[at..page.find("<h2 id=\"summary\">").unwrap()];
    assert_eq!(section.matches("<tr class=\"error\">").count(), 41, "41 failed connections");
    std::fs::remove_dir_all(&d).unwrap();
}

/// `--nic-counters`: the host's retry-exceeded counter (rxe `retry_exceeded_err`, here in
/// `rdma statistic`'s one-line form) confirms the capture's retry exhausted when it rose,
/// contradicts it when it did not; every counter is reconciled as `stats` does.
#[test]
fn the_nics_retry_exceeded_counter_confirms_or_contradicts() {
    let d = dir("nic");
    let s = scenarios().into_iter().find(|s| s.name == "retry_exhausted_rc3").unwrap();
    let pcap = d.join("rc3.pcap");
    s.trace.write_pcap(std::fs::File::create(&pcap).unwrap()).unwrap();
    let before = d.join("before.txt");
    std::fs::write(&before, "link rxe0/1 sent_pkts 0 retry_exceeded_err 4 duplicate_request 0\n")
        .unwrap();
    for (after, says) in [(5, "confirms"), (4, "contradicts")] {
        let a = d.join(format!("after-{after}.txt"));
        let line =
            format!("link rxe0/1 sent_pkts 10 retry_exceeded_err {after} duplicate_request 0\n");
        std::fs::write(&a, line).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(["diagnose", "--format", "json", "--nic-host", "10.0.0.1", "--nic-counters"])
            .args([&before, &a])
            .arg(&pcap)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (_, v) =
            verdicts(&doc).into_iter().find(|(_, v)| v["verdict"] == "retry_exhausted").unwrap();
        assert_eq!(v["evidence"]["nic_counter"]["says"], says, "after {after}");
        assert_eq!(v["evidence"]["nic_counter"]["counters"][0], "retry_exceeded_err");
        let rows = doc["nic_counters"]["counters"].as_array().unwrap();
        assert!(rows
            .iter()
            .any(|r| r["counter"] == "retry_exceeded_err" && r["verdict"] == "not_in_capture"));
        let text = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(["diagnose", "--nic-host", "10.0.0.1", "--nic-counters"])
            .args([&before, &a])
            .arg(&pcap)
            .output()
            .unwrap();
        let text = String::from_utf8(text.stdout).unwrap();
        let word = if after == 5 {
            "confirm the capture's 1 retry exhausted"
        } else {
            "contradict the capture's 1 retry exhausted"
        };
        assert!(text.contains(word), "{text}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// The network audit on the conformance suite's captures built for it: stated, each NET-*
/// rule fires where its capture breaks it and stays silent on the clean one; unstated, the
/// directions' DSCP and PCP still tell.
#[test]
fn the_network_audit_on_the_suites_captures() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps/conformance");
    let stated = ["--expect-dscp", "26", "--expect-cnp-dscp", "46", "--expect-pcp", "3"];
    let run = |file: &str, args: &[&str]| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(["diagnose", "--format", "json"])
            .args(args)
            .arg(suite.join(file))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let net = |doc: &Value| -> Vec<Value> {
        verdicts(doc)
            .into_iter()
            .filter(|(_, v)| v["verdict"] == "network_configuration")
            .map(|(_, v)| v)
            .collect()
    };
    for args in [&stated[..], &[][..]] {
        assert!(net(&run("clean-net-config.pcap", args)).is_empty(), "clean {args:?}");
    }
    for (file, rule) in [
        ("net-dscp.pcap", "NET-DSCP"),
        ("net-cnp-dscp.pcap", "NET-CNP-DSCP"),
        ("net-pcp.pcap", "NET-PCP"),
    ] {
        let v = net(&run(file, &stated));
        assert!(
            v.iter().any(|v| v["rules"].as_array().unwrap().iter().any(|r| r == rule)),
            "{file}: {v:?}"
        );
    }
    let dscp = net(&run("net-dscp.pcap", &[]));
    assert!(
        dscp.iter().any(|v| v["evidence"]["causes"][0]["cause"] == "dscp_asymmetry"),
        "{dscp:?}"
    );
    let pcp = net(&run("net-pcp.pcap", &[]));
    assert!(pcp.iter().any(|v| v["evidence"]["causes"][0]["cause"] == "pcp_mixed"), "{pcp:?}");
    // The audit itself: the clean capture's directions, as built (DSCP 26, CNPs at 46, PCP 3).
    let doc = run("clean-net-config.pcap", &[]);
    let dirs: Vec<&Value> = doc["connections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["network"].as_array().unwrap())
        .collect();
    assert!(dirs.iter().any(|d| d["dscp_cnps"]["value"] == 46));
    assert!(dirs.iter().all(|d| d["pcp"].is_null() || d["pcp"]["value"] == 3), "{dirs:?}");
}
