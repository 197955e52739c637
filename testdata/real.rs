//! The real captures and their README's ground truth, for the tests and tools of every crate
//! (included with `#[path = ".../testdata/real.rs"] mod real;`).
//!
//! The captures are not part of the repository. Their folder (the `.pcap` / `.pcapng` files
//! and the README.md with the table of frame counts) is named by one environment variable,
//! `ROCE_INSPECT_REAL_CAPTURES`; there is no default path. Unset, the checks that need them
//! are skipped, and each skip is written to the test output (past libtest's capture, so a
//! passing run shows it too) with the running count of skipped checks in that test binary and
//! how to enable them. With `CI=true` an unset variable fails the check; a variable naming a
//! folder without README.md always does. `ROCE_INSPECT_REAL_CAPTURES=none` declares them
//! absent on purpose (a hosted CI runner): skipped with the note, even under `CI=true`.
#![allow(dead_code)]

// Spelled out for the parser's unit tests, whose crate is `no_std` (with `extern crate std`).
use std::format;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::vec::Vec;

/// The environment variable naming the folder of the real captures.
pub const VAR: &str = "ROCE_INSPECT_REAL_CAPTURES";

/// The folder `ROCE_INSPECT_REAL_CAPTURES` names: `Ok(None)` when unset (or empty), `Err`
/// when it names something that is not a folder holding the captures' README.md.
pub fn configured() -> Result<Option<PathBuf>, String> {
    let Some(value) = std::env::var_os(VAR).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    if value == NONE {
        return Ok(None);
    }
    let dir = PathBuf::from(value);
    if dir.join("README.md").is_file() {
        Ok(Some(dir))
    } else {
        Err(format!(
            "{VAR}={} is not the folder of the real captures (no README.md in it)",
            dir.display()
        ))
    }
}

/// The value that declares the captures absent on purpose (a hosted CI runner, which cannot
/// have them): their checks are skipped, with the note, even under `CI=true`.
pub const NONE: &str = "none";

/// Checks skipped in this process because the real captures are not configured.
static SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// The folder of the real captures, for a test. `None` when `ROCE_INSPECT_REAL_CAPTURES` is
/// unset: the caller skips its check, and the skip is reported (see the module doc). Panics
/// when the variable names a wrong folder, or is unset under `CI=true`.
pub fn real_dir() -> Option<PathBuf> {
    match configured() {
        Ok(Some(dir)) => Some(dir),
        Err(e) => panic!("{e}"),
        Ok(None) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true")
                    || std::env::var(VAR).as_deref() == Ok(NONE),
                "CI=true but {VAR} is not set: CI must run the checks on the real captures \
                 (or set it to `{NONE}` where they cannot be)"
            );
            let n = SKIPPED.fetch_add(1, Ordering::Relaxed) + 1;
            let test = std::thread::current().name().unwrap_or("?").to_string();
            // Straight to the process's stderr: eprintln! would be captured by the test
            // harness and shown only on failure.
            let _ = writeln!(
                std::io::stderr(),
                "note: skipped `{test}`: it needs the real captures ({n} check(s) skipped so \
                 far in this test binary); set {VAR} to their folder to run it"
            );
            None
        }
    }
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
