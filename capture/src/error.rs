//! Capture-reading errors: what was wrong, in which file, at which frame and byte offset.
//!
//! Every error names the place precisely enough that a user can open the file in a hex editor
//! or Wireshark and see the damage. `nothing_read` tells the command line whether the input
//! could not be read at all (exit code 2) or was damaged after some frames (warn, exit 0), and
//! `effect` what the reader did about it: stopped, skipped a block, read on (a warning), or, in
//! a merge of several files, dropped the damaged one and read the others on.

use std::fmt;
use std::io;
use std::sync::Arc;

use crate::capture::TsResolution;

/// Largest pcap record accepted: 262,144 bytes, the limit libpcap and Wireshark apply to every
/// link type (but USB and D-Bus). A pcap record's length is all there is to find the next
/// record, so a larger one is taken for damage (and ends the read) rather than followed into
/// garbage; the file header's snap length is not a limit (see `RecordExceedsSnapLen`).
pub const MAX_RECORD_LEN: u32 = 256 << 10;

/// Largest pcapng block accepted: 16 MiB, Wireshark's limit. Refusing a larger length keeps a
/// corrupt one from making the reader allocate gigabytes. A packet in a sound block is read
/// whatever its length, up to this.
pub const MAX_BLOCK_LEN: u32 = 16 << 20;

/// Most interfaces (pcapng IDBs) kept for one capture, across its sections: each costs the
/// reader memory for the whole read, so a file of nothing but IDBs must not grow it without
/// bound. Captures have a handful.
pub const MAX_INTERFACES: u32 = 1 << 16;

/// What the reader did about what it found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Reading ends: nothing after this point can be found (`next_frame` returns `None`).
    Fatal,
    /// The damaged block was skipped; reading goes on at the next block.
    Skipped,
    /// Nothing was lost: the record is read as it is and comes next; this only warns, once
    /// per capture or interface, not once per record.
    Warning,
    /// Reading of this file ends (what was [`Effect::Fatal`] for the file alone), but not
    /// the read it is part of: a [`crate::Merge`] drops the file and reads the others on. Only
    /// a merge hands it out, and only when something follows; a file's fatal damage that
    /// ends the merge (nothing else is left to read) stays [`Effect::Fatal`].
    Dropped,
}

/// An error met while reading a capture. Boxed, so that the `Result` every frame travels in
/// stays small.
#[derive(Debug)]
pub struct CaptureError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    file: Arc<str>,
    frame: Option<u64>,
    offset: u64,
    frames_before: u64,
    effect: Effect,
    kind: ErrorKind,
}

impl CaptureError {
    pub(crate) fn new(file: Arc<str>, frame: Option<u64>, offset: u64, kind: ErrorKind) -> Self {
        let effect = Effect::Fatal;
        CaptureError(Box::new(Inner { file, frame, offset, frames_before: 0, effect, kind }))
    }

    pub(crate) fn with_progress(mut self, frames_before: u64, effect: Effect) -> Self {
        self.0.frames_before = frames_before;
        self.0.effect = effect;
        self
    }

    /// The same error, for a file a [`crate::Merge`] drops while reading the others on:
    /// [`Effect::Dropped`] instead of [`Effect::Fatal`].
    pub(crate) fn dropped(mut self) -> Self {
        self.0.effect = Effect::Dropped;
        self
    }

    /// The file name, shared.
    pub(crate) fn file_arc(&self) -> &Arc<str> {
        &self.0.file
    }

    /// The file name as given (`-` for stdin).
    pub fn file(&self) -> &str {
        &self.0.file
    }

    /// The 1-based number the damaged frame has (or would have had); `None` for damage in
    /// the file header, before any frame.
    pub fn frame(&self) -> Option<u64> {
        self.0.frame
    }

    /// Byte offset of the damaged record or block in the (decompressed) file.
    pub fn offset(&self) -> u64 {
        self.0.offset
    }

    /// What was wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// Frames successfully read before this error.
    pub fn frames_before(&self) -> u64 {
        self.0.frames_before
    }

