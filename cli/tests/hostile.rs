//! The binary against a hostile user: output that cannot be written (a full device, a closed
//! pipe), a stderr that cannot be written, values that do not fit or make no sense. Every
//! case ends with a clear message and exit status 2 (or quietly, for a closed pipe), never a
//! panic (exit 101) and never a silently changed value.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use roce_inspect::internal::gen::conn::{ud_send, Endpoint};
use roce_inspect::internal::gen::Trace;
use roce_parser::{CmMessage, MadHeaderRepr, PortSpace, ReqRepr, GSI_QKEY, MAD_LEN};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sample() -> String {
    root().join("pcaps/sample.pcap").to_str().unwrap().to_string()
}

fn conformance(name: &str) -> String {
    root().join("pcaps/conformance").join(name).to_str().unwrap().to_string()
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("roce-hostile-{}-{name}", std::process::id()))
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roce-inspect"))
}

fn dev_full() -> File {
    OpenOptions::new().write(true).open("/dev/full").expect("/dev/full")
}

/// A pipe whose reading end is already closed: the first write fails with EPIPE.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

fn run_with(args: &[String], stdout: Stdio, stderr: Stdio) -> Output {
    bin().args(args).stdin(Stdio::null()).stdout(stdout).stderr(stderr).output().unwrap()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).stdin(Stdio::null()).output().unwrap()
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every command that writes to stdout, with the exit status it has when all goes well.
fn commands() -> Vec<(Vec<String>, i32)> {
    let expect_out = tmp("written.expect.json");
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        (s(&["rules"]), 0),
        (s(&["--help"]), 0),
        (s(&["--version"]), 0),
        (s(&["dissect", "--help"]), 0),
        (s(&["dissect", &sample()]), 0),
        (s(&["dissect", "-V", &sample()]), 0),
        (s(&["dissect", "--format", "json", &sample()]), 0),
        (s(&["dissect", "--format", "jsonl", &sample()]), 0),
        (s(&["stats", &sample()]), 0),
        (s(&["stats", "--format", "json", &sample()]), 0),
        (s(&["check", "--assume-complete", &conformance("req-psn-skip.pcap")]), 1),
        (s(&["check", "--format", "json", &sample()]), 0),
        (
            s(&[
                "check",
                &conformance("clean-sample.pcap"),
                "--expect",
                &conformance("clean-sample.expect.json"),
            ]),
            0,
        ),
        (
            s(&[
                "check",
                &conformance("req-psn-skip.pcap"),
                "--expect",
                &conformance("clean-rc-mix.expect.json"),
            ]),
            1,
        ),
        (s(&["check", &sample(), "--write-expect", expect_out.to_str().unwrap()]), 0),
        (s(&["completions", "bash"]), 0),
        (s(&["man"]), 0),
    ]
}

#[test]
fn a_full_stdout_is_an_error_with_a_message_never_a_panic() {
    for (args, _) in commands() {
        let out = run_with(&args, Stdio::from(dev_full()), Stdio::piped());
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?} > /dev/full: {err}");
        assert!(
            err.contains("roce-inspect: error: writing to stdout: No space left on device"),
            "{args:?} > /dev/full: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_file(tmp("written.expect.json"));
}

#[test]
fn a_closed_pipe_ends_quietly_with_the_commands_status() {
    for (args, code) in commands() {
        let out = run_with(&args, closed_pipe(), Stdio::piped());
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?} | (closed): {err}");
        assert_eq!(err, "", "{args:?} | (closed): nothing to say on stderr");
    }
    let _ = std::fs::remove_file(tmp("written.expect.json"));
}

