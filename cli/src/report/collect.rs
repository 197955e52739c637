//! The report's pass over the capture: every frame goes once to the checker, whose connection
//! model keeps, beside the checker's own state, `stats`' counters and a [`Series`] (what is
//! drawn) per flow ([`Slot`]): one model for the findings, the timers and the graphs. When an
//! incarnation ends its series are kept if it is among the connections to graph, else only
//! its counters: memory is bounded by the live connections, the graphs kept and the series
//! budgets.

use std::net::IpAddr;

use roce_analysis::series::{Bins, Counts, Kind, Sample, Series};
use roce_conformance::internal::{Retained, Seen};
use roce_conformance::{
    Checker, ConnId, ConnectionInfo, Ended, FlowKey, FrameInfo, Options, Report, Shard,
};
use roce_parser::{AethKind, IcrcStatus, NakCode, OpcodeInfo, Operation, Roce, Role};

use crate::filter::{DisplayFilter, Selection};
use crate::input::Decoded;
use crate::stats::{Connection, Counters, FlowStats};
use roce_analysis::{PacketEvent, SlotOf, TapStep, DEFAULT_CASCADE_WINDOW_NS};
use roce_conformance::internal::timing::congestion::CnpScopesJson;

/// Which connections get a graph.
#[derive(Debug, Clone)]
pub enum Select {
    /// The `n` busiest (most packets, the earliest first among equals).
    Busiest(usize),
    /// Those whose name (as `stats` and `check` print it) is `name`, or contains it.
    Named(String),
}

/// Graphs kept for a `Select::Named` (a selector matching more is refused).
pub const NAMED_MAX: usize = 64;

/// One direction's panel of a graph: the flow and its series.
#[derive(Debug, Clone)]
pub struct Panel {
    pub key: FlowKey,
    pub series: Series,
}

/// A graphed connection incarnation.
#[derive(Debug, Clone)]
pub struct Graph {
    pub info: ConnectionInfo,
    pub panels: Vec<Panel>,
    pub counts: Counts,
}

/// A CM message seen (on QP1).
#[derive(Debug, Clone)]
pub struct CmEvent {
    pub frame: u64,
    pub ts: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub name: &'static str,
}

/// CM messages remembered for the graphs; beyond, counted.
pub const CM_EVENTS_MAX: usize = 10_000;

/// Capture-wide counters per time bin.
pub const WIDE_NAK: usize = 0;
pub const WIDE_CNP: usize = 1;
pub const WIDE_CE: usize = 2;
pub const WIDE_BAD_ICRC: usize = 3;

/// Everything the report shows, once the capture is read.
#[derive(Debug)]
pub struct Collected {
    pub check: Report,
    /// `-Y`, `--conn`: what the filter selected, as a line of text.
    pub selected: Option<String>,
    pub graphs: Vec<Graph>,
    /// Every listed incarnation (up to the model's cap) with its counters.
    pub connections: Vec<(ConnectionInfo, Counts)>,
    pub connections_not_listed: u64,
    /// `stats`' connections (its `timing` and `congestion` objects), the busiest first.
    pub timers: Vec<Connection>,
    /// `stats`' CNP pacing per IP pair and per destination (its top-level `congestion`).
    pub cnp_pacing: CnpScopesJson,
    pub cm_events: Vec<CmEvent>,
    /// CM messages past the first [`CM_EVENTS_MAX`]: not drawn (the page says how many).
    pub cm_not_kept: u64,
    pub wide: Bins<4>,
    /// ICRC verdicts: ok, bad, unverifiable, not checked.
    pub icrc: [u64; 4],
    pub first_ts: Option<u64>,
    pub last_ts: u64,
    /// `diagnose`'s verdicts, from the same pass (the page's first section).
    pub diagnosis: roce_analysis::DiagnoseDocument,
}

/// What the report keeps per flow in the checker's model.
#[derive(Debug, Default)]
pub struct Slot {
    stats: FlowStats,
    series: Series,
    /// `diagnose`'s evidence (the verdicts at the top of the page).
    evidence: roce_analysis::FlowEvidence,
}

impl AsMut<FlowStats> for Slot {
    fn as_mut(&mut self) -> &mut FlowStats {
        &mut self.stats
    }
}

