//! One file per header: a zero-copy view (`Bth<T>`, `Reth<T>`, ...) with a `field` module of
//! byte ranges, and an owned repr (`BthRepr`, `RethRepr`, ...) with `parse` and `emit`.

pub mod aeth;
pub mod atomic_ack_eth;
pub mod atomic_eth;
pub mod bth;
pub mod deth;
pub mod feth;
pub mod grh;
pub mod ieth;
pub mod immdt;
pub mod rdeth;
pub mod reth;
pub mod xrceth;

pub use aeth::{Aeth, AethKind, AethRepr, NakCode};
pub use atomic_ack_eth::{AtomicAckEth, AtomicAckEthRepr};
pub use atomic_eth::{AtomicEth, AtomicEthRepr};
pub use bth::{Bth, BthRepr};
pub use deth::{Deth, DethRepr};
pub use feth::{Feth, FethRepr};
pub use grh::{Grh, GrhRepr};
pub use ieth::{Ieth, IethRepr};
pub use immdt::{ImmDt, ImmDtRepr};
pub use rdeth::{Rdeth, RdethRepr};
pub use reth::{Reth, RethRepr};
pub use xrceth::{Xrceth, XrcethRepr};

use crate::error::Layer;

/// The extended transport headers, as named in the opcode table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum ExtHeader {
    Rdeth,
    Deth,
    Xrceth,
    Reth,
    AtomicEth,
    Aeth,
    AtomicAckEth,
    ImmDt,
    Ieth,
    Feth,
}

impl ExtHeader {
    /// Bytes on the wire.
    #[allow(clippy::len_without_is_empty)] // a header length, never empty
    pub const fn len(self) -> usize {
        match self {
            ExtHeader::Rdeth => RdethRepr::LEN,
            ExtHeader::Deth => DethRepr::LEN,
            ExtHeader::Xrceth => XrcethRepr::LEN,
            ExtHeader::Reth => RethRepr::LEN,
            ExtHeader::AtomicEth => AtomicEthRepr::LEN,
            ExtHeader::Aeth => AethRepr::LEN,
            ExtHeader::AtomicAckEth => AtomicAckEthRepr::LEN,
            ExtHeader::ImmDt => ImmDtRepr::LEN,
            ExtHeader::Ieth => IethRepr::LEN,
            ExtHeader::Feth => FethRepr::LEN,
        }
    }

    pub const fn layer(self) -> Layer {
        match self {
            ExtHeader::Rdeth => Layer::Rdeth,
            ExtHeader::Deth => Layer::Deth,
            ExtHeader::Xrceth => Layer::Xrceth,
            ExtHeader::Reth => Layer::Reth,
            ExtHeader::AtomicEth => Layer::AtomicEth,
            ExtHeader::Aeth => Layer::Aeth,
            ExtHeader::AtomicAckEth => Layer::AtomicAckEth,
            ExtHeader::ImmDt => Layer::ImmDt,
            ExtHeader::Ieth => Layer::Ieth,
            ExtHeader::Feth => Layer::Feth,
        }
    }

    pub const fn name(self) -> &'static str {
        self.layer().name()
    }

    /// Every extended header.
    pub const ALL: [ExtHeader; 10] = [
        ExtHeader::Rdeth,
        ExtHeader::Deth,
        ExtHeader::Xrceth,
        ExtHeader::Reth,
        ExtHeader::AtomicEth,
        ExtHeader::Aeth,
        ExtHeader::AtomicAckEth,
        ExtHeader::ImmDt,
        ExtHeader::Ieth,
        ExtHeader::Feth,
    ];
}

/// The extended headers of one packet, each present or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ExtHeaders {
    pub rdeth: Option<RdethRepr>,
    pub deth: Option<DethRepr>,
    pub xrceth: Option<XrcethRepr>,
    pub reth: Option<RethRepr>,
    pub atomic_eth: Option<AtomicEthRepr>,
    pub aeth: Option<AethRepr>,
    pub atomic_ack_eth: Option<AtomicAckEthRepr>,
    pub immdt: Option<ImmDtRepr>,
    pub ieth: Option<IethRepr>,
    pub feth: Option<FethRepr>,
}

impl ExtHeaders {
    /// Whether header `h` is present.
    pub const fn has(&self, h: ExtHeader) -> bool {
        match h {
            ExtHeader::Rdeth => self.rdeth.is_some(),
            ExtHeader::Deth => self.deth.is_some(),
            ExtHeader::Xrceth => self.xrceth.is_some(),
            ExtHeader::Reth => self.reth.is_some(),
            ExtHeader::AtomicEth => self.atomic_eth.is_some(),
            ExtHeader::Aeth => self.aeth.is_some(),
            ExtHeader::AtomicAckEth => self.atomic_ack_eth.is_some(),
            ExtHeader::ImmDt => self.immdt.is_some(),
            ExtHeader::Ieth => self.ieth.is_some(),
            ExtHeader::Feth => self.feth.is_some(),
        }
    }

