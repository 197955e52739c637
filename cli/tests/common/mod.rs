//! Helpers shared by the report and annotation tests.
#![allow(dead_code)]
pub mod browser;
pub mod pcapng;
