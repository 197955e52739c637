//! The connection model: which packets belong to which connection, and when a connection
//! begins and ends. Every consumer (`check`, `stats`, and whatever reads connections
//! next) sees the same connections because they all go through [`Connections`].
//!
//! ## Flows and pairing
//! A *flow* is one direction to one QP: (source address, destination address, DestQP). BTH
//! carries no source QPN, so the two flows of a connection are paired from evidence:
//! - CM (exact): a REQ / REP pair, matched by communication IDs, names both QPNs, the
//!   starting PSNs (which cross over: each side announces the PSN it expects to receive),
//!   the PMTU, the transport and the P_Key;
//! - PSN echo: a response B -> A with PSN p answers the A -> B flow that recently sent a
//!   request with PSN p (initial PSNs are random 24-bit numbers, so one flow matches). The
//!   UDP source port is never used: it is flow entropy, not an identity.
//!
//! ## Lifecycle
//! A connection *incarnation* begins with a CM REP (or with its first packets when no CM was
//! captured) and ends with a CM DREQ/DREP or REJ, when a new incarnation reuses its QPNs, when
//! it is evicted, or at the end of the capture; a fatal NAK (invalid request, remote access or
//! remote operational error) is recorded as how it ended, but the incarnation stays open so
//! that what the NAKing QP sends afterwards can still be judged. QPNs are reused:
//! - a REP naming QPNs in use starts a new incarnation, with fresh state and the starting
//!   PSNs from CM;
//! - without CM, a request after at least [`ModelOptions::reconnect_idle_ns`] of silence on
//!   its flow, at a PSN more than [`RECONNECT_PSN_DISTANCE`] away from anything the flow sent,
//!   that starts a message (FIRST or ONLY), is the same event seen without its CM exchange:
//!   rping and most RDMA-CM applications reconnect this way. The new incarnation says why.
//!   It is a guess, and the traffic after the gap can disprove it: when the flow's peer is
//!   known, the new incarnation is provisional (the old flows kept aside, `Provisional`)
//!   until the peer's first packet. A response naming a PSN of the old window (a NAK of the
//!   old expected PSN) or carrying an MSN that continues the old one, beyond what a fresh QP
//!   could have reached, proves the QP was not reset: the old incarnation comes back with the
//!   packets since ([`Connections::take_resumed`] gives consumers the provisional states to
//!   merge). Anything else, or the incarnation ending first, confirms the reconnect.
//!
//! Each incarnation that ends comes out of [`Connections::take_ended`] with its consumer
//! state, so a consumer finishes judging or counting it and reports it on its own.
//!
//! ## Bounds
//! At most [`ModelOptions::max_flows`] flows are live; beyond, a connection not used
//! recently is evicted (ended with [`EndedBy::Evicted`], which consumers report). The choice
//! is CLOCK (second chance): each flow carries a "used" mark set by its packets, and the
//! eviction hand skips (and clears) marked flows; it approximates least-recently-used at one
//! store per packet, where an exact LRU queue cost a push per packet and a hash lookup per
//! entry to compact. Every other table (the PSN index, CM exchanges in progress, the clock)
//! is bounded from the cap.

mod cm;
mod table;

use std::collections::VecDeque;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use roce_parser::{NakCode, OpcodeInfo, Packet, Position, Roce, Role, Transport};
use serde::Serialize;

use crate::hash::FastHashMap;
use crate::psn::Psn;
use crate::FrameInfo;
use table::FlowTable;

pub use cm::{exchange_of, CmExchange, CmTracker};

/// The two ends of a connection as reports name them, and which incarnation of that QP pair
/// it is (QPNs are reused: each CM connection, or each reconnect seen without CM, is one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ConnId {
    /// One end's address (IP, or the GID of a GRH when there is no IP header).
    pub a: IpAddr,
    /// QPN on side a (the DestQP of b -> a packets), when known.
    pub qpn_a: Option<u32>,
    /// The other end's address.
    pub b: IpAddr,
    /// QPN on side b (the DestQP of a -> b packets).
    pub qpn_b: Option<u32>,
    /// 1 for the first connection seen on these QPs, 2 for the next, ...
    pub incarnation: u32,
}

impl fmt::Display for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = |q: Option<u32>| q.map_or("?".to_string(), |q| format!("0x{q:06x}"));
        write!(f, "{} QP {} <-> {} QP {}", self.a, q(self.qpn_a), self.b, q(self.qpn_b))?;
        if self.incarnation > 1 {
            write!(f, " (incarnation {})", self.incarnation)?;
        }
        Ok(())
    }
}

/// One direction to one QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FlowKey {
    /// The sender's address (IP, or the GRH's source GID when there is no IP header).
    pub src: IpAddr,
    /// The receiver's address.
    pub dst: IpAddr,
    /// The DestQP of the flow's packets.
    pub dest_qp: u32,
}

impl FlowKey {
    /// The flow of a RoCE packet.
    pub fn of(p: &Packet<'_>, r: &Roce<'_>) -> FlowKey {
        let (src, dst) = match (p.ip, r.grh) {
            (Some(ip), _) => (ip.src, ip.dst),
            (None, Some(g)) => (IpAddr::V6(g.sgid_addr()), IpAddr::V6(g.dgid_addr())),
            (None, None) => (IpAddr::V6(Ipv6Addr::UNSPECIFIED), IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
        };
        FlowKey { src, dst, dest_qp: r.bth.dest_qp }
    }
}

/// Where a connection's PMTU came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PmtuSource {
    /// Announced by CM (the REQ's path MTU).
    Cm,
    /// Given by the caller (`--pmtu`): CM announced none.
    Option,
    /// Inferred from the payload of FIRST or MIDDLE packets, which carry exactly one PMTU
    /// (256 to 4096).
    Inferred,
}

/// How the two directions were paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairedBy {
    /// By a CM REQ / REP pair: exact.
    Cm,
    /// By PSN echo: a response answered a PSN this flow had just sent.
    Psn,
}

/// Where a connection's P_Key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PkeySource {
    /// Announced by CM (the REQ).
    Cm,
    /// Taken from the BTH of the flow's first packet.
    FirstPacket,
}

/// How an incarnation began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BeganBy {
    /// Its first packets (no CM exchange captured before them).
    FirstPackets,
    /// A CM REQ / REP exchange.
    Cm,
    /// Traffic resumed on the same QPNs after an idle gap at unrelated PSNs (no CM seen).
    IdleReconnect,
    /// Traffic after the previous incarnation was disconnected or rejected.
    AfterEnd,
}

/// How an incarnation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndedBy {
    /// CM DREQ / DREP.
    Disconnect,
    /// CM REJ.
    Reject,
    /// A fatal NAK (the responder's QP went to the error state).
    FatalNak,
    /// A new incarnation reused its QPNs (CM REP, or an idle reconnect).
    Reconnect,
    /// Evicted to stay within the cap on tracked flows.
    Evicted,
    /// Still open when the capture ended.
    CaptureEnd,
}

macro_rules! names {
    ($($ty:ident { $($v:ident => $s:literal),* $(,)? })*) => {$(
        impl $ty {
            /// The name used in JSON and text output.
            pub const fn as_str(self) -> &'static str {
                match self { $($ty::$v => $s),* }
            }
        }
    )*};
}

