//! `dissect -T fields -e FIELD ...`: one line per frame with the values of the fields named,
//! as tshark's `-T fields -e` prints them, for `cut`, `awk`, `sort | uniq -c` and
//! spreadsheets.
//!
//! The names are those of the display filter (roce_analysis::filter, docs/filter.md): the JSON
//! paths of docs/json.md, `roce.` optional (`bth.psn`, `ip.src`, `aeth.syndrome`). There is
//! no second list: a column reads its value through the field catalog's filter rows
//! (`roce_analysis::FILTER_FIELDS`). Values are written as the JSON writes them (numbers in
//! decimal, the fields of kind `Hex64` as `0x` and 16 hex digits, booleans `true`/`false`,
//! addresses as text); a field the frame does not have is empty; a field with several values
//! in one frame (`vlan.vid`, `problem`) joins them with the aggregator. `-E` takes tshark's `header=y|n`,
//! `separator=/t|/s|C`, `aggregator=/s|C` and `quote=d|s|n`. Over several captures read as
//! one, `source.file`, `source.tap`, `source.frame` and `source.copy_of` say where each frame
//! was read (the JSON's `source` member).

use std::fmt::Write as _;

use crate::input::Decoded;
use roce_analysis::filter::{hint, lookup};
use roce_analysis::{
    FieldGet as Get, FieldKind as Kind, FieldValue as Value, FilterField as Field, FrameSource,
    FILTER_FIELDS,
};

/// One `-e FIELD`.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    field: Of,
    /// The name as given (the header shows it).
    given: &'static str,
}

/// Where a column's value comes from.
#[derive(Clone, Copy, Debug)]
enum Of {
    /// A field of the decoded frame (the filter's table).
    Frame(&'static Field),
    /// Several captures read as one: where the frame was read (`source.file`, `source.tap`,
    /// `source.frame`, `source.copy_of`), empty for one capture. Not the filter's: the
    /// decoded frame does not know its file's name nor whether it is a copy.
    Source(SourceField),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SourceField {
    File,
    Tap,
    Frame,
    CopyOf,
}

/// The `source.*` fields, as the catalog names them (roce_analysis::FIELDS).
const SOURCE_FIELDS: [(&str, SourceField); 4] = [
    ("source.file", SourceField::File),
    ("source.tap", SourceField::Tap),
    ("source.frame", SourceField::Frame),
    ("source.copy_of", SourceField::CopyOf),
];

impl Column {
    /// Parses `-e NAME`: a field of the filter's table that holds a value (a header such as
    /// `aeth` holds members, not a value), or one of the `source.*` fields.
    pub fn parse(name: &str) -> Result<Column, String> {
        if let Some(&(given, which)) = SOURCE_FIELDS.iter().find(|(n, _)| *n == name) {
            return Ok(Column { field: Of::Source(which), given });
        }
        if name == "source" {
            return Err(format!(
                "'{name}' is a header, not a value: give one of its fields (source.file, \
                 source.tap, source.frame, source.copy_of)"
            ));
        }
        let Some(field) = lookup(name) else {
            return Err(format!("'{name}' is not a field: {}", hint(name)));
        };
        if field.kind == Kind::Object {
            let members: Vec<&str> = FILTER_FIELDS
                .iter()
                .filter(|f| f.name.strip_prefix(field.name).is_some_and(|r| r.starts_with('.')))
                .map(|f| f.name.strip_prefix("roce.").unwrap_or(f.name))
                .take(6)
                .collect();
            return Err(format!(
                "'{name}' is a header, not a value: give one of its fields ({})",
                members.join(", ")
            ));
        }
        let given = if field.name == name {
            field.name
        } else {
            field.name.strip_prefix("roce.").unwrap_or(field.name)
        };
        Ok(Column { field: Of::Frame(field), given })
    }
}

/// `-E` options, as tshark's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldOption {
    Header(bool),
    Separator(String),
    Aggregator(String),
    Quote(Option<char>),
}

impl FieldOption {
    /// Parses one `-E NAME=VALUE`.
    pub fn parse(s: &str) -> Result<FieldOption, String> {
        let Some((name, value)) = s.split_once('=') else {
            return Err(format!(
                "-E {s}: give NAME=VALUE (header=y, separator=/t, aggregator=, or quote=d)"
            ));
        };
        let text = |v: &str| match v {
            "/t" => Ok("\t".to_string()),
            "/s" => Ok(" ".to_string()),
            v if v.chars().count() == 1 => Ok(v.to_string()),
            v => Err(format!("-E {name}={v}: one character, /t (tab) or /s (space)")),
        };
        match name {
            "header" => match value {
                "y" => Ok(FieldOption::Header(true)),
                "n" => Ok(FieldOption::Header(false)),
                v => Err(format!("-E header={v}: y or n")),
            },
            "separator" => text(value).map(FieldOption::Separator),
            "aggregator" => text(value).map(FieldOption::Aggregator),
            "quote" => match value {
                "d" => Ok(FieldOption::Quote(Some('"'))),
                "s" => Ok(FieldOption::Quote(Some('\''))),
                "n" => Ok(FieldOption::Quote(None)),
                v => Err(format!("-E quote={v}: d (double), s (single) or n (none)")),
            },
            n => Err(format!("-E {n}: not an option here (header, separator, aggregator, quote)")),
        }
    }
}

/// The `-T fields` output: its columns and how lines are made.
#[derive(Clone, Debug)]
pub struct Fields {
    columns: Vec<Column>,
    header: bool,
    separator: String,
    aggregator: String,
    quote: Option<char>,
}

impl Fields {
    /// The columns of the `-e`s, in order, with the `-E` options (the last of each wins).
    pub fn new(columns: Vec<Column>, options: &[FieldOption]) -> Fields {
        let mut f = Fields {
            columns,
            header: false,
            separator: "\t".into(),
            aggregator: ",".into(),
            quote: None,
        };
        for o in options {
            match o {
                FieldOption::Header(h) => f.header = *h,
                FieldOption::Separator(s) => f.separator.clone_from(s),
                FieldOption::Aggregator(a) => f.aggregator.clone_from(a),
                FieldOption::Quote(q) => f.quote = *q,
            }
        }
        f
    }

