//! Decimation keeps the page bounded and every retransmission, NAK and CNP visible: one RC
//! connection of 30,000 requests across the PSN wrap, go-back-N (a NAK and five packets
//! resent) every 50 requests and a CNP every 97: more marks than a flow's budget, so they
//! merge; the drawn request points stay within the budget, and the packets the marks stand
//! for (`data-n`) are exactly what `stats` counts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;

use roce_analysis::series::{MARK_BUDGET, POINT_BUDGET};
use roce_inspect::internal::gen::{Endpoint, RcConn, Trace};

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

fn sum_n(html: &str, class: &str) -> (u64, usize) {
    let pat = format!("<g class=\"{class}\" data-n=\"");
    let mut total = 0;
    let mut marks = 0;
    for s in html.split(&pat).skip(1) {
        total += s[..s.find('"').unwrap()].parse::<u64>().unwrap();
        marks += 1;
    }
    (total, marks)
}

#[test]
fn marks_merge_within_the_budget_and_keep_their_counts() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-decimation");
    std::fs::create_dir_all(&dir).unwrap();
    let a = Endpoint::new(IpAddr::V4(Ipv4Addr::new(10, 7, 0, 1)), 0x11);
    let b = Endpoint::new(IpAddr::V4(Ipv4Addr::new(10, 7, 0, 2)), 0x22);
    let mut c = RcConn::new(a, b, 1024, 0xff_f000, 100);
    let mut t = Trace::new();
    let (mut retx, mut naks, mut cnps) = (0u64, 0u64, 0u64);
    let mut recent = Vec::new();
    for i in 1..=30_000u32 {
        let pkts = c.message(true, false, 64, None);
        for s in &pkts {
            c.emit_request(&mut t, true, s);
        }
        recent.extend(pkts);
        if recent.len() > 5 {
            recent.drain(..recent.len() - 5);
        }
        if i % 50 == 0 {
            c.nak(&mut t, true, recent[0].psn, 0x60);
            naks += 1;
            for s in &recent {
                c.emit_request(&mut t, true, s);
                retx += 1;
            }
        } else if i % 10 == 0 {
            let last = recent.last().unwrap().psn;
            c.ack(&mut t, true, last, 10);
        }
        if i % 97 == 0 {
            c.cnp(&mut t, true);
            cnps += 1;
        }
    }
    let cap = dir.join("gbn.pcap");
    t.write_pcap(std::fs::File::create(&cap).unwrap()).unwrap();
    let out = dir.join("r.html");
    let o = Command::new(BIN).arg("report").arg(&cap).arg("-o").arg(&out).output().unwrap();
    assert!(o.status.code().unwrap() <= 1, "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.len() < 2 << 20, "{} bytes", html.len());
    let (r, rm) = sum_n(&html, "m-retx");
    let (n, nm) = sum_n(&html, "m-nak");
    let (k, km) = sum_n(&html, "m-cnp");
    assert_eq!((r, n, k), (retx, naks, cnps), "packets the marks stand for");
    assert!(rm + nm + km <= 2 * MARK_BUDGET, "{} marks", rm + nm + km);
    assert!(rm + nm + km < (600 + 600 + 309), "marks were not merged: {}", rm + nm + km);
    let req = html.split("<path class=\"req\"").nth(1).unwrap();
    let drawn = req[..req.find("\">").unwrap()].matches('M').count();
    assert!(drawn <= 2 * POINT_BUDGET, "{drawn} request points drawn");
    assert!(req.contains("30000 new request packets"), "{}", &req[..200.min(req.len())]);
}