names! {
    PmtuSource { Cm => "cm", Option => "option", Inferred => "inferred" }
    PairedBy { Cm => "cm", Psn => "psn" }
    PkeySource { Cm => "cm", FirstPacket => "first_packet" }
    BeganBy { FirstPackets => "first_packets", Cm => "cm", IdleReconnect => "idle_reconnect", AfterEnd => "after_end" }
    EndedBy {
        Disconnect => "disconnect", Reject => "reject", FatalNak => "fatal_nak",
        Reconnect => "reconnect", Evicted => "evicted", CaptureEnd => "capture_end",
    }
}

/// One end of an incarnation: how, at which frame, and why in one sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Boundary<H> {
    /// How it began or ended.
    pub how: H,
    /// The frame that began or ended it (0: none, e.g. the end of the capture; `null` in
    /// JSON).
    #[serde(serialize_with = "crate::json::frame_or_null")]
    pub frame: u64,
    /// One sentence ("" when `how` says it all; `null` in JSON).
    #[serde(serialize_with = "crate::json::text_or_null")]
    pub why: String,
}

/// Tunables of the model.
#[derive(Debug, Clone, Copy)]
pub struct ModelOptions {
    /// Flows tracked at once; beyond it, a connection not used recently is evicted.
    pub max_flows: usize,
    /// PMTU to assume when CM did not announce one.
    pub pmtu: Option<u32>,
    /// Silence on a flow after which unrelated PSNs start a new incarnation (no CM seen).
    pub reconnect_idle_ns: u64,
}

/// Distance, in PSNs, from everything a flow sent beyond which a resumed flow is a new
/// incarnation rather than retransmissions or capture loss (requests remembered for
/// retransmission checks span far less).
pub const RECONNECT_PSN_DISTANCE: i32 = 1 << 12;

/// How far past the old incarnation's last MSN a response's MSN may be, beyond the requests
/// sent after the gap, and still continue it (messages completed before the gap that the
/// peer's last response had not counted yet).
const RECONNECT_MSN_SLACK: u32 = 64;

/// How far below a response's PSN pairing looks for the request it answers (a response
/// captured before its request, or coalesced ACKs).
const PAIR_LOOKBACK: u32 = 4;
/// Recent request PSNs of an unpaired flow kept in the pairing index.
const INDEXED: usize = 8;

/// A flow and what the model knows of it.
#[derive(Debug, Clone)]
pub struct Flow<T> {
    /// The reverse flow (responses to this flow's requests travel there).
    pub peer: Option<FlowKey>,
    /// How the flow and its peer were paired (`None`: not paired yet).
    pub paired_by: Option<PairedBy>,
    /// The PMTU in bytes, and where it came from.
    pub pmtu: Option<(u32, PmtuSource)>,
    /// RC, UC, ... as the first packet's opcode says.
    pub transport: Option<Transport>,
    /// The partition of the connection: requests carrying another P_Key are not its own.
    pub pkey: Option<(u16, PkeySource)>,
    /// The PSN CM announced for the first request of this flow.
    pub cm_start_psn: Option<Psn>,
    /// The incarnation of the QP pair (1, 2, ...): QPNs are reused.
    pub incarnation: u32,
    /// How this incarnation began.
    pub began: Boundary<BeganBy>,
    /// The frame of a fatal NAK this flow carried.
    pub fatal_nak: Option<u64>,
    /// DREQ frame, when a disconnect is under way.
    dreq: Option<u64>,
    /// CM communication IDs (active, passive) of the incarnation, when CM opened it.
    comm_ids: Option<(u32, u32)>,
    /// Packets of this flow in this incarnation.
    pub packets: u64,
    /// Frame of the flow's first packet.
    pub first_frame: u64,
    /// Frame of the flow's last packet.
    pub last_frame: u64,
    /// Time of the flow's first packet (ns since the epoch, the capture's clock).
    pub first_ts: u64,
    /// Time of the flow's last packet.
    pub last_ts: u64,
    /// Highest request PSN sent on this flow.
    max_req_psn: Option<Psn>,
    /// The highest request PSN of the incarnation before this one on this flow: a late
    /// request of that incarnation carries a PSN near it ([`Flow::stale`]).
    prior_max: Option<Psn>,
    /// Recent request PSNs registered in the pairing index while unpaired.
    indexed: VecDeque<Psn>,
    /// Used since the eviction clock last passed it (second chance).
    referenced: bool,
    /// The MSN of the last response with an AETH this flow carried.
    last_msn: Option<u32>,
    /// An idle reconnect this requester flow began provisionally: the old incarnation, kept
    /// until the peer's first packet says whether the QP was reset.
    provisional: Option<Box<Provisional<T>>>,
    /// The peer's flow of a provisional idle reconnect: its first packet decides it (the key
    /// of the requester flow holding the old incarnation).
    decides: Option<FlowKey>,
    /// The consumer's state of this flow for the current incarnation.
    pub state: T,
}

/// An idle reconnect begun provisionally ([`Connections::maybe_reconnect`]): the old
/// incarnation's flows as the reconnect found them, and what the peer's first response must
/// show to prove that the QP was not reset.
#[derive(Debug, Clone)]
struct Provisional<T> {
    /// The old flows (the requester's first).
    old: Vec<(FlowKey, Flow<T>)>,
    /// How the old incarnation ends if the reconnect is confirmed.
    ended: Boundary<EndedBy>,
    /// The highest PSN the requester had sent before the jump.
    old_max: Psn,
    /// The MSN of the peer's last response before the jump.
    old_msn: Option<u32>,
}

impl<T> Flow<T> {
    /// The name of the connection this flow (`key`) belongs to.
    pub fn connection(&self, key: &FlowKey) -> ConnId {
        conn_id(key, self.peer.map(|p| p.dest_qp), self.incarnation)
    }

    /// The flow began an idle reconnect that its peer's first packet has not decided yet.
    pub fn provisional(&self) -> bool {
        self.provisional.is_some()
    }

    /// A request at `psn` to this flow's DestQP that belongs to the incarnation before this
    /// CM-opened one: within [`RECONNECT_PSN_DISTANCE`] of the PSNs that incarnation
    /// reached, and farther than that from where this one's requests stand (its CM starting
    /// PSN, or the next PSN after its highest). The QP behind the DestQP was reset for the
    /// new incarnation and drops it: no transmission of the live requester's. When the two
    /// windows are that close, nothing is taken as stale.
    pub fn stale(&self, psn: Psn) -> bool {
        let (Some(old), Some(start)) = (self.prior_max, self.cm_start_psn) else { return false };
        let next = self.max_req_psn.map_or(start, |m| m + 1);
        (psn - (old + 1)).abs() <= RECONNECT_PSN_DISTANCE
            && (psn - next).abs() > RECONNECT_PSN_DISTANCE
    }

    /// The old incarnation's flow `key` while this flow's idle reconnect is provisional.
    pub fn before(&self, key: &FlowKey) -> Option<&Flow<T>> {
        let p = self.provisional.as_deref()?;
        p.old.iter().find(|(k, _)| k == key).map(|(_, f)| f)
    }
}

impl<T: Default> Flow<T> {
    fn new(incarnation: u32, began: Boundary<BeganBy>) -> Self {
        Flow {
            peer: None,
            paired_by: None,
            pmtu: None,
            transport: None,
            pkey: None,
            cm_start_psn: None,
            incarnation,
            began,
            fatal_nak: None,
            dreq: None,
            comm_ids: None,
            packets: 0,
            first_frame: 0,
            last_frame: 0,
            first_ts: 0,
            last_ts: 0,
            max_req_psn: None,
            prior_max: None,
            indexed: VecDeque::new(),
            referenced: true,
            last_msn: None,
            provisional: None,
            decides: None,
            state: T::default(),
        }
    }
}

