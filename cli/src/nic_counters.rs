//! `stats --nic-counters BEFORE AFTER --nic-host IP`: the NIC's own word against the wire.
//!
//! Engineers paste a host's RDMA hardware counters into bug reports and compare them with a
//! capture by hand. This module reads two snapshots of those counters (docs/nic-counters.md:
//! `name value` or `name: value` per line, as `ethtool -S` or a `grep` of
//! `/sys/class/infiniband/DEV/ports/N/hw_counters/*` give them), takes their deltas, and
//! sets each beside the count of the same wire event `stats` computed for that host, with
//! "agree" or the likely reason they differ. Which counter means which wire event is one
//! table, [`MAPPING`]; the snapshot files are hostile input (bounded size and line count,
//! `u64` values, duplicate names refused, errors name the file and line).

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::io::Read;
use std::net::IpAddr;
use std::path::Path;

use serde::Serialize;

use crate::stats::Connection;

/// A snapshot file is refused past this size (a real one is a few KiB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// A snapshot file is refused past this many lines.
pub const MAX_LINES: usize = 10_000;
/// A counter name is refused past this length.
pub const MAX_NAME: usize = 128;

/// One snapshot: counter name to value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    counters: BTreeMap<String, u64>,
}

/// Why a snapshot was refused: the 1-based line (none for the whole file) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl Snapshot {
    /// Parses a snapshot: per line `name value` or `name: value`; a name may carry a path
    /// (`.../hw_counters/out_of_sequence:12`, what `grep . hw_counters/*` prints), the last
    /// `/`-separated part is the counter. Blank lines, `#` comments and the `NIC statistics:`
    /// header of `ethtool -S` are skipped.
    ///
    /// ```
    /// use roce_inspect::nic_counters::Snapshot;
    /// let s = Snapshot::parse(b"NIC statistics:\n     np_cnp_sent: 3\nout_of_sequence 7\n").unwrap();
    /// assert_eq!(s.get("np_cnp_sent"), Some(3));
    /// assert_eq!(s.get("out_of_sequence"), Some(7));
    /// assert!(Snapshot::parse(b"a 1\na 2\n").is_err());
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Snapshot, ParseError> {
        let whole = |m: String| ParseError { line: None, message: m };
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(whole(format!("larger than {MAX_FILE_BYTES} bytes")));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| ParseError {
            line: Some(bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1),
            message: "not UTF-8 text".into(),
        })?;
        let mut counters = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            if n > MAX_LINES {
                return Err(whole(format!("more than {MAX_LINES} lines")));
            }
            let at = |m: String| ParseError { line: Some(n), message: m };
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line == "NIC statistics:" {
                continue;
            }
            let (name, value) = match line.rsplit_once(':') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => match line.split_once(char::is_whitespace) {
                    Some((k, v)) => (k, v.trim()),
                    None => return Err(at(format!("`{}`: no value", shown(line)))),
                },
            };
            let name = name.rsplit('/').next().unwrap_or(name);
            if name.is_empty() || name.len() > MAX_NAME {
                return Err(at(format!("counter name empty or longer than {MAX_NAME} bytes")));
            }
            if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.[]".contains(&b)) {
                return Err(at(format!("`{}`: not a counter name", shown(name))));
            }
            let v: u64 = value.parse().map_err(|_| {
                at(format!("{name}: `{}` is not a count (0..=18446744073709551615)", shown(value)))
            })?;
            if counters.insert(name.to_string(), v).is_some() {
                return Err(at(format!("{name}: given twice")));
            }
        }
        Ok(Snapshot { counters })
    }

    /// Reads and parses a file; the error names the file (and line).
    pub fn read(path: &Path) -> Result<Snapshot, String> {
        let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut bytes = Vec::new();
        f.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Snapshot::parse(&bytes).map_err(|e| match e.line {
            Some(l) => format!("{}:{l}: {}", path.display(), e.message),
            None => format!("{}: {}", path.display(), e.message),
        })
    }

    /// A counter's value.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.counters.get(name).copied()
    }

    /// The number of counters.
    pub fn len(&self) -> usize {
        self.counters.len()
    }

    /// No counter at all.
    pub fn is_empty(&self) -> bool {
        self.counters.is_empty()
    }
}

