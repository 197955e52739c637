//! Helpers shared by the tests (report, annotation, live output).
#![allow(dead_code)]
pub mod browser;
pub mod graphed;
pub mod names;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod pcapng;
pub mod sends;
pub mod shipped;
