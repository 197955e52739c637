//! What CM negotiated against what the wire shows: the REQ's primary path Local ACK
//! Timeout, Retry Count and RNR Retry Count (and the REP's RNR Retry Count) against the
//! timeouts and retries measured on the connection. IBTA lets a transport timer fire
//! between the configured value and four times it (C9-141); with a 10 % tolerance for
//! timestamps and timer granularity, a first-retry timeout outside 0.9 x T .. 4.4 x T, or
//! more retries of one PSN than the Retry Count, disagrees.

use serde::Serialize;

use super::{local_ack_timeout_ns, RnrWait, TimingReport};
use crate::connections::CmExchange;

/// Percent of slack on each side of the IBTA range.
pub const TOLERANCE_PERCENT: u64 = 10;

/// RNR Retry Count 7 means "retry for ever".
const RNR_INFINITE: u8 = 7;

/// One way the wire contradicts what CM negotiated (the sentence `stats` prints and the
/// `check` rule that reports it: REQ-CM-ACK-TIMEOUT, REQ-CM-RETRY-COUNT,
/// REQ-CM-RNR-RETRY-COUNT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disagreement {
    /// First retries came after `shortest_ns` to `longest_ns`, outside `range` (the REQ's
    /// Local ACK Timeout, 1x to 4x, with the tolerance; `None`: t = 0, no timeout).
    AckTimeout {
        /// First retries measured.
        first_retries: u64,
        /// The shortest first-retry timeout.
        shortest_ns: u64,
        /// The longest first-retry timeout.
        longest_ns: u64,
        /// What the Local ACK Timeout allows, in ns, tolerance included.
        range: Option<(u64, u64)>,
    },
    /// A PSN was retransmitted `retries` times after timeouts, more than the Retry Count.
    RetryCount {
        /// The most timeout retries of one PSN.
        retries: u32,
    },
    /// A PSN was retried `retries` times after RNR NAKs, more than `limit`.
    RnrRetryCount {
        /// The most RNR retries of one PSN.
        retries: u32,
        /// The RNR Retry Count that applies (the larger of the REQ's and the REP's).
        limit: u8,
    },
}

/// The timeouts 4.096 us x 2^t may fire after and still agree: 1x to 4x (C9-141), less and
/// plus [`TOLERANCE_PERCENT`]. `None` for t = 0 (no timeout).
pub fn ack_timeout_range(t: u8) -> Option<(u64, u64)> {
    let c = local_ack_timeout_ns(t)?;
    let tol = TOLERANCE_PERCENT;
    Some((c - c * tol / 100, 4 * c + 4 * c * tol / 100))
}

impl Disagreement {
    /// One sentence a NIC engineer reads (`negotiated.disagreements` in `stats`).
    pub fn sentence(&self, cm: &CmExchange) -> String {
        let tol = TOLERANCE_PERCENT;
        match *self {
            Disagreement::AckTimeout { first_retries, shortest_ns, longest_ns, range: None } => format!(
                "the REQ's Local ACK Timeout is 0 (no timeout), yet {first_retries} first retries came after timeouts of {shortest_ns} to {longest_ns} ns"
            ),
            Disagreement::AckTimeout { shortest_ns, longest_ns, range: Some((lo, hi)), .. } => {
                let c = local_ack_timeout_ns(cm.local_ack_timeout).unwrap_or(0);
                format!(
                    "first retries after {shortest_ns} to {longest_ns} ns, outside {lo}..{hi} ns (the REQ's Local ACK Timeout {} = {c} ns, 1x to 4x, {tol} % tolerance)",
                    cm.local_ack_timeout
                )
            }
            Disagreement::RetryCount { retries } => format!(
                "a PSN was retransmitted {retries} times after timeouts, more than the REQ's Retry Count {}",
                cm.retry_count
            ),
            Disagreement::RnrRetryCount { retries, limit } => format!(
                "a PSN was retried {retries} times after RNR NAKs, more than the RNR Retry Count {limit}"
            ),
        }
    }
}

/// The CM values and the verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Negotiated {
    /// The REQ frame these come from.
    pub req_frame: u64,
    /// The REQ's primary path Local ACK Timeout exponent t.
    pub local_ack_timeout: u8,
    /// 4.096 us x 2^t (null: t = 0, no timeout).
    pub local_ack_timeout_ns: Option<u64>,
    /// The REQ's Retry Count: retransmissions allowed after timeouts.
    pub retry_count: u8,
    /// The REQ's RNR Retry Count (7: infinite).
    pub rnr_retry_count: u8,
    /// The REP's RNR Retry Count, when the REP was captured.
    pub rep_rnr_retry_count: Option<u8>,
    /// The most retries of one PSN measured after timeouts, and after RNR NAKs.
    pub max_timeout_retry: u32,
    /// The most retries of one PSN measured after RNR NAKs.
    pub max_rnr_retry: u32,
    /// True when nothing measured contradicts what CM negotiated.
    pub agrees: bool,
    /// One sentence per disagreement.
    pub disagreements: Vec<String>,
    /// The same, as values (what `check` reports).
    #[serde(skip)]
    pub found: Vec<Disagreement>,
}

