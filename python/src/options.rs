//! The keyword options of `stats()`, `check()`, `read()`, `read_batches()` and `Checker()`:
//! the command line's flags with `_` for `-` and the unit in the name (`retx_timeout_us` is
//! `--retx-timeout`), converted to the library's options here and nowhere else. A name that
//! is not an option, or a value out of range, is an `OptionError` (a `ValueError`) naming it,
//! as the command line refuses the flag: never silently ignored.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use roce_analysis::filter::DisplayFilter;
use roce_analysis::TapSetup;
use roce_conformance::{CnpPacing, ModelOptions, Options, RuleSet, Shard};
use roce_parser::Config;

use crate::OptionError;

/// Which options a function takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// `read()`, `parse()`: the parser's (`port`) and the filter.
    Frames,
    /// `read_batches()`: the parser's, the filter and the connection model's.
    Batches,
    /// `stats()`: the parser's, the filter, the connection model's, `shard`.
    Stats,
    /// `check()`, `Checker()`: all of them.
    Check,
}

/// The options given, converted.
pub struct Opts {
    pub cfg: Config,
    pub filter: Option<DisplayFilter>,
    pub shard: Shard,
    pub check: Options,
    /// Several captures (a list of paths): how their copies are matched and their clocks
    /// set (`tap_window`, `tap_offset`).
    pub taps: TapSetup,
}

const FRAMES: &[&str] = &["port", "filter", "conn"];
const MODEL: &[&str] = &["pmtu", "max_flows", "reconnect_idle_ms"];
const STATS: &[&str] = &["shard", "tap_window", "tap_offset"];
const CHECK: &[&str] = &[
    "assume_complete",
    "reorder_window_us",
    "retx_timeout_us",
    "qp_timeout",
    "cnp_min_interval",
    "rnr_timer",
    "expect_dscp",
    "expect_cnp_dscp",
    "expect_pcp",
    "enable",
    "disable",
];

fn known(takes: Takes) -> Vec<&'static str> {
    let mut k = FRAMES.to_vec();
    if takes != Takes::Frames {
        k.extend_from_slice(MODEL);
    }
    if matches!(takes, Takes::Stats | Takes::Check) {
        k.extend_from_slice(STATS);
    }
    if takes == Takes::Check {
        k.extend_from_slice(CHECK);
    }
    k
}

fn bad(msg: String) -> PyErr {
    OptionError::new_err(msg)
}

/// The closest known name, for "did you mean".
fn nearest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                let sub = prev[j] + usize::from(ca != *cb);
                cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    }
    known.iter().map(|k| (distance(name, k), *k)).filter(|(d, _)| *d <= 3).min().map(|(_, k)| k)
}

fn int<T: TryFrom<i128>>(name: &str, v: &Bound<'_, PyAny>, lo: i128, hi: i128) -> PyResult<T> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad(format!("{name}: expected an integer, got a bool")));
    }
    let n: i128 = v
        .extract()
        .map_err(|_| bad(format!("{name}: expected an integer, got {}", type_name(v))))?;
    if n < lo || n > hi {
        return Err(bad(format!("{name}: {n} is out of range ({lo}..={hi})")));
    }
    T::try_from(n).map_err(|_| bad(format!("{name}: {n} is out of range")))
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

fn boolean(name: &str, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    v.extract::<bool>()
        .map_err(|_| bad(format!("{name}: expected True or False, got {}", type_name(v))))
}

fn string(name: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if !v.is_instance_of::<PyString>() {
        return Err(bad(format!("{name}: expected a str, got {}", type_name(v))));
    }
    v.extract::<String>().map_err(|e| bad(format!("{name}: {e}")))
}

/// A str or a list/tuple of them (`enable="REQ-PSN-GAP"` or `enable=["A", "B"]`).
fn strings(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if v.is_instance_of::<PyString>() {
        return Ok(vec![string(name, v)?]);
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        return v.try_iter()?.map(|x| string(name, &x?)).collect();
    }
    Err(bad(format!("{name}: expected a str or a list of str, got {}", type_name(v))))
}

