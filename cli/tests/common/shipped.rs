//! The captures shipped in pcaps/: the sample, then the conformance suite in name order.

use std::path::{Path, PathBuf};

/// pcaps/sample.pcap and every pcaps/conformance/*.pcap, sorted by name.
pub fn captures() -> Vec<PathBuf> {
    let pcaps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps");
    let mut v = vec![pcaps.join("sample.pcap")];
    let mut suite: Vec<PathBuf> = std::fs::read_dir(pcaps.join("conformance"))
        .expect("pcaps/conformance")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    suite.sort();
    v.extend(suite);
    v
}
