//! Hostile input the reader must survive in bounded memory and output: snap lengths that
//! are wrong, timestamps no 64-bit nanosecond count holds, a block fault on every packet,
//! and a file of nothing but interfaces. (The committed cases are in damaged.rs, the same
//! faults patched into real captures in real_captures.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use common::{ethernet_frame, Pcap, PcapNg};
use roce_capture::{
    Capture, CaptureError, Effect, ErrorKind, Warnings, MAX_INTERFACES, MAX_RECORD_LEN,
};

/// Every frame (number, ts_ns, data length) and every error of a capture.
fn read_all(cap: &mut Capture) -> (Vec<(u64, u64, usize)>, Vec<CaptureError>) {
    let (mut frames, mut errors) = (Vec::new(), Vec::new());
    while let Some(item) = cap.next_frame() {
        match item {
            Ok(f) => frames.push((f.number, f.ts_ns, f.data.len())),
            Err(e) => errors.push(e),
        }
        assert!(frames.len() + errors.len() <= 2_000_000, "the reader does not end");
    }
    (frames, errors)
}

#[test]
fn records_above_the_snap_length_are_read_with_one_warning_per_capture() {
    let mut p = Pcap::new(false, true, 128, 1);
    for i in 0..1000u32 {
        p.record(1_700_000_000, i, &ethernet_frame(100 + i as usize % 1400, i as u8));
    }
    let mut cap = Capture::from_bytes("snap.pcap", p.bytes()).unwrap();
    let (frames, errors) = read_all(&mut cap);
    assert_eq!(frames.len(), 1000);
    assert_eq!(errors.len(), 1, "{errors:?}");
    // The first record above 128 bytes is the 30th (129 bytes).
    let e = &errors[0];
    assert_eq!((e.effect(), e.frame()), (Effect::Warning, Some(30)));
    assert!(matches!(
        e.kind(),
        ErrorKind::RecordExceedsSnapLen { caplen: 129, snaplen: 128, interface: None }
    ));
    for (i, f) in frames.iter().enumerate() {
        assert_eq!((f.0, f.2), (i as u64 + 1, 100 + i % 1400));
    }

    // pcapng: two interfaces whose packets exceed their snap lengths, one warning in all.
    let mut ng = PcapNg::new(false);
    ng.interface(1, 64, Some(9), None);
    ng.interface(1, 80, Some(9), None);
    for i in 0..500u64 {
        ng.epb((i % 2) as u32, 1_700_000_000_000_000_000 + i, &ethernet_frame(90, i as u8));
    }
    let mut cap = Capture::from_bytes("snap.pcapng", ng.bytes()).unwrap();
    let (frames, errors) = read_all(&mut cap);
    assert_eq!(frames.len(), 500);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(matches!(
        errors[0].kind(),
        ErrorKind::RecordExceedsSnapLen { caplen: 90, snaplen: 64, interface: Some(0) }
    ));
    assert!(frames.iter().all(|f| f.2 == 90));
}

#[test]
fn a_pcap_record_up_to_256_kib_is_read_and_a_longer_one_ends_the_read() {
    for (caplen, readable) in [(MAX_RECORD_LEN, true), (MAX_RECORD_LEN + 1, false)] {
        let mut p = Pcap::new(false, false, 65535, 1);
        p.record(1, 0, &ethernet_frame(60, 1));
        p.record(2, 0, &ethernet_frame(caplen as usize, 2));
        p.record(3, 0, &ethernet_frame(60, 3));
        let mut cap = Capture::from_bytes("big.pcap", p.bytes()).unwrap();
        let (frames, errors) = read_all(&mut cap);
        let kinds: Vec<_> = errors.iter().map(|e| (e.effect(), e.frame())).collect();
        if readable {
            assert_eq!(frames.len(), 3);
            assert_eq!(frames[1].2, caplen as usize);
            assert_eq!(kinds, [(Effect::Warning, Some(2))]);
        } else {
            assert_eq!(frames.len(), 1);
            assert_eq!(kinds, [(Effect::Fatal, Some(2))]);
            assert_eq!(
                errors[0].to_string(),
                "big.pcap: frame 2 at byte offset 100: record length 262145 exceeds the 262144-byte limit of libpcap and Wireshark"
            );
        }
    }
}