/// The pass in progress.
pub struct Collector<'f> {
    checker: Checker<Slot>,
    /// `-Y`, `--conn`: the connections with a matching frame (crate::filter::Selection);
    /// an incarnation not selected when it ends is neither graphed nor listed.
    selection: Option<Selection<'f>>,
    /// `stats`' counters, for the timing and congestion section (the same figures as
    /// `stats --format json`, bounded as `stats` is).
    stats: Counters,
    select: Select,
    busiest: Retained<(Vec<Panel>, Counts)>,
    named: Vec<Graph>,
    listed: Retained<Counts>,
    cm_events: Vec<CmEvent>,
    /// CM messages remembered at most ([`CM_EVENTS_MAX`]; tests lower it).
    cm_max: usize,
    cm_not_kept: u64,
    wide: Bins<4>,
    icrc: [u64; 4],
    first_ts: Option<u64>,
    last_ts: u64,
    evidence: roce_analysis::Evidence,
    frames: u64,
}

/// Whether `sel` names connection `c`: its full name, or a part of it.
pub fn names(c: &ConnId, sel: &str) -> bool {
    let name = c.to_string();
    name == sel || name.contains(sel)
}

impl<'f> Collector<'f> {
    pub fn new(opts: Options, select: Select, filter: Option<&'f DisplayFilter>) -> Self {
        let max_flows = opts.max_flows;
        let keep = match &select {
            Select::Busiest(n) => *n,
            Select::Named(_) => 1,
        };
        Collector {
            checker: Checker::with(opts),
            selection: filter.map(Selection::new),
            stats: Counters::new(max_flows),
            select,
            busiest: Retained::new(keep.max(1)),
            named: Vec::new(),
            listed: Retained::new(max_flows),
            cm_events: Vec::new(),
            cm_max: CM_EVENTS_MAX,
            cm_not_kept: 0,
            wide: Bins::default(),
            icrc: [0; 4],
            first_ts: None,
            last_ts: 0,
            evidence: roce_analysis::Evidence::new(max_flows),
            frames: 0,
        }
    }

    /// One step of a pass over several taps (crate::input::for_each_step): a packet's
    /// first sighting to [`Collector::frame`] (its connection returned, for the taps), a
    /// copy ignored (counted by the taps), a packet lost between taps a `CAP-DROP-BETWEEN`
    /// finding; `names` are the files in merge order.
    pub fn step(&mut self, step: TapStep<'_, '_, '_>, names: &[String]) -> Option<ConnId> {
        match step {
            TapStep::Frame(d) => {
                self.frame(d);
                self.checker.connection_fed()
            }
            TapStep::Copy(..) => None,
            TapStep::Drop(drop) => {
                drop.report_to(&mut self.checker, names);
                None
            }
        }
    }

    /// One frame, in capture order.
    pub fn frame(&mut self, d: &Decoded<'_>) {
        let f = &d.frame;
        if self.first_ts.is_none() {
            self.first_ts = Some(f.ts_ns);
            self.wide.start(f.ts_ns);
        }
        self.last_ts = self.last_ts.max(f.ts_ns);
        self.frames += 1;
        let Some(ev) = roce_analysis::feed(&mut self.checker, Shard::ALL, d) else { return };
        self.evidence.observe(&ev);
        // The incarnations this packet ended: their counters listed now, their series once
        // the filter saw the packet (a DREP the filter selects selects its connection).
        let series = if self.checker.has_ended() { self.take_ended() } else { Vec::new() };
        // An idle reconnect undone (the QP was not reset): the old incarnation counts what
        // the provisional one counted (its points after the gap are not drawn).
        if self.checker.has_resumed() {
            for (k, provisional) in self.checker.take_resumed() {
                if let Some(slot) = self.checker.ext_mut(&k) {
                    slot.stats.resume(&provisional.stats);
                    slot.series.counts.merge(&provisional.series.counts);
                }
            }
        }
        // What the packet adds to the graphs, drawn in the slots `stats`' counters look up
        // (its own flow's, a response's requester's): no lookup of the report's own.
        let draw = ev.roce().and_then(|r| Draw::of(&ev, r));
        let wide = &mut self.wide;
        let stream_found = self.stats.add_with(&mut self.checker, &ev, |slot, which| {
            slot.evidence.observe(&ev, which);
            if let Some(d) = &draw {
                d.apply(slot, which, wide);
            }
        });
        if ev.packet.is_none() {
            return;
        }
        if let Some(sel) = &mut self.selection {
            sel.observe(d, |k| self.checker.incarnation_of(k));
        }
        if !series.is_empty() {
            self.settle(series);
        }
        if let Some(r) = ev.roce() {
            self.roce(&ev, r, draw.as_ref(), stream_found);
        }
    }

