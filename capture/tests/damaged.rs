//! Damaged captures: each error names the file, the frame and the byte offset; frames before
//! the damage are kept; nothing panics or hangs. Odd but readable captures (records above the
//! snap length, timestamps out of range) are read in full after one warning. The inputs are committed under
//! testdata/capture/ and built by the functions below; regenerate them with
//! `ROCE_CAPTURE_REGENERATE=1 cargo test -p roce-capture --test damaged`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use common::{ethernet_frame, gzip, Pcap, PcapNg};
use roce_capture::{Capture, CaptureError, Effect};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/capture")
}

/// A pcap with two good 60-byte frames: records at 24 and 100, the next one at 176.
fn pcap_two_frames(snaplen: u32) -> Pcap {
    let mut p = Pcap::new(false, false, snaplen, 1);
    p.record(1_700_000_000, 1, &ethernet_frame(60, 1));
    p.record(1_700_000_000, 2, &ethernet_frame(60, 2));
    p
}

/// A pcapng with SHB (28 bytes), IDB (32) and two 104-byte EPBs at 60 and 164; the next
/// block is at 268.
fn pcapng_two_frames() -> PcapNg {
    let mut p = PcapNg::new(false);
    p.interface(1, 65535, None, None);
    p.epb(0, 1_700_000_000_000_000, &ethernet_frame(60, 1));
    p.epb(0, 1_700_000_000_000_001, &ethernet_frame(60, 2));
    assert_eq!(p.out.len(), 268);
    p
}

/// Appends a block header with the given type and length and `rest` after it.
fn raw_block(p: &mut PcapNg, block_type: u32, length: u32, rest: &[u8]) {
    p.out.extend_from_slice(&block_type.to_le_bytes());
    p.out.extend_from_slice(&length.to_le_bytes());
    p.out.extend_from_slice(rest);
}

/// What reading a damaged file must give.
struct Case {
    file: &'static str,
    bytes: fn() -> Vec<u8>,
    /// Frames read before the error.
    before: u64,
    /// The error message after "<path>: ".
    message: &'static str,
    effect: Effect,
    /// Frames read after the error (pcapng resynchronises on sound block lengths).
    after: u64,
}

