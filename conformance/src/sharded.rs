//! One run of the checker split by host pair (`check --threads N`): N checkers
//! ([`Checker::for_shard`]), each fed the frames of its host pairs, and the merge of their
//! reports into the report one checker fed every frame would give, byte for byte.
//!
//! Why this can be exact: the connection model is per host pair (both directions of every QP
//! between two hosts, their CM exchange and their CNPs carry the two addresses; CM IDs are
//! keyed by the pair too), and so is every rule but CAP-TIME. What the merge has to rebuild:
//! - **the order of the findings**: one run's is the order they were proven (frame by frame,
//!   then, at the end, the incarnations in flow order, then the CE bursts without a CNP by
//!   their first frame; [`crate::checker::Proven`]). Each shard tags its findings with that
//!   key; a stable sort by it interleaves the shards as one run would;
//! - **CAP-TIME**: one finding per capture. Each shard counts the steps back of its own
//!   frames against the capture's clock (it is ticked with every frame's time); the merge
//!   adds them up and reports once, last, as one run does;
//! - **the counts** (frames, errors, warnings, suppressed, per rule) are sums;
//! - **the connections listed**: the busiest `--max-flows` of the union of each shard's
//!   busiest, in a total order (`Retained`), so exactly one run's.
//!
//! What cannot be rebuilt is a cap reached *across* shards: one run evicts a connection when
//! all host pairs together exceed `--max-flows`, and starts over tables (finding counters,
//! one-sided names, CM IDs, CNP times) when all together exceed theirs; each shard sees only
//! its own. The shards report how full each table got ([`Usage`]); when their sum says one
//! run could have reached a cap, [`merge_shards`] refuses ([`NotMergeable`]) and the caller
//! runs the capture on one checker instead. The same for `--cnp-min-interval ...,dest`, whose
//! scope (one destination, any sender) spans host pairs.

use crate::checker::{ClockSteps, ConnectionReport, Proven, Report, StateStats};
use crate::connections::{busiest_first, capture_order, ModelUsage};
use crate::finding::{Finding, Judge, RuleCount};
use crate::options::{CnpPacing, CnpScope, Options};
use crate::rules;

/// How full a shard's capped tables got.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Usage {
    pub(crate) model: ModelUsage,
    /// The most (connection, rule) finding counters held at once.
    pub(crate) counters_peak: usize,
    /// The congestion tables' sizes at the end (they only grow until their cap clears them).
    pub(crate) congestion: [usize; 5],
    pub(crate) congestion_cap: usize,
    pub(crate) cnp_min_interval: Option<CnpPacing>,
    /// Findings kept per (connection, rule), and the finding counters' cap.
    pub(crate) caps: (u32, usize),
}

/// What one shard's checker gives the merge ([`crate::Checker::finish_shard`]).
#[derive(Debug)]
pub struct ShardReport {
    report: Report,
    /// Where each of `report.findings` was proven (same index).
    proven: Vec<Proven>,
    clock: ClockSteps,
    usage: Usage,
}

impl ShardReport {
    pub(crate) fn new(
        report: Report,
        proven: Vec<Proven>,
        clock: ClockSteps,
        usage: Usage,
    ) -> Self {
        ShardReport { report, proven, clock, usage }
    }

    /// The shard's own report (its findings in proof order, without CAP-TIME).
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// For each of [`report()`](ShardReport::report)`.findings` (same index), where one run
    /// proves it, as bytes: for a caller that merges the shards' findings itself (a Spark
    /// job, a binding) instead of through [`merge_shards`]. Sorting every shard's findings
    /// by their keys, compared as unsigned bytes (Rust's `Vec<u8>` order, Spark's and
    /// DuckDB's BINARY order, Python's `bytes`), keeping a shard's own order among equal keys
    /// (a stable sort, or `(key, index)`), gives one checker's order of findings. Equal keys
    /// only occur within one shard: a frame, a flow and a CE burst each belong to one host
    /// pair.
    ///
    /// A key is a tag byte (0: proven while frame N was fed, 1: at the end, when a flow's
    /// incarnation was finished, 2: at the end, a CE burst begun at frame N) and then, big
    /// endian, N (8 bytes) or the flow: its source and destination addresses, each a family
    /// byte (0 IPv4, 1 IPv6) and its 4 or 16 octets, then its DestQP (4 bytes).
    ///
    /// What the keys do not merge: the counts (sums of each shard's), the connections
    /// listed past `--max-flows`, and CAP-TIME, which one run reports last from the whole
    /// capture's clock ([`merge_shards`] does all three). A checker not made by
    /// [`Checker::for_shard`](crate::Checker::for_shard) places no finding: the list is
    /// empty.
    ///
    /// ```
    /// use roce_conformance::{Checker, Finding, Options, ShardReport};
    ///
    /// // One checker per host-pair group, fed its frames in capture order with
    /// // `feed_shard` (`feed_undecoded`, `tick` for the frames of other groups).
    /// let shards: Vec<ShardReport> =
    ///     (0..3).map(|_| Checker::for_shard(Options::default()).finish_shard()).collect();
    /// let mut all: Vec<(Vec<u8>, &Finding)> = shards
    ///     .iter()
    ///     .flat_map(|s| s.order_keys().into_iter().zip(&s.report().findings))
    ///     .collect();
    /// all.sort_by(|a, b| a.0.cmp(&b.0));
    /// assert!(all.is_empty());
    /// ```
    pub fn order_keys(&self) -> Vec<Vec<u8>> {
        self.proven.iter().map(Proven::order_key).collect()
    }
}