    /// Parses header `h` from the start of `bytes` into its slot. Returns whether its
    /// reserved bits are set (as [`Self::reserved_bits_set`] judges them), or `None`, the
    /// slot left empty, when `bytes` is shorter than the header.
    ///
    /// Each arm reads a fixed-size array, so the field accessors compile to plain loads.
    #[inline(always)]
    pub(crate) fn parse_one(&mut self, h: ExtHeader, bytes: &[u8]) -> Option<bool> {
        Some(match h {
            ExtHeader::Rdeth => {
                let b = bytes.first_chunk::<{ RdethRepr::LEN }>()?;
                let v = RdethRepr::parse(&Rdeth::new_unchecked(b));
                self.rdeth = Some(v);
                v.reserved != 0
            }
            ExtHeader::Deth => {
                let b = bytes.first_chunk::<{ DethRepr::LEN }>()?;
                let v = DethRepr::parse(&Deth::new_unchecked(b));
                self.deth = Some(v);
                v.reserved != 0
            }
            ExtHeader::Xrceth => {
                let b = bytes.first_chunk::<{ XrcethRepr::LEN }>()?;
                let v = XrcethRepr::parse(&Xrceth::new_unchecked(b));
                self.xrceth = Some(v);
                v.reserved != 0
            }
            ExtHeader::Reth => {
                let b = bytes.first_chunk::<{ RethRepr::LEN }>()?;
                let v = RethRepr::parse(&Reth::new_unchecked(b));
                self.reth = Some(v);
                false
            }
            ExtHeader::AtomicEth => {
                let b = bytes.first_chunk::<{ AtomicEthRepr::LEN }>()?;
                let v = AtomicEthRepr::parse(&AtomicEth::new_unchecked(b));
                self.atomic_eth = Some(v);
                false
            }
            ExtHeader::Aeth => {
                let b = bytes.first_chunk::<{ AethRepr::LEN }>()?;
                let v = AethRepr::parse(&Aeth::new_unchecked(b));
                self.aeth = Some(v);
                v.reserved_bit()
            }
            ExtHeader::AtomicAckEth => {
                let b = bytes.first_chunk::<{ AtomicAckEthRepr::LEN }>()?;
                let v = AtomicAckEthRepr::parse(&AtomicAckEth::new_unchecked(b));
                self.atomic_ack_eth = Some(v);
                false
            }
            ExtHeader::ImmDt => {
                let b = bytes.first_chunk::<{ ImmDtRepr::LEN }>()?;
                let v = ImmDtRepr::parse(&ImmDt::new_unchecked(b));
                self.immdt = Some(v);
                false
            }
            ExtHeader::Ieth => {
                let b = bytes.first_chunk::<{ IethRepr::LEN }>()?;
                let v = IethRepr::parse(&Ieth::new_unchecked(b));
                self.ieth = Some(v);
                false
            }
            ExtHeader::Feth => {
                let b = bytes.first_chunk::<{ FethRepr::LEN }>()?;
                let v = FethRepr::parse(&Feth::new_unchecked(b));
                self.feth = Some(v);
                v.reserved != 0
            }
        })
    }

    /// Writes header `h` (its repr, or zeros when absent) to the start of `out`.
    pub(crate) fn emit_one(&self, h: ExtHeader, out: &mut [u8]) {
        match h {
            ExtHeader::Rdeth => self.rdeth.unwrap_or_default().emit(&mut Rdeth::new_unchecked(out)),
            ExtHeader::Deth => self.deth.unwrap_or_default().emit(&mut Deth::new_unchecked(out)),
            ExtHeader::Xrceth => {
                self.xrceth.unwrap_or_default().emit(&mut Xrceth::new_unchecked(out))
            }
            ExtHeader::Reth => self.reth.unwrap_or_default().emit(&mut Reth::new_unchecked(out)),
            ExtHeader::AtomicEth => {
                self.atomic_eth.unwrap_or_default().emit(&mut AtomicEth::new_unchecked(out))
            }
            ExtHeader::Aeth => self.aeth.unwrap_or_default().emit(&mut Aeth::new_unchecked(out)),
            ExtHeader::AtomicAckEth => {
                self.atomic_ack_eth.unwrap_or_default().emit(&mut AtomicAckEth::new_unchecked(out))
            }
            ExtHeader::ImmDt => self.immdt.unwrap_or_default().emit(&mut ImmDt::new_unchecked(out)),
            ExtHeader::Ieth => self.ieth.unwrap_or_default().emit(&mut Ieth::new_unchecked(out)),
            ExtHeader::Feth => self.feth.unwrap_or_default().emit(&mut Feth::new_unchecked(out)),
        }
    }

    /// Reserved bits set in any present header (RDETH/DETH/XRCETH reserved byte, AETH bit 7,
    /// FETH reserved bits).
    pub fn reserved_bits_set(&self) -> bool {
        self.rdeth.is_some_and(|h| h.reserved != 0)
            || self.deth.is_some_and(|h| h.reserved != 0)
            || self.xrceth.is_some_and(|h| h.reserved != 0)
            || self.aeth.is_some_and(|h| h.reserved_bit())
            || self.feth.is_some_and(|h| h.reserved != 0)
    }
}
