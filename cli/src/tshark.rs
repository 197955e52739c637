//! The command-line habits of tshark and tcpdump that roce-inspect follows: several RoCEv2
//! ports (`--port`, as Wireshark's "Decode As" adds one), frame lists and ranges
//! (`--frames 1-10,15,20-`), a read limit (`-c N`), the two together as a [`Window`].
//!
//! Why here and not in clap's definitions: each is a small language with its own errors, and
//! the reader needs to know where reading may stop (the last selected frame), which clap
//! cannot say.

use roce_parser::{Config, MAX_EXTRA_UDP_PORTS};

/// Ports `--port` may be given (the parser's main port and its extra ones).
pub const MAX_PORTS: usize = 1 + MAX_EXTRA_UDP_PORTS;

/// Why the given `--port`s cannot be used, if they cannot.
pub fn check_ports(ports: &[u16]) -> Result<(), String> {
    if ports.len() > MAX_PORTS {
        return Err(format!(
            "--port given {} times: at most {MAX_PORTS} RoCEv2 ports are decoded at once",
            ports.len()
        ));
    }
    Ok(())
}

/// The parser configuration for the `--port`s given (none: 4791). Ports beyond
/// [`MAX_PORTS`] are refused earlier by [`check_ports`].
pub fn config_for_ports(ports: &[u16]) -> Config {
    let mut cfg = Config::default();
    let Some((&first, rest)) = ports.split_first() else { return cfg };
    cfg.udp_port = first;
    for (slot, &p) in cfg.extra_udp_ports.iter_mut().zip(rest) {
        *slot = p;
    }
    cfg
}

/// `--frames`: frame numbers (1-based, as Wireshark counts) as sorted, disjoint, inclusive
/// ranges; `1-10,15,20-` is 1..=10, 15..=15 and 20..=u64::MAX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSelection {
    ranges: Vec<(u64, u64)>,
}

/// The most ranges one `--frames` may list (a command line, not a file).
const MAX_RANGES: usize = 10_000;

impl FrameSelection {
    /// Parses `A`, `A-B`, `A-` items separated by commas. Refused: an empty list or item,
    /// frame 0, an inverted range (`20-10`), a number that is not one.
    pub fn parse(s: &str) -> Result<FrameSelection, String> {
        if s.trim().is_empty() {
            return Err("an empty frame list: give frames like 1-10,15,20-".into());
        }
        let mut ranges = Vec::new();
        for item in s.split(',') {
            if ranges.len() == MAX_RANGES {
                return Err(format!("more than {MAX_RANGES} items in a frame list"));
            }
            ranges.push(parse_item(item.trim(), s)?);
        }
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (a, b) in ranges {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        Ok(FrameSelection { ranges: merged })
    }

    /// Whether frame `n` is selected (a binary search: the ranges are sorted and disjoint).
    pub fn contains(&self, n: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, b)| b < n);
        self.ranges.get(i).is_some_and(|&(a, _)| a <= n)
    }

    /// The last frame selected, when the list ends (`20-` does not): reading may stop there.
    pub fn last(&self) -> Option<u64> {
        self.ranges.last().map(|&(_, b)| b).filter(|&b| b != u64::MAX)
    }
}

/// `-c N` and `--frames LIST`: the frames a command reads. `stats`, `check`, `export`,
/// `report` and `graph` see only these frames, as if the capture held nothing else (a
/// connection cut by the window is judged as one a capture cut short); `dissect` reads
/// every frame up to the last one and shows these (its `-t r` and `-t d` times count the
/// frames it does not show, as tshark's do). Reading stops after the last frame selected.
///
/// ```
/// use roce_inspect::internal::tshark::{FrameSelection, Window};
/// let w = Window { frames: Some(FrameSelection::parse("5-9,20-").unwrap()), count: Some(30) };
/// assert!(w.contains(5) && !w.contains(10) && w.contains(30) && !w.contains(31));
/// assert_eq!(w.last(), Some(30));
/// assert!(Window::default().is_all());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Window {
    /// `--frames`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<FrameSelection>,
    /// `-c N`: frames 1 to N.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

impl Window {
    /// Every frame (neither option given).
    pub fn is_all(&self) -> bool {
        self.frames.is_none() && self.count.is_none()
    }

