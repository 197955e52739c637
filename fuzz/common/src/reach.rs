//! What an input reached: opcodes, extended headers, CM messages (for the coverage figure).

use roce_parser::{CmMessage, ExtHeader, Mad, Roce};

/// The CM messages [`Reach::cm`] counts, in its index order.
pub const CM_NAMES: [&str; 13] = [
    "REQ",
    "REP",
    "RTU",
    "REJ",
    "MRA",
    "DREQ",
    "DREP",
    "SIDR_REQ",
    "SIDR_REP",
    "LAP",
    "APR",
    "ClassPortInfo",
    "unknown attribute",
];

/// Counters filled by the targets. Fixed-size arrays: filling one costs the fuzzer nothing
/// worth measuring.
#[derive(Clone, Debug)]
pub struct Reach {
    /// Packets whose BTH was parsed, by opcode (table, reserved and vendor opcodes alike).
    pub bth: [u32; 256],
    /// Packets of a table opcode whose every listed extended header was parsed, by opcode.
    pub complete: [u32; 256],
    /// Extended headers parsed, indexed like [`ExtHeader::ALL`].
    pub headers: [u32; ExtHeader::COUNT],
    /// CM messages decoded from a MAD, indexed like [`CM_NAMES`].
    pub cm: [u32; 13],
    /// Frames a capture reader handed out.
    pub frames: u32,
}

impl Default for Reach {
    fn default() -> Self {
        Reach {
            bth: [0; 256],
            complete: [0; 256],
            headers: [0; ExtHeader::COUNT],
            cm: [0; 13],
            frames: 0,
        }
    }
}

/// The index of `h` in [`ExtHeader::ALL`].
pub fn header_index(h: ExtHeader) -> usize {
    h.index()
}

/// The index of `m` in [`CM_NAMES`].
pub fn cm_index(m: &CmMessage<'_>) -> usize {
    match m {
        CmMessage::Req(_) => 0,
        CmMessage::Rep(_) => 1,
        CmMessage::Rtu(_) => 2,
        CmMessage::Rej(_) => 3,
        CmMessage::Mra(_) => 4,
        CmMessage::Dreq(_) => 5,
        CmMessage::Drep(_) => 6,
        CmMessage::SidrReq(_) => 7,
        CmMessage::SidrRep(_) => 8,
        CmMessage::Lap(_) => 9,
        CmMessage::Apr(_) => 10,
        CmMessage::ClassPortInfo => 11,
        CmMessage::Unknown(_) => 12,
    }
}

impl Reach {
    /// Records a parsed RoCE packet (and its MAD, for a UD SEND to QP1).
    pub fn roce(&mut self, r: &Roce<'_>) {
        let op = usize::from(r.bth.opcode);
        self.bth[op] += 1;
        if let Some(info) = r.info {
            if info.headers.iter().all(|&h| r.headers.has(h)) {
                self.complete[op] += 1;
            }
        }
        for h in ExtHeader::ALL {
            if r.headers.has(h) {
                self.headers[header_index(h)] += 1;
            }
        }
        if let Some(Ok(mad)) = r.mad() {
            self.mad(&mad);
        }
    }

    /// Records a decoded MAD.
    pub fn mad(&mut self, mad: &Mad<'_>) {
        if let Some(m) = &mad.cm {
            self.cm[cm_index(m)] += 1;
        }
    }

    /// Adds another input's counts (each counter counts inputs that reached it once or more
    /// when `other` comes from one input: see `coverage`).
    pub fn add_presence(&mut self, other: &Reach) {
        fn add<const N: usize>(a: &mut [u32; N], b: &[u32; N]) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += u32::from(*y > 0);
            }
        }
        add(&mut self.bth, &other.bth);
        add(&mut self.complete, &other.complete);
        add(&mut self.headers, &other.headers);
        add(&mut self.cm, &other.cm);
        self.frames += other.frames;
    }
}
