//! Every file a command writes goes through here: written whole or not at all, never over
//! its own input, never replacing what is not a regular file.
//!
//! Why: a capture tool is run as root on the only copy of a capture. Writing straight into
//! the named file destroyed users' data: `dissect x.pcap -w x.pcap` truncated the input it
//! was still reading, `report x.pcap -o x.html` with x.html a hard link to the capture
//! replaced it, `check --annotate /dev/null` on a damaged capture unlinked /dev/null, and a
//! full disk left partial files under the requested names. The rules, in order:
//!
//! 1. **The output is not an input.** Before anything is opened for writing, the
//!    destination's device and inode (symbolic links followed) are compared with every file
//!    the command reads, standard input included when it is a file (`< x.pcap`): the same
//!    path, a hard link or a symbolic link to an input is refused, as tshark refuses `-w` onto
//!    its input.
//! 2. **A regular file (or a new name) is staged.** The bytes go to a temporary file in the
//!    destination's directory (the same file system, so the rename is atomic), which is
//!    flushed, synced and renamed over the destination only by [`OutFile::commit`]. Dropped
//!    without a commit (an error, a full disk), the temporary file is removed and the
//!    destination is as it was. A symbolic link is written through: the file it names is
//!    replaced, the link stays. The new file keeps an existing destination's permissions.
//! 3. **Anything else is written in place.** A character or block device (`/dev/null`), a
//!    FIFO or a socket is opened for writing as it is: never truncated, unlinked or
//!    replaced, whatever happens. A directory is an error.
//!    An interrupted command (SIGINT, SIGTERM, SIGHUP) removes its temporary files before it
//!    ends, unless the signal stops a capture without an end (crate::stop), which then
//!    completes its outputs as at the end of a file.
//! 4. **`-` is standard output** where a single stream is written. A closed pipe (`| head`)
//!    ends the output quietly: later bytes are dropped and [`OutFile::closed`] says so, so a
//!    long loop can stop early.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::input::InputError;

/// A file being written by a command (see the module doc).
#[derive(Debug)]
pub struct OutFile {
    /// The name as the user gave it, for messages.
    shown: PathBuf,
    /// The option that named it (`-w`, `-o`, `--annotate`), for messages.
    what: &'static str,
    sink: Sink,
}

#[derive(Debug)]
enum Sink {
    /// `-`: standard output; `closed` once a write met a closed pipe.
    Stdout { out: io::Stdout, closed: bool },
    /// A device, FIFO or socket, written where it is; `closed` once a write met a closed
    /// pipe (a FIFO, `/dev/stdout` on a pipe).
    InPlace { file: File, closed: bool },
    /// A temporary file, renamed over `dest` by `commit`, removed when dropped before.
    Staged { file: File, tmp: PathBuf, dest: PathBuf },
    /// Committed (or given up): nothing left to clean.
    Done,
}

/// Whether `-` may name standard output for this output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// `-` is standard output.
    Stdout,
    /// `-` is refused: the output is several files (`export -o DIR`, `gen suite -o DIR`).
    Refused,
}

