//! The streaming checker: each packet goes through the connection model, then the per-packet
//! rules, the congestion rules, and the request stream it belongs to. Incarnations that end
//! (a CM disconnect, a reconnect, eviction) are finished on the spot and reported on their own.

use serde::Serialize;

use roce_parser::{OpcodeInfo, Packet, Roce, Role};

use crate::congestion::{CeMark, Cnp, Congestion};
use crate::connections::ConnId;
use crate::connections::{
    exchange_of, BeganBy, CmExchange, ConnectionInfo, Connections, Ended, EndedBy, FlowKey,
    Observation, Retained, Seen,
};
use crate::context::{CmTimers, Pkt};
use crate::finding::{Finding, Judge, RuleCount};
use crate::psn::Psn;
use crate::rules::{self, Rule};
use crate::stream::{Shadow, Stream, SHADOW_REPORTED};
use crate::timing::{compare, Timing};
use crate::{FrameInfo, Options};

/// The checker's own accounting of its state, to prove it stays bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StateStats {
    /// Live flows (one direction to one QP each).
    pub flows: usize,
    /// Request PSNs of unpaired flows indexed for PSN-echo pairing.
    pub pairing_index: usize,
    /// Entries of the eviction clock (every flow once, plus stale keys until tidied).
    pub lru_queue: usize,
    /// CM REQs waiting for their REP.
    pub cm_pending: usize,
    /// Per-(connection, rule) finding counters held (they start over past their cap).
    pub finding_counters: usize,
    /// Requests and READs remembered across all flows.
    pub remembered_requests: usize,
    /// CE bursts waiting for a CNP, CNP times and CE senders remembered.
    pub congestion: usize,
    /// Ended incarnations held for the report.
    pub listed_connections: usize,
    /// Incarnations evicted so far to stay within `max_flows` (CAP-EVICT).
    pub evicted: u64,
}

/// One connection incarnation in the final report.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionReport {
    #[serde(flatten)]
    /// The incarnation as the connection model closed it: names, pairing, PMTU, P_Key, how
    /// it began and ended.
    pub info: ConnectionInfo,
    /// Requests whose PSN was not new (retransmissions, whatever their cause), both
    /// directions together.
    pub retransmissions: u64,
    /// Packets known to be missing from the capture (PSN gaps, ACKs of uncaptured requests).
    pub missing_packets: u64,
    /// How complete the capture of this connection looked, 0..1.
    pub completeness: f64,
    /// Why parts were not judged, when they were not.
    pub partly_judged: Vec<&'static str>,
}

/// The end of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Every finding not taken before, with its connection's final name.
    pub findings: Vec<Finding>,
    /// One per incarnation, in capture order: all of them up to `max_flows`, beyond it the
    /// busiest.
    pub connections: Vec<ConnectionReport>,
    /// Incarnations beyond the cap (the least busy), counted, not listed.
    pub connections_not_listed: u64,
    /// Frames fed, RoCE or not.
    pub frames: u64,
    /// Frames that decoded as RoCE (a BTH after Ethernet, IP and UDP, or a RoCEv1 GRH).
    pub roce_frames: u64,
    /// Native InfiniBand packets (a BTH after an LRH): judged as RoCE packets are, but for
    /// [`Report::ib_unmodelled`].
    pub ib_frames: u64,
    /// Native InfiniBand packets without a GRH: their endpoints are LIDs, which the model
    /// does not key connections by (yet), so they are counted here and not judged.
    pub ib_unmodelled: u64,
    /// Findings of severity error, listed and suppressed.
    pub errors: u64,
    /// Findings of severity warning, listed and suppressed.
    pub warnings: u64,
    /// Findings counted but not kept (beyond the per-rule cap).
    pub suppressed: u64,
    /// Findings per rule (listed and suppressed), in catalog order; rules without any are
    /// left out.
    pub by_rule: Vec<RuleCount>,
    /// The checker's state sizes at the end, to show they stayed bounded.
    pub state: StateStats,
}

/// What the checker keeps per flow: its request stream, and what the caller keeps beside it
/// (`X`, see [`Checker::ext_mut`]): one connection model for every consumer of a pass.
/// The stream is boxed and made on first use: a model without the rules
/// ([`Checker::without_rules`]) holds none (some 1.7 KB less per flow for `stats`).
#[derive(Debug, Default)]
pub(crate) struct Slot<X> {
    stream: Option<Box<Stream>>,
    ext: X,
}

impl<X> Slot<X> {
    /// The checker's stream of the flow, made on first use.
    #[inline]
    fn stream(&mut self) -> &mut Stream {
        self.stream.get_or_insert_with(Box::default)
    }
}

