//! The expect file of `check --expect FILE` and `check --write-expect FILE` (and the
//! conformance suite's `.expect.json`, docs/json.md): its types, the reader that parses,
//! validates and normalises one, the writer's `to_expect`, the diff against a report, and
//! how its options and the checker's meet. `check` runs it (crate::check); `check::` and
//! `gen::suite::` re-export what they always named.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use roce_conformance::{Finding, Options, Report};
use serde::{Deserialize, Serialize};

use crate::check::frames;
use crate::input::InputError;
use crate::output;

/// A finding a scenario must produce.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub rule: String,
    pub frames: Vec<u64>,
}

/// How to check a capture, as an expect file records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectOptions {
    #[serde(default)]
    pub assume_complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmtu: Option<u32>,
    /// `--qp-timeout`: the local ACK timeout exponent the QPs were configured with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qp_timeout: Option<u8>,
    /// `--cnp-min-interval`: the NP's configured CNP pacing, `DURATION[,qp|pair|dest]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnp_min_interval: Option<String>,
    /// `--rnr-timer`: the responder QPs' configured minimum RNR NAK timer code (0..31).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rnr_timer: Option<u8>,
    /// `--expect-dscp`: the DSCP RoCE traffic other than CNPs was configured with (0..63).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_dscp: Option<u8>,
    /// `--expect-cnp-dscp`: the DSCP CNPs were configured with (0..63).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_cnp_dscp: Option<u8>,
    /// `--expect-pcp`: the 802.1Q PCP RoCE frames were configured with (0..7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_pcp: Option<u8>,
}

/// The reviewed findings of one capture (`check --expect FILE`, `check --write-expect FILE`).
///
/// Unknown keys are refused (a misspelt option would otherwise be ignored without a word);
/// `check::parse_expect` reads and validates one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectFile {
    /// `roce-inspect/expect/v1` when written by this version; optional when read, refused
    /// when it names another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default)]
    pub options: ExpectOptions,
    pub findings: Vec<Expected>,
}

impl ExpectOptions {
    /// What an expect file records of the checker's options (`--write-expect`).
    pub fn of(opts: &Options) -> ExpectOptions {
        ExpectOptions {
            assume_complete: opts.assume_complete,
            pmtu: opts.pmtu,
            qp_timeout: opts.qp_timeout,
            cnp_min_interval: opts.cnp_min_interval.map(|p| p.to_string()),
            rnr_timer: opts.rnr_timer,
            expect_dscp: opts.expect_dscp,
            expect_cnp_dscp: opts.expect_cnp_dscp,
            expect_pcp: opts.expect_pcp,
        }
    }

    /// The file's options on top of the command line's (`--expect`): `assume_complete` if
    /// either says so, each other option the command line's when given, else the file's.
    pub fn apply(&self, opts: &mut Options) {
        opts.assume_complete |= self.assume_complete;
        if opts.pmtu.is_none() {
            opts.pmtu = self.pmtu;
        }
        if opts.qp_timeout.is_none() {
            opts.qp_timeout = self.qp_timeout;
        }
        if opts.rnr_timer.is_none() {
            opts.rnr_timer = self.rnr_timer;
        }
        if opts.expect_dscp.is_none() {
            opts.expect_dscp = self.expect_dscp;
        }
        if opts.expect_cnp_dscp.is_none() {
            opts.expect_cnp_dscp = self.expect_cnp_dscp;
        }
        if opts.expect_pcp.is_none() {
            opts.expect_pcp = self.expect_pcp;
        }
        if opts.cnp_min_interval.is_none() {
            // Validated by read_expect.
            let c = self.cnp_min_interval.as_deref();
            opts.cnp_min_interval = c.and_then(|c| roce_conformance::CnpPacing::parse(c).ok());
        }
    }
}

/// The PMTUs the IBTA defines (`--pmtu`, `options.pmtu` of an expect file).
pub const PMTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// `Ok(m)` when `m` is one of [`PMTUS`]; else the message `--pmtu` and expect files give.
pub fn valid_pmtu(m: u32) -> Result<u32, String> {
    if PMTUS.contains(&m) {
        Ok(m)
    } else {
        Err(format!("{m} is not a PMTU: use 256, 512, 1024, 2048 or 4096"))
    }
}

/// The largest expect file read (64 MiB): a generated file of a busy capture is a few MiB;
/// anything larger is refused before it is parsed, so a hostile file cannot take the memory.
pub const EXPECT_MAX_BYTES: u64 = 64 << 20;

/// Why bytes are not an expect file; for a JSON error, where (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectError {
    pub message: String,
    /// Line and column of a JSON syntax or type error.
    pub position: Option<(usize, usize)>,
}

impl std::fmt::Display for ExpectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "line {line}, column {column}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ExpectError {}

fn invalid(message: String) -> ExpectError {
    ExpectError { message, position: None }
}

