//! The field catalog: one row per decoded field of the frame, the one place that says what
//! each renderer calls it. A row holds the field's JSON path in the frame object of
//! `dissect --format json` (docs/json.md, `roce.bth.dest_qp`), its kind, the words that show
//! it in the `dissect -V` tree, the name and reader of the display filter (`dissect -Y`,
//! `-T fields -e`), its column in `export`'s packets table, the tshark fields the tshark
//! comparison proves equal to it and its member in the C interface's `roce_packet`.
//!
//! Nothing else lists the fields. The display filter and `-T fields -e` are this table (the
//! rows with a filter name, [`FILTER_FIELDS`]). The extended transport headers (RETH, AETH,
//! ...) are rendered from their rows too: each header's row names its slot in
//! `roce_parser::ExtHeaders` and each member's row how it is read from the header's repr and
//! shown in the `-V` tree, and the table makes their filter readers, their JSON objects
//! (written by `dissect --format json|jsonl` through [`crate::write_frame_json`]) and their
//! `-V` lines ([`write_ext_header_tree`]), plain code with no indirect call. The rest of the
//! JSON writer and of the `-V` tree is written by hand for speed and layout, the packets
//! table keeps its own typed writers and C its structs, so tests hold them to the catalog
//! and fail when one misses a field: every JSON member written over frames of every header
//! is a row, the rows are the members of docs/schema/frame.schema.json, every row's value
//! read here is the value JSON wrote, every label is in the `-V` tree of the frames that
//! have the field, the packets table's columns are the rows' columns, each RoCE header's C
//! struct has its rows' members (`cli/tests/catalog.rs`), and the tshark test's
//! comparisons are the rows' tshark names (`cli/tests/tshark.rs`).
//!
//! Paths name members without array indexes: `vlan.vid` is the `vid` of every tag of the
//! `vlan` array, `problems.code` the `code` of every problem. A header is a row of kind
//! [`FieldKind::Object`] before its members. The CM object (`roce.cm`) is one row: its
//! members are the CM document's (docs/json.md, the schema's `cm` definitions), not frame
//! fields.
//!
//! ```
//! use roce_analysis::{find_field, FieldKind};
//!
//! let psn = find_field("bth.psn").unwrap();
//! assert_eq!(psn.path, "roce.bth.psn");
//! assert_eq!(psn.kind, FieldKind::Int);
//! assert_eq!(psn.column, Some("bth_psn"));
//! assert_eq!(psn.tshark, ["infiniband.bth.psn"]);
//! assert_eq!(find_field("problem").unwrap().path, "problems.code");
//! ```

use std::fmt::{self, Write as _};
use std::io;
use std::net::IpAddr;

use roce_parser::{
    rnr_timer_us, AethKind, Encap, ErspanIIIRepr, ExtHeader, ExtHeaders, GeneveOption, GeneveRepr,
    Packet, Roce, Tunnel, VlanTag,
};

use crate::frame_json::Obj;
use crate::{Decoded, Undecoded};

/// What a field holds: the JSON value's type, and what a filter compares it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// An unsigned number (a filter takes decimal or 0x-hex literals and all six comparisons).
    Int,
    /// A 64-bit number that JSON, `-T fields` and Parquet write as `0x` and 16 hex digits
    /// (exact in every reader); a filter compares it as a number.
    Hex64,
    /// `true` / `false` (a filter also takes `1` / `0`).
    Bool,
    /// A code or a name: a string literal.
    Str,
    /// An IPv4 or IPv6 address (a GID too): a literal address, quoted or not.
    Ip,
    /// A MAC address `aa:bb:cc:dd:ee:ff`.
    Mac,
    /// An object or array of the JSON (`aeth`, `ip`, `vlan`, `cm`, ...): a filter only tests
    /// its presence.
    Object,
    /// A problem code of the parser's table (`problems[].code`; the filter's `problem`).
    Problem,
}

impl FieldKind {
    /// How the filter's messages name the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Int | FieldKind::Hex64 => "number",
            FieldKind::Bool => "true/false",
            FieldKind::Str => "string",
            FieldKind::Ip => "IP address",
            FieldKind::Mac => "MAC address",
            FieldKind::Object => "header (presence only)",
            FieldKind::Problem => "problem code",
        }
    }
}

/// A field's value in one frame, as the filter and `-T fields` read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValue {
    /// A number (`Int` and `Hex64` fields).
    Int(u64),
    /// A flag.
    Bool(bool),
    /// A code or a name.
    Str(&'static str),
    /// An address or a GID.
    Ip(IpAddr),
    /// A MAC address.
    Mac([u8; 6]),
    /// An object is there (its members are other rows).
    Present,
}

/// How a filter row reads its values: most fields have at most one per frame; `vlan.*` has
/// one per tag and `problem` one per problem (a comparison holds when one of them does, as
/// in tshark).
#[derive(Clone, Copy)]
pub enum FieldGet {
    /// The value, if the frame has the field.
    One(fn(&Decoded<'_>) -> Option<FieldValue>),
    /// Calls the visitor on each value until it returns true; returns whether one did.
    Many(fn(&Decoded<'_>, &mut dyn FnMut(FieldValue) -> bool) -> bool),
}

/// One decoded field: a row of the catalog.
#[derive(Debug)]
pub struct FieldInfo {
    /// The JSON path in the frame object (`roce.bth.dest_qp`, `vlan.vid`, `problems.code`).
    pub path: &'static str,
    /// What it holds.
    pub kind: FieldKind,
    /// The words of the `dissect -V` tree that show the field (in the line of every frame
    /// that has it; `a|b`: one of them); `None` for a field the tree does not show.
    pub label: Option<&'static str>,
    /// Its column in the packets table (`packets.parquet`), if it has one.
    pub column: Option<&'static str>,
    /// The tshark fields `cli/tests/tshark.rs` compares it with (docs/json.md's table).
    pub tshark: &'static [&'static str],
    /// Its member in the C interface's `roce_packet` (ffi/include/roce_parser.h), as a path
    /// (`bth.dest_qp`, `eth.vlans.vid`, `icrc_status`), if C has it.
    pub c: Option<&'static str>,
    /// Its name in the display filter and `-T fields -e`, if they read it (the JSON path but
    /// for `problems.code`, which is `problem`).
    pub filter: Option<&'static str>,
}

/// A field the display filter and `-T fields -e` read: the catalog rows with a filter name.
pub struct FilterField {
    /// The filter's name (`roce.` may be left out when it is typed).
    pub name: &'static str,
    /// The catalog row's JSON path.
    pub path: &'static str,
    /// What it holds.
    pub kind: FieldKind,
    /// How its values are read from the decoded frame.
    pub get: FieldGet,
    /// For `Str` fields whose values are a closed set: the values (a typo is an error).
    pub values: &'static [&'static str],
}

impl fmt::Debug for FilterField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The catalog row of `name`: a JSON path or a filter name, `roce.` optional (`bth.psn`,
/// `roce.icrc.status`, `problem`).
pub fn find_field(name: &str) -> Option<&'static FieldInfo> {
    let is = |n: &str| n == name || n.strip_prefix("roce.") == Some(name);
    FIELDS.iter().find(|f| is(f.path) || f.filter.is_some_and(is))
}

fn packet<'d>(d: &'d Decoded<'_>) -> Option<&'d Packet<'d>> {
    d.packet.as_ref().ok()
}

fn roce<'d>(d: &'d Decoded<'_>) -> Option<&'d Roce<'d>> {
    packet(d).and_then(|p| p.roce.as_ref())
}

