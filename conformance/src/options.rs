//! How to judge: the checker's options, with the defaults the CLI documents.

use crate::connections::ModelOptions;
use crate::rules::RuleSet;

/// Where a frame sits in the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameInfo {
    /// 1-based frame number.
    pub number: u64,
    /// Nanoseconds since the epoch.
    pub ts_ns: u64,
    /// Bytes captured.
    pub caplen: u32,
    /// Bytes on the wire.
    pub len: u32,
}

/// How to judge.
#[derive(Debug, Clone)]
pub struct Options {
    /// The capture is known to be lossless (a mirror with counters checked, or generated
    /// traffic): PSN gaps are judged as requester faults, not capture loss.
    pub assume_complete: bool,
    /// How long a response may precede its request in a host capture (transmit and
    /// receive reordered) before it counts against the responder. Until an ACK time has been
    /// measured on a stream, it also bounds how long after a NAK packets the requester had
    /// already sent may still appear (then: twice the shortest request-to-ACK time + 20 us).
    pub reorder_window_ns: u64,
    /// Silence on a stream after which a retransmission counts as a timeout retry.
    pub retx_timeout_ns: u64,
    /// Flows tracked at once; beyond it, a connection not used recently is evicted.
    /// Also the number of ended connections a report lists (the busiest).
    pub max_flows: usize,
    /// PMTU to assume when CM did not announce one.
    pub pmtu: Option<u32>,
    pub rules: RuleSet,
    /// Findings kept per (connection, rule); the rest are counted only.
    pub max_findings_per_rule: u32,
    /// A CE-marked packet needs a CNP to its sender QP within this time before or after it.
    pub cnp_window_ns: u64,
    /// An AckReq packet unacknowledged for this long before the capture ends is reported.
    pub ack_timeout_ns: u64,
    /// Silence after which traffic on the same QPNs at unrelated PSNs is a new connection
    /// (when no CM exchange was captured).
    pub reconnect_idle_ns: u64,
    /// The local ACK timeout exponent the QPs were configured with (`--qp-timeout T`:
    /// 4.096 us x 2^T): timeout retransmissions measured earlier are REQ-QP-TIMEOUT.
    pub qp_timeout: Option<u8>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            assume_complete: false,
            reorder_window_ns: 500_000,
            retx_timeout_ns: 1_000_000,
            max_flows: 65_536,
            pmtu: None,
            rules: RuleSet::default(),
            max_findings_per_rule: 100,
            cnp_window_ns: 1_000_000,
            ack_timeout_ns: 100_000_000,
            reconnect_idle_ns: 1_000_000_000,
            qp_timeout: None,
        }
    }
}

impl Options {
    /// What the connection model takes from these options.
    pub fn model(&self) -> ModelOptions {
        ModelOptions {
            max_flows: self.max_flows,
            pmtu: self.pmtu,
            reconnect_idle_ns: self.reconnect_idle_ns,
        }
    }
}
