//! roce-capture: reads pcap and pcapng captures (optionally gzip-compressed, from a file or
//! stdin) frame by frame, without copying frames and without allocating per frame, and says
//! where each frame's network layer starts. It knows nothing of RoCE: the frames go to
//! whatever parser the caller has (roce-parser in this project).
//!
//! ```
//! use roce_capture::{Capture, L2Start, Warnings};
//!
//! // A pcap file header (microseconds, little-endian, snap length 65535, Ethernet) and one
//! // record at 1 s holding a 14-byte Ethernet header.
//! let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
//! file.extend_from_slice(&[0xff, 0xff, 0, 0, 1, 0, 0, 0]);
//! file.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0, 14, 0, 0, 0]);
//! file.extend_from_slice(&[0x02; 12]);
//! file.extend_from_slice(&[0x08, 0x00]);
//!
//! // `roce_capture::open(path)` reads a file, or stdin for "-".
//! let mut cap = Capture::from_bytes("example.pcap", file)?;
//! // The first 20 warnings of each kind, and a count of the rest.
//! let mut warnings = Warnings::default();
//! while let Some(frame) = cap.next_frame() {
//!     let frame = match frame {
//!         Ok(frame) => frame,
//!         Err(e) if e.is_fatal() => { eprintln!("{e}"); break }
//!         Err(e) => {
//!             if let Some(e) = warnings.add(e) {
//!                 eprintln!("warning: {e}");
//!             }
//!             continue;
//!         }
//!     };
//!     assert_eq!((frame.number, frame.ts_ns, frame.caplen), (1, 1_000_000_000, 14));
//!     match frame.l2() {
//!         L2Start::Ethernet(bytes) => assert_eq!(bytes.len(), 14),
//!         L2Start::Network { ethertype, data } => { /* starts at the network layer */ }
//!         L2Start::Infiniband(lrh) => { /* a native InfiniBand packet */ }
//!         L2Start::Unsupported(why) => eprintln!("frame {}: {why}", frame.number),
//!     }
//! }
//! for omitted in warnings.omitted() {
//!     eprintln!("warning: {omitted}");
//! }
//! # Ok::<(), roce_capture::CaptureError>(())
//! ```
//!
//! Why a crate of its own: a tool that reads a capture and feeds the conformance checker
//! should not have to take the command line with it (see
//! `analysis/examples/check_capture.rs`), and capture damage is a matter of the file, not
//! of RoCE. Damage is either fatal or skipped, never silent: a [`CaptureError`] names the
//! file, the frame and the byte offset, so the place can be opened in a hex editor or in
//! Wireshark; what is odd but readable (a record above the snap length, a timestamp out of
//! range) is read, with one warning rather than one per record. [`Warnings`] keeps a read's
//! warnings bounded. [`L2Start`] is the one typed hand-off from a link type to a packet
//! parser, and [`L2Error`] says why a frame has none.
//!
//! Limits, against hostile input: a pcap record of at most [`MAX_RECORD_LEN`] (256 KiB, as
//! libpcap and Wireshark), a pcapng block of at most [`MAX_BLOCK_LEN`] (16 MiB), at most
//! [`MAX_INTERFACES`] interfaces. Memory is the 1 MiB read window (grown to the largest
//! record), the interfaces, and nothing per frame.
//!
//! Crate choice and measurement. pcap is read with pcap-file 2.0, the design's default:
//! `PcapHeader` for the file header and `PcapParser::next_raw_packet` for records (not its
//! checked `next_packet`, which rejects every record whose original length exceeds the snap
//! length, i.e. every capture taken with `-s`). pcapng is read by `pcapng.rs`, because
//! pcap-file's pcapng layer ignores `if_tsresol`, allocates a `Vec` per EPB with options and
//! measured 1.4-3.5x slower (below). pcap-parser 0.17 was no faster on pcap and also keeps EPB
//! options in a `Vec`. Reading goes through a 1 MiB window filled by `read` (`source.rs`).
//!
//! Why no memory map: it needs `unsafe` (the project keeps unsafe code to the ffi crate), and
//! a file truncated while mapped kills the process with SIGBUS. One copy from the page cache
//! costs a few ns per frame: the cold rows below show reading a file through the window is as
//! fast as the bare loop over memory.
//!
//! Iterating a generated 2,000,000-frame pcap (100-600 byte frames, 732 MB), each candidate
//! in one run, release build, 2-core Xeon VM shared with other builds (load ~1.5-3; under
//! load 4-7 every row was up to 2x slower, in the same order), from
//! `cargo test --release -p roce-capture --test bench -- --ignored --nocapture`:
//!
//! | candidate                                  | cold, 2M frames      | warm, 2000 x 1000 |
//! |--------------------------------------------|----------------------|-------------------|
//! | hand-written loop, no checks (baseline)    |  91.6 ns (10.9 M/s)  |   6.5 ns (155 M/s) |
//! | pcap-file 2.0 `next_packet`                |  84.7 ns (11.8 M/s)  |  13.4 ns (75 M/s)  |
//! | pcap-file 2.0 `next_raw_packet`            |  87.9 ns (11.4 M/s)  |  13.3 ns (75 M/s)  |
//! | pcap-parser 0.17 `parse_pcap_frame`        |  96.0 ns (10.4 M/s)  |  16.9 ns (59 M/s)  |
//! | this crate, pcap file (1 MiB reads)        |  83.9 ns (11.9 M/s)  |  76 ns* (13 M/s)   |
//! | this crate, pcap in memory                 | 134 ns** (7.5 M/s)   |  27.6 ns** (36 M/s) |
//! | this crate, pcapng file (EPBs with flags)  |  96.7 ns (10.3 M/s)  |  90 ns* (11 M/s)   |
//! | this crate, pcapng in memory               | 158 ns** (6.3 M/s)   |  41 ns** (24 M/s)  |
//! | pcap-file 2.0 `PcapNgParser::next_block`   | 219 ns (4.6 M/s)     | 142 ns (7.0 M/s)   |
//!
//! Cold rows are bound by memory bandwidth: reading a file through the window is as fast as
//! the bare loop over memory, above 10 M frames/s. (*) warm file rows include opening the file
//! and copying 724 kB from the page cache per pass. (**) measured on a fresh copy of the
//! bytes (the capture owns its buffer), which a large copy leaves out of cache; the bench now
//! reads the copy once first. So pcap-file does not hold the pcap path back; its pcapng layer
//! would (and is wrong on timestamps), hence the own pcapng reader.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)
)]

mod capture;
mod error;
mod link;
mod merge;
mod pcap;
mod pcapng;
mod source;
mod warnings;

pub use capture::{open, Capture, Format, FormatKind, Frame, Interface, TsResolution};
pub use error::{CaptureError, Effect, ErrorKind, MAX_BLOCK_LEN, MAX_INTERFACES, MAX_RECORD_LEN};
pub use link::{
    l2_start, L2Error, L2Start, LinkType, ERF_HEADER_LEN, ETHERTYPE_IPV4, ETHERTYPE_IPV6,
    ETHERTYPE_ROCEV1,
};
pub use merge::{Merge, ReadFrames};
pub use warnings::{Omitted, Warnings};
