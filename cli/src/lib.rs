//! roce-inspect: decoding and output for the `roce-inspect` command line (captures are read
//! by roce-capture).

pub mod annotate;
pub mod check;
pub mod cm_text;
pub mod diagnose;
pub mod dissect;
pub mod expect;
#[cfg(feature = "parquet")]
pub mod export;
pub mod filter;
pub mod follow;
pub mod gen;
pub mod input;
#[cfg(feature = "live")]
pub mod live;
pub mod nic_counters;
pub mod outfile;
pub mod output;
pub mod quote;
pub mod report;
pub mod stats;
pub mod stop;
pub mod style;
pub mod tap;
pub mod taps;
pub mod text;
pub mod threads;
pub mod timing_text;
pub mod tshark;

/// What `--version` prints after the name: the crate version, the commit it was built from
/// (build.rs: `git rev-parse --short HEAD` in a checkout, the commit cargo recorded when it
/// packaged the crate for crates.io, or "unknown") and the features roce-parser was built
/// with, e.g. `0.1.0 (commit f2a3dca, roce-parser features: std)`.
pub fn version() -> &'static str {
    static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let features = match roce_parser::FEATURES {
            [] => "none".to_string(),
            f => f.join(", "),
        };
        format!(
            "{} (commit {}, roce-parser features: {features})",
            env!("CARGO_PKG_VERSION"),
            env!("ROCE_INSPECT_COMMIT")
        )
    });
    &VERSION
}
