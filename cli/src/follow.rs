//! `check --follow FILE`: a capture that is still being written (`tcpdump -w FILE` in another
//! terminal, a rotating capture), read as `tail -f` reads a log: at the end of the file the
//! reader waits for more instead of ending, until Ctrl-C (SIGINT) or SIGTERM. Findings are
//! printed as they are proven, and the report when it stops.
//!
//! The wait is in the byte stream under roce-capture's reader, not in the frame loop: a record
//! whose bytes are not all written yet is simply waited for, never reported as cut short while
//! the file may still grow. After Ctrl-C the reader sees the end of the file, so a record left
//! half-written then is reported as any capture cut short is.
//!
//! A file truncated (shorter than what was read) or replaced (another file under its name,
//! a rotation: `mv FILE FILE.1` and a new FILE) while it is followed ends the following, as
//! Ctrl-C does, with a warning that names the file and says why: the report covers what was
//! read. The new file is not followed from its start: it is another capture (its own header,
//! frame numbers from 1), and one report cannot number the frames of two. A file removed (no
//! file under the name) is still followed: the writer may still be writing to it.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use roce_capture::Capture;

use crate::input::InputError;

/// How often the end of a quiet file is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// The file's bytes, waiting at its end for more until the stop flag is set, or until the
/// file is truncated or replaced ([`Growing::changed`]); then its end.
struct Growing {
    file: File,
    path: PathBuf,
    stop: Arc<AtomicBool>,
    /// Bytes read so far.
    read: u64,
    /// The file's identity (device, inode) when opened.
    id: Option<(u64, u64)>,
    /// Truncated or replaced: the end, for good.
    ended: bool,
}

/// Device and inode of a file (Unix); `None` elsewhere.
fn identity(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

impl Growing {
    /// Why the following ends at the end of what was read, if it does: the file is shorter
    /// than what was read (truncated), or its name is another file's now (replaced).
    fn changed(&self) -> Option<String> {
        if let Ok(m) = self.file.metadata() {
            if m.len() < self.read {
                return Some(format!(
                    "truncated to {} bytes after {} were read",
                    m.len(),
                    self.read
                ));
            }
        }
        // No file under the name (removed, or renamed and not replaced yet): still followed.
        let now = std::fs::metadata(&self.path).ok().and_then(|m| identity(&m));
        match (self.id, now) {
            (Some(a), Some(b)) if a != b => Some("replaced by another file (rotated?)".to_string()),
            _ => None,
        }
    }
}

impl Read for Growing {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.ended {
                return Ok(0);
            }
            let n = self.file.read(buf)?;
            self.read += n as u64;
            // Bytes written before the stop are still read: only an empty read ends it.
            if n > 0 || buf.is_empty() || crate::stop::requested(&self.stop) {
                return Ok(n);
            }
            if let Some(why) = self.changed() {
                crate::output::warning(format!(
                    "{}: {why}: following stops here (as at Ctrl-C; the report covers the \
                     {} bytes read; run it again to follow the new file)",
                    self.path.display(),
                    self.read
                ));
                self.ended = true;
                return Ok(0);
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
    let id = file.metadata().ok().and_then(|m| identity(&m));
    let stop =
        crate::stop::on_signal().map_err(|e| InputError(format!("cannot handle SIGINT: {e}")))?;
    let path = path.to_path_buf();
    Ok((name, Growing { file, path, stop, read: 0, id, ended: false }))
}