/// Why the shards' reports do not add up to one run's (a cap one run may have reached, or a
/// rule whose scope spans host pairs): run the capture on one checker instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotMergeable(pub String);

impl std::fmt::Display for NotMergeable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether checkers split by host pair can give one run's report under `opts` at all
/// (`--cnp-min-interval D,dest` compares CNPs of different host pairs).
pub fn can_split(opts: &Options) -> bool {
    !matches!(opts.cnp_min_interval, Some(CnpPacing { scope: CnpScope::Dest, .. }))
}

/// The report one checker fed every frame would give, from the reports of checkers that
/// were each fed the frames of their host pairs ([`crate::Checker::for_shard`], every frame
/// in exactly one of them) and ticked with the capture's clock. `Err` when one run could
/// have reached a cap that the shards, each seeing a part, did not (see the module doc).
pub fn merge_shards(opts: &Options, shards: Vec<ShardReport>) -> Result<Report, NotMergeable> {
    refuse_caps(opts, &shards)?;
    let cap = opts.max_flows.max(1);
    let mut judge = Judge::new(opts.rules.clone(), opts.max_findings_per_rule, 4 * cap);
    let mut clock = ClockSteps::default();
    let mut tagged: Vec<(Proven, Finding)> = Vec::new();
    let mut connections: Vec<ConnectionReport> = Vec::new();
    let mut not_listed = 0u64;
    let mut sum = Report {
        findings: Vec::new(),
        connections: Vec::new(),
        connections_not_listed: 0,
        frames: 0,
        roce_frames: 0,
        ib_frames: 0,
        ib_unmodelled: 0,
        errors: 0,
        warnings: 0,
        suppressed: 0,
        by_rule: Vec::new(),
        state: StateStats::default(),
    };
    let mut by_rule: Vec<RuleCount> = rules::ALL
        .iter()
        .map(|r| RuleCount { rule: r.id, side: r.side, errors: 0, warnings: 0 })
        .collect();
    for s in shards {
        let ShardReport { report: r, proven, clock: c, .. } = s;
        if proven.len() != r.findings.len() {
            return Err(NotMergeable("a shard's findings were not all placed".to_string()));
        }
        if r.findings.iter().any(|f| f.connection.is_none()) {
            // Only CAP-EVICT (refused above) and CAP-TIME (the merge's own) have none.
            return Err(NotMergeable("a shard reported a finding of the whole capture".into()));
        }
        clock = clock.merge(c);
        tagged.extend(proven.into_iter().zip(r.findings));
        connections.extend(r.connections);
        not_listed += r.connections_not_listed;
        sum.frames += r.frames;
        sum.roce_frames += r.roce_frames;
        sum.ib_frames += r.ib_frames;
        sum.ib_unmodelled += r.ib_unmodelled;
        sum.errors += r.errors;
        sum.warnings += r.warnings;
        sum.suppressed += r.suppressed;
        add_rules(&mut by_rule, &r.by_rule);
        sum.state = add_state(sum.state, r.state);
    }
    // Stable: within one key every finding comes from one shard, in its own order.
    tagged.sort_by_key(|(p, _)| *p);
    let mut findings: Vec<Finding> = tagged.into_iter().map(|(_, f)| f).collect();
    clock.report(&mut judge);
    findings.extend(judge.take());
    add_rules(&mut by_rule, &judge.totals());
    if connections.len() > cap {
        connections.sort_by(|a, b| busiest_first(&a.info, &b.info));
        not_listed += (connections.len() - cap) as u64;
        connections.truncate(cap);
    }
    connections.sort_by(|a, b| capture_order(&a.info, &b.info));
    Ok(Report {
        findings,
        connections,
        connections_not_listed: not_listed,
        errors: sum.errors + judge.errors,
        warnings: sum.warnings + judge.warnings,
        suppressed: sum.suppressed + judge.suppressed,
        by_rule: by_rule.into_iter().filter(|c| c.total() > 0).collect(),
        ..sum
    })
}