/// What an incarnation was, when it ends.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionInfo {
    /// Its name: the two ends, their QPNs, the incarnation.
    pub connection: ConnId,
    /// RC, UC, ... (`unknown` when no packet told).
    pub transport: &'static str,
    /// How its directions were paired (`None`: the other direction was not identified).
    pub paired_by: Option<PairedBy>,
    /// PMTU in bytes, when known.
    pub pmtu: Option<u32>,
    /// Where the PMTU came from.
    pub pmtu_source: Option<PmtuSource>,
    /// Its P_Key, when known.
    pub pkey: Option<u16>,
    /// Where the P_Key came from.
    pub pkey_source: Option<PkeySource>,
    /// How and where it began.
    pub began: Boundary<BeganBy>,
    /// How and where it ended.
    pub ended: Boundary<EndedBy>,
    /// Packets of both directions.
    pub packets: u64,
    /// Frame of its first packet.
    pub first_frame: u64,
    /// Frame of its last packet.
    pub last_frame: u64,
    /// Timestamps as strings of decimal seconds (the JSON contract, `json::ts`).
    #[serde(serialize_with = "crate::json::ts")]
    pub first_ts: u64,
    /// Timestamp of its last packet (decimal seconds in JSON).
    #[serde(serialize_with = "crate::json::ts")]
    pub last_ts: u64,
}

/// An incarnation that ended, with the consumer's state of each of its directions.
#[derive(Debug)]
pub struct Ended<T> {
    /// What it was.
    pub info: ConnectionInfo,
    /// One or two directions, the flow whose packets came first first.
    pub directions: Vec<(FlowKey, T)>,
}

/// What a packet is to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// A CM MAD (on QP1): the model took what it needed.
    Cm,
    /// A request of the flow `stream`.
    Request,
    /// A response to the requests of `stream`, when the model knows which flow that is.
    Response {
        /// The request flow answered (the reverse of the response's own flow).
        stream: Option<FlowKey>,
    },
    /// A CNP (congestion notification), or a packet of an unknown opcode.
    Other,
}

/// The packet's place in the model.
#[derive(Debug, Clone, Copy)]
pub struct Observation {
    /// The packet's own flow.
    pub own: FlowKey,
    /// What the packet is to the model.
    pub seen: Seen,
    /// A request (of any transport, CM MADs included) whose PSN is not newer than the
    /// highest its flow's own requests reached in this incarnation: a go-back-N or timeout
    /// retransmission, a duplicated READ. Decided here once for every consumer (`stats`'
    /// counters, the timers, the report's series, the packets table). A request the
    /// responder drops (another partition's P_Key, a late one of the incarnation before)
    /// is judged against the flow's PSNs but does not move them.
    pub retransmitted: bool,
    /// The incarnation of the packet's connection once the model took it (1 for the first
    /// connection on these QPs); `None` when the model holds no flow for it.
    pub incarnation: Option<u32>,
}

/// The model's own accounting, to prove it stays bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ModelStats {
    /// Live flows.
    pub flows: usize,
    /// Request PSNs of unpaired flows indexed for PSN-echo pairing.
    pub pairing_index: usize,
    /// Entries of the eviction clock (every flow once, plus stale keys until tidied).
    pub lru_queue: usize,
    /// CM REQs waiting for their REP.
    pub cm_pending: usize,
    /// Incarnations evicted so far to stay within [`ModelOptions::max_flows`].
    pub evicted: u64,
}

/// [`Connections::usage`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ModelUsage {
    pub(crate) flows: usize,
    pub(crate) evicted: u64,
    pub(crate) aliases: usize,
    pub(crate) cm_pending_peak: usize,
    pub(crate) cm_open_peak: usize,
    pub(crate) cm_pending_cap: usize,
    pub(crate) cm_open_cap: usize,
}

/// Every live connection, generic over what its consumer keeps per flow (`T`).
#[derive(Debug)]
pub struct Connections<T> {
    opts: ModelOptions,
    flows: FlowTable<T>,
    /// (requester src, requester dst, PSN) -> the unpaired flow that sent it.
    pairing: FastHashMap<(IpAddr, IpAddr, Psn), FlowKey>,
    /// The eviction clock: flows in creation order; the hand evicts the first one not used
    /// since it last passed (CLOCK, an O(1)-per-packet approximation of least recently used).
    clock: VecDeque<FlowKey>,
    cm: CmTracker,
    /// The one-sided names connections had before their directions were paired -> the final
    /// name (bounded like the flows: cleared past a multiple of the cap).
    aliases: FastHashMap<ConnId, ConnId>,
    ended: Vec<Ended<T>>,
    /// The provisional states of the flows of an idle reconnect undone by the packet observed
    /// last (the old incarnation continues; see [`Connections::take_resumed`]).
    resumed: Vec<(FlowKey, T)>,
    /// The requester flow whose idle reconnect the packet observed last began provisionally.
    began_provisional: Option<FlowKey>,
    /// The DestQP of the other direction of the flow observed last, once paired, when the
    /// observation took the fast path (`live_flow`): with the observation, that flow's
    /// connection name ([`Connections::observed_connection`]); `None` when not kept.
    observed_peer_qp: Option<Option<u32>>,
    evicted: u64,
}

impl<T: Default> Connections<T> {
    /// An empty model (`max_flows` of 0 counts as 1).
    pub fn new(opts: ModelOptions) -> Self {
        let cap = opts.max_flows.max(1);
        Connections {
            opts: ModelOptions { max_flows: cap, ..opts },
            flows: FlowTable::default(),
            pairing: FastHashMap::default(),
            clock: VecDeque::new(),
            cm: CmTracker::new(cap.min(4096), cap),
            aliases: FastHashMap::default(),
            ended: Vec::new(),
            resumed: Vec::new(),
            began_provisional: None,
            observed_peer_qp: None,
            evicted: 0,
        }
    }

    /// The model's state sizes.
    pub fn stats(&self) -> ModelStats {
        ModelStats {
            flows: self.flows.len(),
            pairing_index: self.pairing.len(),
            lru_queue: self.clock.len(),
            cm_pending: self.cm.pending(),
            evicted: self.evicted,
        }
    }

    /// The incarnation flow `key` is in, when the model holds it.
    pub(crate) fn incarnation_of(&self, key: &FlowKey) -> Option<u32> {
        self.flows.get(key).map(|f| f.incarnation)
    }

    /// The incarnation of flow `key` (the observation's, off the fast path: its peer's
    /// DestQP is not kept, [`Connections::observed_connection`] looks it up).
    fn names_of(&mut self, key: &FlowKey) -> Option<u32> {
        self.observed_peer_qp = None;
        self.incarnation_of(key)
    }

    /// The connection of the flow [`Connections::observe`] gave `obs` for, as findings name
    /// it: what [`Connections::conn_id`] gives for `obs.own` then, without looking the flow
    /// up again. `obs` is the last observation, its incarnation as it stands now.
    #[inline]
    pub(crate) fn observed_connection(&self, obs: &Observation) -> ConnId {
        match self.observed_peer_qp {
            Some(peer_qp) => conn_id(&obs.own, peer_qp, obs.incarnation.unwrap_or(1)),
            None => self.conn_id(&obs.own),
        }
    }

    /// The flow `key`, when live.
    pub fn flow(&self, key: &FlowKey) -> Option<&Flow<T>> {
        self.flows.get(key)
    }

