//! The model's step of the pass: each decoded frame fed once to the connection model, and
//! what every consumer reads about it computed there, once ([`PacketEvent`]). Before this
//! step each command fed the model itself and asked again, per consumer, whether a request
//! was a retransmission or a packet CE-marked; now `stats`' counters, the timers, the
//! report's series and the packets table read the same answer from the event.

use roce_conformance::{Checker, FlowKey, FrameInfo, Observation, Seen, Shard};
use roce_parser::{Packet, Roce, Role};

use crate::frame::Decoded;

/// One frame after the connection model took it: the frame, the parsed packet, and the
/// facts every consumer reads, each decided once ([`feed`]). A consumer that needs the
/// frame's bytes or link type reads the [`Decoded`] record the event was made from.
#[derive(Clone, Copy)]
pub struct PacketEvent<'e, 'a> {
    /// The frame as the checker and the timers take it (number, time, lengths).
    pub info: FrameInfo,
    /// The parsed packet, when a network layer was decoded.
    pub packet: Option<&'e Packet<'a>>,
    /// Where the packet stands in the model: its flow (source, destination, DestQP), what
    /// it is to the model (a request, a response to which flow, a CM MAD, other) and whether
    /// a request is a retransmission. `None` for a frame that is not RoCE.
    pub observation: Option<Observation>,
    /// The incarnation of the packet's connection (after the model took it), when it is RoCE.
    pub incarnation: Option<u32>,
    /// The packet is marked ECN-CE (Congestion Experienced) by the network
    /// ([`Packet::ecn_ce`]: IPv4, IPv6 or the RoCEv1 GRH's traffic class).
    pub ecn_ce: bool,
    /// The packet is a CNP (congestion notification, opcode 0x81).
    pub cnp: bool,
}

impl<'e, 'a> PacketEvent<'e, 'a> {
    /// The RoCE part of the packet, when it is RoCE.
    pub fn roce(&self) -> Option<&'e Roce<'a>> {
        self.packet?.roce.as_ref()
    }

    /// The packet's own flow, when it is RoCE.
    pub fn flow(&self) -> Option<FlowKey> {
        self.observation.map(|o| o.own)
    }

    /// What the packet is to the model, when it is RoCE.
    pub fn seen(&self) -> Option<Seen> {
        self.observation.map(|o| o.seen)
    }

    /// A request whose PSN is not newer than its flow's highest (go-back-N or timeout
    /// retransmission, duplicated READ): [`Observation::retransmitted`].
    pub fn retransmitted(&self) -> bool {
        self.observation.is_some_and(|o| o.retransmitted)
    }
}

/// Feeds `d` to the model (the checker, or the model alone: [`Checker::without_rules`]) when
/// its host pair is in `shard`, and returns what the model made of it. A frame of another
/// shard only advances the model's clock ([`Checker::tick`]) and gives `None`: no consumer
/// sees it, as if the capture held the shard's frames alone.
///
/// ```
/// use roce_analysis::{feed, Pass};
/// use roce_conformance::{Checker, Options, Shard};
/// use roce_parser::Config;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pcaps/sample.pcap");
/// let cap = roce_capture::open(std::path::Path::new(path))?;
/// let cfg = Config::default();
/// let mut checker = Checker::new(Options::default());
/// let (mut requests, mut retransmitted) = (0, 0);
/// Pass::new(&cfg).run(cap, |d| {
///     let Some(ev) = feed(&mut checker, Shard::ALL, d) else { return };
///     requests += u32::from(ev.seen() == Some(roce_conformance::Seen::Request));
///     retransmitted += u32::from(ev.retransmitted());
/// })?;
/// // The sample's go-back-N after a PSN sequence error NAK: 3 PSNs sent again, as
/// // `roce-inspect stats pcaps/sample.pcap` counts them.
/// assert!(requests > 0);
/// assert_eq!(retransmitted, 3);
/// # Ok::<(), roce_capture::CaptureError>(())
/// ```
#[inline(always)]
pub fn feed<'e, 'a, X: Default>(
    model: &mut Checker<X>,
    shard: Shard,
    d: &'e Decoded<'a>,
) -> Option<PacketEvent<'e, 'a>> {
    let f = &d.frame;
    let packet = d.packet.as_ref().ok();
    if !shard.owns(packet) {
        model.tick(f.ts_ns);
        return None;
    }
    let info = FrameInfo { number: f.number, ts_ns: f.ts_ns, caplen: f.caplen, len: f.len };
    Some(feed_packet(model, info, packet))
}

/// [`feed`] of a frame the caller describes itself (`packet`: `None` when no network layer
/// was decoded), whatever its host pair.
#[inline(always)]
pub fn feed_packet<'e, 'a, X: Default>(
    model: &mut Checker<X>,
    info: FrameInfo,
    packet: Option<&'e Packet<'a>>,
) -> PacketEvent<'e, 'a> {
    match packet {
        Some(p) => model.feed(&info, p),
        None => model.feed_undecoded(&info),
    }
    let observation = model.last_observation();
    let incarnation = observation.and_then(|o| o.incarnation);
    let roce = packet.and_then(|p| p.roce.as_ref());
    PacketEvent {
        info,
        packet,
        observation,
        incarnation,
        ecn_ce: packet.is_some_and(Packet::ecn_ce),
        cnp: roce.and_then(|r| r.info).is_some_and(|i| i.role == Role::Congestion),
    }
}
