#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
#![allow(dead_code)]
//! Shared by the integration tests: the docs/wire.md vectors and hex decoding.

pub const V1: &str = "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3";
pub const V2: &str = "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a";
pub const V3: &str = "ffffffffffff02fc0000000186dd62012345001c1140fe800000000000000000000000000001fe800000000000000000000000000002c35012b7001c4bf11100ffff40000011000000051f0000076afb05a0";

pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}
