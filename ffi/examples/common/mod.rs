//! Shared by the examples: the SPEC.md vectors and a capture reader (pcap-parser, so that the
//! Rust side reads captures with other code than the C test's own reader).
#![allow(dead_code)]

use std::fs::File;
use std::path::Path;

use pcap_parser::{create_reader, Linktype, PcapBlockOwned, PcapError};

/// The SPEC.md ICRC test vectors, then two made from V1: `V1QQ` with an 802.1ad and an
/// 802.1Q tag (PCP 5 VID 0x064, PCP 3 DEI 1 VID 0x123) and `V1M` with IP version 5
/// (malformed). The C test embeds the same strings.
pub const VECTORS: [(&str, &str); 5] = [
    ("V1", "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3"),
    ("V2", "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a"),
    ("V3", "ffffffffffff02fc0000000186dd62012345001c1140fe800000000000000000000000000001fe800000000000000000000000000002c35012b7001c4bf11100ffff40000011000000051f0000076afb05a0"),
    ("V1QQ", "248a07a8fa22248a07a8fa2288a8a06481007123080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3"),
    ("V1M", "248a07a8fa22248a07a8fa22080055010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3"),
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

/// Calls `f(linktype, frame)` for every packet of a pcap or pcapng file, in file order
/// (pcapng: Enhanced and Simple Packet Blocks).
pub fn for_each_frame(path: &Path, mut f: impl FnMut(i32, &[u8])) -> Result<(), String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader =
        create_reader(1 << 20, file).map_err(|e| format!("{}: {e:?}", path.display()))?;
    let mut if_linktypes: Vec<Linktype> = Vec::new();
    let mut legacy = Linktype::ETHERNET;
    loop {
        match reader.next() {
            Ok((offset, block)) => {
                match block {
                    PcapBlockOwned::LegacyHeader(h) => legacy = h.network,
                    PcapBlockOwned::Legacy(b) => f(legacy.0, b.data),
                    PcapBlockOwned::NG(pcap_parser::Block::SectionHeader(_)) => {
                        if_linktypes.clear()
                    }
                    PcapBlockOwned::NG(pcap_parser::Block::InterfaceDescription(idb)) => {
                        if_linktypes.push(idb.linktype)
                    }
                    PcapBlockOwned::NG(pcap_parser::Block::EnhancedPacket(epb)) => {
                        let lt = if_linktypes
                            .get(epb.if_id as usize)
                            .ok_or_else(|| format!("{}: bad interface id", path.display()))?;
                        let data = epb.data.get(..epb.caplen as usize).unwrap_or(epb.data);
                        f(lt.0, data);
                    }
                    PcapBlockOwned::NG(pcap_parser::Block::SimplePacket(spb)) => {
                        let lt = if_linktypes.first().map_or(1, |l| l.0);
                        let len = (spb.origlen as usize).min(spb.data.len());
                        f(lt, spb.data.get(..len).unwrap_or(spb.data));
                    }
                    PcapBlockOwned::NG(_) => {}
                }
                reader.consume(offset);
            }
            Err(PcapError::Eof) => break,
            Err(PcapError::Incomplete(_)) => {
                reader.refill().map_err(|e| format!("{}: {e:?}", path.display()))?
            }
            Err(e) => return Err(format!("{}: {e:?}", path.display())),
        }
    }
    Ok(())
}
