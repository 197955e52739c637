//! A capture file through the checker, without the command line: the pass reads each frame
//! once (roce-capture), decodes it once (roce-parser, from where its link type says), and the
//! checker judges it.
//!
//! `cargo run -p roce-analysis --example check_capture -- pcaps/sample.pcap`

use std::path::Path;

use roce_analysis::Pass;
use roce_capture::CaptureError;
use roce_conformance::{Checker, FrameInfo, Options, Report};
use roce_parser::Config;

/// The checker's report on the capture at `path`: every finding, connections by their final
/// names, one report per connection incarnation.
pub fn check(path: &Path) -> Result<Report, CaptureError> {
    let capture = roce_capture::open(path)?;
    let (cfg, mut checker) = (Config::default(), Checker::new(Options::default()));
    // Damage is named (file, frame, byte offset); the first 20 warnings of a kind are
    // printed, the rest counted.
    let mut warn = |w: &dyn std::fmt::Display| eprintln!("warning: {w}");
    Pass::new(&cfg).on_warning(&mut warn).run(capture, |d| {
        let f = &d.frame;
        let info = FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
        match &d.packet {
            Ok(packet) => checker.feed(&info, packet),
            Err(_) => checker.feed_undecoded(&info),
        }
    })?;
    Ok(checker.finish())
}

#[allow(dead_code)] // tests/example_check_capture.rs includes this file for `check`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).ok_or("usage: check_capture CAPTURE")?;
    let report = check(Path::new(&path))?;
    for f in &report.findings {
        println!("{} {} frames {:?}: {}", f.severity.as_str(), f.rule, f.frames, f.message);
    }
    println!("{} frames, {} errors, {} warnings", report.frames, report.errors, report.warnings);
    Ok(())
}