#[test]
fn timestamps_out_of_range_warn_once_per_interface_and_saturate() {
    let mut ng = PcapNg::new(false);
    ng.interface(1, 0, Some(9), None); // 0: nanoseconds, sound
    ng.interface(1, 0, Some(9), Some(i64::MAX)); // 1: if_tsoffset beyond any nanosecond count
    ng.interface(1, 0, Some(9), Some(-2_000_000_000)); // 2: before 1970
    ng.interface(1, 0, Some(0x80), None); // 3: 2^0 s units, nanosecond ticks
    for round in 0..3u64 {
        for interface in 0..4 {
            ng.epb(interface, 1_700_000_000_000_000_000 + round, &ethernet_frame(60, 1));
        }
    }
    let bytes = ng.bytes();
    let mut cap = Capture::from_bytes("ts.pcapng", bytes).unwrap();
    let (frames, errors) = read_all(&mut cap);
    assert_eq!(frames.len(), 12);
    let warned: Vec<u32> = errors
        .iter()
        .map(|e| match e.kind() {
            ErrorKind::TimestampOutOfRange { interface, .. } if e.effect() == Effect::Warning => {
                *interface
            }
            _ => panic!("{e}"),
        })
        .collect();
    assert_eq!(warned, [1, 2, 3], "one warning per broken interface");
    for round in 0..3usize {
        let ts: Vec<u64> = frames[round * 4..round * 4 + 4].iter().map(|f| f.1).collect();
        assert_eq!(ts, [1_700_000_000_000_000_000 + round as u64, u64::MAX, 0, u64::MAX]);
    }
    let message = errors[1].to_string();
    assert!(
        message.starts_with("ts.pcapng: frame 3 at byte offset ")
            && message.contains("(if_tsresol ns, if_tsoffset -2000000000 s) of interface 2")
            && message.contains("read as 0;"),
        "{message}"
    );
}

/// A pcapng of 400,000 packets whose interface description block is missing: every packet
/// is skipped with an error; `Warnings` keeps 20 and counts the rest.
#[test]
fn a_fault_on_every_block_is_counted_not_kept() {
    const PACKETS: u64 = 400_000;
    let mut ng = PcapNg::new(false);
    ng.out.reserve(PACKETS as usize * 36);
    for i in 0..PACKETS {
        ng.epb_raw(0, i, 4, 4, &[0x45, 0, 0, 4]);
    }
    let mut cap = Capture::from_bytes("no-idb.pcapng", ng.bytes()).unwrap();
    let mut warnings = Warnings::default();
    let mut printed = 0;
    while let Some(item) = cap.next_frame() {
        let e = item.err().unwrap();
        assert_eq!(e.effect(), Effect::Skipped);
        if warnings.add(e).is_some() {
            printed += 1;
        }
    }
    assert_eq!(warnings.total(), PACKETS);
    assert_eq!(printed, Warnings::PER_KIND);
    assert_eq!(warnings.kept().len(), Warnings::PER_KIND);
    assert_eq!(
        warnings.kept()[19].to_string(),
        "no-idb.pcapng: frame 20 at byte offset 712: packet names interface 0 but its section defines 0 interface(s)"
    );
    let omitted: Vec<String> = warnings.omitted().map(|o| o.to_string()).collect();
    assert_eq!(
        omitted,
        ["no-idb.pcapng: ... 399980 more \"unknown interface\" warnings not shown (the first 20 are)"]
    );
}

#[test]
fn warnings_are_kept_per_kind() {
    let mut ng = PcapNg::new(false);
    ng.interface(1, 0, None, None);
    for i in 0..30u64 {
        ng.epb(7, i, &[0u8; 20]); // unknown interface
        ng.epb_raw(0, i, 1000, 1000, &[0u8; 20]); // captured length past the block
    }
    let mut cap = Capture::from_bytes("two-kinds.pcapng", ng.bytes()).unwrap();
    let mut warnings = Warnings::new(5);
    while let Some(item) = cap.next_frame() {
        warnings.add(item.err().unwrap());
    }
    assert_eq!(warnings.total(), 60);
    assert_eq!(warnings.kept().len(), 10);
    let omitted: Vec<(&str, u64)> = warnings.omitted().map(|o| (o.kind, o.count)).collect();
    assert_eq!(omitted, [("unknown interface", 25), ("captured length past its block", 25)]);
}

#[test]
fn interfaces_beyond_the_limit_are_skipped() {
    let mut ng = PcapNg::new(false);
    let extra = 10;
    for _ in 0..MAX_INTERFACES + extra {
        ng.interface(1, 0, None, None);
    }
    ng.epb(MAX_INTERFACES - 1, 5, &ethernet_frame(60, 1));
    ng.epb(MAX_INTERFACES, 6, &ethernet_frame(60, 2));
    let mut cap = Capture::from_bytes("many-idbs.pcapng", ng.bytes()).unwrap();
    let (frames, errors) = read_all(&mut cap);
    assert_eq!(frames.len(), 1);
    assert_eq!(cap.interfaces().len(), MAX_INTERFACES as usize);
    let kinds: Vec<&str> = errors.iter().map(|e| e.kind().name()).collect();
    let mut expected = vec!["too many interfaces"; extra as usize];
    expected.push("unknown interface");
    assert_eq!(kinds, expected);
    assert!(errors.iter().all(|e| e.effect() == Effect::Skipped));
}
