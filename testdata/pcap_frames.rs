//! A pcap / pcapng reader for tests and examples, on pcap-parser: independent of the
//! project's own reader (roce-capture, capture/), which the tests check against the same captures.
//! Included by path (`#[path = ".../testdata/pcap_frames.rs"] mod pcap_frames;`).
#![allow(dead_code)]

use std::fs::File;
use std::path::Path;

use pcap_parser::{create_reader, Linktype, PcapBlockOwned, PcapError};

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
