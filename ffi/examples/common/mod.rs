//! Shared by the examples: the docs/wire.md vectors and a capture reader (testdata/pcap_frames.rs,
//! pcap-parser, so that the Rust side reads captures with other code than the C test's own
//! reader).
#![allow(dead_code)]

/// The docs/wire.md ICRC test vectors, then two made from V1: `V1QQ` with an 802.1ad and an
/// 802.1Q tag (PCP 5 VID 0x064, PCP 3 DEI 1 VID 0x123) and `V1M` with IP version 5
/// (malformed); then `MADX`, a UD SEND_ONLY to QP1 whose 32-byte CM MAD has attribute ID
/// 0x0099 (a short MAD, an unknown attribute: `MadTruncated` and `MadUnknownAttribute`), as
/// `FrameBuilder` writes it (ffi/tests/api.rs checks that). The C test embeds the same strings.
pub const VECTORS: [(&str, &str); 6] = [
    ("V1", "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3"),
    ("V2", "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a"),
    ("V3", "ffffffffffff02fc0000000186dd62012345001c1140fe800000000000000000000000000001fe800000000000000000000000000002c35012b7001c4bf11100ffff40000011000000051f0000076afb05a0"),
    ("V1QQ", "248a07a8fa22248a07a8fa2288a8a06481007123080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3"),
    ("V1M", "248a07a8fa22248a07a8fa22080055010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3"),
    ("MADX", "0200000000020200000000010800456a0054000040004011262d0a0000010a000002c00012b7004000006400ffff00000001000000078001000000000001010702030000000001020304050607080099000000000000abababababababab472bc881"),
];

pub fn hex(s: &str) -> Result<Vec<u8>, String> {
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .ok_or_else(|| format!("bad hex at {i}"))
        })
        .collect()
}

#[path = "../../../testdata/pcap_frames.rs"]
mod pcap_frames;
pub use pcap_frames::for_each_frame;
