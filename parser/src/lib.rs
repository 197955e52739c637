//! roce-parser: a zero-copy, `no_std`, panic-free dissector for RoCEv2 and RoCEv1.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(any(feature = "std", test))]
extern crate std;

mod bytes;
pub mod error;
pub mod problems;

pub use error::{Error, ErrorKind, Layer, Result};
pub use problems::{Problem, Problems};
pub mod cm;
pub mod headers;
pub mod opcode;

pub use headers::{ExtHeader, ExtHeaders};
pub use opcode::{OpcodeInfo, Operation, PayloadRule, Position, Role, Transport};