    /// The flow `key`, when live, to update its consumer state.
    pub fn flow_mut(&mut self, key: &FlowKey) -> Option<&mut Flow<T>> {
        self.flows.get_mut(key)
    }

    /// Every live flow (for state accounting).
    pub fn flows(&self) -> impl Iterator<Item = (&FlowKey, &Flow<T>)> {
        self.flows.iter()
    }

    /// The current name of the connection `key` belongs to.
    pub fn conn_id(&self, key: &FlowKey) -> ConnId {
        match self.flows.get(key) {
            Some(f) => f.connection(key),
            None => conn_id(key, None, 1),
        }
    }

    /// Every CM exchange seen (up to the cap), in REQ order, with its outcome.
    pub fn cm_exchanges(&self) -> &[CmExchange] {
        self.cm.exchanges()
    }

    /// CM exchanges beyond the cap, counted, not logged.
    pub fn cm_not_logged(&self) -> u64 {
        self.cm.not_logged
    }

    /// The PMTU assumed when a connection has none of its own (`--pmtu`).
    pub fn default_pmtu(&self) -> Option<u32> {
        self.opts.pmtu
    }

    /// Whether incarnations ended since the last [`Self::take_ended`].
    pub fn has_ended(&self) -> bool {
        !self.ended.is_empty()
    }

    /// The final name of a connection named before its two directions were paired.
    pub fn canonical(&self, id: ConnId) -> ConnId {
        self.aliases.get(&id).copied().unwrap_or(id)
    }

    /// The PMTU to judge the flow's connection by.
    pub fn pmtu(&self, key: &FlowKey) -> Option<u32> {
        self.flows.get(key).and_then(|f| f.pmtu).map(|p| p.0).or(self.opts.pmtu)
    }

    /// Incarnations that ended since the last call.
    pub fn take_ended(&mut self) -> Vec<Ended<T>> {
        std::mem::take(&mut self.ended)
    }

    /// When the packet observed last undid a provisional idle reconnect (its peer's first
    /// response proved the QP was not reset), the flows are back in the old incarnation with
    /// their old state, and these are the states the provisional incarnation had given them
    /// (the consumer merges what it needs). Empty otherwise; valid until the next
    /// [`Self::observe`].
    pub fn take_resumed(&mut self) -> Vec<(FlowKey, T)> {
        std::mem::take(&mut self.resumed)
    }

    /// Whether [`Self::take_resumed`] has something (cheap: asked once per packet).
    pub fn has_resumed(&self) -> bool {
        !self.resumed.is_empty()
    }

    /// The requester flow whose idle reconnect the packet observed last began provisionally
    /// (its old incarnation's flow is [`Flow::before`]); valid until the next
    /// [`Self::observe`].
    pub fn began_provisional(&self) -> Option<FlowKey> {
        self.began_provisional
    }

    /// Places one RoCE packet (any: RC, UC, UD, CNP, CM) in the model.
    pub fn observe(&mut self, f: &FrameInfo, p: &Packet<'_>, r: &Roce<'_>) -> Observation {
        let own = FlowKey::of(p, r);
        self.resumed.clear();
        self.began_provisional = None;
        if let Some(Ok(mad)) = r.mad() {
            if let Some(m) = mad.cm {
                self.touch(own, f);
                if let (Some(info), Some(fl)) = (r.info, self.flows.get_mut(&own)) {
                    fl.transport.get_or_insert(info.transport);
                }
                let retransmitted = self.other_request(own, r);
                self.cm_message(f, own, &m);
                let incarnation = self.names_of(&own);
                return Observation { own, seen: Seen::Cm, retransmitted, incarnation };
            }
        }
        if let Some(info) = r.info {
            if let Some((seen, retransmitted, incarnation)) = self.live_flow(own, f, r, info) {
                if let Seen::Response { stream: Some(s) } = seen {
                    self.infer_pmtu(s, r, info.position);
                }
                return Observation { own, seen, retransmitted, incarnation: Some(incarnation) };
            }
        }
        // The peer's first packet after a provisional idle reconnect (never on the fast path:
        // its flow is fresh).
        if let Some(q) = self.flows.get(&own).and_then(|fl| fl.decides) {
            self.decide(q, r);
        }
        let Some(info) = r.info else {
            self.touch(own, f);
            let incarnation = self.names_of(&own);
            return Observation { own, seen: Seen::Other, retransmitted: false, incarnation };
        };
        let connected = matches!(info.transport, Transport::Rc | Transport::Uc | Transport::Xrc);
        let mut retransmitted = false;
        let seen = match info.role {
            Role::Request if connected => {
                self.maybe_reconnect(own, f, r, info.position);
                self.touch(own, f);
                retransmitted = self.request(own, r, info);
                Seen::Request
            }
            Role::Response if connected => {
                self.touch(own, f);
                let stream = self.response(own, f, r, info.transport);
                if let Some(s) = stream {
                    self.infer_pmtu(s, r, info.position);
                }
                Seen::Response { stream }
            }
            _ => {
                self.touch(own, f);
                if let Some(flow) = self.flows.get_mut(&own) {
                    flow.transport.get_or_insert(info.transport);
                }
                if info.role == Role::Request {
                    retransmitted = self.other_request(own, r);
                }
                Seen::Other
            }
        };
        let incarnation = self.names_of(&own);
        Observation { own, seen, retransmitted, incarnation }
    }

    /// A request the model does not follow as a connection's (UD, CM MADs, other transports):
    /// whether its PSN is not newer than its flow's highest, which it moves.
    fn other_request(&mut self, key: FlowKey, r: &Roce<'_>) -> bool {
        let psn = Psn::new(r.bth.psn);
        let Some(flow) = self.flows.get_mut(&key) else { return false };
        newest_request(&mut flow.max_req_psn, psn, true)
    }

    /// Ends every live incarnation (the capture is over); they come out of `take_ended`,
    /// in flow order.
    pub fn finish(&mut self) {
        for k in self.finish_order() {
            self.finish_flow(k);
        }
    }

    /// The flows [`Connections::finish`] visits, in its order.
    pub fn finish_order(&self) -> Vec<FlowKey> {
        let mut keys: Vec<FlowKey> = self.flows.keys().copied().collect();
        keys.sort();
        keys
    }

    /// One step of [`Connections::finish`]: ends the incarnation of flow `k` if it still has
    /// one worth reporting (its other direction may have ended it already).
    pub fn finish_flow(&mut self, k: FlowKey) {
        let worth = self.flows.get(&k).is_some_and(|f| f.packets > 0 || f.began.how == BeganBy::Cm);
        if worth {
            self.end(k, EndedBy::CaptureEnd, 0, String::new(), None);
        }
    }

    /// What a split run sums to tell whether one run would have reached a cap: the flows
    /// live, the one-sided names remembered, the most CM REQs pending and CM IDs open at
    /// once, and those caps.
    pub(crate) fn usage(&self) -> ModelUsage {
        let (pending_cap, open_cap) = self.cm.caps();
        ModelUsage {
            flows: self.flows.len(),
            evicted: self.evicted,
            aliases: self.aliases.len(),
            cm_pending_peak: self.cm.peaks.0,
            cm_open_peak: self.cm.peaks.1,
            cm_pending_cap: pending_cap,
            cm_open_cap: open_cap,
        }
    }

