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

/// Where captures are read from: the real captures beside the project and the project's own
/// `pcaps/` (whichever exist).
pub fn capture_dirs() -> Vec<PathBuf> {
    let root = project_root();
    [root.join("../shared/pcaps/real"), root.join("pcaps")]
        .into_iter()
        .filter(|d| d.is_dir())
        .collect()
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