/// The streaming checker.
///
/// The checker owns the connection model ([`Connections`]). A caller that keeps state of its
/// own per connection (counters, a graph's series) gives its type as `X`
/// ([`Checker::with`]): each flow of the model then holds an `X` beside the checker's own
/// state ([`Checker::ext_mut`]), handed back when its incarnation ends
/// ([`Checker::take_ended`]), so that one model, fed once per packet, serves the checker and
/// the caller. [`Checker::without_rules`] runs the model alone (no rule judged).
///
/// ```
/// use roce_conformance::{Checker, FrameInfo, Options};
/// use roce_parser::BthRepr;
/// use roce_parser::{parse_ethernet, Config, FrameBuilder, Network};
///
/// let mut checker = Checker::new(Options::default());
/// let bth = BthRepr { opcode: 0x04, pkey: 0xffff, dest_qp: 0x12, psn: 7, ..Default::default() };
/// let mut buf = [0u8; 128];
/// let n = FrameBuilder::new(Network::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), bth).emit(&mut buf).unwrap();
/// let packet = parse_ethernet(&buf[..n], &Config::default()).unwrap();
/// checker.feed(&FrameInfo { number: 1, ts_ns: 0, caplen: n as u32, len: n as u32 }, &packet);
/// let report = checker.finish();
/// assert_eq!(report.errors, 0);
/// assert_eq!(report.connections.len(), 1);
/// ```
#[derive(Debug)]
pub struct Checker<X = ()> {
    opts: Options,
    /// Whether the rules are judged ([`Checker::without_rules`]: the model alone).
    judging: bool,
    judge: Judge,
    model: Connections<Slot<X>>,
    /// The callers' state of the incarnations ended since [`Checker::take_ended`] (none kept
    /// when `X` has no size).
    ended: Vec<Ended<X>>,
    /// The callers' state of provisional incarnations undone ([`Checker::take_resumed`]).
    resumed: Vec<(FlowKey, X)>,
    /// Where the packet fed last stands in the model.
    last_observation: Option<Observation>,
    congestion: Congestion,
    listed: Retained<Judged>,
    frames: u64,
    roce_frames: u64,
    ib_frames: u64,
    ib_unmodelled: u64,
    last_ts: u64,
    clock: ClockSteps,
    /// Whether the packet fed last was a retransmitted request (`None`: not a request the
    /// checker judged).
    last_retransmission: Option<bool>,
    /// A checker of one shard of a split run ([`Checker::for_shard`]): where each finding
    /// was proven, in step with the judge's findings; `None` for a whole run.
    proven: Option<Vec<Proven>>,
}

/// CAP-TIME's evidence. A step back of the capture clock says something about the capture
/// (its clock, or how it merged interfaces), not about a NIC, and a host pcapng with a few
/// interfaces steps back dozens of times: one finding per capture, with the count and the
/// worst step, says it once (reported by [`Checker::finish`]).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ClockSteps {
    count: u64,
    first_frame: u64,
    worst_frame: u64,
    worst_ns: u64,
}

impl ClockSteps {
    /// The steps of two shards as one run counts them: the first step back is the earlier
    /// one, the worst is the largest (the earlier frame among equals, as one run keeps the
    /// first it saw).
    pub(crate) fn merge(self, o: ClockSteps) -> ClockSteps {
        if o.count == 0 {
            return self;
        }
        if self.count == 0 {
            return o;
        }
        let worse = o.worst_ns > self.worst_ns
            || (o.worst_ns == self.worst_ns && o.worst_frame < self.worst_frame);
        ClockSteps {
            count: self.count + o.count,
            first_frame: self.first_frame.min(o.first_frame),
            worst_frame: if worse { o.worst_frame } else { self.worst_frame },
            worst_ns: if worse { o.worst_ns } else { self.worst_ns },
        }
    }

    /// CAP-TIME's one finding: the first step back and the worst (one frame when they are
    /// the same), with the count.
    pub(crate) fn report(&self, judge: &mut Judge) {
        if self.count == 0 {
            return;
        }
        let (count, first, worst, back) =
            (self.count, self.first_frame, self.worst_frame, self.worst_ns);
        let frames: &[u64] = if first == worst { &[first] } else { &[first, worst] };
        judge.report(&rules::CAP_TIME, frames, None, None, || {
            if count == 1 {
                format!("timestamp goes back by {back} ns from the previous frame")
            } else {
                format!(
                    "timestamps go back {count} times, first at frame {first}; the worst step \
                     is {back} ns back, at frame {worst}"
                )
            }
        });
    }
}