    /// Flows live now (cheap: no walk).
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// The common case in one lookup: a packet of a flow already live, where nothing but
    /// counters changes (no reconnect to consider, no pairing or PMTU to learn). `None`
    /// sends the packet down the general path, which gives the same result.
    fn live_flow(
        &mut self,
        key: FlowKey,
        f: &FrameInfo,
        r: &Roce<'_>,
        info: &OpcodeInfo,
    ) -> Option<(Seen, bool, u32)> {
        let Connections { flows, pairing, opts, observed_peer_qp, .. } = self;
        let flow = flows.get_mut(&key).filter(|fl| fl.packets > 0 && fl.decides.is_none())?;
        let connected = matches!(info.transport, Transport::Rc | Transport::Uc | Transport::Xrc);
        let psn = Psn::new(r.bth.psn);
        let mut retransmitted = false;
        let seen = match info.role {
            Role::Request if connected => {
                let idle = f.ts_ns.saturating_sub(flow.last_ts) >= opts.reconnect_idle_ns;
                let learn_pmtu = flow.pmtu.is_none()
                    && opts.pmtu.is_none()
                    && matches!(info.position, Position::First | Position::Middle);
                if idle || learn_pmtu {
                    return None;
                }
                let pkey = *flow.pkey.get_or_insert((r.bth.pkey, PkeySource::FirstPacket));
                // Another partition's, or a late one of the incarnation before: not the
                // flow's own request (its PSN neither).
                let own = !foreign(pkey.0, r.bth.pkey) && !flow.stale(psn);
                retransmitted = newest_request(&mut flow.max_req_psn, psn, own);
                if flow.peer.is_none() && own {
                    flow.indexed.push_back(psn);
                    if flow.indexed.len() > INDEXED {
                        if let Some(old) = flow.indexed.pop_front() {
                            unindex(pairing, &key, old);
                        }
                    }
                    pairing.insert((key.src, key.dst, psn), key);
                }
                Seen::Request
            }
            Role::Response if connected => {
                let peer = flow.peer?;
                if fatal_nak(r) {
                    flow.fatal_nak.get_or_insert(f.number);
                }
                if let Some(a) = r.headers.aeth {
                    flow.last_msn = Some(a.msn);
                }
                Seen::Response { stream: Some(peer) }
            }
            Role::Request => {
                retransmitted = newest_request(&mut flow.max_req_psn, psn, true);
                Seen::Other
            }
            _ => Seen::Other,
        };
        flow.transport.get_or_insert(info.transport);
        flow.referenced = true;
        flow.packets += 1;
        flow.last_frame = f.number;
        flow.last_ts = flow.last_ts.max(f.ts_ns);
        *observed_peer_qp = Some(flow.peer.map(|p| p.dest_qp));
        Some((seen, retransmitted, flow.incarnation))
    }

    /// Counts a packet of `key` (creating the flow, evicting beyond the cap).
    fn touch(&mut self, key: FlowKey, f: &FrameInfo) {
        if !self.flows.contains_key(&key) {
            self.insert(
                key,
                f.number,
                Flow::new(
                    1,
                    Boundary { how: BeganBy::FirstPackets, frame: f.number, why: String::new() },
                ),
            );
        }
        let Some(flow) = self.flows.get_mut(&key) else { return };
        flow.referenced = true;
        if flow.packets == 0 {
            flow.first_frame = f.number;
            flow.first_ts = f.ts_ns;
            if flow.began.frame == 0 {
                flow.began.frame = f.number;
            }
        }
        flow.packets += 1;
        flow.last_frame = f.number;
        flow.last_ts = flow.last_ts.max(f.ts_ns);
    }

    /// A new flow, evicting beyond the cap.
    fn insert(&mut self, key: FlowKey, frame: u64, flow: Flow<T>) {
        if self.flows.len() >= self.opts.max_flows {
            self.evict_one(frame);
        }
        self.flows.insert(key, flow);
        self.clock.push_back(key);
        // Keys of removed flows linger until the hand passes them; rebuild the clock when
        // they outnumber the flows (amortised O(1) per new flow).
        if self.clock.len() > 2 * self.flows.len() + 1024 {
            let mut keys: Vec<FlowKey> = self.flows.keys().copied().collect();
            keys.sort_unstable();
            self.clock = keys.into();
        }
    }

    /// Evicts the connection of the first flow the clock hand finds unused since its last
    /// pass (every flow it passes loses its mark: at most one full turn).
    fn evict_one(&mut self, frame: u64) {
        let mut turn = 2 * self.clock.len() + 1;
        while let Some(k) = self.clock.pop_front() {
            turn = turn.saturating_sub(1);
            let Some(fl) = self.flows.get_mut(&k) else { continue };
            if fl.referenced && turn > 0 {
                fl.referenced = false;
                self.clock.push_back(k);
                continue;
            }
            let max = self.opts.max_flows;
            let why = format!(
                "evicted to stay within {max} tracked flows (--max-flows): later packets of it start from scratch"
            );
            self.end(k, EndedBy::Evicted, frame, why, None);
            self.evicted += 1;
            return;
        }
    }

    /// A request on a flow whose last packet is long past, at unrelated PSNs, starting a
    /// message: the QPNs were reused by a new connection whose CM exchange was not captured.
    /// When the flow was paired, the reconnect is provisional: the old incarnation is kept
    /// until the peer's first packet, which undoes it if it proves the QP was not reset
    /// ([`Self::decide`]).
    fn maybe_reconnect(&mut self, key: FlowKey, f: &FrameInfo, r: &Roce<'_>, pos: Position) {
        let Some(flow) = self.flows.get(&key) else { return };
        let Some(max) = flow.max_req_psn else { return };
        let psn = Psn::new(r.bth.psn);
        if flow.pkey.is_some_and(|k| foreign(k.0, r.bth.pkey)) || flow.stale(psn) {
            return;
        }
        let idle = f.ts_ns.saturating_sub(flow.last_ts);
        if idle < self.opts.reconnect_idle_ns
            || (psn - max).abs() <= RECONNECT_PSN_DISTANCE
            || !pos.starts_message()
        {
            return;
        }
        let peer = flow.peer.and_then(|pk| self.flows.get(&pk).map(|pf| (pk, pf)));
        if peer
            .is_some_and(|(_, pf)| f.ts_ns.saturating_sub(pf.last_ts) < self.opts.reconnect_idle_ns)
        {
            return;
        }
        let decider = peer.map(|(pk, pf)| (pk, pf.last_msn));
        let why = format!(
            "no CM exchange captured: after {} ms of silence the QP resumed at PSN {psn}, far from the {max} it had reached, with a new message",
            idle / 1_000_000
        );
        let ended = Boundary {
            how: EndedBy::Reconnect,
            frame: f.number,
            why: format!("its QPNs were reused from frame {} ({why})", f.number),
        };
        let began = Boundary { how: BeganBy::IdleReconnect, frame: f.number, why };
        let Some((pk, old_msn)) = decider else {
            self.end(key, ended.how, ended.frame, ended.why, Some(began));
            return;
        };
        self.confirm_around(key);
        let old = self.take_flows(key, EndedBy::Reconnect, Some(began));
        if let Some(pf) = self.flows.get_mut(&pk) {
            pf.decides = Some(key);
        }
        if let Some(qf) = self.flows.get_mut(&key) {
            qf.provisional = Some(Box::new(Provisional { old, ended, old_max: max, old_msn }));
            self.began_provisional = Some(key);
        }
    }