    /// True when no frame was read before this error. With `is_fatal()` (bad magic, truncated
    /// file header, damage in the first record) the input is unreadable: the command line
    /// exits with code 2.
    pub fn nothing_read(&self) -> bool {
        self.0.frames_before == 0
    }

    /// True when iteration ends with this error; false when reading goes on, past a skipped
    /// block (pcapng blocks with a sound length but a bad body), with nothing lost (a
    /// warning), or, in a [`crate::Merge`], with the other files (the damaged one dropped):
    /// see `effect`.
    pub fn is_fatal(&self) -> bool {
        self.0.effect == Effect::Fatal
    }

    /// What the reader did: stopped, skipped the block, read on, or (a merge) dropped the file
    /// and read the others on.
    pub fn effect(&self) -> Effect {
        self.0.effect
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner { file, frame, offset, kind, effect, .. } = &*self.0;
        match frame {
            Some(n) => write!(f, "{file}: frame {n} at byte offset {offset}: {kind}")?,
            // Whole-file problems have no useful offset.
            None if matches!(kind, ErrorKind::Io(_) | ErrorKind::Empty) => {
                write!(f, "{file}: {kind}")?
            }
            None => write!(f, "{file}: at byte offset {offset}: {kind}")?,
        }
        if *effect == Effect::Dropped {
            write!(f, "; the rest of this file is left out, the other captures are read on")?;
        }
        Ok(())
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) | ErrorKind::Gzip(e) => Some(e),
            _ => None,
        }
    }
}

/// What was wrong with the input.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be opened or read.
    Io(io::Error),
    /// The gzip stream is corrupt or ends early.
    Gzip(io::Error),
    /// The input is empty.
    Empty,
    /// The first bytes are neither a pcap nor a pcapng magic (nor gzip).
    BadMagic([u8; 4]),
    /// The pcap file header or pcapng section header is cut short.
    TruncatedFileHeader {
        /// Bytes the header needs.
        needed: u64,
        /// Bytes the input has.
        available: u64,
    },
    /// A pcap record header (16 bytes) is cut short at the end of the file.
    TruncatedRecordHeader {
        /// Bytes left in the file.
        available: u64,
    },
    /// A packet's captured length exceeds the snap length of the pcap file header or of its
    /// pcapng interface (`interface`: `None` for pcap). A warning: the record is read in full,
    /// as Wireshark reads it, and later ones are not reported.
    RecordExceedsSnapLen {
        /// The record's captured length.
        caplen: u32,
        /// The snap length it exceeds.
        snaplen: u32,
        /// The pcapng interface index; `None` for pcap.
        interface: Option<u32>,
    },
    /// A pcap record's captured length exceeds `MAX_RECORD_LEN`.
    RecordTooLong {
        /// The record's captured length.
        caplen: u32,
    },
    /// A pcap record runs past the end of the file.
    RecordPastEnd {
        /// The record's captured length.
        caplen: u32,
        /// Bytes left in the file after the record header.
        available: u64,
    },
    /// A pcapng block header (12 bytes) is cut short at the end of the file.
    TruncatedBlockHeader {
        /// Bytes left in the file.
        available: u64,
    },
    /// A pcapng block length below the 12-byte minimum (0 included).
    BlockTooShort {
        /// The block type (1 IDB, 6 EPB, 0x0A0D0D0A SHB, ...).
        block_type: u32,
        /// The block's total length field.
        length: u32,
    },
    /// A pcapng block length that is not a multiple of 4.
    BlockMisaligned {
        /// The block type.
        block_type: u32,
        /// The block's total length field.
        length: u32,
    },
    /// A pcapng block length beyond `MAX_BLOCK_LEN`.
    BlockTooLong {
        /// The block type.
        block_type: u32,
        /// The block's total length field.
        length: u32,
    },
    /// A pcapng block runs past the end of the file (a truncated last block).
    BlockPastEnd {
        /// The block type.
        block_type: u32,
        /// The block's total length field.
        length: u32,
        /// Bytes left in the file from the block's start.
        available: u64,
    },
    /// The trailing length of a pcapng block differs from its leading length.
    BlockTrailerMismatch {
        /// The block type.
        block_type: u32,
        /// The leading total length.
        length: u32,
        /// The trailing total length.
        trailer: u32,
    },
    /// A section header whose byte-order magic is neither 0x1A2B3C4D nor its swap.
    BadByteOrderMagic(u32),
    /// A section header with a major version other than 1.
    UnsupportedVersion {
        /// The section header's major version.
        major: u16,
        /// The section header's minor version.
        minor: u16,
    },
    /// A pcapng block body too short for its fixed fields.
    BlockBodyTooShort {
        /// The block type.
        block_type: u32,
        /// Bytes of body the block has.
        body: u32,
        /// Bytes its fixed fields need.
        needed: u32,
    },
    /// A packet's captured length runs past the end of its pcapng block.
    CaptureLengthPastBlock {
        /// The packet's captured length.
        caplen: u32,
        /// Bytes the block has for packet data.
        room: u32,
    },
    /// A packet refers to an interface no IDB of its section described.
    UnknownInterface {
        /// The interface index the packet names.
        interface: u32,
        /// How many interfaces its section defines.
        defined: u32,
    },
    /// An interface description block beyond `MAX_INTERFACES` (skipped: its packets are then
    /// reported as naming an unknown interface).
    TooManyInterfaces {
        /// The limit, `MAX_INTERFACES`.
        limit: u32,
    },
    /// A pcapng timestamp that 64-bit nanoseconds since 1970 cannot hold with the interface's
    /// `if_tsresol` and `if_tsoffset` (out of 1970..2554): a warning, once per interface; its
    /// timestamps saturate (to 0 or `u64::MAX`) from here on.
    TimestampOutOfRange {
        /// Index of the interface among all IDBs of the file (as `Frame::interface`).
        interface: u32,
        /// Byte offset of the interface's description block.
        idb_offset: u64,
        /// The raw 64-bit timestamp, in `resolution` units.
        ticks: u64,
        /// The interface's `if_tsresol`.
        resolution: TsResolution,
        /// The interface's `if_tsoffset`, in seconds.
        ts_offset_s: i64,
        /// What the frame's `ts_ns` is.
        saturated_ns: u64,
    },
}

