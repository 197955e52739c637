//! A capture file through the checker, without the command line: roce-capture reads the
//! frames, roce-parser parses each from where its link type says, the checker judges them.
//!
//! `cargo run -p roce-conformance --example check_capture -- pcaps/sample.pcap`

use std::path::Path;

use roce_capture::{CaptureError, L2Start, Warnings};
use roce_conformance::{Checker, FrameInfo, Options, Report};
use roce_parser::{parse_ethernet, parse_ethertype_payload, Config};

/// The checker's report on the capture at `path`: every finding, connections by their final
/// names, one report per connection incarnation.
pub fn check(path: &Path) -> Result<Report, CaptureError> {
    let mut capture = roce_capture::open(path)?;
    let (cfg, mut checker) = (Config::default(), Checker::new(Options::default()));
    let mut warnings = Warnings::default();
    while let Some(frame) = capture.next_frame() {
        // Damage is named (file, frame, byte offset); after a fatal one the loop ends. The
        // first 20 warnings of a kind are printed, the rest counted.
        let frame = match frame {
            Ok(frame) => frame,
            Err(damage) => {
                if let Some(shown) = warnings.add(damage) {
                    eprintln!("warning: {shown}");
                }
                continue;
            }
        };
        let info = FrameInfo {
            number: frame.number,
            ts_ns: frame.ts_ns,
            caplen: frame.caplen,
            len: frame.len,
        };
        let packet = match frame.l2() {
            L2Start::Ethernet(bytes) => parse_ethernet(bytes, &cfg).ok(),
            L2Start::Network { ethertype, data } => {
                Some(parse_ethertype_payload(ethertype, data, &cfg))
            }
            L2Start::Unsupported(_) => None,
        };
        match packet {
            Some(packet) => checker.feed(&info, &packet),
            None => checker.feed_undecoded(&info),
        }
    }
    warnings.omitted().for_each(|omitted| eprintln!("warning: {omitted}"));
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