/// Compares the measured timers with a CM exchange.
pub fn compare(t: &TimingReport, cm: &CmExchange) -> Negotiated {
    let configured = local_ack_timeout_ns(cm.local_ack_timeout);
    let max_timeout_retry = t.timeout_retransmissions.iter().map(|x| x.retry).max().unwrap_or(0);
    let max_rnr_retry = rnr_retries(t);
    let mut found = Vec::new();
    if let Some(inf) = &t.inferred_timeout_exponent {
        let range = ack_timeout_range(cm.local_ack_timeout);
        let outside = range.is_none_or(|(lo, hi)| inf.shortest_ns < lo || inf.longest_ns > hi);
        if outside {
            found.push(Disagreement::AckTimeout {
                first_retries: inf.first_retries,
                shortest_ns: inf.shortest_ns,
                longest_ns: inf.longest_ns,
                range,
            });
        }
    }
    if max_timeout_retry > u32::from(cm.retry_count) {
        found.push(Disagreement::RetryCount { retries: max_timeout_retry });
    }
    if let Some(limit) = rnr_retry_limit(cm).filter(|&l| max_rnr_retry > u32::from(l)) {
        found.push(Disagreement::RnrRetryCount { retries: max_rnr_retry, limit });
    }
    Negotiated {
        req_frame: cm.req_frame,
        local_ack_timeout: cm.local_ack_timeout,
        local_ack_timeout_ns: configured,
        retry_count: cm.retry_count,
        rnr_retry_count: cm.rnr_retry_count,
        rep_rnr_retry_count: cm.rep_rnr_retry_count,
        max_timeout_retry,
        max_rnr_retry,
        agrees: found.is_empty(),
        disagreements: found.iter().map(|d| d.sentence(cm)).collect(),
        found,
    }
}

/// The RNR limit a connection's retries are judged against: the REQ's count is for the
/// passive side's requester, the REP's for the active side's; the two directions are measured
/// together, so the larger of the two. `None`: 7, retry for ever.
pub fn rnr_retry_limit(cm: &CmExchange) -> Option<u8> {
    let limit = cm.rnr_retry_count.max(cm.rep_rnr_retry_count.unwrap_or(0));
    (limit < RNR_INFINITE).then_some(limit)
}

/// Each listed RNR wait with its retry number: 1 for the first retry of a PSN after an RNR
/// NAK, 2 when the same PSN is RNR NAKed and retried again, and so on.
pub fn rnr_retry_numbers(waits: &[RnrWait]) -> impl Iterator<Item = (u32, &RnrWait)> {
    waits.iter().scan((0u32, None), |(run, last), w| {
        *run = if *last == Some(w.psn) { *run + 1 } else { 1 };
        *last = Some(w.psn);
        Some((*run, w))
    })
}

/// The most retries of one PSN after RNR NAKs among those listed.
fn rnr_retries(t: &TimingReport) -> u32 {
    rnr_retry_numbers(&t.rnr_waits).map(|(n, _)| n).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::psn::Psn;

    fn cm(req: u8, rep: Option<u8>) -> CmExchange {
        let ip = std::net::IpAddr::from([10, 0, 0, 1]);
        CmExchange {
            active: ip,
            passive: ip,
            active_qpn: 0x11,
            passive_qpn: Some(0x22),
            req_starting_psn: Psn::new(0),
            rep_starting_psn: Some(Psn::new(0)),
            pmtu: Some(1024),
            pmtu_code: 3,
            transport: "RC",
            outcome: "established",
            reject_reason: None,
            req_frame: 1,
            last_frame: 3,
            local_ack_timeout: 14,
            retry_count: 7,
            rnr_retry_count: req,
            rep_rnr_retry_count: rep,
            reqs: 1,
            first_req_frame: 1,
            mra: false,
        }
    }

    fn wait(psn: u32, nak: u64) -> RnrWait {
        RnrWait {
            frames: [nak, nak + 1],
            psn: Psn::new(psn),
            advertised_ns: 10_000,
            waited_ns: 20_000,
        }
    }

    /// RNR waits `psns` (one per retry, NAK frames 10, 12, ...) under the REQ's and REP's counts.
    fn verdict(psns: &[u32], req: u8, rep: Option<u8>) -> Negotiated {
        let mut t = super::super::Timing::default().report();
        t.rnr_waits = psns.iter().zip(0u64..).map(|(&p, k)| wait(p, 10 + 2 * k)).collect();
        compare(&t, &cm(req, rep))
    }

    #[test]
    fn retries_of_one_psn_are_numbered_in_a_run() {
        let w = [wait(5, 1), wait(5, 3), wait(6, 5), wait(5, 7)];
        let n: Vec<(u32, u32)> = rnr_retry_numbers(&w).map(|(n, w)| (n, w.psn.value())).collect();
        assert_eq!(n, [(1, 5), (2, 5), (1, 6), (1, 5)]);
    }

    #[test]
    fn more_rnr_retries_than_the_count_disagree() {
        let v = verdict(&[5, 5, 5], 2, Some(2));
        assert_eq!(v.max_rnr_retry, 3);
        assert_eq!(v.found, [Disagreement::RnrRetryCount { retries: 3, limit: 2 }]);
        // The larger of the REQ's and the REP's count is the limit.
        assert_eq!(verdict(&[5, 5, 5], 2, Some(3)).found, []);
        assert_eq!(verdict(&[5, 5, 5], 3, None).found, []);
    }

    #[test]
    fn the_count_itself_and_seven_agree() {
        assert!(verdict(&[5, 5], 2, Some(2)).agrees);
        // Three PSNs retried twice each: no PSN beyond 2.
        assert!(verdict(&[5, 5, 6, 6, 7, 7], 2, Some(2)).agrees);
        let forever = verdict(&[5; 20], 7, Some(0));
        assert_eq!((forever.max_rnr_retry, forever.agrees), (20, true));
        assert_eq!(rnr_retry_limit(&cm(7, Some(7))), None);
        assert_eq!(rnr_retry_limit(&cm(0, Some(4))), Some(4));
    }
}