fn stop(d: &Decoded<'_>) -> Option<roce_parser::Error> {
    match &d.packet {
        Ok(p) => p.stop,
        Err(Undecoded::Ethernet(e))
        | Err(Undecoded::Infiniband(e))
        | Err(Undecoded::Network { stop: Some(e), .. }) => Some(*e),
        Err(_) => None,
    }
}

fn int(v: impl Into<u64>) -> Option<FieldValue> {
    Some(FieldValue::Int(v.into()))
}

fn usize_int(v: usize) -> Option<FieldValue> {
    Some(FieldValue::Int(u64::try_from(v).unwrap_or(u64::MAX)))
}

fn vlans(d: &Decoded<'_>, f: &mut dyn FnMut(&roce_parser::VlanTag) -> bool) -> bool {
    packet(d).is_some_and(|p| p.vlans.iter().flatten().any(f))
}

/// A GID as docs/json.md writes it: an IPv4-mapped GID is the IPv4 address.
fn roce_ip(a: std::net::Ipv6Addr) -> IpAddr {
    a.to_ipv4_mapped().map_or(IpAddr::V6(a), IpAddr::V4)
}

/// Visits `get` of each tunnel the frame arrived in, outermost first.
fn each(d: &Decoded<'_>, v: Visit<'_>, get: impl Fn(&Encap<'_>) -> Option<FieldValue>) -> bool {
    packet(d).is_some_and(|p| p.tunnels().filter_map(&get).any(v))
}

/// Visits `get` of each outer VLAN tag of each tunnel.
fn each_vlan(d: &Decoded<'_>, v: Visit<'_>, get: impl Fn(&VlanTag) -> Option<FieldValue>) -> bool {
    packet(d)
        .is_some_and(|p| p.tunnels().flat_map(|e| e.vlans.iter().flatten()).filter_map(&get).any(v))
}

/// Visits `get` of each Geneve option of each tunnel.
fn each_geneve_option(
    d: &Decoded<'_>,
    v: Visit<'_>,
    get: impl Fn(GeneveOption<'_>) -> Option<FieldValue>,
) -> bool {
    packet(d).is_some_and(|p| {
        p.tunnels().filter_map(geneve).flat_map(|g| g.options()).filter_map(&get).any(v)
    })
}

/// The ERSPAN header fields types II and III share.
struct ErspanCommon {
    version: u8,
    vlan: u16,
    cos: u8,
    truncated: bool,
}

fn erspan(e: &Encap<'_>) -> Option<ErspanCommon> {
    match e.tunnel {
        Tunnel::ErspanII(_, x) => Some(ErspanCommon {
            version: x.version,
            vlan: x.vlan,
            cos: x.cos,
            truncated: x.truncated,
        }),
        Tunnel::ErspanIII(_, x) => Some(ErspanCommon {
            version: x.version,
            vlan: x.vlan,
            cos: x.cos,
            truncated: x.truncated,
        }),
        _ => None,
    }
}

fn erspan3(e: &Encap<'_>) -> Option<ErspanIIIRepr> {
    match e.tunnel {
        Tunnel::ErspanIII(_, x) => Some(x),
        _ => None,
    }
}

fn geneve<'e>(e: &Encap<'e>) -> Option<GeneveRepr<'e>> {
    match e.tunnel {
        Tunnel::Geneve(x) => Some(x),
        _ => None,
    }
}

const ICRC_STATUSES: &[&str] = &["ok", "bad", "unverifiable", "not_checked"];
const LNH_NAMES: &[&str] = &["raw", "ipv6", "iba_local", "iba_global"];

fn lrh(d: &Decoded<'_>) -> Option<roce_parser::LrhRepr> {
    packet(d)?.lrh
}

fn vcrc(d: &Decoded<'_>) -> Option<roce_parser::Vcrc> {
    packet(d)?.vcrc
}
const AETH_KINDS: &[&str] = &["ack", "rnr_nak", "nak", "reserved"];

