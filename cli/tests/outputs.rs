//! A user's files are never destroyed: every output of every command, run as the user runs
//! it (the binary, real captures), against the cases that once lost data. An output that is
//! the input (same path, hard link, symbolic link) is refused before anything is written; a
//! device or FIFO is written in place and stays what it was; a failed write (a full disk,
//! simulated with a file-size limit) leaves the destination as it was and no stray file; a
//! closed pipe or a full stderr ends quietly. Device nodes are made in a private folder
//! (mknod, as root), never the machine's own /dev files; without root those checks are
//! skipped with a note.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_roce-inspect")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sample() -> &'static Path {
    static SAMPLE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SAMPLE.get_or_init(|| root().join("pcaps/sample.pcap"))
}

/// A fresh private folder for one test.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roce-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).stdin(Stdio::null()).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The folder's entries, sorted (a stray temporary file shows here).
fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A capture of `frames` frames made by `gen bench` in `dir`.
fn bench_capture(dir: &Path, frames: u32) -> PathBuf {
    let p = dir.join("big.pcap");
    let o = run(&["gen", "bench", "-o", s(&p), "--frames", &frames.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    p
}

/// A copy of the sample with its last record cut short and garbage after it.
fn damaged_capture(dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(sample()).unwrap();
    bytes.truncate(3000);
    bytes.extend_from_slice(b"garbage after a cut record");
    let p = dir.join("damaged.pcap");
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `mknod PATH c MAJOR MINOR` in a private folder; `false` (with a note) without the right.
fn private_device(path: &Path, major: u32, minor: u32) -> bool {
    let ok = Command::new("mknod")
        .arg(path)
        .args(["c", &major.to_string(), &minor.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("note: skipped: cannot mknod {} here (not root)", path.display());
    }
    ok
}

fn is_char_device(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

/// Runs the binary with a file-size limit of `kib` KiB and SIGXFSZ ignored: a write past
/// the limit fails with EFBIG, as a write to a full disk fails with ENOSPC.
fn run_with_size_limit(kib: u32, args: &[&str]) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn dissect_w_onto_its_input_is_refused_and_the_input_kept() {
    let d = tmp("w-input");
    let cap = bench_capture(&d, 20_000);
    let before = std::fs::read(&cap).unwrap();
    let link = d.join("link.pcap");
    std::os::unix::fs::symlink(&cap, &link).unwrap();
    let hard = d.join("hard.pcap");
    std::fs::hard_link(&cap, &hard).unwrap();
    for out in [&cap, &link, &hard] {
        let o = run(&["dissect", s(&cap), "-w", s(out)]);
        assert_eq!(o.status.code(), Some(2), "-w {}: {}", out.display(), stderr(&o));
        assert!(stderr(&o).contains("which this command reads"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&cap).unwrap(), before, "-w {} changed the input", out.display());
    }
    // Standard input redirected from the file is the same file too.
    let o = Command::new(bin())
        .args(["dissect", "-", "-w", s(&hard)])
        .stdin(std::fs::File::open(&cap).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard input"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&cap).unwrap(), before);
    assert_eq!(entries(&d), ["big.pcap", "hard.pcap", "link.pcap"]);
}

#[test]
fn report_graph_annotate_and_write_expect_refuse_their_input_by_any_name() {
    let d = tmp("any-name");
    let cap = d.join("x.pcap");
    std::fs::copy(sample(), &cap).unwrap();
    let before = std::fs::read(&cap).unwrap();
    std::fs::hard_link(&cap, d.join("x.html")).unwrap();
    std::os::unix::fs::symlink(&cap, d.join("soft.svg")).unwrap();
    let (html, svg) = (d.join("x.html"), d.join("soft.svg"));
    let cases: [&[&str]; 5] = [
        &["report", s(&cap), "-o", s(&html)],
        &["report", s(&cap), "-o", s(&svg)],
        &["graph", s(&cap), "--conn", "10.0.0.1", "-o", s(&svg)],
        &["check", s(&cap), "--annotate", s(&html)],
        &["check", s(&cap), "--write-expect", s(&html)],
    ];
    for args in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("not overwriting"), "{args:?}: {}", stderr(&o));
        assert_eq!(std::fs::read(&cap).unwrap(), before, "{args:?} changed the capture");
    }
    assert_eq!(entries(&d), ["soft.svg", "x.html", "x.pcap"]);
}

#[test]
fn export_into_the_folder_of_its_input_is_refused_and_the_input_kept() {
    let d = tmp("export-input");
    let out = d.join("d");
    let o = run(&["export", s(sample()), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = out.join("packets.parquet");
    let before = std::fs::read(&table).unwrap();
    let o = run(&["export", s(&table), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("which this command reads"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&table).unwrap(), before);
    assert_eq!(entries(&out), ["connections.parquet", "findings.parquet", "packets.parquet"]);
    // `-o -`: a folder cannot be a stream.
    let o = run(&["export", s(sample()), "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give a directory"), "{}", stderr(&o));
}

#[test]
fn a_device_node_is_written_in_place_and_never_unlinked() {
    let d = tmp("device");
    let null = d.join("null");
    if !private_device(&null, 1, 3) {
        return;
    }
    let damaged = damaged_capture(&d);
    // A damaged capture makes --annotate fail: the device stays a device.
    let o = run(&["check", s(&damaged), "--annotate", s(&null)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(is_char_device(&null), "--annotate on a damaged capture replaced the device");
    for args in [
        &["check", s(sample()), "--annotate", s(&null)][..],
        &["check", s(sample()), "--write-expect", s(&null)],
        &["dissect", s(sample()), "-w", s(&null)],
        &["report", s(sample()), "-o", s(&null)],
        &["gen", "sample", "-o", s(&null)],
    ] {
        let o = run(args);
        assert!(o.status.code().is_some_and(|c| c < 2), "{args:?}: {}", stderr(&o));
        assert!(is_char_device(&null), "{args:?} replaced the device");
    }
    // A full device: the error names it, the device stays.
    let full = d.join("full");
    assert!(private_device(&full, 1, 7));
    for args in [
        &["report", s(sample()), "-o", s(&full)][..],
        &["dissect", s(sample()), "-w", s(&full)],
        &["gen", "sample", "-o", s(&full)],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("No space left on device"), "{args:?}: {}", stderr(&o));
        assert!(is_char_device(&full), "{args:?} replaced the device");
    }
    assert_eq!(entries(&d), ["damaged.pcap", "full", "null"]);
}

#[test]
fn a_fifo_is_written_in_place_and_stays_a_fifo() {
    use std::io::Read as _;
    let d = tmp("fifo");
    let fifo = d.join("pipe.pcapng");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut v = Vec::new();
            std::fs::File::open(fifo).unwrap().read_to_end(&mut v).unwrap();
            v
        })
    };
    let o = run(&["check", s(sample()), "--annotate", s(&fifo)]);
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    let got = reader.join().unwrap();
    assert_eq!(&got[..4], b"\x0a\x0d\x0d\x0a", "a pcapng section through the FIFO");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(entries(&d), ["pipe.pcapng"]);
}

/// A full disk while writing: the command fails naming the output, the name holds what it
/// held before (or nothing), and no temporary file is left.
#[test]
fn a_full_disk_leaves_nothing_under_the_name_and_the_old_file_as_it_was() {
    let d = tmp("full-disk");
    let cap = bench_capture(&d, 5_000); // about 1 MiB, past the 64 KiB limit below
    let old = b"the previous output".to_vec();
    let cases: [(&str, Vec<String>); 4] = [
        ("w.pcap", vec!["dissect".into(), s(&cap).into(), "-w".into()]),
        ("r.html", vec!["report".into(), s(&cap).into(), "-o".into()]),
        (
            "g.pcap",
            vec!["gen".into(), "bench".into(), "--frames".into(), "5000".into(), "-o".into()],
        ),
        ("a.pcapng", vec!["check".into(), s(&cap).into(), "--annotate".into()]),
    ];
    for (name, args) in &cases {
        for existed in [false, true] {
            let out = d.join(name);
            if existed {
                std::fs::write(&out, &old).unwrap();
            }
            let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
            a.push(s(&out));
            let o = run_with_size_limit(64, &a);
            assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
            assert!(stderr(&o).contains(name), "{a:?}: the error names the output: {}", stderr(&o));
            if existed {
                assert_eq!(std::fs::read(&out).unwrap(), old, "{a:?}: the old file changed");
                std::fs::remove_file(&out).unwrap();
            } else {
                assert!(!out.exists(), "{a:?}: a partial file under the name");
            }
            assert_eq!(entries(&d), ["big.pcap"], "{a:?}: a stray file");
        }
    }
}

/// A failed export keeps the previous export's tables and leaves no stub.
#[test]
fn a_failed_export_keeps_the_previous_tables() {
    let d = tmp("export-fail");
    let cap = bench_capture(&d, 20_000);
    let out = d.join("out");
    let o = run(&["export", s(sample()), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let names = entries(&out);
    let before: Vec<Vec<u8>> = names.iter().map(|n| std::fs::read(out.join(n)).unwrap()).collect();
    // One thread, and the rows built on the reader thread (export's default on two cores).
    for threads in ["1", "2"] {
        let args = ["export", "--threads", threads, s(&cap), "-o", s(&out)];
        let o = run_with_size_limit(64, &args);
        assert_eq!(o.status.code(), Some(2), "--threads {threads}: {}", stderr(&o));
        assert!(stderr(&o).contains("packets.parquet"), "{}", stderr(&o));
        assert_eq!(entries(&out), names, "a stub or temporary file left");
        for (n, b) in names.iter().zip(&before) {
            assert_eq!(&std::fs::read(out.join(n)).unwrap(), b, "{n} changed");
        }
    }
    // Into a new folder: no empty folder is left either.
    let fresh = d.join("fresh");
    let o = run_with_size_limit(64, &["export", s(&cap), "-o", s(&fresh)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!fresh.exists(), "{:?}", entries(&d));
}

/// `-o -` is standard output for every single-stream output, each the same bytes as the
/// file written under a name.
#[test]
fn dash_is_standard_output_for_every_single_stream() {
    let d = tmp("dash");
    let cap = s(sample()).to_string();
    let cases: [(&[&str], &str); 5] = [
        (&["graph", &cap, "--conn", "10.0.0.1", "-o"], "g.svg"),
        (&["report", &cap, "-o"], "r.html"),
        (&["gen", "sample", "-o"], "s.pcap"),
        (&["check", &cap, "--annotate"], "a.pcapng"),
        (&["check", &cap, "--write-expect"], "e.json"),
    ];
    for (args, name) in cases {
        let file = d.join(name);
        let mut a = args.to_vec();
        a.push(s(&file));
        let o = run(&a);
        assert!(o.status.code().is_some_and(|c| c < 2), "{a:?}: {}", stderr(&o));
        let mut a = args.to_vec();
        a.push("-");
        let o = run(&a);
        assert!(o.status.code().is_some_and(|c| c < 2), "{a:?}: {}", stderr(&o));
        let want = std::fs::read(&file).unwrap();
        if name == "r.html" {
            // The page names the time it was made: compare its size and start.
            assert!(o.stdout.starts_with(b"<!DOCTYPE html>"), "{a:?}");
            assert!(o.stdout.len().abs_diff(want.len()) < 64, "{a:?}");
        } else {
            assert_eq!(o.stdout, want, "{a:?}: stdout differs from the file");
        }
    }
}

/// A closed stdout (`| head -c 100`) ends quietly, exit status 0, nothing on stderr.
#[test]
fn a_closed_stdout_ends_quietly() {
    let cap = s(sample()).to_string();
    for args in [
        &["dissect", &cap, "-w", "-"][..],
        &["graph", &cap, "--conn", "10.0.0.1", "-o", "-"],
        &["gen", "sample", "-o", "/dev/stdout"],
        &["gen", "bench", "--frames", "200000", "-o", "-"],
        &["report", &cap, "-o", "-"],
        &["check", &cap, "--annotate", "-"],
    ] {
        let mut child = Command::new(bin())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        // Read 100 bytes, then close the pipe (as `head -c 100`).
        let mut out = child.stdout.take().unwrap();
        let mut head = [0u8; 100];
        std::io::Read::read_exact(&mut out, &mut head).unwrap();
        drop(out);
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(o.status.code().is_some_and(|c| c < 2), "{args:?}: {:?} {err}", o.status);
        assert!(!err.contains("error") && !err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A full or closed stderr: the "wrote ..." lines of report and export never panic.
#[test]
fn a_full_or_closed_stderr_never_panics_on_the_wrote_line() {
    let d = tmp("stderr");
    let full = d.join("full");
    let err_sink =
        if private_device(&full, 1, 7) { full.clone() } else { PathBuf::from("/dev/full") };
    for args in [
        vec!["report".to_string(), s(sample()).into(), "-o".into(), s(&d.join("r.html")).into()],
        vec!["export".into(), s(sample()).into(), "-o".into(), s(&d.join("e")).into()],
        vec![
            "check".into(),
            s(sample()).into(),
            "--annotate".into(),
            s(&d.join("a.pcapng")).into(),
        ],
    ] {
        let stderr_file = std::fs::OpenOptions::new().write(true).open(&err_sink).unwrap();
        let o = Command::new(bin())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr_file))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?} with stderr full: {:?}", o.status);
        // Closed: a pipe whose reader is gone.
        let mut child = Command::new(bin())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?} with stderr closed: {status:?}");
    }
}
