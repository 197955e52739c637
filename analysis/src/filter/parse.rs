//! The filter grammar, parsed with nom into a [`Node`] tree whose comparisons are already
//! resolved (the field's row, the literal converted to the field's kind), so the evaluator
//! never looks a name up or parses a number.
//!
//! ```text
//! expr    = and { ("||" | "or") and }
//! and     = unary { ("&&" | "and") unary }
//! unary   = ("!" | "not") unary | primary
//! primary = "(" expr ")" | field [ op literal ]
//! op      = "==" | "!=" | "<" | "<=" | ">" | ">="
//! literal = '"' string '"' | word        (a number, an address, a name)
//! ```
//!
//! Bounded: at most [`MAX_LEN`] bytes and [`MAX_DEPTH`] nested parentheses or `!`, checked as
//! the parser descends, so a hostile expression gets an error instead of a stack overflow.
//! Chains of `&&` and `||` are flat lists (not nested nodes), so their length costs no depth.

use std::net::IpAddr;

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{char, multispace0, satisfy};
use nom::combinator::{opt, recognize};
use nom::error::{ErrorKind, ParseError};
use nom::sequence::pair;
use nom::{IResult, Parser};

use super::fields::{self, Field, Kind};

/// The longest expression accepted, in bytes.
pub const MAX_LEN: usize = 4096;
/// The deepest nesting of parentheses and `!` accepted.
pub const MAX_DEPTH: usize = 64;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A literal, converted to the kind of the field it is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lit {
    Int(u64),
    Bool(bool),
    Str(String),
    Ip(IpAddr),
    Mac([u8; 6]),
}

/// A parsed filter.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Or(Vec<Node>),
    And(Vec<Node>),
    Not(Box<Node>),
    /// A bare field: the frame has it (tshark's `infiniband.aeth`).
    Present(&'static Field),
    Cmp {
        field: &'static Field,
        op: Op,
        lit: Lit,
    },
}

/// Where parsing failed: the rest of the input at the mistake, and what was wrong (`None`:
/// a nom error that the caller words from context).
#[derive(Debug)]
struct PErr<'a> {
    at: &'a str,
    msg: Option<String>,
}

impl<'a> ParseError<&'a str> for PErr<'a> {
    fn from_error_kind(at: &'a str, _: ErrorKind) -> Self {
        PErr { at, msg: None }
    }

    fn append(_: &'a str, _: ErrorKind, other: Self) -> Self {
        other
    }
}

type Res<'a, T> = IResult<&'a str, T, PErr<'a>>;

/// A mistake at `at`, final (no other branch is tried).
fn fail<T>(at: &str, msg: impl Into<String>) -> Res<'_, T> {
    Err(nom::Err::Failure(PErr { at, msg: Some(msg.into()) }))
}

/// A parse error: the byte offset of the mistake and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mistake {
    pub(crate) offset: usize,
    pub(crate) message: String,
}

/// Parses a whole expression.
pub(crate) fn parse(src: &str) -> Result<Node, Mistake> {
    if src.len() > MAX_LEN {
        return Err(Mistake {
            offset: MAX_LEN,
            message: format!("the filter is longer than {MAX_LEN} bytes ({} bytes)", src.len()),
        });
    }
    let offset = |rest: &str| src.len() - rest.len();
    match expr(src, 0) {
        Ok((rest, node)) => {
            let rest = rest.trim_start();
            if rest.is_empty() {
                Ok(node)
            } else {
                let message = if rest.starts_with(')') {
                    "a ')' without its '('".to_string()
                } else {
                    format!("expected &&, || or the end, found '{}'", token_at(rest))
                };
                Err(Mistake { offset: offset(rest), message })
            }
        }
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(Mistake {
            offset: offset(e.at),
            message: e.msg.unwrap_or_else(|| {
                if e.at.trim().is_empty() {
                    "the filter ends too early: expected a field or '('".into()
                } else {
                    format!("expected a field, '(' or '!', found '{}'", token_at(e.at))
                }
            }),
        }),
        Err(nom::Err::Incomplete(_)) => {
            Err(Mistake { offset: src.len(), message: "the filter ends too early".into() })
        }
    }
}

/// The token that starts `s`, for messages (a word, or one character).
fn token_at(s: &str) -> &str {
    let word = s.find(|c: char| !is_word(c)).unwrap_or(s.len());
    let n = if word > 0 { word } else { s.chars().next().map_or(0, char::len_utf8) };
    s.get(..n.min(40)).unwrap_or(s)
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-' | '/')
}

