//! The captures the report tests draw: the sample and the suite scenarios with a graph of
//! each kind of mark (go-back-N, RNR waits, CNPs, PSN wrap, READ retries, reconnects).

use std::path::{Path, PathBuf};

/// The suite scenarios, by name (pcaps/conformance/NAME.pcap).
pub const SUITE: [&str; 8] = [
    "req-gbn-retx-same",
    "req-gbn-new-psn",
    "req-rnr-wait",
    "cc-cnp",
    "clean-psn-wrap-interleaved",
    "req-read-retry",
    "clean-recoveries",
    "cm-reconnect-faults",
];

/// The sample, then the [`SUITE`] scenarios, under the project's root `root`.
pub fn sample_and_suite(root: &Path) -> Vec<PathBuf> {
    let mut v = vec![root.join("pcaps/sample.pcap")];
    v.extend(SUITE.iter().map(|n| root.join(format!("pcaps/conformance/{n}.pcap"))));
    v
}
