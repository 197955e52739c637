//! The real captures of `../shared/pcaps/real` and their README's ground truth, for the tests
//! of every crate (included with `#[path = ".../testdata/real.rs"] mod real;`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `../shared/pcaps/real` beside the project, or `None` (after a note) when it is missing
/// outside CI; with `CI=true` a missing folder fails the test.
pub fn real_dir() -> Option<PathBuf> {
    // Every crate of the workspace sits one level below the project root.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/pcaps/real");
    if dir.join("README.md").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing: CI must have ../shared beside the project",
        dir.display()
    );
    eprintln!("note: {} not found, the real captures are left out", dir.display());
    None
}

/// The README table's rows: (file, [frames, RoCEv2, RoCEv1, ICRC ok, bad, unverifiable]).
pub fn ground_truth(dir: &Path) -> Vec<(String, [u64; 6])> {
    std::fs::read_to_string(dir.join("README.md"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("| ") && (l.contains(".pcap |") || l.contains(".pcapng |")))
        .filter_map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            let n = |i: usize| c.get(i).and_then(|v| v.parse::<u64>().ok());
            Some((c.get(1)?.to_string(), [n(4)?, n(5)?, n(6)?, n(7)?, n(8)?, n(9)?]))
        })
        .collect()
}