/// Parses and validates an expect file's bytes: at most [`EXPECT_MAX_BYTES`], UTF-8 JSON
/// (a leading UTF-8 BOM is skipped) with no key the format does not have, every finding's
/// rule an ID of the catalog (exactly as `roce-inspect rules` spells it), `options.pmtu` one
/// of [`PMTUS`]. Nesting costs nothing: the typed reader refuses the first level that is not
/// the format's, and serde_json's recursion limit (128) bounds the rest.
///
/// A finding's `frames` are 1-based frame numbers: an empty list or a frame 0 is refused;
/// frames out of order or repeated are read sorted and once each (what the checker means),
/// and [`parse_expect_noting`] says which findings were. What is accepted has every
/// finding's frames nonzero, strictly increasing and not empty. Text of the file echoed in
/// an error is quoted (`crate::quote::quoted`).
pub fn parse_expect(bytes: &[u8]) -> Result<ExpectFile, ExpectError> {
    parse_expect_noting(bytes).map(|(e, _)| e)
}

/// Normalised findings noted one by one; the rest are counted in one more note.
const EXPECT_NOTES: usize = 10;

/// [`parse_expect`], and what it normalised: one note per finding whose frames were out of
/// order or repeated (the first `EXPECT_NOTES`, then a count), e.g.
/// `findings[2] (REQ-PSN): frames 6,4,4 out of order, repeated: read as 4,6`.
pub fn parse_expect_noting(bytes: &[u8]) -> Result<(ExpectFile, Vec<String>), ExpectError> {
    use crate::quote::quoted;
    if bytes.len() as u64 > EXPECT_MAX_BYTES {
        return Err(invalid(format!(
            "{} bytes: larger than the {} MiB an expect file may have",
            bytes.len(),
            EXPECT_MAX_BYTES >> 20
        )));
    }
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let mut e: ExpectFile = serde_json::from_slice(bytes).map_err(|e| {
        // serde_json's message ends with its own " at line L column C": say it once.
        let msg = e.to_string();
        let message = match msg.rfind(" at line ") {
            Some(i) if e.line() > 0 => msg[..i].to_string(),
            _ => msg,
        };
        let position = (e.line() > 0).then(|| (e.line(), e.column()));
        ExpectError { message: format!("not an expect file: {message}"), position }
    })?;
    if let Some(s) =
        e.schema.as_deref().filter(|s| *s != roce_conformance::internal::json::SCHEMA_EXPECT)
    {
        return Err(invalid(format!(
            "schema {}: this version reads {:?} expect files",
            quoted(s),
            roce_conformance::internal::json::SCHEMA_EXPECT
        )));
    }
    if let Some(m) = e.options.pmtu {
        valid_pmtu(m).map_err(|why| invalid(format!("options.pmtu: {why}")))?;
    }
    if let Some(t) = e.options.qp_timeout.filter(|t| !(1..=31).contains(t)) {
        return Err(invalid(format!(
            "options.qp_timeout: {t} is not a local ACK timeout exponent (1..31)"
        )));
    }
    if let Some(t) = e.options.rnr_timer.filter(|t| *t > 31) {
        return Err(invalid(format!("options.rnr_timer: {t} is not an RNR timer code (0..31)")));
    }
    for (name, v) in
        [("expect_dscp", e.options.expect_dscp), ("expect_cnp_dscp", e.options.expect_cnp_dscp)]
    {
        if let Some(d) = v.filter(|d| *d > 63) {
            return Err(invalid(format!("options.{name}: {d} is not a DSCP (0..63)")));
        }
    }
    if let Some(p) = e.options.expect_pcp.filter(|p| *p > 7) {
        return Err(invalid(format!("options.expect_pcp: {p} is not an 802.1Q PCP (0..7)")));
    }
    if let Some(c) = &e.options.cnp_min_interval {
        // The parser's message repeats the text: only for text short enough to be a pacing.
        if c.chars().count() > crate::quote::QUOTE_MAX_CHARS {
            return Err(invalid(format!(
                "options.cnp_min_interval {}: not DURATION[,qp|pair|dest]",
                quoted(c)
            )));
        }
        roce_conformance::CnpPacing::parse(c)
            .map_err(|why| invalid(format!("options.cnp_min_interval: {why}")))?;
    }
    let mut notes = Vec::new();
    let mut normalised = 0usize;
    for (i, f) in e.findings.iter_mut().enumerate() {
        if !roce_conformance::RULES.iter().any(|r| r.id == f.rule) {
            let hint = match roce_conformance::find_rule(&f.rule) {
                Some(r) => format!(" (did you mean '{}'?)", r.id),
                None => " (`roce-inspect rules` lists them)".to_string(),
            };
            return Err(invalid(format!("findings[{i}]: unknown rule {}{hint}", quoted(&f.rule))));
        }
        if f.frames.is_empty() {
            return Err(invalid(format!(
                "findings[{i}] ({}): no frames (a finding names the frames that prove it)",
                f.rule
            )));
        }
        if f.frames.contains(&0) {
            return Err(invalid(format!(
                "findings[{i}] ({}): frame 0 (frames are numbered from 1, as Wireshark counts)",
                f.rule
            )));
        }
        if f.frames.windows(2).all(|w| w[0] < w[1]) {
            continue;
        }
        let given = expect_frames(&f.frames);
        let unordered = f.frames.windows(2).any(|w| w[0] > w[1]);
        f.frames.sort_unstable();
        let n = f.frames.len();
        f.frames.dedup();
        let what = match (unordered, f.frames.len() < n) {
            (true, true) => "out of order, repeated",
            (true, false) => "out of order",
            _ => "repeated",
        };
        normalised += 1;
        if notes.len() < EXPECT_NOTES {
            notes.push(format!(
                "findings[{i}] ({}): frames {given} {what}: read as {}",
                f.rule,
                expect_frames(&f.frames)
            ));
        }
    }
    if normalised > notes.len() {
        notes.push(format!(
            "... and {} more findings whose frames were out of order or repeated",
            normalised - notes.len()
        ));
    }
    Ok((e, notes))
}

