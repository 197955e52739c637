//! Writes the seed corpus, or tops a minimised one up.
//!
//! `seeds` writes to `corpus/<target>/` every frame of the real captures
//! (`ROCE_INSPECT_REAL_CAPTURES`) and `pcaps/` (cut to what each target reads) and the builder's frames for every opcode,
//! CM attribute, capture format and link type; files already there stay.
//!
//! `seeds --only TARGET` writes the seeds of one target.
//!
//! `seeds --top-up` (after `cargo fuzz cmin`, which keeps one input per code path and so drops
//! opcodes that share a path with another: the opcode table is data, not code) adds back the
//! builder seeds of every opcode and CM message a target's corpus no longer reaches.
use roce_fuzz_tools::{capture_dirs, corpus_dir, coverage, seeds};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let top_up = args.iter().any(|a| a == "--top-up");
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1).cloned());
    let corpus = corpus_dir();
    let mut s = seeds::Seeds::default();
    if top_up {
        let cov = coverage::measure(&corpus);
        for t in &cov {
            if t.name == "conformance" {
                if t.opcodes() < roce_parser::OPCODES.len() {
                    for (label, bytes) in seeds::every_opcode_sequences() {
                        s.add("conformance", &label, &bytes);
                    }
                }
            } else if coverage::EVERY_OPCODE_TARGETS.contains(&t.name) {
                for info in roce_parser::OPCODES {
                    if t.reach.complete[usize::from(info.opcode)] > 0 {
                        continue;
                    }
                    for (target, bytes) in seeds::opcode_seeds(info) {
                        // One seed per missing opcode: the first the target has.
                        if target == t.name {
                            s.add(target, &seeds::opcode_label(info), &bytes);
                            break;
                        }
                    }
                }
            }
            if t.name == "cm_mad" {
                for (i, attr) in seeds::CM_ATTRIBUTES.iter().enumerate() {
                    let idx = cm_index_of(*attr);
                    if t.reach.cm[idx] == 0 {
                        let _ = i;
                        s.add(
                            "cm_mad",
                            &format!("builder-cm-{attr:04x}"),
                            &seeds::cm_mad(*attr, 0),
                        );
                    }
                }
            }
        }
    } else {
        let dirs = capture_dirs();
        for d in &dirs {
            eprintln!("captures from {}", d.display());
        }
        let frames = seeds::from_captures(&mut s, &dirs);
        eprintln!("{frames} frames read");
        seeds::from_builder(&mut s);
        seeds::expect_files(&mut s);
    }
    if let Some(only) = &only {
        s.by_target.retain(|t, _| t == only);
    }
    for (target, (files, bytes)) in s.write(&corpus) {
        println!("{target}: {files} seeds added ({bytes} bytes)");
    }
}

/// The index in `reach::CM_NAMES` of the message a CM attribute ID decodes to.
fn cm_index_of(attr: u16) -> usize {
    match attr {
        0x0010 => 0,
        0x0013 => 1,
        0x0014 => 2,
        0x0012 => 3,
        0x0011 => 4,
        0x0015 => 5,
        0x0016 => 6,
        0x0017 => 7,
        0x0018 => 8,
        0x0019 => 9,
        0x001A => 10,
        0x0001 => 11,
        _ => 12,
    }
}
