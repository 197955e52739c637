#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Every frame of every capture in ../shared/pcaps/real: RoCEv2 / RoCEv1 counts and ICRC
//! ok / bad / unverifiable counts must equal the ground truth in that folder's README.

use std::fs::File;

use pcap_parser::{create_reader, Linktype, PcapBlockOwned, PcapError};
use roce_parser::*;

#[path = "../../testdata/real.rs"]
mod real;
use real::{ground_truth, real_dir};

/// Calls `f(linktype, frame)` for every frame of a pcap or pcapng file.
pub fn for_each_frame(path: &std::path::Path, mut f: impl FnMut(Linktype, &[u8])) {
    let mut reader = create_reader(1 << 20, File::open(path).unwrap()).unwrap();
    let mut if_linktypes: Vec<Linktype> = Vec::new();
    let mut legacy = Linktype::ETHERNET;
    loop {
        match reader.next() {
            Ok((offset, block)) => {
                match block {
                    PcapBlockOwned::LegacyHeader(h) => legacy = h.network,
                    PcapBlockOwned::Legacy(b) => f(legacy, b.data),
                    PcapBlockOwned::NG(pcap_parser::Block::SectionHeader(_)) => {
                        if_linktypes.clear()
                    }
                    PcapBlockOwned::NG(pcap_parser::Block::InterfaceDescription(idb)) => {
                        if_linktypes.push(idb.linktype)
                    }
                    PcapBlockOwned::NG(pcap_parser::Block::EnhancedPacket(epb)) => {
                        let lt = if_linktypes[epb.if_id as usize];
                        f(lt, &epb.data[..epb.caplen as usize]);
                    }
                    PcapBlockOwned::NG(pcap_parser::Block::SimplePacket(spb)) => {
                        f(if_linktypes[0], spb.data)
                    }
                    PcapBlockOwned::NG(_) => {}
                }
                reader.consume(offset);
            }
            Err(PcapError::Eof) => break,
            Err(PcapError::Incomplete(_)) => reader.refill().unwrap(),
            Err(e) => panic!("{}: {e:?}", path.display()),
        }
    }
}

#[test]
fn counts_match_the_readme() {
    let Some(dir) = real_dir() else { return };
    let truth = ground_truth(&dir);
    assert!(truth.len() >= 20, "README table not found");
    let cfg = Config::default();
    for (name, expect) in truth {
        let mut got = [0u64; 6];
        for_each_frame(&dir.join(&name), |lt, frame| {
            got[0] += 1;
            if lt != Linktype::ETHERNET {
                return;
            }
            let Ok(p) = parse_ethernet(frame, &cfg) else {
                return;
            };
            let Some(r) = p.roce else { return };
            match r.version {
                RoceVersion::V2 => got[1] += 1,
                RoceVersion::V1 => got[2] += 1,
            }
            match r.icrc_status {
                IcrcStatus::Ok => got[3] += 1,
                IcrcStatus::Bad { .. } => got[4] += 1,
                IcrcStatus::Unverifiable => got[5] += 1,
                IcrcStatus::NotChecked => panic!("{name}: ICRC not checked"),
            }
        });
        assert_eq!(got, expect, "{name}: [frames, RoCEv2, RoCEv1, ICRC ok, bad, unverifiable]");
    }
}
