#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Every frame of every capture in ../shared/pcaps/real: RoCEv2 / RoCEv1 counts and ICRC
//! ok / bad / unverifiable counts must equal the ground truth in that folder's README.

use roce_parser::*;

#[path = "../../testdata/real.rs"]
mod real;
use real::{ground_truth, real_dir};

#[path = "../../testdata/pcap_frames.rs"]
mod pcap_frames;
use pcap_frames::for_each_frame;

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
            if lt != 1 {
                // Only Ethernet frames (link type 1) are parsed.
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
        })
        .unwrap();
        assert_eq!(got, expect, "{name}: [frames, RoCEv2, RoCEv1, ICRC ok, bad, unverifiable]");
    }
}