    /// Whether frame `n` is read.
    pub fn contains(&self, n: u64) -> bool {
        self.count.is_none_or(|c| n <= c) && self.frames.as_ref().is_none_or(|f| f.contains(n))
    }

    /// The last frame read, when there is one: reading stops after it.
    pub fn last(&self) -> Option<u64> {
        earliest(self.frames.as_ref().and_then(FrameSelection::last), self.count)
    }

    /// `last`, or `other` if it comes first.
    pub fn last_or(&self, other: Option<u64>) -> Option<u64> {
        earliest(self.last(), other)
    }
}

/// The earlier of two optional last frames (`None`: no limit).
fn earliest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The list as `--frames` takes it, ranges merged: `1-10,15,20-`.
impl std::fmt::Display for FrameSelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, &(a, b)) in self.ranges.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            match b {
                u64::MAX => write!(f, "{sep}{a}-")?,
                b if b == a => write!(f, "{sep}{a}")?,
                b => write!(f, "{sep}{a}-{b}")?,
            }
        }
        Ok(())
    }
}

impl serde::Serialize for FrameSelection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Window {
    /// One line for the text reports, when the window is not every frame.
    pub fn describe(&self) -> Option<String> {
        let what = match (&self.frames, self.count) {
            (None, None) => return None,
            (Some(f), None) => format!("--frames {f}"),
            (None, Some(c)) => format!("-c {c}"),
            (Some(f), Some(c)) => format!("--frames {f} and -c {c}"),
        };
        Some(format!(
            "read only the frames of {what}: a connection cut by them is judged as one a \
             capture cut short"
        ))
    }
}

fn parse_item(item: &str, all: &str) -> Result<(u64, u64), String> {
    let bad = || format!("'{item}' in '{all}' is not a frame or range like 7, 10-20 or 20-");
    let num = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
    let (a, b) = match item.split_once('-') {
        Some((a, "")) => (num(a)?, u64::MAX),
        Some((a, b)) => (num(a)?, num(b)?),
        None if item.is_empty() => return Err(format!("an empty item in the frame list '{all}'")),
        None => {
            let n = num(item)?;
            (n, n)
        }
    };
    if a == 0 {
        return Err(format!("'{item}': frames are numbered from 1, as in Wireshark"));
    }
    if a > b {
        return Err(format!("'{item}' is an empty range: frame {a} comes after frame {b}"));
    }
    Ok((a, b))
}

/// `-t`: how the time column of `dissect` is written, with tshark's letters. Absolute times
/// are UTC (tshark's `-t u` / `-t ud`; a capture's reader is rarely in its time zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TimeFormat {
    /// Seconds since the first frame (the default)
    #[default]
    R,
    /// Time of day, UTC: 13:45:07.123456789
    #[value(alias = "u")]
    A,
    /// Date and time, UTC: 2026-12-01 13:45:07.123456789
    #[value(alias = "ud")]
    Ad,
    /// Seconds since the Unix epoch: 1764596707.123456789
    E,
    /// Seconds since the previous frame in the capture
    D,
}

/// The clock of the time column: the first frame's time, the previous shown frame's.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    first: Option<u64>,
    /// The frame read last, and the one before it (`-t d`, as tshark: the previous frame
    /// captured, shown or not).
    last: Option<u64>,
    prev: Option<u64>,
}

impl Clock {
    /// Notes a frame read (the first one read sets the origin of `-t r`).
    pub fn read(&mut self, ts_ns: u64) {
        self.first.get_or_insert(ts_ns);
        self.prev = self.last.replace(ts_ns);
    }

