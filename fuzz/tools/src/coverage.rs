//! The coverage figure: each target's corpus run through the target's own code, counting the
//! corpus files that reach each opcode (every listed extended header parsed), each extended
//! header and each CM message.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::fs;
use std::path::Path;

use roce_fuzz_common::reach::CM_NAMES;
use roce_fuzz_common::{Reach, TARGETS};
use roce_parser::{ExtHeader, OPCODES};

/// Targets fed builder seeds for every opcode: each must reach every opcode of the table.
pub const EVERY_OPCODE_TARGETS: [&str; 7] =
    ["ethernet", "udp_payload", "rocev1", "roundtrip", "icrc", "conformance", "ffi"];

/// One target's corpus and what it reached.
#[derive(Clone, Debug)]
pub struct TargetCoverage {
    pub name: &'static str,
    pub files: usize,
    pub bytes: usize,
    /// Per counter: the number of corpus files that reached it.
    pub reach: Reach,
}

impl TargetCoverage {
    /// Table opcodes reached with every listed header.
    pub fn opcodes(&self) -> usize {
        OPCODES.iter().filter(|i| self.reach.complete[usize::from(i.opcode)] > 0).count()
    }

    /// Opcodes outside the table (reserved, vendor) whose BTH was parsed.
    pub fn undefined_opcodes(&self) -> usize {
        (0..=255u8)
            .filter(|&op| roce_parser::lookup_opcode(op).is_none())
            .filter(|&op| self.reach.bth[usize::from(op)] > 0)
            .count()
    }

    pub fn headers(&self) -> Vec<ExtHeader> {
        ExtHeader::ALL
            .into_iter()
            .filter(|&h| self.reach.headers[roce_fuzz_common::reach::header_index(h)] > 0)
            .collect()
    }

    pub fn cm(&self) -> Vec<&'static str> {
        CM_NAMES.iter().zip(self.reach.cm).filter(|(_, n)| *n > 0).map(|(s, _)| *s).collect()
    }
}

/// Runs every file of `corpus/<target>/` through its target.
pub fn measure(corpus: &Path) -> Vec<TargetCoverage> {
    TARGETS
        .iter()
        .map(|&(name, run)| {
            let mut total = Reach::default();
            let mut files = 0;
            let mut bytes = 0;
            let mut paths: Vec<_> = fs::read_dir(corpus.join(name))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect();
            paths.sort();
            for p in paths {
                let data = fs::read(&p).expect("read corpus file");
                let mut one = Reach::default();
                run(&data, &mut one);
                total.add_presence(&one);
                files += 1;
                bytes += data.len();
            }
            TargetCoverage { name, files, bytes, reach: total }
        })
        .collect()
}

/// What the corpus fails to reach: opcodes missing from a target that must reach them all,
/// and opcodes no target reaches.
pub fn missing(cov: &[TargetCoverage]) -> Vec<String> {
    let mut out = Vec::new();
    for t in cov {
        if EVERY_OPCODE_TARGETS.contains(&t.name) {
            for i in OPCODES {
                if t.reach.complete[usize::from(i.opcode)] == 0 {
                    out.push(format!("{}: {} (0x{:02x})", t.name, i.name, i.opcode));
                }
            }
        }
    }
    for i in OPCODES {
        if cov.iter().all(|t| t.reach.complete[usize::from(i.opcode)] == 0) {
            out.push(format!("no target: {} (0x{:02x})", i.name, i.opcode));
        }
    }
    out
}

/// The figure as Markdown: a summary per target, then one row per opcode.
pub fn markdown(cov: &[TargetCoverage]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| target | files | bytes | table opcodes reached (of {}) | reserved/vendor opcodes | extended headers (of 10) | CM messages | capture frames |",
        OPCODES.len()
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---|---|---:|");
    for t in cov {
        let hs = t.headers();
        let hs_text = if hs.len() == ExtHeader::ALL.len() {
            "all 10".to_string()
        } else if hs.is_empty() {
            "-".to_string()
        } else {
            hs.iter().map(|h| h.name()).collect::<Vec<_>>().join(", ")
        };
        let cm = t.cm();
        let cm_text = if cm.is_empty() {
            "-".to_string()
        } else if cm.len() == CM_NAMES.len() {
            format!("all {}", CM_NAMES.len())
        } else {
            cm.join(", ")
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            t.name,
            t.files,
            t.bytes,
            t.opcodes(),
            t.undefined_opcodes(),
            hs_text,
            cm_text,
            t.reach.frames
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Corpus files reaching each opcode with every extended header it lists parsed:"
    );
    let _ = writeln!(s);
    let mut head = String::from("| opcode | name |");
    let mut rule = String::from("|---|---|");
    for t in cov {
        let _ = write!(head, " {} |", t.name);
        rule.push_str("---:|");
    }
    let _ = writeln!(s, "{head}");
    let _ = writeln!(s, "{rule}");
    for i in OPCODES {
        let _ = write!(s, "| 0x{:02x} | {} |", i.opcode, i.name);
        for t in cov {
            let _ = write!(s, " {} |", t.reach.complete[usize::from(i.opcode)]);
        }
        let _ = writeln!(s);
    }
    let mut hdr = String::from("| extended header |");
    let mut rule = String::from("|---|");
    for t in cov {
        let _ = write!(hdr, " {} |", t.name);
        rule.push_str("---:|");
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "Corpus files reaching each extended header:");
    let _ = writeln!(s);
    let _ = writeln!(s, "{hdr}");
    let _ = writeln!(s, "{rule}");
    for h in ExtHeader::ALL {
        let _ = write!(s, "| {} |", h.name());
        for t in cov {
            let _ = write!(s, " {} |", t.reach.headers[roce_fuzz_common::reach::header_index(h)]);
        }
        let _ = writeln!(s);
    }
    s
}

/// Sizes per target, for the summary.
pub fn sizes(cov: &[TargetCoverage]) -> BTreeMap<&'static str, (usize, usize)> {
    cov.iter().map(|t| (t.name, (t.files, t.bytes))).collect()
}

/// The line before the figure in fuzz/README.md.
pub const FIGURE_START: &str =
    "<!-- coverage figure: generated by `cargo run -p roce-fuzz-tools --bin coverage -- --readme` -->";
/// The line after it.
pub const FIGURE_END: &str = "<!-- end of coverage figure -->";

/// `readme` with the text between the figure markers replaced by `figure`.
pub fn replace_figure(readme: &str, figure: &str) -> Option<String> {
    let start = readme.find(FIGURE_START)? + FIGURE_START.len();
    let end = readme[start..].find(FIGURE_END)? + start;
    Some(format!("{}\n{}{}", &readme[..start], figure, &readme[end..]))
}
