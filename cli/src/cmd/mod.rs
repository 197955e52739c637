//! The commands: one module each, with its clap arguments (`#[derive(clap::Args)]`) and a
//! `run` that turns them into the library's options in one place and calls the library.
//! The argument groups several commands share are in `common`.

pub mod check;
pub mod common;
pub mod diagnose;
pub mod dissect;
pub mod doc;
#[cfg(feature = "parquet")]
pub mod export;
pub mod gen;
pub mod graph;
pub mod report;
pub mod rules;
pub mod stats;

/// What a command comes to: its exit status, or an error (printed by `main`, exit 2).
pub type Outcome = Result<std::process::ExitCode, roce_inspect::input::InputError>;
