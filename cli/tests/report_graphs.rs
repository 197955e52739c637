//! The report's graphs as a reader gets them, in headless Chromium: on every real capture and
//! on the suite, the marks of each graphed connection spread over at least half of its
//! plot's width and, in each panel, of its height (idle stretches folded, PSNs relative);
//! zoomed into a time range (the page's own script, driven by the `#zoom=` link it writes),
//! a graph shows exactly the marks whose frames fall in that range, the frames' times taken
//! from the capture itself; with JavaScript off the page is the static view, every graph
//! whole. The spread figures are printed (`--nocapture`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
use common::browser;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_inspect::input::for_each_frame;
use roce_parser::Config;

#[path = "../../testdata/real.rs"]
mod real;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

/// Runs Chromium on `page` (with `fragment` after its URL) with `extra` arguments; its DOM
/// after scripts ran, or `--screenshot`'s.
fn chromium_run(
    chromium: &str,
    page: &Path,
    fragment: &str,
    dir: &Path,
    extra: &[String],
) -> browser::Rendered {
    let url = format!("file://{}{fragment}", page.canonicalize().unwrap().display());
    let out = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        .args(["--no-first-run", "--disable-extensions", "--disable-background-networking"])
        .args(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000"])
        .arg(format!("--user-data-dir={}", dir.join("profile-graphs").display()))
        .args(extra)
        .arg(&url)
        .output()
        .expect("running chromium");
    assert!(out.status.success(), "chromium {url}: {}", String::from_utf8_lossy(&out.stderr));
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Refused to") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    browser::Rendered { dom: String::from_utf8(out.stdout).unwrap(), console }
}

/// The DOM of `page` opened at `fragment` (`#zoom=...`).
fn dump_dom_at(chromium: &str, page: &Path, fragment: &str, dir: &Path) -> browser::Rendered {
    chromium_run(chromium, page, fragment, dir, &["--dump-dom".into()])
}

/// The page with its script refused, as a reader with JavaScript off gets it: the same page
/// but its Content-Security-Policy allows no script (Chromium's own switch for scripts,
/// `--blink-settings=scriptEnabled=false`, also stops `--dump-dom` and `--screenshot`).
fn without_script(page: &Path) -> PathBuf {
    let html = std::fs::read_to_string(page).unwrap();
    let i = html.find("script-src 'sha256-").unwrap();
    let j = i + html[i..].find(';').unwrap();
    let out = page.with_extension("nojs.html");
    std::fs::write(&out, format!("{}script-src 'none'{}", &html[..i], &html[j..])).unwrap();
    out
}

fn dump_dom_nojs(chromium: &str, page: &Path, dir: &Path) -> browser::Rendered {
    chromium_run(chromium, &without_script(page), "", dir, &["--dump-dom".into()])
}

fn screenshot_nojs(chromium: &str, page: &Path, png: &Path, dir: &Path, size: (u32, u32)) {
    let args = [
        "--hide-scrollbars".to_string(),
        format!("--window-size={},{}", size.0, size.1),
        format!("--screenshot={}", png.display()),
    ];
    chromium_run(chromium, &without_script(page), "", dir, &args);
    assert!(png.is_file(), "no screenshot");
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn report(path: &Path, out: &Path) -> String {
    let o = Command::new(BIN).arg("report").arg(path).arg("-o").arg(out).output().unwrap();
    assert!(
        o.status.code().unwrap() <= 1,
        "report {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(out).unwrap()
}

/// The value of attribute `name` in the start tag that `s` begins with.
fn attr<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    let tag = &s[..s.find('>')?];
    let k = format!(" {name}=\"");
    let i = tag.find(&k)? + k.len();
    Some(&tag[i..i + tag[i..].find('"')?])
}

fn nums(s: &str) -> Vec<f64> {
    s.split([' ', ',']).filter(|x| !x.is_empty()).map(|x| x.parse().unwrap()).collect()
}

/// The text from `<svg` at the start of `s` to its own `</svg>` (nested ones counted).
fn svg_element(s: &str) -> &str {
    let mut depth = 0;
    let mut i = 0;
    loop {
        let open = s[i..].find("<svg").map(|k| k + i);
        let close = s[i..].find("</svg>").map(|k| k + i).unwrap();
        match open {
            Some(o) if o < close => {
                depth += 1;
                i = o + 4;
            }
            _ => {
                depth -= 1;
                i = close + 6;
                if depth == 0 {
                    return &s[..i];
                }
            }
        }
    }
}

/// A mark drawn in a panel: its class, the frames its hover text names, and its x (the
/// point it is placed at: the first circle, line or path it is drawn with).
#[derive(Debug)]
struct Drawn {
    class: String,
    frames: Vec<u64>,
    x: f64,
    /// A span's end (READ, atomic, runs), else `x`.
    x_end: f64,
}

/// One panel of a graph as the DOM has it.
#[derive(Debug, Default)]
struct PanelDom {
    /// Its plot's bottom and top (y).
    bottom: f64,
    top: f64,
    /// The data's points (requests, ACK line, marks of packets and findings).
    xs: Vec<f64>,
    ys: Vec<f64>,
    marks: Vec<Drawn>,
}

/// One sequence graph of a page.
#[derive(Debug)]
struct GraphDom {
    id: String,
    conn: String,
    t0: u64,
    left: f64,
    right: f64,
    panels: Vec<PanelDom>,
}

/// Classes of the marks of packets and findings (not the CM and incarnation lines, which
/// span the whole height, nor the folds).
const DATA: [&str; 9] =
    ["m-retx", "m-nak", "m-rnr", "m-fatal", "m-ce", "m-cnp", "m-read", "m-atomic", "m-finding"];

/// The (x, y) points of the elements in `s` (circles' centres, lines' ends, the absolute
/// points of paths and polylines).
fn points(s: &str) -> Vec<(f64, f64)> {
    let mut v = Vec::new();
    for el in s.split('<').skip(1) {
        let el = format!("<{el}");
        if el.starts_with("<circle") {
            v.push((
                attr(&el, "cx").unwrap().parse().unwrap(),
                attr(&el, "cy").unwrap().parse().unwrap(),
            ));
        } else if el.starts_with("<line") {
            let g = |k| attr(&el, k).unwrap().parse::<f64>().unwrap();
            v.push((g("x1"), g("y1")));
            v.push((g("x2"), g("y2")));
        } else if el.starts_with("<polyline") {
            let n = nums(attr(&el, "points").unwrap());
            v.extend(n.chunks(2).map(|c| (c[0], c[1])));
        } else if el.starts_with("<path") {
            let d = attr(&el, "d").unwrap();
            // Absolute moves and lines only: relative steps draw the glyph around them.
            let mut cmd = ' ';
            let mut pending: Vec<f64> = Vec::new();
            for tok in tokens(d) {
                match tok {
                    Tok::Cmd(c) => {
                        cmd = c;
                        pending.clear();
                    }
                    Tok::Num(n) if cmd == 'M' || cmd == 'L' => {
                        pending.push(n);
                        if pending.len() == 2 {
                            v.push((pending[0], pending[1]));
                            pending.clear();
                        }
                    }
                    Tok::Num(_) => {}
                }
            }
        }
    }
    v
}

enum Tok {
    Cmd(char),
    Num(f64),
}

fn tokens(d: &str) -> Vec<Tok> {
    let mut v = Vec::new();
    let mut num = String::new();
    let flush = |num: &mut String, v: &mut Vec<Tok>| {
        if !num.is_empty() {
            v.push(Tok::Num(num.parse().unwrap()));
            num.clear();
        }
    };
    for c in d.chars() {
        if c.is_ascii_alphabetic() && c != 'e' {
            flush(&mut num, &mut v);
            v.push(Tok::Cmd(c));
        } else if c == '-' && !num.ends_with('e') {
            flush(&mut num, &mut v);
            num.push(c);
        } else if c == ' ' || c == ',' {
            flush(&mut num, &mut v);
        } else {
            num.push(c);
        }
    }
    flush(&mut num, &mut v);
    v
}

/// The frames the first `frame N` or `frames A-B` (a range: both ends) of a hover text
/// names.
fn frames_of(title: &str) -> Vec<u64> {
    let Some(i) = title.find("frame") else { return Vec::new() };
    let rest = title[i + 5..].trim_start_matches('s').trim_start();
    let spec: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    spec.split('-').filter(|p| !p.is_empty()).map(|p| p.parse().unwrap()).collect()
}

fn graphs(dom: &str) -> Vec<GraphDom> {
    let mut out = Vec::new();
    // `class="seq"` as written, `class="seq zoomable"` once the script ran.
    for (i, _) in dom.match_indices("<svg class=\"seq") {
        let svg = svg_element(&dom[i..]);
        let tx = nums(attr(svg, "data-tx").unwrap());
        let mut g = GraphDom {
            id: attr(svg, "id").unwrap().to_string(),
            conn: attr(svg, "data-conn").unwrap().replace("&lt;", "<").replace("&gt;", ">"),
            t0: attr(svg, "data-t0").unwrap().parse().unwrap(),
            left: tx[0],
            right: tx[tx.len() - 2],
            panels: Vec::new(),
        };
        for (k, _) in svg.match_indices("<g class=\"panel\"") {
            let p = &svg[k..];
            let pm = nums(attr(p, "data-p").unwrap());
            let plot = svg_element(&p[p.find("<svg class=\"plot\"").unwrap()..]);
            let mut pd = PanelDom { bottom: pm[0], top: pm[pm.len() - 2], ..PanelDom::default() };
            // The requests and the ACK line.
            for tag in ["<path class=\"req\"", "<polyline class=\"ack\""] {
                if let Some(j) = plot.find(tag) {
                    let el = &plot[j..];
                    let el = &el[..el.find('>').unwrap() + 1];
                    for (x, y) in points(el) {
                        pd.xs.push(x);
                        pd.ys.push(y);
                    }
                }
            }
            for (j, _) in plot.match_indices("<g class=\"") {
                let g_el = &plot[j..];
                let class = attr(g_el, "class").unwrap().split(' ').next().unwrap().to_string();
                let body = &g_el[..g_el.find("</g>").unwrap()];
                let title =
                    &body[body.find("<title>").unwrap() + 7..body.find("</title>").unwrap()];
                let after = &body[body.find("</title>").unwrap()..];
                let pts = points(after);
                if DATA.contains(&class.as_str()) {
                    for (x, y) in &pts {
                        pd.xs.push(*x);
                        pd.ys.push(*y);
                    }
                }
                if class == "fold" {
                    continue;
                }
                let x = pts.first().map(|p| p.0).unwrap();
                let x_end = pts.iter().map(|p| p.0).fold(x, f64::max);
                let frames = if class == "m-finding" {
                    // Each cited frame drawn here: one line of its hover text.
                    title.lines().skip(1).flat_map(frames_of).collect()
                } else {
                    frames_of(title)
                };
                assert!(!frames.is_empty(), "{class}: no frame in {title:?}");
                pd.marks.push(Drawn { class, frames, x, x_end });
            }
            g.panels.push(pd);
        }
        out.push(g);
    }
    out
}

fn spread(v: &[f64], lo: f64, hi: f64) -> Option<f64> {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (max > min).then(|| (max - min) / (hi - lo))
}

/// The spread of a page's graphs: per graph, its marks' x spread over the plot's width and
/// the least y spread of its panels; `None` where everything drawn is at one time (or, in
/// every panel, one PSN): nothing to spread.
fn spreads(dom: &str) -> Vec<(String, Option<f64>, Option<f64>)> {
    graphs(dom)
        .iter()
        .map(|g| {
            let xs: Vec<f64> = g.panels.iter().flat_map(|p| p.xs.iter().copied()).collect();
            let x = spread(&xs, g.left, g.right);
            let y = g
                .panels
                .iter()
                .filter_map(|p| spread(&p.ys, p.top, p.bottom))
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
            (g.conn.clone(), x, y)
        })
        .collect()
}

const SUITE: [&str; 8] = [
    "req-gbn-retx-same",
    "req-gbn-new-psn",
    "req-rnr-wait",
    "cc-cnp",
    "clean-psn-wrap-interleaved",
    "req-read-retry",
    "clean-recoveries",
    "cm-reconnect-faults",
];

fn captures() -> Vec<PathBuf> {
    let mut v = vec![root().join("pcaps/sample.pcap")];
    v.extend(SUITE.iter().map(|n| root().join(format!("pcaps/conformance/{n}.pcap"))));
    if let Some(real) = real::real_dir() {
        v.extend(real::ground_truth(&real).into_iter().map(|(f, _)| real.join(f)));
    }
    v
}

/// The rping failure: one connection whose DREQ comes 9.3 s after everything else.
const RPING_FAILURE: &str = "sanderw71_SoftRoce_rping_3072_faillire.pcapng";

#[test]
fn marks_spread_over_half_the_plot() {
    let Some(chromium) = browser::chromium() else { return };
    let dir = browser::scratch("graphs-spread");
    let mut graphed = 0;
    let mut rping = false;
    for cap in captures() {
        let name = cap.file_name().unwrap().to_string_lossy().to_string();
        let page = dir.join(format!("{name}.html"));
        report(&cap, &page);
        let r = browser::dump_dom(chromium, &page, &dir);
        assert!(r.console.is_empty(), "{name}: console: {:?}", r.console);
        for (conn, x, y) in spreads(&r.dom) {
            graphed += 1;
            rping |= name == RPING_FAILURE;
            let pct =
                |v: Option<f64>| v.map_or("one value".into(), |v| format!("{:.1}%", v * 100.0));
            println!("spread {name} {conn}: x {} y {}", pct(x), pct(y));
            if let Some(x) = x {
                assert!(x >= 0.5, "{name}: {conn}: marks over {:.1}% of the width", x * 100.0);
            }
            if let Some(y) = y {
                assert!(
                    y >= 0.5,
                    "{name}: {conn}: marks over {:.1}% of a panel's height",
                    y * 100.0
                );
            }
        }
    }
    assert!(graphed >= 9, "{graphed} graphs");
    if real::real_dir().is_some() {
        assert!(rping, "the rping failure capture gave no graph");
    }
}

/// Frame number -> time (ns), read from the capture.
fn frame_times(cap: &Path) -> BTreeMap<u64, u64> {
    let mut m = BTreeMap::new();
    for_each_frame(&cap.into(), &Config::default(), |d| {
        m.insert(d.frame.number, d.frame.ts_ns);
    })
    .unwrap();
    m
}

/// Zooms the first graph of `cap`'s page into a time range around the middle of its marks
/// (bounds halfway between two marks' frames, a microsecond or more apart) and checks that
/// the marks drawn inside the plot are exactly those with a frame in the range.
fn zoom_case(chromium: &str, dir: &Path, cap: &Path) {
    let name = cap.file_name().unwrap().to_string_lossy().to_string();
    let page = dir.join(format!("{name}.html"));
    let written = report(cap, &page);
    let times = frame_times(cap);
    let g = &graphs(&written)[0];
    let t = |f: &u64| times[f] - g.t0;
    let mut at: Vec<u64> =
        g.panels.iter().flat_map(|p| &p.marks).flat_map(|m| m.frames.iter().map(t)).collect();
    at.sort_unstable();
    at.dedup();
    assert!(at.len() >= 4, "{name}: {} mark times", at.len());
    // Bounds in gaps of at least 1 us, around the middle half of the marks' times.
    let gap = |from: usize, dir: isize| -> u64 {
        let mut i = from as isize;
        loop {
            let (a, b) = (at[i as usize], at[(i + 1) as usize]);
            if b - a >= 1_000 {
                return (a + b) / 2;
            }
            i += dir;
            assert!(i >= 0 && (i as usize) + 1 < at.len(), "{name}: no gap for a bound");
        }
    };
    let lo = gap(at.len() / 4, -1);
    let hi = gap(at.len() * 3 / 4 - 1, 1);
    let url_page = dir.join(format!("{name}.zoom.html"));
    std::fs::copy(&page, &url_page).unwrap();
    let r = dump_dom_at(chromium, &url_page, &format!("#zoom={}:{lo}-{hi}", g.id), dir);
    assert!(r.console.is_empty(), "{name}: console: {:?}", r.console);
    let zoomed = graphs(&r.dom).into_iter().find(|z| z.id == g.id).unwrap();
    let view = r.dom[r.dom.find(&format!("id=\"{}\"", g.id)).unwrap()..].to_string();
    assert_eq!(
        attr(&format!("<svg {view}"), "data-view"),
        Some(format!("{lo}-{hi}").as_str()),
        "{name}: the view the script shows"
    );
    let (mut shown, mut inside) = (0, 0);
    for p in &zoomed.panels {
        for m in &p.marks {
            // Drawn inside the plot: any part of it between its left and right edges.
            let drawn = m.x_end >= zoomed.left - 0.01 && m.x <= zoomed.right + 0.01;
            let ts: Vec<u64> = m.frames.iter().map(t).collect();
            let (a, b) = (*ts.iter().min().unwrap(), *ts.iter().max().unwrap());
            let wanted = b >= lo && a <= hi;
            assert_eq!(
                drawn, wanted,
                "{name}: {} of frames {:?} (t {a}-{b} ns, x {}-{}) against the range {lo}-{hi} ns",
                m.class, m.frames, m.x, m.x_end
            );
            shown += usize::from(drawn);
            inside += usize::from(wanted);
        }
    }
    let total: usize = zoomed.panels.iter().map(|p| p.marks.len()).sum();
    println!("zoom {name}: {shown} of {total} marks in {lo}-{hi} ns");
    assert!(inside > 0 && inside < total, "{name}: the range holds {inside} of {total} marks");
}

#[test]
fn zoom_shows_the_marks_of_its_range() {
    let Some(chromium) = browser::chromium() else { return };
    let dir = browser::scratch("graphs-zoom");
    for n in ["req-gbn-retx-same", "cc-cnp", "req-rnr-wait", "cm-reconnect-faults"] {
        zoom_case(chromium, &dir, &root().join(format!("pcaps/conformance/{n}.pcap")));
    }
    if let Some(real) = real::real_dir() {
        zoom_case(chromium, &dir, &real.join(RPING_FAILURE));
    }
}

/// With JavaScript off: no zoom bar, every graph whole and readable (the same spread), the
/// marks as written.
#[test]
fn static_view_without_javascript() {
    let Some(chromium) = browser::chromium() else { return };
    let dir = browser::scratch("graphs-nojs");
    let mut caps = vec![root().join("pcaps/conformance/req-gbn-retx-same.pcap")];
    if let Some(real) = real::real_dir() {
        caps.push(real.join(RPING_FAILURE));
    }
    for cap in caps {
        let name = cap.file_name().unwrap().to_string_lossy().to_string();
        let page = dir.join(format!("{name}.html"));
        let written = report(&cap, &page);
        let on = browser::dump_dom(chromium, &page, &dir);
        assert!(on.dom.contains("class=\"zoombar"), "{name}: the script made no zoom bar");
        let off = dump_dom_nojs(chromium, &page, &dir);
        assert!(
            off.console
                .iter()
                .any(|l| l.contains("violates the following Content Security Policy")),
            "{name}: the script was not refused: {:?}",
            off.console
        );
        assert!(!off.dom.contains("data-ready=\"1\""), "{name}: a script ran");
        assert!(!off.dom.contains("class=\"zoombar"), "{name}: a zoom bar without the script");
        let (w, o) = (graphs(&written), graphs(&off.dom));
        assert!(!o.is_empty(), "{name}: no graph");
        assert_eq!(spreads(&off.dom), spreads(&written), "{name}: the static view");
        for (a, b) in w.iter().zip(&o) {
            let marks = |g: &GraphDom| -> Vec<(String, Vec<u64>)> {
                g.panels
                    .iter()
                    .flat_map(|p| &p.marks)
                    .map(|m| (m.class.clone(), m.frames.clone()))
                    .collect()
            };
            assert_eq!(marks(a), marks(b), "{name}: {}", a.conn);
        }
        let png = dir.join(format!("{name}.png"));
        screenshot_nojs(chromium, &page, &png, &dir, (1000, 1400));
        assert!(browser::colours(&png, 64) >= 8, "{name}: blank without JavaScript?");
    }
}