    /// A RoCE packet's counters and what its slots did not draw: a response whose
    /// requester's flow is gone (drawn in its own), a CNP (on the flow it names), a CM MAD.
    fn roce(
        &mut self,
        ev: &PacketEvent<'_, '_>,
        r: &Roce<'_>,
        draw: Option<&Draw<'_, '_>>,
        stream_found: bool,
    ) {
        let f = &ev.info;
        let t = f.ts_ns;
        let verdict = match r.icrc_status {
            IcrcStatus::Ok => 0,
            IcrcStatus::Bad { .. } => 1,
            IcrcStatus::Unverifiable => 2,
            IcrcStatus::NotChecked => 3,
        };
        if let Some(c) = self.icrc.get_mut(verdict) {
            *c += 1;
        }
        if verdict == 1 {
            self.wide.add(t, WIDE_BAD_ICRC, 1);
        }
        let (Some(obs), Some(d)) = (ev.observation.as_ref(), draw) else { return };
        let own = obs.own;
        if obs.seen == Seen::Cm {
            self.cm_event(f, own, r);
            return;
        }
        if d.ce {
            self.wide.add(t, WIDE_CE, 1);
        }
        if d.on_stream && !stream_found {
            // The requester's flow is not in the model (evicted): drawn in the packet's own.
            let wide = &mut self.wide;
            if let Some(slot) = self.checker.ext_mut(&own) {
                d.target(&mut slot.series, wide);
            }
        }
        if d.info.is_some_and(|i| i.role == Role::Congestion) {
            // A CNP travels against the traffic it slows: drawn on the flow it names.
            let peer = self.checker.peer_of(&own);
            let to = peer.filter(|k| self.checker.ext_mut(k).is_some()).unwrap_or(own);
            self.wide.add(t, WIDE_CNP, 1);
            if let Some(slot) = self.checker.ext_mut(&to) {
                slot.series.congestion(&d.sample, Kind::Cnp);
            }
            if d.ce {
                if let Some(slot) = self.checker.ext_mut(&own) {
                    slot.series.congestion(&d.sample, Kind::Ce);
                }
            }
        }
    }

    fn cm_event(&mut self, f: &FrameInfo, own: FlowKey, r: &Roce<'_>) {
        let Some(Ok(mad)) = r.mad() else { return };
        let Some(m) = mad.cm else { return };
        if self.cm_events.len() >= self.cm_max {
            self.cm_not_kept += 1;
            return;
        }
        self.cm_events.push(CmEvent {
            frame: f.number,
            ts: f.ts_ns,
            src: own.src,
            dst: own.dst,
            name: m.name(),
        });
    }

    /// The incarnations the model ended: their counters to `stats`' list, their series
    /// returned (for [`Collector::settle`]).
    fn take_ended(&mut self) -> Vec<Ended<Series>> {
        let ended = self.checker.take_ended();
        let mut series = Vec::with_capacity(ended.len());
        for e in ended {
            let (mut counted, mut drawn, mut kept) = (Vec::new(), Vec::new(), Vec::new());
            for (k, slot) in e.directions {
                counted.push((k, slot.stats));
                drawn.push((k, slot.series));
                kept.push((k, slot.evidence));
            }
            self.stats.ended(e.info.clone(), counted);
            self.evidence.ended(e.info.clone(), kept);
            series.push(Ended { info: e.info, directions: drawn });
        }
        series
    }

