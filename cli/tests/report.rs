//! `roce-inspect report` and `graph`, rendered by headless Chromium: the page loads with no
//! console error (the Content-Security-Policy admits its own style and script, which runs),
//! holds one sequence graph per graphed connection, and each graph has as many
//! retransmission, NAK, RNR NAK, CNP and finding marks (counting the packets a merged mark
//! stands for) as `stats` and `check` count for that connection; the screenshot is not blank.
//! The page's own structure is checked without a browser too, so a machine without Chromium
//! still tests the counts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
use common::browser;
use common::names::conn_name;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_conformance::{ModelOptions, Options};
use roce_inspect::input::for_each_frame;
use roce_inspect::stats::Stats;
use roce_parser::Config;

#[path = "../../testdata/real.rs"]
mod real;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Per connection name: [retransmitted, NAKs, RNR NAKs, CNPs, findings], from `stats` and
/// `check` (the library both commands run), for the RC/UC/XRC connections.
fn expected(path: &Path) -> BTreeMap<String, [u64; 5]> {
    let cfg = Config::default();
    let model = ModelOptions { max_flows: 65536, pmtu: None, reconnect_idle_ns: 1_000_000_000 };
    let mut stats = Stats::new(model);
    for_each_frame(&path.into(), &cfg, |d| {
        let f = &d.frame;
        stats.add(f.number, f.ts_ns, f.len, f.caplen, d.packet.as_ref().ok());
    })
    .unwrap();
    let (conns, _) = stats.connections();
    let (report, _) = roce_inspect::check::check_file(path, &cfg, Options::default()).unwrap();
    let mut m = BTreeMap::new();
    for c in conns {
        if !matches!(c.info.transport, "RC" | "UC" | "XRC" | "unknown") {
            continue;
        }
        let t = &c.total;
        let n = &t.naks;
        let naks = n.psn_sequence_error
            + n.invalid_request
            + n.remote_access_error
            + n.remote_operational_error
            + n.invalid_rd_request
            + n.reserved;
        let findings =
            report.findings.iter().filter(|f| f.connection == Some(c.info.connection)).count()
                as u64;
        m.insert(
            c.info.connection.to_string(),
            [t.retransmissions, naks, t.rnr_naks, t.cnps, findings],
        );
    }
    m
}

/// The value of attribute `name` in a start tag's text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let k = format!(" {name}=\"");
    let i = tag.find(&k)? + k.len();
    Some(&tag[i..i + tag[i..].find('"')?])
}

/// Per sequence graph (by its data-conn): the packets its marks of each class stand for.
fn marks(dom: &str) -> BTreeMap<String, [u64; 5]> {
    let mut m = BTreeMap::new();
    for chunk in dom.split("<svg class=\"seq\"").skip(1) {
        let head = &chunk[..chunk.find('>').unwrap()];
        let conn = attr(&format!(" {head}"), "data-conn")
            .unwrap()
            .replace("&lt;", "<")
            .replace("&gt;", ">");
        let body = &chunk[..chunk.find("</svg>").unwrap()];
        let mut c = [0u64; 5];
        for g in body.split("<g ").skip(1) {
            let tag = format!(" {}", &g[..g.find('>').unwrap()]);
            let class = attr(&tag, "class").unwrap_or("");
            let n: u64 = attr(&tag, "data-n").map_or(1, |v| v.parse().unwrap());
            match class.split(' ').next().unwrap() {
                "m-retx" => c[0] += n,
                "m-nak" | "m-fatal" => c[1] += n,
                "m-rnr" => c[2] += n,
                "m-cnp" => c[3] += n,
                "m-finding" => c[4] += 1,
                _ => {}
            }
        }
        assert!(m.insert(conn.clone(), c).is_none(), "two graphs of {conn}");
    }
    m
}

