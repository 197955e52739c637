//! roce-inspect: capture reading, decoding and output for the `roce-inspect` command line.

pub mod capture;
pub mod check;
pub mod cm_json;
pub mod cm_text;
pub mod dissect;
pub mod gen;
pub mod input;
pub mod stats;
pub mod text;
