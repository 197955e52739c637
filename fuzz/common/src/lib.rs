//! The bodies of the roce fuzz targets.
//!
//! Each libFuzzer binary in `fuzz/fuzz_targets/` is one line that calls a function of
//! [`targets`] here; the corpus tools (`fuzz/tools`: `seeds`, `coverage`) and the replay test
//! (`cargo test` in `fuzz/`) call the same functions on the committed corpus, so what the
//! coverage figure counts is exactly what the fuzzer runs, and the corpus can be replayed on
//! stable Rust without libFuzzer.
//!
//! Every target panics (which libFuzzer reports as a crash) when the parser panics or when
//! one of the properties it checks fails; [`Reach`] records which opcodes, extended headers
//! and CM messages an input reached.

pub mod check;
pub mod icrc_ref;
pub mod multi;
pub mod reach;
pub mod sequence;
pub mod spec;
pub mod targets;

pub use reach::Reach;

/// A target body: the fuzzer's bytes, and the counters of what they reached.
pub type Target = fn(&[u8], &mut Reach);

/// Every target, by the name of its libFuzzer binary and of its `corpus/` folder.
pub const TARGETS: &[(&str, Target)] = &[
    ("ethernet", targets::ethernet),
    ("udp_payload", targets::udp_payload),
    ("rocev1", targets::rocev1),
    ("roundtrip", targets::roundtrip),
    ("icrc", targets::icrc),
    ("cm_mad", targets::cm_mad),
    ("capture", targets::capture),
    ("conformance", targets::conformance),
    ("sharded_checker", targets::sharded_checker),
    ("expect_file", targets::expect_file),
    ("ffi", targets::ffi),
    ("annotate", targets::annotate),
    ("segments", targets::segments),
    ("frame_list", targets::frame_list),
    ("nic_counters", targets::nic_counters),
    ("filter", targets::filter),
    ("write_capture", targets::write_capture),
    ("encap", targets::encap),
    ("infiniband", targets::infiniband),
    ("merge", targets::merge),
    ("tap_options", targets::tap_options),
];
