//! Findings: a rule, the frames that prove it, the connection, the PSN, and one sentence.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;

use serde::Serialize;

use crate::rules::{Rule, RuleSet, Severity};

/// The two ends of a connection as the report names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ConnId {
    pub a: IpAddr,
    /// QPN on side a (the DestQP of b -> a packets), when known.
    pub qpn_a: Option<u32>,
    pub b: IpAddr,
    /// QPN on side b (the DestQP of a -> b packets).
    pub qpn_b: Option<u32>,
}

impl fmt::Display for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = |q: Option<u32>| q.map_or("?".to_string(), |q| format!("0x{q:06x}"));
        write!(f, "{} QP {} <-> {} QP {}", self.a, q(self.qpn_a), self.b, q(self.qpn_b))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    /// Frames that prove it (1-based, as Wireshark counts).
    pub frames: Vec<u64>,
    /// The connection, when the finding belongs to one.
    pub connection: Option<ConnId>,
    pub psn: Option<u32>,
    pub message: String,
}

/// Where findings go: applies the rule set, caps each (connection, rule) at a fixed count
/// so a broken capture cannot grow the checker's memory, and counts what it drops.
#[derive(Debug)]
pub struct Sink {
    pub rules: RuleSet,
    pub cap_per_rule: u32,
    /// Per-(connection, rule) counters kept at most; beyond, they start over (memory stays
    /// bounded when findings come from more connections than the checker tracks, e.g. UD).
    pub max_counters: usize,
    pub out: Vec<Finding>,
    counts: HashMap<(Option<ConnId>, &'static str), u32>,
    pub suppressed: u64,
    pub errors: u64,
    pub warnings: u64,
}

impl Sink {
    pub fn new(rules: RuleSet, cap_per_rule: u32, max_counters: usize) -> Self {
        Sink {
            rules,
            cap_per_rule,
            max_counters,
            out: Vec::new(),
            counts: HashMap::new(),
            suppressed: 0,
            errors: 0,
            warnings: 0,
        }
    }

    /// Reports a finding of `rule` (at the rule's severity, or `severity` when given).
    pub fn report(
        &mut self,
        rule: &Rule,
        severity: Option<Severity>,
        frames: &[u64],
        connection: Option<ConnId>,
        psn: Option<u32>,
        message: impl FnOnce() -> String,
    ) {
        if !self.rules.is_enabled(rule) {
            return;
        }
        let severity = severity.unwrap_or(rule.severity);
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        if self.counts.len() >= self.max_counters
            && !self.counts.contains_key(&(connection, rule.id))
        {
            self.counts.clear();
        }
        let n = self.counts.entry((connection, rule.id)).or_insert(0);
        *n += 1;
        if *n > self.cap_per_rule {
            self.suppressed += 1;
            return;
        }
        self.out.push(Finding {
            rule: rule.id,
            severity,
            frames: frames.to_vec(),
            connection,
            psn,
            message: message(),
        });
    }

    /// Findings reported since the last call.
    pub fn take(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.out)
    }

    /// Entries in the per-(connection, rule) counter (for the state accounting).
    pub fn tracked(&self) -> usize {
        self.counts.len()
    }

    /// Forgets the counters of a connection that is evicted.
    pub fn forget(&mut self, conn: &ConnId) {
        self.counts.retain(|(c, _), _| c.as_ref() != Some(conn));
    }
}

/// A PSN as engineers read it in reports: decimal and hex.
pub fn psn(p: u32) -> String {
    format!("{p} (0x{p:06x})")
}