impl ErrorKind {
    pub(crate) fn from_io(e: io::Error, gzip: bool) -> ErrorKind {
        if gzip {
            ErrorKind::Gzip(e)
        } else {
            ErrorKind::Io(e)
        }
    }

    /// A short name of the kind, the same for every error of the kind (`Warnings` counts by
    /// it).
    pub fn name(&self) -> &'static str {
        use ErrorKind::*;
        match self {
            Io(_) => "read error",
            Gzip(_) => "damaged gzip data",
            Empty => "empty file",
            BadMagic(_) => "not a capture",
            TruncatedFileHeader { .. } => "truncated file header",
            TruncatedRecordHeader { .. } => "truncated record header",
            RecordExceedsSnapLen { .. } => "record longer than the snap length",
            RecordTooLong { .. } => "record too long",
            RecordPastEnd { .. } => "truncated last record",
            TruncatedBlockHeader { .. } => "truncated block header",
            BlockTooShort { .. } => "block too short",
            BlockMisaligned { .. } => "misaligned block length",
            BlockTooLong { .. } => "block too long",
            BlockPastEnd { .. } => "truncated last block",
            BlockTrailerMismatch { .. } => "block trailer mismatch",
            BadByteOrderMagic(_) => "bad byte-order magic",
            UnsupportedVersion { .. } => "unsupported pcapng version",
            BlockBodyTooShort { .. } => "block body too short",
            CaptureLengthPastBlock { .. } => "captured length past its block",
            UnknownInterface { .. } => "unknown interface",
            TooManyInterfaces { .. } => "too many interfaces",
            TimestampOutOfRange { .. } => "timestamp out of range",
        }
    }
}