/// A finding's frames in a note: the first 10, then how many in all.
fn expect_frames(f: &[u64]) -> String {
    const SHOWN: usize = 10;
    let head = frames(&f[..f.len().min(SHOWN)]);
    if f.len() > SHOWN {
        format!("{head},... ({} in all)", f.len())
    } else {
        head
    }
}

/// Reads an expect file ([`parse_expect`]); errors name the file, and so do the warnings of
/// findings whose frames were normalised (on stderr).
pub fn read_expect(path: &Path) -> Result<ExpectFile, InputError> {
    use std::io::Read as _;
    let err = |e: &dyn std::fmt::Display| InputError(format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| err(&e))?;
    let mut bytes = Vec::new();
    // One byte past the cap: enough to tell that the file is too large, without reading it.
    file.take(EXPECT_MAX_BYTES + 1).read_to_end(&mut bytes).map_err(|e| err(&e))?;
    if bytes.len() as u64 > EXPECT_MAX_BYTES {
        return Err(err(&format!(
            "larger than the {} MiB an expect file may have",
            EXPECT_MAX_BYTES >> 20
        )));
    }
    let (e, notes) = parse_expect_noting(&bytes).map_err(|e| err(&e))?;
    for n in notes {
        output::warning(format!("{}: {n}", path.display()));
    }
    Ok(e)
}

/// The findings of a report as an expect file (for review, then commit).
pub fn to_expect(report: &Report, options: ExpectOptions, description: String) -> ExpectFile {
    let mut findings: Vec<Expected> = report
        .findings
        .iter()
        .map(|f| Expected { rule: f.rule.to_string(), frames: f.frames.clone() })
        .collect();
    findings.sort();
    let schema = Some(roce_conformance::internal::json::SCHEMA_EXPECT.to_string());
    ExpectFile { schema, description, options, findings }
}

/// Compares actual findings with expected ones; `None` when they agree, else a readable diff.
pub fn diff(expected: &ExpectFile, report: &Report) -> Option<String> {
    // A multiset of the expected findings: linear in the findings whatever the file holds.
    let mut want: BTreeMap<(&str, &[u64]), usize> = BTreeMap::new();
    for e in &expected.findings {
        *want.entry((e.rule.as_str(), e.frames.as_slice())).or_default() += 1;
    }
    let mut unexpected: Vec<&Finding> = Vec::new();
    // Compared as the expected ones are read: sorted, each frame once.
    let actual: Vec<std::borrow::Cow<'_, [u64]>> = report
        .findings
        .iter()
        .map(|f| {
            if f.frames.windows(2).all(|w| w[0] < w[1]) {
                std::borrow::Cow::Borrowed(f.frames.as_slice())
            } else {
                let mut v = f.frames.clone();
                v.sort_unstable();
                v.dedup();
                std::borrow::Cow::Owned(v)
            }
        })
        .collect();
    for (f, frames) in report.findings.iter().zip(&actual) {
        match want.get_mut(&(f.rule, &**frames)) {
            Some(n) if *n > 0 => *n -= 1,
            _ => unexpected.push(f),
        }
    }
    let missing: Vec<(&str, &[u64])> =
        want.iter().flat_map(|(k, &n)| std::iter::repeat_n(*k, n)).collect();
    if missing.is_empty() && unexpected.is_empty() {
        return None;
    }
    let mut t = String::new();
    let _ = writeln!(
        t,
        "findings differ from the expected ones ({} expected, {} found):",
        expected.findings.len(),
        report.findings.len()
    );
    for (rule, f) in missing.iter().take(DIFF_LINES) {
        let _ = writeln!(t, "  - missing     {rule:<17} frames {}", frames(f));
    }
    if missing.len() > DIFF_LINES {
        let _ = writeln!(t, "  - ... and {} more missing", missing.len() - DIFF_LINES);
    }
    for f in unexpected.iter().take(DIFF_LINES) {
        let _ = writeln!(
            t,
            "  + unexpected  {:<17} frames {}: {}",
            f.rule,
            frames(&f.frames),
            f.message
        );
    }
    if unexpected.len() > DIFF_LINES {
        let _ = writeln!(t, "  + ... and {} more unexpected", unexpected.len() - DIFF_LINES);
    }
    Some(t)
}

/// Lines of each kind a diff lists; the rest are counted.
const DIFF_LINES: usize = 1000;
