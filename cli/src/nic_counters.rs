//! `stats --nic-counters BEFORE AFTER --nic-host IP`: the NIC's own word against the wire.
//!
//! Engineers paste a host's RDMA hardware counters into bug reports and compare them with a
//! capture by hand. This module reads two snapshots of those counters (docs/nic-counters.md:
//! `name value` or `name: value` per line, as `ethtool -S` or a `grep` of
//! `/sys/class/infiniband/DEV/ports/N/hw_counters/*` give them, or the one line of
//! `rdma statistic show link DEV/N`), takes their deltas, and sets each beside the count of
//! the same wire event `stats` computed for that host, with "agree" or the likely reason
//! they differ. Which counter means which wire event is one table, [`MAPPING`]: a row per
//! wire event, with each driver's name for it (mlx5, rxe, bnxt_re, irdma, mana; the names
//! are those of the Linux kernel's drivers); the snapshot files are hostile input (bounded
//! size and line count, `u64` values, duplicate names refused, errors name the file and
//! line).

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
    /// `/`-separated part is the counter, and words (irdma's `RNR sent 3`). A line
    /// `link DEV/PORT name value name value ...` (`rdma statistic show link`) gives all its
    /// pairs. Blank lines, `#` comments and the `NIC statistics:` header of `ethtool -S` are
    /// skipped.
    ///
    /// ```
    /// use roce_inspect::internal::nic_counters::Snapshot;
    /// let s = Snapshot::parse(b"NIC statistics:\n     np_cnp_sent: 3\nout_of_sequence 7\n").unwrap();
    /// assert_eq!(s.get("np_cnp_sent"), Some(3));
    /// assert_eq!(s.get("out_of_sequence"), Some(7));
    /// assert!(Snapshot::parse(b"a 1\na 2\n").is_err());
    /// let s = Snapshot::parse(b"link rxe0/1 sent_pkts 12 rcvd_pkts 34\n").unwrap();
    /// assert_eq!((s.get("sent_pkts"), s.get("rcvd_pkts")), (Some(12), Some(34)));
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
            let mut insert = |name: &str, value: &str| -> Result<(), ParseError> {
                let name = name.rsplit('/').next().unwrap_or(name).trim();
                // `RNR sent` (irdma): one space between words, however the line spaced them.
                let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
                if name.is_empty() || name.len() > MAX_NAME {
                    return Err(at(format!("counter name empty or longer than {MAX_NAME} bytes")));
                }
                if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.[] ".contains(&b)) {
                    return Err(at(format!("`{}`: not a counter name", shown(&name))));
                }
                let v: u64 = value.parse().map_err(|_| {
                    at(format!(
                        "{name}: `{}` is not a count (0..=18446744073709551615)",
                        shown(value)
                    ))
                })?;
                if counters.insert(name.clone(), v).is_some() {
                    return Err(at(format!("{name}: given twice")));
                }
                Ok(())
            };
            if let Some(pairs) = rdma_statistic_pairs(line) {
                // `link rxe0/1 sent_pkts 123 rcvd_pkts 456 ...`: name value pairs on one line.
                let mut name: Vec<&str> = Vec::new();
                for token in pairs {
                    if token.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
                        if name.is_empty() {
                            return Err(at(format!("`{}`: a value without a name", shown(token))));
                        }
                        insert(&name.join(" "), token)?;
                        name.clear();
                    } else {
                        name.push(token);
                    }
                }
                if !name.is_empty() {
                    return Err(at(format!("`{}`: no value", shown(&name.join(" ")))));
                }
                continue;
            }
            let (name, value) = match line.rsplit_once(':') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => match line.rsplit_once(char::is_whitespace) {
                    Some((k, v)) => (k.trim(), v.trim()),
                    None => return Err(at(format!("`{}`: no value", shown(line)))),
                },
            };
            insert(name, value)?;
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

/// The tokens after `link DEV/PORT` of a line of `rdma statistic show link`, none for any
/// other line.
fn rdma_statistic_pairs(line: &str) -> Option<std::str::SplitWhitespace<'_>> {
    let mut tokens = line.split_whitespace();
    if tokens.next() != Some("link") {
        return None;
    }
    let dev = tokens.next()?;
    let (name, port) = dev.rsplit_once('/')?;
    (!name.is_empty() && !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
        .then_some(tokens)
}