/// Where a finding was proven: its place in one run's order of findings. One run proves
/// findings frame by frame; at the end of the capture it finishes the incarnations in flow
/// order, then the CE bursts that got no CNP in the order of their first frame, then
/// CAP-TIME. A frame, a flow and a burst each belong to one host pair, so to one shard:
/// sorting the shards' findings by this key (stable) gives one run's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Proven {
    /// While frame N was fed.
    Frame(u64),
    /// At the end, while the incarnation of this flow was finished.
    End(FlowKey),
    /// At the end, the CE burst that began at frame N.
    Burst(u64),
}

impl Proven {
    /// The key as bytes whose lexicographic (unsigned) order is this type's `Ord`, for a
    /// merge outside the crate ([`crate::ShardReport::order_keys`]): the variant's tag byte
    /// (0 `Frame`, 1 `End`, 2 `Burst`), then its numbers big-endian; a flow is its two
    /// addresses, each a family byte (0 IPv4, 1 IPv6, as `IpAddr` orders V4 before V6) and
    /// its octets, then its DestQP. An address's length follows from its family byte, so
    /// two keys differ first where their values do.
    pub(crate) fn order_key(&self) -> Vec<u8> {
        fn addr(out: &mut Vec<u8>, a: std::net::IpAddr) {
            match a {
                std::net::IpAddr::V4(v4) => {
                    out.push(0);
                    out.extend_from_slice(&v4.octets());
                }
                std::net::IpAddr::V6(v6) => {
                    out.push(1);
                    out.extend_from_slice(&v6.octets());
                }
            }
        }
        match *self {
            Proven::Frame(n) => [&[0u8][..], &n.to_be_bytes()].concat(),
            Proven::End(k) => {
                let mut out = Vec::with_capacity(1 + 2 * 17 + 4);
                out.push(1);
                addr(&mut out, k.src);
                addr(&mut out, k.dst);
                out.extend_from_slice(&k.dest_qp.to_be_bytes());
                out
            }
            Proven::Burst(n) => [&[2u8][..], &n.to_be_bytes()].concat(),
        }
    }
}

/// Tags the findings not tagged yet (a shard's checker) with where they were proven.
#[inline(always)]
fn tag(proven: &mut Option<Vec<Proven>>, judge: &Judge, at: Proven) {
    if let Some(p) = proven {
        p.resize(judge.pending(), at);
    }
}

/// RSP-NAK-ERROR on a packet of `flow` (its sender's QP), once. Inlined test, reporting out
/// of line: every packet of a judged flow asks, almost none after a fatal NAK.
#[inline(always)]
fn fatal_nak_silence<X>(
    flow: &mut crate::connections::Flow<Slot<X>>,
    f: &FrameInfo,
    r: &Roce<'_>,
    conn: Option<ConnId>,
    judge: &mut Judge,
) {
    let Some(nak) = flow.fatal_nak.filter(|&n| n != f.number) else { return };
    fatal_nak_report(flow, nak, f, r, conn, judge);
}

#[cold]
fn fatal_nak_report<X>(
    flow: &mut crate::connections::Flow<Slot<X>>,
    nak: u64,
    f: &FrameInfo,
    r: &Roce<'_>,
    conn: Option<ConnId>,
    judge: &mut Judge,
) {
    if flow.state.stream().fatal_reported {
        return;
    }
    flow.state.stream().fatal_reported = true;
    let name = r.opcode_name();
    judge.report(&rules::RSP_NAK_ERROR, &[nak, f.number], conn, Some(Psn::new(r.bth.psn)), || {
        format!("{name} sent after the fatal NAK in frame {nak}: the QP is in the error state and must stay silent")
    });
}

/// What the checker adds to an ended incarnation's record.
#[derive(Debug)]
struct Judged {
    retransmissions: u64,
    missing: u64,
    partly: Vec<&'static str>,
}

impl Checker {
    /// A checker of every rule `opts` enables.
    pub fn new(opts: Options) -> Self {
        Checker::with(opts)
    }

    /// The checker of one shard of a run split by host pair (`check --threads N`): fed the
    /// frames of its host pairs in capture order ([`Checker::feed_shard`]) and
    /// [`Checker::tick`]ed with the capture's clock before each, it judges them as one
    /// checker fed every frame would;
    /// [`Checker::finish_shard`] gives what [`crate::merge_shards`] needs to make that one
    /// checker's report.
    pub fn for_shard(opts: Options) -> Self {
        Checker { proven: Some(Vec::new()), ..Checker::new(opts) }
    }
}

