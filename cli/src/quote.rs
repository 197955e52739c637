//! Text read from a file and echoed in a message (an expect file's rule name, schema, CNP
//! pacing): quoted so that it cannot act on the terminal or flood it.

/// Characters of a quoted string shown; the rest is cut (and its length said).
pub const QUOTE_MAX_CHARS: usize = 80;

/// `s` between single quotes, with control and other unprintable characters escaped as
/// Rust writes them (`\u{1b}`, `\n`, `\u{202e}`: no escape sequence reaches the terminal),
/// and `'`, `"`, `\` escaped; past [`QUOTE_MAX_CHARS`] characters cut with an ellipsis and the
/// full length in bytes, e.g. `'AAAA…' (100000 bytes)`.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(QUOTE_MAX_CHARS * 2) + 2);
    out.push('\'');
    let mut chars = s.chars();
    out.extend(chars.by_ref().take(QUOTE_MAX_CHARS).flat_map(char::escape_debug));
    if chars.next().is_some() {
        out.push_str(&format!("…' ({} bytes)", s.len()));
    } else {
        out.push('\'');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_cuts() {
        assert_eq!(quoted("REQ-PSN"), "'REQ-PSN'");
        assert_eq!(quoted("a\u{1b}[31mb\n"), "'a\\u{1b}[31mb\\n'");
        assert_eq!(quoted("\u{202e}x'"), "'\\u{202e}x\\''");
        let long = "A".repeat(100_000);
        let q = quoted(&long);
        assert_eq!(q, format!("'{}…' (100000 bytes)", "A".repeat(80)));
        assert_eq!(quoted(&"é".repeat(80)), format!("'{}'", "é".repeat(80)));
    }
}
