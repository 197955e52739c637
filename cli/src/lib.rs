//! roce-inspect: capture reading and (later) output for the `roce-inspect` command line.

pub mod capture;