/// At most 40 characters of the offending text, control characters escaped.
fn shown(s: &str) -> String {
    s.chars().take(40).flat_map(char::escape_debug).collect()
}

/// What the capture shows for the host, from the counts `stats` already computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCounts {
    pub nak_psn_seq_sent: u64,
    pub retransmissions_received: u64,
    pub timeout_retransmissions_sent: u64,
    pub rnr_naks_received: u64,
    pub cnps_sent: u64,
    pub cnps_received: u64,
    pub ecn_ce_received: u64,
    pub bad_icrc_received: u64,
}

impl HostCounts {
    /// Sums the directions of the listed connections that `host` sent or received;
    /// `bad_icrc_received` is counted per frame by `stats` (it is not per connection).
    pub fn of(host: IpAddr, conns: &[Connection], bad_icrc_received: u64) -> HostCounts {
        let mut h = HostCounts { bad_icrc_received, ..HostCounts::default() };
        for d in conns.iter().flat_map(|c| &c.directions) {
            let s = &d.stats;
            if d.src == host {
                h.nak_psn_seq_sent += s.naks.psn_sequence_error;
                h.cnps_sent += s.cnps;
                if let Some(t) = &s.timing {
                    let r = t.report();
                    h.timeout_retransmissions_sent += r.timeout_retransmissions.len() as u64
                        + r.timeout_retransmissions_not_listed;
                }
            }
            if d.dst == host {
                h.retransmissions_received += s.retransmissions;
                h.rnr_naks_received += s.rnr_naks;
                h.cnps_received += s.cnps;
                h.ecn_ce_received += s.ecn_ce;
            }
        }
        h
    }
}

/// How a counter compares with the capture's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// One counter increment per wire event.
    Exact,
    /// The counter counts every packet of an event the wire shows once (out-of-sequence
    /// packets, one NAK per gap): a counter at least the capture's count agrees.
    AtLeast,
}

/// One counter and the wire event it counts.
pub struct Mapping {
    /// The counter's names (mlx5 `hw_counters` first).
    pub names: &'static [&'static str],
    /// The wire event, as the table prints it.
    pub event: &'static str,
    /// The capture's count, none when `stats` does not count that event.
    pub capture: fn(&HostCounts) -> Option<u64>,
    pub relation: Relation,
}

/// Which counter means which wire event (docs/nic-counters.md gives the sources).
pub const MAPPING: &[Mapping] = &[
    Mapping {
        names: &["packet_seq_err"],
        event: "NAKs (PSN sequence error) sent",
        capture: |h| Some(h.nak_psn_seq_sent),
        relation: Relation::Exact,
    },
    Mapping {
        names: &["out_of_sequence"],
        event: "out-of-sequence packets received (NAKs sent, one per gap)",
        capture: |h| Some(h.nak_psn_seq_sent),
        relation: Relation::AtLeast,
    },
    Mapping {
        names: &["duplicate_request"],
        event: "duplicate (retransmitted) requests received",
        capture: |h| Some(h.retransmissions_received),
        relation: Relation::Exact,
    },
    Mapping {
        names: &["implied_nak_seq_err"],
        event: "implied NAKs (a response past an outstanding READ/atomic)",
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        names: &["local_ack_timeout_err"],
        event: "timeout retransmissions sent",
        capture: |h| Some(h.timeout_retransmissions_sent),
        relation: Relation::Exact,
    },
    Mapping {
        names: &["rnr_nak_retry_err"],
        event: "RNR NAKs received",
        capture: |h| Some(h.rnr_naks_received),
        relation: Relation::Exact,
    },
    Mapping {
        names: &["np_cnp_sent"],
        event: "CNPs sent",
        capture: |h| Some(h.cnps_sent),
        relation: Relation::Exact,
    },
    Mapping {
        names: &["np_ecn_marked_roce_packets"],
        event: "ECN-CE marked packets received",
        capture: |h| Some(h.ecn_ce_received),
        relation: Relation::Exact,
    },
    Mapping {
        names: &["rp_cnp_handled"],
        event: "CNPs received",
        capture: |h| Some(h.cnps_received),
        relation: Relation::Exact,
    },
    Mapping {
        names: &["rx_icrc_encapsulated"],
        event: "packets with a bad ICRC received",
        capture: |h| Some(h.bad_icrc_received),
        relation: Relation::Exact,
    },
];

