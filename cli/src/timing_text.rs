//! The timing lines of `stats` (text): one line per measured latency, the RNR waits and the
//! timeout retransmissions with the exponent they imply. Times are exact nanoseconds
//! written in the unit that reads best; every time is the capture's clock (docs/timing.md).

use std::fmt::Write as _;

use roce_conformance::internal::timing::congestion::{CnpScopesJson, CongestionJson, Interval};
use roce_conformance::{Summary, TimingReport};

/// Retransmissions and RNR waits written one per line before "... more".
const SHOWN: usize = 8;

/// A duration: ns below 1 us, then us or ms with every digit down to the nanosecond.
pub fn duration(ns: u64) -> String {
    match ns {
        0..=999 => format!("{ns} ns"),
        1_000..=999_999 => trim(format!("{}.{:03}", ns / 1_000, ns % 1_000)) + " us",
        1_000_000..=999_999_999 => {
            trim(format!("{}.{:06}", ns / 1_000_000, ns % 1_000_000)) + " ms"
        }
        _ => trim(format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)) + " s",
    }
}

fn trim(s: String) -> String {
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn summary(t: &mut String, name: &str, s: Option<&Summary>) {
    let Some(s) = s else { return };
    let _ = writeln!(
        t,
        "      {name:<24} {:>6}  p50 {}, p90 {}, p99 {}, max {}",
        s.count,
        duration(s.p50),
        duration(s.p90),
        duration(s.p99),
        duration(s.max)
    );
}

/// Writes the section (nothing when nothing was measured).
pub fn write(t: &mut String, r: &TimingReport) {
    let any = r.ack_latency_ns.is_some()
        || r.read_latency_ns.first_response.is_some()
        || r.read_latency_ns.last_response.is_some()
        || r.atomic_latency_ns.is_some()
        || r.nak_generation_ns.is_some()
        || r.nak_reaction_ns.is_some()
        || !r.rnr_waits.is_empty()
        || !r.timeout_retransmissions.is_empty();
    if !any {
        return;
    }
    let _ = writeln!(t, "    timing (capture clock)          count");
    summary(t, "ACK latency", r.ack_latency_ns.as_ref());
    summary(t, "READ first response", r.read_latency_ns.first_response.as_ref());
    summary(t, "READ last response", r.read_latency_ns.last_response.as_ref());
    summary(t, "atomic latency", r.atomic_latency_ns.as_ref());
    summary(t, "NAK generation", r.nak_generation_ns.as_ref());
    summary(t, "NAK reaction", r.nak_reaction_ns.as_ref());
    for w in r.rnr_waits.iter().take(SHOWN) {
        let _ = writeln!(
            t,
            "      RNR NAK PSN {}: advertised {}, waited {}  [frames {}, {}]",
            w.psn.value(),
            duration(w.advertised_ns),
            duration(w.waited_ns),
            w.frames[0],
            w.frames[1]
        );
    }
    let more = r.rnr_waits.len().saturating_sub(SHOWN) as u64 + r.rnr_waits_not_listed;
    if more > 0 {
        let _ = writeln!(t, "      ... {more} more RNR waits");
    }
    for x in r.timeout_retransmissions.iter().take(SHOWN) {
        let _ = writeln!(
            t,
            "      timeout: PSN {} retry {} after {}  [frames {}, {}]",
            x.psn.value(),
            x.retry,
            duration(x.measured_ns),
            x.frames[0],
            x.frames[1]
        );
    }
    let more = r.timeout_retransmissions.len().saturating_sub(SHOWN) as u64
        + r.timeout_retransmissions_not_listed;
    if more > 0 {
        let _ = writeln!(t, "      ... {more} more timeout retransmissions");
    }
    if let Some(b) = r.backoff {
        let _ = writeln!(t, "      backoff across retries: {b}");
    }
    if let Some(i) = &r.inferred_timeout_exponent {
        let _ = writeln!(
            t,
            "      local ACK timeout: consistent with t = {} (4.096 us x 2^{} = {}), from {} first retries of {} to {}",
            i.exponent,
            i.exponent,
            duration(i.timeout_ns),
            i.first_retries,
            duration(i.shortest_ns),
            duration(i.longest_ns)
        );
    }
    if let Some(n) = r
        .negotiated
        .as_ref()
        .filter(|_| !r.timeout_retransmissions.is_empty() || !r.rnr_waits.is_empty())
    {
        let timeout = n.local_ack_timeout_ns.map_or("none".to_string(), duration);
        let verdict =
            if n.agrees { "the wire agrees".to_string() } else { n.disagreements.join("; ") };
        let _ = writeln!(
            t,
            "      CM REQ (frame {}): Local ACK Timeout {} ({timeout}), Retry Count {}, RNR Retry Count {}: {verdict}",
            n.req_frame, n.local_ack_timeout, n.retry_count, n.rnr_retry_count
        );
    }
}

/// When both directions of a connection sent requests: each requester's own latencies (ACK,
/// READ, atomic), timeouts and the exponent they imply, and RNR waits, so a disagreement
/// names the side whose timer it is (the section above has both together).
pub fn write_by_requester(t: &mut String, dirs: &[crate::stats::Direction]) {
    let timed: Vec<_> = dirs.iter().filter_map(|d| Some((d, d.timing.as_ref()?))).collect();
    if timed.len() < 2 {
        return;
    }
    for (d, r) in timed {
        let mut parts = Vec::new();
        for (name, s) in [
            ("ACK latency", &r.ack_latency_ns),
            ("READ last response", &r.read_latency_ns.last_response),
            ("atomic latency", &r.atomic_latency_ns),
        ] {
            if let Some(s) = s {
                parts.push(format!("{name} p50 {} ({})", duration(s.p50), s.count));
            }
        }
        let timeouts =
            r.timeout_retransmissions.len() as u64 + r.timeout_retransmissions_not_listed;
        if timeouts > 0 {
            parts.push(format!("{timeouts} timeout retransmissions"));
        }
        if let Some(i) = &r.inferred_timeout_exponent {
            parts.push(format!("consistent with t = {} ({})", i.exponent, duration(i.timeout_ns)));
        }
        let waits = r.rnr_waits.len() as u64 + r.rnr_waits_not_listed;
        if waits > 0 {
            parts.push(format!("{waits} RNR waits"));
        }
        if parts.is_empty() {
            continue;
        }
        let _ = writeln!(
            t,
            "      requester {} -> {} (DestQP 0x{:06x}): {}",
            d.src,
            d.dst,
            d.dest_qp,
            parts.join(", ")
        );
    }
}

pub(crate) fn rate(bps: u64) -> String {
    match bps {
        0..=999_999 => format!("{:.3} kb/s", bps as f64 / 1e3),
        1_000_000..=999_999_999 => format!("{:.3} Mb/s", bps as f64 / 1e6),
        _ => format!("{:.3} Gb/s", bps as f64 / 1e9),
    }
}

fn interval(i: &Interval) -> String {
    format!(
        "{} intervals, min {}, p50 {}, max {}",
        i.count,
        duration(i.min),
        duration(i.p50),
        duration(i.max)
    )
}

/// The congestion lines of a connection (nothing without CE marks or CNPs).
pub fn write_congestion(t: &mut String, c: &CongestionJson) {
    if c.ce_marked == 0 && c.cnps == 0 {
        return;
    }
    let _ = writeln!(
        t,
        "    congestion (capture clock): {} CE-marked packets, {} CNPs ({} unpaired)",
        c.ce_marked, c.cnps, c.cnps_unpaired
    );
    summary(t, "ECN-CE -> CNP", c.ce_to_cnp_ns.as_ref());
    if let Some(i) = &c.cnp_interval_ns.qp {
        let _ = writeln!(t, "      CNP interval per QP: {}", interval(i));
    }
    let r = &c.rate_before_after_cnp;
    if r.reactions > 0 {
        let _ = writeln!(
            t,
            "      sender rate around CNPs ({}): {} CNPs, slowed after {}",
            r.window, r.reactions, r.slowed
        );
    }
    for x in r.listed.iter().take(SHOWN) {
        let after = if x.after_ns == 0 {
            "nothing after it".to_string()
        } else {
            format!("{} ({} B in {})", rate(x.after_bps), x.after_bytes, duration(x.after_ns))
        };
        let _ = writeln!(
            t,
            "      CNP frame {}: {} ({} B in {}) -> {after}",
            x.cnp_frame,
            rate(x.before_bps),
            x.before_bytes,
            duration(x.before_ns),
        );
    }
    let more = r.listed.len().saturating_sub(SHOWN) as u64 + r.not_listed;
    if more > 0 {
        let _ = writeln!(t, "      ... {more} more CNPs");
    }
}

/// CNP pacing across connections (nothing without CNPs).
pub fn write_cnp_scopes(t: &mut String, s: &CnpScopesJson) {
    if s.ip_pairs.is_empty() && s.cnps_not_tracked == 0 {
        return;
    }
    let _ = writeln!(t, "\nCNP pacing (capture clock)");
    for p in &s.ip_pairs {
        let i = p.cnp_interval_ns.as_ref().map_or("no interval".to_string(), interval);
        let _ = writeln!(t, "  IP pair {} -> {}: {} CNPs, {i}", p.src, p.dst, p.cnps);
    }
    for d in &s.destinations {
        let i = d.cnp_interval_ns.as_ref().map_or("no interval".to_string(), interval);
        let _ = writeln!(t, "  destination {}: {} CNPs, {i}", d.dst, d.cnps);
    }
    if s.cnps_not_tracked > 0 {
        let _ = writeln!(
            t,
            "  {} CNPs of IP pairs or destinations beyond --max-flows not tracked",
            s.cnps_not_tracked
        );
    }
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_keep_every_nanosecond() {
        assert_eq!(duration(812), "812 ns");
        assert_eq!(duration(12_500), "12.5 us");
        assert_eq!(duration(67_108_864), "67.108864 ms");
        assert_eq!(duration(2_000_000_001), "2.000000001 s");
        assert_eq!(duration(5_000_000), "5 ms");
    }
}