fn ws<'a, O>(
    p: impl Parser<&'a str, Output = O, Error = PErr<'a>>,
) -> impl Parser<&'a str, Output = O, Error = PErr<'a>> {
    nom::sequence::preceded(multispace0, p)
}

/// A keyword (`and`, `or`, `not`) as a whole word.
fn keyword<'a>(word: &'static str) -> impl Parser<&'a str, Output = &'a str, Error = PErr<'a>> {
    move |i: &'a str| {
        let (rest, w) = tag(word).parse(i)?;
        if rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
            return Err(nom::Err::Error(PErr { at: i, msg: None }));
        }
        Ok((rest, w))
    }
}

fn expr(i: &str, depth: usize) -> Res<'_, Node> {
    let (mut i, first) = and(i, depth)?;
    let mut all = vec![first];
    while let (rest, Some(_)) = opt(ws(alt((tag("||"), keyword("or"))))).parse(i)? {
        let (rest, next) = and(rest, depth)?;
        all.push(next);
        i = rest;
    }
    Ok((
        i,
        if all.len() == 1 { all.pop().map_or(Node::Or(Vec::new()), |n| n) } else { Node::Or(all) },
    ))
}

fn and(i: &str, depth: usize) -> Res<'_, Node> {
    let (mut i, first) = unary(i, depth)?;
    let mut all = vec![first];
    while let (rest, Some(_)) = opt(ws(alt((tag("&&"), keyword("and"))))).parse(i)? {
        let (rest, next) = unary(rest, depth)?;
        all.push(next);
        i = rest;
    }
    Ok((
        i,
        if all.len() == 1 {
            all.pop().map_or(Node::And(Vec::new()), |n| n)
        } else {
            Node::And(all)
        },
    ))
}

fn deeper(at: &str, depth: usize) -> Result<usize, nom::Err<PErr<'_>>> {
    if depth >= MAX_DEPTH {
        return Err(nom::Err::Failure(PErr {
            at,
            msg: Some(format!("nested deeper than {MAX_DEPTH} parentheses or '!'")),
        }));
    }
    Ok(depth + 1)
}

fn unary(i: &str, depth: usize) -> Res<'_, Node> {
    let (i, _) = multispace0(i)?;
    // `!=` is an operator, never a negation.
    if let (rest, Some(_)) =
        opt(alt((recognize(pair(char('!'), nom::combinator::not(char('=')))), keyword("not"))))
            .parse(i)?
    {
        let depth = deeper(i, depth)?;
        let (rest, inner) = unary(rest, depth)?;
        return Ok((rest, Node::Not(Box::new(inner))));
    }
    primary(i, depth)
}

fn primary(i: &str, depth: usize) -> Res<'_, Node> {
    if let (rest, Some(_)) = opt(char('(')).parse(i)? {
        let depth = deeper(i, depth)?;
        let (rest, inner) = expr(rest, depth)?;
        let (rest, _) = multispace0(rest)?;
        return match char::<&str, PErr<'_>>(')').parse(rest) {
            Ok((rest, _)) => Ok((rest, inner)),
            Err(_) if rest.is_empty() => fail(rest, "a '(' is not closed: expected ')'"),
            Err(_) => fail(rest, format!("expected ')', &&, or ||, found '{}'", token_at(rest))),
        };
    }
    let (rest, name) = field_name(i)?;
    if matches!(name, "and" | "or" | "not") {
        return fail(i, format!("'{name}' where a field was expected"));
    }
    let Some(field) = fields::lookup(name) else {
        return fail(i, format!("unknown field '{name}' ({})", fields::hint(name)));
    };
    let (after_op, op) = match opt(ws(operator)).parse(rest)? {
        (r, Some(op)) => (r, op),
        (r, None) => return Ok((r, Node::Present(field))),
    };
    let op_at = rest.trim_start();
    if field.kind == Kind::Object {
        return fail(
            op_at,
            format!("'{name}' is a header: test it alone (`{name}`), or compare one of its fields"),
        );
    }
    let ordered = !matches!(op, Op::Eq | Op::Ne);
    if ordered && !matches!(field.kind, Kind::Int | Kind::Hex64) {
        return fail(
            op_at,
            format!("'{name}' is a {}: only == and != compare it", field.kind.as_str()),
        );
    }
    let (lit_rest, (at, text)) = literal(after_op)?;
    match convert(field, text) {
        Ok(lit) => Ok((lit_rest, Node::Cmp { field, op, lit })),
        Err(msg) => fail(at, msg),
    }
}

fn field_name(i: &str) -> Res<'_, &str> {
    recognize(pair(
        satisfy(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.'),
    ))
    .parse(i)
}

