//! Reading every supported container variant: pcap in both resolutions and byte orders,
//! pcapng with several interfaces, resolutions, sections and block kinds, gzip, and stdin.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use common::{all_frames, ethernet_frame, gzip, Pcap, PcapNg};
use roce_capture::{Capture, FormatKind, LinkType, TsResolution};

const SEC: u64 = 1_000_000_000;

#[test]
fn pcap_microsecond_little_endian() {
    let mut p = Pcap::ethernet();
    p.record(1_700_000_000, 123_456, &ethernet_frame(60, 1));
    p.record(1_700_000_001, 999_999, &ethernet_frame(1514, 2));
    let mut cap = Capture::from_bytes("micro.pcap", p.bytes()).unwrap();
    let format = cap.format();
    assert_eq!(format.kind, FormatKind::Pcap);
    assert_eq!(format.resolution, Some(TsResolution::MICRO));
    assert!(!format.big_endian && !format.gzip);
    assert_eq!(format.to_string(), "pcap (µs)");

    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!(
        (f.number, f.ts_ns, f.caplen, f.len),
        (1, 1_700_000_000 * SEC + 123_456_000, 60, 60)
    );
    assert_eq!((f.link_type, f.interface, f.offset), (LinkType::Ethernet, 0, 24));
    assert_eq!(f.data, &ethernet_frame(60, 1)[..]);
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!(
        (f.number, f.ts_ns, f.caplen, f.offset),
        (2, 1_700_000_001 * SEC + 999_999_000, 1514, 24 + 16 + 60)
    );
    assert!(cap.next_frame().is_none());
    assert!(cap.next_frame().is_none(), "stays at the end");
    assert_eq!(cap.frames_read(), 2);
    assert_eq!(cap.bytes_read(), cap.bytes_total().unwrap());
}

#[test]
fn pcap_nanosecond_big_endian() {
    let mut p = Pcap::new(true, true, 262_144, 1);
    p.record(1_700_000_000, 123_456_789, &ethernet_frame(100, 3));
    // Snapped record: an original length above the captured length is fine.
    p.raw_record(1_700_000_002, 5, 64, 9000, &ethernet_frame(64, 4));
    let mut cap = Capture::from_bytes("nano-be.pcap", p.bytes()).unwrap();
    assert_eq!(cap.format().resolution, Some(TsResolution::NANO));
    assert!(cap.format().big_endian);
    assert_eq!(cap.interfaces()[0].snaplen, 262_144);
    let frames = all_frames(&mut cap);
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0].1, 1_700_000_000 * SEC + 123_456_789);
    assert_eq!(frames[1].1, 1_700_000_002 * SEC + 5);
    assert_eq!(frames[1].3, ethernet_frame(64, 4));
}

#[test]
fn pcap_microsecond_big_endian_and_nanosecond_little_endian() {
    for (big, nano) in [(true, false), (false, true)] {
        let mut p = Pcap::new(big, nano, 65535, 1);
        p.record(10, 7, &ethernet_frame(80, 5));
        let mut cap = Capture::from_bytes("x.pcap", p.bytes()).unwrap();
        let f = cap.next_frame().unwrap().unwrap();
        assert_eq!(f.ts_ns, 10 * SEC + if nano { 7 } else { 7_000 }, "big {big} nano {nano}");
        assert_eq!(f.data, &ethernet_frame(80, 5)[..]);
    }
}

#[test]
fn pcap_with_no_records_is_empty_not_an_error() {
    let mut cap = Capture::from_bytes("empty.pcap", Pcap::ethernet().bytes()).unwrap();
    assert!(cap.next_frame().is_none());
}