impl<X: Default> Checker<X> {
    /// A checker whose flows each keep an `X` of the caller's beside the checker's state.
    pub fn with(opts: Options) -> Self {
        let cap = opts.max_flows.max(1);
        Checker {
            judging: true,
            ended: Vec::new(),
            resumed: Vec::new(),
            last_observation: None,
            judge: Judge::new(opts.rules.clone(), opts.max_findings_per_rule, 4 * cap),
            model: Connections::new(opts.model()),
            congestion: Congestion::new(opts.cnp_window_ns, cap, opts.cnp_min_interval),
            listed: Retained::new(cap),
            opts,
            frames: 0,
            roce_frames: 0,
            ib_frames: 0,
            ib_unmodelled: 0,
            last_ts: 0,
            clock: ClockSteps::default(),
            last_retransmission: None,
            proven: None,
        }
    }

    /// The connection model alone, each flow keeping an `X`: no rule is judged, and the
    /// report has no finding and lists no connection (the caller lists what it keeps from
    /// [`Checker::take_ended`]; `stats` does). The connections are those of a checker's run.
    pub fn without_rules(opts: Options) -> Self {
        Checker { judging: false, ..Checker::with(opts) }
    }

    /// Where the packet [`Checker::feed`] took last stands in the model (`None` when it was
    /// not a RoCE packet).
    pub fn last_observation(&self) -> Option<Observation> {
        self.last_observation
    }

    /// The caller's state of flow `key` in its current incarnation.
    pub fn ext_mut(&mut self, key: &FlowKey) -> Option<&mut X> {
        self.model.flow_mut(key).map(|f| &mut f.state.ext)
    }

    /// The reverse flow of `key`, once paired.
    pub fn peer_of(&self, key: &FlowKey) -> Option<FlowKey> {
        self.model.flow(key).and_then(|f| f.peer)
    }

    /// The incarnations ended since the last call, with the caller's state of each of their
    /// directions (after each [`Checker::feed`]; [`Checker::end_all`] ends the rest).
    pub fn take_ended(&mut self) -> Vec<Ended<X>> {
        std::mem::take(&mut self.ended)
    }

    /// Whether [`Checker::take_ended`] has something (cheap: called once per packet).
    pub fn has_ended(&self) -> bool {
        !self.ended.is_empty()
    }

    /// The caller's state of the flows of a provisional idle reconnect the packet fed last
    /// undid (the old incarnation goes on: add the provisional one's state to it).
    pub fn take_resumed(&mut self) -> Vec<(FlowKey, X)> {
        std::mem::take(&mut self.resumed)
    }

    /// Whether [`Checker::take_resumed`] has something (cheap: asked once per packet).
    pub fn has_resumed(&self) -> bool {
        !self.resumed.is_empty()
    }

    /// The CM exchanges the model logged (`stats`' `cm_connections`).
    pub fn cm_exchanges(&self) -> &[CmExchange] {
        self.model.cm_exchanges()
    }

    /// The connection model's own accounting.
    pub fn model_stats(&self) -> crate::ModelStats {
        self.model.stats()
    }

    /// Flows live (cheap: no walk), to stop a split run early when together they exceed
    /// the cap.
    pub fn flow_count(&self) -> usize {
        self.model.flow_count()
    }

    /// Reports a finding judged outside the checker, under its rule set, per-rule cap and
    /// connection names: a packet lost between two capture points is judged where the copies
    /// of several taps are matched (roce-analysis), before the model sees one of them.
    /// `connection` is the one [`Checker::connection_of`] named when the packet was fed.
    pub fn report_external(
        &mut self,
        rule: &Rule,
        connection: Option<ConnId>,
        frames: &[u64],
        psn: Option<Psn>,
        message: impl FnOnce() -> String,
    ) {
        self.judge.report(rule, frames, connection, psn, message);
    }

    /// The connection the flow `key` belongs to now, as findings name it.
    pub fn connection_of(&self, key: &FlowKey) -> ConnId {
        self.model.conn_id(key)
    }

    /// The connection of the packet [`Checker::feed`] took last, as findings name it (`None`
    /// when it was not a RoCE packet): what several taps' merge tells the copies of that
    /// packet seen by the other taps.
    pub fn connection_fed(&self) -> Option<ConnId> {
        let own = self.last_observation?.own;
        Some(self.connection_of(&own))
    }

    /// Findings proved since the last call (connections named as known so far: one not yet
    /// paired names one QPN; [`Checker::finish`] gives final names to what it returns).
    pub fn take_findings(&mut self) -> Vec<Finding> {
        if let Some(p) = &mut self.proven {
            p.clear();
        }
        self.judge.take()
    }