/// The outcome of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Agree,
    /// The counter counted more than the capture shows.
    CounterHigher,
    /// The capture shows more than the counter counted.
    CounterLower,
    /// AFTER is below BEFORE: the counter was reset or wrapped.
    Reset,
    /// `stats` does not count this event.
    NotInCapture,
}

impl Verdict {
    fn reason(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::CounterHigher => "counter higher: capture loss, or traffic the capture could not see (other ports or QPs, before or after the capture)",
            Verdict::CounterLower => "counter lower: the capture is not at that host, the snapshots do not span the capture, or (received) lost between the capture point and the NIC",
            Verdict::Reset => "counter went down: reset or wrapped between the snapshots",
            Verdict::NotInCapture => "stats does not count this event",
        }
    }
}

/// One counter reconciled (the `nic_counters.counters` items of `stats --format json`).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub counter: &'static str,
    pub event: &'static str,
    pub before: u64,
    pub after: u64,
    /// AFTER - BEFORE, none when the counter went down.
    pub delta: Option<u64>,
    /// The capture's count for the host, none when `stats` does not count the event.
    pub capture: Option<u64>,
    pub verdict: Verdict,
    pub reason: &'static str,
}

/// The reconciliation (`nic_counters` of `stats --format json`).
#[derive(Debug, Clone, Serialize)]
pub struct Reconciliation {
    pub host: IpAddr,
    /// Connections `stats` counted but did not list (`--max-flows`): their packets are not in
    /// the capture counts, which are then lower bounds.
    pub connections_not_counted: u64,
    pub counters: Vec<Row>,
}

/// Sets the deltas of the mapped counters beside the capture's counts. A mapped counter in
/// one snapshot and not the other is refused (the files are not two snapshots of one NIC).
pub fn reconcile(
    before: &Snapshot,
    after: &Snapshot,
    counts: &HostCounts,
) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for m in MAPPING {
        for &name in m.names {
            let (b, a) = match (before.get(name), after.get(name)) {
                (None, None) => continue,
                (Some(b), Some(a)) => (b, a),
                (Some(_), None) => return Err(format!("{name} is in BEFORE but not in AFTER")),
                (None, Some(_)) => return Err(format!("{name} is in AFTER but not in BEFORE")),
            };
            let delta = a.checked_sub(b);
            let capture = (m.capture)(counts);
            let verdict = match (delta, capture) {
                (None, _) => Verdict::Reset,
                (Some(_), None) => Verdict::NotInCapture,
                (Some(d), Some(c)) if d == c => Verdict::Agree,
                (Some(d), Some(c)) if d > c && m.relation == Relation::AtLeast => Verdict::Agree,
                (Some(d), Some(c)) if d > c => Verdict::CounterHigher,
                _ => Verdict::CounterLower,
            };
            rows.push(Row {
                counter: name,
                event: m.event,
                before: b,
                after: a,
                delta,
                capture,
                verdict,
                reason: verdict.reason(),
            });
        }
    }
    Ok(rows)
}

/// `--nic-counters BEFORE AFTER --nic-host IP`, the snapshots read before the capture.
#[derive(Debug, Clone)]
pub struct NicInput {
    pub host: IpAddr,
    pub before: Snapshot,
    pub after: Snapshot,
}

impl NicInput {
    /// Reads both snapshots; an error names the file and line.
    pub fn read(before: &Path, after: &Path, host: IpAddr) -> Result<NicInput, String> {
        Ok(NicInput { host, before: Snapshot::read(before)?, after: Snapshot::read(after)? })
    }

    /// Reconciles with the connections `stats` listed.
    pub fn reconcile(
        &self,
        conns: &[Connection],
        not_listed: u64,
        bad_icrc_received: u64,
    ) -> Result<Reconciliation, String> {
        let counts = HostCounts::of(self.host, conns, bad_icrc_received);
        Ok(Reconciliation {
            host: self.host,
            connections_not_counted: not_listed,
            counters: reconcile(&self.before, &self.after, &counts)?,
        })
    }
}

