//! The non-fatal errors of a read, bounded: the first few of each kind kept (to print), the
//! rest only counted.
//!
//! A damaged file can hold one bad block per packet: a pcapng of 400,000 packets whose
//! interface description block is missing yields 400,000 "unknown interface" errors. Printed
//! and kept, they cost 15 MB of stderr and 160 MB of memory, and the first few say all there
//! is to say. So a `Warnings` keeps `per_kind` of each kind (by `ErrorKind::name`) and counts
//! the others, which `omitted` reports as one line per kind: memory and output stay bounded
//! by the number of kinds, whatever the file.

use std::fmt;
use std::sync::Arc;

use crate::error::CaptureError;

/// The warnings of one capture: the first `per_kind` of each kind, and how many there were.
#[derive(Debug)]
pub struct Warnings {
    per_kind: usize,
    kept: Vec<CaptureError>,
    /// One entry per kind seen, in the order first seen.
    kinds: Vec<KindCount>,
    total: u64,
}

#[derive(Debug)]
struct KindCount {
    name: &'static str,
    seen: u64,
    /// The file of the first warning of the kind.
    file: Arc<str>,
}

impl Default for Warnings {
    fn default() -> Self {
        Warnings::new(Warnings::PER_KIND)
    }
}

impl Warnings {
    /// Warnings kept per kind by `Warnings::default()`.
    pub const PER_KIND: usize = 20;

    /// Keeps at most `per_kind` warnings of each kind.
    pub fn new(per_kind: usize) -> Warnings {
        Warnings { per_kind, kept: Vec::new(), kinds: Vec::new(), total: 0 }
    }

    /// Counts `warning`; keeps it and returns it (to be printed) while fewer than `per_kind`
    /// of its kind are kept, else drops it and returns `None`.
    pub fn add(&mut self, warning: CaptureError) -> Option<&CaptureError> {
        self.total += 1;
        let name = warning.kind().name();
        let seen = match self.kinds.iter_mut().find(|k| k.name == name) {
            Some(kind) => {
                kind.seen += 1;
                kind.seen
            }
            None => {
                let file = Arc::clone(warning.file_arc());
                self.kinds.push(KindCount { name, seen: 1, file });
                1
            }
        };
        if seen > self.per_kind as u64 {
            return None;
        }
        self.kept.push(warning);
        self.kept.last()
    }

    /// The warnings kept, in the order they came.
    pub fn kept(&self) -> &[CaptureError] {
        &self.kept
    }

    /// Every warning added, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// For each kind with more than `per_kind` warnings, how many were not kept.
    pub fn omitted(&self) -> impl Iterator<Item = Omitted<'_>> {
        let shown = self.per_kind;
        self.kinds.iter().filter(move |k| k.seen > shown as u64).map(move |k| Omitted {
            file: &k.file,
            kind: k.name,
            count: k.seen - shown as u64,
            shown,
        })
    }
}

/// Warnings of one kind that were counted but not kept; displays as one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Omitted<'a> {
    /// The file of the first warning of the kind.
    pub file: &'a str,
    /// `ErrorKind::name` of the kind.
    pub kind: &'static str,
    /// Warnings of the kind beyond the first `shown`.
    pub count: u64,
    /// How many of the kind were kept and shown: the `per_kind` of `Warnings::new`.
    pub shown: usize,
}

impl fmt::Display for Omitted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Omitted { file, kind, count, shown } = self;
        write!(f, "{file}: ... {count} more \"{kind}\" warnings not shown (the first {shown} are)")
    }
}