    /// The checker's own state, for tests and diagnostics.
    pub fn state(&self) -> StateStats {
        let m = self.model.stats();
        StateStats {
            flows: m.flows,
            pairing_index: m.pairing_index,
            lru_queue: m.lru_queue,
            cm_pending: m.cm_pending,
            finding_counters: self.judge.tracked(),
            remembered_requests: self
                .model
                .flows()
                .map(|(_, f)| f.state.stream.as_ref().map_or(0, |s| s.entries()))
                .sum(),
            congestion: self.congestion.entries(),
            listed_connections: self.listed.len(),
            evicted: m.evicted,
        }
    }

    /// The incarnation of the connection flow `key` is in now (after [`Checker::feed`] of its
    /// packet): what `export` writes per packet to join packets to their connection.
    pub fn incarnation_of(&self, key: &FlowKey) -> Option<u32> {
        self.model.incarnation_of(key)
    }

    /// The name the report gives a connection that a finding named before the connection's
    /// two directions were paired (its peer's QPN then unknown): a caller that keeps the
    /// findings of [`Checker::take_findings`] names them with this when the capture ends, as
    /// [`Checker::finish`] names its own.
    pub fn canonical(&self, id: ConnId) -> ConnId {
        self.model.canonical(id)
    }

    /// Whether the packet [`Checker::feed`] took last was a request the checker judged a
    /// retransmission (its PSN not newer than the stream's highest); `None` when it was not
    /// a request of a stream the checker judges (`export`'s `retransmission` column).
    pub fn last_retransmission(&self) -> Option<bool> {
        self.last_retransmission
    }

    /// A frame of another shard (`--shard K/N`): not judged, but the capture's clock
    /// advances, so that `CAP-TIME` compares with the capture's previous frame and the
    /// timeouts judged at the end of the capture count from the capture's end, as in the
    /// single run.
    pub fn tick(&mut self, ts_ns: u64) {
        self.last_ts = self.last_ts.max(ts_ns);
    }

    /// Counts a frame that could not be decoded at all (unsupported link type, ...).
    pub fn feed_undecoded(&mut self, f: &FrameInfo) {
        self.frames += 1;
        self.capture_time(f);
    }

    /// CAP-TIME: timestamps going backwards (counted here, reported once by `finish`).
    fn capture_time(&mut self, f: &FrameInfo) {
        if f.ts_ns < self.last_ts {
            let back = self.last_ts - f.ts_ns;
            let c = &mut self.clock;
            if c.count == 0 {
                c.first_frame = f.number;
            }
            c.count += 1;
            if back > c.worst_ns {
                (c.worst_ns, c.worst_frame) = (back, f.number);
            }
        }
        self.last_ts = self.last_ts.max(f.ts_ns);
    }

    /// Feeds one frame (RoCE or not) in capture order.
    pub fn feed(&mut self, f: &FrameInfo, p: &Packet<'_>) {
        self.judge_frame(f, p);
    }

    /// [`Checker::feed`] for the checker of a shard ([`Checker::for_shard`]): the findings
    /// the frame proves are tagged with it, for [`crate::merge_shards`]. (A shard's findings
    /// fed otherwise are not placed, and the merge refuses them.)
    pub fn feed_shard(&mut self, f: &FrameInfo, p: &Packet<'_>) {
        self.judge_frame(f, p);
        tag(&mut self.proven, &self.judge, Proven::Frame(f.number));
    }

