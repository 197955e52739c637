//! Classic pcap: a 24-byte file header, then 16-byte record headers each followed by its data.
//!
//! pcap-file's `PcapHeader` reads the file header (magic, byte order, resolution) and its
//! `PcapParser::next_raw_packet` splits records; lengths are checked here because pcap-file's
//! checked path (`next_packet`) rejects valid files whose original length exceeds the snap
//! length (every capture taken with `-s`) and does not say where a file is damaged.
//!
//! pcap has no markers to resynchronise on, so the first damaged record ends iteration.

use pcap_file::pcap::{PcapHeader, PcapParser};
use pcap_file::{Endianness, PcapError, TsResolution as PfResolution};

use super::error::{ErrorKind, MAX_RECORD_LEN};
use super::source::Source;
use super::{Damage, Interface, LinkType, Rec, TsConv, TsResolution};

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
            link_type,
        };
        let interface = Interface {
            link_type,
            snaplen: header.snaplen,
            resolution,
            ts_offset_s: 0,
            section: 0,
            conv: TsConv::from_resolution(resolution, 0),
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
                    self.check_caplen(caplen, offset)?;
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

    /// Refuses lengths beyond the snap length (0 means "no limit" to some writers) or the
    /// global limit, before anything is read for them.
    #[inline]
    fn check_caplen(&self, caplen: u32, offset: u64) -> Result<(), Box<Damage>> {
        if self.snaplen != 0 && caplen > self.snaplen {
            let snaplen = self.snaplen;
            return Err(Damage::fatal(ErrorKind::RecordExceedsSnapLen { caplen, snaplen }, offset));
        }
        if caplen > MAX_RECORD_LEN {
            return Err(Damage::fatal(ErrorKind::RecordTooLong { caplen }, offset));
        }
        Ok(())
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
        self.check_caplen(caplen, offset)?;
        let need = RECORD_HEADER_LEN + caplen as usize;
        let have = src.ensure(need).map_err(|e| Damage::io(e, src, offset))?;
        if have < need {
            let available = (have - RECORD_HEADER_LEN) as u64;
            return Err(Damage::fatal(ErrorKind::RecordPastEnd { caplen, available }, offset));
        }
        Ok(true)
    }
}
