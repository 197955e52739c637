//! One file per header: a zero-copy view (`Bth<T>`, `Reth<T>`, ...) over a private `field`
//! module of byte ranges, the header's length (`HEADER_LEN`, where its last field ends), and an
//! owned repr (`BthRepr`, `RethRepr`, ...) with `parse`, `emit` and `normalized`.
//!
//! The extended transport headers are listed once, in `ext_header_table!` (below): the
//! [`ExtHeader`] enum, its lengths and layers ([`Layer`] gets one variant per row), the
//! [`ExtHeaders`] slots, parsing, emitting and the reserved-bit checks all come from that table.
//! Which headers an opcode carries, and in what order, is the opcode table's business
//! (`crate::opcode`).

pub mod bth;
pub mod grh;
pub mod lrh;

pub use aeth::{AethKind, NakCode};
pub use bth::{Bth, BthRepr};
pub use grh::{Grh, GrhRepr};
pub use lrh::{Lnh, Lrh, LrhRepr};

use crate::error::Layer;

/// The table of extended transport headers: one row per header, in the order of
/// [`ExtHeader::ALL`] (and of the extended-header variants of [`Layer`]). A row reads
///
/// ```text
/// module: View, Repr, "name", reserved: |h| <whether h has reserved bits set>;
/// ```
///
/// - `module` is the header's file (`headers/<module>.rs`) and its slot in [`ExtHeaders`];
///   the file defines `HEADER_LEN`, the view `View<T>` and the repr `Repr` (with `parse`,
///   `emit` and `normalized`);
/// - `View` is also the header's [`ExtHeader`] and [`Layer`] variant;
/// - `"name"` is the name users read (errors, `ExtHeader::name`, the C `roce_layer_name`);
/// - `reserved` judges a parsed repr: `true` makes the packet's problems hold
///   `Problem::ReservedBits`.
///
/// The table is handed to a macro (`$then`), once here to build the headers' types and once in
/// `crate::error` to build [`Layer`].
macro_rules! ext_header_table {
    ($then:ident) => {
        $then! {
            /// Reliable Datagram ETH (RD): the EE-context.
            rdeth: Rdeth, RdethRepr, "RDETH", reserved: |h| h.reserved != 0;
            /// Datagram ETH (UD, RD): Q_Key and source QP.
            deth: Deth, DethRepr, "DETH", reserved: |h| h.reserved != 0;
            /// XRC ETH: the XRC SRQ a request is for.
            xrceth: Xrceth, XrcethRepr, "XRCETH", reserved: |h| h.reserved != 0;
            /// RDMA ETH: VA, R_Key and DMA length of a WRITE, READ, FLUSH or ATOMIC_WRITE.
            reth: Reth, RethRepr, "RETH", reserved: |_| false;
            /// Atomic ETH: VA, R_Key, swap/add and compare data.
            atomic_eth: AtomicEth, AtomicEthRepr, "AtomicETH", reserved: |_| false;
            /// ACK ETH: syndrome and MSN.
            aeth: Aeth, AethRepr, "AETH", reserved: |h| h.reserved_bit();
            /// Atomic ACK ETH: the original remote data.
            atomic_ack_eth: AtomicAckEth, AtomicAckEthRepr, "AtomicAckETH", reserved: |_| false;
            /// Immediate data.
            immdt: ImmDt, ImmDtRepr, "ImmDt", reserved: |_| false;
            /// Invalidate ETH: the R_Key a SEND_WITH_INVALIDATE revokes.
            ieth: Ieth, IethRepr, "IETH", reserved: |_| false;
            /// FLUSH ETH (IBTA 1.5): selectivity level and placement type.
            feth: Feth, FethRepr, "FETH", reserved: |h| h.reserved != 0;
        }
    };
}
pub(crate) use ext_header_table;

