//! Capture-reading errors: what was wrong, in which file, at which frame and byte offset.
//!
//! Every error names the place precisely enough that a user can open the file in a hex editor
//! or Wireshark and see the damage. `nothing_read` tells the command line whether the input
//! could not be read at all (exit code 2) or was damaged after some frames (warn, exit 0).

use std::fmt;
use std::io;
use std::sync::Arc;

/// Largest record or block accepted. Wireshark's limit for any link type is 256 KiB per
/// packet and 16 MiB per pcapng block; a larger length is damage, and refusing it keeps a
/// corrupt length from making the reader allocate gigabytes.
pub const MAX_RECORD_LEN: u32 = 16 << 20;

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
    fatal: bool,
    kind: ErrorKind,
}

impl CaptureError {
    pub(crate) fn new(file: Arc<str>, frame: Option<u64>, offset: u64, kind: ErrorKind) -> Self {
        CaptureError(Box::new(Inner { file, frame, offset, frames_before: 0, fatal: true, kind }))
    }

    pub(crate) fn with_progress(mut self, frames_before: u64, fatal: bool) -> Self {
        self.0.frames_before = frames_before;
        self.0.fatal = fatal;
        self
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

    /// True when no frame could be read at all (bad magic, truncated file header, damage in
    /// the first record): the input is unreadable, the command line exits with code 2.
    pub fn nothing_read(&self) -> bool {
        self.0.frames_before == 0
    }

    /// True when iteration ends with this error; false when the reader skipped the damaged
    /// block and goes on (pcapng blocks with a sound length but a bad body).
    pub fn is_fatal(&self) -> bool {
        self.0.fatal
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner { file, frame, offset, kind, .. } = &*self.0;
        match frame {
            Some(n) => write!(f, "{file}: frame {n} at byte offset {offset}: {kind}"),
            // Whole-file problems have no useful offset.
            None if matches!(kind, ErrorKind::Io(_) | ErrorKind::Empty) => {
                write!(f, "{file}: {kind}")
            }
            None => write!(f, "{file}: at byte offset {offset}: {kind}"),
        }
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
    TruncatedFileHeader { needed: u64, available: u64 },
    /// A pcap record header (16 bytes) is cut short at the end of the file.
    TruncatedRecordHeader { available: u64 },
    /// A pcap record's captured length exceeds the file's snap length.
    RecordExceedsSnapLen { caplen: u32, snaplen: u32 },
    /// A pcap record's captured length exceeds what any capture tool writes.
    RecordTooLong { caplen: u32 },
    /// A pcap record runs past the end of the file.
    RecordPastEnd { caplen: u32, available: u64 },
    /// A pcapng block header (12 bytes) is cut short at the end of the file.
    TruncatedBlockHeader { available: u64 },
    /// A pcapng block length below the 12-byte minimum (0 included).
    BlockTooShort { block_type: u32, length: u32 },
    /// A pcapng block length that is not a multiple of 4.
    BlockMisaligned { block_type: u32, length: u32 },
    /// A pcapng block length beyond `MAX_RECORD_LEN`.
    BlockTooLong { block_type: u32, length: u32 },
    /// A pcapng block runs past the end of the file (a truncated last block).
    BlockPastEnd { block_type: u32, length: u32, available: u64 },
    /// The trailing length of a pcapng block differs from its leading length.
    BlockTrailerMismatch { block_type: u32, length: u32, trailer: u32 },
    /// A section header whose byte-order magic is neither 0x1A2B3C4D nor its swap.
    BadByteOrderMagic(u32),
    /// A section header with a major version other than 1.
    UnsupportedVersion { major: u16, minor: u16 },
    /// A pcapng block body too short for its fixed fields.
    BlockBodyTooShort { block_type: u32, body: u32, needed: u32 },
    /// A packet's captured length runs past the end of its pcapng block.
    CaptureLengthPastBlock { caplen: u32, room: u32 },
    /// A packet refers to an interface no IDB of its section described.
    UnknownInterface { interface: u32, defined: u32 },
}

impl ErrorKind {
    pub(crate) fn from_io(e: io::Error, gzip: bool) -> ErrorKind {
        if gzip {
            ErrorKind::Gzip(e)
        } else {
            ErrorKind::Io(e)
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
            RecordExceedsSnapLen { caplen, snaplen } => {
                write!(f, "record length {caplen} exceeds snap length {snaplen}")
            }
            RecordTooLong { caplen } => {
                write!(f, "record length {caplen} exceeds the {MAX_RECORD_LEN}-byte limit")
            }
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
                "{} (type 0x{block_type:08x}) length {length} exceeds the {MAX_RECORD_LEN}-byte limit",
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
        }
    }
}
