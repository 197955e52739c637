//! `dissect -w FILE`: the frames dissect keeps, saved byte for byte with their timestamps,
//! lengths and the input's link type and resolution; read back with roce-capture, and
//! compared with what `tshark -r IN -Y ... -w OUT` saves for the same selection.
//!
//! Without tshark the tshark half skips with a note, except under CI=true, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use roce_capture::{FormatKind, LinkType, TsResolution};

mod common;

/// A fresh directory per test under the system's temporary directory.
fn tempdir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roce-write-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pcaps(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps").join(name)
}

fn run(args: &[&str]) -> (Vec<u8>, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out.stdout, String::from_utf8(out.stderr).unwrap(), out.status.code().unwrap())
}

/// A frame as the file holds it: number, timestamp, captured and original length, link
/// type, bytes.
#[derive(Debug, PartialEq, Eq)]
struct F {
    number: u64,
    ts_ns: u64,
    caplen: u32,
    len: u32,
    link: LinkType,
    data: Vec<u8>,
}

/// Every frame of a capture, and its format's resolutions (pcap's, or each interface's).
fn frames(path: &Path) -> (Vec<F>, FormatKind, Vec<TsResolution>) {
    let mut cap = roce_capture::open(path).unwrap();
    let mut v = Vec::new();
    while let Some(f) = cap.next_frame() {
        let f = f.unwrap();
        v.push(F {
            number: f.number,
            ts_ns: f.ts_ns,
            caplen: f.caplen,
            len: f.len,
            link: f.link_type,
            data: f.data.to_vec(),
        });
    }
    let res = cap.interfaces().iter().map(|i| i.resolution).collect();
    (v, cap.format().kind, res)
}

