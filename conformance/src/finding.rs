//! Findings and the judge that collects them. Rule code says what it proved through
//! [`Judge::report`] (the rule's own severity) or [`Judge::report_as`] (a severity of its
//! own, for the few rules that have a warning form); the judge applies the rule set, caps
//! each (connection, rule) so a broken capture cannot grow memory, and counts what it drops.

use serde::Serialize;

use crate::connections::ConnId;
use crate::hash::FastHashMap;
use crate::psn::Psn;
use crate::rules::{self, Rule, RuleSet, Severity, Side};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
/// One rule broken, with the frames that prove it: what `check` prints one line of.
pub struct Finding {
    /// The rule's catalog ID (`REQ-GBN`, ...): stable, what users filter and suppress by.
    pub rule: &'static str,
    /// The rule's severity, or warning for the few rules that also have a warning form.
    pub severity: Severity,
    /// Whom the rule judges (the catalog's side: requester, responder, capture, ...).
    pub side: Side,
    /// Frames that prove it (1-based, as Wireshark counts).
    pub frames: Vec<u64>,
    /// The connection, when the finding belongs to one.
    pub connection: Option<ConnId>,
    /// The PSN the finding is about, when there is one.
    #[serde(serialize_with = "crate::json::psn_or_null")]
    pub psn: Option<Psn>,
    /// One sentence saying what was seen against what the rule expects.
    pub message: String,
}

/// Where findings go.
#[derive(Debug, Clone)]
pub(crate) struct Judge {
    rules: RuleSet,
    cap_per_rule: u32,
    /// Per-(connection, rule) counters kept at most; beyond, they start over (memory stays
    /// bounded when findings come from more connections than the checker tracks, e.g. UD).
    max_counters: usize,
    out: Vec<Finding>,
    /// Findings counted per connection and rule (a connection that ends is forgotten in one
    /// step).
    counts: FastHashMap<Option<ConnId>, Vec<(&'static str, u32)>>,
    counters: usize,
    /// The most counters held at once (a split run sums them to tell whether one run would
    /// have started them over).
    pub(crate) peak_counters: usize,
    pub(crate) suppressed: u64,
    pub(crate) errors: u64,
    pub(crate) warnings: u64,
    /// Findings of each rule of [`rules::ALL`] (same index), listed or not: one slot per
    /// rule, so the summary costs nothing per finding.
    totals: Vec<RuleCount>,
}

/// How many findings one rule produced in a run, by severity (listed and suppressed alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RuleCount {
    /// The rule's catalog ID.
    pub rule: &'static str,
    /// Whom the rule judges.
    pub side: Side,
    /// Findings reported as errors.
    pub errors: u64,
    /// Findings reported as warnings.
    pub warnings: u64,
}

impl RuleCount {
    /// Findings of both severities.
    pub fn total(&self) -> u64 {
        self.errors + self.warnings
    }
}

impl Judge {
    pub(crate) fn new(rules: RuleSet, cap_per_rule: u32, max_counters: usize) -> Self {
        Judge {
            rules,
            cap_per_rule,
            max_counters,
            out: Vec::new(),
            counts: FastHashMap::default(),
            counters: 0,
            peak_counters: 0,
            suppressed: 0,
            errors: 0,
            warnings: 0,
            totals: rules::ALL
                .iter()
                .map(|r| RuleCount { rule: r.id, side: r.side, errors: 0, warnings: 0 })
                .collect(),
        }
    }

    /// The rules that produced findings, in catalog order.
    pub(crate) fn totals(&self) -> Vec<RuleCount> {
        self.totals.iter().copied().filter(|c| c.total() > 0).collect()
    }

    /// Reports a finding of `rule` at the rule's severity.
    pub(crate) fn report(
        &mut self,
        rule: &Rule,
        frames: &[u64],
        connection: Option<ConnId>,
        psn: Option<Psn>,
        message: impl FnOnce() -> String,
    ) {
        self.report_as(rule, rule.severity, frames, connection, psn, message);
    }

    /// Reports a finding of `rule` at `severity` (a rule's warning form).
    pub(crate) fn report_as(
        &mut self,
        rule: &Rule,
        severity: Severity,
        frames: &[u64],
        connection: Option<ConnId>,
        psn: Option<Psn>,
        message: impl FnOnce() -> String,
    ) {
        if !self.rules.is_enabled(rule) {
            return;
        }
        let total = self.totals.iter_mut().find(|c| c.rule == rule.id);
        match (severity, total) {
            (Severity::Error, Some(c)) => c.errors += 1,
            (Severity::Warning, Some(c)) => c.warnings += 1,
            (_, None) => {}
        }
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        if self.counters >= self.max_counters {
            self.counts.clear();
            self.counters = 0;
        }
        let per_rule = self.counts.entry(connection).or_default();
        let n = match per_rule.iter_mut().find(|(id, _)| *id == rule.id) {
            Some((_, n)) => n,
            None => {
                self.counters += 1;
                self.peak_counters = self.peak_counters.max(self.counters);
                per_rule.push((rule.id, 0));
                match per_rule.last_mut() {
                    Some((_, n)) => n,
                    None => return,
                }
            }
        };
        *n += 1;
        if *n > self.cap_per_rule {
            self.suppressed += 1;
            return;
        }
        self.out.push(Finding {
            rule: rule.id,
            severity,
            side: rule.side,
            frames: frames.to_vec(),
            connection,
            psn,
            message: message(),
        });
    }

    /// The findings reported and not taken yet, from the `n`th on.
    pub(crate) fn since(&self, n: usize) -> &[Finding] {
        self.out.get(n..).unwrap_or(&[])
    }

    /// Reports a finding another judge held (its rule's set, caps and counts apply here).
    pub(crate) fn absorb(&mut self, f: Finding) {
        let Some(rule) = rules::ALL.iter().find(|r| r.id == f.rule) else { return };
        let Finding { severity, frames, connection, psn, message, .. } = f;
        self.report_as(rule, severity, &frames, connection, psn, || message);
    }

    /// Findings reported and not taken yet.
    pub(crate) fn pending(&self) -> usize {
        self.out.len()
    }

    /// The cap on findings kept per (connection, rule), and on counters.
    pub(crate) fn caps(&self) -> (u32, usize) {
        (self.cap_per_rule, self.max_counters)
    }

    /// Findings reported since the last call.
    pub(crate) fn take(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.out)
    }

    /// Entries in the per-(connection, rule) counter (for the state accounting).
    pub(crate) fn tracked(&self) -> usize {
        self.counters
    }

    /// Forgets the counters of a connection that ended.
    pub(crate) fn forget(&mut self, conn: &ConnId) {
        if let Some(v) = self.counts.remove(&Some(*conn)) {
            self.counters -= v.len();
        }
    }
}
