//! Corpus tools for the roce fuzz targets: seeds from the real captures and the frame builder
//! (`seeds`), and the coverage figure (`coverage`): which opcodes, extended headers and CM
//! messages each target's corpus reaches, through the targets' own code.

pub mod capfile;
pub mod coverage;
pub mod seeds;

use std::path::PathBuf;

/// The project root (the directory holding `fuzz/` and `corpus/`).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("project root")
}

/// `corpus/` at the project root, one folder per target.
pub fn corpus_dir() -> PathBuf {
    project_root().join("corpus")
}

/// The real captures' folder, named by `ROCE_INSPECT_REAL_CAPTURES` (the helper the tests of
/// every crate use).
#[path = "../../../testdata/real.rs"]
mod real;

/// Where captures are read from: the real captures (`ROCE_INSPECT_REAL_CAPTURES`, when set)
/// and the project's own `pcaps/`. A variable naming a wrong folder stops the tool.
pub fn capture_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    match real::configured() {
        Ok(Some(dir)) => dirs.push(dir),
        Ok(None) => eprintln!(
            "note: {} is not set: the real captures are left out (set it to their folder)",
            real::VAR
        ),
        Err(e) => panic!("{e}"),
    }
    dirs.push(project_root().join("pcaps"));
    dirs
}

/// A short content hash for file names (FNV-1a, 64 bits).
pub fn fnv(bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
