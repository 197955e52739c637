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
use roce_inspect::internal::input::for_each_frame;
use roce_inspect::internal::stats::Stats;
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
    let (report, _) =
        roce_inspect::internal::check::check_file(path, &cfg, Options::default()).unwrap();
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

/// The text of `s` up to the `</svg>` that closes the `<svg` it is inside (a graph holds a
/// nested `<svg>` per panel: its plot).
fn svg_body(s: &str) -> &str {
    let (mut depth, mut i) = (1, 0);
    loop {
        let close = i + s[i..].find("</svg>").unwrap();
        match s[i..close].find("<svg") {
            Some(o) => {
                depth += 1;
                i += o + 4;
            }
            None => {
                depth -= 1;
                if depth == 0 {
                    return &s[..close];
                }
                i = close + 6;
            }
        }
    }
}

/// Per sequence graph (by its data-conn): the packets its marks of each class stand for.
fn marks(dom: &str) -> BTreeMap<String, [u64; 5]> {
    let mut m = BTreeMap::new();
    // `class="seq"` as written, `class="seq zoomable"` once the page's script ran.
    for chunk in dom.split("<svg class=\"seq").skip(1) {
        let head = &chunk[..chunk.find('>').unwrap()];
        let conn = attr(&format!(" {head}"), "data-conn")
            .unwrap()
            .replace("&lt;", "<")
            .replace("&gt;", ">");
        let body = svg_body(chunk);
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

fn suite_captures() -> Vec<PathBuf> {
    common::graphed::sample_and_suite(&root())
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
    // The timing section as Chromium parsed it holds the figures the page was written with
    // (timing_section_is_stats_json compares those with stats), the new rate and pacing
    // cells among them.
    let cap = root().join("pcaps/conformance/clean-congestion-pacing.pcap");
    let page = dir.join("pacing.html");
    let written = report(&cap, &page, &[]);
    let r = browser::dump_dom(chromium, &page, &dir);
    assert!(r.console.is_empty(), "pacing: console: {:?}", r.console);
    let (want, got) = (figure_pairs(&written), figure_pairs(&r.dom));
    assert_eq!(got, want, "the rendered page's figures");
    for k in [
        "congestion.rate_before_after_cnp.listed.0.before_bps",
        "congestion.destinations.0.cnp_interval_ns.min",
    ] {
        assert!(got.iter().any(|(kk, _)| kk == k), "the rendered page lacks {k}");
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

/// Every `data-k="K" data-v="V"` pair of the timing section of a page or a DOM, in order
/// (neither holds a quote, `<` or `>`, so the serialisations of the page and of Chromium's
/// DOM agree on them; the graphs' legend, before it, has keys of its own).
fn figure_pairs(html: &str) -> Vec<(String, String)> {
    let mut v = Vec::new();
    let timing = &html[html.find("id=\"timing\"").unwrap()..];
    for chunk in timing.split("data-k=\"").skip(1) {
        let (k, rest) = chunk.split_once('"').unwrap();
        let rest = rest.strip_prefix(" data-v=\"").unwrap();
        let (val, _) = rest.split_once('"').unwrap();
        v.push((k.to_string(), val.to_string()));
    }
    v
}

/// Every `data-k`/`data-v` figure in `body`: its member in `doc` (a dotted path, numbers
/// index arrays) holds exactly its value; counted in `seen` (by key, and by `scope: key`),
/// and a figure `known` names (as `key`, in every scope, or as `scope: key`, in that one) has
/// the generator's value.
fn figures_are_json(
    scope: &str,
    body: &str,
    doc: &serde_json::Value,
    known: &[(&str, u64)],
    seen: &mut BTreeMap<String, u64>,
) {
    let name = scope;
    for tag in body.split('<').skip(1) {
        let tag = format!(" {}", &tag[..tag.find('>').unwrap_or(tag.len())]);
        let (Some(k), Some(v)) = (attr(&tag, "data-k"), attr(&tag, "data-v")) else {
            continue;
        };
        let want = k.split('.').fold(doc, |j, p| match p.parse::<usize>() {
            Ok(i) => &j[i],
            Err(_) => &j[p],
        });
        let v: u64 = v.parse().unwrap();
        assert_eq!(want.as_u64(), Some(v), "{name}: {k}");
        let scoped = format!("{scope}: {k}");
        *seen.entry(k.to_string()).or_default() += 1;
        *seen.entry(scoped.clone()).or_default() += 1;
        for (_, x) in known.iter().filter(|(kk, _)| *kk == k || *kk == scoped) {
            assert_eq!(v, *x, "{name}: {k}: the generator's value");
        }
    }
}

/// The timing sections of a report against `stats --format json` of the same capture: each
/// connection's figures are members of its connection object, the CNP pacing table's of
/// the top-level document. Returns the figures seen, and the number of connection sections.
fn timing_figures(
    name: &str,
    cap: &Path,
    html: &str,
    known: &[(&str, u64)],
) -> (BTreeMap<String, u64>, usize) {
    let o = Command::new(BIN).args(["stats", "--format", "json"]).arg(cap).output().unwrap();
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
        figures_are_json(&conn, body, c, known, &mut seen);
    }
    if let Some(chunk) = html.split("<section class=\"cnp-scopes\"").nth(1) {
        let body = &chunk[..chunk.find("</section>").unwrap()];
        figures_are_json("CNP pacing", body, &s, known, &mut seen);
    }
    (seen, sections)
}

/// Without a browser: the timing and congestion section holds, per connection, the values of
/// `stats --format json` (each cell names its member and its exact value), states the
/// capture point, and shows the figures each generated capture is made of (the generator's
/// constants: ACK 3 us, READ 5 us, NAK 2.5 us, RNR 1.28 ms advertised; t = 12; CNPs 50 us
/// apart per QP, 20 us per IP pair, 10 us per destination, the sender's four CE-marked
/// WRITEs before the first CNP and three after; the REQ's Local ACK Timeout 14 against
/// timeouts of 2^17).
#[test]
fn timing_section_is_stats_json() {
    use roce_inspect::internal::gen::timers as g;
    let dir = browser::scratch("report-timing");
    // A CE-marked WRITE_ONLY of the pacing capture, on the wire: Ethernet 14, IPv4 20, UDP 8,
    // BTH 12, RETH 16, payload, ICRC 4.
    let write = 14 + 20 + 8 + 12 + 16 + g::CNP_WRITE_LEN as u64 + 4;
    let burst = |k: usize| g::BURSTS[k] as u64 * write;
    // The first connection's reactions (the others send one WRITE a round).
    let r0 = "10.9.0.1 QP 0x000111 <-> 10.9.0.2 QP 0x000222: congestion.rate_before_after_cnp";
    let pacing: Vec<(String, u64)> = vec![
        ("congestion.cnp_interval_ns.qp.min".into(), g::CNP_ROUND),
        ("congestion.cnps".into(), 4),
        ("congestion.rate_before_after_cnp.reactions".into(), 4),
        ("congestion.rate_before_after_cnp.listed.0.before_ns".into(), g::CE_TO_CNP),
        (format!("{r0}.slowed"), 3),
        (format!("{r0}.listed.0.before_bytes"), burst(0)),
        (format!("{r0}.listed.0.before_ns"), g::CE_TO_CNP),
        (format!("{r0}.listed.0.after_bytes"), burst(1)),
        (format!("{r0}.listed.0.after_ns"), g::CNP_ROUND),
        (format!("{r0}.listed.0.before_bps"), burst(0) * 8 * 1_000_000_000 / g::CE_TO_CNP),
        ("congestion.ip_pairs.0.cnp_interval_ns.min".into(), g::SECOND_OFFSET),
        ("congestion.ip_pairs.0.cnp_interval_ns.max".into(), g::CNP_ROUND - g::SECOND_OFFSET),
        ("congestion.ip_pairs.1.cnp_interval_ns.min".into(), g::CNP_ROUND),
        (
            "congestion.destinations.0.cnp_interval_ns.min".into(),
            g::THIRD_OFFSET - g::SECOND_OFFSET,
        ),
        ("congestion.destinations.0.cnps".into(), 12),
    ];
    let pacing: Vec<(&str, u64)> = pacing.iter().map(|(k, v)| (k.as_str(), *v)).collect();
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
        ("clean-congestion-pacing", &pacing),
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
        let (seen, sections) = timing_figures(name, &cap, &html, known);
        assert!(sections > 0, "{name}: no timing section");
        for (k, _) in known {
            assert!(seen.contains_key(*k), "{name}: the page lacks {k}: {seen:?}");
        }
    }
}

/// A long congested capture: the pacing capture's four rounds repeated 30 times (120 CNPs
/// to each sender QP). The page lists 8 reactions per connection and says how many more;
/// every figure still equals `stats --format json`'s.
#[test]
fn cnp_reactions_are_bounded() {
    use roce_inspect::internal::gen::timers as g;
    let dir = browser::scratch("report-timing-bounded");
    let base = g::congestion();
    // The CM exchanges (9 frames), then the rounds, shifted by four rounds and a gap.
    let (cm, rounds) = base.frames.split_at(9);
    let span = g::BURSTS.len() as u64 * g::CNP_ROUND + 100_000;
    let mut t = roce_inspect::internal::gen::Trace::new();
    t.frames.extend_from_slice(cm);
    for k in 0..30u64 {
        t.frames.extend(rounds.iter().map(|f| roce_inspect::internal::gen::GenFrame {
            ts_ns: f.ts_ns + k * span,
            data: f.data.clone(),
        }));
    }
    let cap = dir.join("long-pacing.pcap");
    t.write_pcap(std::fs::File::create(&cap).unwrap()).unwrap();
    let html = report(&cap, &dir.join("r.html"), &[]);
    let (seen, sections) = timing_figures("long-pacing", &cap, &html, &[]);
    assert_eq!(sections, 3, "the three CM-opened connections");
    let k = "congestion.rate_before_after_cnp";
    let rows: u64 = (0..8).map(|i| seen[&format!("{k}.listed.{i}.cnp_frame")]).sum();
    assert_eq!(rows, 3 * 8, "8 reactions shown per connection: {seen:?}");
    assert!(!seen.contains_key(&format!("{k}.listed.8.cnp_frame")));
    assert_eq!(seen.get(&format!("{k}.reactions")), Some(&3));
    assert_eq!(html.matches("and 112 more CNPs").count(), 3, "120 reactions, 8 shown");
}
