//! examples/check_capture.rs (a capture file through the pass and the checker, no
//! command line) on the project's sample and on a suite capture with findings: what
//! `roce-inspect check` says of the same files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

#[path = "../examples/check_capture.rs"]
mod check_capture;

fn pcaps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps")
}

#[test]
fn the_example_checks_the_sample() {
    let report = check_capture::check(&pcaps().join("sample.pcap")).unwrap();
    assert_eq!((report.frames, report.roce_frames), (39, 39));
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!((report.errors, report.warnings), (0, 0));
    // The RC connection opened by CM, the CM flows on QP1 and the UD traffic: as `stats`.
    assert_eq!(report.connections.len(), 5);
    let rc: Vec<_> = report.connections.iter().filter(|c| c.info.transport == "RC").collect();
    assert_eq!(rc.len(), 2, "one over IPv4 opened by CM, one over IPv6 without");
    assert_eq!(rc[0].info.paired_by, Some(roce_conformance::PairedBy::Cm));
    assert_eq!(rc[1].info.paired_by, Some(roce_conformance::PairedBy::Psn));
}

#[test]
fn the_example_finds_what_the_suite_expects() {
    // host-capture-loss-reorder.expect.json: default options, two capture warnings.
    let report =
        check_capture::check(&pcaps().join("conformance/host-capture-loss-reorder.pcap")).unwrap();
    let got: Vec<(&str, &[u64])> =
        report.findings.iter().map(|f| (f.rule, f.frames.as_slice())).collect();
    assert_eq!(got, [("CAP-GAP", &[1, 2][..]), ("CAP-REORDER", &[9, 10][..])]);
    assert_eq!((report.frames, report.errors, report.warnings), (22, 0, 2));
}

#[test]
fn the_example_names_a_file_that_is_not_a_capture() {
    let path = pcaps().join("sample.stats.json");
    let e = check_capture::check(&path).err().unwrap();
    assert!(e.nothing_read());
    assert!(e
        .to_string()
        .starts_with(&format!("{}: at byte offset 0: not a pcap", path.display())));
}