/// The last member name of a JSON path: its key in its object (`va` of `roce.reth.va`).
const fn json_key(path: &'static str) -> &'static str {
    let mut key = path.as_bytes();
    let mut rest = key;
    while let [first, tail @ ..] = rest {
        if *first == b'.' {
            key = tail;
        }
        rest = tail;
    }
    // Cut after an ASCII '.': always UTF-8.
    match std::str::from_utf8(key) {
        Ok(k) => k,
        Err(_) => path,
    }
}

/// The table. A row: `"json.path" Kind`, then what is known of it: `label "words of -V"`,
/// `column "parquet_column"`, `tshark ["tshark.field", ...]`, `c "member.path"`, and `filter` (`"name"` when
/// the filter's name is not the path, `(VALUES)` for a closed set of strings) with the
/// reader: `one |d|` an `Option<FieldValue>` from the `Decoded` frame `d`, or `many |d|` a
/// visit of each value.
///
/// An extended transport header's row is `"roce.<key>" Object ext <slot> label "<NAME>:"`
/// and its members' rows in braces: `<slot>` is its slot in `roce_parser::ExtHeaders`, the
/// label starts its `-V` line, and each member row (label, column, tshark, c as above, then
/// `values (VALUES)` for a closed set of strings) ends with `show "<format>"`, how its `-V`
/// line writes it after its label (`show bare "<format>"`: without the label), and `get |x|
/// <expr>`, its value read from the header's repr `x`. From these rows come the filter's
/// readers, the header's JSON object ([`write_ext_headers_json`], members in the rows'
/// order, keys the paths' last names) and its `-V` line ([`write_ext_header_tree`], the
/// label then `label format` of each member that has `show`, joined by ", "); a header
/// whose line is not that gives it after the label: `tree |out, x| { ... }`, writing the
/// whole line to `out`.
macro_rules! catalog {
    ($( $path:literal $kind:ident
        $(ext $slot:ident label $hlabel:literal
            $(tree |$tout:ident, $tx:ident| $tree:block)?
            {
                $( $mpath:literal $mkind:ident
                    $(label $mlabel:literal)?
                    $(column $mcolumn:literal)?
                    $(tshark [$($mtshark:literal),*])?
                    $(c $mc:literal)?
                    $(values ($mvals:expr))?
                    $(show $($bare:ident)? $show:literal)?
                    get |$x:ident| $get:expr
                ; )*
            }
        )?
        $(label $label:literal)?
        $(column $column:literal)?
        $(tshark [$($tshark:literal),*])?
        $(c $c:literal)?
        $(filter $($fname:literal)? $(($vals:expr))? $how:ident |$d:ident| $body:expr)?
    ; )*) => {
        /// Every decoded field of the frame object, in the JSON's order.
        pub static FIELDS: &[FieldInfo] = &[
            $( FieldInfo {
                path: $path,
                kind: FieldKind::$kind,
                label: catalog!(@opt $($hlabel)? $($label)?),
                column: catalog!(@opt $($column)?),
                tshark: &[$($($tshark),*)?],
                c: catalog!(@opt $($c)?),
                filter: catalog!(@filter $path $(ext $slot)? $($how $($fname)?)?),
            },
            $( $( FieldInfo {
                path: $mpath,
                kind: FieldKind::$mkind,
                label: catalog!(@opt $($mlabel)?),
                column: catalog!(@opt $($mcolumn)?),
                tshark: &[$($($mtshark),*)?],
                c: catalog!(@opt $($mc)?),
                filter: Some($mpath),
            }, )* )? )*
        ];

        /// The fields the display filter and `-T fields -e` read, in the catalog's order.
        pub static FILTER_FIELDS: &[FilterField] = &[
            $( $( FilterField {
                name: catalog!(@name $path $($fname)?),
                path: $path,
                kind: FieldKind::$kind,
                get: catalog!(@get $how $d $body),
                values: catalog!(@vals $($vals)?),
            }, )?
            $( FilterField {
                name: $path,
                path: $path,
                kind: FieldKind::$kind,
                get: FieldGet::One(|d| roce(d)?.headers.$slot.map(|_| FieldValue::Present)),
                values: &[],
            },
            $( FilterField {
                name: $mpath,
                path: $mpath,
                kind: FieldKind::$mkind,
                get: FieldGet::One(|d| {
                    roce(d)?.headers.$slot.as_ref().and_then(|$x| catalog!(@value $mkind $get))
                }),
                values: catalog!(@vals $($mvals)?),
            }, )* )? )*
        ];

        /// Writes the object of each extended transport header of `h`, in the catalog's
        /// order, as members of `o` (the members of `roce` after `bth`, docs/json.md).
        #[inline(always)]
        pub(crate) fn write_ext_headers_json(o: &mut Obj<'_>, h: &ExtHeaders) {
            $( $( if let Some(x) = &h.$slot {
                o.with(const { json_key($path) }, |out| {
                    let mut m = Obj::open(out);
                    $( catalog!(@json m $mkind $mpath, { let $x = x; $get }); )*
                    m.close();
                });
            } )? )*
        }

        /// Writes the `dissect -V` line of the extended transport header `which` of `h`
        /// (`  RETH: VA 0x..., R_Key 0x..., DMA length ...`), nothing when `h` does not hold
        /// it. The tree writes the lines of the headers the packet's opcode lists
        /// ([`roce_parser::OpcodeInfo::headers`]), in that order: the wire's.
        ///
        /// ```
        /// use roce_analysis::write_ext_header_tree;
        /// use roce_parser::{ExtHeader, ExtHeaders, RethRepr};
        ///
        /// let h = ExtHeaders {
        ///     reth: Some(RethRepr { va: 0x1000, rkey: 0xab, dma_len: 64 }),
        ///     ..Default::default()
        /// };
        /// let mut out = Vec::new();
        /// write_ext_header_tree(&mut out, &h, ExtHeader::Reth)?;
        /// write_ext_header_tree(&mut out, &h, ExtHeader::Aeth)?;
        /// assert_eq!(
        ///     String::from_utf8(out).unwrap(),
        ///     "  RETH: VA 0x0000000000001000, R_Key 0x000000ab, DMA length 64\n"
        /// );
        /// # Ok::<(), std::io::Error>(())
        /// ```
        pub fn write_ext_header_tree(
            out: &mut impl io::Write,
            h: &ExtHeaders,
            which: ExtHeader,
        ) -> io::Result<()> {
            $( $( if let Some(x) = &h.$slot {
                if x.header() == which {
                    return catalog!(@tree out x [$(|$tout, $tx| $tree)?] $hlabel
                        $( [$(label $mlabel)? $(show $($bare)? $show)? get |$x| $get] )*);
                }
            } )? )*
            Ok(())
        }
    };
    (@opt $v:expr) => { Some($v) };
    (@opt) => { None };
    (@filter $path:literal ext $slot:ident) => { Some($path) };
    (@filter $path:literal) => { None };
    (@filter $path:literal $how:ident) => { Some($path) };
    (@filter $path:literal $how:ident $fname:literal) => { Some($fname) };
    (@name $path:literal $fname:literal) => { $fname };
    (@name $path:literal) => { $path };
    (@get one $d:ident $body:expr) => { FieldGet::One(|$d| $body) };
    (@get many $d:ident $body:expr) => { FieldGet::Many(|$d, visit| $body(visit)) };
    (@vals $vals:expr) => { $vals };
    (@vals) => { &[] };
    // An extended header's member: its filter value and its JSON member.
    (@value Int $v:expr) => { int($v) };
    (@value Hex64 $v:expr) => { int($v) };
    (@value Str $v:expr) => { Some(FieldValue::Str($v)) };
    (@value Bool $v:expr) => { Some(FieldValue::Bool($v)) };
    (@json $o:ident Int $p:literal, $v:expr) => { $o.int(const { json_key($p) }, $v) };
    (@json $o:ident Hex64 $p:literal, $v:expr) => { $o.hex64(const { json_key($p) }, $v) };
    (@json $o:ident Str $p:literal, $v:expr) => { $o.str(const { json_key($p) }, $v) };
    (@json $o:ident Bool $p:literal, $v:expr) => { $o.bool(const { json_key($p) }, $v) };
    // An extended header's `-V` line: its own writer, or the label and the members shown,
    // one format string (`@line` gathers its pieces and the arguments).
    (@tree $out:ident $hx:ident [|$to:ident, $tx:ident| $b:block] $l:literal $($m:tt)*) => {{
        let $to = &mut *$out;
        let $tx = $hx;
        $b
    }};
    (@tree $out:ident $hx:ident [] $l:literal $($m:tt)*) => {
        catalog!(@line $out $hx ["  ", $l,] [] " " $($m)*)
    };
    (@line $out:ident $hx:ident [$($f:tt)*] [$($a:tt)*] $sep:literal) => {
        writeln!($out, concat!($($f)*) $($a)*)
    };
    (@line $out:ident $hx:ident [$($f:tt)*] [$($a:tt)*] $sep:literal
        [label $l:literal show bare $s:literal get |$x:ident| $g:expr] $($m:tt)*) => {
        catalog!(@line $out $hx [$($f)* $sep, $s,] [$($a)*, { let $x = $hx; $g }] ", " $($m)*)
    };
    (@line $out:ident $hx:ident [$($f:tt)*] [$($a:tt)*] $sep:literal
        [label $l:literal show $s:literal get |$x:ident| $g:expr] $($m:tt)*) => {
        catalog!(@line $out $hx [$($f)* $sep, $l, " ", $s,] [$($a)*, { let $x = $hx; $g }] ", " $($m)*)
    };
    // A member the line does not show.
    (@line $out:ident $hx:ident [$($f:tt)*] [$($a:tt)*] $sep:literal
        [$(label $l:literal)? get |$x:ident| $g:expr] $($m:tt)*) => {
        catalog!(@line $out $hx [$($f)*] [$($a)*] $sep $($m)*)
    };
}

/// `many` readers visit with this type.
type Visit<'v> = &'v mut dyn FnMut(FieldValue) -> bool;

catalog! {
    "schema" Str;
    "frame" Int label "Frame" column "frame"
        filter one |d| int(d.frame.number);
    "source" Object label "from";
    "source.file" Str label "from" column "source_file";
    "source.tap" Int column "source_tap";
    "source.frame" Int label "from" column "source_frame";
    "source.copy_of" Int label "copy of" column "source_copy_of";
    "ts" Str label "time" column "ts_ns" tshark ["frame.time_epoch"];
    "caplen" Int label "captured" column "caplen" tshark ["frame.cap_len"]
        filter one |d| int(d.frame.caplen);
    "len" Int label "bytes on wire" column "len" tshark ["frame.len"]
        filter one |d| int(d.frame.len);
    "encap" Object label "Tunnel "
        filter one |d| packet(d)?.is_encapsulated().then_some(FieldValue::Present);
    "encap.kind" Str label "Tunnel " column "encap_kind"
        filter (roce_parser::ENCAP_CODES) many |d| |v: Visit<'_>| each(d, v, |e| Some(FieldValue::Str(e.kind().code())));
    "encap.name" Str label "Tunnel ";
    "encap.eth" Object label "Outer Ethernet:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.eth.map(|_| FieldValue::Present));
    "encap.eth.src" Mac label "Outer Ethernet:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.eth.map(|x| FieldValue::Mac(x.src)));
    "encap.eth.dst" Mac label "Outer Ethernet:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.eth.map(|x| FieldValue::Mac(x.dst)));
    "encap.eth.ethertype" Int label "EtherType"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.eth?.ethertype));
    "encap.vlan" Object label "Outer VLAN"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.vlans.iter().flatten().next().map(|_| FieldValue::Present));
    "encap.vlan.tpid" Int label "TPID"
        filter many |d| |v: Visit<'_>| each_vlan(d, v, |t| int(t.tpid));
    "encap.vlan.pcp" Int label "PCP"
        filter many |d| |v: Visit<'_>| each_vlan(d, v, |t| int(t.pcp));
    "encap.vlan.dei" Bool label "DEI"
        filter many |d| |v: Visit<'_>| each_vlan(d, v, |t| Some(FieldValue::Bool(t.dei)));
    "encap.vlan.vid" Int label "ID"
        filter many |d| |v: Visit<'_>| each_vlan(d, v, |t| int(t.vid));
    "encap.ip" Object label "Outer IPv"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.ip.map(|_| FieldValue::Present));
    "encap.ip.version" Int label "Outer IPv"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.ip?.version));
    "encap.ip.src" Ip label "Outer IPv" column "encap_ip_src"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.ip.map(|i| FieldValue::Ip(i.src)));
    "encap.ip.dst" Ip label "Outer IPv" column "encap_ip_dst"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.ip.map(|i| FieldValue::Ip(i.dst)));
    "encap.ip.dscp" Int label "DSCP"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.ip?.dscp));
    "encap.ip.ecn" Int label "ECN"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.ip?.ecn));
    "encap.ip.ttl" Int label "TTL|hop limit"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.ip?.ttl));
    "encap.ip.flow_label" Int label "flow label"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.ip.filter(|i| i.version == 6).and_then(|i| int(i.flow_label)));
    "encap.ip.protocol" Int
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.ip?.protocol));
    "encap.udp" Object label "Outer UDP:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.udp.map(|_| FieldValue::Present));
    "encap.udp.sport" Int label "Outer UDP:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.udp?.sport));
    "encap.udp.dport" Int label "Outer UDP:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.udp?.dport));
    "encap.udp.len" Int label "length"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.udp?.len));
    "encap.gre" Object label "GRE:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.tunnel.gre().map(|_| FieldValue::Present));
    "encap.gre.version" Int label "GRE: version"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.tunnel.gre()?.version));
    "encap.gre.protocol" Int label "protocol 0x"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.tunnel.gre()?.protocol));
    "encap.gre.checksum" Int label "checksum"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.tunnel.gre()?.checksum?));
    "encap.gre.key" Int label "key"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.tunnel.gre()?.key?));
    "encap.gre.seq" Int label "sequence"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.tunnel.gre()?.seq?));
    "encap.erspan" Object label "ERSPAN:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| e.tunnel.session_id().map(|_| FieldValue::Present));
    "encap.erspan.version" Int label "ERSPAN: version"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan(e)?.version));
    "encap.erspan.vlan" Int label "VLAN"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan(e)?.vlan));
    "encap.erspan.cos" Int label "COS"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan(e)?.cos));
    "encap.erspan.encap_type" Int label "encapsulation type"
        filter many |d| |v: Visit<'_>| each(d, v, |e| match e.tunnel { Tunnel::ErspanII(_, x) => int(x.encap_type), _ => None });
    "encap.erspan.truncated" Bool label "truncated"
        filter many |d| |v: Visit<'_>| each(d, v, |e| erspan(e).map(|x| FieldValue::Bool(x.truncated)));
    "encap.erspan.session_id" Int label "session" column "encap_erspan_session_id"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(e.tunnel.session_id()?));
    "encap.erspan.index" Int label "index"
        filter many |d| |v: Visit<'_>| each(d, v, |e| match e.tunnel { Tunnel::ErspanII(_, x) => int(x.index), _ => None });
    "encap.erspan.bso" Int label "BSO"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan3(e)?.bso));
    "encap.erspan.timestamp" Int label "timestamp"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan3(e)?.timestamp));
    "encap.erspan.sgt" Int label "SGT"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan3(e)?.sgt));
    "encap.erspan.pdu" Bool label "PDU"
        filter many |d| |v: Visit<'_>| each(d, v, |e| erspan3(e).map(|x| FieldValue::Bool(x.pdu)));
    "encap.erspan.frame_type" Int label "frame type"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan3(e)?.frame_type));
    "encap.erspan.hw_id" Int label "hardware ID"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan3(e)?.hw_id));
    "encap.erspan.direction" Bool label "direction"
        filter many |d| |v: Visit<'_>| each(d, v, |e| erspan3(e).map(|x| FieldValue::Bool(x.direction)));
    "encap.erspan.granularity" Int label "granularity"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan3(e)?.granularity));
    "encap.erspan.platform" Object label "ERSPAN platform:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| erspan3(e)?.platform.map(|_| FieldValue::Present));
    "encap.erspan.platform.id" Int label "ERSPAN platform:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan3(e)?.platform?.id));
    "encap.erspan.platform.info" Hex64 label "info 0x"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(erspan3(e)?.platform?.info));
    "encap.vxlan" Object label "VXLAN:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| matches!(e.tunnel, Tunnel::Vxlan(_)).then_some(FieldValue::Present));
    "encap.vxlan.flags" Int label "flags 0x"
        filter many |d| |v: Visit<'_>| each(d, v, |e| match e.tunnel { Tunnel::Vxlan(x) => int(x.flags), _ => None });
    "encap.vxlan.vni" Int label "VNI" column "encap_vxlan_vni"
        filter many |d| |v: Visit<'_>| each(d, v, |e| match e.tunnel { Tunnel::Vxlan(x) => int(x.vni), _ => None });
    "encap.geneve" Object label "Geneve:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| geneve(e).map(|_| FieldValue::Present));
    "encap.geneve.version" Int label "Geneve: version"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(geneve(e)?.version));
    "encap.geneve.oam" Bool label "OAM"
        filter many |d| |v: Visit<'_>| each(d, v, |e| geneve(e).map(|x| FieldValue::Bool(x.oam)));
    "encap.geneve.critical" Bool label "critical"
        filter many |d| |v: Visit<'_>| each(d, v, |e| geneve(e).map(|x| FieldValue::Bool(x.critical)));
    "encap.geneve.protocol" Int label "protocol 0x"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(geneve(e)?.protocol));
    "encap.geneve.vni" Int label "VNI" column "encap_geneve_vni"
        filter many |d| |v: Visit<'_>| each(d, v, |e| int(geneve(e)?.vni));
    "encap.geneve.options" Object label "Geneve option:"
        filter many |d| |v: Visit<'_>| each(d, v, |e| geneve(e)?.options().next().map(|_| FieldValue::Present));
    "encap.geneve.options.class" Int label "class 0x"
        filter many |d| |v: Visit<'_>| each_geneve_option(d, v, |o| int(o.class));
    "encap.geneve.options.type" Int label "type 0x"
        filter many |d| |v: Visit<'_>| each_geneve_option(d, v, |o| int(o.kind));
    "encap.geneve.options.data" Str label "data ";
    "encap.offset" Int
        filter many |d| |v: Visit<'_>| each(d, v, |e| usize_int(e.offset));
    "encap.inner_offset" Int label "inner frame at offset"
        filter many |d| |v: Visit<'_>| each(d, v, |e| usize_int(e.inner_offset));
    "lrh" Object label "LRH:"
        filter one |d| lrh(d).map(|_| FieldValue::Present);
    "lrh.vl" Int label "VL" column "lrh_vl" tshark ["infiniband.lrh.vl"] c "lrh.vl"
        filter one |d| int(lrh(d)?.vl);
    "lrh.lver" Int label "LVer" tshark ["infiniband.lrh.lver"] c "lrh.lver"
        filter one |d| int(lrh(d)?.lver);
    "lrh.sl" Int label "SL" column "lrh_sl" tshark ["infiniband.lrh.sl"] c "lrh.sl"
        filter one |d| int(lrh(d)?.sl);
    "lrh.resv2" Int label "reserved" tshark ["infiniband.lrh.reserved2"] c "lrh.resv2"
        filter one |d| int(lrh(d)?.resv2);
    "lrh.lnh" Int label "LNH" tshark ["infiniband.lrh.lnh"] c "lrh.lnh"
        filter one |d| int(lrh(d)?.lnh.bits());
    "lrh.lnh_name" Str label "LNH"
        filter (LNH_NAMES) one |d| Some(FieldValue::Str(lrh(d)?.lnh.as_str()));
    "lrh.dlid" Int label "DLID" column "lrh_dlid" tshark ["infiniband.lrh.dlid"] c "lrh.dlid"
        filter one |d| int(lrh(d)?.dlid);
    "lrh.resv5" Int label "reserved" tshark ["infiniband.lrh.reserved5"] c "lrh.resv5"
        filter one |d| int(lrh(d)?.resv5);
    "lrh.pktlen" Int label "PktLen" tshark ["infiniband.lrh.pktlen"] c "lrh.pkt_len"
        filter one |d| int(lrh(d)?.pkt_len);
    "lrh.slid" Int label "SLID" column "lrh_slid" tshark ["infiniband.lrh.slid"] c "lrh.slid"
        filter one |d| int(lrh(d)?.slid);
    "vcrc" Object label "VCRC:"
        filter one |d| vcrc(d).map(|_| FieldValue::Present);
    "vcrc.value" Int label "VCRC: 0x" tshark ["infiniband.variant.crc"] c "lrh.vcrc"
        filter one |d| int(vcrc(d)?.stored?);
    "vcrc.status" Str label "VCRC:" column "vcrc_status" c "lrh.vcrc_status"
        filter (ICRC_STATUSES) one |d| Some(FieldValue::Str(vcrc(d)?.status.as_str()));
    "vcrc.expected" Int label "should be" c "lrh.vcrc_computed"
        filter one |d| match vcrc(d)?.status {
            roce_parser::IcrcStatus::Bad { computed } => int(computed),
            _ => None,
        };
    "eth" Object label "Ethernet:"
        filter one |d| packet(d)?.eth.map(|_| FieldValue::Present);
    "eth.src" Mac label "Ethernet:" tshark ["eth.src"] c "eth.src"
        filter one |d| packet(d)?.eth.map(|e| FieldValue::Mac(e.src));
    "eth.dst" Mac label "Ethernet:" tshark ["eth.dst"] c "eth.dst"
        filter one |d| packet(d)?.eth.map(|e| FieldValue::Mac(e.dst));
    "eth.ethertype" Int label "EtherType" column "eth_ethertype" c "eth.ethertype"
        filter one |d| int(packet(d)?.eth?.ethertype);
    "vlan" Object label "VLAN"
        filter one |d| packet(d)?.vlans.iter().flatten().next().map(|_| FieldValue::Present);
    "vlan.tpid" Int label "TPID" c "eth.vlans.tpid"
        filter many |d| |v: Visit<'_>| vlans(d, &mut |t| v(FieldValue::Int(t.tpid.into())));
    "vlan.pcp" Int label "PCP" column "vlan_pcp" tshark ["ieee8021ad.priority", "vlan.priority"] c "eth.vlans.pcp"
        filter many |d| |v: Visit<'_>| vlans(d, &mut |t| v(FieldValue::Int(t.pcp.into())));
    "vlan.dei" Bool label "DEI" tshark ["ieee8021ad.dei", "vlan.dei"] c "eth.vlans.dei"
        filter many |d| |v: Visit<'_>| vlans(d, &mut |t| v(FieldValue::Bool(t.dei)));
    "vlan.vid" Int label "ID" column "vlan_vid" tshark ["ieee8021ad.id", "vlan.id"] c "eth.vlans.vid"
        filter many |d| |v: Visit<'_>| vlans(d, &mut |t| v(FieldValue::Int(t.vid.into())));
    "ip" Object label "IPv"
        filter one |d| packet(d)?.ip.map(|_| FieldValue::Present);
    "ip.version" Int label "IPv" column "ip_version" c "ip.version"
        filter one |d| int(packet(d)?.ip?.version);
    "ip.src" Ip label "IPv" column "ip_src" tshark ["ip.src", "ipv6.src"] c "ip.src"
        filter one |d| packet(d)?.ip.map(|i| FieldValue::Ip(i.src));
    "ip.dst" Ip label "IPv" column "ip_dst" tshark ["ip.dst", "ipv6.dst"] c "ip.dst"
        filter one |d| packet(d)?.ip.map(|i| FieldValue::Ip(i.dst));
    "ip.dscp" Int label "DSCP" column "ip_dscp" tshark ["ip.dsfield.dscp", "ipv6.tclass.dscp"] c "ip.dscp"
        filter one |d| int(packet(d)?.ip?.dscp);
    "ip.ecn" Int label "ECN" column "ip_ecn" tshark ["ip.dsfield.ecn", "ipv6.tclass.ecn"] c "ip.ecn"
        filter one |d| int(packet(d)?.ip?.ecn);
    "ip.ttl" Int label "TTL|hop limit" column "ip_ttl" tshark ["ip.ttl", "ipv6.hlim"] c "ip.ttl"
        filter one |d| int(packet(d)?.ip?.ttl);
    "ip.flow_label" Int label "flow label" tshark ["ipv6.flow"] c "ip.flow_label"
        filter one |d| packet(d)?.ip.filter(|i| i.version == 6).and_then(|i| int(i.flow_label));
    "ip.protocol" Int tshark ["ip.proto", "ipv6.nxt"] c "ip.protocol"
        filter one |d| int(packet(d)?.ip?.protocol);
    "udp" Object label "UDP:"
        filter one |d| packet(d)?.udp.map(|_| FieldValue::Present);
    "udp.sport" Int label "UDP:" column "udp_sport" tshark ["udp.srcport"] c "udp.sport"
        filter one |d| int(packet(d)?.udp?.sport);
    "udp.dport" Int label "UDP:" column "udp_dport" tshark ["udp.dstport"] c "udp.dport"
        filter one |d| int(packet(d)?.udp?.dport);
    "udp.len" Int label "length" tshark ["udp.length"] c "udp.len"
        filter one |d| int(packet(d)?.udp?.len);
    "roce" Object label "RoCEv|InfiniBand BTH"
        filter one |d| roce(d).map(|_| FieldValue::Present);
    "roce.version" Int label "RoCEv|InfiniBand BTH" column "version" c "roce_version"
        filter one |d| int(roce(d)?.version.number());
    "roce.grh" Object label "GRH:"
        filter one |d| roce(d)?.grh.map(|_| FieldValue::Present);
    "roce.grh.ipver" Int tshark ["infiniband.grh.ipver"] c "grh.ipver"
        filter one |d| int(roce(d)?.grh?.ipver);
    "roce.grh.tclass" Int label "traffic class" tshark ["infiniband.grh.tclass"] c "grh.tclass"
        filter one |d| int(roce(d)?.grh?.tclass);
    "roce.grh.flow_label" Int label "flow label" tshark ["infiniband.grh.flowlabel"] c "grh.flow_label"
        filter one |d| int(roce(d)?.grh?.flow_label);
    "roce.grh.paylen" Int label "payload length" tshark ["infiniband.grh.paylen"] c "grh.paylen"
        filter one |d| int(roce(d)?.grh?.paylen);
    "roce.grh.nxthdr" Int label "next header" tshark ["infiniband.grh.nxthdr"] c "grh.nxthdr"
        filter one |d| int(roce(d)?.grh?.nxthdr);
    "roce.grh.hoplmt" Int label "hop limit" tshark ["infiniband.grh.hoplmt"] c "grh.hoplmt"
        filter one |d| int(roce(d)?.grh?.hoplmt);
    "roce.grh.sgid" Ip label "GRH:" column "grh_sgid" tshark ["infiniband.grh.sgid"] c "grh.sgid"
        filter one |d| roce(d)?.grh.map(|g| FieldValue::Ip(roce_ip(g.sgid_addr())));
    "roce.grh.dgid" Ip label "GRH:" column "grh_dgid" tshark ["infiniband.grh.dgid"] c "grh.dgid"
        filter one |d| roce(d)?.grh.map(|g| FieldValue::Ip(roce_ip(g.dgid_addr())));
    "roce.bth" Object label "BTH:"
        filter one |d| roce(d).map(|_| FieldValue::Present);
    "roce.bth.opcode" Int label "opcode" column "bth_opcode" tshark ["infiniband.bth.opcode"] c "bth.opcode"
        filter one |d| int(roce(d)?.bth.opcode);
    "roce.bth.opcode_name" Str label "BTH:" column "bth_opcode_name"
        filter one |d| Some(FieldValue::Str(roce(d)?.opcode_name()));
    "roce.bth.se" Bool label "SE" column "bth_se" tshark ["infiniband.bth.se"] c "bth.se"
        filter one |d| Some(FieldValue::Bool(roce(d)?.bth.se));
    "roce.bth.migreq" Bool label "MigReq" column "bth_migreq" tshark ["infiniband.bth.m"] c "bth.m"
        filter one |d| Some(FieldValue::Bool(roce(d)?.bth.migreq));
    "roce.bth.padcnt" Int label "PadCnt" column "bth_padcnt" tshark ["infiniband.bth.padcnt"] c "bth.padcnt"
        filter one |d| int(roce(d)?.bth.padcnt);
    "roce.bth.tver" Int label "TVer" column "bth_tver" tshark ["infiniband.bth.tver"] c "bth.tver"
        filter one |d| int(roce(d)?.bth.tver);
    "roce.bth.pkey" Int label "P_Key" column "bth_pkey" tshark ["infiniband.bth.p_key"] c "bth.pkey"
        filter one |d| int(roce(d)?.bth.pkey);
    "roce.bth.fecn" Bool label "FECN" column "bth_fecn" c "bth.fecn"
        filter one |d| Some(FieldValue::Bool(roce(d)?.bth.fecn));
    "roce.bth.becn" Bool label "BECN" column "bth_becn" c "bth.becn"
        filter one |d| Some(FieldValue::Bool(roce(d)?.bth.becn));
    "roce.bth.dest_qp" Int label "DestQP" column "bth_dest_qp" tshark ["infiniband.bth.destqp"] c "bth.dest_qp"
        filter one |d| int(roce(d)?.bth.dest_qp);
    "roce.bth.ackreq" Bool label "AckReq" column "bth_ackreq" tshark ["infiniband.bth.a"] c "bth.ackreq"
        filter one |d| Some(FieldValue::Bool(roce(d)?.bth.ackreq));
    "roce.bth.psn" Int label "PSN" column "bth_psn" tshark ["infiniband.bth.psn"] c "bth.psn"
        filter one |d| int(roce(d)?.bth.psn);
    // The tree shows the reserved bits ("reserved: ...") only when one is set.
    "roce.bth.resv6" Int column "bth_resv6" c "bth.resv6"
        filter one |d| int(roce(d)?.bth.resv6);
    "roce.bth.resv7" Int column "bth_resv7" tshark ["infiniband.bth.reserved7"] c "bth.resv7"
        filter one |d| int(roce(d)?.bth.resv7);
    "roce.rdeth" Object ext rdeth label "RDETH:" {
        "roce.rdeth.eecnxt" Int label "EE-Context" column "rdeth_eecnxt" tshark ["infiniband.rdeth.eecnxt"] c "rdeth.eecnxt"
            show "0x{:06x}" get |x| x.eecnxt;
    };
    "roce.deth" Object ext deth label "DETH:" {
        "roce.deth.qkey" Int label "Q_Key" column "deth_qkey" tshark ["infiniband.deth.q_key"] c "deth.qkey"
            show "0x{:08x}" get |x| x.qkey;
        "roce.deth.src_qp" Int label "SrcQP" column "deth_src_qp" tshark ["infiniband.deth.srcqp"] c "deth.src_qp"
            show "0x{:06x}" get |x| x.src_qp;
    };
    "roce.xrceth" Object ext xrceth label "XRCETH:" {
        "roce.xrceth.xrcsrq" Int label "XRC SRQ" column "xrceth_xrcsrq" c "xrceth.xrcsrq"
            show "0x{:06x}" get |x| x.xrcsrq;
    };
    "roce.reth" Object ext reth label "RETH:" {
        "roce.reth.va" Hex64 label "VA" column "reth_va" tshark ["infiniband.reth.va"] c "reth.va"
            show "0x{:016x}" get |x| x.va;
        "roce.reth.rkey" Int label "R_Key" column "reth_rkey" tshark ["infiniband.reth.r_key"] c "reth.rkey"
            show "0x{:08x}" get |x| x.rkey;
        "roce.reth.dma_len" Int label "DMA length" column "reth_dma_len" tshark ["infiniband.reth.dmalen"] c "reth.dma_len"
            show "{}" get |x| x.dma_len;
    };
    "roce.atomiceth" Object ext atomic_eth label "AtomicETH:" {
        "roce.atomiceth.va" Hex64 label "VA" column "atomiceth_va" tshark ["infiniband.reth.va"] c "atomic_eth.va"
            show "0x{:016x}" get |x| x.va;
        "roce.atomiceth.rkey" Int label "R_Key" column "atomiceth_rkey" tshark ["infiniband.reth.r_key"] c "atomic_eth.rkey"
            show "0x{:08x}" get |x| x.rkey;
        "roce.atomiceth.swap_add" Hex64 label "swap/add" column "atomiceth_swap_add" tshark ["infiniband.atomiceth.swapdt"] c "atomic_eth.swap_add"
            show "0x{:016x}" get |x| x.swap_add;
        "roce.atomiceth.compare" Hex64 label "compare" column "atomiceth_compare" tshark ["infiniband.atomiceth.cmpdt"] c "atomic_eth.compare"
            show "0x{:016x}" get |x| x.compare;
    };
    // The tree says the syndrome's kind and value in words ("RNR NAK, 1.28 ms").
    "roce.aeth" Object ext aeth label "AETH:"
        tree |out, x| {
            let mut words = x.describe().to_string();
            if x.kind() == AethKind::RnrNak {
                let _ = write!(words, " (timer code {}, {} us)", x.value(), rnr_timer_us(x.value()));
            }
            writeln!(out, "  AETH: syndrome 0x{:02x}: {words}; MSN {}", x.syndrome, x.msn)
        }
    {
        "roce.aeth.syndrome" Int label "syndrome" column "aeth_syndrome" tshark ["infiniband.aeth.syndrome"] c "aeth.syndrome"
            get |x| x.syndrome;
        "roce.aeth.kind" Str column "aeth_kind" tshark ["infiniband.aeth.syndrome.opcode"] c "aeth.kind"
            values (AETH_KINDS) get |x| x.kind().as_str();
        "roce.aeth.value" Int column "aeth_value"
            tshark [
                "infiniband.aeth.syndrome.credit_count",
                "infiniband.aeth.syndrome.timer",
                "infiniband.aeth.syndrome.error_code",
                "infiniband.aeth.syndrome.reserved_value"
            ]
            c "aeth.value"
            get |x| x.value();
        "roce.aeth.msn" Int label "MSN" column "aeth_msn" tshark ["infiniband.aeth.msn"] c "aeth.msn"
            get |x| x.msn;
    };
    "roce.atomicacketh" Object ext atomic_ack_eth label "AtomicAckETH:" {
        "roce.atomicacketh.orig" Hex64 label "original remote data" column "atomicacketh_orig" tshark ["infiniband.atomicacketh.origremdt"] c "atomic_ack_eth.orig"
            show "0x{:016x}" get |x| x.orig;
    };
    "roce.immdt" Object ext immdt label "ImmDt:" {
        "roce.immdt.data" Int label "ImmDt:" column "immdt_data" tshark ["infiniband.immdt"] c "immdt.data"
            show bare "0x{:08x}" get |x| x.data;
    };
    "roce.ieth" Object ext ieth label "IETH:" {
        "roce.ieth.rkey" Int label "R_Key" column "ieth_rkey" tshark ["infiniband.ieth"] c "ieth.rkey"
            show "0x{:08x}" get |x| x.rkey;
    };
    "roce.feth" Object ext feth label "FETH:" {
        "roce.feth.selectivity" Int label "selectivity level" column "feth_selectivity" c "feth.selectivity"
            show "{}" get |x| x.selectivity;
        "roce.feth.placement" Int label "placement type" column "feth_placement" c "feth.placement"
            show "{}" get |x| x.placement;
    };
    "roce.cm" Object label "MAD:"
        filter one |d| roce(d)?.mad().filter(Result::is_ok).map(|_| FieldValue::Present);
    "roce.payload_len" Int label "Payload:" column "payload_len" c "payload_len"
        filter one |d| usize_int(roce(d)?.payload_len);
    "roce.icrc" Object label "ICRC:"
        filter one |d| roce(d).map(|_| FieldValue::Present);
    "roce.icrc.value" Int label "ICRC: 0x" column "icrc_value" tshark ["infiniband.invariant.crc"] c "icrc"
        filter one |d| int(roce(d)?.icrc?);
    "roce.icrc.status" Str label "ICRC:" column "icrc_status" c "icrc_status"
        filter (ICRC_STATUSES) one |d| Some(FieldValue::Str(roce(d)?.icrc_status.as_str()));
    "roce.icrc.expected" Int label "should be" column "icrc_expected" c "icrc_computed"
        filter one |d| match roce(d)?.icrc_status {
            roce_parser::IcrcStatus::Bad { computed } => int(computed),
            _ => None,
        };
    "problems" Object label "Problem:";
    "problems.code" Problem label "Problem:" column "problems" c "problems"
        filter "problem" many |d| |v: Visit<'_>| packet(d).is_some_and(|p| p.problems.iter().any(|pr| v(FieldValue::Str(pr.code()))));
    "problems.message" Str label "Problem:";
    "stop" Object label "Stopped:|not decoded:"
        filter one |d| stop(d).map(|_| FieldValue::Present);
    "stop.layer" Str label "Stopped:|not decoded:" c "stop_layer"
        filter one |d| stop(d).map(|e| FieldValue::Str(e.layer.name()));
    "stop.kind" Str label "Stopped:|not decoded:"
        filter one |d| stop(d).map(|e| FieldValue::Str(e.kind.code()));
    "stop.offset" Int label "Stopped:|not decoded:" c "stop_offset"
        filter one |d| usize_int(stop(d)?.offset);
    "stop.needed" Int label "Stopped:|not decoded:" c "stop_needed";
    "stop.available" Int label "Stopped:|not decoded:" c "stop_available";
    "stop.message" Str label "Stopped:|not decoded:";
    "undecoded" Object label "not decoded:"
        filter one |d| d.packet.as_ref().err().map(|_| FieldValue::Present);
    "undecoded.reason" Str label "not decoded:" column "undecoded"
        filter one |d| d.packet.as_ref().err().map(|u| FieldValue::Str(u.reason()));
    "undecoded.message" Str label "not decoded:";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extended headers' JSON objects and `-V` lines, generated from the rows, against
    /// text typed here: every field of every header holds a value of its own, so a row whose
    /// `get` reads another field (which the filter and the JSON would then agree on) fails.
    #[test]
    fn ext_headers_show_their_own_fields() {
        use roce_parser::{
            AethRepr, AtomicAckEthRepr, AtomicEthRepr, DethRepr, FethRepr, IethRepr, ImmDtRepr,
            RdethRepr, RethRepr, XrcethRepr,
        };
        let h = ExtHeaders {
            rdeth: Some(RdethRepr { eecnxt: 0x0a0b0c, ..Default::default() }),
            deth: Some(DethRepr { qkey: 0x1122_3344, src_qp: 0x55_6677, ..Default::default() }),
            xrceth: Some(XrcethRepr { xrcsrq: 0x0d_0e0f, ..Default::default() }),
            reth: Some(RethRepr { va: 0x1111_2222_3333_4444, rkey: 0x5555_6666, dma_len: 7777 }),
            atomic_eth: Some(AtomicEthRepr {
                va: 0x0102_0304_0506_0708,
                rkey: 0x090a_0b0c,
                swap_add: 0x1112_1314_1516_1718,
                compare: 0x2122_2324_2526_2728,
            }),
            aeth: Some(AethRepr { syndrome: 0x2e, msn: 0x12_3456 }),
            atomic_ack_eth: Some(AtomicAckEthRepr { orig: 0x3132_3334_3536_3738 }),
            immdt: Some(ImmDtRepr { data: 0x4142_4344 }),
            ieth: Some(IethRepr { rkey: 0x5152_5354 }),
            feth: Some(FethRepr { selectivity: 3, placement: 2, ..Default::default() }),
        };
        let mut out = Vec::new();
        let mut o = Obj::open(&mut out);
        write_ext_headers_json(&mut o, &h);
        o.close();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"rdeth":{"eecnxt":658188},"deth":{"qkey":287454020,"src_qp":5596791},"#,
                r#""xrceth":{"xrcsrq":855567},"reth":{"va":"0x1111222233334444","#,
                r#""rkey":1431660134,"dma_len":7777},"atomiceth":{"va":"0x0102030405060708","#,
                r#""rkey":151653132,"swap_add":"0x1112131415161718","#,
                r#""compare":"0x2122232425262728"},"aeth":{"syndrome":46,"kind":"rnr_nak","#,
                r#""value":14,"msn":1193046},"atomicacketh":{"orig":"0x3132333435363738"},"#,
                r#""immdt":{"data":1094861636},"ieth":{"rkey":1364349780},"#,
                r#""feth":{"selectivity":3,"placement":2}}"#
            )
        );
        let line = |which| {
            let mut out = Vec::new();
            write_ext_header_tree(&mut out, &h, which).unwrap();
            String::from_utf8(out).unwrap()
        };
        for (which, want) in [
            (ExtHeader::Rdeth, "  RDETH: EE-Context 0x0a0b0c\n"),
            (ExtHeader::Deth, "  DETH: Q_Key 0x11223344, SrcQP 0x556677\n"),
            (ExtHeader::Xrceth, "  XRCETH: XRC SRQ 0x0d0e0f\n"),
            (ExtHeader::Reth, "  RETH: VA 0x1111222233334444, R_Key 0x55556666, DMA length 7777\n"),
            (
                ExtHeader::AtomicEth,
                "  AtomicETH: VA 0x0102030405060708, R_Key 0x090a0b0c, \
                 swap/add 0x1112131415161718, compare 0x2122232425262728\n",
            ),
            (ExtHeader::AtomicAckEth, "  AtomicAckETH: original remote data 0x3132333435363738\n"),
            (ExtHeader::ImmDt, "  ImmDt: 0x41424344\n"),
            (ExtHeader::Ieth, "  IETH: R_Key 0x51525354\n"),
            (ExtHeader::Feth, "  FETH: selectivity level 3, placement type 2\n"),
        ] {
            assert_eq!(line(which), want, "{which:?}");
        }
        let aeth = line(ExtHeader::Aeth);
        assert!(aeth.starts_with("  AETH: syndrome 0x2e: "), "{aeth}");
        assert!(aeth.contains("(timer code 14, ") && aeth.ends_with("; MSN 1193046\n"), "{aeth}");
        // A header the packet does not hold: no line.
        let none = ExtHeaders::default();
        let mut out = Vec::new();
        write_ext_header_tree(&mut out, &none, ExtHeader::Reth).unwrap();
        assert!(out.is_empty());
    }

    /// Paths and filter names are unique, a member follows its header, and every filter row
    /// is the catalog row of its name.
    #[test]
    fn rows_are_unique_and_headers_come_first() {
        for (i, f) in FIELDS.iter().enumerate() {
            let before = &FIELDS[..i];
            assert!(before.iter().all(|g| g.path != f.path), "{} twice", f.path);
            if let Some((parent, _)) = f.path.rsplit_once('.') {
                let p = before.iter().find(|g| g.path == parent);
                assert!(p.is_some_and(|p| p.kind == FieldKind::Object), "{}: no header", f.path);
            }
            assert_eq!(find_field(f.path).map(|g| g.path), Some(f.path));
        }
        let named: Vec<&str> = FIELDS.iter().filter_map(|f| f.filter).collect();
        let filters: Vec<&str> = FILTER_FIELDS.iter().map(|f| f.name).collect();
        assert_eq!(named, filters);
        for f in FILTER_FIELDS {
            let row = find_field(f.name).unwrap();
            assert_eq!((row.path, row.kind), (f.path, f.kind), "{}", f.name);
        }
        assert!(find_field("bth.dest_qpn").is_none());
    }
}