fn report(path: &Path, out: &Path, extra: &[&str]) -> String {
    let o =
        Command::new(BIN).arg("report").arg(path).arg("-o").arg(out).args(extra).output().unwrap();
    assert!(
        o.status.code().unwrap() <= 1,
        "report {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(out).unwrap()
}

/// The graphs match the counts; every connection is graphed (fewer than the default 16 here).
fn check_counts(path: &Path, dom: &str) {
    let want = expected(path);
    let got = marks(dom);
    assert_eq!(
        got.len(),
        want.len().min(16),
        "{}: graphs {:?} for connections {:?}",
        path.display(),
        got.keys(),
        want.keys()
    );
    for (conn, g) in &got {
        assert_eq!(
            Some(g),
            want.get(conn),
            "{}: {conn}: marks [retx, nak, rnr, cnp, finding]",
            path.display()
        );
    }
}

const SUITE: [&str; 8] = [
    "req-gbn-retx-same",
    "req-gbn-new-psn",
    "req-rnr-wait",
    "cc-cnp",
    "clean-psn-wrap-interleaved",
    "req-read-retry",
    "clean-recoveries",
    "cm-reconnect-faults",
];

fn suite_captures() -> Vec<PathBuf> {
    let mut v = vec![root().join("pcaps/sample.pcap")];
    v.extend(SUITE.iter().map(|n| root().join(format!("pcaps/conformance/{n}.pcap"))));
    v
}

/// Without a browser: the written page itself has the marks `stats` and `check` count.
#[test]
fn page_marks_match_stats_and_check() {
    let dir = browser::scratch("report-page");
    for p in suite_captures() {
        let out = dir.join("r.html");
        let html = report(&p, &out, &[]);
        check_counts(&p, &html);
        assert!(html.contains("Content-Security-Policy"), "no CSP");
    }
}

/// Every capture of the suite gives a report (exit 0 or 1, a page with its findings).
#[test]
fn every_suite_capture_reports() {
    let dir = browser::scratch("report-suite");
    let mut n = 0;
    for e in std::fs::read_dir(root().join("pcaps/conformance")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pcap") {
            let html = report(&p, &dir.join("r.html"), &[]);
            assert!(html.ends_with("</html>\n"));
            n += 1;
        }
    }
    assert!(n >= 30, "{n} suite captures");
}

/// The real captures give reports too (they skip, with a note, when not configured).
#[test]
fn real_captures_report() {
    let Some(real) = real::real_dir() else { return };
    let dir = browser::scratch("report-real");
    for (file, _) in real::ground_truth(&real) {
        let html = report(&real.join(&file), &dir.join("r.html"), &[]);
        assert!(html.ends_with("</html>\n"), "{file}");
    }
}

#[test]
fn chromium_renders_reports() {
    let Some(chromium) = browser::chromium() else { return };
    let dir = browser::scratch("report-chromium");
    for p in suite_captures() {
        let page = dir.join(format!("{}.html", p.file_stem().unwrap().to_str().unwrap()));
        report(&p, &page, &[]);
        let r = browser::dump_dom(chromium, &page, &dir);
        assert!(r.console.is_empty(), "{}: console: {:?}", p.display(), r.console);
        assert!(
            r.dom.contains("data-ready=\"1\""),
            "{}: the page's script did not run",
            p.display()
        );
        check_counts(&p, &r.dom);
    }
    // The screenshot of the sample's report is not blank.
    let page = dir.join("sample.html");
    let png = dir.join("sample.png");
    browser::screenshot(chromium, &page, &png, &dir, (1200, 1600));
    let n = browser::colours(&png, 64);
    assert!(n >= 8, "screenshot has {n} colours: blank?");
}

