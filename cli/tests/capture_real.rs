//! Every real capture in ../shared/pcaps/real must give the frame count of its README, and the
//! native InfiniBand (ERF) ones must iterate but get the clear unsupported-link-type message.
//! Without ../shared the tests skip with a note, except under CI=true, where they fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod capture_common;

use std::fs;
use std::path::Path;

use roce_inspect::capture::{self, l2_start, L2Error, L2Start, LinkType};

#[path = "../../testdata/real.rs"]
mod real;
use real::real_dir;

/// (file, link type column, frames) from the README's table.
fn expected(dir: &Path) -> Vec<(String, String, u64)> {
    let readme = fs::read_to_string(dir.join("README.md")).unwrap();
    let mut rows = Vec::new();
    for line in readme.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 6 || !(cells[1].ends_with(".pcap") || cells[1].ends_with(".pcapng")) {
            continue;
        }
        let frames = cells[4].parse().unwrap_or_else(|_| panic!("frames column of {line}"));
        rows.push((cells[1].to_string(), cells[3].to_string(), frames));
    }
    rows
}

#[test]
fn real_captures_give_their_frame_counts() {
    let Some(dir) = real_dir() else { return };
    let rows = expected(&dir);
    assert!(rows.len() >= 20, "README table not parsed: {} rows", rows.len());

    // Every capture in the folder is in the table.
    for entry in fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".pcap") || name.ends_with(".pcapng") {
            assert!(rows.iter().any(|r| r.0 == name), "{name} is not in the README");
        }
    }

    for (file, link, frames) in &rows {
        let mut cap = capture::open(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
        let native_ib = link.contains("ERF");
        let mut count = 0u64;
        let mut last_ts = 0u64;
        while let Some(frame) = cap.next_frame() {
            let frame = frame.unwrap_or_else(|e| panic!("{e}"));
            count += 1;
            assert_eq!(frame.number, count, "{file}");
            assert_eq!(frame.data.len(), frame.caplen as usize, "{file}");
            assert!(frame.ts_ns > 1_000_000_000 * 1_000_000_000, "{file}: timestamp before 2001");
            last_ts = frame.ts_ns;
            match l2_start(frame.link_type, frame.data) {
                L2Start::Unsupported(e @ L2Error::LinkType(LinkType::Erf)) => {
                    assert!(native_ib, "{file}: {e}");
                    assert_eq!(
                        e.to_string(),
                        "link type 197 (ERF) is not supported: native InfiniBand captures carry an LRH instead of Ethernet/IP"
                    );
                }
                L2Start::Ethernet(_) => assert!(!native_ib, "{file}"),
                other => panic!("{file} frame {count}: {other:?}"),
            }
        }
        assert_eq!(count, *frames, "{file}: frame count");
        assert!(last_ts > 0);
        assert_eq!(cap.bytes_read(), cap.bytes_total().unwrap(), "{file}: progress at the end");
    }
}

#[test]
fn real_capture_gzipped_gives_the_same_frames() {
    let Some(dir) = real_dir() else { return };
    for file in [
        "magnate3_linux-riscv-dev_rocev1_test.pcap",
        "sanderw71_SoftRoce_FirstSuccesfullRping.pcapng",
    ] {
        let bytes = fs::read(dir.join(file)).unwrap();
        let mut plain = capture::Capture::from_bytes(file, bytes.clone()).unwrap();
        let mut zipped = capture::Capture::from_bytes(file, capture_common::gzip(&bytes)).unwrap();
        assert!(zipped.format().gzip);
        assert_eq!(
            capture_common::all_frames(&mut plain),
            capture_common::all_frames(&mut zipped),
            "{file}"
        );
    }
}
