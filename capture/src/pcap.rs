//! Classic pcap: a 24-byte file header, then 16-byte record headers each followed by its data.
//!
//! pcap-file's `PcapHeader` reads the file header (magic, byte order, resolution) and its
//! `PcapParser::next_raw_packet` splits records; lengths are checked here because pcap-file's
//! checked path (`next_packet`) rejects valid files whose original length exceeds the snap
//! length (every capture taken with `-s`) and does not say where a file is damaged.
//!
//! A record longer than the file header's snap length is read in full, with one warning for
//! the capture: writers get the snap length wrong (a header patched or written before the
//! limit was known) and Wireshark reads such records; libpcap too, up to its 256 KiB limit.
//! Only a length beyond `MAX_RECORD_LEN` (that same limit) is damage.
//!
//! pcap has no markers to resynchronise on, so the first damaged record ends iteration.

use pcap_file::pcap::{PcapHeader, PcapParser};
use pcap_file::{Endianness, PcapError, TsResolution as PfResolution};

use crate::capture::{Damage, Interface, Rec, TsConv, TsResolution};
use crate::error::{ErrorKind, MAX_RECORD_LEN};
use crate::link::LinkType;
use crate::source::Source;

/// Size of the pcap file header.
pub(crate) const FILE_HEADER_LEN: usize = 24;
/// Size of a pcap record header.
const RECORD_HEADER_LEN: usize = 16;

/// State for reading pcap records.
pub(crate) struct PcapReader {
    parser: PcapParser,
    big_endian: bool,
    /// 1000 for microsecond files, 1 for nanosecond files.
    frac_to_ns: u64,
    snaplen: u32,
    /// Captured lengths above this get the one snap-length warning: the snap length, then
    /// `u32::MAX` once warned (or when the header sets no limit).
    report_caplen_above: u32,
    link_type: LinkType,
}

impl PcapReader {
    /// Reads the file header; `src` holds at least `FILE_HEADER_LEN` bytes (checked by the
    /// caller) and is left positioned at the first record.
    pub(crate) fn open(src: &mut Source) -> Result<(PcapReader, Interface), ErrorKind> {
        let header_bytes = src.avail().get(..FILE_HEADER_LEN).unwrap_or_default();
        let (parser, header) = match PcapParser::new(header_bytes) {
            Ok((_, parser)) => {
                let header: PcapHeader = parser.header();
                (parser, header)
            }
            Err(_) => {
                let available = src.avail().len() as u64;
                return Err(ErrorKind::TruncatedFileHeader {
                    needed: FILE_HEADER_LEN as u64,
                    available,
                });
            }
        };
        src.advance(FILE_HEADER_LEN);
        let nano = header.ts_resolution == PfResolution::NanoSecond;
        // The upper 16 bits of the link-type field carry FCS flags (pcap spec, LinkType).
        let link_type = LinkType::from_code(u32::from(header.datalink) & 0xFFFF);
        let resolution = if nano { TsResolution::NANO } else { TsResolution::MICRO };
        let reader = PcapReader {
            parser,
            big_endian: header.endianness == Endianness::Big,
            frac_to_ns: if nano { 1 } else { 1000 },
            snaplen: header.snaplen,
            report_caplen_above: if header.snaplen == 0 { u32::MAX } else { header.snaplen },
            link_type,
        };
        let interface = Interface {
            link_type,
            snaplen: header.snaplen,
            resolution,
            ts_offset_s: 0,
            section: 0,
            offset: 0,
            conv: TsConv::from_resolution(resolution, 0),
            report_caplen_above: reader.report_caplen_above,
            ts_reported: false,
        };
        Ok((reader, interface))
    }

    /// Whether the file header is big-endian.
    pub(crate) fn big_endian(&self) -> bool {
        self.big_endian
    }

    /// The next record, `Ok(None)` at a clean end of file.
    #[inline]
    pub(crate) fn next(&mut self, src: &mut Source) -> Result<Option<Rec>, Box<Damage>> {
        loop {
            let offset = src.offset();
            let parsed = match self.parser.next_raw_packet(src.avail()) {
                Ok((_, raw)) => Ok((raw.ts_sec, raw.ts_frac, raw.incl_len, raw.orig_len)),
                Err(e) => Err(e),
            };
            match parsed {
                Ok((ts_sec, ts_frac, caplen, len)) => {
                    check_caplen(caplen, offset)?;
                    if caplen > self.report_caplen_above {
                        return Err(self.snaplen_exceeded(caplen, offset));
                    }
                    let ts_ns =
                        u64::from(ts_sec) * 1_000_000_000 + u64::from(ts_frac) * self.frac_to_ns;
                    let at = src.advance(RECORD_HEADER_LEN + caplen as usize);
                    return Ok(Some(Rec {
                        offset,
                        data_at: at + RECORD_HEADER_LEN,
                        caplen,
                        len,
                        ts_ns,
                        interface: 0,
                        link_type: self.link_type,
                    }));
                }
                Err(PcapError::IncompleteBuffer) => {
                    if !self.fill(src, offset)? {
                        return Ok(None);
                    }
                }
                // next_raw_packet reports nothing else; treat anything new as a cut record.
                Err(_) => {
                    let available = src.avail().len() as u64;
                    return Err(Damage::fatal(
                        ErrorKind::TruncatedRecordHeader { available },
                        offset,
                    ));
                }
            }
        }
    }

    /// The one warning of the capture about a record longer than the snap length; the record
    /// is left in the window, so the next call reads it.
    #[cold]
    fn snaplen_exceeded(&mut self, caplen: u32, offset: u64) -> Box<Damage> {
        self.report_caplen_above = u32::MAX;
        let snaplen = self.snaplen;
        Damage::warning(
            ErrorKind::RecordExceedsSnapLen { caplen, snaplen, interface: None },
            offset,
        )
    }

    /// Reads more input for a record that is not complete in the window; `false` at a clean
    /// end of file.
    #[cold]
    fn fill(&self, src: &mut Source, offset: u64) -> Result<bool, Box<Damage>> {
        let have = src.ensure(RECORD_HEADER_LEN).map_err(|e| Damage::io(e, src, offset))?;
        if have == 0 {
            return Ok(false);
        }
        let Some(header) = src.avail().first_chunk::<RECORD_HEADER_LEN>() else {
            let available = have as u64;
            return Err(Damage::fatal(ErrorKind::TruncatedRecordHeader { available }, offset));
        };
        let caplen_bytes = [header[8], header[9], header[10], header[11]];
        let caplen = if self.big_endian {
            u32::from_be_bytes(caplen_bytes)
        } else {
            u32::from_le_bytes(caplen_bytes)
        };
        check_caplen(caplen, offset)?;
        let need = RECORD_HEADER_LEN + caplen as usize;
        let have = src.ensure(need).map_err(|e| Damage::io(e, src, offset))?;
        if have < need {
            let available = (have - RECORD_HEADER_LEN) as u64;
            return Err(Damage::fatal(ErrorKind::RecordPastEnd { caplen, available }, offset));
        }
        Ok(true)
    }
}

/// Refuses a length beyond `MAX_RECORD_LEN` before anything is read for it: the length is all
/// there is to find the next record, and a corrupt one must not make the window grow.
#[inline]
fn check_caplen(caplen: u32, offset: u64) -> Result<(), Box<Damage>> {
    if caplen > MAX_RECORD_LEN {
        return Err(Damage::fatal(ErrorKind::RecordTooLong { caplen }, offset));
    }
    Ok(())
}