    /// Incarnations the model ended: their graphs kept or dropped, their counters listed.
    fn settle(&mut self, ended: Vec<Ended<Series>>) {
        for e in ended {
            let mut counts = Counts::default();
            let mut panels = Vec::new();
            if self.selection.as_ref().is_some_and(|s| !s.selects(&e.info.connection)) {
                continue;
            }
            for (key, mut series) in e.directions {
                series.end();
                counts.merge(&series.counts);
                if !series.is_empty() {
                    panels.push(Panel { key, series });
                }
            }
            self.listed.push(e.info.clone(), counts);
            let connected = matches!(e.info.transport, "RC" | "UC" | "XRC" | "unknown");
            if panels.is_empty() || !connected {
                continue;
            }
            match &self.select {
                Select::Busiest(0) => {}
                Select::Busiest(_) => self.busiest.push(e.info, (panels, counts)),
                Select::Named(sel) => {
                    if names(&e.info.connection, sel) && self.named.len() <= NAMED_MAX {
                        self.named.push(Graph { info: e.info, panels, counts });
                    }
                }
            }
        }
    }

    /// The end of the capture.
    pub fn finish(mut self) -> Collected {
        self.checker.end_all();
        let series = self.take_ended();
        self.settle(series);
        let cnp_pacing = self.stats.cnp_scopes();
        let cm = self.checker.cm_exchanges().to_vec();
        let (mut timers, timers_not_listed) = self.stats.connections(&cm);
        let mut check = self.checker.finish();
        let measured = roce_analysis::Measured {
            connections: &timers,
            not_listed: timers_not_listed,
            cm: &cm,
            report: &check,
            frames: self.frames,
            roce_frames: check.roce_frames,
            infiniband: (check.ib_frames, check.ib_unmodelled),
            duration_ns: self.first_ts.map_or(0, |f| self.last_ts.saturating_sub(f)),
            warnings: &[],
        };
        let diagnosis = match &self.selection {
            Some(sel) => {
                self.evidence.judge(&measured, DEFAULT_CASCADE_WINDOW_NS, |c| sel.selects(c))
            }
            None => self.evidence.judge(&measured, DEFAULT_CASCADE_WINDOW_NS, |_| true),
        };
        if let Some(sel) = &self.selection {
            sel.retain(&mut check);
        }
        let selected = self.selection.as_ref().map(|s| s.describe(check.connections.len()));
        let graphs = match self.select {
            Select::Busiest(_) => {
                let (mut v, _) = self.busiest.into_sorted();
                v.sort_by(|(a, _), (b, _)| {
                    b.packets.cmp(&a.packets).then(a.first_frame.cmp(&b.first_frame))
                });
                v.into_iter()
                    .map(|(info, (panels, counts))| Graph { info, panels, counts })
                    .collect()
            }
            Select::Named(_) => self.named,
        };
        let (connections, connections_not_listed) = self.listed.into_sorted();
        if let Some(sel) = &self.selection {
            timers.retain(|c| sel.selects(&c.info.connection));
        }
        Collected {
            timers,
            cnp_pacing,
            check,
            selected,
            graphs,
            connections,
            connections_not_listed,
            cm_events: self.cm_events,
            cm_not_kept: self.cm_not_kept,
            wide: self.wide,
            icrc: self.icrc,
            first_ts: self.first_ts,
            last_ts: self.last_ts,
            diagnosis,
        }
    }
}

/// What one RoCE packet adds to its connection's graph, decided from the event before the
/// slots are looked up ([`Counters::add_with`] hands them over).
struct Draw<'e, 'a> {
    sample: Sample,
    r: &'e Roce<'a>,
    info: Option<&'static OpcodeInfo>,
    /// What the model saw the packet as, without the response's stream key: `Draw` is
    /// built for every packet, and copying the whole `Seen` (a `FlowKey`) cost a store
    /// forwarding stall on the observation just written (BENCHMARKS.md).
    seen: Saw,
    retransmitted: bool,
    ce: bool,
    /// Drawn in the requester's flow (a response to a stream): its slot, when found.
    on_stream: bool,
}

/// [`Seen`] without the response's stream (which [`Draw::on_stream`] says was found).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Saw {
    Cm,
    Request,
    Response,
    Other,
}

