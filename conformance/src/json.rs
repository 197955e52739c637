//! The value formats of the JSON contract (docs/json.md), shared by every command so that one
//! thing is written one way everywhere.
//!
//! Why strings for some numbers: JSON numbers are doubles in most readers (jq 1.6,
//! JavaScript, many Python tools after arithmetic), exact only up to 2^53. A CA GUID, a
//! RETH virtual address, an atomic operand, a service ID or a MAD transaction ID is a 64-bit
//! identifier that often exceeds it (jq 1.6 turns GUID 630762345963643622 into
//! 630762345963643600), so those are written as `"0x…"` strings of lower-case hex with all
//! 16 digits (as tshark shows a GUID): every reader keeps them exactly, every engineer reads
//! them as IDs, and they sort as strings in numeric order.
//! Timestamps in nanoseconds since the epoch (about 1.8e18) exceed 2^53 too; they are
//! written as tshark writes `frame.time_epoch`: decimal seconds with nine digits of fraction,
//! as a string (`"1767225600.000083000"`). Every other number (QPNs, PSNs, lengths, counts,
//! durations) stays a JSON number.

use serde::Serializer;

use crate::psn::Psn;

/// The `schema` of a frame object (`dissect --format json` elements and `jsonl` lines).
pub const SCHEMA_FRAME: &str = "roce-inspect/frame/v1";
/// The `schema` of the `stats --format json` document.
pub const SCHEMA_STATS: &str = "roce-inspect/stats/v1";
/// The `schema` of the `check --format json` document.
pub const SCHEMA_CHECK: &str = "roce-inspect/check/v1";
/// The `schema` of the `rules --format json` document (the rule catalog).
pub const SCHEMA_RULES: &str = "roce-inspect/rules/v1";
/// The `schema` of an expect file (`check --write-expect`; optional when reading).
pub const SCHEMA_EXPECT: &str = "roce-inspect/expect/v1";

/// Appends `"0x…"` (with the quotes, 16 hex digits) for a 64-bit identifier.
///
/// Built on the stack and appended at once: a push per digit checks the vector's capacity
/// 19 times.
pub fn write_hex64(out: &mut Vec<u8>, v: u64) {
    let mut text = *b"\"0x0000000000000000\"";
    for (i, d) in text.iter_mut().skip(3).take(16).enumerate() {
        let n = ((v >> (4 * (15 - i))) & 0xf) as u8;
        *d = if n < 10 { b'0' + n } else { b'a' + n - 10 };
    }
    out.extend_from_slice(&text);
}

/// Appends `"SECONDS.NANOSECONDS"` (with the quotes) for a timestamp in ns since the epoch.
pub fn write_ts(out: &mut Vec<u8>, ns: u64) {
    let mut buf = itoa::Buffer::new();
    out.push(b'"');
    out.extend_from_slice(buf.format(ns / 1_000_000_000).as_bytes());
    out.push(b'.');
    let frac = ns % 1_000_000_000;
    let s = buf.format(frac);
    out.extend(std::iter::repeat_n(b'0', 9 - s.len()));
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// [`write_hex64`] as a string, for serde and text.
pub fn hex64_string(v: u64) -> String {
    format!("0x{v:016x}")
}

/// [`write_ts`] as a string, for serde and text.
pub fn ts_string(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// `#[serde(serialize_with = "roce_conformance::internal::json::hex64")]`.
pub fn hex64<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&hex64_string(*v))
}

/// `#[serde(serialize_with = "roce_conformance::internal::json::ts")]`.
pub fn ts<S: Serializer>(ns: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&ts_string(*ns))
}

/// A PSN as the number its BTH field holds (24 bits):
/// `#[serde(serialize_with = "roce_conformance::internal::json::psn")]`.
pub fn psn<S: Serializer>(p: &Psn, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u32(p.value())
}

/// [`psn`] or `null`, as an `Option<u32>` serializes.
pub fn psn_or_null<S: Serializer>(p: &Option<Psn>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_some(&p.value()),
        None => s.serialize_none(),
    }
}

/// A frame number where 0 means "none" (frames are numbered from 1): `null` for 0.
pub fn frame_or_null<S: Serializer>(frame: &u64, s: S) -> Result<S::Ok, S::Error> {
    match *frame {
        0 => s.serialize_none(),
        f => s.serialize_u64(f),
    }
}

/// A text where empty means "none": `null` for "".
pub fn text_or_null<S: Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
    match text {
        "" => s.serialize_none(),
        t => s.serialize_str(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lower_case_sixteen_digits_and_agrees_with_format() {
        for v in [0, 1, 0xf, 0x10, 0x08c0_eb03_00da_e2e6, u64::MAX, 1 << 53, (1 << 53) + 1] {
            let mut out = Vec::new();
            write_hex64(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), format!("\"{}\"", hex64_string(v)));
            assert_eq!(u64::from_str_radix(&hex64_string(v)[2..], 16).unwrap(), v);
        }
        assert_eq!(hex64_string(0), "0x0000000000000000");
        assert_eq!(hex64_string(630762345963643622), "0x08c0eb0300dae2e6");
        assert!(hex64_string(0xff) < hex64_string(0x100));
    }

    #[test]
    fn timestamps_keep_every_nanosecond() {
        for (ns, text) in [
            (0, "0.000000000"),
            (1, "0.000000001"),
            (1_767_225_600_000_083_000, "1767225600.000083000"),
            (u64::MAX, "18446744073.709551615"),
            (999_999_999, "0.999999999"),
        ] {
            let mut out = Vec::new();
            write_ts(&mut out, ns);
            assert_eq!(String::from_utf8(out).unwrap(), format!("\"{text}\""));
            assert_eq!(ts_string(ns), text);
        }
    }
}
