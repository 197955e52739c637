//! What a filter means to `check`, `report` and `stats`' connection table: it selects
//! connections, never packets. A connection incarnation is selected when one of its frames
//! matches, and it is then judged on all its frames, since judging a subset of a
//! connection's packets would invent PSN gaps and missing ACKs.
//!
//! How, in one streaming pass: the checker (or `stats`' model) is fed every frame, as
//! without a filter; after each frame that matches, the QP-pair direction it belongs to and
//! its incarnation (as the connection model knows it just after the frame) are remembered
//! here. At the end, the findings and connections whose connection is not remembered are
//! dropped and the totals counted again. The cost is the filter's evaluation per frame and
//! one hash set entry per selected connection direction, capped at [`MAX_SELECTED`] (beyond,
//! further connections are not selected, and [`Selection::overflow`] says so). Findings that
//! belong to no connection (CAP-TIME: the capture's clock) are about the capture and stay.

use std::collections::HashSet;

use roce_conformance::{ConnId, FlowKey, Report, RuleCount, Severity};

use super::DisplayFilter;
use crate::Decoded;

/// The `selection` member of `stats`' and `check`'s JSON (docs/json.md).
#[derive(Debug, serde::Serialize)]
pub struct SelectionJson<'a> {
    /// The expression (`--conn` as the expression it stands for).
    pub filter: &'a str,
    /// Frames the expression matched.
    pub frames_matched: u64,
    /// Connections listed: those with a matching frame, judged on all their frames.
    pub connections_selected: usize,
    /// Matching frames of connections left out because [`MAX_SELECTED`] were selected.
    #[serde(skip_serializing_if = "is_zero")]
    pub frames_over_cap: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The most connection directions one filter selects.
pub const MAX_SELECTED: usize = 1 << 20;

/// The connections a filter selected so far.
#[derive(Debug)]
pub struct Selection<'f> {
    filter: &'f DisplayFilter,
    /// Flow and incarnation (`None`: the model tracks no incarnation for it, e.g. a flow it
    /// evicted): every incarnation of the flow then.
    flows: HashSet<(FlowKey, Option<u32>)>,
    matched: u64,
    overflow: u64,
}

impl<'f> Selection<'f> {
    /// Nothing selected yet, by `filter`.
    pub fn new(filter: &'f DisplayFilter) -> Self {
        Selection { filter, flows: HashSet::new(), matched: 0, overflow: 0 }
    }

    /// After the model took frame `d`: when the frame matches, its connection is selected.
    /// `incarnation` asks the model (`Checker::incarnation_of`, `Stats::incarnation_of`).
    /// Returns whether the frame matched.
    pub fn observe(
        &mut self,
        d: &Decoded<'_>,
        incarnation: impl FnOnce(&FlowKey) -> Option<u32>,
    ) -> bool {
        if !self.filter.matches(d) {
            return false;
        }
        self.matched += 1;
        let Some((p, r)) = d.packet.as_ref().ok().and_then(|p| Some((p, p.roce.as_ref()?))) else {
            return true;
        };
        let key = FlowKey::of(p, r);
        let entry = (key, incarnation(&key));
        if self.flows.len() >= MAX_SELECTED && !self.flows.contains(&entry) {
            self.overflow += 1;
        } else {
            self.flows.insert(entry);
        }
        true
    }

    /// Frames that matched.
    pub fn matched(&self) -> u64 {
        self.matched
    }

    /// Matching frames of connections not selected because [`MAX_SELECTED`] were already.
    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// Whether the connection was selected (either direction, this incarnation).
    pub fn selects(&self, c: &ConnId) -> bool {
        let inc = Some(c.incarnation);
        let dir = |src, dst, q: Option<u32>| {
            q.is_some_and(|dest_qp| {
                let key = FlowKey { src, dst, dest_qp };
                self.flows.contains(&(key, inc)) || self.flows.contains(&(key, None))
            })
        };
        dir(c.a, c.b, c.qpn_b) || dir(c.b, c.a, c.qpn_a)
    }

    /// Whether a finding stays: its connection was selected, or it has none.
    pub fn keeps(&self, f: &roce_conformance::Finding) -> bool {
        f.connection.is_none_or(|c| self.selects(&c))
    }

    /// The report of the selected connections: their findings and connections only, the
    /// error, warning and per-rule counts of those findings. `suppressed` (findings beyond
    /// the per-rule cap) stays the whole capture's: the checker does not say whose they were.
    pub fn retain(&self, r: &mut Report) {
        r.findings.retain(|f| self.keeps(f));
        r.connections.retain(|c| self.selects(&c.info.connection));
        r.errors = r.findings.iter().filter(|f| f.severity == Severity::Error).count() as u64;
        r.warnings = r.findings.len() as u64 - r.errors;
        r.by_rule = roce_conformance::RULES
            .iter()
            .map(|rule| {
                let of = || r.findings.iter().filter(|f| f.rule == rule.id);
                let errors = of().filter(|f| f.severity == Severity::Error).count() as u64;
                RuleCount {
                    rule: rule.id,
                    side: rule.side,
                    errors,
                    warnings: of().count() as u64 - errors,
                }
            })
            .filter(|c| c.total() > 0)
            .collect();
    }

    /// The JSON reports' `selection` member (docs/json.md): what the filter selected, of
    /// `connections` listed.
    pub fn json(&self, connections: usize) -> SelectionJson<'_> {
        SelectionJson {
            filter: self.filter.text(),
            frames_matched: self.matched,
            connections_selected: connections,
            frames_over_cap: self.overflow,
        }
    }

    /// One line for the text reports: what the filter selected.
    pub fn describe(&self, connections: usize) -> String {
        let mut s = format!(
            "filter {}: {} frame(s) matched; {connections} connection(s) selected, judged on all their frames",
            self.filter.text(),
            self.matched
        );
        if self.overflow > 0 {
            s.push_str(&format!(
                "; {} matching frame(s) of further connections not selected (more than {MAX_SELECTED} selected)",
                self.overflow
            ));
        }
        s
    }
}
