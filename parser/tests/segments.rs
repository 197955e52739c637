#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! `parse_ethernet_segments` gives the contiguous parse's result for every split of a frame:
//! every frame of pcaps/sample.pcap, the conformance suite, the real captures
//! (ROCE_INSPECT_REAL_CAPTURES) and corpus/ethernet, split into
//! - 1 segment;
//! - 2 segments at every offset;
//! - 3 segments: the first cut at every offset up to 160 (the headers) and on a stride of
//!   len/24 past that, the second cut 1, 2, 3, 4, 7 and 13 bytes after the first and at
//!   len - 1 .. len - 8 (inside the ICRC and the pad);
//! - 8 segments: 40 pseudo-random cut sets per frame (seeded by the frame), plus runs of 1-,
//!   2-, 3- and 5-byte segments over the first 7 cuts;
//!
//! the suite and sample frames also without ICRC verification (every 2-segment split); plus a
//! property test over random frames and random splits (empty segments included).

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use roce_parser::*;

#[path = "../../testdata/pcap_frames.rs"]
mod pcap_frames;
#[path = "../../testdata/real.rs"]
mod real;

/// Parses `frame` cut at `cuts` (ascending offsets, duplicates give empty segments) and
/// asserts the result equals the contiguous parse's. Returns false when the headers were too
/// long for the segmented head (`BufferTooSmall`), which only a frame longer than SEGMENT_HEAD_MAX may give.
fn check_split(frame: &[u8], cuts: &[usize], cfg: &Config) -> bool {
    check_split_against(frame, cuts, cfg, &parse_ethernet(frame, cfg))
}

/// [`check_split`] against the contiguous parse `want` (computed once per frame).
fn check_split_against(
    frame: &[u8],
    cuts: &[usize],
    cfg: &Config,
    want: &Result<Packet<'_>>,
) -> bool {
    let mut segs: Vec<&[u8]> = Vec::with_capacity(cuts.len() + 1);
    let mut at = 0;
    for &c in cuts {
        let c = c.clamp(at, frame.len());
        segs.push(&frame[at..c]);
        at = c;
    }
    segs.push(&frame[at..]);
    let mut scratch = SegmentScratch::default();
    let got = parse_ethernet_segments(&segs, cfg, &mut scratch);
    match (*want, got) {
        (Err(w), Err(g)) => assert_eq!(w, g, "error, cuts {cuts:?}"),
        (Ok(_), Err(g)) if g.kind == ErrorKind::BufferTooSmall => {
            assert!(
                frame.len() > SEGMENT_HEAD_MAX,
                "BufferTooSmall on a {}-byte frame",
                frame.len()
            );
            return false;
        }
        (Ok(w), Ok(g)) => {
            assert_eq!(g.len, frame.len());
            let mut gp = g.packet;
            assert!(frame.starts_with(gp.data), "the head is the frame's start");
            gp.data = w.data;
            if let (Some(wr), Some(gr)) = (&w.roce, &mut gp.roce) {
                for (gs, ws) in [(gr.payload, wr.payload), (gr.pad, wr.pad), (gr.opaque, wr.opaque)]
                {
                    assert!(
                        gs.is_empty() || gs == ws,
                        "a slice of the head differs, cuts {cuts:?}"
                    );
                }
                assert_eq!(gr.payload_captured(), wr.payload.len());
                assert_eq!(gr.pad_captured(), wr.pad.len());
                assert_eq!(gr.opaque_captured(), wr.opaque.len());
                let mut rest = wr.payload;
                for piece in g.payload_pieces() {
                    let (head, tail) = rest.split_at(piece.len());
                    assert_eq!(piece, head, "payload pieces, cuts {cuts:?}");
                    rest = tail;
                }
                assert!(rest.is_empty(), "payload pieces short, cuts {cuts:?}");
                gr.payload = wr.payload;
                gr.pad = wr.pad;
                gr.opaque = wr.opaque;
            }
            assert_eq!(gp, w, "packet, cuts {cuts:?}, frame {:02x?}", frame);
        }
        (w, g) => panic!("contiguous {w:?}, segmented {g:?}, cuts {cuts:?}"),
    }
    true
}

#[derive(Default, Debug)]
struct Tally {
    frames: usize,
    splits: usize,
    too_long: usize,
}