    /// A request of a connection's flow; whether it is a retransmission
    /// ([`Observation::retransmitted`]).
    fn request(&mut self, key: FlowKey, r: &Roce<'_>, info: &OpcodeInfo) -> bool {
        let psn = Psn::new(r.bth.psn);
        let pos = info.position;
        let Some(flow) = self.flows.get_mut(&key) else { return false };
        flow.transport.get_or_insert(info.transport);
        let pkey = *flow.pkey.get_or_insert((r.bth.pkey, PkeySource::FirstPacket));
        if foreign(pkey.0, r.bth.pkey) || flow.stale(psn) {
            // Another partition's request, or a late one of the incarnation before: the
            // responder drops it; it is not the flow's own.
            return newest_request(&mut flow.max_req_psn, psn, false);
        }
        let retransmitted = newest_request(&mut flow.max_req_psn, psn, true);
        if flow.peer.is_none() {
            flow.indexed.push_back(psn);
            let old = (flow.indexed.len() > INDEXED).then(|| flow.indexed.pop_front()).flatten();
            if let Some(old) = old {
                unindex(&mut self.pairing, &key, old);
            }
            self.pairing.insert((key.src, key.dst, psn), key);
        }
        self.infer_pmtu(key, r, pos);
        retransmitted
    }

    /// A response: finds (or pairs) the request flow it answers; notes a fatal NAK.
    fn response(
        &mut self,
        key: FlowKey,
        f: &FrameInfo,
        r: &Roce<'_>,
        transport: Transport,
    ) -> Option<FlowKey> {
        let fatal = fatal_nak(r);
        let flow = self.flows.get_mut(&key)?;
        flow.transport.get_or_insert(transport);
        if fatal {
            flow.fatal_nak.get_or_insert(f.number);
        }
        if let Some(a) = r.headers.aeth {
            flow.last_msn = Some(a.msn);
        }
        if let Some(peer) = flow.peer {
            return Some(peer);
        }
        // Responses B -> A answer the A -> B flow that sent this PSN, or, when the capture
        // reordered a response before its request, one of the PSNs just before.
        let psn = Psn::new(r.bth.psn);
        let cand = (0..=PAIR_LOOKBACK)
            .find_map(|back| self.pairing.get(&(key.dst, key.src, psn.back(back))).copied())?;
        if self.flows.get(&cand).is_some_and(|c| c.peer.is_none()) {
            self.pair(key, cand, PairedBy::Psn);
            return Some(cand);
        }
        None
    }

    /// Learns the PMTU from a FIRST or MIDDLE payload when nothing better is known.
    fn infer_pmtu(&mut self, key: FlowKey, r: &Roce<'_>, pos: Position) {
        if !matches!(pos, Position::First | Position::Middle) || self.opts.pmtu.is_some() {
            return;
        }
        let len = r.payload_len as u32;
        if !matches!(len, 256 | 512 | 1024 | 2048 | 4096) {
            return;
        }
        let peer = match self.flows.get_mut(&key) {
            Some(fl) if fl.pmtu.is_none() => {
                fl.pmtu = Some((len, PmtuSource::Inferred));
                fl.peer
            }
            _ => return,
        };
        if let Some(pf) = peer.and_then(|p| self.flows.get_mut(&p)) {
            pf.pmtu.get_or_insert((len, PmtuSource::Inferred));
        }
    }

    /// Makes `x` and `y` the two directions of one connection.
    fn pair(&mut self, x: FlowKey, y: FlowKey, how: PairedBy) {
        let get = |k: &FlowKey| self.flows.get(k);
        let pmtu = get(&x).and_then(|f| f.pmtu).or(get(&y).and_then(|f| f.pmtu));
        let pkey = get(&x).and_then(|f| f.pkey).or(get(&y).and_then(|f| f.pkey));
        let inc = get(&x).map_or(1, |f| f.incarnation).max(get(&y).map_or(1, |f| f.incarnation));
        for (k, other) in [(x, y), (y, x)] {
            let Some(f) = self.flows.get_mut(&k) else { continue };
            let before = conn_id(&k, None, f.incarnation);
            f.peer = Some(other);
            f.paired_by = Some(how);
            f.incarnation = inc;
            if f.pmtu.is_none() {
                f.pmtu = pmtu;
            }
            if f.pkey.is_none() {
                f.pkey = pkey;
            }
            for psn in f.indexed.drain(..) {
                unindex(&mut self.pairing, &k, psn);
            }
            if self.aliases.len() > 4 * self.opts.max_flows {
                self.aliases.clear();
            }
            self.aliases.insert(before, conn_id(&k, Some(other.dest_qp), inc));
        }
    }

    /// Ends the incarnation `key` belongs to (both directions). With `next`, the flows
    /// stay, fresh, for the incarnation that begins; without, they are removed (evicted) or
    /// reset to wait for whatever follows. An idle reconnect of these flows still provisional
    /// is confirmed first (the old incarnation ends before the one it began).
    fn end(
        &mut self,
        key: FlowKey,
        how: EndedBy,
        frame: u64,
        why: String,
        next: Option<Boundary<BeganBy>>,
    ) {
        self.confirm_around(key);
        let old = self.take_flows(key, how, next);
        if let Some(e) = self.ended_of(key, old, Boundary { how, frame, why }) {
            self.ended.push(e);
        }
    }