#[test]
fn a_full_or_closed_stderr_is_not_a_panic() {
    // (arguments, status): an unreadable input, damage after some frames (a warning), a
    // command-line error, an unknown rule.
    let damaged = root().join("testdata/capture/record_past_end.pcap");
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["stats", "/nonexistent"], 2),
        (vec!["dissect", damaged.to_str().unwrap()], 0),
        (vec!["check", damaged.to_str().unwrap()], 0),
        (vec!["dissect", "--no-such-option"], 2),
        (vec!["check", "--disable", "NO-SUCH-RULE", "x"], 2),
    ];
    for (args, code) in cases {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        for (what, stderr) in [("full", Stdio::from(dev_full())), ("closed", closed_pipe())] {
            let out = run_with(&args, Stdio::null(), stderr);
            assert_eq!(out.status.code(), Some(code), "{args:?} with a {what} stderr");
        }
    }
}

#[test]
fn microseconds_that_overflow_nanoseconds_are_refused() {
    let capture = conformance("clean-sample.pcap");
    let max = (u64::MAX / 1000).to_string();
    let over = (u64::MAX / 1000 + 1).to_string();
    for opt in ["--retx-timeout", "--reorder-window"] {
        let out = run(&["check", opt, &over, &capture]);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{opt} {over}: {err}");
        assert!(
            err.contains(&format!("{over} microseconds do not fit"))
                && err.contains(&format!("at most {max} microseconds")),
            "{opt} {over}: {err}"
        );
        // The largest value that fits is taken.
        let out = run(&["check", opt, &max, &capture]);
        assert_eq!(out.status.code(), Some(0), "{opt} {max}: {}", stderr_of(&out));
    }
}

#[test]
fn values_that_make_no_sense_are_refused_with_a_reason() {
    let sample = sample();
    let bench = tmp("never-written.pcap");
    let bench = bench.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["dissect", "--frames", "5-2", &sample],
            "'5-2' is an empty range: frame 5 comes after frame 2",
        ),
        (&["dissect", "--frames", "0", &sample], "frames are numbered from 1"),
        (&["dissect", "--frames", "0-3", &sample], "frames are numbered from 1"),
        (&["dissect", "--qp", "0x1000000", &sample], "QPN 0x1000000 does not fit in 24 bits"),
        (&["dissect", "--qp", "16777216", &sample], "QPN 16777216 does not fit in 24 bits"),
        (&["check", "--max-flows", "0", &sample], "'--max-flows <MAX_FLOWS>': must be at least 1"),
        (
            &["gen", "bench", "-o", bench, "--connections", "0"],
            "'--connections <CONNECTIONS>': must be at least 1",
        ),
    ];
    for (args, want) in cases {
        let out = run(args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(!Path::new(bench).exists(), "gen wrote a capture for a refused command line");
    // The edges that are fine.
    for args in [
        &["dissect", "--frames", "2-2", &sample][..],
        &["dissect", "--frames", "1", &sample],
        &["dissect", "--frames", "39-", &sample],
        &["dissect", "--qp", "0xffffff", &sample],
        &["check", "--max-flows", "1", &sample],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr_of(&out));
    }
    let one = run(&["dissect", "--frames", "2-2", &sample]);
    assert_eq!(String::from_utf8_lossy(&one.stdout).lines().count(), 1);
}