/// The caps one run may have reached where the shards did not.
fn refuse_caps(opts: &Options, shards: &[ShardReport]) -> Result<(), NotMergeable> {
    if !can_split(opts) {
        return Err(NotMergeable(
            "--cnp-min-interval ...,dest compares CNPs of different host pairs".to_string(),
        ));
    }
    let Some(first) = shards.first() else { return Ok(()) };
    let sum = |f: &dyn Fn(&Usage) -> usize| shards.iter().map(|s| f(&s.usage)).sum::<usize>();
    let u = first.usage;
    let cap = opts.max_flows.max(1);
    let refuse =
        |what: &str| Err(NotMergeable(format!("{what}: one run may have reached its cap")));
    if shards.iter().any(|s| s.usage.model.evicted > 0) || sum(&|u| u.model.flows) > cap {
        return refuse("more flows than --max-flows");
    }
    if sum(&|u| u.model.aliases) > 4 * cap {
        return refuse("the one-sided names of connections");
    }
    if sum(&|u| u.counters_peak) >= u.caps.1 {
        return refuse("the finding counters");
    }
    if sum(&|u| u.model.cm_pending_peak) >= u.model.cm_pending_cap {
        return refuse("the CM REQs waiting for their REP");
    }
    if sum(&|u| u.model.cm_open_peak) + 2 > u.model.cm_open_cap {
        return refuse("the CM IDs of open connections");
    }
    for i in 0..u.congestion.len() {
        if sum(&|u| u.congestion.get(i).copied().unwrap_or(0)) > u.congestion_cap {
            return refuse("the congestion tables");
        }
    }
    if u.cnp_min_interval != opts.cnp_min_interval {
        return Err(NotMergeable("the shards were run with other options".to_string()));
    }
    Ok(())
}

fn add_rules(into: &mut [RuleCount], from: &[RuleCount]) {
    for c in from {
        if let Some(t) = into.iter_mut().find(|t| t.rule == c.rule) {
            t.errors += c.errors;
            t.warnings += c.warnings;
        }
    }
}

/// The state of all shards: each field summed.
fn add_state(a: StateStats, b: StateStats) -> StateStats {
    StateStats {
        flows: a.flows + b.flows,
        pairing_index: a.pairing_index + b.pairing_index,
        lru_queue: a.lru_queue + b.lru_queue,
        cm_pending: a.cm_pending + b.cm_pending,
        finding_counters: a.finding_counters + b.finding_counters,
        remembered_requests: a.remembered_requests + b.remembered_requests,
        congestion: a.congestion + b.congestion,
        listed_connections: a.listed_connections + b.listed_connections,
        evicted: a.evicted + b.evicted,
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::*;
    use crate::FlowKey;

    #[test]
    fn order_keys_sort_as_where_the_findings_were_proven() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let addrs = ["10.0.0.1", "10.0.0.2", "9.255.255.255", "255.0.0.0", "::1", "::", "fe80::1"];
        let addrs: Vec<IpAddr> = addrs.iter().map(|a| ip(a)).collect();
        // IpAddr orders every IPv4 address before every IPv6 one (the key's family byte).
        assert!(ip("255.255.255.255") < ip("::"));
        let mut proven = Vec::new();
        for n in [0u64, 1, 2, 255, 256, 1 << 32, u64::MAX - 1, u64::MAX] {
            proven.push(Proven::Frame(n));
            proven.push(Proven::Burst(n));
        }
        for &src in &addrs {
            for &dst in &addrs {
                for dest_qp in [0u32, 1, 0x100, 0xff_ffff, u32::MAX] {
                    proven.push(Proven::End(FlowKey { src, dst, dest_qp }));
                }
            }
        }
        // A scrambled start (the generation order is nearly sorted already).
        proven.reverse();
        let n = proven.len();
        proven.rotate_left(n / 3);
        let mut by_value = proven.clone();
        by_value.sort();
        let mut by_key: Vec<(Vec<u8>, Proven)> =
            proven.iter().map(|p| (p.order_key(), *p)).collect();
        by_key.sort_by(|a, b| a.0.cmp(&b.0));
        let by_key: Vec<Proven> = by_key.into_iter().map(|(_, p)| p).collect();
        assert_eq!(by_key, by_value);
        // Distinct values, distinct keys (equal keys are equal values, nothing else).
        let mut keys: Vec<Vec<u8>> = proven.iter().map(Proven::order_key).collect();
        keys.sort();
        keys.dedup();
        by_value.dedup();
        assert_eq!(keys.len(), by_value.len());
        // The layout: the tag, then big-endian numbers; a flow's family bytes and octets.
        assert_eq!(Proven::Frame(0x0102).order_key(), [0, 0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(Proven::Burst(1).order_key(), [2, 0, 0, 0, 0, 0, 0, 0, 1]);
        let k = FlowKey { src: ip("10.0.0.1"), dst: ip("::1"), dest_qp: 0x0102_0304 };
        let mut want = vec![1, 0, 10, 0, 0, 1, 1];
        want.extend_from_slice(&[0; 15]);
        want.extend_from_slice(&[1, 1, 2, 3, 4]);
        assert_eq!(Proven::End(k).order_key(), want);
    }
}
