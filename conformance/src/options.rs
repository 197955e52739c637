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
    /// Which rules report (every rule by default; `check --enable` / `--disable` change it).
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
    /// The NP's configured CNP pacing (`--cnp-min-interval DURATION[,SCOPE]`): CNPs closer
    /// than this in the scope are CC-CNP-PACING.
    pub cnp_min_interval: Option<CnpPacing>,
    /// The responder QPs' configured minimum RNR NAK timer code (`--rnr-timer CODE`, IBTA
    /// table 45): RNR NAKs advertising another code are RSP-RNR-TIMER.
    pub rnr_timer: Option<u8>,
    /// The DSCP the hosts were configured to send RoCE traffic at (`--expect-dscp D`,
    /// 0..63): a RoCEv2 packet other than a CNP at another DSCP is NET-DSCP.
    pub expect_dscp: Option<u8>,
    /// The DSCP the notification points were configured to send CNPs at
    /// (`--expect-cnp-dscp D`, 0..63; mlx5's default is 48): a CNP at another is NET-CNP-DSCP.
    pub expect_cnp_dscp: Option<u8>,
    /// The 802.1Q priority (PCP, 0..7) RoCE frames were configured to carry, the PFC
    /// priority (`--expect-pcp P`): a frame whose outermost tag has another PCP, or that is
    /// untagged, is NET-PCP.
    pub expect_pcp: Option<u8>,
}

/// Which CNPs `--cnp-min-interval` compares: the NP's pacing mode (Lumina's three). mlx5
/// paces per QP by default, so `qp` is the default scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CnpScope {
    /// CNPs to one QP (one flow: NP address, RP address, DestQP).
    Qp,
    /// CNPs from one NP address to one RP address, any QP.
    Pair,
    /// CNPs to one RP address from any NP.
    Dest,
}

impl CnpScope {
    /// The scope as `--cnp-min-interval` spells it: `qp`, `pair` or `dest`.
    pub fn as_str(self) -> &'static str {
        match self {
            CnpScope::Qp => "qp",
            CnpScope::Pair => "pair",
            CnpScope::Dest => "dest",
        }
    }
}

/// A configured minimum interval between CNPs, in a scope.
///
/// ```
/// use roce_conformance::{CnpPacing, CnpScope};
/// let p = CnpPacing::parse("50us,pair").unwrap();
/// assert_eq!((p.min_ns, p.scope), (50_000, CnpScope::Pair));
/// assert_eq!(p.to_string(), "50us,pair");
/// assert_eq!(CnpPacing::parse("4ms").unwrap().scope, CnpScope::Qp);
/// assert!(CnpPacing::parse("50,qp").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CnpPacing {
    /// CNPs closer than this (ns) in the scope are CC-CNP-PACING.
    pub min_ns: u64,
    /// Which CNPs are compared with each other.
    pub scope: CnpScope,
}

impl CnpPacing {
    /// `DURATION[,SCOPE]`: a whole number with a unit (ns, us, ms, s), scope `qp` (the
    /// default), `pair` or `dest`.
    pub fn parse(s: &str) -> Result<CnpPacing, String> {
        let (d, scope) = match s.split_once(',') {
            Some((d, sc)) => (d, sc),
            None => (s, "qp"),
        };
        let scope = match scope.trim() {
            "qp" => CnpScope::Qp,
            "pair" => CnpScope::Pair,
            "dest" => CnpScope::Dest,
            other => return Err(format!("scope {other:?}: expected qp, pair or dest")),
        };
        let d = d.trim();
        let split = d.find(|c: char| !c.is_ascii_digit()).unwrap_or(d.len());
        let (num, unit) = d.split_at(split);
        let mult: u64 = match unit {
            "ns" => 1,
            "us" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            _ => return Err(format!("{d:?}: a duration needs a unit (ns, us, ms, s), e.g. 50us")),
        };
        let n: u64 = num.parse().map_err(|_| format!("{d:?}: not a whole number of {unit}"))?;
        let min_ns = n.checked_mul(mult).filter(|&v| v > 0);
        let min_ns = min_ns.ok_or_else(|| format!("{d:?}: must be above 0 and below 2^64 ns"))?;
        Ok(CnpPacing { min_ns, scope })
    }
}

impl std::fmt::Display for CnpPacing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ns = self.min_ns;
        let (n, unit) = match ns {
            _ if ns.is_multiple_of(1_000_000_000) => (ns / 1_000_000_000, "s"),
            _ if ns.is_multiple_of(1_000_000) => (ns / 1_000_000, "ms"),
            _ if ns.is_multiple_of(1_000) => (ns / 1_000, "us"),
            _ => (ns, "ns"),
        };
        write!(f, "{n}{unit},{}", self.scope.as_str())
    }
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
            cnp_min_interval: None,
            rnr_timer: None,
            expect_dscp: None,
            expect_cnp_dscp: None,
            expect_pcp: None,
        }
    }
}

impl Options {
    /// Whether a network configuration was stated (`--expect-dscp`, `--expect-cnp-dscp`,
    /// `--expect-pcp`): then the NET-* rules judge every RoCE frame.
    pub fn network_stated(&self) -> bool {
        self.expect_dscp.is_some() || self.expect_cnp_dscp.is_some() || self.expect_pcp.is_some()
    }

    /// What the connection model takes from these options.
    pub fn model(&self) -> ModelOptions {
        ModelOptions {
            max_flows: self.max_flows,
            pmtu: self.pmtu,
            reconnect_idle_ns: self.reconnect_idle_ns,
        }
    }
}