/// The text table of `stats`.
pub fn write_text(t: &mut String, r: &Reconciliation) {
    let _ = writeln!(t, "\nNIC counters of {} (delta AFTER-BEFORE against the capture)", r.host);
    let _ = writeln!(t, "  {:<28} {:>10} {:>10}  verdict", "counter", "delta", "capture");
    if r.counters.is_empty() {
        let _ = writeln!(t, "  none of the known counters in the snapshots (docs/nic-counters.md)");
    }
    for row in &r.counters {
        let d = row.delta.map_or("reset".to_string(), |d| d.to_string());
        let c = row.capture.map_or("-".to_string(), |c| c.to_string());
        let _ = writeln!(t, "  {:<28} {d:>10} {c:>10}  {}", row.counter, row.reason);
        let _ = writeln!(t, "  {:<28} ({})", "", row.event);
    }
    if r.connections_not_counted > 0 {
        let _ = writeln!(
            t,
            "  ({} connections not listed are not in the capture counts: lower bounds)",
            r.connections_not_counted
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_and_sysfs_paths() {
        let s = Snapshot::parse(
            b"# taken at 12:00\n/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:12\n\
              rp_cnp_handled 4\n  np_cnp_sent:  0\n",
        )
        .unwrap();
        assert_eq!(s.get("out_of_sequence"), Some(12));
        assert_eq!(s.get("rp_cnp_handled"), Some(4));
        assert_eq!(s.get("np_cnp_sent"), Some(0));
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn hostile_lines_name_their_line() {
        for (text, line, needle) in [
            (&b"a 1\nb x\n"[..], 2, "not a count"),
            (b"a 1\n\na 2\n", 3, "twice"),
            (b"a -1\n", 1, "not a count"),
            (b"a 18446744073709551616\n", 1, "not a count"),
            (b"lonely\n", 1, "no value"),
            (b"a 1\n\xff 2\n", 2, "UTF-8"),
            (b"b\x07ell 1\n", 1, "not a counter name"),
            (b": 3\n", 1, "empty"),
        ] {
            let e = Snapshot::parse(text).unwrap_err();
            assert_eq!(e.line, Some(line), "{e}");
            assert!(e.message.contains(needle), "{e}");
        }
        let many = "a 1\n".to_string() + &"\n".repeat(MAX_LINES);
        assert!(Snapshot::parse(many.as_bytes()).unwrap_err().message.contains("lines"));
        let big = vec![b'\n'; MAX_FILE_BYTES as usize + 1];
        assert!(Snapshot::parse(&big).unwrap_err().message.contains("bytes"));
    }

    #[test]
    fn verdicts() {
        let before = Snapshot::parse(
            b"np_cnp_sent 10\nrp_cnp_handled 5\nout_of_sequence 0\nduplicate_request 9\n\
              implied_nak_seq_err 1\npacket_seq_err 0\n",
        )
        .unwrap();
        let after = Snapshot::parse(
            b"np_cnp_sent 11\nrp_cnp_handled 9\nout_of_sequence 3\nduplicate_request 2\n\
              implied_nak_seq_err 1\npacket_seq_err 0\n",
        )
        .unwrap();
        let h = HostCounts {
            cnps_sent: 1,
            cnps_received: 2,
            nak_psn_seq_sent: 1,
            ..Default::default()
        };
        let rows = reconcile(&before, &after, &h).unwrap();
        let v: Vec<_> = rows.iter().map(|r| (r.counter, r.verdict)).collect();
        assert_eq!(
            v,
            [
                ("packet_seq_err", Verdict::CounterLower),
                ("out_of_sequence", Verdict::Agree),
                ("duplicate_request", Verdict::Reset),
                ("implied_nak_seq_err", Verdict::NotInCapture),
                ("np_cnp_sent", Verdict::Agree),
                ("rp_cnp_handled", Verdict::CounterHigher),
            ]
        );
        let only = Snapshot::parse(b"np_cnp_sent 1\n").unwrap();
        assert!(reconcile(&only, &Snapshot::default(), &h).is_err());
    }
}