/// Every split of the module doc for one frame.
fn check_frame(frame: &[u8], cfg: &Config, t: &mut Tally) {
    let n = frame.len();
    let want = parse_ethernet(frame, cfg);
    let run = |cuts: &[usize], t: &mut Tally| {
        t.splits += 1;
        if !check_split_against(frame, cuts, cfg, &want) {
            t.too_long += 1;
        }
    };
    t.frames += 1;
    run(&[], t);
    for a in 0..=n {
        run(&[a], t);
    }
    let stride = (n / 24).max(1);
    let firsts = (0..=n.min(160)).chain((160..=n).step_by(stride));
    for a in firsts {
        for d in [1, 2, 3, 4, 7, 13] {
            run(&[a, a + d], t);
        }
        for back in 1..=8 {
            if n >= back && n - back > a {
                run(&[a, n - back], t);
            }
        }
    }
    let mut seed = frame.iter().fold(0x9e37_79b9u32, |h, &b| h.rotate_left(5) ^ u32::from(b));
    let mut rnd = |m: usize| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
        (seed >> 8) as usize % (m + 1)
    };
    for _ in 0..40 {
        let mut cuts: Vec<usize> = (0..7).map(|_| rnd(n)).collect();
        cuts.sort_unstable();
        run(&cuts, t);
    }
    for step in [1, 2, 3, 5] {
        for start in [0, 10, 30, 50, 60] {
            let cuts: Vec<usize> = (1..=7).map(|k| start + k * step).collect();
            run(&cuts, t);
        }
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `no_verify`: also every 2-segment split without ICRC verification.
fn check_capture(path: &Path, t: &mut Tally, no_verify: bool) {
    let cfg = Config::default();
    let skip = Config { verify: false, ..Config::default() };
    pcap_frames::for_each_frame(path, |lt, frame| {
        if lt == 1 {
            check_frame(frame, &cfg, t);
            if !no_verify {
                return;
            }
            // Without ICRC verification too, on the 2-segment splits.
            let want = parse_ethernet(frame, &skip);
            for a in 0..=frame.len() {
                check_split_against(frame, &[a], &skip, &want);
            }
        }
    })
    .unwrap();
}

#[test]
fn every_split_of_the_suite_and_sample_frames() {
    let mut t = Tally::default();
    let mut paths = vec![repo().join("pcaps/sample.pcap")];
    let mut suite: Vec<PathBuf> = std::fs::read_dir(repo().join("pcaps/conformance"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    suite.sort();
    assert!(suite.len() >= 20);
    paths.extend(suite);
    for p in &paths {
        check_capture(p, &mut t, true);
    }
    eprintln!("segments: suite and sample: {t:?}");
    assert!(t.frames > 500, "{t:?}");
    assert_eq!(t.too_long, 0);
}

#[test]
fn every_split_of_the_real_captures() {
    let Some(dir) = real::real_dir() else { return };
    let mut t = Tally::default();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    paths.sort();
    for p in &paths {
        check_capture(p, &mut t, false);
    }
    eprintln!("segments: real captures: {t:?}");
    assert!(t.frames > 5000, "{t:?}");
    assert_eq!(t.too_long, 0);
}

#[test]
fn every_split_of_the_ethernet_corpus() {
    let mut t = Tally::default();
    for e in std::fs::read_dir(repo().join("corpus/ethernet")).unwrap() {
        let frame = std::fs::read(e.unwrap().path()).unwrap();
        check_frame(&frame, &Config::default(), &mut t);
    }
    eprintln!("segments: corpus/ethernet: {t:?}");
    assert!(t.frames > 300, "{t:?}");
}

/// A UD SEND to QP1 whose MAD straddles segments: decoded from the copy as from the frame.
#[test]
fn a_mad_across_segments_decodes_as_contiguous() {
    let dir = repo().join("pcaps/conformance");
    let mut seen = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|e| e != "pcap") {
            continue;
        }
        pcap_frames::for_each_frame(&p, |_, frame| {
            let c = parse_ethernet(frame, &Config::default()).unwrap();
            let Some(r) = c.roce else { return };
            if !r.is_gsi_mad() || !matches!(r.mad(), Some(Ok(_))) {
                return;
            }
            let mid = r.bth_offset + r.header_len() + 100;
            let segs = [&frame[..70], &frame[70..mid], &frame[mid..]];
            let mut scratch = SegmentScratch::default();
            let g = parse_ethernet_segments(&segs, &Config::default(), &mut scratch).unwrap();
            let gr = g.packet.roce.unwrap();
            assert!(gr.payload.is_empty(), "the payload is not in the 70-byte head");
            assert_eq!(gr.mad(), r.mad());
            assert_eq!(g.packet.problems, c.problems);
            seen += 1;
        })
        .unwrap();
    }
    assert!(seen > 10, "{seen} MADs");
}

fn frame_strategy() -> impl Strategy<Value = Vec<u8>> {
    let sample = std::sync::OnceLock::<Vec<Vec<u8>>>::new();
    let frames = sample
        .get_or_init(|| {
            let mut v = Vec::new();
            pcap_frames::for_each_frame(&repo().join("pcaps/sample.pcap"), |_, f| {
                v.push(f.to_vec())
            })
            .unwrap();
            v
        })
        .clone();
    let n = frames.len();
    (0..n, proptest::collection::vec((any::<u16>(), any::<u8>()), 0..4), any::<u16>()).prop_map(
        move |(i, flips, cut)| {
            let mut f = frames[i].clone();
            for (at, x) in flips {
                let k = usize::from(at) % f.len();
                f[k] ^= x;
            }
            // Sometimes truncated.
            if cut % 5 == 0 {
                f.truncate(usize::from(cut) % (f.len() + 1));
            }
            f
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Sample frames with a few bytes changed (ICRC bad, lengths off, headers broken) and
    /// sometimes truncated, cut at up to 8 random places (empty segments included).
    #[test]
    fn random_frames_random_splits(
        frame in frame_strategy(),
        cuts in proptest::collection::vec(any::<u16>(), 0..8),
        verify in any::<bool>(),
    ) {
        let mut cuts: Vec<usize> =
            cuts.into_iter().map(|c| usize::from(c) % (frame.len() + 1)).collect();
        cuts.sort_unstable();
        let cfg = Config { verify, ..Config::default() };
        check_split(&frame, &cuts, &cfg);
    }
}

/// The `segments` fuzz target's input format (testdata/regressions/segments-*.bin): byte 0's
/// low 3 bits are the number of cuts, then the cuts as 16-bit big-endian offsets modulo the
/// frame's length + 1, then the frame. Returns the frame and its sorted cuts.
fn fuzz_input(data: &[u8]) -> (&[u8], Vec<usize>) {
    let ncuts = usize::from(data[0] & 7);
    let (cut_bytes, frame) = data[1..].split_at(2 * ncuts);
    let mut cuts: Vec<usize> = cut_bytes
        .chunks_exact(2)
        .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])) % (frame.len() + 1))
        .collect();
    cuts.sort_unstable();
    (frame, cuts)
}