    /// The header line (`-E header=y`), or nothing.
    pub fn header(&self, out: &mut String) {
        if !self.header {
            return;
        }
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.separator);
            }
            self.quoted(out, |o| o.push_str(c.given));
        }
        out.push('\n');
    }

    /// One frame's line; `source`: where it was read, when several captures are read as
    /// one (the `source.*` columns are empty without).
    pub fn line(&self, d: &Decoded<'_>, source: Option<FrameSource<'_>>, out: &mut String) {
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.separator);
            }
            match c.field {
                Of::Frame(field) => self.quoted(out, |o| self.values(field, d, o)),
                Of::Source(which) => self.quoted(out, |o| {
                    let Some(src) = source else { return };
                    let _ = match which {
                        SourceField::File => write!(o, "{}", src.file),
                        SourceField::Tap => write!(o, "{}", u64::from(d.frame.source) + 1),
                        SourceField::Frame => write!(o, "{}", d.frame.source_number),
                        SourceField::CopyOf => match src.copy_of {
                            Some(n) => write!(o, "{n}"),
                            None => Ok(()),
                        },
                    };
                }),
            }
        }
        out.push('\n');
    }

    fn quoted(&self, out: &mut String, body: impl FnOnce(&mut String)) {
        if let Some(q) = self.quote {
            out.push(q);
            body(out);
            out.push(q);
        } else {
            body(out);
        }
    }

    fn values(&self, field: &'static Field, d: &Decoded<'_>, out: &mut String) {
        let hex = field.kind == Kind::Hex64;
        match field.get {
            Get::One(get) => {
                if let Some(v) = get(d) {
                    write_value(out, v, hex);
                }
            }
            Get::Many(each) => {
                let mut n = 0;
                each(d, &mut |v| {
                    if n > 0 {
                        out.push_str(&self.aggregator);
                    }
                    n += 1;
                    write_value(out, v, hex);
                    false
                });
            }
        }
    }
}

fn write_value(out: &mut String, v: Value, hex: bool) {
    let _ = match v {
        Value::Int(n) if hex => write!(out, "0x{n:016x}"),
        Value::Int(n) => write!(out, "{n}"),
        Value::Bool(b) => write!(out, "{b}"),
        Value::Str(s) => write!(out, "{s}"),
        Value::Ip(a) => write!(out, "{a}"),
        Value::Mac(m) => write!(
            out,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        ),
        Value::Present => Ok(()),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_options_and_mistakes() {
        assert_eq!(Column::parse("bth.psn").map(|c| c.given).ok(), Some("bth.psn"));
        assert_eq!(Column::parse("roce.bth.psn").map(|c| c.given).ok(), Some("roce.bth.psn"));
        let e = Column::parse("bth.pns").unwrap_err();
        assert!(e.contains("did you mean") && e.contains("bth.psn"), "{e}");
        let e = Column::parse("aeth").unwrap_err();
        assert!(e.contains("a header") && e.contains("aeth.syndrome"), "{e}");
        assert_eq!(FieldOption::parse("separator=/s"), Ok(FieldOption::Separator(" ".into())));
        assert_eq!(FieldOption::parse("quote=d"), Ok(FieldOption::Quote(Some('"'))));
        for bad in ["header", "header=x", "separator=ab", "occurrence=f", "quote=q"] {
            assert!(FieldOption::parse(bad).is_err(), "{bad}");
        }
    }
}