/// Microseconds or milliseconds as the checker's nanoseconds (what does not fit is refused).
fn scaled(name: &str, v: &Bound<'_, PyAny>, unit_ns: u64) -> PyResult<u64> {
    let n: u64 = int(name, v, 0, i128::from(u64::MAX))?;
    n.checked_mul(unit_ns).ok_or_else(|| {
        bad(format!(
            "{name}: {n} does not fit in the checker's nanosecond clock (at most {})",
            u64::MAX / unit_ns
        ))
    })
}

/// The parser's configuration of `port` (an int or a list of up to 4 ints, the first
/// replacing 4791), as `--port` repeated.
fn ports(v: &Bound<'_, PyAny>) -> PyResult<Config> {
    let list: Vec<u16> = if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        v.try_iter()?.map(|x| int("port", &x?, 1, 65535)).collect::<PyResult<_>>()?
    } else {
        vec![int("port", v, 1, 65535)?]
    };
    port_config(&list)
}

/// The parser's configuration for these UDP ports (the first replaces 4791).
pub fn port_config(list: &[u16]) -> PyResult<Config> {
    let mut cfg = Config::default();
    let Some((&first, rest)) = list.split_first() else {
        return Err(bad("port: give at least one UDP port".into()));
    };
    if rest.len() > cfg.extra_udp_ports.len() {
        return Err(bad(format!(
            "port: at most {} UDP ports are decoded as RoCEv2, {} given",
            cfg.extra_udp_ports.len() + 1,
            list.len()
        )));
    }
    cfg.udp_port = first;
    for (slot, &p) in cfg.extra_udp_ports.iter_mut().zip(rest) {
        *slot = p;
    }
    Ok(cfg)
}

/// A time as the command line writes it (`"1.5ms"`, `"300us"`; ns without a unit) or an
/// int of nanoseconds.
fn time_ns(name: &str, v: &Bound<'_, PyAny>) -> PyResult<i64> {
    if v.is_instance_of::<PyString>() {
        let s = string(name, v)?;
        return roce_analysis::parse_time_ns(&s).map_err(|e| bad(format!("{name}: {e}")));
    }
    int(name, v, i128::from(i64::MIN), i128::from(i64::MAX))
}

/// `tap_window`: the time within which a packet at another tap is a copy (positive).
fn tap_window(v: &Bound<'_, PyAny>) -> PyResult<u64> {
    match time_ns("tap_window", v)? {
        n if n > 0 => Ok(n.unsigned_abs()),
        n => Err(bad(format!("tap_window: {n} ns: the window must be longer than 0"))),
    }
}

/// `tap_offset`: a dict from a file (its 1-based place as an int, or its path as given) to
/// its clock offset (a time as [`time_ns`] takes).
fn tap_offsets(v: &Bound<'_, PyAny>) -> PyResult<Vec<(String, i64)>> {
    let d = v.cast::<PyDict>().map_err(|_| {
        bad(format!(
            "tap_offset: expected a dict {{file: time}} (file its place from 1 or its path), got {}",
            type_name(v)
        ))
    })?;
    let mut out = Vec::with_capacity(d.len());
    for (k, t) in d.iter() {
        let which = if k.is_instance_of::<PyString>() {
            string("tap_offset", &k)?
        } else if let Ok(n) = int::<u64>("tap_offset", &k, 1, i128::from(u32::MAX)) {
            n.to_string()
        } else {
            let p = crate::frames::path_of(k.py(), &k)
                .map_err(|_| bad(format!("tap_offset: a key is a {}", type_name(&k))))?;
            p.display().to_string()
        };
        out.push((which, time_ns("tap_offset", &t)?));
    }
    Ok(out)
}