fn operator(i: &str) -> Res<'_, Op> {
    let (rest, t) =
        alt((tag("=="), tag("!="), tag("<="), tag(">="), tag("<"), tag(">"), tag("="))).parse(i)?;
    let op = match t {
        "==" => Op::Eq,
        "!=" => Op::Ne,
        "<=" => Op::Le,
        ">=" => Op::Ge,
        "<" => Op::Lt,
        ">" => Op::Gt,
        _ => return fail(i, "'=' alone is not an operator: write =="),
    };
    Ok((rest, op))
}

/// What a literal was written as.
enum Text<'a> {
    Quoted(String),
    Word(&'a str),
}

/// A literal after an operator: the rest, where it starts, and its text.
fn literal(i: &str) -> Res<'_, (&str, Text<'_>)> {
    let (i, _) = multispace0(i)?;
    if let Some(body) = i.strip_prefix('"') {
        let mut s = String::new();
        let mut chars = body.char_indices();
        while let Some((n, c)) = chars.next() {
            match c {
                '"' => return Ok((body.get(n + 1..).unwrap_or(""), (i, Text::Quoted(s)))),
                '\\' => match chars.next() {
                    Some((_, e @ ('"' | '\\'))) => s.push(e),
                    Some((m, _)) => {
                        return fail(
                            body.get(m..).unwrap_or(""),
                            "only \\\" and \\\\ are escapes in a string",
                        )
                    }
                    None => break,
                },
                c => s.push(c),
            }
        }
        return fail(i, "a string is not closed: expected '\"'");
    }
    match take_while1::<_, &str, PErr<'_>>(is_word).parse(i) {
        Ok((rest, w)) => Ok((rest, (i, Text::Word(w)))),
        Err(_) if i.is_empty() => fail(i, "the filter ends after an operator: expected a value"),
        Err(_) => fail(
            i,
            format!(
                "expected a value (a number, an address, a \"string\"), found '{}'",
                token_at(i)
            ),
        ),
    }
}

/// The literal as the field's kind.
fn convert(field: &Field, text: Text<'_>) -> Result<Lit, String> {
    let name = field.name.strip_prefix("roce.").unwrap_or(field.name);
    let raw = match &text {
        Text::Quoted(s) => s.as_str(),
        Text::Word(w) => w,
    };
    match field.kind {
        Kind::Int | Kind::Hex64 => {
            if let Some(n) = parse_int(raw) {
                return Ok(Lit::Int(n));
            }
            if field.name == "roce.bth.opcode" {
                let want = raw.to_ascii_uppercase();
                if let Some(i) = roce_parser::OPCODES.iter().find(|i| i.name == want) {
                    return Ok(Lit::Int(i.opcode.into()));
                }
            }
            Err(format!("'{raw}' is not a number ({name} is a number: decimal or 0x-hex)"))
        }
        Kind::Bool => match raw {
            "true" | "1" => Ok(Lit::Bool(true)),
            "false" | "0" => Ok(Lit::Bool(false)),
            _ => Err(format!("'{raw}' is not true or false ({name} is a flag)")),
        },
        Kind::Ip => {
            let bare = raw.trim_start_matches('[').trim_end_matches(']');
            bare.parse::<IpAddr>().map(|a| Lit::Ip(a.to_canonical())).map_err(|_| {
                format!("'{raw}' is not an IP address ({name} is one: 10.0.0.1, fe80::1)")
            })
        }
        Kind::Mac => parse_mac(raw).map(Lit::Mac).ok_or_else(|| {
            format!("'{raw}' is not a MAC address ({name} is one: 02:00:00:00:00:01)")
        }),
        Kind::Problem => roce_parser::Problem::from_code(raw)
            .map(|p| Lit::Str(p.code().to_string()))
            .ok_or_else(|| {
                let codes: Vec<&str> = roce_parser::Problem::ALL.iter().map(|p| p.code()).collect();
                format!("'{raw}' is not a problem code; the codes are {}", codes.join(", "))
            }),
        Kind::Str if !field.values.is_empty() && !field.values.contains(&raw) => Err(format!(
            "'{raw}' is never the value of {name}: it is one of {}",
            field.values.join(", ")
        )),
        Kind::Str => Ok(Lit::Str(raw.to_string())),
        Kind::Object => Err(format!("'{name}' is a header: it is not compared")),
    }
}

/// Decimal or 0x-hex, as `--qp` takes them.
pub(crate) fn parse_int(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split([':', '-']);
    for b in &mut out {
        let p = parts.next()?;
        if p.len() != 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}