/// At most 40 characters of the offending text, control characters escaped.
fn shown(s: &str) -> String {
    s.chars().take(40).flat_map(char::escape_debug).collect()
}

/// What the capture shows for the host, from the counts `stats` already computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCounts {
    pub packets_sent: u64,
    pub packets_received: u64,
    pub ipv4_packets_sent: u64,
    pub ipv4_packets_received: u64,
    pub ipv6_packets_sent: u64,
    pub ipv6_packets_received: u64,
    pub nak_psn_seq_sent: u64,
    pub nak_psn_seq_received: u64,
    pub nak_invalid_request_received: u64,
    pub nak_remote_access_sent: u64,
    pub nak_remote_access_received: u64,
    pub nak_remote_op_received: u64,
    pub rnr_naks_sent: u64,
    pub rnr_naks_received: u64,
    pub retransmissions_received: u64,
    pub timeout_retransmissions_sent: u64,
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
                h.packets_sent += d.packets;
                match d.src {
                    IpAddr::V4(_) => h.ipv4_packets_sent += d.packets,
                    IpAddr::V6(_) => h.ipv6_packets_sent += d.packets,
                }
                h.nak_psn_seq_sent += s.naks.psn_sequence_error;
                h.nak_remote_access_sent += s.naks.remote_access_error;
                h.rnr_naks_sent += s.rnr_naks;
                h.cnps_sent += s.cnps;
                if let Some(t) = &s.timing {
                    let r = t.report();
                    h.timeout_retransmissions_sent += r.timeout_retransmissions.len() as u64
                        + r.timeout_retransmissions_not_listed;
                }
            }
            if d.dst == host {
                h.packets_received += d.packets;
                match d.dst {
                    IpAddr::V4(_) => h.ipv4_packets_received += d.packets,
                    IpAddr::V6(_) => h.ipv6_packets_received += d.packets,
                }
                h.nak_psn_seq_received += s.naks.psn_sequence_error;
                h.nak_invalid_request_received += s.naks.invalid_request;
                h.nak_remote_access_received += s.naks.remote_access_error;
                h.nak_remote_op_received += s.naks.remote_operational_error;
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
    /// The counter counts one cause of an event the wire shows for several (invalid R_Keys
    /// among the remote access errors): a counter at most the capture's count agrees.
    AtMost,
}

/// The drivers whose counter names [`MAPPING`] knows (the `drivers` of a row).
pub const MLX5: &str = "mlx5";
pub const RXE: &str = "rxe";
pub const BNXT_RE: &str = "bnxt_re";
pub const IRDMA: &str = "irdma";
pub const MANA: &str = "mana";

/// One wire event and every driver's counter for it.
pub struct Mapping {
    /// A stable ID of the event (docs/nic-counters.md lists them), the row's `event_id`.
    pub event_id: &'static str,
    /// The wire event, as the table prints it.
    pub event: &'static str,
    /// `(driver, counter)`: the counter's name in that driver's `hw_counters` (the kernel
    /// sources are in docs/nic-counters.md). A name two drivers share is listed for both.
    pub names: &'static [(&'static str, &'static str)],
    /// The capture's count, none when `stats` does not count that event.
    pub capture: fn(&HostCounts) -> Option<u64>,
    pub relation: Relation,
}

/// The `event_id` of the counters of a requester that gave up after its Retry Count of
/// timeouts or PSN sequence error NAKs (`IBV_WC_RETRY_EXC_ERR`).
pub const RETRY_EXCEEDED: &str = "retry_exceeded";
/// The `event_id` of the counters of a requester that gave up after its RNR Retry Count of
/// RNR NAKs (`IBV_WC_RNR_RETRY_EXC_ERR`).
pub const RNR_RETRY_EXCEEDED: &str = "rnr_retry_exceeded";

/// The wire event of an `event_id`.
pub fn mapping(event_id: &str) -> Option<&'static Mapping> {
    MAPPING.iter().find(|m| m.event_id == event_id)
}

