//! `-i IFACE`: frames from a network interface, through libpcap (feature `live`).
//!
//! Why a pcap stream: the capture thread writes what libpcap hands it as a pcap file
//! (nanosecond timestamps, the interface's link type) into a pipe, and the command reads
//! that pipe with the same reader as any capture file. So an interface gets exactly the
//! frame numbering, link-type handling, damage checks and live output of `tcpdump -w - |
//! roce-inspect check -`, without a second frame loop to keep in step.
//!
//! Why libpcap (the `pcap` crate) and not a raw socket: it is what tcpdump and tshark
//! capture with, so BPF capture filters (`-f`), promiscuous mode, kernel drop counts and
//! every link type behave as users know them, and no `unsafe` is needed here.
//!
//! The capture ends on `-a duration:SECS`, `-a packets:N`, SIGINT or SIGTERM (Ctrl-C), or an
//! error from libpcap; then the pipe is closed, the command sees the end of its input and
//! prints its report as for a file. libpcap's counts (packets received, dropped by the
//! kernel or the interface) are printed on stderr, as tshark does: a capture that dropped
//! frames makes PSN gaps that are not the network's.

use std::io::{PipeWriter, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use roce_capture::Capture;

use crate::input::InputError;

/// How to capture: `-i`, `-f`, `-a`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveOptions {
    /// The interface's name (`-i`).
    pub interface: String,
    /// A BPF capture filter in libpcap's syntax (`-f`, as tcpdump's expression).
    pub capture_filter: Option<String>,
    /// Stop after this long (`-a duration:SECS`).
    pub duration: Option<Duration>,
    /// Stop after this many packets (`-a packets:N`).
    pub packets: Option<u64>,
}

/// Bytes kept of each packet: RoCE headers plus a full 4 KiB-MTU payload and its ICRC (the
/// ICRC is checked only on whole frames), as tcpdump's default.
const SNAPLEN: i32 = 262_144;

/// libpcap's buffer timeout: the longest a packet waits in the kernel's ring before it is
/// handed over (TPACKET_V3 blocks on Linux), so the latency of live output.
const BUFFER_TIMEOUT_MS: i32 = 20;

/// The kernel ring, as dumpcap's default is 2 MiB: big enough for a burst of a 100 Gb/s link
/// for about 5 ms. (libpcap's immediate mode was tried and dropped: on Linux it switches to
/// TPACKET_V2, whose fixed snaplen-sized slots held only 7 frames of 256 KiB in the default
/// buffer, and a 39-frame burst from tcpreplay lost frames.)
const RING_BYTES: i32 = 64 << 20;

/// How long the capture thread sleeps when libpcap has nothing: it reads non-blocking, so
/// that Ctrl-C and `-a duration` are seen within this (a blocking read may never return on
/// an idle link).
const IDLE: Duration = Duration::from_millis(2);

/// One `-a` condition, as tshark spells them: `duration:SECS` (decimals allowed) or
/// `packets:N`.
pub fn parse_autostop(s: &str) -> Result<Autostop, String> {
    let (what, value) =
        s.split_once(':').ok_or_else(|| format!("'{s}': expected duration:SECS or packets:N"))?;
    match what {
        "duration" => value
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0 && *v <= 1e9)
            .map(|v| Autostop::Duration(Duration::from_secs_f64(v)))
            .ok_or_else(|| format!("duration:{value}: expected seconds > 0, e.g. duration:10")),
        "packets" => value
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .map(Autostop::Packets)
            .ok_or_else(|| format!("packets:{value}: expected a count > 0")),
        _ => Err(format!("'{what}': the conditions are duration:SECS and packets:N")),
    }
}

/// A parsed `-a` condition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Autostop {
    Duration(Duration),
    Packets(u64),
}

/// Opens the interface and starts capturing on a thread of its own; returns the reader of
/// its pcap stream. Errors (no such interface, no permission, a capture filter libpcap
/// rejects) name the interface and come before any frame.
pub fn start(o: &LiveOptions) -> Result<Capture, InputError> {
    let (name, reader) = stream(o)?;
    Capture::from_reader(&name, reader).map_err(|e| InputError(e.to_string()))
}

/// [`start`] up to the pcap stream: its name (`interface NAME`) and its reader, for
/// [`start`] and a tapped reader ([`crate::input::Input::open_tapped`]).
pub fn stream(o: &LiveOptions) -> Result<(String, std::io::PipeReader), InputError> {
    let name = o.interface.as_str();
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        InputError(format!("interface {name}: {what}: {e}"))
    };
    let (cap, nano) = open(name).map_err(|e| fail("cannot capture", &e))?;
    let mut cap = cap;
    if let Some(f) = &o.capture_filter {
        cap.filter(f, true).map_err(|e| fail(&format!("capture filter '{f}'"), &e))?;
    }
    let stop = crate::stop::on_signal().map_err(|e| fail("cannot handle SIGINT", &e))?;
    let link_type = u32::try_from(cap.get_datalink().0).unwrap_or(0);
    let (reader, mut writer) = std::io::pipe().map_err(|e| fail("cannot make a pipe", &e))?;
    writer.write_all(&file_header(link_type, nano)).map_err(|e| fail("pipe", &e))?;
    let pump = Pump { cap, writer, opts: o.clone(), stop };
    std::thread::Builder::new()
        .name("capture".into())
        .spawn(move || pump.run())
        .map_err(|e| fail("cannot start the capture thread", &e))?;
    crate::output::note(format!("Capturing on '{name}'"));
    Ok((format!("interface {name}"), reader))
}

