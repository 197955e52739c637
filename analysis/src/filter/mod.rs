//! `-Y EXPR` / `--filter EXPR` and `--conn A:QPN-B:QPN`: one display filter for every
//! command, as tshark's `-Y`, over the field names of the JSON contract (docs/json.md,
//! docs/filter.md): `bth.dest_qp == 0x11 && bth.psn >= 1000 || icrc.status == "bad"`.
//!
//! Why a language of our own and not tshark's: its field names are the JSON members users
//! already script against (`jq '.roce.bth.dest_qp'`), so one vocabulary serves both; and it
//! is evaluated on the parser's structs, with each comparison resolved when the expression
//! is parsed (the field's row, the literal in the field's type), because `dissect -Y` runs it
//! on every frame.
//!
//! What a filter selects differs by command (docs/filter.md): `dissect` and `export` keep
//! the frames that match; `check`, `report` and `stats`' connection table keep the
//! connections that have a frame that matches, judged on all their frames
//! ([`Selection`]): a subset of a connection's packets would invent PSN gaps.
//!
//! The command line's `-Y` and `--conn` options (clap) are roce-inspect's; they parse with
//! [`DisplayFilter::parse`] and [`DisplayFilter::conn`] and join with [`DisplayFilter::and`].
//!
//! ```
//! use roce_analysis::filter::DisplayFilter;
//!
//! let f = DisplayFilter::parse("bth.dest_qp == 0x11 && !aeth").unwrap();
//! assert_eq!(f.text(), "bth.dest_qp == 0x11 && !aeth");
//! let e = DisplayFilter::parse("bth.dest_q == 1").unwrap_err();
//! assert_eq!(e.column(), 1);
//! assert!(e.to_string().contains("did you mean bth.dest_qp"));
//! ```

mod eval;
mod fields;
mod parse;
mod select;

use std::fmt;
use std::net::IpAddr;

pub use fields::{hint, lookup};
pub use parse::{MAX_DEPTH, MAX_LEN};
pub use select::{Selection, SelectionJson, MAX_SELECTED};

use crate::Decoded;

/// A parsed display filter.
#[derive(Debug, Clone)]
pub struct DisplayFilter {
    text: String,
    node: parse::Node,
}

/// Why an expression is not a filter: the message and the column (1-based, in characters) of
/// the mistake; `Display` shows the expression with a `^` under it, as rustc does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    text: String,
    offset: usize,
    message: String,
}

impl FilterError {
    /// The column of the mistake, from 1, counted in characters.
    pub fn column(&self) -> usize {
        self.text.get(..self.offset).map_or(self.offset, |s| s.chars().count()) + 1
    }

    /// What is wrong, without the expression.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} (column {})", self.message, self.column())?;
        // The expression on one line (a long one is cut around the mistake), the caret under.
        let chars: Vec<char> =
            self.text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        let col = self.column() - 1;
        let start = col.saturating_sub(60);
        let end = chars.len().min(col + 20);
        let shown: String = chars.get(start..end).unwrap_or_default().iter().collect();
        let lead = if start > 0 { "..." } else { "" };
        writeln!(f, "    {lead}{shown}")?;
        write!(f, "    {}{}^", " ".repeat(lead.len()), " ".repeat(col - start))
    }
}

impl std::error::Error for FilterError {}

impl DisplayFilter {
    /// Parses an expression (docs/filter.md). Refused with a [`FilterError`]: unknown fields
    /// (with the nearest names), a literal of the wrong kind, more than [`MAX_LEN`] bytes,
    /// nesting deeper than [`MAX_DEPTH`].
    pub fn parse(text: &str) -> Result<DisplayFilter, FilterError> {
        match parse::parse(text) {
            Ok(node) => Ok(DisplayFilter { text: text.to_string(), node }),
            Err(m) => {
                Err(FilterError { text: text.to_string(), offset: m.offset, message: m.message })
            }
        }
    }

    /// `--conn A:QPN-B:QPN`: both directions of one QP pair, i.e.
    /// `(ip.src == A && ip.dst == B && bth.dest_qp == QPN_B) || (ip.src == B && ip.dst == A
    /// && bth.dest_qp == QPN_A)`. IPv6 addresses may be bracketed: `[fe80::1]:0x11`.
    pub fn conn(spec: &str) -> Result<DisplayFilter, String> {
        let (a, b) = spec.split_once('-').ok_or_else(|| {
            format!("--conn '{spec}': expected A:QPN-B:QPN, e.g. 10.0.0.1:0x11-10.0.0.2:0x12")
        })?;
        let (ip_a, qp_a) = endpoint(a, spec)?;
        let (ip_b, qp_b) = endpoint(b, spec)?;
        let text = format!(
            "(ip.src == {ip_a} && ip.dst == {ip_b} && bth.dest_qp == {qp_b:#x}) || \
             (ip.src == {ip_b} && ip.dst == {ip_a} && bth.dest_qp == {qp_a:#x})"
        );
        DisplayFilter::parse(&text).map_err(|e| format!("--conn '{spec}': {}", e.message()))
    }

    /// Both filters (`-Y` with `--conn`, or with `dissect --qp`).
    pub fn and(self, other: DisplayFilter) -> DisplayFilter {
        DisplayFilter {
            text: format!("({}) && ({})", self.text, other.text),
            node: parse::Node::And(vec![self.node, other.node]),
        }
    }