#[test]
fn pcapng_two_interfaces_with_their_own_link_types_and_resolutions() {
    let mut p = PcapNg::new(false);
    p.interface(1, 65535, None, None); // Ethernet, default microseconds
    p.interface(113, 0, Some(9), Some(-10)); // SLL, nanoseconds, 10 s earlier
    p.interface(101, 1500, Some(0x80 | 20), None); // raw IP, 2^-20 s units
    p.epb(0, 1_700_000_000_000_001, &ethernet_frame(60, 1));
    p.epb(1, 1_700_000_000_000_000_002, &[0u8; 20]);
    p.epb(2, 3 << 20 | 1 << 19, &[0x45; 28]); // 3.5 s
    p.epb(0, 1_700_000_001_000_000, &ethernet_frame(61, 2));
    let mut cap = Capture::from_bytes("two.pcapng", p.bytes()).unwrap();
    assert_eq!(cap.format().kind, FormatKind::PcapNg);
    assert_eq!(cap.format().resolution, None);

    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!((f.number, f.interface, f.link_type), (1, 0, LinkType::Ethernet));
    assert_eq!(f.ts_ns, 1_700_000_000_000_001_000);
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!((f.number, f.interface, f.link_type), (2, 1, LinkType::LinuxSll));
    assert_eq!(f.ts_ns, 1_700_000_000_000_000_002 - 10 * SEC);
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!((f.number, f.interface, f.link_type, f.caplen), (3, 2, LinkType::Raw, 28));
    assert_eq!(f.ts_ns, 3 * SEC + SEC / 2);
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!((f.number, f.interface, f.data.len()), (4, 0, 61));
    assert!(cap.next_frame().is_none());

    let interfaces = cap.interfaces();
    assert_eq!(interfaces.len(), 3);
    assert_eq!(interfaces[0].resolution, TsResolution::MICRO);
    assert_eq!(interfaces[1].resolution, TsResolution::NANO);
    assert_eq!(interfaces[1].ts_offset_s, -10);
    assert_eq!(interfaces[2].resolution, TsResolution::Binary(20));
    assert_eq!(interfaces[2].resolution.to_string(), "2^-20 s");
}

#[test]
fn pcapng_sections_with_different_byte_orders_unknown_blocks_pb_and_spb() {
    let mut p = PcapNg::new(true);
    p.interface(1, 65535, Some(9), None);
    p.block(0x0000_0BAD, b"custom block: skipped"); // unknown type
    p.epb(0, 5 * SEC, &ethernet_frame(70, 1));
    p.block(5, &[0u8; 20]); // interface statistics: skipped
    p.section(false); // little-endian section: interfaces numbered from 0 again
    p.interface(276, 65535, None, None); // SLL2, microseconds
    p.pb(0, 7_000_000, &[0u8; 24]);
    p.spb(30, &[0u8; 32]); // original 30 bytes, 2 bytes of padding
    p.section(true);
    p.interface(1, 40, None, None);
    p.spb(100, &ethernet_frame(100, 9)); // cut to the snap length 40
    let mut cap = Capture::from_bytes("sections.pcapng", p.bytes()).unwrap();
    assert!(cap.format().big_endian);

    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!((f.number, f.interface, f.ts_ns, f.link_type), (1, 0, 5 * SEC, LinkType::Ethernet));
    assert_eq!(f.data, &ethernet_frame(70, 1)[..]);
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!((f.number, f.interface, f.ts_ns, f.link_type), (2, 1, 7 * SEC, LinkType::LinuxSll2));
    assert_eq!(f.caplen, 24);
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!((f.number, f.interface, f.ts_ns, f.caplen, f.len), (3, 1, 0, 30, 30));
    let f = cap.next_frame().unwrap().unwrap();
    assert_eq!((f.number, f.interface, f.caplen, f.len), (4, 2, 40, 100));
    assert_eq!(f.data, &ethernet_frame(100, 9)[..40]);
    assert!(cap.next_frame().is_none());
    let sections: Vec<u32> = cap.interfaces().iter().map(|i| i.section).collect();
    assert_eq!(sections, [0, 1, 2]);
}

