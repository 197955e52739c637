//! The fields a filter can name: the rows of the field catalog (`crate::FIELDS`,
//! analysis/src/fields.rs) that have a filter name, with their JSON path, kind and reader
//! ([`FIELDS`] here, `crate::FILTER_FIELDS`). Nothing else lists the fields: the parser looks names up here, the
//! evaluator reads values through the row, the "did you mean" list and docs/filter.md's
//! table (checked by a test) come from it.
//!
//! A row reads the `Decoded` frame straight from the parser's structs (no JSON is built):
//! `dissect -Y` evaluates it on every frame.

pub(crate) use crate::{
    FieldGet as Get, FieldKind as Kind, FieldValue as Value, FilterField as Field,
    FILTER_FIELDS as FIELDS,
};

/// The filter row ([`crate::FILTER_FIELDS`]) of `name`: its JSON path, or the path without
/// `roce.` (`bth.psn`, `icrc.status`). `dissect -T fields -e` looks its names up here too.
///
/// ```
/// use roce_analysis::filter::lookup;
///
/// assert_eq!(lookup("bth.psn").map(|f| f.name), Some("roce.bth.psn"));
/// assert!(lookup("bth.dest_qpn").is_none());
/// ```
pub fn lookup(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name || f.name.strip_prefix("roce.") == Some(name))
}

/// What to tell someone who typed `name`, which is no field: the nearest names (at most
/// three, `"did you mean bth.dest_qp?"`), or where the fields are listed (the filter's
/// errors and `dissect -e`'s).
pub fn hint(name: &str) -> String {
    let near = near(name);
    if near.is_empty() {
        "docs/filter.md lists the fields".to_string()
    } else {
        format!("did you mean {}?", near.join(", "))
    }
}

/// The names closest to a mistyped one (at most three): by edit distance, then names that
/// contain it or end like it.
pub(crate) fn near(name: &str) -> Vec<&'static str> {
    let mut scored: Vec<(usize, &'static str)> = FIELDS
        .iter()
        .map(|f| {
            let short = f.name.strip_prefix("roce.").unwrap_or(f.name);
            let d = distance(name, short).min(distance(name, f.name));
            let last = name.rsplit('.').next().unwrap_or(name);
            let d = if !last.is_empty() && short.rsplit('.').next() == Some(last) {
                d.min(1)
            } else {
                d
            };
            (d, short)
        })
        .filter(|&(d, _)| d <= 3.max(name.len() / 3))
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

/// Levenshtein distance (names are short: the quadratic table is a few hundred cells).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, &cb) in b.iter().enumerate() {
            let above = row.get(j + 1).copied().unwrap_or(usize::MAX);
            let left = row.get(j).copied().unwrap_or(usize::MAX);
            let sub = prev + usize::from(ca != cb);
            prev = above;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = sub.min(above.saturating_add(1)).min(left.saturating_add(1));
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_with_and_without_roce() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert!(FIELDS[..i].iter().all(|g| g.name != f.name), "{} twice", f.name);
            assert_eq!(lookup(f.name).map(|g| g.name), Some(f.name));
            if let Some(short) = f.name.strip_prefix("roce.") {
                assert_eq!(lookup(short).map(|g| g.name), Some(f.name));
            }
        }
        assert!(lookup("bth.dest_qpn").is_none());
    }

    /// docs/filter.md's field table names every row (and the rows' kinds are documented).
    #[test]
    fn docs_list_every_field() {
        let doc = include_str!("../../../docs/filter.md");
        for f in FIELDS {
            assert!(doc.contains(&format!("`{}`", f.name)), "docs/filter.md lacks {}", f.name);
        }
    }

    #[test]
    fn near_names_a_mistyped_field() {
        assert_eq!(near("bth.dest_q").first(), Some(&"bth.dest_qp"));
        assert!(near("bth.destqp").contains(&"bth.dest_qp"));
        assert!(near("psn").contains(&"bth.psn"));
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }
}