/// Converts the keyword options of a function that takes `takes`.
pub fn parse(takes: Takes, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Opts> {
    let known = known(takes);
    let mut o = Opts {
        cfg: Config::default(),
        filter: None,
        shard: Shard::ALL,
        check: Options::default(),
        taps: TapSetup::default(),
    };
    let (mut filter, mut conn) = (None::<String>, None::<String>);
    let (mut enable, mut disable) = (Vec::new(), Vec::new());
    let Some(kwargs) = kwargs else { return Ok(o) };
    for (k, v) in kwargs.iter() {
        let name: String = k.extract()?;
        if !known.contains(&name.as_str()) {
            let hint =
                nearest(&name, &known).map_or(String::new(), |n| format!(" (did you mean {n}?)"));
            return Err(bad(format!(
                "{name} is not an option here{hint}; the options are: {}",
                known.join(", ")
            )));
        }
        if v.is_none() {
            continue;
        }
        let v = &v;
        match name.as_str() {
            "port" => o.cfg = ports(v)?,
            "filter" => filter = Some(string("filter", v)?),
            "conn" => conn = Some(string("conn", v)?),
            "pmtu" => {
                let m: u32 = int("pmtu", v, 0, i128::from(u32::MAX))?;
                if ![256, 512, 1024, 2048, 4096].contains(&m) {
                    return Err(bad(format!(
                        "pmtu: {m} is not a PMTU: use 256, 512, 1024, 2048 or 4096"
                    )));
                }
                o.check.pmtu = Some(m);
            }
            "max_flows" => o.check.max_flows = int("max_flows", v, 1, i128::from(u32::MAX))?,
            "reconnect_idle_ms" => o.check.reconnect_idle_ns = scaled(&name, v, 1_000_000)?,
            "shard" => {
                let s = string("shard", v)?;
                o.shard = s.parse().map_err(|e| bad(format!("shard: {e}")))?;
            }
            "tap_window" => o.taps.window_ns = tap_window(v)?,
            "tap_offset" => o.taps.offsets = tap_offsets(v)?,
            "assume_complete" => o.check.assume_complete = boolean(&name, v)?,
            "reorder_window_us" => o.check.reorder_window_ns = scaled(&name, v, 1000)?,
            "retx_timeout_us" => o.check.retx_timeout_ns = scaled(&name, v, 1000)?,
            "qp_timeout" => o.check.qp_timeout = Some(int(&name, v, 1, 31)?),
            "rnr_timer" => o.check.rnr_timer = Some(int(&name, v, 0, 31)?),
            "expect_dscp" => o.check.expect_dscp = Some(int(&name, v, 0, 63)?),
            "expect_cnp_dscp" => o.check.expect_cnp_dscp = Some(int(&name, v, 0, 63)?),
            "expect_pcp" => o.check.expect_pcp = Some(int(&name, v, 0, 7)?),
            "cnp_min_interval" => {
                let s = string(&name, v)?;
                o.check.cnp_min_interval =
                    Some(CnpPacing::parse(&s).map_err(|e| bad(format!("cnp_min_interval: {e}")))?);
            }
            "enable" => enable = strings(&name, v)?,
            "disable" => disable = strings(&name, v)?,
            _ => unreachable!("every known option is matched"),
        }
    }
    if !enable.is_empty() || !disable.is_empty() {
        let mut rules = RuleSet::default();
        if !enable.is_empty() {
            rules.disable_all();
        }
        enable
            .iter()
            .try_for_each(|r| rules.enable(r))
            .and_then(|()| disable.iter().try_for_each(|r| rules.disable(r)))
            .map_err(bad)?;
        o.check.rules = rules;
    }
    let filter = filter
        .map(|f| DisplayFilter::parse(&f).map_err(|e| bad(format!("filter: {e}"))))
        .transpose()?;
    let conn =
        conn.map(|c| DisplayFilter::conn(&c).map_err(|e| bad(format!("conn: {e}")))).transpose()?;
    o.filter = match (filter, conn) {
        (Some(f), Some(c)) => Some(f.and(c)),
        (f, c) => f.or(c),
    };
    Ok(o)
}

impl Opts {
    /// The connection model's options (`stats`).
    pub fn model(&self) -> ModelOptions {
        self.check.model()
    }
}
