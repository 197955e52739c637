//! A copy of the bytes a capture reads, for a second reader in step with it: `dissect -w`
//! copies the selected records byte for byte from the [`Tap`] while the dissector reads the
//! frames from the [`Tee`], so the input is read once (stdin, a pipe and an interface
//! included), never opened a second time.
//!
//! Why the copy stays small: the second reader is asked for frame N only after the capture
//! reader has handed out frame N, and it is asked for every frame, shown or not
//! ([`crate::dissect::write::Writer::pass`]). So what the tap holds is what the capture
//! reader has read ahead of its current frame (its buffer: about 1 MiB), never the capture.
//!
//! The tap holds the raw bytes (before gzip decompression): the second reader sniffs and
//! decompresses them as the first one does.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::{Arc, Mutex, PoisonError};

/// The bytes read through the [`Tee`] and not yet read from the [`Tap`].
type Shared = Arc<Mutex<VecDeque<u8>>>;

/// The capture reader's side: reads `inner` and keeps a copy of each byte for the tap.
pub struct Tee<R> {
    inner: R,
    copy: Shared,
}

/// The second reader's side: the bytes the tee has read, in order. At the end of what was
/// read so far it reports the end of the input (a second reader in step never gets there
/// before the first).
pub struct Tap {
    copy: Shared,
}

/// A tee over `inner` and the tap that sees its bytes.
pub fn tee<R: Read>(inner: R) -> (Tee<R>, Tap) {
    let copy = Shared::default();
    (Tee { inner, copy: Arc::clone(&copy) }, Tap { copy })
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut copy = self.copy.lock().unwrap_or_else(PoisonError::into_inner);
        copy.extend(buf.get(..n).unwrap_or_default());
        Ok(n)
    }
}

impl Read for Tap {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.copy.lock().unwrap_or_else(PoisonError::into_inner).read(buf)
    }
}

impl Tap {
    /// Bytes held (read by the tee, not yet by the tap).
    pub fn held(&self) -> usize {
        self.copy.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tap_sees_what_the_tee_read_and_only_that() {
        let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let (mut tee, mut tap) = tee(io::Cursor::new(data.clone()));
        let mut first = [0u8; 3000];
        tee.read_exact(&mut first).unwrap();
        assert_eq!(tap.held(), 3000);
        let mut second = vec![0u8; 2000];
        tap.read_exact(&mut second).unwrap();
        assert_eq!(second, data[..2000]);
        // Past what the tee read: the end, for now.
        let mut rest = Vec::new();
        tap.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, data[2000..3000]);
        let mut all = Vec::new();
        tee.read_to_end(&mut all).unwrap();
        tap.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, data[2000..]);
        assert_eq!(tap.held(), 0);
    }
}
