//! One frame record: a frame as the capture holds it and what the parser made of it, decoded
//! once, from where its link type says ([`decode`]). Frames that could not be decoded are not
//! an error but a typed reason ([`Undecoded`]), counted per reason and link type
//! ([`UndecodedGroup`]) so that a capture of an unsupported link type gives one line, not
//! one per frame.

use std::fmt;

use roce_capture::{Frame, L2Error, L2Start, LinkType};
use roce_conformance::Shard;
use roce_parser::{
    parse_ethernet_into, parse_ethertype_payload, parse_infiniband_into, Config, Packet,
};

/// A frame and what the parser made of it.
pub struct Decoded<'a> {
    /// The frame as the capture holds it (number, time, lengths, link type, bytes).
    pub frame: Frame<'a>,
    /// `Err` when no network layer could be decoded from the frame, with the reason.
    pub packet: Result<Packet<'a>, Undecoded>,
}

/// Why a frame was not decoded, typed (and allocation-free: a capture of a link type the
/// parser cannot read has this on every frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undecoded {
    /// roce-capture found no network layer: an unsupported link type, a frame shorter than
    /// its link header, an unknown null/loopback address family or raw IP version.
    Link(L2Error),
    /// The frame is shorter than an Ethernet header.
    Ethernet(roce_parser::Error),
    /// A native InfiniBand frame shorter than an LRH (the offset counted from the start of
    /// the frame, an ERF record header included).
    Infiniband(roce_parser::Error),
    /// After a link header without Ethernet (Linux cooked SLL/SLL2, raw IP, null/loopback)
    /// the parser found no network layer: the header names an EtherType other than IPv4,
    /// IPv6 and RoCEv1 (`stop` is `None`), or the layer it names is cut short or malformed
    /// (`stop`, with its offset counted from the start of the frame).
    Network {
        /// The frame's link type.
        link_type: LinkType,
        /// The EtherType its link header names.
        ethertype: u16,
        /// Where the parser stopped, when the layer was cut short or malformed.
        stop: Option<roce_parser::Error>,
    },
}

impl fmt::Display for Undecoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undecoded::Link(e) => write!(f, "{e}"),
            Undecoded::Ethernet(e) | Undecoded::Infiniband(e) => write!(f, "{e}"),
            Undecoded::Network { link_type, ethertype, stop: None } => write!(
                f,
                "{} header names EtherType 0x{ethertype:04x}, which is not IPv4, IPv6 or RoCEv1",
                link_type.name()
            ),
            Undecoded::Network { link_type, ethertype, stop: Some(e) } => {
                write!(f, "{} header names EtherType 0x{ethertype:04x}, but {e}", link_type.name())
            }
        }
    }
}

impl std::error::Error for Undecoded {}

/// [`Undecoded::reason`] of a frame whose link type is not supported.
pub const UNSUPPORTED_LINK_TYPE: &str = "unsupported link type";

impl Undecoded {
    /// The kind of reason, a short stable phrase (the key of [`UndecodedGroup`]).
    pub fn reason(&self) -> &'static str {
        match self {
            Undecoded::Link(L2Error::LinkType(_)) => UNSUPPORTED_LINK_TYPE,
            Undecoded::Link(L2Error::Truncated { .. }) => "shorter than its link header",
            Undecoded::Link(L2Error::AddressFamily { .. }) => "unknown address family",
            Undecoded::Link(L2Error::IpVersion { .. }) => "IP version neither 4 nor 6",
            Undecoded::Link(L2Error::ErfType { .. }) => "ERF record type without a packet",
            Undecoded::Link(_) => "link header not decoded",
            Undecoded::Ethernet(_) => "shorter than an Ethernet header",
            Undecoded::Infiniband(_) => "shorter than an LRH",
            Undecoded::Network { stop: None, .. } => "EtherType not IPv4, IPv6 or RoCEv1",
            Undecoded::Network { stop: Some(_), .. } => "network layer cut short or malformed",
        }
    }

    /// Whether the reason is the link layer's (roce-capture could not hand the frame to the
    /// parser): a warning on stderr, unlike frames of other protocols on a supported link.
    pub fn is_link(&self) -> bool {
        matches!(self, Undecoded::Link(_))
    }
}

/// Frames not decoded for one reason on one link type: counted, with the first one's
/// message (for the warning and the JSON outputs of `stats` and `check`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct UndecodedGroup {
    /// [`Undecoded::reason`].
    pub reason: &'static str,
    /// The link type's number (LINKTYPE_*).
    pub link_type: u32,
    /// The link type's name.
    pub link_type_name: &'static str,
    /// Frames not decoded for this reason.
    pub frames: u64,
    /// The first of them.
    pub first_frame: u64,
    /// The first frame's reason in full.
    pub message: String,
    #[serde(skip)]
    link: bool,
}

