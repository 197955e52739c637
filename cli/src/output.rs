//! Writing to stdout and stderr without a panic. `print!` and `eprintln!` panic when their
//! stream fails (`> /dev/full`, a full disk, `2>/dev/full`, a closed pipe); every command
//! writes through here instead.
//!
//! stdout: a closed pipe (`| head`) ends the output quietly, the command keeps its exit
//! status; any other failure is an error the command reports (exit 2). stderr: failures are
//! ignored, there is nowhere left to report them.

use std::fmt::Display;
use std::io::{self, Write};

use crate::input::InputError;

/// Writes `bytes` to stdout and flushes it.
pub fn stdout(bytes: &[u8]) -> Result<(), InputError> {
    let mut out = io::stdout().lock();
    written(out.write_all(bytes).and_then(|()| out.flush()))
}

/// stdout behind a 64 KiB buffer, for a document written in many small pieces (serde's
/// pretty JSON of `stats`, `check`, `diagnose`). Why: Rust's stdout is line-buffered even
/// into a file or a pipe, so each piece was scanned for a newline and each line was a
/// write(2) of its own: `stats --format json` of 64 connections (370 KB) spent 196
/// instructions per frame of a 100,000-frame capture there (BENCHMARKS.md). Flush it, and
/// pass the result to [`written`].
pub fn stdout_buffered() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

/// What a write to stdout came to: done, or stopped by a closed pipe (`Ok` both), or failed.
pub fn written(res: io::Result<()>) -> Result<(), InputError> {
    match res {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(InputError(format!("writing to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// `roce-inspect: warning: {msg}` on stderr, if stderr can take it; held instead on a
/// thread that called [`hold_warnings`].
pub fn warning(msg: impl Display) {
    let line = format!("roce-inspect: warning: {msg}\n");
    let line = HELD.with_borrow_mut(|held| match held {
        Some(h) => {
            h.push_str(&line);
            None
        }
        None => Some(line),
    });
    if let Some(line) = line {
        let _ = io::stderr().lock().write_all(line.as_bytes());
    }
}

std::thread_local! {
    /// The warnings of this thread not written yet ([`hold_warnings`]).
    static HELD: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// From now on, [`warning`] on this thread keeps its lines until [`held_warnings`]: for a
/// pass over a capture that may be given up and made again (`check --threads N` falls back
/// to one thread), so that its warnings are written once.
pub fn hold_warnings() {
    HELD.with_borrow_mut(|h| *h = Some(String::new()));
}

/// The lines [`warning`] held on this thread, and writes straight to stderr again.
pub fn held_warnings() -> String {
    HELD.with_borrow_mut(Option::take).unwrap_or_default()
}

/// `{msg}` on stderr, if stderr can take it: progress of a live capture (tshark's
/// "Capturing on 'eth0'" and "39 packets captured").
pub fn note(msg: impl Display) {
    let _ = writeln!(io::stderr().lock(), "{msg}");
}

/// `roce-inspect: error: {msg}` on stderr, if stderr can take it.
pub fn error(msg: impl Display) {
    let _ = writeln!(io::stderr().lock(), "roce-inspect: error: {msg}");
}

/// Whether stdout is a pipe (`| grep`, `| tee`): then `dissect` of stdin flushes every
/// frame, as tshark does with `-l`, so that a live capture does not look frozen behind
/// 64 KiB of buffer. Not for a file read into a pipe: a write per frame made `dissect
/// FILE | cat` about 4x slower (50,000 frames), and a file never stalls. A file or a
/// terminal is not a pipe.
pub fn stdout_is_pipe() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd as _;
        use std::os::unix::fs::FileTypeExt as _;
        let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else { return false };
        std::fs::File::from(fd).metadata().is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        false
    }
}