    #[inline(always)]
    fn judge_frame(&mut self, f: &FrameInfo, p: &Packet<'_>) {
        self.frames += 1;
        self.last_retransmission = None;
        self.last_observation = None;
        self.capture_time(f);
        let Some(r) = &p.roce else { return };
        if p.lrh.is_none() {
            self.roce_frames += 1;
        } else if r.grh.is_some() {
            self.ib_frames += 1;
        } else {
            // Native InfiniBand between LIDs: no address to key its flow by (FlowKey is IP
            // or GID addressed); counted, not placed in the model, rather than merged into
            // one flow per DestQP.
            self.ib_frames += 1;
            self.ib_unmodelled += 1;
            return;
        }
        let obs = self.model.observe(f, p, r);
        self.last_observation = Some(obs);
        if self.model.has_ended() {
            self.settle_ended();
        }
        let own = obs.own;
        // Rare (an idle reconnect begun or undone): checked here, handled out of line.
        if self.model.has_resumed() || (self.judging && self.model.began_provisional().is_some()) {
            self.provisional();
            let incarnation = self.model.incarnation_of(&own);
            self.last_observation = Some(Observation { incarnation, ..obs });
        }
        if !self.judging {
            return;
        }
        // The observation names the connection without a second look in the flow table. The
        // rare branch above follows only observations off the model's fast path, which keep
        // no name: those are looked up (the assertion holds the two ways equal).
        let own_conn = self.model.observed_connection(&obs);
        debug_assert_eq!(own_conn, self.model.conn_id(&own), "frame {}", f.number);
        let own_conn = Some(own_conn);
        crate::packet_rules::check(f, p, r, own_conn, &mut self.judge);
        if self.opts.network_stated() {
            crate::net_rules::check(f, p, r, own_conn, &self.opts, &mut self.judge);
        }
        let Some(info) = r.info else { return };
        if obs.seen == Seen::Cm {
            return;
        }
        if info.role == Role::Congestion {
            let (src, dst, qp) = (own.src, own.dst, own.dest_qp);
            let cnp = Cnp { frame: f.number, ts: f.ts_ns, src, dst, qp, conn: own_conn };
            self.congestion.cnp(cnp, &mut self.judge);
            return;
        }
        let ce = p.ecn_ce();
        if ce {
            let sender_qp = match r.headers.deth {
                Some(d) => Some(d.src_qp),
                None => self.model.flow(&own).and_then(|fl| fl.peer).map(|pk| pk.dest_qp),
            };
            let (src, dst) = (own.src, own.dst);
            let mark = CeMark { frame: f.number, ts: f.ts_ns, src, dst, sender_qp, conn: own_conn };
            self.congestion.mark(mark, &mut self.judge);
        }
        match obs.seen {
            Seen::Request => self.judge_packet(f, r, info, own, own, own_conn),
            Seen::Response { stream } => {
                self.after_fatal_nak(f, r, own, own_conn);
                if let Some(s) = stream {
                    self.judge_packet(f, r, info, own, s, own_conn);
                }
            }
            Seen::Cm | Seen::Other => {}
        }
    }

    /// A provisional idle reconnect (`Connections::maybe_reconnect`). Begun by this packet:
    /// the old incarnation's requester stream is copied beside the new one ([`Shadow`]).
    /// Undone by it (the peer's first response proved the QP was not reset): the copy, which
    /// judged the requests since the gap as the old incarnation's, takes over, and what it
    /// found is reported, less what the provisional stream reported already.
    fn provisional(&mut self) {
        let resumed = if self.model.has_resumed() { self.model.take_resumed() } else { Vec::new() };
        for (k, prov) in resumed {
            let Slot { stream: prov, ext } = prov;
            if std::mem::size_of::<X>() != 0 {
                self.resumed.push((k, ext));
            }
            let Some(sh) = prov.and_then(|p| p.shadow) else { continue };
            let Shadow { stream, mut judge, reported, .. } = *sh;
            if let Some(fl) = self.model.flow_mut(&k) {
                fl.state.stream = Some(Box::new(stream));
            }
            for x in judge.take() {
                if !reported.iter().any(|(rule, frames)| *rule == x.rule && *frames == x.frames) {
                    self.judge.absorb(x);
                }
            }
        }
        let Some(own) = self.model.began_provisional().filter(|_| self.judging) else { return };
        let Some(old) = self.model.flow(&own).and_then(|fl| fl.before(&own)) else { return };
        let sh = Shadow {
            stream: old.state.stream.as_deref().map(Stream::copy).unwrap_or_default(),
            judge: Judge::new(self.opts.rules.clone(), self.opts.max_findings_per_rule, 64),
            conn: Some(old.connection(&own)),
            pmtu: old.pmtu.map(|p| p.0).or(self.model.default_pmtu()),
            pkey: old.pkey.map(|k| k.0),
            cm_start: old.cm_start_psn,
            timed: self.opts.qp_timeout.is_some() || old.began.how == BeganBy::Cm,
            reported: Vec::new(),
        };
        if let Some(fl) = self.model.flow_mut(&own) {
            fl.state.stream().shadow = Some(Box::new(sh));
        }
    }

    /// RSP-NAK-ERROR: a QP that sent a fatal NAK sends nothing more.
    fn after_fatal_nak(&mut self, f: &FrameInfo, r: &Roce<'_>, own: FlowKey, conn: Option<ConnId>) {
        let Some(flow) = self.model.flow_mut(&own) else { return };
        fatal_nak_silence(flow, f, r, conn, &mut self.judge);
    }