    /// Takes the flows of `key`'s incarnation (`key` and its peer), the direction whose
    /// packets came first first: removed (evicted), or replaced by fresh flows of the next
    /// incarnation (begun by `next`, or waiting for whatever follows).
    fn take_flows(
        &mut self,
        key: FlowKey,
        how: EndedBy,
        next: Option<Boundary<BeganBy>>,
    ) -> Vec<(FlowKey, Flow<T>)> {
        let Some(flow) = self.flows.get(&key) else { return Vec::new() };
        let peer = flow.peer.filter(|p| self.flows.contains_key(p));
        let mut keys = vec![key];
        keys.extend(peer);
        keys.sort_by_key(|k| self.flows.get(k).map_or(u64::MAX, |f| f.first_frame.max(1)));
        let fatal = keys.iter().any(|k| self.flows.get(k).is_some_and(|f| f.fatal_nak.is_some()));
        let shown = match how {
            EndedBy::CaptureEnd | EndedBy::Reconnect if fatal => EndedBy::FatalNak,
            _ => how,
        };
        let remove = how == EndedBy::Evicted;
        let next_inc = keys.iter().filter_map(|k| self.flows.get(k)).map(|f| f.incarnation).max();
        let next_inc = next_inc.unwrap_or(1) + 1;
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let began = next.clone().unwrap_or_else(|| Boundary {
                how: BeganBy::AfterEnd,
                frame: 0,
                why: format!("after the previous incarnation ended ({})", shown.as_str()),
            });
            let old = if remove {
                self.flows.remove(&k)
            } else {
                self.flows.get_mut(&k).map(|f| {
                    // What a late request of the ending incarnation will look like.
                    let mut fresh = Flow::new(next_inc, began);
                    fresh.prior_max = f.max_req_psn.or(f.prior_max);
                    std::mem::replace(f, fresh)
                })
            };
            out.extend(old.map(|o| (k, o)));
        }
        out
    }

    /// The record of the incarnation whose flows (`old`, from [`Self::take_flows`]) ended
    /// as `ended` says; `key` names it.
    fn ended_of(
        &mut self,
        key: FlowKey,
        old: Vec<(FlowKey, Flow<T>)>,
        ended: Boundary<EndedBy>,
    ) -> Option<Ended<T>> {
        let named = old.iter().find(|(k, _)| *k == key).or(old.first())?;
        let id = named.1.connection(&named.0);
        let fatal = old.iter().filter_map(|(_, f)| f.fatal_nak).min();
        let ended = match (ended.how, fatal) {
            (EndedBy::CaptureEnd | EndedBy::Reconnect, Some(n)) => Boundary {
                how: EndedBy::FatalNak,
                frame: n,
                why: format!("fatal NAK in frame {n}: the responder's QP went to the error state"),
            },
            _ => ended,
        };
        let (_, first) = old.first()?;
        let mut info = ConnectionInfo {
            connection: id,
            transport: first.transport.map_or("unknown", Transport::as_str),
            paired_by: first.paired_by,
            pmtu: first.pmtu.map(|p| p.0).or(self.opts.pmtu),
            pmtu_source: first.pmtu.map(|p| p.1).or(self.opts.pmtu.map(|_| PmtuSource::Option)),
            pkey: first.pkey.map(|p| p.0),
            pkey_source: first.pkey.map(|p| p.1),
            began: first.began.clone(),
            ended,
            packets: 0,
            first_frame: u64::MAX,
            last_frame: 0,
            first_ts: u64::MAX,
            last_ts: 0,
        };
        let mut directions = Vec::with_capacity(old.len());
        for (k, old) in old {
            if info.transport == "unknown" {
                info.transport = old.transport.map_or("unknown", Transport::as_str);
            }
            if old.packets > 0 {
                info.packets += old.packets;
                info.first_frame = info.first_frame.min(old.first_frame);
                info.last_frame = info.last_frame.max(old.last_frame);
                info.first_ts = info.first_ts.min(old.first_ts);
                info.last_ts = info.last_ts.max(old.last_ts);
            }
            for psn in &old.indexed {
                unindex(&mut self.pairing, &k, *psn);
            }
            self.cm.forget(&k, old.comm_ids);
            directions.push((k, old.state));
        }
        if info.packets == 0 {
            info.first_frame = info.began.frame;
            info.last_frame = info.began.frame;
            info.first_ts = 0;
        }
        Some(Ended { info, directions })
    }

    /// Confirms the provisional idle reconnect `key` takes part in (as its requester flow or
    /// its peer), if any.
    fn confirm_around(&mut self, key: FlowKey) {
        let Some(fl) = self.flows.get(&key) else { return };
        let q = if fl.provisional.is_some() { Some(key) } else { fl.decides };
        let peer = fl.peer.and_then(|p| self.flows.get(&p)).and_then(|pf| {
            if pf.provisional.is_some() {
                fl.peer
            } else {
                pf.decides
            }
        });
        for q in q.into_iter().chain(peer) {
            self.confirm(q);
        }
    }

    /// The idle reconnect begun provisionally on requester flow `q` stands: the old
    /// incarnation ends (as the reconnect found it).
    fn confirm(&mut self, q: FlowKey) {
        let Some(p) = self.flows.get_mut(&q).and_then(|f| f.provisional.take()) else { return };
        let Provisional { old, ended, .. } = *p;
        for (k, _) in &old {
            if let Some(f) = self.flows.get_mut(k) {
                f.decides = None;
            }
        }
        if let Some(e) = self.ended_of(q, old, ended) {
            self.ended.push(e);
        }
    }

    /// The peer's first packet after the provisional idle reconnect of requester flow `q`:
    /// a response that names a PSN of the old window (a NAK naming the old expected PSN, an
    /// ACK of an old request) or carries an MSN continuing the old sequence (and one a fresh
    /// QP could not have reached) proves the QP was not reset: the old incarnation continues.
    /// Anything else confirms the reconnect.
    fn decide(&mut self, q: FlowKey, r: &Roce<'_>) {
        let contrary = self.flows.get(&q).is_some_and(|qf| {
            let (Some(p), Some(info)) = (qf.provisional.as_deref(), r.info) else { return false };
            if info.role != Role::Response {
                return false;
            }
            let psn = Psn::new(r.bth.psn);
            let old_e = p.old_max + 1;
            let new_max = qf.max_req_psn.unwrap_or(old_e);
            let near_old = (psn - old_e).abs();
            let old_window = near_old <= RECONNECT_PSN_DISTANCE && near_old < (psn - new_max).abs();
            let sent_since = u32::try_from(qf.packets).unwrap_or(u32::MAX);
            let old_msn = r.headers.aeth.zip(p.old_msn).is_some_and(|(a, m)| {
                let k = a.msn.wrapping_sub(m) & crate::psn::PSN_MASK;
                k <= sent_since.saturating_add(RECONNECT_MSN_SLACK) && a.msn > sent_since
            });
            old_window || old_msn
        });
        if contrary {
            self.revert(q);
        } else {
            self.confirm(q);
        }
    }

    /// Undoes the provisional idle reconnect of requester flow `q`: the old flows come back,
    /// with the packets the provisional ones counted; the provisional states go to
    /// [`Self::take_resumed`], and the names the provisional incarnation gave its packets
    /// become the old incarnation's.
    fn revert(&mut self, q: FlowKey) {
        let Some(p) = self.flows.get_mut(&q).and_then(|f| f.provisional.take()) else { return };
        for (k, old) in p.old {
            let Some(slot) = self.flows.get_mut(&k) else { continue };
            let new = std::mem::replace(slot, old);
            slot.referenced = true;
            slot.packets += new.packets;
            if new.packets > 0 {
                slot.last_frame = slot.last_frame.max(new.last_frame);
                slot.last_ts = slot.last_ts.max(new.last_ts);
            }
            if let Some(m) = new.max_req_psn {
                if slot.max_req_psn.is_none_or(|o| o < m) {
                    slot.max_req_psn = Some(m);
                }
            }
            if slot.fatal_nak.is_none() {
                slot.fatal_nak = new.fatal_nak;
            }
            for psn in &new.indexed {
                unindex(&mut self.pairing, &k, *psn);
            }
            if self.aliases.len() > 4 * self.opts.max_flows {
                self.aliases.clear();
            }
            self.aliases.insert(new.connection(&k), slot.connection(&k));
            self.resumed.push((k, new.state));
        }
    }
}