    /// Appends the time column of the frame read last.
    pub fn write(&mut self, fmt: TimeFormat, ts_ns: u64, out: &mut String) {
        use std::fmt::Write as _;
        let secs = |ns: u64| (ns / 1_000_000_000, ns % 1_000_000_000);
        let (s, ns) = match fmt {
            TimeFormat::R => secs(ts_ns.saturating_sub(self.first.unwrap_or(ts_ns))),
            TimeFormat::D => secs(ts_ns.saturating_sub(self.prev.unwrap_or(ts_ns))),
            _ => secs(ts_ns),
        };
        let _ = match fmt {
            TimeFormat::R | TimeFormat::D => write!(out, "{s:>4}.{:06}", ns / 1000),
            TimeFormat::E => write!(out, "{s}.{ns:09}"),
            TimeFormat::A => {
                let t = s % 86_400;
                write!(out, "{:02}:{:02}:{:02}.{ns:09}", t / 3600, t / 60 % 60, t % 60)
            }
            TimeFormat::Ad => {
                let (y, m, d) = civil_from_days(s / 86_400);
                let t = s % 86_400;
                write!(
                    out,
                    "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{ns:09}",
                    t / 3600,
                    t / 60 % 60,
                    t % 60
                )
            }
        };
    }
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days >= 0).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// `-x`: the frame's bytes as tshark prints them, 16 a line: a 4-digit hex offset, two
/// spaces, the bytes in hex, three spaces, the bytes as ASCII ('.' for what is not
/// printable); then an empty line.
pub fn hex_dump(data: &[u8], out: &mut String) {
    use std::fmt::Write as _;
    for (i, chunk) in data.chunks(16).enumerate() {
        let _ = write!(out, "{:04x}  ", i * 16);
        let start = out.len();
        for (j, b) in chunk.iter().enumerate() {
            let _ = write!(out, "{}{b:02x}", if j == 0 { "" } else { " " });
        }
        let width = out.len() - start;
        out.extend(std::iter::repeat_n(' ', 47 - width + 3));
        out.extend(chunk.iter().map(|&b| if (0x20..0x7f).contains(&b) { b as char } else { '.' }));
        out.push('\n');
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let ts = 1_764_596_707_123_456_789; // 2025-12-01 13:45:07.123456789 UTC
        let mut c = Clock::default();
        c.read(ts - 2_000_000_000);
        c.read(ts);
        let mut out = |fmt, ts| {
            let mut s = String::new();
            c.write(fmt, ts, &mut s);
            s
        };
        assert_eq!(out(TimeFormat::R, ts), "   2.000000");
        assert_eq!(out(TimeFormat::E, ts), "1764596707.123456789");
        assert_eq!(out(TimeFormat::A, ts), "13:45:07.123456789");
        assert_eq!(out(TimeFormat::Ad, ts), "2025-12-01 13:45:07.123456789");
        assert_eq!(out(TimeFormat::D, ts), "   2.000000");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn hex() {
        let mut s = String::new();
        hex_dump(b"0123456789abcdef\x00\x7fZ", &mut s);
        assert_eq!(
            s,
            "0000  30 31 32 33 34 35 36 37 38 39 61 62 63 64 65 66   0123456789abcdef\n\
             0010  00 7f 5a                                          ..Z\n\n"
        );
    }

    #[test]
    fn lists_and_ranges() {
        let s = FrameSelection::parse("20-,1-10,15").unwrap();
        let want: Vec<u64> = (1..=10).chain([15]).chain(20..=25).collect();
        let got: Vec<u64> = (1..=25).filter(|&n| s.contains(n)).collect();
        assert_eq!(got, want);
        assert_eq!(s.last(), None);
        let s = FrameSelection::parse("3,5, 7-9").unwrap();
        assert_eq!(s.last(), Some(9));
        assert!(!s.contains(4) && s.contains(5) && !s.contains(10));
        // Overlaps merge.
        assert_eq!(FrameSelection::parse("1-5,3-8,9").unwrap().ranges, vec![(1, 9)]);
    }

    #[test]
    fn refused() {
        for bad in ["", " ", "0", "5-3", "1,,2", "a", "1-b", "-5", "3,"] {
            assert!(FrameSelection::parse(bad).is_err(), "{bad:?} accepted");
        }
        let many = vec!["1"; MAX_RANGES + 1].join(",");
        assert!(FrameSelection::parse(&many).is_err());
    }

    #[test]
    fn ports() {
        assert_eq!(config_for_ports(&[]), Config::default());
        let c = config_for_ports(&[4792, 4791]);
        assert!(c.is_rocev2_port(4791) && c.is_rocev2_port(4792) && !c.is_rocev2_port(4793));
        let c = config_for_ports(&[4792]);
        assert!(!c.is_rocev2_port(4791));
        assert!(check_ports(&[1, 2, 3, 4]).is_ok());
        assert!(check_ports(&[1, 2, 3, 4, 5]).is_err());
    }
}
