//! `check --follow FILE`: a capture that is still being written (`tcpdump -w FILE` in another
//! terminal, a rotating capture), read as `tail -f` reads a log: at the end of the file the
//! reader waits for more instead of ending, until Ctrl-C (SIGINT) or SIGTERM. Findings are
//! printed as they are proven, and the report when it stops.
//!
//! The wait is in the byte stream under roce-capture's reader, not in the frame loop: a record
//! whose bytes are not all written yet is simply waited for, never reported as cut short while
//! the file may still grow. After Ctrl-C the reader sees the end of the file, so a record left
//! half-written then is reported as any capture cut short is.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use roce_capture::Capture;

use crate::input::InputError;

/// How often the end of a quiet file is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// The file's bytes, waiting at its end for more until the stop flag is set; then its end.
struct Growing {
    file: File,
    stop: Arc<AtomicBool>,
}

impl Read for Growing {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.file.read(buf)?;
            // Bytes written before the stop are still read: only an empty read ends it.
            if n > 0 || buf.is_empty() || crate::stop::requested(&self.stop) {
                return Ok(n);
            }
            std::thread::sleep(POLL);
        }
    }
}

/// Opens `path` to be followed (SIGINT and SIGTERM from now on end the following).
pub fn open(path: &Path) -> Result<Capture, InputError> {
    let (name, bytes) = stream(path)?;
    Capture::from_reader(&name, bytes).map_err(|e| InputError(e.to_string()))
}

/// The followed file's name and bytes, for [`open`] and a tapped reader
/// ([`crate::input::Input::open_tapped`]).
pub fn stream(path: &Path) -> Result<(String, impl Read + Send + 'static), InputError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| InputError(format!("{name}: {e}")))?;
    let stop =
        crate::stop::on_signal().map_err(|e| InputError(format!("cannot handle SIGINT: {e}")))?;
    Ok((name, Growing { file, stop }))
}