impl<'e, 'a> Draw<'e, 'a> {
    fn of(ev: &PacketEvent<'e, 'a>, r: &'e Roce<'a>) -> Option<Self> {
        let obs = ev.observation.as_ref()?;
        let f = &ev.info;
        let sample = Sample {
            t: f.ts_ns,
            frame: f.number,
            psn: r.bth.psn,
            opcode: r.opcode_name(),
            payload: r.payload_len as u64,
        };
        let on_stream = matches!(obs.seen, Seen::Response { stream: Some(_) });
        let seen = match obs.seen {
            Seen::Cm => Saw::Cm,
            Seen::Request => Saw::Request,
            Seen::Response { .. } => Saw::Response,
            Seen::Other => Saw::Other,
        };
        Some(Draw {
            sample,
            r,
            info: r.info,
            seen,
            retransmitted: obs.retransmitted,
            ce: ev.ecn_ce,
            on_stream,
        })
    }

    /// Draws in `slot`, the packet's own flow's or its requester's (`which`).
    fn apply(&self, slot: &mut Slot, which: SlotOf, wide: &mut Bins<4>) {
        let series = &mut slot.series;
        match which {
            SlotOf::Own => {
                let role = self.info.map(|i| i.role);
                if self.seen == Saw::Cm || role == Some(Role::Congestion) {
                    // A CNP is drawn after the lookups (`Collector::roce`), in the order it
                    // always was.
                    series.packet(self.sample.t);
                    return;
                }
                if let (Saw::Request, Some(info)) = (self.seen, self.info) {
                    let span = match info.operation {
                        Operation::RdmaRead => Some(Kind::Read),
                        Operation::CompareSwap | Operation::FetchAdd => Some(Kind::Atomic),
                        _ => None,
                    };
                    series.request_packet(&self.sample, span, self.retransmitted);
                } else {
                    series.packet(self.sample.t);
                }
                if !self.on_stream {
                    self.target(series, wide);
                }
            }
            SlotOf::Stream => self.target(series, wide),
        }
    }

    /// What is drawn in the flow the packet is shown in (a response in its requester's
    /// graph, anything else in its own): the response's marks, then its CE mark.
    fn target(&self, series: &mut Series, wide: &mut Bins<4>) {
        if let (Some(info), Saw::Response) = (self.info, self.seen) {
            response(series, wide, self.r, info, &self.sample);
        }
        if self.ce {
            series.congestion(&self.sample, Kind::Ce);
        }
    }
}

/// A response's marks: its ACK or NAK, the end of a READ or atomic it answers.
fn response(series: &mut Series, wide: &mut Bins<4>, r: &Roce<'_>, info: &OpcodeInfo, s: &Sample) {
    if let Some(a) = r.headers.aeth {
        match a.kind() {
            AethKind::Ack => series.ack(s, info.operation == Operation::Acknowledge),
            AethKind::RnrNak => series.nak(s, Kind::Rnr),
            AethKind::Nak => {
                let kind = match NakCode::from_value(a.value()) {
                    NakCode::PsnSequenceError => Kind::Nak,
                    _ => Kind::Fatal,
                };
                series.nak(s, kind);
                wide.add(s.t, WIDE_NAK, 1);
            }
            AethKind::Reserved => {}
        }
    }
    match info.operation {
        Operation::ReadResponse => {
            series.span_response(s, Kind::Read, info.position.ends_message())
        }
        Operation::AtomicAcknowledge => series.span_response(s, Kind::Atomic, true),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CM messages past the cap are counted, not drawn, and the ones drawn are the
    /// capture's first.
    #[test]
    fn cm_messages_past_the_cap_are_counted() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pcaps/conformance/clean-cm-reconnect.pcap");
        let run = |max: usize| {
            let mut c = Collector::new(Options::default(), Select::Busiest(4), None);
            c.cm_max = max;
            let input: crate::input::Input = path.as_path().into();
            crate::input::for_each_frame(&input, &Default::default(), |d| c.frame(d)).unwrap();
            c.finish()
        };
        let all = run(CM_EVENTS_MAX);
        assert!(all.cm_events.len() > 2 && all.cm_not_kept == 0, "{}", all.cm_events.len());
        let two = run(2);
        let frames = |c: &Collected| c.cm_events.iter().map(|e| e.frame).collect::<Vec<_>>();
        assert_eq!(frames(&two), frames(&all)[..2]);
        assert_eq!(two.cm_not_kept, all.cm_events.len() as u64 - 2);
    }
}