impl OutFile {
    /// Opens `path` for writing as the module doc says: `what` names the option in messages,
    /// `inputs` are the files the command reads (`-` for standard input).
    pub fn create(
        what: &'static str,
        path: &Path,
        inputs: &[&Path],
        dash: Dash,
    ) -> Result<OutFile, InputError> {
        let shown = path.to_path_buf();
        let err = |msg: String| InputError(format!("{what} {}: {msg}", path.display()));
        if path == Path::new("-") {
            return match dash {
                Dash::Stdout => Ok(OutFile {
                    shown,
                    what,
                    sink: Sink::Stdout { out: io::stdout(), closed: false },
                }),
                Dash::Refused => {
                    Err(err("standard output cannot hold this output; give a name".into()))
                }
            };
        }
        if path.as_os_str().is_empty() {
            return Err(err("an empty name".into()));
        }
        refuse_inputs(path, inputs).map_err(err)?;
        let sink = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return Err(err("is a directory".into())),
            Ok(m) if m.is_file() => {
                // Through a symbolic link: the file it names is replaced, the link stays.
                let dest = path.canonicalize().map_err(|e| err(format!("cannot resolve: {e}")))?;
                stage(&dest, Some(&m)).map_err(|e| err(format!("cannot create: {e}")))?
            }
            // A device, FIFO or socket: written in place, never replaced.
            Ok(_) => Sink::InPlace {
                file: OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| err(format!("cannot open for writing: {e}")))?,
                closed: false,
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(path).is_ok() {
                    return Err(err("a symbolic link to a missing file; not following it".into()));
                }
                stage(path, None).map_err(|e| err(format!("cannot create: {e}")))?
            }
            Err(e) => return Err(err(format!("cannot use: {e}"))),
        };
        Ok(OutFile { shown, what, sink })
    }

    /// The name the user gave.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Whether this is standard output.
    pub fn is_stdout(&self) -> bool {
        matches!(self.sink, Sink::Stdout { .. })
    }

    /// Whether standard output (or a pipe written in place) was closed by its reader
    /// (`| head`): nothing more will be written, the command may stop.
    pub fn closed(&self) -> bool {
        matches!(self.sink, Sink::Stdout { closed: true, .. } | Sink::InPlace { closed: true, .. })
    }

    /// An error writing this output, naming it.
    pub fn error(&self, e: impl std::fmt::Display) -> InputError {
        if self.is_stdout() {
            InputError(format!("{} -: writing to stdout: {e}", self.what))
        } else {
            InputError(format!("{} {}: writing: {e}", self.what, self.shown.display()))
        }
    }

    /// The output is complete: flushed, synced and (a staged file) renamed over its name.
    pub fn commit(mut self) -> Result<(), InputError> {
        let res = match std::mem::replace(&mut self.sink, Sink::Done) {
            Sink::Stdout { mut out, closed } => match out.flush() {
                Err(e) if !closed && e.kind() != io::ErrorKind::BrokenPipe => Err(e),
                _ => Ok(()),
            },
            Sink::InPlace { mut file, closed } => match file.flush() {
                Err(e) if !closed && e.kind() != io::ErrorKind::BrokenPipe => Err(e),
                _ => Ok(()),
            },
            Sink::Staged { mut file, tmp, dest } => {
                let res = file.flush().and_then(|()| file.sync_all());
                drop(file);
                let res = res.and_then(|()| std::fs::rename(&tmp, &dest));
                if res.is_err() {
                    let _ = std::fs::remove_file(&tmp);
                }
                forget_temp(&tmp);
                res
            }
            Sink::Done => Ok(()),
        };
        res.map_err(|e| self.error(e))
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.sink {
            Sink::Stdout { out, closed } => unless_closed(closed, buf.len(), || out.write(buf)),
            Sink::InPlace { file, closed } => unless_closed(closed, buf.len(), || file.write(buf)),
            Sink::Staged { file, .. } => file.write(buf),
            Sink::Done => Err(io::Error::other("the output is already complete")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Stdout { out, closed } => unless_closed(closed, (), || out.flush()),
            Sink::InPlace { file, closed } => unless_closed(closed, (), || file.flush()),
            Sink::Staged { file, .. } => file.flush(),
            Sink::Done => Ok(()),
        }
    }
}

/// `op` on a stream unless its reader closed it; a closed pipe marks it `closed` and `op`'s
/// later calls give `done` without writing (the output ends quietly, as `| head` expects).
fn unless_closed<T>(
    closed: &mut bool,
    done: T,
    op: impl FnOnce() -> io::Result<T>,
) -> io::Result<T> {
    if *closed {
        return Ok(done);
    }
    match op() {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            *closed = true;
            Ok(done)
        }
        r => r,
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        // Not committed: the temporary file goes, the destination is as it was.
        if let Sink::Staged { tmp, .. } = &self.sink {
            let _ = std::fs::remove_file(tmp);
            forget_temp(tmp);
        }
    }
}

/// Several files written as one output (`export -o DIR`): each staged, all renamed only when
/// every one is complete, none if one failed.
#[derive(Debug, Default)]
pub struct OutSet {
    files: Vec<OutFile>,
}

impl OutSet {
    /// Adds a complete file, to be renamed with the others by [`OutSet::commit`].
    pub fn push(&mut self, f: OutFile) {
        self.files.push(f);
    }