const CASES: &[Case] = &[
    Case {
        file: "bad_magic.pcap",
        bytes: || b"<html><body>not a capture</body></html>\n".to_vec(),
        before: 0,
        message: "at byte offset 0: not a pcap or pcapng capture: it starts with 3c 68 74 6d",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "empty.pcap",
        bytes: Vec::new,
        before: 0,
        message: "the file is empty",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "truncated_file_header.pcap",
        bytes: || pcap_two_frames(65535).out[..10].to_vec(),
        before: 0,
        message: "at byte offset 0: file header truncated: 24 bytes needed, 10 present",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "caplen_exceeds_snaplen.pcap",
        bytes: || {
            let mut p = pcap_two_frames(65535);
            p.raw_record(1_700_000_000, 3, 70_000, 70_000, &[0u8; 40]);
            p.bytes()
        },
        before: 2,
        // A record above the snap length is read (one warning), but this one is cut short.
        message: "frame 3 at byte offset 176: record length 70000 runs past the end of the file (40 bytes left): truncated last record",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "first_record_exceeds_snaplen.pcap",
        bytes: || {
            let mut p = Pcap::new(false, true, 1500, 1);
            p.raw_record(1_700_000_000, 3, 1600, 1600, &[0u8; 64]);
            p.bytes()
        },
        before: 0,
        // As above: the snap length is no limit, the end of the file is.
        message: "frame 1 at byte offset 24: record length 1600 runs past the end of the file (64 bytes left): truncated last record",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "huge_caplen_no_snaplen.pcap",
        bytes: || {
            let mut p = pcap_two_frames(0);
            p.raw_record(1_700_000_000, 3, 0xFFFF_FF00, 0xFFFF_FF00, &[0u8; 16]);
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 176: record length 4294967040 exceeds the 262144-byte limit of libpcap and Wireshark",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "record_past_end.pcap",
        bytes: || {
            let mut p = pcap_two_frames(65535);
            p.raw_record(1_700_000_000, 3, 200, 200, &[0u8; 50]);
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 176: record length 200 runs past the end of the file (50 bytes left): truncated last record",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "truncated_record_header.pcap",
        bytes: || {
            let mut p = pcap_two_frames(65535).bytes();
            p.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7]);
            p
        },
        before: 2,
        message: "frame 3 at byte offset 176: record header truncated: 16 bytes needed, 7 present",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "truncated_section_header.pcapng",
        bytes: || pcapng_two_frames().out[..20].to_vec(),
        before: 0,
        message: "at byte offset 0: section header block (type 0x0a0d0d0a) length 28 runs past the end of the file (20 bytes left): truncated last block",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "zero_block_length.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            raw_block(&mut p, 6, 0, &[0u8; 40]);
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: enhanced packet block (type 0x00000006) length 0 is below the 12-byte minimum",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "huge_block_length.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            raw_block(&mut p, 6, 0xFFFF_FFF0, &[0u8; 40]);
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: enhanced packet block (type 0x00000006) length 4294967280 exceeds the 16777216-byte limit",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "misaligned_block_length.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            raw_block(&mut p, 6, 102, &[0u8; 94]);
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: enhanced packet block (type 0x00000006) length 102 is not a multiple of 4",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "truncated_last_block.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            let whole = p.out.len();
            p.epb(0, 1_700_000_000_000_002, &ethernet_frame(60, 3));
            p.out.truncate(whole + 50);
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: enhanced packet block (type 0x00000006) length 104 runs past the end of the file (50 bytes left): truncated last block",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "trailer_mismatch.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            p.epb(0, 1_700_000_000_000_002, &ethernet_frame(60, 3));
            let end = p.out.len();
            p.out[end - 4..].copy_from_slice(&100u32.to_le_bytes());
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: enhanced packet block (type 0x00000006) leading length 104 differs from trailing length 100",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "bad_byte_order_magic.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            raw_block(&mut p, 0x0A0D_0D0A, 28, &[0xDE, 0xAD, 0xBE, 0xEF, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            p.out.extend_from_slice(&28u32.to_le_bytes());
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: section header byte-order magic 0xdeadbeef is neither 0x1a2b3c4d nor 0x4d3c2b1a",
        effect: Effect::Fatal,
        after: 0,
    },
    Case {
        file: "caplen_past_block.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            p.epb_raw(0, 1_700_000_000_000_002, 1000, 1000, &ethernet_frame(60, 3));
            p.epb(0, 1_700_000_000_000_003, &ethernet_frame(60, 4));
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: captured length 1000 runs past the end of its block (60 bytes of room)",
        effect: Effect::Skipped,
        after: 1,
    },
    Case {
        file: "unknown_interface.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            p.epb(5, 1_700_000_000_000_002, &ethernet_frame(60, 3));
            p.epb(0, 1_700_000_000_000_003, &ethernet_frame(60, 4));
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: packet names interface 5 but its section defines 1 interface(s)",
        effect: Effect::Skipped,
        after: 1,
    },
    Case {
        file: "short_packet_block.pcapng",
        bytes: || {
            let mut p = pcapng_two_frames();
            p.block(6, &[0u8; 12]);
            p.epb(0, 1_700_000_000_000_003, &ethernet_frame(60, 4));
            p.bytes()
        },
        before: 2,
        message: "frame 3 at byte offset 268: enhanced packet block body of 12 bytes is too short (20 needed)",
        effect: Effect::Skipped,
        after: 1,
    },
    Case {
        file: "records_exceed_snaplen.pcap",
        bytes: || {
            let mut p = Pcap::new(false, false, 64, 1);
            p.record(1_700_000_000, 1, &ethernet_frame(100, 1));
            p.record(1_700_000_000, 2, &ethernet_frame(60, 2));
            p.record(1_700_000_000, 3, &ethernet_frame(200, 3));
            p.bytes()
        },
        before: 0,
        message: "frame 1 at byte offset 24: record length 100 exceeds the file header's snap length 64: read in full, as Wireshark does; later such records are not reported",
        effect: Effect::Warning,
        after: 3,
    },
    Case {
        file: "packets_exceed_snaplen.pcapng",
        bytes: || {
            let mut p = PcapNg::new(false);
            p.interface(1, 64, None, None);
            p.epb(0, 1_700_000_000_000_000, &ethernet_frame(60, 1));
            p.epb(0, 1_700_000_000_000_001, &ethernet_frame(100, 2));
            p.epb(0, 1_700_000_000_000_002, &ethernet_frame(200, 3));
            p.bytes()
        },
        before: 1,
        message: "frame 2 at byte offset 164: captured length 100 exceeds the snap length 64 of interface 0: read in full, as Wireshark does; later such packets are not reported",
        effect: Effect::Warning,
        after: 2,
    },
    Case {
        file: "timestamp_out_of_range.pcapng",
        bytes: || {
            let mut p = PcapNg::new(false);
            // if_tsresol 0 (seconds), but nanosecond tick counts, as a writer that forgot the
            // option's value would write them.
            p.interface(1, 65535, Some(0), None);
            p.epb(0, 1_700_000_000_000_000_000, &ethernet_frame(60, 1));
            p.epb(0, 1_700_000_000_000_000_001, &ethernet_frame(60, 2));
            p.bytes()
        },
        before: 0,
        message: "frame 1 at byte offset 68: timestamp of 1700000000000000000 ticks (if_tsresol s, if_tsoffset 0 s) of interface 0 (described at byte offset 28) is out of the range of 64-bit nanoseconds since 1970: read as 18446744073709551615; later timestamps of the interface saturate without a warning",
        effect: Effect::Warning,
        after: 2,
    },
];

/// Writes the committed inputs when asked; otherwise checks they are what the builders make.
fn input(case: &Case) -> PathBuf {
    let path = testdata().join(case.file);
    let bytes = (case.bytes)();
    if std::env::var_os("ROCE_CAPTURE_REGENERATE").is_some() {
        std::fs::create_dir_all(testdata()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(committed, bytes, "{} differs from its builder; regenerate it", case.file);
    path
}

/// Reads a whole capture: (frames before the first error, the error, frames after it).
fn read(path: &Path) -> (u64, Option<CaptureError>, u64) {
    let mut cap = match roce_capture::open(path) {
        Ok(cap) => cap,
        Err(e) => return (0, Some(e), 0),
    };
    let (mut before, mut error, mut after) = (0, None, 0);
    let mut last_number = 0;
    for _ in 0..1000 {
        match cap.next_frame() {
            None => return (before, error, after),
            Some(Ok(f)) => {
                assert!(f.number > last_number);
                last_number = f.number;
                if error.is_none() {
                    before += 1;
                } else {
                    after += 1;
                }
            }
            Some(Err(e)) => {
                assert!(error.is_none(), "second error: {e}");
                // A warning's frame comes next, with the number the warning names.
                if e.effect() != Effect::Warning {
                    last_number = e.frame().unwrap_or(0);
                }
                error = Some(e);
            }
        }
    }
    panic!("{}: iteration does not end", path.display());
}

#[test]
fn damaged_files_name_file_frame_and_offset_and_keep_earlier_frames() {
    for case in CASES {
        let path = input(case);
        let (before, error, after) = read(&path);
        let error = error.unwrap_or_else(|| panic!("{}: no error", case.file));
        assert_eq!(
            error.to_string(),
            format!("{}: {}", path.display(), case.message),
            "{}",
            case.file
        );
        assert_eq!(error.file(), path.to_string_lossy());
        assert_eq!(before, case.before, "{}: frames before", case.file);
        assert_eq!(error.frames_before(), case.before, "{}", case.file);
        assert_eq!(error.nothing_read(), case.before == 0, "{}", case.file);
        assert_eq!(error.effect(), case.effect, "{}", case.file);
        assert_eq!(error.is_fatal(), case.effect == Effect::Fatal, "{}", case.file);
        assert_eq!(after, case.after, "{}: frames after", case.file);
    }
}

#[test]
fn a_missing_file_is_unreadable() {
    let path = testdata().join("no-such-file.pcap");
    let e = roce_capture::open(&path).err().unwrap();
    assert!(e.nothing_read() && e.is_fatal() && e.frame().is_none());
    assert!(e.to_string().starts_with(&format!("{}: read error: ", path.display())), "{e}");
}

#[test]
fn resynchronised_frames_keep_their_numbers() {
    let path = input(CASES.iter().find(|c| c.file == "caplen_past_block.pcapng").unwrap());
    let mut cap = roce_capture::open(&path).unwrap();
    let mut numbers: Vec<Result<u64, u64>> = Vec::new();
    while let Some(r) = cap.next_frame() {
        numbers.push(r.map(|f| f.number).map_err(|e| e.frame().unwrap()));
    }
    assert_eq!(numbers, [Ok(1), Ok(2), Err(3), Ok(4)]);
}

#[test]
fn truncated_gzip_keeps_the_frames_before_the_cut() {
    let path = testdata().join("truncated_gzip.pcap.gz");
    let mut p = Pcap::ethernet();
    for i in 0..200 {
        p.record(i, 0, &ethernet_frame(64 + (i as usize * 7) % 900, i as u8));
    }
    let whole = gzip(&p.bytes());
    if std::env::var_os("ROCE_CAPTURE_REGENERATE").is_some() {
        std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    }
    // Compared by what it holds, not byte for byte: another deflate backend may compress
    // differently.
    let (before, error, after) = read(&path);
    let error = error.unwrap();
    assert!(before > 20 && before < 200, "{before} frames before the cut");
    assert_eq!(after, 0);
    assert!(error.is_fatal() && !error.nothing_read());
    assert_eq!(error.frame(), Some(before + 1));
    let message = error.to_string();
    let prefix = format!("{}: frame {} at byte offset ", path.display(), before + 1);
    assert!(message.starts_with(&prefix), "{message}");
    assert!(message.contains("gzip data is damaged or truncated"), "{message}");
}

/// Every prefix of a file, and many corrupted copies, read to the end without a panic, with
/// every frame before the damage intact.
#[test]
fn no_truncation_or_corruption_panics_or_hangs() {
    let mut ng = pcapng_two_frames();
    ng.section(true);
    ng.interface(113, 0, Some(0x80 | 10), Some(3));
    ng.pb(0, 99, &[0x45; 30]);
    ng.spb(20, &[0x60; 20]);
    ng.block(0x1234, &[1, 2, 3]);
    let mut pcap = pcap_two_frames(65535);
    pcap.record(3, 3, &ethernet_frame(100, 3));
    for original in [ng.bytes(), pcap.bytes(), gzip(&pcap.bytes())] {
        let full = read_all(original.clone());
        assert!(full.1.is_none());
        for cut in 0..original.len() {
            let (frames, _) = read_all(original[..cut].to_vec());
            assert!(frames.len() <= full.0.len());
            assert_eq!(frames[..], full.0[..frames.len()], "cut at {cut}");
        }
        let mut seed = 0x2545_F491_u32;
        for _ in 0..3000 {
            let mut bytes = original.clone();
            for _ in 0..1 + seed % 4 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let at = seed as usize % bytes.len();
                bytes[at] = (seed >> 24) as u8;
            }
            read_all(bytes);
        }
    }
}

/// Frames (number, data) and the last error of reading `bytes`, bounded so a hang fails.
fn read_all(bytes: Vec<u8>) -> (Vec<(u64, Vec<u8>)>, Option<String>) {
    let mut cap = match Capture::from_bytes("fuzz", bytes) {
        Ok(cap) => cap,
        Err(e) => {
            assert!(e.nothing_read());
            return (Vec::new(), Some(e.to_string()));
        }
    };
    let (mut frames, mut error) = (Vec::new(), None);
    for _ in 0..10_000 {
        match cap.next_frame() {
            None => return (frames, error),
            Some(Ok(f)) => {
                assert_eq!(f.data.len(), f.caplen as usize);
                if error.is_none() {
                    frames.push((f.number, f.data.to_vec()));
                }
            }
            Some(Err(e)) => {
                error.get_or_insert(e.to_string());
            }
        }
    }
    panic!("iteration does not end");
}
