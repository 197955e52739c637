//! The text a pcapng file carries about itself (section and interface options, packet
//! comments), for the report. Bounded: so many sections, interfaces and comments, each
//! value cut to a length; the rest counted.

use std::io::Read;
use std::path::Path;

use super::blocks::{self, Kind, Records};

const SECTIONS_MAX: usize = 64;
const INTERFACES_MAX: usize = 256;
const COMMENTS_MAX: usize = 100;
const VALUE_MAX: usize = 1024;

/// Section options, interface options and packet comments, as (name, text).
#[derive(Debug, Default, Clone)]
pub struct Meta {
    pub sections: Vec<Vec<(String, String)>>,
    /// (section, options) per interface.
    pub interfaces: Vec<(usize, Vec<(String, String)>)>,
    pub comments: Vec<(u64, String)>,
    pub comments_not_listed: u64,
}

impl Meta {
    pub fn is_empty(&self) -> bool {
        self.sections.iter().all(Vec::is_empty)
            && self.interfaces.iter().all(|(_, o)| o.is_empty())
            && self.comments.is_empty()
    }
}

fn text(v: &[u8]) -> String {
    let s = String::from_utf8_lossy(v);
    let s = s.trim_end_matches('\0');
    match s.char_indices().nth(VALUE_MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn section_option(code: u16) -> Option<&'static str> {
    Some(match code {
        1 => "comment",
        2 => "hardware",
        3 => "os",
        4 => "application",
        _ => return None,
    })
}

fn interface_option(code: u16) -> Option<&'static str> {
    Some(match code {
        1 => "comment",
        2 => "name",
        3 => "description",
        12 => "os",
        15 => "hardware",
        _ => return None,
    })
}

/// The metadata of a pcapng stream; empty for pcap. Reading stops quietly at damage (the
/// report's own pass reports it).
pub fn read(r: impl Read) -> Meta {
    let mut m = Meta::default();
    let Ok(mut recs) = Records::new(r) else { return m };
    if recs.kind != Kind::PcapNg {
        return m;
    }
    let mut frame = 0u64;
    while let Ok(Some(rec)) = recs.next_record() {
        let (ty, b, big) = (rec.ty, rec.bytes, rec.big);
        if blocks::is_packet(ty) {
            frame += 1;
        }
        let Some(at) = blocks::options_at(ty, b, big) else {
            if ty == blocks::SHB && m.sections.len() < SECTIONS_MAX {
                m.sections.push(Vec::new());
            }
            continue;
        };
        let opts = blocks::options(b.get(..b.len() - 4).unwrap_or_default(), at, big);
        match ty {
            blocks::SHB if m.sections.len() < SECTIONS_MAX => m.sections.push(
                opts.iter()
                    .filter_map(|(c, v)| Some((section_option(*c)?.to_string(), text(v))))
                    .collect(),
            ),
            blocks::IDB if m.interfaces.len() < INTERFACES_MAX => {
                let section = m.sections.len().saturating_sub(1);
                m.interfaces.push((
                    section,
                    opts.iter()
                        .filter_map(|(c, v)| Some((interface_option(*c)?.to_string(), text(v))))
                        .collect(),
                ));
            }
            blocks::EPB | blocks::PB => {
                for (c, v) in &opts {
                    if *c != 1 {
                        continue;
                    }
                    if m.comments.len() < COMMENTS_MAX {
                        m.comments.push((frame, text(v)));
                    } else {
                        m.comments_not_listed += 1;
                    }
                }
            }
            _ => {}
        }
    }
    m
}

/// [`read`] of a file (gzip undone).
pub fn read_file(path: &Path) -> Meta {
    match super::open(path) {
        Ok(r) => read(r),
        Err(_) => Meta::default(),
    }
}