    /// Renames every file over its name (dropped before: every temporary file removed).
    pub fn commit(self) -> Result<(), InputError> {
        // Flushed and synced first, renamed after: a failure before the renames leaves every
        // destination as it was.
        let mut ready = Vec::with_capacity(self.files.len());
        for mut f in self.files {
            if let Sink::Staged { file, .. } = &mut f.sink {
                file.flush().and_then(|()| file.sync_all()).map_err(|e| f.error(e))?;
            }
            ready.push(f);
        }
        ready.into_iter().try_for_each(OutFile::commit)
    }
}

/// Why `path` may not be written: it is one of `inputs` (device and inode, links followed).
fn refuse_inputs(path: &Path, inputs: &[&Path]) -> Result<(), String> {
    let Ok(out) = std::fs::metadata(path) else { return Ok(()) };
    for &input in inputs {
        let (meta, name) = if input == Path::new("-") {
            (stdin_metadata(), "standard input".to_string())
        } else {
            (std::fs::metadata(input).ok(), input.display().to_string())
        };
        let Some(meta) = meta else { continue };
        // A device or FIFO read and written (`-w /dev/stdout` reading stdin) is not a file
        // to protect; a regular file is.
        if meta.is_file() && same_inode(&meta, &out) {
            return Err(format!(
                "that is {name}, which this command reads; not overwriting it (give another name)"
            ));
        }
    }
    Ok(())
}

/// Whether two paths name the same file: the same device and inode (links followed; Unix),
/// or the same canonical path. The test [`OutFile::create`] makes against every input.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        if cfg!(unix) {
            return same_inode(&x, &y);
        }
    }
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

#[cfg(unix)]
fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_inode(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    false
}