/// Human name of a pcapng block type, for messages.
pub(crate) fn block_name(block_type: u32) -> &'static str {
    match block_type {
        0x0A0D_0D0A => "section header block",
        1 => "interface description block",
        2 => "packet block",
        3 => "simple packet block",
        4 => "name resolution block",
        5 => "interface statistics block",
        6 => "enhanced packet block",
        _ => "block",
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            Io(e) => write!(f, "read error: {e}"),
            Gzip(e) => write!(f, "gzip data is damaged or truncated: {e}"),
            Empty => write!(f, "the file is empty"),
            BadMagic(m) => write!(
                f,
                "not a pcap or pcapng capture: it starts with {:02x} {:02x} {:02x} {:02x}",
                m[0], m[1], m[2], m[3]
            ),
            TruncatedFileHeader { needed, available } => {
                write!(f, "file header truncated: {needed} bytes needed, {available} present")
            }
            TruncatedRecordHeader { available } => {
                write!(f, "record header truncated: 16 bytes needed, {available} present")
            }
            RecordExceedsSnapLen { caplen, snaplen, interface: None } => write!(
                f,
                "record length {caplen} exceeds the file header's snap length {snaplen}: read in full, as Wireshark does; later such records are not reported"
            ),
            RecordExceedsSnapLen { caplen, snaplen, interface: Some(i) } => write!(
                f,
                "captured length {caplen} exceeds the snap length {snaplen} of interface {i}: read in full, as Wireshark does; later such packets are not reported"
            ),
            RecordTooLong { caplen } => write!(
                f,
                "record length {caplen} exceeds the {MAX_RECORD_LEN}-byte limit of libpcap and Wireshark"
            ),
            RecordPastEnd { caplen, available } => write!(
                f,
                "record length {caplen} runs past the end of the file ({available} bytes left): truncated last record"
            ),
            TruncatedBlockHeader { available } => {
                write!(f, "block header truncated: 12 bytes needed, {available} present")
            }
            BlockTooShort { block_type, length } => write!(
                f,
                "{} (type 0x{block_type:08x}) length {length} is below the 12-byte minimum",
                block_name(*block_type)
            ),
            BlockMisaligned { block_type, length } => write!(
                f,
                "{} (type 0x{block_type:08x}) length {length} is not a multiple of 4",
                block_name(*block_type)
            ),
            BlockTooLong { block_type, length } => write!(
                f,
                "{} (type 0x{block_type:08x}) length {length} exceeds the {MAX_BLOCK_LEN}-byte limit",
                block_name(*block_type)
            ),
            BlockPastEnd { block_type, length, available } => write!(
                f,
                "{} (type 0x{block_type:08x}) length {length} runs past the end of the file ({available} bytes left): truncated last block",
                block_name(*block_type)
            ),
            BlockTrailerMismatch { block_type, length, trailer } => write!(
                f,
                "{} (type 0x{block_type:08x}) leading length {length} differs from trailing length {trailer}",
                block_name(*block_type)
            ),
            BadByteOrderMagic(m) => {
                write!(f, "section header byte-order magic 0x{m:08x} is neither 0x1a2b3c4d nor 0x4d3c2b1a")
            }
            UnsupportedVersion { major, minor } => {
                write!(f, "pcapng section version {major}.{minor} is not supported (1.x expected)")
            }
            BlockBodyTooShort { block_type, body, needed } => write!(
                f,
                "{} body of {body} bytes is too short ({needed} needed)",
                block_name(*block_type)
            ),
            CaptureLengthPastBlock { caplen, room } => write!(
                f,
                "captured length {caplen} runs past the end of its block ({room} bytes of room)"
            ),
            UnknownInterface { interface, defined } => write!(
                f,
                "packet names interface {interface} but its section defines {defined} interface(s)"
            ),
            TooManyInterfaces { limit } => write!(
                f,
                "interface description block beyond the limit of {limit} interfaces: skipped, its packets name an unknown interface"
            ),
            TimestampOutOfRange {
                interface,
                idb_offset,
                ticks,
                resolution,
                ts_offset_s,
                saturated_ns,
            } => write!(
                f,
                "timestamp of {ticks} ticks (if_tsresol {resolution}, if_tsoffset {ts_offset_s} s) of interface {interface} (described at byte offset {idb_offset}) is out of the range of 64-bit nanoseconds since 1970: read as {saturated_ns}; later timestamps of the interface saturate without a warning"
            ),
        }
    }
}
