//! `check --follow FILE` on a capture that grows while it is read: the first finding is
//! printed while the writer has not written the rest, a record written only in part is waited
//! for, and SIGINT ends it with the report (the half-written last record then reported as cut
//! short). Assertions are on order, not on time: each step waits for the line it needs (the
//! 60 s receive limit only keeps a broken build from hanging the test run).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod common;
use common::sends::capture;

fn lines(r: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn next(rx: &mpsc::Receiver<String>) -> String {
    rx.recv_timeout(Duration::from_secs(60)).expect("no line while the file grows")
}

fn path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("roce-inspect-follow-{tag}-{}.pcap", std::process::id()))
}

#[test]
fn follow_prints_findings_as_the_file_grows_and_the_report_on_sigint() {
    let (header, records) = capture();
    let file = path("grow");
    let mut w = std::fs::File::create(&file).unwrap();
    // The header only: check waits for frames instead of ending on an empty capture.
    w.write_all(&header).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["check", "--follow"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines(child.stdout.take().unwrap());
    let mut stderr = child.stderr.take().unwrap();
    for r in &records[..5] {
        w.write_all(r).unwrap();
    }
    w.flush().unwrap();
    // Frames 6..20 are not written: the finding on frame 5 is printed first.
    let line = next(&out);
    assert!(line.contains("PKT-ICRC") && line.contains("frames 5 "), "{line}");
    assert!(child.try_wait().unwrap().is_none(), "check ended at the end of the file");
    // The rest, and half of one more record: waited for, not reported while it may grow.
    for r in &records[5..] {
        w.write_all(r).unwrap();
    }
    w.write_all(&records[0][..30]).unwrap();
    w.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "check ended before SIGINT");
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let rest: Vec<String> = out.iter().collect();
    let status = child.wait().unwrap();
    let mut err = String::new();
    stderr.read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(1), "an error finding: exit 1; stdout {rest:?}, stderr {err}");
    let name = file.display().to_string();
    let summary =
        |l: &String| l.starts_with(&format!("{name}: ")) && l.contains(" 20 RoCE; 1 error(s)");
    assert!(rest.iter().any(summary), "{rest:?}");
    // The half-written record, reported once the following stopped.
    assert!(err.contains("warning") && err.contains(&name), "{err}");
    let _ = std::fs::remove_file(&file);
}

#[test]
fn follow_refuses_stdin_and_reading_twice() {
    let bin = env!("CARGO_BIN_EXE_roce-inspect");
    let o = Command::new(bin).args(["check", "--follow", "-"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--follow reads a file as it grows"));
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
    let out = path("annotate");
    let o = Command::new(bin)
        .args(["check", "--follow", sample, "--annotate"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--annotate reads the capture a second"));
    assert!(!out.exists());
}

/// Follows a file of the first 5 records, waits for the finding on frame 5, then `change`s
/// the file: check must end by itself (no SIGINT), with the report of those 5 frames and a
/// warning naming the file that holds `says`.
fn follow_then(tag: &str, change: impl FnOnce(&std::path::Path, &[u8], &[Vec<u8>]), says: &str) {
    let (header, records) = capture();
    let file = path(tag);
    let mut w = std::fs::File::create(&file).unwrap();
    w.write_all(&header).unwrap();
    for r in &records[..5] {
        w.write_all(r).unwrap();
    }
    w.flush().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(["check", "--follow"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines(child.stdout.take().unwrap());
    let err = lines(child.stderr.take().unwrap());
    let line = next(&out);
    assert!(line.contains("PKT-ICRC") && line.contains("frames 5 "), "{line}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "check ended at the end of the file");
    change(&file, &header, &records);
    // Ends by itself: a run that waits on is killed after 60 s, and fails.
    let name = file.display().to_string();
    let Ok(warning) = err.recv_timeout(Duration::from_secs(60)) else {
        let _ = child.kill();
        panic!("no warning 60 s after the file was changed: still following");
    };
    assert!(
        warning.starts_with(&format!("roce-inspect: warning: {name}: {says}"))
            && warning.contains("following stops here"),
        "{warning}"
    );
    let rest: Vec<String> = out.iter().collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "an error finding: exit 1; stdout {rest:?}");
    let summary =
        |l: &String| l.starts_with(&format!("{name}: ")) && l.contains(" 5 RoCE; 1 error(s)");
    assert!(rest.iter().any(summary), "not the report of the 5 frames read: {rest:?}");
    let _ = std::fs::remove_file(&file);
}

#[test]
fn follow_stops_with_a_warning_when_the_file_is_truncated() {
    follow_then(
        "truncated",
        |file, _, _| {
            std::fs::OpenOptions::new().write(true).open(file).unwrap().set_len(0).unwrap();
        },
        "truncated to 0 bytes after ",
    );
}

#[test]
fn follow_stops_with_a_warning_when_the_file_is_replaced() {
    // A rotation: a new capture (all 20 records) renamed over the followed one. Its frames
    // are not read: the report is of the 5 frames of the file opened.
    follow_then(
        "replaced",
        |file, header, records| {
            let new = file.with_extension("new");
            let mut bytes = header.to_vec();
            for r in records {
                bytes.extend_from_slice(r);
            }
            std::fs::write(&new, bytes).unwrap();
            std::fs::rename(&new, file).unwrap();
        },
        "replaced by another file (rotated?)",
    );
}