    /// A request of stream `key` (then `own == key`) or a response to it. The connection's
    /// name is the same from both directions.
    fn judge_packet(
        &mut self,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &'static OpcodeInfo,
        own: FlowKey,
        key: FlowKey,
        conn: Option<ConnId>,
    ) {
        let default_pmtu = self.model.default_pmtu();
        let Checker { opts, judge, model, last_retransmission, .. } = self;
        let Some(flow) = model.flow_mut(&key) else { return };
        let request = own == key;
        if request && flow.stale(Psn::new(r.bth.psn)) {
            // A late request of the incarnation before, to the DestQP its QP had (reset
            // since, so it drops it): no transmission of the live requester's.
            return;
        }
        if request {
            fatal_nak_silence(flow, f, r, conn, judge);
            let provisional = flow.provisional();
            let stream = flow.state.stream();
            if stream.shadow.is_some() && !provisional {
                // The reconnect was confirmed: the old stream's copy is done with.
                stream.shadow = None;
            }
            if let Some(sh) = stream.shadow.as_deref_mut() {
                let old = Pkt {
                    frame: f,
                    roce: r,
                    info,
                    psn: Psn::new(r.bth.psn),
                    conn: sh.conn,
                    pmtu: sh.pmtu,
                    pkey: sh.pkey,
                    cm_start: sh.cm_start,
                    opts,
                };
                let new = sh.stream.request(&old, &mut sh.judge);
                if let Some(new) = new.filter(|_| sh.timed) {
                    let timing = sh.stream.timing.get_or_insert_with(Box::default);
                    if let (Some(retx), Some(t)) = (timing.request(f, r, !new), opts.qp_timeout) {
                        crate::requester::qp_timeout(&retx, t, &old, &mut sh.judge);
                    }
                }
            }
        }
        let before = judge.pending();
        let x = Pkt {
            frame: f,
            roce: r,
            info,
            psn: Psn::new(r.bth.psn),
            conn,
            pmtu: flow.pmtu.map(|p| p.0).or(default_pmtu),
            pkey: flow.pkey.map(|k| k.0),
            cm_start: flow.cm_start_psn,
            opts,
        };
        let mut retransmitted = false;
        if request {
            let Some(new) = flow.state.stream().request(&x, judge) else {
                // From another partition: no transmission of this requester's (timers
                // included).
                return;
            };
            retransmitted = !new;
            *last_retransmission = Some(retransmitted);
        } else {
            flow.state.stream().response(&x, judge);
        }
        if let Some(code) = opts.rnr_timer.filter(|_| !request) {
            crate::responder::rnr_timer(&x, code, judge);
        }
        // The timers are measured for --qp-timeout, and on every CM-opened incarnation for
        // the REQ-CM-* rules (judged when it ends).
        if opts.qp_timeout.is_some() || flow.began.how == BeganBy::Cm {
            let timing = flow.state.stream().timing.get_or_insert_with(Box::default);
            if !request {
                timing.response(f, r);
            } else if let Some(retx) = timing.request(f, r, retransmitted) {
                if let Some(t) = opts.qp_timeout {
                    crate::requester::qp_timeout(&retx, t, &x, judge);
                }
            }
        }
        // Beside a provisional idle reconnect: what the provisional stream reported, which
        // the old stream's copy does not report again if the reconnect is undone.
        if let Some(sh) = flow.state.stream().shadow.as_deref_mut() {
            for found in judge.since(before) {
                if sh.reported.len() < SHADOW_REPORTED {
                    sh.reported.push((found.rule, found.frames.clone()));
                }
            }
        }
    }

    /// REQ-CM-ACK-TIMEOUT, REQ-CM-RETRY-COUNT and REQ-CM-RNR-RETRY-COUNT on an incarnation
    /// that ended: its timers against what its CM REQ (and REP) announced (the comparison
    /// `stats` shows as `negotiated`).
    fn judge_cm_timers(&mut self, info: &ConnectionInfo, timing: &Timing) {
        let Some(cm) = exchange_of(self.model.cm_exchanges(), info) else { return };
        let negotiated = compare(&timing.report(), cm);
        if negotiated.agrees {
            return;
        }
        let conn = Some(info.connection);
        let x = CmTimers { cm, timing, negotiated: &negotiated, conn };
        crate::requester::cm_ack_timeout(&x, &mut self.judge);
        crate::requester::cm_retry_count(&x, &mut self.judge);
        crate::requester::cm_rnr_retry_count(&x, &mut self.judge);
    }