/// Builds, from the rows of [`ext_header_table!`], the header modules and everything that has
/// one arm per header.
macro_rules! ext_headers {
    ($(
        $(#[$doc:meta])*
        $slot:ident: $view:ident, $repr:ident, $name:literal, reserved: |$h:pat_param| $reserved:expr;
    )*) => {
        $(
            pub mod $slot;
            pub use $slot::{$repr, $view};

            impl $repr {
                /// Bytes on the wire (the view's `HEADER_LEN`).
                pub const LEN: usize = $slot::HEADER_LEN;

                /// Which extended header this is.
                pub const fn header(&self) -> ExtHeader {
                    ExtHeader::$view
                }

                /// Whether reserved bits are set (the header table's check).
                pub const fn reserved_bits_set(&self) -> bool {
                    let $h = self;
                    $reserved
                }
            }
        )*

        /// The extended transport headers, as named in the opcode table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        pub enum ExtHeader {
            $($(#[$doc])* $view,)*
        }

        impl ExtHeader {
            /// The number of extended headers.
            pub const COUNT: usize = [$(ExtHeader::$view,)*].len();

            /// Every extended header, in table order.
            pub const ALL: [ExtHeader; ExtHeader::COUNT] = [$(ExtHeader::$view,)*];

            /// Bytes on the wire.
            #[allow(clippy::len_without_is_empty)] // a header length, never empty
            pub const fn len(self) -> usize {
                match self {
                    $(ExtHeader::$view => $slot::HEADER_LEN,)*
                }
            }

            /// The header's [`Layer`], which errors and problems name.
            pub const fn layer(self) -> Layer {
                match self {
                    $(ExtHeader::$view => Layer::$view,)*
                }
            }

            /// The header's name as users read it ("RETH", "AtomicETH", ...).
            pub const fn name(self) -> &'static str {
                self.layer().name()
            }

            /// The position of the header in [`ExtHeader::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        /// The extended headers of one packet, each present or not.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct ExtHeaders {
            $($(#[$doc])* pub $slot: Option<$repr>,)*
        }

        impl ExtHeaders {
            /// Whether header `h` is present.
            pub const fn has(&self, h: ExtHeader) -> bool {
                match h {
                    $(ExtHeader::$view => self.$slot.is_some(),)*
                }
            }

            /// Parses header `h` from the start of `bytes` into its slot. Returns whether its
            /// reserved bits are set, or `None`, the slot left alone, when `bytes` is shorter
            /// than the header.
            ///
            /// Each arm reads a fixed-size array, so the field accessors compile to plain loads.
            #[inline(always)]
            pub fn parse_one(&mut self, h: ExtHeader, bytes: &[u8]) -> Option<bool> {
                Some(match h {
                    $(ExtHeader::$view => {
                        let b = bytes.first_chunk::<{ $slot::HEADER_LEN }>()?;
                        let v = $repr::parse(&$view::new_unchecked(b));
                        self.$slot = Some(v);
                        v.reserved_bits_set()
                    })*
                })
            }

            /// Writes header `h` (its repr, or zeros when absent) to the start of `out`; a
            /// shorter `out` gets the fields that fit.
            pub fn emit_one(&self, h: ExtHeader, out: &mut [u8]) {
                match h {
                    $(ExtHeader::$view => {
                        self.$slot.unwrap_or_default().emit(&mut $view::new_unchecked(out))
                    })*
                }
            }

            /// Reserved bits set in any present header (as each row of the header table
            /// judges them).
            pub fn reserved_bits_set(&self) -> bool {
                false $(|| self.$slot.is_some_and(|v| v.reserved_bits_set()))*
            }

            /// The headers a frame built from `self` carries for an opcode that lists `hs`:
            /// each of `hs` (an absent one as its default, the zeros
            /// [`emit_one`](Self::emit_one) writes), no other.
            pub fn as_written(&self, hs: &[ExtHeader]) -> ExtHeaders {
                let mut out = ExtHeaders::default();
                for &h in hs {
                    match h {
                        $(ExtHeader::$view => out.$slot = Some(self.$slot.unwrap_or_default()),)*
                    }
                }
                out
            }

            /// Every present header with its fields clipped to their wire width (what an
            /// emit and parse round trip gives).
            pub fn normalized(self) -> Self {
                ExtHeaders { $($slot: self.$slot.map($repr::normalized),)* }
            }
        }
    };
}

ext_header_table!(ext_headers);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_the_spec_lengths() {
        // docs/wire.md's header sizes, in table order: a field range that ends early or late
        // changes HEADER_LEN, and this catches it.
        let spec = [4, 8, 4, 16, 28, 4, 8, 4, 4, 4];
        let got: [usize; ExtHeader::COUNT] = ExtHeader::ALL.map(ExtHeader::len);
        assert_eq!(got, spec);
        assert_eq!((BthRepr::LEN, GrhRepr::LEN), (12, 40));
    }

    #[test]
    fn table_order_indexes_all_and_layers() {
        for (i, h) in ExtHeader::ALL.into_iter().enumerate() {
            assert_eq!(h.index(), i);
            assert_eq!(h.layer().name(), h.name());
        }
        let names = ExtHeader::ALL.map(ExtHeader::name);
        assert_eq!(
            names,
            [
                "RDETH",
                "DETH",
                "XRCETH",
                "RETH",
                "AtomicETH",
                "AETH",
                "AtomicAckETH",
                "ImmDt",
                "IETH",
                "FETH"
            ]
        );
    }

    #[test]
    fn parse_one_fills_the_slot_and_judges_reserved_bits() {
        // RDETH with its reserved byte set, then with it clear.
        let mut h = ExtHeaders::default();
        assert_eq!(h.parse_one(ExtHeader::Rdeth, &[0x01, 0x12, 0x34, 0x56]), Some(true));
        assert_eq!(h.rdeth, Some(RdethRepr { reserved: 1, eecnxt: 0x12_3456 }));
        assert_eq!(h.rdeth.map(|r| r.header()), Some(ExtHeader::Rdeth));
        assert_eq!(FethRepr::default().header(), ExtHeader::Feth);
        assert!(h.reserved_bits_set());
        assert_eq!(h.parse_one(ExtHeader::Rdeth, &[0x00, 0x12, 0x34, 0x56]), Some(false));
        assert!(!h.reserved_bits_set());
        // AETH bit 7; FETH's 26 high bits; a RETH has no reserved bits at all.
        assert_eq!(h.parse_one(ExtHeader::Aeth, &[0x9f, 0, 0, 1]), Some(true));
        assert_eq!(h.parse_one(ExtHeader::Feth, &[0x00, 0x00, 0x01, 0x12]), Some(true));
        assert_eq!(h.parse_one(ExtHeader::Reth, &[0xff; 16]), Some(false));
        // One byte short: nothing parsed, the slot keeps what it had.
        let before = h;
        assert_eq!(h.parse_one(ExtHeader::AtomicEth, &[0xff; 27]), None);
        assert_eq!(h, before);
        assert!(!h.has(ExtHeader::AtomicEth));
    }

    #[test]
    fn every_header_emits_and_parses_back() {
        // Distinct bytes for every header, parsed, emitted back: the same bytes.
        for h in ExtHeader::ALL {
            let bytes: std::vec::Vec<u8> = (1..=h.len() as u8).collect();
            let mut parsed = ExtHeaders::default();
            assert!(parsed.parse_one(h, &bytes).is_some(), "{}", h.name());
            assert!(parsed.has(h));
            assert_eq!(ExtHeader::ALL.iter().filter(|&&x| parsed.has(x)).count(), 1);
            let mut out = [0u8; 32];
            parsed.emit_one(h, &mut out);
            assert_eq!(&out[..h.len()], &bytes[..], "{}", h.name());
            assert!(out[h.len()..].iter().all(|&b| b == 0), "{} wrote past its end", h.name());
        }
    }

    #[test]
    fn as_written_keeps_the_listed_headers_and_zeros_absent_ones() {
        let given = ExtHeaders {
            reth: Some(RethRepr { va: 1, rkey: 2, dma_len: 3 }),
            aeth: Some(AethRepr::ack(3, 9)),
            ..Default::default()
        };
        let w = given.as_written(&[ExtHeader::Feth, ExtHeader::Reth]);
        assert_eq!(w.reth, given.reth);
        assert_eq!(w.feth, Some(FethRepr::default()));
        assert_eq!(w.aeth, None);
        let n = ExtHeaders {
            deth: Some(DethRepr { qkey: 1, reserved: 0, src_qp: 0xff00_0001 }),
            ..Default::default()
        }
        .normalized();
        assert_eq!(n.deth.map(|d| d.src_qp), Some(1));
    }
}
