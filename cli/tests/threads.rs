//! `--threads N`: every command's output (stdout, stderr, exit status) with 2 and 3 threads is
//! the `--threads 1` run's byte for byte, on every capture in pcaps/ (pcaps/conformance/
//! included), on generated captures of several batches (whole, damaged mid-capture, cut short),
//! and on every real capture (ROCE_INSPECT_REAL_CAPTURES; skipped with a note without it,
//! failing under CI=true). Also: stdin input, `-l`, and a stdout closed early.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

#[path = "../../testdata/real.rs"]
mod real;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use roce_conformance::{Options, Report, Shard};
use roce_inspect::internal::threads::{check_sharded, Threads};
use roce_parser::Config;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn tmp(name: &str) -> PathBuf {
    let d =
        std::env::temp_dir().join(format!("roce-inspect-threads-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every variant of every command whose output goes to stdout (`report`'s page too).
const VARIANTS: &[&[&str]] = &[
    &["dissect"],
    &["dissect", "-V"],
    &["dissect", "-V", "-x"],
    &["dissect", "-t", "d"],
    &["dissect", "-t", "r", "-x"],
    &["dissect", "--format", "json"],
    &["dissect", "--format", "jsonl"],
    &["dissect", "--format", "json", "--opcode", "RC_RDMA_READ_REQUEST"],
    &["stats"],
    &["stats", "--format", "json"],
    &["check"],
    &["check", "--format", "json"],
    &["check", "--assume-complete", "--max-per-rule", "0"],
    &["diagnose"],
    &["diagnose", "--format", "json"],
    // The page on stdout: the reader verifies the checksums the page counts.
    &["report", "-o", "-"],
];

/// `roce-inspect ARGS --threads N CAPTURE`.
fn run(args: &[&str], capture: &Path, threads: u32) -> Output {
    bin().args(args).arg("--threads").arg(threads.to_string()).arg(capture).output().unwrap()
}

fn show(o: &Output) -> String {
    format!(
        "status {:?}, {} bytes out, stderr: {}",
        o.status.code(),
        o.stdout.len(),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Asserts `args` on `capture` gives the same bytes with 2 and 3 threads as with 1; returns the
/// single-thread run.
fn same_with_threads(args: &[&str], capture: &Path) -> Output {
    let one = run(args, capture, 1);
    for n in [2, 3] {
        let many = run(args, capture, n);
        assert!(
            one.stdout == many.stdout && one.stderr == many.stderr && one.status == many.status,
            "{} {args:?} --threads {n} differs from --threads 1:\n 1: {}\n {n}: {}",
            capture.display(),
            show(&one),
            show(&many),
        );
    }
    one
}

/// The export's three files with 1, 2 and 3 threads are the same bytes.
fn same_export(capture: &Path, scratch: &Path) {
    same_export_with(&[], capture, scratch);
}

/// The same with `args` (`--raw`, `--shard`, `-Y`, `--rows-per-file`): with two threads and
/// more, the packets' rows are built on the reader thread unless `-Y` selects them.
fn same_export_with(args: &[&str], capture: &Path, scratch: &Path) {
    let mut first: Option<Vec<Vec<u8>>> = None;
    for n in [1u32, 2, 3] {
        let dir = scratch.join(format!("export-{n}"));
        let o = bin()
            .args(["export", "--threads", &n.to_string(), "-o"])
            .arg(&dir)
            .args(args)
            .arg(capture)
            .output()
            .unwrap();
        // Every file of the folder: the three tables, and the packets' part files.
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        if !args.is_empty() {
            assert!(o.status.success(), "{args:?}: {}", show(&o));
            let parts = names.iter().filter(|n| n.starts_with("packets-")).count();
            let want = usize::from(args.contains(&"--rows-per-file"));
            assert_eq!(parts, want, "{args:?}: {names:?}");
        }
        let files: Vec<Vec<u8>> = names
            .iter()
            .map(|f| std::fs::read(dir.join(f)).unwrap_or_default())
            .chain([names.join(",").into_bytes()])
            .chain([
                // "wrote DIR: ..." names each run's own directory.
                String::from_utf8_lossy(&o.stderr)
                    .replace(&dir.display().to_string(), "DIR")
                    .into(),
                format!("{:?}", o.status.code()).into_bytes(),
            ])
            .collect();
        match &first {
            None => first = Some(files),
            Some(one) => assert!(
                one == &files,
                "{}: export {args:?} --threads {n} differs",
                capture.display()
            ),
        }
    }
}

fn captures_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".pcap") || name.ends_with(".pcapng") || name.ends_with(".gz")
        })
        .collect();
    v.sort();
    v
}

/// A generated capture of `frames` frames over 16 connections (several batches).
fn generated(dir: &Path, frames: u32) -> PathBuf {
    let path = dir.join(format!("bench-{frames}.pcap"));
    let o = bin()
        .args(["gen", "bench", "--connections", "16", "--frames", &frames.to_string(), "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    path
}

/// The pcap record headers' offsets (24-byte file header, 16-byte record headers; `gen`
/// writes big-endian).
fn record_offsets(bytes: &[u8]) -> Vec<usize> {
    assert_eq!(&bytes[..4], &[0xa1, 0xb2, 0x3c, 0x4d], "a big-endian nanosecond pcap");
    let mut at = 24;
    let mut v = Vec::new();
    while at + 16 <= bytes.len() {
        v.push(at);
        let incl = u32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + incl;
    }
    v
}

#[test]
fn every_capture_in_pcaps_gives_the_same_bytes() {
    let mut caps = captures_in(&root().join("pcaps"));
    caps.extend(captures_in(&root().join("pcaps/conformance")));
    assert!(caps.len() > 50, "pcaps/ and pcaps/conformance/ hold the captures");
    let scratch = tmp("pcaps");
    for cap in &caps {
        for args in VARIANTS {
            same_with_threads(args, cap);
        }
    }
    for cap in caps.iter().step_by(7) {
        same_export(cap, &scratch);
    }
    std::fs::remove_dir_all(scratch).unwrap();
}

#[test]
fn captures_of_many_batches_give_the_same_bytes() {
    let scratch = tmp("batches");
    // A batch is a read window's frames (the first 1 MiB, then 256 KiB: some 600 of these
    // frames): 9,000 frames (3.9 MB) are a dozen batches, the last one partial.
    let cap = generated(&scratch, 9_000);
    for args in VARIANTS {
        let one = same_with_threads(args, &cap);
        // (`diagnose`'s text of a healthy capture is the shortest: some 1,500 bytes.)
        assert!(one.stdout.len() > 1_000, "{args:?}: real output");
    }
    // Reading stops inside a batch (-c); selections span batches.
    for args in [
        &["dissect", "-c", "2048"][..],
        &["dissect", "-c", "4097", "--format", "json"],
        &["dissect", "--frames", "2000-2100,6000-", "-t", "d"],
        &["dissect", "--frames", "5000", "--format", "json"],
        &["dissect", "--frames", "9500-", "--format", "json"],
    ] {
        same_with_threads(args, &cap);
    }
    // Split by host pair within one shard of two; past --max-flows (16 connections are 32
    // flows), where the split gives up and one checker runs.
    for args in [
        &["check", "--shard", "1/2", "--format", "json"][..],
        &["check", "--shard", "0/2"],
        &["check", "--max-flows", "8"],
        &["check", "--max-flows", "8", "--format", "json"],
    ] {
        same_with_threads(args, &cap);
    }
    let eight = Options { max_flows: 8, ..Options::default() };
    let split = check_sharded(&cap.as_path().into(), &Config::default(), &eight, Shard::ALL, two());
    assert!(split.unwrap().is_none(), "past the cap the split gives up");
    same_export(&cap, &scratch);
    // Two row groups (8,192 rows and the rest), built on the reader with two threads and
    // more: with the frames' bytes, within a shard, in part files of one group each; and
    // with -Y (the rows then built by the frame loop).
    for args in [
        &["--raw"][..],
        &["--shard", "1/2", "--raw"],
        &["--shard", "0/3"],
        &["--rows-per-file", "8192"],
        &["-Y", "bth.psn > 100"],
    ] {
        same_export_with(args, &cap, &scratch);
    }
    std::fs::remove_dir_all(scratch).unwrap();
}

fn two() -> Threads {
    Threads::new(2)
}

/// What a `check` report says, as one comparable value (the checker's own state accounting
/// is left out: split, it is the sum of the shards').
fn said(r: &Report) -> serde_json::Value {
    serde_json::json!({
        "findings": r.findings,
        "connections": r.connections,
        "connections_not_listed": r.connections_not_listed,
        "frames": r.frames,
        "roce_frames": r.roce_frames,
        "errors": r.errors,
        "warnings": r.warnings,
        "suppressed": r.suppressed,
        "by_rule": r.by_rule,
    })
}

/// The check variants go through the split checker (not the one-thread fallback): on every
/// capture in pcaps/, a generated one of several batches and the real captures, 2 and 3
/// workers split by host
/// pair give one checker's report (findings in the same order, the same counts, the same
/// connections listed) without giving up, with the options of VARIANTS and with a cap on
/// findings per (connection, rule) of 1.
#[test]
fn check_splits_by_host_pair_into_one_checkers_report() {
    let mut caps = captures_in(&root().join("pcaps"));
    caps.extend(captures_in(&root().join("pcaps/conformance")));
    let scratch = tmp("split");
    caps.push(generated(&scratch, 9_000));
    // And the real captures, when they are there (every_real_capture_gives_the_same_bytes
    // says so when they are not).
    caps.extend(real::real_dir().map(|d| captures_in(&d)).unwrap_or_default());
    let cfg = Config::default();
    let all = [
        Options::default(),
        Options { assume_complete: true, ..Options::default() },
        Options { max_findings_per_rule: 1, ..Options::default() },
    ];
    let mut findings = 0;
    for cap in &caps {
        for opts in &all {
            let (one, _) =
                roce_inspect::internal::check::check_file(cap, &cfg, opts.clone()).unwrap();
            findings += one.findings.len();
            for n in [2, 3] {
                let split =
                    check_sharded(&cap.as_path().into(), &cfg, opts, Shard::ALL, Threads::new(n));
                let Some((r, _)) = split.unwrap() else {
                    panic!("{}: {n} workers gave up", cap.display())
                };
                assert_eq!(said(&r), said(&one), "{} on {n} workers", cap.display());
            }
        }
    }
    assert!(findings > 100, "{findings} findings compared");
    std::fs::remove_dir_all(scratch).unwrap();
}

#[test]
fn damage_mid_capture_is_reported_the_same_and_earlier_frames_kept() {
    let scratch = tmp("damage");
    let cap = generated(&scratch, 6_000);
    let bytes = std::fs::read(&cap).unwrap();
    let records = record_offsets(&bytes);
    assert_eq!(records.len(), 6_000);

    // A lying length in record 3,000 (past the first batches), then the file cut inside
    // record 5,000.
    let mut lying = bytes.clone();
    let at = records[2_999] + 8;
    lying[at..at + 4].copy_from_slice(&0x7fff_fff0u32.to_be_bytes());
    let lying_path = scratch.join("lying.pcap");
    std::fs::write(&lying_path, &lying).unwrap();
    let cut_path = scratch.join("cut.pcap");
    std::fs::write(&cut_path, &bytes[..records[4_999] + 30]).unwrap();
    // Not a capture at all: nothing read, exit status 2.
    let junk_path = scratch.join("junk.pcap");
    std::fs::write(&junk_path, b"this is not a capture file at all").unwrap();

    for (path, frames_before) in [(&lying_path, 2_999usize), (&cut_path, 4_999)] {
        // Past --max-flows check's split gives up and checks again on one thread: the
        // warning is written once, as by one thread, not once per pass.
        let again = same_with_threads(&["check", "--max-flows", "4"], path);
        let stderr = String::from_utf8_lossy(&again.stderr);
        assert_eq!(stderr.matches("warning").count(), 1, "one warning: {stderr}");
        for args in VARIANTS {
            let one = same_with_threads(args, path);
            let stderr = String::from_utf8_lossy(&one.stderr);
            assert!(stderr.contains("warning"), "{args:?}: the damage is reported: {stderr}");
            if args == &["dissect", "--format", "jsonl"] {
                let lines = one.stdout.iter().filter(|&&b| b == b'\n').count();
                assert!(lines >= frames_before, "{args:?}: the frames before it are kept");
            }
        }
    }
    for args in VARIANTS {
        let one = same_with_threads(args, &junk_path);
        assert_eq!(one.status.code(), Some(2), "{args:?}");
        assert!(one.stdout.is_empty(), "{args:?}: nothing written before the error");
        assert!(String::from_utf8_lossy(&one.stderr).contains("junk.pcap"), "{args:?}");
    }
    std::fs::remove_dir_all(scratch).unwrap();
}

#[test]
fn stdin_and_line_flush_keep_working() {
    let scratch = tmp("stdin");
    let cap = generated(&scratch, 5_000);
    let bytes = std::fs::read(&cap).unwrap();
    for args in [&["dissect"][..], &["dissect", "--format", "jsonl"], &["stats"], &["check"]] {
        let from_file = run(args, &cap, 1);
        let mut from_stdin: Vec<Output> = Vec::new();
        for n in ["1", "2"] {
            let mut child = bin()
                .args(args)
                .args(["--threads", n, "-"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let feed = bytes.clone();
            let writer = std::thread::spawn(move || stdin.write_all(&feed));
            let o = child.wait_with_output().unwrap();
            writer.join().unwrap().unwrap();
            assert_eq!(o.status, from_file.status, "{args:?} --threads {n} from stdin");
            // stats names its input ("-"), check on stdin is the live view (findings as they
            // are proven): those are compared between the two stdin runs.
            if args[0] == "dissect" {
                assert_eq!(o.stdout, from_file.stdout, "{args:?} --threads {n} from stdin");
            }
            from_stdin.push(o);
        }
        assert!(from_stdin[0].stdout.len() > 1_000, "{args:?}: real output from stdin");
        assert_eq!(from_stdin[0].stdout, from_stdin[1].stdout, "{args:?} from stdin, 1 and 2");
    }
    let l = bin().args(["dissect", "-l", "--threads", "2"]).arg(&cap).output().unwrap();
    assert_eq!(l.stdout, run(&["dissect"], &cap, 1).stdout, "-l");
    std::fs::remove_dir_all(scratch).unwrap();
}

#[test]
fn a_closed_stdout_ends_cleanly() {
    let scratch = tmp("pipe");
    let cap = generated(&scratch, 20_000);
    for format in ["text", "jsonl", "json"] {
        let mut child = bin()
            .args(["dissect", "--threads", "2", "--format", format])
            .arg(&cap)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut head = [0u8; 4096];
        out.read_exact(&mut head).unwrap();
        drop(out);
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(o.stderr.is_empty(), "{format}: {}", String::from_utf8_lossy(&o.stderr));
    }
    std::fs::remove_dir_all(scratch).unwrap();
}

#[test]
fn every_real_capture_gives_the_same_bytes() {
    let Some(dir) = real::real_dir() else { return };
    let caps = captures_in(&dir);
    assert!(caps.len() >= 20, "the real captures are in {}", dir.display());
    let scratch = tmp("real");
    for cap in &caps {
        for args in VARIANTS {
            same_with_threads(args, cap);
        }
        same_export(cap, &scratch);
    }
    std::fs::remove_dir_all(scratch).unwrap();
}

#[test]
fn threads_zero_is_refused() {
    let cap = root().join("pcaps/sample.pcap");
    let o = bin().args(["stats", "--threads", "0"]).arg(&cap).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("at least 1"));
}

/// Runs `args`, killed after 60 s (a run that long failed the test).
fn run_limited(args: &[&str]) -> (Output, std::time::Duration) {
    let start = std::time::Instant::now();
    let mut child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // The output is small (39 frames): the pipes do not fill before the end.
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{args:?} ran for more than 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), start.elapsed())
}

#[test]
fn threads_past_the_cap_are_capped_with_a_note() {
    let sample = root().join("pcaps/sample.pcap");
    let sample = sample.to_str().unwrap();
    let max = Threads::max();
    let cores = Threads::all_cores().get();
    assert_eq!(max, 4 * cores);
    for cmd in ["dissect", "check", "stats"] {
        let (one, _) = run_limited(&[cmd, sample, "--threads", "1"]);
        let (huge, took) = run_limited(&[cmd, sample, "--threads", "4294967295"]);
        assert!(took < std::time::Duration::from_secs(20), "{cmd}: {took:?}");
        assert_eq!(huge.status.code(), one.status.code(), "{cmd}");
        assert_eq!(huge.stdout, one.stdout, "{cmd}: not the --threads 1 output");
        let err = String::from_utf8_lossy(&huge.stderr);
        let note = format!(
            "roce-inspect: note: --threads 4294967295 is more than this machine can use: {max} \
             threads (4 x {cores} cores)\n"
        );
        assert_eq!(err, format!("{note}{}", String::from_utf8_lossy(&one.stderr)), "{cmd}");
        // At the cap: no note.
        let (at, _) = run_limited(&[cmd, sample, "--threads", &max.to_string()]);
        assert_eq!(at.stdout, one.stdout, "{cmd}");
        assert_eq!(at.stderr, one.stderr, "{cmd}: {}", String::from_utf8_lossy(&at.stderr));
    }
}

/// A capture of tiny records: 30,000 frames of the sample cut to 24 captured bytes (40-byte
/// records, some 6,500 in a 256 KiB read window, past the 4,096 frames a batch holds, so
/// every window goes out in two batches, `Capture::retire_window`): every command gives the
/// same bytes with 2 and 3 threads as with 1, and reads every frame.
#[test]
fn windows_of_tiny_frames_are_cut_into_batches_and_give_the_same_bytes() {
    let scratch = tmp("tiny");
    let sample = std::fs::read(root().join("pcaps/sample.pcap")).unwrap();
    let (header, mut records) = sample.split_at(24);
    let little = header.starts_with(&[0xd4, 0xc3, 0xb2, 0xa1]);
    let u32_at = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if little {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let put = |v: u32| if little { v.to_le_bytes() } else { v.to_be_bytes() };
    let mut frames: Vec<(u32, Vec<u8>)> = Vec::new();
    while records.len() >= 16 {
        let caplen = u32_at(&records[8..12]) as usize;
        let len = u32_at(&records[12..16]);
        frames.push((len, records[16..16 + caplen].to_vec()));
        records = &records[16 + caplen..];
    }
    let mut out = header.to_vec();
    for i in 0..30_000u32 {
        let (len, data) = &frames[i as usize % frames.len()];
        let cut = &data[..data.len().min(24)];
        out.extend_from_slice(&put(1_767_225_600 + i / 1_000_000));
        out.extend_from_slice(&put(i % 1_000_000));
        out.extend_from_slice(&put(cut.len() as u32));
        out.extend_from_slice(&put(*len));
        out.extend_from_slice(cut);
    }
    let cap = scratch.join("tiny.pcap");
    std::fs::write(&cap, &out).unwrap();
    for args in VARIANTS {
        same_with_threads(args, &cap);
    }
    let one = same_with_threads(&["dissect", "-T", "fields", "-e", "frame"], &cap);
    let numbers = String::from_utf8(one.stdout).unwrap();
    assert_eq!(numbers.lines().count(), 30_000);
    assert_eq!(numbers.lines().last(), Some("30000"));
    same_export(&cap, &scratch);
    std::fs::remove_dir_all(scratch).unwrap();
}