/// The activated capture, and whether its timestamps are in nanoseconds (libpcap may
/// refuse nanosecond precision on some platforms; then microseconds).
fn open(name: &str) -> Result<(pcap::Capture<pcap::Active>, bool), pcap::Error> {
    let setup = |nano: bool| {
        let c = pcap::Capture::from_device(name)?
            .promisc(true)
            .snaplen(SNAPLEN)
            .buffer_size(RING_BYTES)
            .timeout(BUFFER_TIMEOUT_MS);
        let c = if nano { c.precision(pcap::Precision::Nano) } else { c };
        c.open()?.setnonblock()
    };
    match setup(true) {
        Ok(c) => Ok((c, true)),
        Err(pcap::Error::PcapError(_)) => setup(false).map(|c| (c, false)),
        Err(e) => Err(e),
    }
}

/// A pcap file header (little-endian, version 2.4) for `link_type`.
fn file_header(link_type: u32, nano: bool) -> [u8; 24] {
    let mut h = [0u8; 24];
    let magic: u32 = if nano { 0xA1B2_3C4D } else { 0xA1B2_C3D4 };
    h[0..4].copy_from_slice(&magic.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    h[16..20].copy_from_slice(&(SNAPLEN as u32).to_le_bytes());
    h[20..24].copy_from_slice(&link_type.to_le_bytes());
    h
}

/// The capture thread: libpcap's packets into the pipe until a stop condition.
struct Pump {
    cap: pcap::Capture<pcap::Active>,
    writer: PipeWriter,
    opts: LiveOptions,
    stop: Arc<AtomicBool>,
}

/// Why the capture thread stopped.
enum End {
    Stopped,
    /// The command stopped reading (it had what it needed, e.g. `-c N`).
    ReaderGone,
    Failed(pcap::Error),
}

impl Pump {
    fn run(mut self) {
        let started = Instant::now();
        let mut packets = 0u64;
        let mut record = Vec::with_capacity(16 + SNAPLEN as usize);
        let end = loop {
            if crate::stop::requested(&self.stop)
                || self.opts.duration.is_some_and(|d| started.elapsed() >= d)
                || self.opts.packets.is_some_and(|n| packets >= n)
            {
                break End::Stopped;
            }
            match self.cap.next_packet() {
                Ok(p) => {
                    packets += 1;
                    record.clear();
                    let h = p.header;
                    // Seconds and the sub-second part (ns or µs, as the header's magic says).
                    let secs = u32::try_from(h.ts.tv_sec).unwrap_or(0);
                    let frac = u32::try_from(h.ts.tv_usec).unwrap_or(0);
                    for v in [secs, frac, h.caplen, h.len] {
                        record.extend_from_slice(&v.to_le_bytes());
                    }
                    record.extend_from_slice(p.data);
                    // One write per packet: the reader sees each frame as it arrives.
                    if self.writer.write_all(&record).is_err() {
                        break End::ReaderGone;
                    }
                }
                Err(pcap::Error::TimeoutExpired) => std::thread::sleep(IDLE),
                Err(e) => break End::Failed(e),
            }
        };
        // Said before the pipe closes: the command's report follows, and the process may
        // end as soon as it is written.
        let stats = self.cap.stats().ok();
        let name = &self.opts.interface;
        if let End::Failed(e) = &end {
            crate::output::warning(format!("interface {name}: capture ended: {e}"));
        }
        if !matches!(end, End::ReaderGone) {
            crate::output::note(format!("{packets} packets captured"));
        }
        if let Some(s) = stats.filter(|s| s.dropped > 0 || s.if_dropped > 0) {
            crate::output::warning(format!(
                "interface {name}: {} packets dropped by the kernel, {} by the interface \
                 (libpcap): their PSNs show as gaps that are not the network's",
                s.dropped, s.if_dropped
            ));
        }
        drop(self.writer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autostop_conditions() {
        assert_eq!(parse_autostop("packets:39"), Ok(Autostop::Packets(39)));
        assert_eq!(
            parse_autostop("duration:1.5"),
            Ok(Autostop::Duration(Duration::from_millis(1500)))
        );
        for bad in ["packets:0", "duration:-1", "duration:nan", "files:3", "packets", ""] {
            assert!(parse_autostop(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn header_is_a_pcap_the_reader_accepts() {
        let cap = Capture::from_reader("x", std::io::Cursor::new(file_header(1, true).to_vec()));
        let mut cap = cap.unwrap();
        assert!(cap.next_frame().is_none());
    }
}