/// The `(event_id, driver, counter)` of every counter of a requester that exhausted its
/// retries ([`RETRY_EXCEEDED`], [`RNR_RETRY_EXCEEDED`]): the capture cannot count them
/// (rows `not_in_capture`), but their delta confirms or contradicts a "retry exhausted"
/// reading of the capture.
pub fn retry_exceeded_counters() -> impl Iterator<Item = (&'static str, &'static str, &'static str)>
{
    [RETRY_EXCEEDED, RNR_RETRY_EXCEEDED]
        .into_iter()
        .filter_map(mapping)
        .flat_map(|m| m.names.iter().map(move |&(d, c)| (m.event_id, d, c)))
}

/// Which counter means which wire event (docs/nic-counters.md gives the sources).
pub const MAPPING: &[Mapping] = &[
    Mapping {
        event_id: "nak_seq_received",
        event: "NAKs (PSN sequence error) received",
        names: &[
            (MLX5, "packet_seq_err"),
            (BNXT_RE, "packet_seq_err"),
            (RXE, "rcvd_seq_err"),
            (BNXT_RE, "seq_err_naks_rcvd"),
            (MANA, "requester_oos_nak"),
        ],
        capture: |h| Some(h.nak_psn_seq_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "out_of_sequence_received",
        event: "out-of-sequence packets received (NAKs sent, one per gap)",
        names: &[
            (MLX5, "out_of_sequence"),
            (BNXT_RE, "out_of_sequence"),
            (BNXT_RE, "oos_drop_count"),
            (MANA, "responder_oos"),
            (IRDMA, "Rcvd Out of order packets"),
        ],
        capture: |h| Some(h.nak_psn_seq_sent),
        relation: Relation::AtLeast,
    },
    Mapping {
        event_id: "nak_seq_sent",
        event: "NAKs (PSN sequence error) sent (out-of-sequence requests, once per gap)",
        names: &[(RXE, "out_of_seq_request")],
        capture: |h| Some(h.nak_psn_seq_sent),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "duplicate_request_received",
        event: "duplicate (retransmitted) requests received",
        names: &[
            (MLX5, "duplicate_request"),
            (RXE, "duplicate_request"),
            (BNXT_RE, "duplicate_request"),
            (BNXT_RE, "dup_req"),
            (MANA, "responder_dup_request"),
            (MANA, "dup_rx_requests"),
        ],
        capture: |h| Some(h.retransmissions_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "implied_nak",
        event: "implied NAKs (a response past an outstanding READ/atomic)",
        names: &[
            (MLX5, "implied_nak_seq_err"),
            (BNXT_RE, "implied_nak_seq_err"),
            (BNXT_RE, "missing_resp"),
            (MANA, "requester_implicit_nak"),
            (IRDMA, "Nak Sequence Error Implied"),
        ],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "timeout_retransmission_sent",
        event: "timeout retransmissions sent",
        names: &[
            (MLX5, "local_ack_timeout_err"),
            (BNXT_RE, "local_ack_timeout_err"),
            (BNXT_RE, "to_retransmits"),
            (MANA, "requester_timeout"),
            (IRDMA, "RTO"),
        ],
        capture: |h| Some(h.timeout_retransmissions_sent),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "rnr_nak_received",
        event: "RNR NAKs received",
        names: &[
            (MLX5, "rnr_nak_retry_err"),
            (BNXT_RE, "rnr_nak_retry_err"),
            (RXE, "rcvd_rnr_err"),
            (BNXT_RE, "rnr_naks_rcvd"),
            (MANA, "requester_rnr_nak"),
            (IRDMA, "RNR received"),
        ],
        capture: |h| Some(h.rnr_naks_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "rnr_nak_sent",
        event: "RNR NAKs sent",
        names: &[(RXE, "send_rnr_err"), (MANA, "responder_rnr_nak"), (IRDMA, "RNR sent")],
        capture: |h| Some(h.rnr_naks_sent),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "cnp_sent",
        event: "CNPs sent",
        names: &[
            (MLX5, "np_cnp_sent"),
            (MLX5, "cc_tx_cnp_pkts"),
            (BNXT_RE, "tx_cnp_pkts"),
            (BNXT_RE, "np_cnp_pkts"),
            (IRDMA, "cnpSent"),
            (MANA, "sent_cnps"),
        ],
        capture: |h| Some(h.cnps_sent),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "ecn_ce_received",
        event: "ECN-CE marked packets received",
        names: &[
            (MLX5, "np_ecn_marked_roce_packets"),
            (BNXT_RE, "np_ecn_marked_roce_packets"),
            (MLX5, "cc_rx_ce_pkts"),
            (BNXT_RE, "rx_ecn_marked_pkts"),
            (IRDMA, "RxECNMrkd"),
            (MANA, "received_ecns"),
        ],
        capture: |h| Some(h.ecn_ce_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "cnp_handled",
        event: "CNPs received (handled by the reaction point)",
        names: &[(MLX5, "rp_cnp_handled"), (BNXT_RE, "rp_cnp_handled"), (IRDMA, "cnpHandled")],
        capture: |h| Some(h.cnps_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "bad_icrc_received",
        event: "packets with a bad ICRC received",
        names: &[(MLX5, "rx_icrc_encapsulated"), (IRDMA, "CRC errors")],
        capture: |h| Some(h.bad_icrc_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "cnp_received",
        event: "CNPs received",
        names: &[
            (MLX5, "cc_rx_cnp_pkts"),
            (BNXT_RE, "rx_cnp_pkts"),
            (MANA, "received_cnps"),
            (MANA, "received_cnp_count"),
        ],
        capture: |h| Some(h.cnps_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "cnp_ignored",
        event: "CNPs received and ignored by the reaction point",
        names: &[(MLX5, "rp_cnp_ignored"), (IRDMA, "cnpIgnored")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "packets_sent",
        event: "RoCE packets sent",
        names: &[
            (RXE, "sent_pkts"),
            (MLX5, "rdma_tx_packets"),
            (BNXT_RE, "tx_pkts"),
            (MANA, "tx_packets"),
            (IRDMA, "TxUDP"),
        ],
        capture: |h| Some(h.packets_sent),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "packets_received",
        event: "RoCE packets received",
        names: &[
            (RXE, "rcvd_pkts"),
            (MLX5, "rdma_rx_packets"),
            (BNXT_RE, "rx_pkts"),
            (MANA, "rx_packets"),
            (IRDMA, "RxUDP"),
        ],
        capture: |h| Some(h.packets_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "ipv4_packets_sent",
        event: "IPv4 RoCE packets sent",
        names: &[(IRDMA, "ip4OutPkts")],
        capture: |h| Some(h.ipv4_packets_sent),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "ipv4_packets_received",
        event: "IPv4 RoCE packets received",
        names: &[(IRDMA, "ip4InPkts")],
        capture: |h| Some(h.ipv4_packets_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "ipv6_packets_sent",
        event: "IPv6 RoCE packets sent",
        names: &[(IRDMA, "ip6OutPkts")],
        capture: |h| Some(h.ipv6_packets_sent),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "ipv6_packets_received",
        event: "IPv6 RoCE packets received",
        names: &[(IRDMA, "ip6InPkts")],
        capture: |h| Some(h.ipv6_packets_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "nak_invalid_request_received",
        event: "NAKs (invalid request) received",
        names: &[
            (MLX5, "req_remote_invalid_request"),
            (BNXT_RE, "req_remote_invalid_request"),
            (BNXT_RE, "remote_invalid_req_err"),
        ],
        capture: |h| Some(h.nak_invalid_request_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "nak_remote_access_received",
        event: "NAKs (remote access error) received",
        names: &[
            (MLX5, "req_remote_access_errors"),
            (BNXT_RE, "req_remote_access_errors"),
            (BNXT_RE, "remote_access_err"),
        ],
        capture: |h| Some(h.nak_remote_access_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "nak_remote_access_sent",
        event: "NAKs (remote access error) sent",
        names: &[(MLX5, "resp_remote_access_errors")],
        capture: |h| Some(h.nak_remote_access_sent),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "invalid_rkey_received",
        event: "requests with an invalid R_Key received (remote access error NAKs sent)",
        names: &[(BNXT_RE, "res_rx_invalid_rkey")],
        capture: |h| Some(h.nak_remote_access_sent),
        relation: Relation::AtMost,
    },
    Mapping {
        event_id: "nak_remote_op_received",
        event: "NAKs (remote operational error) received",
        names: &[(BNXT_RE, "remote_op_err")],
        capture: |h| Some(h.nak_remote_op_received),
        relation: Relation::Exact,
    },
    Mapping {
        event_id: RETRY_EXCEEDED,
        event: "retries exhausted (Retry Count of timeouts or sequence NAKs): the QP failed",
        names: &[
            (MLX5, "req_transport_retries_exceeded"),
            (RXE, "retry_exceeded_err"),
            (BNXT_RE, "max_retry_exceeded"),
            (MANA, "requester_retries_exceeded"),
        ],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: RNR_RETRY_EXCEEDED,
        event: "RNR retries exhausted (RNR Retry Count of RNR NAKs): the QP failed",
        names: &[
            (MLX5, "req_rnr_retries_exceeded"),
            (RXE, "retry_rnr_exceeded_err"),
            (MANA, "requester_rnr_nak_retries_exceeded"),
        ],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "retry_started",
        event: "go-back-N retries the requester started (after a timeout or a NAK)",
        names: &[(RXE, "completer_retry_err")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "adaptive_retransmission",
        event: "retransmissions by the adaptive retransmission timer",
        names: &[(MLX5, "roce_adp_retrans")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "adaptive_retransmission_timeout",
        event: "timeouts of the adaptive retransmission timer",
        names: &[(MLX5, "roce_adp_retrans_to")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "slow_restart",
        event: "slow restarts (rate back to minimum after a timeout)",
        names: &[(MLX5, "roce_slow_restart")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "slow_restart_cnp",
        event: "CNPs generated by slow restart",
        names: &[(MLX5, "roce_slow_restart_cnps")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "slow_restart_transition",
        event: "transitions into the slow restart state",
        names: &[(MLX5, "roce_slow_restart_trans")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "requester_error_completion",
        event: "work requests completed in error at the requester (any cause)",
        names: &[(MLX5, "req_cqe_error"), (BNXT_RE, "req_cqe_error")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "responder_error_completion",
        event: "work requests completed in error at the responder (any cause)",
        names: &[(MLX5, "resp_cqe_error"), (BNXT_RE, "resp_cqe_error")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "send_completed",
        event: "SEND work requests completed at the requester",
        names: &[(RXE, "rdma_sends")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "send_received",
        event: "SEND messages received into receive WQEs",
        names: &[(RXE, "rdma_recvs")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "transmit_error",
        event: "packets the driver failed to hand to the network (never on the wire)",
        names: &[(RXE, "send_err")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "completer_deferred",
        event: "response processing deferred to a later run (driver scheduling)",
        names: &[(RXE, "ack_deferred")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "tcp_retransmission",
        event: "TCP segments retransmitted (iWARP: a RoCE capture carries no TCP)",
        names: &[(IRDMA, "RetransSegs"), (IRDMA, "tcpRetransSegs")],
        capture: |_| None,
        relation: Relation::Exact,
    },
    Mapping {
        event_id: "link_down",
        event: "the port's link went down",
        names: &[(RXE, "link_downed")],
        capture: |_| None,
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
    /// The drivers that name a counter so ([`MAPPING`]).
    pub drivers: Vec<&'static str>,
    /// The stable ID of the event ([`Mapping::event_id`]).
    pub event_id: &'static str,
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
        for (i, &(_, name)) in m.names.iter().enumerate() {
            if m.names[..i].iter().any(|&(_, n)| n == name) {
                continue; // a name two drivers share: one row
            }
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
                (Some(d), Some(c)) if d < c && m.relation == Relation::AtMost => Verdict::Agree,
                (Some(d), Some(c)) if d > c => Verdict::CounterHigher,
                _ => Verdict::CounterLower,
            };
            rows.push(Row {
                counter: name,
                drivers: m.names.iter().filter(|&&(_, n)| n == name).map(|&(d, _)| d).collect(),
                event_id: m.event_id,
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
        let _ = writeln!(t, "  {:<28} ({}: {})", "", row.drivers.join(", "), row.event);
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
            nak_psn_seq_received: 1,
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

    #[test]
    fn rdma_statistic_lines_and_names_with_words() {
        let s = Snapshot::parse(
            b"link rxe0/1 sent_pkts 123 rcvd_pkts 456 duplicate_request 0 link_downed 2\n\
              RNR sent 3\n/sys/class/infiniband/irdma0/ports/1/hw_counters/RNR received:4\n\
              link irdma1/1 Rcvd Out of order packets 5 CRC   errors 6\n",
        )
        .unwrap();
        for (name, v) in [
            ("sent_pkts", 123),
            ("rcvd_pkts", 456),
            ("duplicate_request", 0),
            ("link_downed", 2),
            ("RNR sent", 3),
            ("RNR received", 4),
            ("Rcvd Out of order packets", 5),
            ("CRC errors", 6),
        ] {
            assert_eq!(s.get(name), Some(v), "{name}");
        }
        assert_eq!(s.len(), 8);
        for (text, needle) in [
            (&b"link rxe0/1 sent_pkts 1 rcvd_pkts\n"[..], "no value"),
            (b"link rxe0/1 sent_pkts -1\n", "not a count"),
            (b"link rxe0/1 sent_pkts 18446744073709551616\n", "not a count"),
            (b"link rxe0/1 sent_pkts 1 sent_pkts 2\n", "given twice"),
            (b"link rxe0/1 7 sent_pkts\n", "without a name"),
            (b"link rxe0/1 sent\x07pkts 1\n", "not a counter name"),
        ] {
            let e = Snapshot::parse(text).unwrap_err();
            assert_eq!(e.line, Some(1), "{e}");
            assert!(e.message.contains(needle), "{e}");
        }
    }

    #[test]
    fn the_table_names_each_counter_and_event_once() {
        let mut events = std::collections::BTreeSet::new();
        let mut rows_of = BTreeMap::new();
        for m in MAPPING {
            assert!(events.insert(m.event_id), "{} twice", m.event_id);
            for &(driver, counter) in m.names {
                assert!([MLX5, RXE, BNXT_RE, IRDMA, MANA].contains(&driver), "{driver}");
                assert!(!counter.is_empty() && counter.len() <= MAX_NAME, "{counter}");
                let prev = rows_of.insert((driver, counter), m.event_id);
                assert!(prev.is_none(), "{driver} {counter} twice");
                for other in MAPPING.iter().filter(|o| o.event_id != m.event_id) {
                    assert!(
                        other.names.iter().all(|&(_, c)| c != counter),
                        "{counter} in {} and {}",
                        m.event_id,
                        other.event_id
                    );
                }
            }
        }
        let retry: Vec<_> = retry_exceeded_counters().collect();
        assert!(retry.contains(&(RETRY_EXCEEDED, RXE, "retry_exceeded_err")));
        assert!(retry.contains(&(RETRY_EXCEEDED, BNXT_RE, "max_retry_exceeded")));
        assert!(retry.contains(&(RETRY_EXCEEDED, MLX5, "req_transport_retries_exceeded")));
        assert!(retry.contains(&(RNR_RETRY_EXCEEDED, RXE, "retry_rnr_exceeded_err")));
        assert!(retry
            .iter()
            .all(|&(id, _, _)| (mapping(id).unwrap().capture)(&HostCounts::default()).is_none()));
    }

    #[test]
    fn a_shared_name_is_one_row_naming_both_drivers_and_at_most_agrees_below() {
        let before = Snapshot::parse(b"duplicate_request 1\nres_rx_invalid_rkey 0\n").unwrap();
        let after = Snapshot::parse(b"duplicate_request 4\nres_rx_invalid_rkey 1\n").unwrap();
        let h = HostCounts {
            retransmissions_received: 3,
            nak_remote_access_sent: 2,
            ..Default::default()
        };
        let rows = reconcile(&before, &after, &h).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].drivers, [MLX5, RXE, BNXT_RE]);
        assert_eq!(
            (rows[0].event_id, rows[0].verdict),
            ("duplicate_request_received", Verdict::Agree)
        );
        assert_eq!((rows[1].counter, rows[1].verdict), ("res_rx_invalid_rkey", Verdict::Agree));
        let h = HostCounts { nak_remote_access_sent: 0, ..h };
        let rows = reconcile(&before, &after, &h).unwrap();
        assert_eq!(rows[1].verdict, Verdict::CounterHigher);
    }
}