#[test]
fn gzip_pcap_and_pcapng_from_memory_and_file() {
    let mut p = Pcap::new(false, true, 65535, 1);
    for i in 0..100 {
        p.record(i, i * 3, &ethernet_frame(60 + i as usize, i as u8));
    }
    let mut ng = PcapNg::new(false);
    ng.interface(1, 0, Some(9), None);
    for i in 0..100u32 {
        ng.epb(0, u64::from(i) * 3 + u64::from(i) * SEC, &ethernet_frame(60 + i as usize, i as u8));
    }
    let dir = std::env::temp_dir();
    for (name, bytes) in [("g.pcap", p.bytes()), ("g.pcapng", ng.bytes())] {
        let plain = all_frames(&mut Capture::from_bytes(name, bytes.clone()).unwrap());
        assert_eq!(plain.len(), 100);
        let zipped = gzip(&bytes);
        let mut cap = Capture::from_bytes(name, zipped.clone()).unwrap();
        assert!(cap.format().gzip);
        assert_eq!(all_frames(&mut cap), plain, "{name} gzip in memory");

        // From a file whose name says nothing of gzip: detection is by magic.
        let path = dir.join(format!("roce-capture-test-{}-{name}", std::process::id()));
        std::fs::write(&path, &zipped).unwrap();
        let mut cap = roce_capture::open(&path).unwrap();
        assert!(cap.format().gzip);
        assert_eq!(cap.bytes_total(), Some(zipped.len() as u64));
        assert_eq!(all_frames(&mut cap), plain, "{name} gzip file");
        assert_eq!(cap.bytes_read(), zipped.len() as u64, "progress counts compressed bytes");
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn concatenated_gzip_members_are_one_stream() {
    let mut p = Pcap::ethernet();
    p.record(1, 0, &ethernet_frame(60, 1));
    let mut bytes = p.bytes();
    let split = bytes.len() - 30;
    let tail = bytes.split_off(split);
    let mut two = gzip(&bytes);
    two.extend(gzip(&tail));
    assert_eq!(all_frames(&mut Capture::from_bytes("two-members.pcap.gz", two).unwrap()).len(), 1);
}

#[test]
fn large_file_is_read_through_the_window() {
    // More than one read window (1 MiB), with records straddling refills.
    let mut p = Pcap::new(false, false, 65535, 1);
    let n = 5000u32;
    for i in 0..n {
        p.record(i, 0, &ethernet_frame(200 + (i as usize * 37) % 1300, i as u8));
    }
    let bytes = p.bytes();
    assert!(bytes.len() > 3 << 20);
    let path =
        std::env::temp_dir().join(format!("roce-capture-test-{}-large.pcap", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let mut cap = roce_capture::open(&path).unwrap();
    let mut offset = 24u64;
    let mut count = 0u32;
    while let Some(f) = cap.next_frame() {
        let f = f.unwrap();
        assert_eq!(f.offset, offset);
        assert_eq!(f.data, &ethernet_frame(200 + (count as usize * 37) % 1300, count as u8)[..]);
        offset += 16 + u64::from(f.caplen);
        count += 1;
        assert!(cap.bytes_read() <= cap.bytes_total().unwrap());
    }
    assert_eq!(count, n);
    std::fs::remove_file(&path).unwrap();
}

/// Reads a capture from stdin in a child process (this test binary run again with the pipe
/// as its stdin), since a test cannot replace its own stdin.
#[test]
fn stdin_is_read_for_dash() {
    if std::env::var_os("ROCE_CAPTURE_STDIN_CHILD").is_some() {
        let mut cap = roce_capture::open(Path::new("-")).unwrap();
        assert_eq!(cap.bytes_total(), None);
        let frames = all_frames(&mut cap);
        println!("STDIN-FRAMES {} gzip {}", frames.len(), cap.format().gzip);
        return;
    }
    let mut p = Pcap::ethernet();
    for i in 0..10 {
        p.record(i, 0, &ethernet_frame(64, i as u8));
    }
    for (bytes, gz) in [(p.bytes(), false), (gzip(&p.bytes()), true)] {
        let path = std::env::temp_dir()
            .join(format!("roce-capture-test-{}-stdin-{gz}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["stdin_is_read_for_dash", "--exact", "--nocapture", "--test-threads=1"])
            .env("ROCE_CAPTURE_STDIN_CHILD", "1")
            .stdin(std::fs::File::open(&path).unwrap())
            .output()
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains(&format!("STDIN-FRAMES 10 gzip {gz}")), "{stdout}");
    }
}

#[test]
fn frames_are_borrowed_from_the_capture_without_copies() {
    let mut p = Pcap::ethernet();
    p.record(1, 0, &ethernet_frame(60, 1));
    let bytes = p.bytes();
    let mut cap = Capture::from_bytes("x.pcap", bytes).unwrap();
    let f = cap.next_frame().unwrap().unwrap();
    // The frame's bytes are the record's bytes in the capture's buffer (offset 24 + 16).
    assert_eq!(f.data.len(), 60);
    assert_eq!(f.offset, 24);
    assert!(matches!(f.l2(), roce_capture::L2Start::Ethernet(d) if d.as_ptr() == f.data.as_ptr()));
}

/// Frames read from lent windows ([`Capture::lend_window`]) as `--threads` reads them: each
/// retired window holds the data of every frame handed out since the window before, at the
/// index `last_frame_at` gave, and they are the frames of an ordinary read; windows given
/// back are read into again. pcap and pcapng, plain and gzip, records of many lengths (some
/// of 200,000 bytes, most of a lent window).
#[test]
fn lent_windows_hold_the_frames_handed_out() {
    let mut pcap = Pcap::new(false, false, 0, 1);
    let mut ng = PcapNg::new(false);
    ng.interface(1, 0, None, None);
    for i in 0..6_000u32 {
        let len = if i % 1_000 == 999 { 200_000 } else { 60 + (i as usize * 37) % 1_400 };
        let data = ethernet_frame(len, i as u8);
        pcap.record(i, 0, &data);
        ng.epb(0, u64::from(i), &data);
    }
    for bytes in [pcap.bytes(), ng.bytes(), gzip(&pcap.bytes())] {
        let plain = all_frames(
            &mut Capture::from_reader("x", std::io::Cursor::new(bytes.clone())).unwrap(),
        );
        let (lent, windows) = read_lent(bytes, 3, None);
        assert!(windows > 10, "{windows} windows");
        assert_eq!(lent.len(), plain.len());
        for ((n, data), (pn, _, _, pdata)) in lent.iter().zip(&plain) {
            assert_eq!((n, data), (pn, pdata), "frame {pn}");
        }
    }
}

/// [`Capture::retire_window`]: a reader that bounds the frames per window retires it early;
/// the retired window still holds every frame handed out since the one before, at the index
/// `last_frame_at` gave, the unread tail goes on in the next window, and the frames are an
/// ordinary read's. Tiny records (the case it is for) and longer ones, retiring after every
/// frame, every 7 and every 1,000; pcap, pcapng and gzip.
#[test]
fn windows_retired_early_hold_the_frames_handed_out() {
    let mut pcap = Pcap::new(false, false, 0, 1);
    let mut ng = PcapNg::new(false);
    ng.interface(1, 0, None, None);
    for i in 0..20_000u32 {
        let len = if i % 500 == 499 { 3_000 } else { 14 + (i as usize) % 40 };
        let data = ethernet_frame(len, i as u8);
        pcap.record(i, 0, &data);
        ng.epb(0, u64::from(i), &data);
    }
    for bytes in [pcap.bytes(), ng.bytes(), gzip(&pcap.bytes())] {
        let plain = all_frames(
            &mut Capture::from_reader("x", std::io::Cursor::new(bytes.clone())).unwrap(),
        );
        for every in [1usize, 7, 1_000] {
            let (lent, windows) = read_lent(bytes.clone(), 0, Some(every));
            // Every window of `every` frames or fewer went out (a whole window of these
            // records holds thousands).
            assert!(windows >= plain.len() / every - 1, "every {every}: {windows} windows");
            assert_eq!(lent.len(), plain.len(), "every {every}");
            for ((n, data), (pn, _, _, pdata)) in lent.iter().zip(&plain) {
                assert_eq!((n, data), (pn, pdata), "every {every}: frame {pn}");
            }
        }
    }
}

/// Reads `bytes` from lent windows as `--threads` reads them: the frames (number, data) taken
/// from the retired windows at the indexes `last_frame_at` gave, and how many windows were
/// retired. `hold` windows are kept elsewhere before one is given back (batches in flight);
/// with `retire_every`, the window is retired after that many frames.
fn read_lent(
    bytes: Vec<u8>,
    hold: usize,
    retire_every: Option<usize>,
) -> (Vec<(u64, Vec<u8>)>, usize) {
    let mut cap = Capture::from_reader("x", std::io::Cursor::new(bytes)).unwrap();
    cap.lend_window(Vec::new());
    let (mut lent, mut pending) = (Vec::new(), Vec::<(u64, usize, usize)>::new());
    let mut windows = 0;
    let mut spare: Vec<Vec<u8>> = Vec::new();
    loop {
        let next = cap.next_frame().map(|f| {
            let f = f.unwrap();
            (f.number, f.data.len())
        });
        if let Some(window) = cap.take_retired_window() {
            windows += 1;
            for (n, at, len) in pending.drain(..) {
                lent.push((n, window[at..at + len].to_vec()));
            }
            spare.push(window);
            let again = if spare.len() > hold { spare.remove(0) } else { Vec::new() };
            cap.lend_window(again);
        }
        let Some((n, len)) = next else { break };
        pending.push((n, cap.last_frame_at(), len));
        if retire_every.is_some_and(|k| pending.len() >= k) {
            cap.retire_window();
        }
    }
    let window = cap.take_window();
    for (n, at, len) in pending.drain(..) {
        lent.push((n, window[at..at + len].to_vec()));
    }
    (lent, windows)
}
