//! Typed errors that say where parsing stopped: the layer, the byte offset in the input,
//! and the lengths involved, so a user can find the damage in a hex dump.

use core::fmt;

/// Builds [`Layer`] with one variant per row of the extended header table
/// (`crate::headers::ext_header_table!`), between the BTH and the payload.
macro_rules! layers {
    ($(
        $(#[$doc:meta])*
        $slot:ident: $view:ident, $repr:ident, $name:literal, reserved: |$h:pat_param| $reserved:expr;
    )*) => {
        /// The protocol layer an error (or a problem) belongs to.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        #[non_exhaustive]
        pub enum Layer {
            /// Ethernet II header.
            Ethernet,
            /// An 802.1Q / 802.1ad tag.
            Vlan,
            /// IPv4 header (options included).
            Ipv4,
            /// IPv6 fixed header.
            Ipv6,
            /// The IPv6 extension header chain before UDP.
            Ipv6Extensions,
            /// UDP header.
            Udp,
            /// Local Route Header of native InfiniBand (IBTA Vol. 1 §7.7).
            Lrh,
            /// Global Route Header of RoCEv1 and routed InfiniBand (IBTA Vol. 1 §8.3).
            Grh,
            /// Base Transport Header (IBTA Vol. 1 §9.2).
            Bth,
            $($(#[$doc])* $view,)*
            /// The payload after the headers (and its pad).
            Payload,
            /// The 4-byte invariant CRC at the end of the packet.
            Icrc,
            /// The 2-byte variant CRC closing a native InfiniBand packet.
            Vcrc,
            /// Management datagram header (on QP1).
            Mad,
            /// Communication Manager message in a MAD (IBTA Vol. 1 chapter 12).
            Cm,
            /// [`crate::FrameBuilder`] (an output it cannot write).
            Builder,
            /// A GRE header (RFC 2784 / 2890) of a mirror or tunnel.
            Gre,
            /// An ERSPAN type II or III header.
            Erspan,
            /// A VXLAN header (RFC 7348).
            Vxlan,
            /// A Geneve header and its options (RFC 8926).
            Geneve,
        }

        impl Layer {
            /// The name a RoCE engineer would use for the layer.
            pub const fn name(self) -> &'static str {
                match self {
                    Layer::Ethernet => "Ethernet",
                    Layer::Vlan => "VLAN tag",
                    Layer::Ipv4 => "IPv4",
                    Layer::Ipv6 => "IPv6",
                    Layer::Ipv6Extensions => "IPv6 extension headers",
                    Layer::Udp => "UDP",
                    Layer::Lrh => "LRH",
                    Layer::Grh => "GRH",
                    Layer::Bth => "BTH",
                    $(Layer::$view => $name,)*
                    Layer::Payload => "payload",
                    Layer::Icrc => "ICRC",
                    Layer::Vcrc => "VCRC",
                    Layer::Mad => "MAD",
                    Layer::Cm => "CM",
                    Layer::Builder => "frame builder",
                    Layer::Gre => "GRE",
                    Layer::Erspan => "ERSPAN",
                    Layer::Vxlan => "VXLAN",
                    Layer::Geneve => "Geneve",
                }
            }
        }
    };
}

crate::headers::ext_header_table!(layers);

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ends before the header does.
    Truncated,
    /// A field holds a value the layer cannot be parsed with (the text says which).
    Malformed(&'static str),
    /// The output buffer handed to an emitter or the builder is too small.
    BufferTooSmall,
}

/// A parse or emit error: layer, byte offset of the layer in the input, and the number of
/// bytes the layer needed against the number available from that offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The layer that could not be parsed or written.
    pub layer: Layer,
    /// Offset of the layer's first byte from the start of the input handed to the parser.
    pub offset: usize,
    /// Bytes the layer needed (0 when not a length problem).
    pub needed: usize,
    /// Bytes that were available from `offset` (0 when not a length problem).
    pub available: usize,
}

impl ErrorKind {
    /// The stable code of the kind (the JSON contract's `stop.kind`).
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "truncated",
            ErrorKind::Malformed(_) => "malformed",
            ErrorKind::BufferTooSmall => "buffer_too_small",
        }
    }
}

impl Error {
    /// The input ends before a `needed`-byte header at `offset`.
    pub const fn truncated(layer: Layer, offset: usize, needed: usize, available: usize) -> Self {
        Error { kind: ErrorKind::Truncated, layer, offset, needed, available }
    }

    /// A header whose content cannot be parsed.
    pub const fn malformed(layer: Layer, offset: usize, why: &'static str) -> Self {
        Error { kind: ErrorKind::Malformed(why), layer, offset, needed: 0, available: 0 }
    }

    /// An output buffer of `available` bytes where `needed` are required.
    pub const fn buffer_too_small(layer: Layer, needed: usize, available: usize) -> Self {
        Error { kind: ErrorKind::BufferTooSmall, layer, offset: 0, needed, available }
    }

    /// The same error with its offset moved by `base` (a view reports offsets from its own
    /// start; the frame parser adds where that view began).
    #[must_use]
    pub const fn at(mut self, base: usize) -> Self {
        self.offset += base;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::Truncated => write!(
                f,
                "{} truncated at byte offset {}: needs {} bytes, only {} available",
                self.layer, self.offset, self.needed, self.available
            ),
            ErrorKind::Malformed(why) => {
                write!(f, "{} malformed at byte offset {}: {}", self.layer, self.offset, why)
            }
            ErrorKind::BufferTooSmall => write!(
                f,
                "{}: output buffer too small: needs {} bytes, got {}",
                self.layer, self.needed, self.available
            ),
        }
    }
}

#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// Result alias used throughout the crate.
pub type Result<T> = core::result::Result<T, Error>;