/// `graph --conn` writes the one graph, the same marks; an unknown or ambiguous name is a
/// clear error (exit 2).
#[test]
fn graph_one_connection() {
    let dir = browser::scratch("graph");
    let p = root().join("pcaps/conformance/req-gbn-retx-same.pcap");
    let want = expected(&p);
    let (name, counts) = want.iter().next().unwrap();
    let out = dir.join("g.svg");
    let o = Command::new(BIN)
        .arg("graph")
        .arg(&p)
        .args(["--conn", name, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<?xml"));
    assert_eq!(marks(&svg).get(name), Some(counts));
    let o = Command::new(BIN)
        .arg("graph")
        .arg(&p)
        .args(["--conn", "0x999999", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no RC/UC/XRC connection named '0x999999'") && err.contains(name.as_str()),
        "{err}"
    );
    let sample = root().join("pcaps/sample.pcap");
    let o = Command::new(BIN)
        .arg("graph")
        .arg(&sample)
        .args(["--conn", "QP", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("names"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Bad input: a clear message naming the file, exit 2, no page.
#[test]
fn bad_input_is_an_error() {
    let dir = browser::scratch("report-bad");
    let bad = dir.join("bad.pcap");
    std::fs::write(&bad, b"this is not a capture").unwrap();
    let out = dir.join("r.html");
    let o = Command::new(BIN).arg("report").arg(&bad).arg("-o").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.pcap"));
    let o = Command::new(BIN).args(["report", "-", "-o"]).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not '-'"));
}

/// Without a browser: the timing and congestion section holds, per connection, the values of
/// `stats --format json` (each cell names its member and its exact value), states the
/// capture point, and shows the figures each generated capture is made of (the generator's
/// constants: ACK 3 us, READ 5 us, NAK 2.5 us, RNR 1.28 ms advertised; t = 12; CNPs 50 us
/// apart per QP; the REQ's Local ACK Timeout 14 against timeouts of 2^17).
#[test]
fn timing_section_is_stats_json() {
    let dir = browser::scratch("report-timing");
    let cases: [(&str, &[(&str, u64)]); 4] = [
        (
            "clean-timing-latencies",
            &[
                ("timing.ack_latency_ns.p50", 3_000),
                ("timing.read_latency_ns.first_response.max", 5_000),
                ("timing.nak_generation_ns.p50", 2_500),
                ("timing.rnr_waits.0.advertised_ns", 1_280_000),
                ("timing.rnr_waits.0.waited_ns", 1_300_000),
            ],
        ),
        (
            "clean-timing-backoff",
            &[
                ("timing.inferred_timeout_exponent.exponent", 12),
                ("timing.timeout_retransmissions.0.measured_ns", 16_777_216),
                ("timing.timeout_retransmissions.2.retry", 3),
            ],
        ),
        (
            "clean-congestion-pacing",
            &[("congestion.cnp_interval_ns.qp.min", 50_000), ("congestion.cnps", 4)],
        ),
        (
            "req-cm-ack-timeout",
            &[
                ("timing.negotiated.local_ack_timeout", 14),
                ("timing.inferred_timeout_exponent.exponent", 17),
            ],
        ),
    ];
    for (name, known) in cases {
        let cap = root().join(format!("pcaps/conformance/{name}.pcap"));
        let html = report(&cap, &dir.join("r.html"), &[]);
        assert!(html.contains("a host capture measures what that host saw"), "{name}");
        let o = Command::new(BIN).args(["stats", "--format", "json"]).arg(&cap).output().unwrap();
        let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let by_name: BTreeMap<String, &serde_json::Value> = s["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (conn_name(&c["connection"]), c))
            .collect();
        let mut seen: BTreeMap<String, u64> = BTreeMap::new();
        let mut sections = 0;
        for chunk in html.split("<section class=\"timing\"").skip(1) {
            sections += 1;
            let head = format!(" {}", &chunk[..chunk.find('>').unwrap()]);
            let conn = attr(&head, "data-conn").unwrap().replace("&lt;", "<").replace("&gt;", ">");
            let c = by_name.get(&conn).unwrap_or_else(|| panic!("{name}: no connection {conn}"));
            let body = &chunk[..chunk.find("</section>").unwrap()];
            for tag in body.split('<').skip(1) {
                let tag = format!(" {}", &tag[..tag.find('>').unwrap_or(tag.len())]);
                let (Some(k), Some(v)) = (attr(&tag, "data-k"), attr(&tag, "data-v")) else {
                    continue;
                };
                // The member the cell names, in stats' JSON (numbers index arrays).
                let want = k.split('.').fold(*c, |j, p| match p.parse::<usize>() {
                    Ok(i) => &j[i],
                    Err(_) => &j[p],
                });
                let v: u64 = v.parse().unwrap();
                assert_eq!(want.as_u64(), Some(v), "{name}: {conn}: {k}");
                *seen.entry(k.to_string()).or_default() += 1;
                if let Some((_, x)) = known.iter().find(|(kk, _)| *kk == k) {
                    assert_eq!(v, *x, "{name}: {k}: the generator's value");
                }
            }
        }
        assert!(sections > 0, "{name}: no timing section");
        for (k, _) in known {
            assert!(seen.contains_key(*k), "{name}: the page lacks {k}: {seen:?}");
        }
    }
}