    /// The expression as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the frame matches.
    #[inline]
    pub fn matches(&self, d: &Decoded<'_>) -> bool {
        eval::eval(&self.node, d)
    }
}

/// `A:QPN` of `--conn`.
fn endpoint(side: &str, spec: &str) -> Result<(IpAddr, u32), String> {
    let bad = || format!("--conn '{spec}': '{side}' is not IP:QPN (10.0.0.1:0x11, [fe80::1]:17)");
    let (ip, qp) = side.trim().rsplit_once(':').ok_or_else(bad)?;
    let ip: IpAddr = ip.trim_start_matches('[').trim_end_matches(']').parse().map_err(|_| bad())?;
    let qp = parse::parse_int(qp).and_then(|q| u32::try_from(q).ok()).ok_or_else(bad)?;
    if qp > 0xff_ffff {
        return Err(format!("--conn '{spec}': QPN {qp:#x} does not fit in 24 bits"));
    }
    Ok((ip.to_canonical(), qp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> FilterError {
        match DisplayFilter::parse(text) {
            Ok(f) => panic!("{text:?} parsed: {f:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn the_issue_example_parses() {
        let text = r#"bth.dest_qp == 0x11 && bth.psn >= 1000 || icrc.status == "bad" || problem == "pad_nonzero""#;
        let f = DisplayFilter::parse(text).unwrap();
        // || of three terms, the first an && of two.
        match &f.node {
            parse::Node::Or(v) => {
                assert_eq!(v.len(), 3);
                assert!(matches!(&v[0], parse::Node::And(a) if a.len() == 2));
            }
            other => panic!("{other:?}"),
        }
        for same in [
            "roce.bth.dest_qp == 17 and not roce.aeth or (udp.dport != 4791)",
            "!(!(bth.psn<5))",
            "eth.src == 02:00:00:00:00:01 && ip.dst == fe80::1 && ip.src == \"10.0.0.1\"",
            "vlan.vid == 100 || bth.opcode == RC_SEND_ONLY || bth.se == true",
        ] {
            DisplayFilter::parse(same).unwrap();
        }
    }

    #[test]
    fn mistakes_point_at_their_column() {
        let cases: &[(&str, usize, &str)] = &[
            ("bth.dest_q == 1", 1, "did you mean bth.dest_qp"),
            ("bth.psn == 0x", 12, "not a number"),
            ("bth.psn >= 1 &&", 16, "ends too early"),
            ("(bth.psn == 1", 14, "not closed"),
            ("bth.psn == 1)", 13, "without its '('"),
            ("icrc.status > \"ok\"", 13, "only == and !="),
            ("ip.src == 10.0.0.300", 11, "not an IP address"),
            ("problem == \"pad\"", 12, "not a problem code"),
            ("aeth == 1", 6, "is a header"),
            ("bth.psn = 1", 9, "write =="),
            ("bth.psn == 1 bth.psn", 14, "expected &&"),
            ("bth.psn == 99999999999999999999", 12, "not a number"),
            ("é == 1", 1, "expected a field"),
            ("bth.se == maybe", 11, "not true or false"),
        ];
        for &(text, column, says) in cases {
            let e = err(text);
            assert_eq!(e.column(), column, "{text}: {e}");
            assert!(e.message().contains(says), "{text}: {e}");
            // The caret is under the column.
            let last = e.to_string().lines().last().unwrap().to_string();
            assert_eq!(last.find('^'), Some(4 + column - 1), "{text}:\n{e}");
        }
    }

    #[test]
    fn nesting_and_size_are_bounded() {
        let deep = |n: usize| format!("{}bth.psn == 1{}", "(".repeat(n), ")".repeat(n));
        DisplayFilter::parse(&deep(MAX_DEPTH)).unwrap();
        let e = err(&deep(MAX_DEPTH + 1));
        assert!(e.message().contains("nested deeper than 64"), "{e}");
        assert_eq!(e.column(), MAX_DEPTH + 1);
        let nots = format!("{}bth.psn == 1", "!".repeat(MAX_DEPTH + 1));
        assert!(err(&nots).message().contains("nested deeper"));
        // 100,000 nested parentheses: an error, not a stack overflow.
        let e = err(&deep(100_000));
        assert!(e.message().contains("longer than 4096 bytes"), "{e}");
        assert_eq!(e.column(), MAX_LEN + 1);
        // A long flat chain is not nesting.
        let chain = vec!["bth.psn == 1"; 250].join(" || ");
        assert!(chain.len() <= MAX_LEN);
        DisplayFilter::parse(&chain).unwrap();
    }

    #[test]
    fn conn_is_both_directions() {
        let f = DisplayFilter::conn("10.0.0.1:0xdc1-10.0.0.2:3431").unwrap();
        assert_eq!(
            f.text(),
            "(ip.src == 10.0.0.1 && ip.dst == 10.0.0.2 && bth.dest_qp == 0xd67) || \
             (ip.src == 10.0.0.2 && ip.dst == 10.0.0.1 && bth.dest_qp == 0xdc1)"
        );
        DisplayFilter::conn("[fd00::3]:0x77-[fd00::4]:0x88").unwrap();
        for bad in [
            "10.0.0.1:1",
            "10.0.0.1-10.0.0.2:1",
            "10.0.0.1:x-10.0.0.2:1",
            "1.2.3.4:0x1000000-1.2.3.5:1",
        ] {
            assert!(DisplayFilter::conn(bad).is_err(), "{bad}");
        }
    }
}