/// Standard input's metadata (a file redirected with `<`), if it has any.
fn stdin_metadata() -> Option<std::fs::Metadata> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd as _;
        let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
        File::from(fd).metadata().ok()
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// A new temporary file beside `dest` (same directory, so the rename stays on one file
/// system), with `existing`'s permissions and owner when it replaces a file.
fn stage(dest: &Path, existing: Option<&std::fs::Metadata>) -> io::Result<Sink> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = dest.file_name().map_or_else(|| OsString::from("out"), OsString::from);
    loop {
        let mut tmp_name = OsString::from(".");
        tmp_name.push(&name);
        tmp_name.push(format!(
            ".{}.{}.roce-inspect-tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = dir.join(tmp_name);
        let mut o = OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // As File::create: 0666 less the umask (a replaced file's mode is copied below).
            o.mode(0o666);
        }
        match o.open(&tmp) {
            Ok(file) => {
                remember_temp(&tmp);
                if let Some(m) = existing {
                    keep_owner_and_mode(&file, m);
                }
                return Ok(Sink::Staged { file, tmp, dest: dest.to_path_buf() });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The replaced file's permissions, and its owner when we may set it (root writing a user's
/// file leaves it the user's); failures leave the new file as created.
fn keep_owner_and_mode(file: &File, m: &std::fs::Metadata) {
    let _ = file.set_permissions(m.permissions());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let _ = std::os::unix::fs::fchown(file, Some(m.uid()), Some(m.gid()));
    }
}

/// The temporary files not yet renamed or removed, for the signal thread.
fn temps() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static TEMPS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    TEMPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn remember_temp(tmp: &Path) {
    temps().push(tmp.to_path_buf());
    guard_signals();
}

fn forget_temp(tmp: &Path) {
    temps().retain(|t| t != tmp);
}

/// From the first temporary file on, SIGINT, SIGTERM and SIGHUP are taken by a thread that
/// removes the temporary files and ends the process as the signal would (status 128 +
/// signal), unless crate::stop routes the signal to a capture's stop flag. The handler
/// itself is signal-hook's: no code of ours runs in signal context.
fn guard_signals() {
    static GUARD: std::sync::Once = std::sync::Once::new();
    GUARD.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new().name("outfile-signals".into()).spawn(move || {
            for sig in signals.forever() {
                if sig != SIGHUP && crate::stop::routed() {
                    continue;
                }
                for t in temps().drain(..) {
                    let _ = std::fs::remove_file(t);
                }
                std::process::exit(128 + sig);
            }
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("roce-outfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_file_appears_whole_on_commit_and_not_before() {
        let d = dir("commit");
        let out = d.join("x.html");
        std::fs::write(&out, b"old").unwrap();
        let mut f = OutFile::create("-o", &out, &[], Dash::Stdout).unwrap();
        f.write_all(b"new contents").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"old", "replaced before the commit");
        assert_eq!(entries(&d).len(), 2, "the temporary file beside it");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new contents");
        assert_eq!(entries(&d), ["x.html"]);
    }

    #[test]
    fn dropped_without_commit_leaves_the_destination_as_it_was() {
        let d = dir("drop");
        let out = d.join("x.html");
        std::fs::write(&out, b"old").unwrap();
        let mut f = OutFile::create("-o", &out, &[], Dash::Stdout).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        assert_eq!(entries(&d), ["x.html"]);
        // A new name: nothing appears.
        let f = OutFile::create("-o", &d.join("new.html"), &[], Dash::Stdout).unwrap();
        drop(f);
        assert_eq!(entries(&d), ["x.html"]);
    }

    #[cfg(unix)]
    #[test]
    fn an_input_by_any_name_is_refused() {
        let d = dir("input");
        let cap = d.join("x.pcap");
        std::fs::write(&cap, b"capture").unwrap();
        std::fs::hard_link(&cap, d.join("hard.html")).unwrap();
        std::os::unix::fs::symlink(&cap, d.join("soft.html")).unwrap();
        for name in ["x.pcap", "hard.html", "soft.html"] {
            let e = OutFile::create("-o", &d.join(name), &[&cap], Dash::Stdout).unwrap_err();
            assert!(e.0.contains("which this command reads"), "{name}: {e}");
        }
        assert_eq!(std::fs::read(&cap).unwrap(), b"capture");
        assert_eq!(entries(&d), ["hard.html", "soft.html", "x.pcap"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_written_through_and_kept() {
        let d = dir("symlink");
        std::fs::write(d.join("target.html"), b"old").unwrap();
        std::os::unix::fs::symlink("target.html", d.join("link.html")).unwrap();
        let mut f = OutFile::create("-o", &d.join("link.html"), &[], Dash::Stdout).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert!(std::fs::symlink_metadata(d.join("link.html")).unwrap().is_symlink());
        assert_eq!(std::fs::read(d.join("target.html")).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let d = dir("mode");
        let out = d.join("x.txt");
        std::fs::write(&out, b"old").unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
        let mut f = OutFile::create("-o", &out, &[], Dash::Stdout).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place_and_never_replaced() {
        use std::io::Read as _;
        use std::os::unix::fs::FileTypeExt as _;
        let d = dir("fifo");
        let fifo = d.join("pipe");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut s = String::new();
                File::open(fifo).unwrap().read_to_string(&mut s).unwrap();
                s
            })
        };
        let mut f = OutFile::create("-o", &fifo, &[], Dash::Stdout).unwrap();
        f.write_all(b"through the fifo").unwrap();
        drop(f); // even uncommitted: never unlinked
        assert_eq!(reader.join().unwrap(), "through the fifo");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(entries(&d), ["pipe"]);
    }

    #[test]
    fn dash_is_stdout_only_where_allowed_and_a_directory_is_refused() {
        assert!(OutFile::create("-w", Path::new("-"), &[], Dash::Stdout).unwrap().is_stdout());
        let e = OutFile::create("-o", Path::new("-"), &[], Dash::Refused).unwrap_err();
        assert!(e.0.contains("standard output cannot hold"), "{e}");
        let d = dir("isdir");
        let e = OutFile::create("-o", &d, &[], Dash::Stdout).unwrap_err();
        assert!(e.0.contains("is a directory"), "{e}");
    }

    #[test]
    fn an_out_set_renames_all_or_none() {
        let d = dir("set");
        std::fs::write(d.join("a"), b"old a").unwrap();
        let mut set = OutSet::default();
        for n in ["a", "b"] {
            let mut f = OutFile::create("-o", &d.join(n), &[], Dash::Refused).unwrap();
            f.write_all(n.as_bytes()).unwrap();
            set.push(f);
        }
        drop(set);
        assert_eq!(entries(&d), ["a"]);
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"old a");
        let mut set = OutSet::default();
        for n in ["a", "b"] {
            let mut f = OutFile::create("-o", &d.join(n), &[], Dash::Refused).unwrap();
            f.write_all(n.as_bytes()).unwrap();
            set.push(f);
        }
        set.commit().unwrap();
        assert_eq!(entries(&d), ["a", "b"]);
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"a");
    }
}