    /// Finishes the incarnations the model ended and lists them.
    fn settle_ended(&mut self) {
        if !self.model.has_ended() {
            return;
        }
        for ended in self.model.take_ended() {
            let info = ended.info;
            let conn = Some(info.connection);
            let mut streams = Vec::with_capacity(ended.directions.len());
            let mut exts = Vec::new();
            for (k, Slot { stream, ext }) in ended.directions {
                streams.push((k, stream));
                exts.push((k, ext));
            }
            if std::mem::size_of::<X>() != 0 {
                self.ended.push(Ended { info: info.clone(), directions: exts });
            }
            if !self.judging {
                // The caller lists what it keeps (stats' counters): the checker lists nothing.
                continue;
            }
            if info.ended.how == EndedBy::Evicted {
                let why = info.ended.why.clone();
                let frames = [info.last_frame, info.ended.frame];
                // Named in the message, counted as the checker's own (one cap for all).
                self.judge.report(&rules::CAP_EVICT, &frames, None, None, || {
                    format!("state of {} {why}", info.connection)
                });
            }
            let paired = info.paired_by.is_some();
            let mut judged = Judged { retransmissions: 0, missing: 0, partly: Vec::new() };
            let mut timing: Option<Timing> = None;
            for (_, st) in streams {
                let mut st = st.map(|b| *b).unwrap_or_default();
                st.finish(conn, paired, self.last_ts, self.opts.ack_timeout_ns, &mut self.judge);
                judged.retransmissions += st.req.retransmissions;
                judged.missing += st.req.missing;
                judged.partly.extend(st.req.partly);
                if let Some(t) = st.timing.as_deref() {
                    timing.get_or_insert_with(Timing::default).merge(t);
                }
            }
            if let Some(t) = &timing {
                self.judge_cm_timers(&info, t);
            }
            if !paired && matches!(info.transport, "RC" | "XRC") {
                judged.partly.push("the other direction was not identified: responses not judged");
            }
            judged.partly.dedup();
            self.judge.forget(&info.connection);
            self.listed.push(info, judged);
        }
    }

    /// Ends the run: pending evidence becomes findings; the report per connection
    /// incarnation; every finding not taken before, named by its connection's final name.
    pub fn finish(self) -> Report {
        self.finish_parts(true).0
    }

    /// Ends every live incarnation, as the end of the capture does: the caller's state of
    /// each is then in [`Checker::take_ended`]. ([`Checker::finish`] does it first; a caller
    /// that wants its state back, or the model's CM exchanges after, calls this before.)
    pub fn end_all(&mut self) {
        for k in self.model.finish_order() {
            self.model.finish_flow(k);
            self.settle_ended();
            tag(&mut self.proven, &self.judge, Proven::End(k));
        }
    }

    /// Ends a shard's run ([`Checker::for_shard`]): its report without CAP-TIME, which
    /// [`crate::merge_shards`] makes from every shard's steps back.
    pub fn finish_shard(self) -> crate::ShardReport {
        let usage = crate::sharded::Usage {
            model: self.model.usage(),
            counters_peak: self.judge.peak_counters,
            congestion: self.congestion.sizes(),
            congestion_cap: self.congestion.cap(),
            cnp_min_interval: self.opts.cnp_min_interval,
            caps: self.judge.caps(),
        };
        let (report, proven, clock) = self.finish_parts(false);
        crate::ShardReport::new(report, proven, clock, usage)
    }

    /// The end of [`Checker::finish`] (with CAP-TIME) and [`Checker::finish_shard`]
    /// (without; with where each finding was proven, and the steps back).
    fn finish_parts(mut self, capture_time: bool) -> (Report, Vec<Proven>, ClockSteps) {
        self.end_all();
        let Checker { congestion, judge, proven, last_ts, .. } = &mut self;
        congestion.finish(*last_ts, judge, |j, frame| tag(proven, j, Proven::Burst(frame)));
        if capture_time && self.judging {
            self.clock.report(&mut self.judge);
        }
        let state = self.state();
        let mut findings = self.judge.take();
        for f in &mut findings {
            f.connection = f.connection.map(|c| self.model.canonical(c));
        }
        let (listed, not_listed) = self.listed.into_sorted();
        let connections = listed
            .into_iter()
            .map(|(info, j)| {
                let (packets, missing) = (info.packets, j.missing);
                ConnectionReport {
                    info,
                    retransmissions: j.retransmissions,
                    missing_packets: missing,
                    completeness: if packets + missing == 0 {
                        1.0
                    } else {
                        packets as f64 / (packets + missing) as f64
                    },
                    partly_judged: j.partly,
                }
            })
            .collect();
        let report = Report {
            findings,
            connections,
            connections_not_listed: not_listed,
            frames: self.frames,
            roce_frames: self.roce_frames,
            ib_frames: self.ib_frames,
            ib_unmodelled: self.ib_unmodelled,
            errors: self.judge.errors,
            warnings: self.judge.warnings,
            suppressed: self.judge.suppressed,
            by_rule: self.judge.totals(),
            state,
        };
        (report, self.proven.unwrap_or_default(), self.clock)
    }
}
