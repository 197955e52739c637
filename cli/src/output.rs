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

/// What a write to stdout came to: done, or stopped by a closed pipe (`Ok` both), or failed.
pub fn written(res: io::Result<()>) -> Result<(), InputError> {
    match res {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(InputError(format!("writing to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// `roce-inspect: warning: {msg}` on stderr, if stderr can take it.
pub fn warning(msg: impl Display) {
    let _ = writeln!(io::stderr().lock(), "roce-inspect: warning: {msg}");
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
