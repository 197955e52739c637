//! Every real capture (ROCE_INSPECT_REAL_CAPTURES) must give the frame count of its README, and
//! the native InfiniBand (ERF) ones must iterate but get the clear unsupported-link-type
//! message. Without the variable the tests skip with a note, except under CI=true, where
//! they fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::fs;
use std::path::Path;

use roce_capture::{
    l2_start, Capture, Effect, ErrorKind, L2Start, LinkType, Warnings, ERF_HEADER_LEN,
};

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
        let mut cap = roce_capture::open(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
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
                L2Start::Infiniband(lrh) => {
                    // ibdump's ERF records: 16 bytes of record header, no extension header,
                    // then the packet from its LRH (LVer 0, LNH IBA local or global).
                    assert!(native_ib, "{file}");
                    assert_eq!(frame.link_type, LinkType::Erf);
                    assert_eq!(lrh.as_ptr(), frame.data[ERF_HEADER_LEN..].as_ptr(), "{file}");
                    assert_eq!(lrh[0] & 0x0f, 0, "{file} frame {count}: LVer");
                    assert!(lrh[1] & 3 >= 2, "{file} frame {count}: LNH");
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
        let mut plain = Capture::from_bytes(file, bytes.clone()).unwrap();
        let mut zipped = Capture::from_bytes(file, common::gzip(&bytes)).unwrap();
        assert!(zipped.format().gzip);
        assert_eq!(common::all_frames(&mut plain), common::all_frames(&mut zipped), "{file}");
    }
}

/// A frame as (number, ts_ns, data).
type Owned = (u64, u64, Vec<u8>);

/// Frames and errors of a capture held in memory.
fn read_bytes(name: &str, bytes: Vec<u8>) -> (Vec<Owned>, Vec<roce_capture::CaptureError>) {
    let mut cap = Capture::from_bytes(name, bytes).unwrap();
    let (mut frames, mut errors) = (Vec::new(), Vec::new());
    while let Some(item) = cap.next_frame() {
        match item {
            Ok(f) => frames.push((f.number, f.ts_ns, f.data.to_vec())),
            Err(e) => errors.push(e),
        }
    }
    (frames, errors)
}

/// pcapng blocks as (offset, type, length), little-endian sections only.
fn blocks(bytes: &[u8]) -> Vec<(usize, u32, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 12 <= bytes.len() {
        let t = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        out.push((at, t, len));
        at += len;
    }
    out
}

/// read2.pcap (16 frames of 62-322 bytes) with the header's snap length patched: libpcap and
/// tshark read every record; so must this reader, with one warning, whatever the snap length.
#[test]
fn real_pcap_with_a_wrong_snap_length_is_read_in_full_with_one_warning() {
    let Some(dir) = real_dir() else { return };
    let file = "magnate3_linux-riscv-dev_read2.pcap";
    let original = fs::read(dir.join(file)).unwrap();
    let (want, errors) = read_bytes(file, original.clone());
    assert!(errors.is_empty());
    assert_eq!(want.len(), 16);
    for (snaplen, first_above) in [(200u32, 4u64), (64, 1)] {
        let mut bytes = original.clone();
        bytes[16..20].copy_from_slice(&snaplen.to_le_bytes());
        let (frames, errors) = read_bytes(file, bytes);
        assert_eq!(frames, want, "snap length {snaplen}");
        assert_eq!(errors.len(), 1, "snap length {snaplen}: {errors:?}");
        let e = &errors[0];
        assert_eq!((e.effect(), e.frame()), (Effect::Warning, Some(first_above)));
        assert!(
            e.to_string().starts_with(&format!("{file}: frame {first_above} at byte offset ")),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("snap length {snaplen}")), "{e}");
    }
}

#[test]
fn real_pcapng_with_a_wrong_snap_length_is_read_in_full_with_one_warning() {
    let Some(dir) = real_dir() else { return };
    let file = "sanderw71_SoftRoce_capture_S10000_C1.pcapng";
    let original = fs::read(dir.join(file)).unwrap();
    let (want, _) = read_bytes(file, original.clone());
    let (idb, _, _) = *blocks(&original).iter().find(|b| b.1 == 1).unwrap();
    let mut bytes = original;
    bytes[idb + 12..idb + 16].copy_from_slice(&64u32.to_le_bytes());
    let (frames, errors) = read_bytes(file, bytes);
    assert_eq!(frames, want);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(matches!(
        errors[0].kind(),
        ErrorKind::RecordExceedsSnapLen { snaplen: 64, interface: Some(0), .. }
    ));
}

/// The interface's if_tsresol patched from 9 (ns) to 0 (s): every nanosecond tick count is
/// out of range. One warning naming the interface and its IDB; the timestamps saturate.
#[test]
fn real_pcapng_with_an_impossible_resolution_warns_once() {
    let Some(dir) = real_dir() else { return };
    let file = "sanderw71_SoftRoce_FirstSuccesfullRping.pcapng";
    let mut bytes = fs::read(dir.join(file)).unwrap();
    let (idb, _, len) = *blocks(&bytes).iter().find(|b| b.1 == 1).unwrap();
    // Options from idb + 16: (code, length, value padded to 4).
    let mut at = idb + 16;
    while u16::from_le_bytes([bytes[at], bytes[at + 1]]) != 9 {
        let option_len = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
        at += 4 + option_len.next_multiple_of(4);
        assert!(at < idb + len, "no if_tsresol");
    }
    assert_eq!(bytes[at + 4], 9);
    bytes[at + 4] = 0;
    let (frames, errors) = read_bytes(file, bytes);
    assert_eq!(frames.len(), 429);
    assert!(frames.iter().all(|f| f.1 == u64::MAX));
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0].to_string();
    assert!(
        message.starts_with(&format!("{file}: frame 1 at byte offset "))
            && message.contains(&format!("of interface 0 (described at byte offset {idb})"))
            && message.contains("read as 18446744073709551615"),
        "{message}"
    );
}

/// The interface description block cut out: every packet names an interface the file does
/// not describe. Each is reported as skipped; `Warnings` keeps 20 and counts the rest.
#[test]
fn real_pcapng_without_its_interface_block_gives_bounded_warnings() {
    let Some(dir) = real_dir() else { return };
    let file = "sanderw71_SoftRoce_FirstSuccesfullRping.pcapng";
    let original = fs::read(dir.join(file)).unwrap();
    let (idb, _, len) = *blocks(&original).iter().find(|b| b.1 == 1).unwrap();
    let mut bytes = original[..idb].to_vec();
    bytes.extend_from_slice(&original[idb + len..]);
    let mut cap = Capture::from_bytes(file, bytes).unwrap();
    let mut warnings = Warnings::default();
    let mut frames = 0;
    while let Some(item) = cap.next_frame() {
        match item {
            Ok(_) => frames += 1,
            Err(e) => {
                assert_eq!(e.effect(), Effect::Skipped, "{e}");
                warnings.add(e);
            }
        }
    }
    assert_eq!(frames, 0);
    assert_eq!(warnings.total(), 429);
    assert_eq!(warnings.kept().len(), 20);
    assert!(warnings.kept()[0]
        .to_string()
        .starts_with(&format!("{file}: frame 1 at byte offset {idb}: packet names interface 0")));
    let omitted: Vec<String> = warnings.omitted().map(|o| o.to_string()).collect();
    assert_eq!(
        omitted,
        [format!(
            "{file}: ... 409 more \"unknown interface\" warnings not shown (the first 20 are)"
        )]
    );
}
