//! Live output: a capture written slowly into a pipe shows its first finding (`check -`) and
//! its first frame (`dissect -` into a pipe) while the writer still holds the pipe open,
//! before the rest of the capture exists. The assertions are on ordering, not on time: the
//! line is read before the next frame is written. (The 60 s receive limit only keeps a
//! broken build from hanging the test run.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;
use common::sends::capture;

/// Starts `roce-inspect ARGS -` with both ends piped; lines of its stdout arrive on the
/// channel as they are written.
fn spawn(args: &[&str]) -> (std::process::Child, std::process::ChildStdin, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    (child, stdin, rx)
}

fn next_line(rx: &mpsc::Receiver<String>) -> String {
    rx.recv_timeout(Duration::from_secs(60)).expect("no line while the input stays open")
}

#[test]
fn check_prints_the_first_finding_before_the_input_ends() {
    let (header, records) = capture();
    let (mut child, mut stdin, rx) = spawn(&["check"]);
    stdin.write_all(&header).unwrap();
    for r in &records[..5] {
        stdin.write_all(r).unwrap();
    }
    stdin.flush().unwrap();
    let written = Instant::now();
    // Frames 6..20 are not written yet: the finding on frame 5 comes first.
    let line = next_line(&rx);
    let latency = written.elapsed();
    assert!(line.contains("PKT-ICRC") && line.contains("frames 5 "), "{line}");
    assert!(child.try_wait().unwrap().is_none(), "check ended before its input did");
    let on = next_line(&rx);
    assert!(on.contains("on 10.9.0.1 QP 0x000111"), "{on}");
    for r in &records[5..] {
        stdin.write_all(r).unwrap();
    }
    drop(stdin);
    let rest: Vec<String> = rx.iter().collect();
    assert!(child.wait().unwrap().code() == Some(1));
    let summary = rest.iter().position(|l| l.starts_with("-: 20 frames, 20 RoCE; 1 error(s)"));
    assert!(summary.is_some(), "{rest:?}");
    // The finding is not listed a second time in the report at the end.
    assert!(!rest.iter().any(|l| l.contains("error   PKT-ICRC")), "{rest:?}");
    eprintln!("live check: first finding read {latency:?} after its frame was written");
}

#[test]
fn dissect_into_a_pipe_writes_each_frame_as_it_arrives() {
    let (header, records) = capture();
    let (mut child, mut stdin, rx) = spawn(&["dissect"]);
    stdin.write_all(&header).unwrap();
    for (i, r) in records.iter().enumerate() {
        stdin.write_all(r).unwrap();
        stdin.flush().unwrap();
        // Each frame's line is read before the next frame is written.
        let line = next_line(&rx);
        let n: usize = line.split_whitespace().next().unwrap().parse().unwrap();
        assert_eq!(n, i + 1, "{line}");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