#[test]
fn dissect_json_writes_nothing_when_the_input_cannot_be_read() {
    for format in ["json", "jsonl", "text"] {
        for input in ["/nonexistent.pcap", "testdata/capture/bad_magic.pcap"] {
            let path = root().join(input);
            let out = run(&["dissect", "--format", format, path.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{format} {input}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{format} {input}");
        }
    }
    // A capture without frames (a pcap header alone) is still an empty array.
    let empty = tmp("no-frames.pcap");
    let e = empty.to_str().unwrap();
    assert_eq!(run(&["gen", "bench", "-o", e, "--frames", "0"]).status.code(), Some(0));
    let out = run(&["dissect", "--format", "json", e]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v, serde_json::json!([]));
    let _ = std::fs::remove_file(&empty);
}

#[test]
fn gen_write_errors_say_writing_and_name_the_file() {
    for args in [
        &["gen", "sample", "-o", "/dev/full"][..],
        &["gen", "bench", "-o", "/dev/full", "--frames", "1000"],
    ] {
        let out = run(args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("roce-inspect: error: -o /dev/full: writing: No space left on device"),
            "{args:?}: {err}"
        );
        use std::os::unix::fs::FileTypeExt as _;
        let dev = std::fs::symlink_metadata("/dev/full").unwrap();
        assert!(dev.file_type().is_char_device(), "{args:?} replaced /dev/full");
        assert!(!err.contains("reading"), "{args:?}: {err}");
    }
    let out = run(&["gen", "sample", "-o", "/nonexistent/dir/x.pcap"]);
    assert!(stderr_of(&out).contains("/nonexistent/dir/x.pcap: cannot create"));
}

#[test]
fn gen_bench_streams_the_same_capture_cut_at_any_length() {
    let long = tmp("bench-1000.pcap");
    let short = tmp("bench-337.pcap");
    for (path, frames) in [(&long, "1000"), (&short, "337")] {
        let out = run(&["gen", "bench", "-o", path.to_str().unwrap(), "--frames", frames]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    }
    let (long_bytes, short_bytes) = (std::fs::read(&long).unwrap(), std::fs::read(&short).unwrap());
    // The first 337 frames of the long capture are the short capture, byte for byte.
    assert!(short_bytes.len() > 337 * 60);
    assert_eq!(&long_bytes[..short_bytes.len()], &short_bytes[..]);
    let stats = run(&["stats", "--format", "json", short.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(v["frames"], 337);
    assert_eq!(v["icrc"]["ok"], 337);
    let _ = std::fs::remove_file(&long);
    let _ = std::fs::remove_file(&short);
}

/// A CM REQ whose path MTU field holds `code`, alone in a capture.
fn req_with_path_mtu(code: u8) -> PathBuf {
    let a = Endpoint::new("10.9.0.1".parse().unwrap(), 1);
    let b = Endpoint::new("10.9.0.2".parse().unwrap(), 1);
    let pd = roce_parser::RdmaCmIpHeader::new("10.9.0.1:40000".parse().unwrap(), b.ip).to_bytes();
    let mut req = ReqRepr::rdma_cm(
        PortSpace::Tcp,
        "10.9.0.1:40000".parse().unwrap(),
        "10.9.0.2:18515".parse().unwrap(),
        &pd,
    );
    req.local_qpn = 0x123;
    req.path_mtu = code;
    let msg = CmMessage::Req(req);
    let mut mad = [0u8; MAD_LEN];
    msg.emit_mad_with_header(&MadHeaderRepr::cm(msg.attribute(), 7), &mut mad).unwrap();
    let mut t = Trace::new();
    ud_send(&mut t, &a, &b, GSI_QKEY, 1, &mad, None);
    let path = tmp(&format!("req-pmtu-{code}.pcap"));
    t.write_pcap(File::create(&path).unwrap()).unwrap();
    path
}

#[test]
fn a_reserved_path_mtu_code_is_named_not_printed_as_0_bytes() {
    for (code, text, bytes) in [
        (15u8, "path MTU code 15 (reserved)", serde_json::Value::Null),
        (3, "path MTU 1024 bytes", 1024.into()),
    ] {
        let path = req_with_path_mtu(code);
        let p = path.to_str().unwrap();
        let tree = run(&["dissect", "-V", p]);
        let tree = String::from_utf8_lossy(&tree.stdout);
        assert!(tree.contains(text), "{tree}");
        assert!(!tree.contains("path MTU 0 bytes"), "{tree}");
        let json = run(&["dissect", "--format", "jsonl", p]);
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        let cm = &v["roce"]["cm"];
        assert_eq!(cm["attribute"], "REQ", "{v}");
        assert_eq!((&cm["pmtu"], &cm["pmtu_code"]), (&bytes, &code.into()), "{v}");
        let stats = run(&["stats", p]);
        let want = if code == 15 { "PMTU code 15 (reserved)" } else { "PMTU 1024" };
        assert!(String::from_utf8_lossy(&stats.stdout).contains(want));
        let _ = std::fs::remove_file(&path);
    }
}