impl<T: Default> Connections<T> {
    /// A CM message from `own.src` to `own.dst`.
    fn cm_message(&mut self, f: &FrameInfo, own: FlowKey, m: &roce_parser::CmMessage<'_>) {
        use roce_parser::CmMessage;
        let (src, dst) = (own.src, own.dst);
        self.cm.log(f.number, src, dst, m);
        match m {
            CmMessage::Req(q) => self.cm.request(f.number, src, dst, q),
            CmMessage::Rep(p) => {
                let Some(req) = self.cm.reply(src, dst, p) else { return };
                let to_passive =
                    FlowKey { src: req.active, dst: req.passive, dest_qp: p.local_qpn };
                let to_active = FlowKey { src: req.passive, dst: req.active, dest_qp: req.qpn };
                let ids = (req.comm_id, p.local_comm_id);
                // A retransmitted REP of the incarnation already open changes nothing.
                if self.flows.get(&to_passive).is_some_and(|fl| fl.comm_ids == Some(ids)) {
                    return;
                }
                let why =
                    format!("CM REQ (frame {}) and REP (frame {}) opened it", req.frame, f.number);
                let began = Boundary { how: BeganBy::Cm, frame: f.number, why };
                for k in [to_passive, to_active] {
                    let live =
                        self.flows.get(&k).is_some_and(|fl| fl.packets > 0 || fl.peer.is_some());
                    if live {
                        let why = format!(
                            "a new CM connection (REP in frame {}) reuses its QPNs",
                            f.number
                        );
                        self.end(k, EndedBy::Reconnect, f.number, why, Some(began.clone()));
                    }
                }
                for (k, first) in
                    [(to_passive, Psn::new(p.starting_psn)), (to_active, req.starting_psn)]
                {
                    if !self.flows.contains_key(&k) {
                        self.insert(k, f.number, Flow::new(1, began.clone()));
                    }
                    let Some(fl) = self.flows.get_mut(&k) else { continue };
                    fl.referenced = true;
                    fl.began = began.clone();
                    fl.transport = Some(req.transport);
                    if let Some(m) = req.pmtu {
                        fl.pmtu = Some((m, PmtuSource::Cm));
                    }
                    fl.pkey = Some((req.pkey, PkeySource::Cm));
                    fl.cm_start_psn = Some(first);
                    fl.comm_ids = Some(ids);
                }
                self.pair(to_passive, to_active, PairedBy::Cm);
                self.cm.opened(ids, to_passive);
            }
            CmMessage::Dreq(d) => {
                if let Some(k) = self.cm.lookup(src, dst, d.local_comm_id, d.remote_comm_id) {
                    if let Some(fl) = self.flows.get_mut(&k) {
                        fl.dreq.get_or_insert(f.number);
                    }
                }
            }
            CmMessage::Drep(d) => {
                if let Some(k) = self.cm.lookup(src, dst, d.local_comm_id, d.remote_comm_id) {
                    let dreq = self.flows.get(&k).and_then(|fl| fl.dreq);
                    let why = match dreq {
                        Some(q) => format!("CM DREQ (frame {q}) and DREP (frame {})", f.number),
                        None => format!("CM DREP (frame {}; its DREQ was not captured)", f.number),
                    };
                    self.end(k, EndedBy::Disconnect, f.number, why, None);
                }
            }
            CmMessage::Rej(j) => {
                self.cm.rejected(src, dst, j.remote_comm_id);
                if let Some(k) = self.cm.lookup(src, dst, j.local_comm_id, j.remote_comm_id) {
                    let why = format!("CM REJ (frame {}): {}", f.number, j.reason.name());
                    self.end(k, EndedBy::Reject, f.number, why, None);
                }
            }
            _ => {}
        }
    }
}

/// A request P_Key outside the connection's partition (`own`): the membership bit aside, the
/// keys differ.
/// Whether a request at `psn` is a retransmission: its PSN is not newer than `max`, the
/// highest its flow's own requests reached (the one place this is decided,
/// [`Observation::retransmitted`]). An `own` request that is newer moves `max`.
#[inline]
fn newest_request(max: &mut Option<Psn>, psn: Psn, own: bool) -> bool {
    let retransmitted = max.is_some_and(|m| psn <= m);
    if own && !retransmitted {
        *max = Some(psn);
    }
    retransmitted
}

fn foreign(own: u16, pkey: u16) -> bool {
    own & 0x7fff != pkey & 0x7fff
}

/// The connection a flow belongs to, named the same way from both directions.
///
/// With both QPNs known, the endpoint that sorts first (address, then QPN) is `a`. One name
/// is built, not both to compare: this runs for every packet the checker judges.
#[inline]
fn conn_id(k: &FlowKey, peer_qpn: Option<u32>, incarnation: u32) -> ConnId {
    let reversed = peer_qpn.is_some_and(|p| (k.dst, k.dest_qp) < (k.src, p));
    if reversed {
        ConnId { a: k.dst, qpn_a: Some(k.dest_qp), b: k.src, qpn_b: peer_qpn, incarnation }
    } else {
        ConnId { a: k.src, qpn_a: peer_qpn, b: k.dst, qpn_b: Some(k.dest_qp), incarnation }
    }
}

/// Forgets that `key` sent `psn`, unless another flow of the same hosts has claimed that PSN
/// since (the index keeps the latest sender).
fn unindex(pairing: &mut FastHashMap<(IpAddr, IpAddr, Psn), FlowKey>, key: &FlowKey, psn: Psn) {
    if let std::collections::hash_map::Entry::Occupied(e) = pairing.entry((key.src, key.dst, psn)) {
        if e.get() == key {
            e.remove();
        }
    }
}

/// The order [`Retained`] keeps the busiest by: most packets, then the earliest, then by
/// name. A total order, so the busiest `cap` are the same whatever order they came in:
/// shards merged (`check --threads`) keep the one run's.
pub(crate) fn busiest_first(a: &ConnectionInfo, b: &ConnectionInfo) -> std::cmp::Ordering {
    b.packets
        .cmp(&a.packets)
        .then(a.first_frame.cmp(&b.first_frame))
        .then(a.connection.cmp(&b.connection))
}

/// The listing order of [`Retained::into_sorted`]: capture order (first frame).
pub(crate) fn capture_order(a: &ConnectionInfo, b: &ConnectionInfo) -> std::cmp::Ordering {
    a.first_frame.cmp(&b.first_frame).then(a.connection.cmp(&b.connection))
}

/// The ended incarnations a report lists: all of them up to the cap, beyond it the busiest
/// (most packets; the earliest first among equals), so a report stays bounded whatever the
/// capture holds, and every consumer that keeps the same cap lists the same connections.
#[derive(Debug)]
pub struct Retained<R> {
    cap: usize,
    items: Vec<(ConnectionInfo, R)>,
    dropped: u64,
}

impl<R> Retained<R> {
    /// Keeps at most `cap` (at least 1) incarnations.
    pub fn new(cap: usize) -> Self {
        Retained { cap: cap.max(1), items: Vec::new(), dropped: 0 }
    }

    /// Adds an ended incarnation; past a quarter over the cap, the least busy are dropped
    /// (counted).
    pub fn push(&mut self, info: ConnectionInfo, r: R) {
        if self.items.capacity() == 0 {
            self.items.reserve_exact(self.cap.min(1024));
        }
        self.items.push((info, r));
        // Trimmed at a quarter past the cap (it was twice the cap: 0.6 GB of `stats` at
        // 200,000 connections, BENCHMARKS.md "Bounds"); a trim is a selection, linear, so
        // the cost per push stays constant.
        if self.items.len() >= self.cap.saturating_add((self.cap / 4).max(1)) {
            self.trim();
        }
    }

    fn trim(&mut self) {
        if self.items.len() <= self.cap {
            return;
        }
        // `busiest_first` is a total order: the busiest `cap` are the same set as a sort's.
        self.items.select_nth_unstable_by(self.cap - 1, |(a, _), (b, _)| busiest_first(a, b));
        self.dropped += (self.items.len() - self.cap) as u64;
        self.items.truncate(self.cap);
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The listed incarnations in capture order (first frame), and how many were left out.
    pub fn into_sorted(mut self) -> (Vec<(ConnectionInfo, R)>, u64) {
        self.trim();
        self.items.sort_by(|(a, _), (b, _)| capture_order(a, b));
        (self.items, self.dropped)
    }
}

/// A fatal NAK: invalid request, remote access or remote operational error (the responder's
/// QP goes to the error state).
fn fatal_nak(r: &Roce<'_>) -> bool {
    r.headers.aeth.and_then(|a| a.nak_code()).is_some_and(|c| {
        matches!(
            c,
            NakCode::InvalidRequest | NakCode::RemoteAccessError | NakCode::RemoteOperationalError
        )
    })
}