/// Found by fuzzing: an IPv6 extension-header chain reaching past a first segment that is
/// itself longer than SEGMENT_HEAD_MAX. The segmented parse used that segment as its head, and the
/// walk, cut by the head's end, was reported as the frame's own truncation (another stop,
/// next header and ext_len than the contiguous parse: 60 / 376 against 175 / 2112). The
/// contiguous parse is right (the chain ends at byte 2166 of a 2547-byte frame); a head that
/// cannot hold the headers gives BufferTooSmall, as documented, and the C interface joins
/// the segments then.
#[test]
fn an_extension_chain_past_a_long_first_segment_is_not_cut_at_it() {
    for (name, frame_len, cut) in [
        ("segments-ipv6-extension-chain-first-segment-past-head-max.bin", 2547, 2108),
        ("segments-ipv6-extension-chain-truncated-past-first-segment.bin", 2121, 2116),
    ] {
        let data = std::fs::read(repo().join("testdata/regressions").join(name)).unwrap();
        let (frame, cuts) = fuzz_input(&data);
        assert_eq!((frame.len(), cuts.as_slice()), (frame_len, &[cut][..]), "{name}");
        let cfg = Config { verify: data[0] & 8 == 0, ..Config::default() };
        let contiguous = parse_ethernet(frame, &cfg).unwrap();
        let ip = contiguous.ip.unwrap();
        // The headers end past the first segment (and past SEGMENT_HEAD_MAX).
        assert!(14 + 40 + ip.ext_len > SEGMENT_HEAD_MAX || contiguous.stop.is_some(), "{name}");
        let mut scratch = SegmentScratch::default();
        let segs = [&frame[..cut], &frame[cut..]];
        let got = parse_ethernet_segments(&segs, &cfg, &mut scratch).unwrap_err();
        assert_eq!((got.kind, got.needed), (ErrorKind::BufferTooSmall, 2166), "{name}");
        assert!(!check_split(frame, &cuts, &cfg), "{name}");
        // Cut inside SEGMENT_HEAD_MAX instead: the copied head holds what it can, and the answer is
        // the contiguous one or BufferTooSmall, never another parse.
        for c in [100, 1000, 2000, SEGMENT_HEAD_MAX, SEGMENT_HEAD_MAX + 1, frame.len() - 1] {
            check_split(frame, &[c], &cfg);
        }
    }
}
