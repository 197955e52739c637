//! roce-inspect's command line: [`run`] is the whole program (`cli/src/main.rs` calls it),
//! and [`version`] what `--version` prints. Everything else is private: the commands
//! (`cmd/`), their outputs and the threads they run on build on the library crates, which are
//! the API to embed (roce-parser, roce-capture, roce-conformance, roce-analysis).

mod annotate;
mod check;
mod cm_text;
mod cmd;
mod diagnose;
mod dissect;
mod expect;
#[cfg(feature = "parquet")]
mod export;
mod filter;
mod follow;
mod gen;
mod input;
#[cfg(feature = "live")]
mod live;
mod nic_counters;
mod outfile;
mod output;
mod quote;
mod report;
mod stats;
mod stop;
mod style;
mod tap;
mod taps;
mod text;
mod threads;
mod timing_text;
mod tshark;

pub use cmd::run;

/// What the tests and the fuzz targets reach beside the command line. Not an API: it changes
/// with the command line, without notice; embed the library crates instead (roce-parser,
/// roce-capture, roce-conformance, roce-analysis).
#[doc(hidden)]
pub mod internal {
    /// `check --annotate`: findings as pcapng comments.
    pub mod annotate {
        pub use crate::annotate::*;
    }
    /// `check`'s runner, views and expect file.
    pub mod check {
        pub use crate::check::*;
    }
    /// `dissect`'s writers.
    pub mod dissect {
        pub use crate::dissect::*;
    }
    /// `export`'s tables.
    #[cfg(feature = "parquet")]
    pub mod export {
        pub use crate::export::*;
    }
    /// `-Y`.
    pub mod filter {
        pub use crate::filter::*;
    }
    /// `gen`: generated captures.
    pub mod gen {
        pub use crate::gen::*;
    }
    /// Captures to frames.
    pub mod input {
        pub use crate::input::*;
    }
    /// `check --nic-counters`.
    pub mod nic_counters {
        pub use crate::nic_counters::*;
    }
    /// Outputs completed only when whole.
    pub mod outfile {
        pub use crate::outfile::*;
    }
    /// `stats`.
    pub mod stats {
        pub use crate::stats::*;
    }
    /// The bytes of a capture read from a pipe, kept for `-w`.
    pub mod tap {
        pub use crate::tap::*;
    }
    /// Several taps at once.
    pub mod taps {
        pub use crate::taps::*;
    }
    /// `--threads`.
    pub mod threads {
        pub use crate::threads::*;
    }
    /// tshark's options.
    pub mod tshark {
        pub use crate::tshark::*;
    }
}

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