/// The frame numbers dissect shows for `selection` (its text output).
fn shown(input: &Path, selection: &[&str]) -> Vec<u64> {
    let (out, err, code) = run(&[&["dissect"], selection, &[input.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{err}");
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

/// Compares `written` with frames `numbers` of `input`: same bytes, timestamps, lengths and
/// link type, in order (the numbers are the output's own, 1..).
fn assert_same_frames(input: &Path, numbers: &[u64], written: &Path, what: &str) {
    let (all, _, _) = frames(input);
    let (got, _, _) = frames(written);
    assert_eq!(got.len(), numbers.len(), "{what}: frame count");
    for (i, (g, n)) in got.iter().zip(numbers).enumerate() {
        let want = &all[*n as usize - 1];
        assert_eq!(g.number, i as u64 + 1, "{what}");
        let g = F { number: want.number, data: g.data.clone(), ..*g };
        assert_eq!(&g, want, "{what}: frame {n} of the input");
    }
}

const SELECTIONS: &[&[&str]] = &[
    &["--frames", "2-5,9,20-"],
    &["--qp", "0x000d67"],
    &["--qp", "0x222", "--opcode", "RC_ACKNOWLEDGE"],
    &["-c", "7"],
    &[],
];

/// Every selection, into pcap and pcapng, from a pcap and a pcapng input: the frames
/// dissect shows are the frames the file holds, byte for byte and to the nanosecond, and
/// the output keeps the input's resolution.
#[test]
fn written_frames_are_the_selected_frames() {
    let dir = tempdir("written");
    let ng = dir.join("sample.pcapng");
    let (_, err, code) =
        run(&["dissect", "-w", ng.to_str().unwrap(), pcaps("sample.pcap").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(frames(&ng).1, FormatKind::PcapNg);
    let inputs = [pcaps("sample.pcap"), pcaps("conformance/clean-rc-mix.pcap"), ng];
    for input in &inputs {
        let (_, in_kind, in_res) = frames(input);
        for (k, sel) in SELECTIONS.iter().enumerate() {
            let numbers = shown(input, sel);
            for ext in ["pcap", "pcapng"] {
                let out = dir.join(format!("out{k}.{ext}"));
                let what = format!("{} {sel:?} -w .{ext}", input.display());
                let args =
                    [&["dissect"], *sel, &["-w", out.to_str().unwrap(), input.to_str().unwrap()]]
                        .concat();
                let (text, err, code) = run(&args);
                assert_eq!(code, 0, "{what}: {err}");
                // -w FILE prints nothing (tshark: unless -P).
                assert!(text.is_empty(), "{what}");
                assert_same_frames(input, &numbers, &out, &what);
                let (_, kind, res) = frames(&out);
                let want = if ext == "pcap" { FormatKind::Pcap } else { FormatKind::PcapNg };
                assert_eq!(kind, want, "{what}");
                if !numbers.is_empty() || in_kind == kind {
                    assert_eq!(res, in_res, "{what}: timestamp resolution");
                }
            }
        }
    }
}

/// A pcapng block of the reserved type 0 takes no frame number (the capture reader skips
/// it); the record copier once counted it as a packet and saved the frame after the one
/// selected (found by the write_capture fuzz target on a seed with one such block).
#[test]
fn reserved_blocks_are_no_frames() {
    let dir = tempdir("reserved");
    let ng = dir.join("sample.pcapng");
    let (_, err, code) =
        run(&["dissect", "-w", ng.to_str().unwrap(), pcaps("sample.pcap").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let input = dir.join("reserved.pcapng");
    std::fs::write(&input, common::pcapng::with_reserved_blocks(&std::fs::read(&ng).unwrap()))
        .unwrap();
    assert_eq!(frames(&input).0, frames(&ng).0, "type-0 blocks read as nothing");
    let sel = ["--frames", "2-5,9,20-"];
    let numbers = shown(&input, &sel);
    assert!(numbers.len() > 5, "{numbers:?}");
    for ext in ["pcap", "pcapng"] {
        let out = dir.join(format!("out.{ext}"));
        let args =
            [&["dissect"], &sel[..], &["-w", out.to_str().unwrap(), input.to_str().unwrap()]]
                .concat();
        let (_, err, code) = run(&args);
        assert_eq!(code, 0, "{err}");
        assert_same_frames(&input, &numbers, &out, &format!("-w .{ext}"));
    }
}

/// `-w -` writes the capture to stdout and no text; a closed pipe, a full disk, a bad name
/// and stdin as input are clear errors naming the file.
#[test]
fn stdout_and_errors() {
    let sample = pcaps("sample.pcap");
    let s = sample.to_str().unwrap();
    let dir = tempdir("stdout");
    let (bytes, err, code) = run(&["dissect", "--frames", "3,4", "-w", "-", s]);
    assert_eq!(code, 0, "{err}");
    let piped = dir.join("piped.pcap");
    std::fs::write(&piped, &bytes).unwrap();
    assert_same_frames(&sample, &[3, 4], &piped, "-w -");
    assert_eq!(frames(&piped).1, FormatKind::Pcap, "-w - keeps the input's format");

    let (_, err, code) = run(&["dissect", "-w", "out.txt", s]);
    assert_eq!(code, 2);
    assert!(err.contains("-w out.txt") && err.contains(".pcapng"), "{err}");

    let missing = dir.join("no/such/dir/x.pcap");
    let (_, err, code) = run(&["dissect", "-w", missing.to_str().unwrap(), s]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot create") && err.contains("x.pcap"), "{err}");

    // The input is read once: stdin (and a gzip file) are saved as the file is.
    let from_file = dir.join("file.pcapng");
    let (_, err, code) = run(&["dissect", "-Y", "aeth", "-w", from_file.to_str().unwrap(), s]);
    assert_eq!(code, 0, "{err}");
    let from_stdin = dir.join("stdin.pcapng");
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["dissect", "-Y", "aeth", "-w", from_stdin.to_str().unwrap(), "-"])
        .stdin(std::fs::File::open(&sample).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "-w without -P prints nothing, as tshark");
    assert_eq!(std::fs::read(&from_stdin).unwrap(), std::fs::read(&from_file).unwrap());
    let gz = dir.join("sample.pcap.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, &std::fs::read(&sample).unwrap()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let from_gz = dir.join("gz.pcapng");
    let (_, err, code) =
        run(&["dissect", "-Y", "aeth", "-w", from_gz.to_str().unwrap(), gz.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&from_gz).unwrap(), std::fs::read(&from_file).unwrap());
    let ack_frames = shown(&sample, &["-Y", "aeth"]);
    assert!(ack_frames.len() > 3);
    assert_same_frames(&sample, &ack_frames, &from_stdin, "-w from stdin");

    // -P: the text too, the same lines as without -w.
    let (text, _, _) = run(&["dissect", "-Y", "aeth", s]);
    let (printed, err, code) =
        run(&["dissect", "-P", "-Y", "aeth", "-w", dir.join("p.pcap").to_str().unwrap(), s]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(printed, text);
    let (_, err, code) = run(&["dissect", "-P", "-w", "-", s]);
    assert_eq!(code, 2);
    assert!(err.contains("-P"), "{err}");

    #[cfg(unix)]
    {
        let full = dir.join("full.pcap");
        std::os::unix::fs::symlink("/dev/full", &full).unwrap();
        let (_, err, code) = run(&["dissect", "-w", full.to_str().unwrap(), s]);
        assert_eq!(code, 2);
        assert!(err.contains("full.pcap: writing") && err.contains("No space"), "{err}");

        // A reader that closes its end at once: a clear error, not a panic.
        let mut child = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
            .args(["dissect", "-w", "-", pcaps("conformance/pkt-rules.pcap").to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        if out.status.code() == Some(2) {
            assert!(err.contains("-w -: writing to stdout"), "{err}");
        }
    }
}

/// tshark, or None (with a note) when it is not installed; under CI=true it must be.
fn tshark() -> bool {
    let found = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "CI=true: tshark is required");
        eprintln!("note: tshark not found, skipping the comparison with tshark -Y ... -w");
    }
    found
}

fn tshark_write(input: &Path, filter: &str, out: &Path, format: &str) {
    let o = Command::new("tshark")
        .args(["-r", input.to_str().unwrap(), "-Y", filter, "-F", format, "-w"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "tshark -Y {filter}: {}", String::from_utf8_lossy(&o.stderr));
}

/// The same selection written by tshark and by us holds the same packets: bytes,
/// timestamps, lengths (the file headers differ: tshark writes its own SHB and options).
#[test]
fn same_frames_as_tshark() {
    if !tshark() {
        return;
    }
    let dir = tempdir("tshark");
    // A pcapng input and a microsecond pcap input, both written by tshark.
    let ng = dir.join("tshark.pcapng");
    tshark_write(&pcaps("sample.pcap"), "frame", &ng, "pcapng");
    let us = dir.join("tshark-us.pcap");
    tshark_write(&pcaps("conformance/clean-rc-mix.pcap"), "frame", &us, "pcap");
    assert_eq!(frames(&us).2, vec![TsResolution::MICRO]);
    let cases: &[(PathBuf, &[&str], &str)] = &[
        (pcaps("sample.pcap"), &["--frames", "2-5,9,30-"], "frame.number in {2..5, 9, 30..39}"),
        (pcaps("sample.pcap"), &["--qp", "0xd67"], "infiniband.bth.destqp == 0x000d67"),
        (
            pcaps("conformance/clean-rc-mix.pcap"),
            &["--frames", "1,4-8"],
            "frame.number in {1, 4..8}",
        ),
        (
            pcaps("conformance/clean-rc-mix.pcap"),
            &["--qp", "0x222"],
            "infiniband.bth.destqp == 0x222",
        ),
        (ng.clone(), &["--qp", "0xdc1"], "infiniband.bth.destqp == 0xdc1"),
        (ng, &["--frames", "10-12"], "frame.number in {10..12}"),
        (us, &["--qp", "0x222"], "infiniband.bth.destqp == 0x222"),
    ];
    for (k, (input, sel, filter)) in cases.iter().enumerate() {
        for ext in ["pcap", "pcapng"] {
            let ours = dir.join(format!("ours{k}.{ext}"));
            let theirs = dir.join(format!("theirs{k}.{ext}"));
            let args =
                [&["dissect"], *sel, &["-w", ours.to_str().unwrap(), input.to_str().unwrap()]]
                    .concat();
            let (_, err, code) = run(&args);
            assert_eq!(code, 0, "{err}");
            let format = if ext == "pcap" && frames(input).2 == vec![TsResolution::MICRO] {
                "pcap"
            } else if ext == "pcap" {
                "nsecpcap"
            } else {
                "pcapng"
            };
            tshark_write(input, filter, &theirs, format);
            let (a, _, ra) = frames(&ours);
            let (b, _, rb) = frames(&theirs);
            let what = format!("{} {sel:?} .{ext} against tshark -Y '{filter}'", input.display());
            assert!(!a.is_empty(), "{what}: nothing selected");
            assert_eq!(a, b, "{what}");
            assert_eq!(ra, rb, "{what}: resolution");
        }
    }
}