impl fmt::Display for UndecodedGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reason == UNSUPPORTED_LINK_TYPE {
            // The message names the link type and why it is not read.
            return write!(f, "{} frame(s) not decoded: {}", self.frames, self.message);
        }
        write!(
            f,
            "{} frame(s) of link type {} ({}) not decoded, {} (first: frame {}: {})",
            self.frames,
            self.link_type,
            self.link_type_name,
            self.reason,
            self.first_frame,
            self.message
        )
    }
}

impl UndecodedGroup {
    /// Whether roce-capture could not hand these frames to the parser (an unsupported link
    /// type, link headers cut short): worth a warning, unlike frames of other protocols.
    pub fn is_link(&self) -> bool {
        self.link
    }
}

/// Counts a frame that was not decoded into its group (allocating only for a new group).
pub fn count_undecoded(groups: &mut Vec<UndecodedGroup>, frame: &Frame<'_>, why: &Undecoded) {
    let reason = why.reason();
    let code = frame.link_type.code();
    match groups.iter_mut().find(|g| g.reason == reason && g.link_type == code) {
        Some(g) => g.frames += 1,
        None => groups.push(UndecodedGroup {
            reason,
            link_type: code,
            link_type_name: frame.link_type.name(),
            frames: 1,
            first_frame: frame.number,
            message: why.to_string(),
            link: why.is_link(),
        }),
    }
}

/// Decodes one frame with the parser, starting where its link type says.
pub fn decode<'a>(frame: Frame<'a>, cfg: &Config) -> Decoded<'a> {
    let mut d = Decoded { frame, packet: Ok(Packet::default()) };
    decode_into(&mut d, cfg);
    d
}

/// `decode` in place: the packet is parsed straight into `d.packet` (a `Packet` is 1,256
/// bytes on x86-64; building it elsewhere and moving it here cost a copy per frame).
pub fn decode_into(d: &mut Decoded<'_>, cfg: &Config) {
    match d.frame.l2() {
        L2Start::Ethernet(bytes) => {
            if let Ok(p) = &mut d.packet {
                if let Err(e) = parse_ethernet_into(bytes, cfg, p) {
                    d.packet = Err(Undecoded::Ethernet(e));
                }
            }
        }
        L2Start::Network { ethertype, data } => {
            let p = parse_ethertype_payload(ethertype, data, cfg);
            d.packet = if p.ip.is_some() || p.roce.is_some() {
                Ok(p)
            } else {
                // The parser's offsets count from `data`, after the link header.
                let header_len = d.frame.data.len().saturating_sub(data.len());
                let stop = p.stop.map(|e| roce_parser::Error {
                    offset: e.offset.saturating_add(header_len),
                    ..e
                });
                Err(Undecoded::Network { link_type: d.frame.link_type, ethertype, stop })
            };
        }
        L2Start::Infiniband(bytes) => {
            if let Ok(p) = &mut d.packet {
                if let Err(e) = parse_infiniband_into(bytes, cfg, p) {
                    // The parser's offsets count from the LRH, after any record header.
                    let header_len = d.frame.data.len().saturating_sub(bytes.len());
                    let e = roce_parser::Error { offset: e.offset.saturating_add(header_len), ..e };
                    d.packet = Err(Undecoded::Infiniband(e));
                }
            }
        }
        L2Start::Unsupported(why) => d.packet = Err(Undecoded::Link(why)),
    }
}

/// How reading ended.
#[derive(Debug, Default)]
pub struct ReadSummary {
    /// Frames read (within the window).
    pub frames: u64,
    /// Damage and oddities found after some frames were read (each already handed to the
    /// pass's warning callback, [`crate::Pass::on_warning`]): the first `Warnings::PER_KIND` of each kind, then one "... N more" line per
    /// kind, so a file with a fault in every block cannot flood the output or the memory.
    pub warnings: Vec<String>,
    /// Frames not decoded, grouped by reason and link type, in order of first appearance.
    pub undecoded: Vec<UndecodedGroup>,
    /// Several captures read as one ([`crate::run_merged`]): each tap's frames, the copies,
    /// the latency between taps and the packets lost between them (`None` for one capture).
    pub taps: Option<crate::TapsReport>,
}

impl ReadSummary {
    /// The summary as shard `shard` reports it (`--shard K/N`). Frames not decoded have no
    /// host pair and belong to shard 0 ([`Shard::owns`]), so shard 0 lists them all and the
    /// other shards none: the shards' `undecoded` lists add up to the single run's. Capture
    /// warnings describe the file, which every shard reads whole: each shard keeps them.
    pub fn of_shard(mut self, shard: Shard) -> ReadSummary {
        if shard.index() != 0 {
            self.undecoded.clear();
        }
        self
    }
}
