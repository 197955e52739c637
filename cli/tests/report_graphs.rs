//! The report's graphs as a reader gets them, in headless Chromium: on every real capture and
//! on the suite, the marks of each graphed connection spread over at least half of its
//! plot's width and, in each panel, of its height (idle stretches folded, PSNs relative);
//! zoomed into a time range (the page's own script, driven by the `#zoom=` link it writes),
//! a graph shows exactly the marks whose frames fall in that range, the frames' times taken
//! from the capture itself; with JavaScript off the page is the static view, every graph
//! whole; and real mouse input (the DevTools protocol): a drag zooms, a double-click resets.
//! The spread figures are printed (`--nocapture`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
use common::browser;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_inspect::internal::input::for_each_frame;
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

fn captures() -> Vec<PathBuf> {
    let mut v = common::graphed::sample_and_suite(&root());
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
    let (shown, total) = marks_in_view(&name, &zoomed, lo, hi, &t);
    println!("zoom {name}: {shown} of {total} marks in {lo}-{hi} ns");
    assert!(shown > 0 && shown < total, "{name}: the range holds {shown} of {total} marks");
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

/// Chromium driven through the DevTools protocol on a pipe (`--remote-debugging-pipe`: it
/// reads commands on fd 3 and answers on fd 4, here two FIFOs), for real mouse input.
struct Devtools {
    child: std::process::Child,
    to: std::fs::File,
    from: std::sync::mpsc::Receiver<serde_json::Value>,
    session: String,
    id: u64,
}

impl Devtools {
    fn open(chromium: &str, page: &Path, dir: &Path) -> Devtools {
        use std::io::Read as _;
        let (cmd, out) = (dir.join("cdp-in"), dir.join("cdp-out"));
        for f in [&cmd, &out] {
            let _ = std::fs::remove_file(f);
            assert!(Command::new("mkfifo").arg(f).status().unwrap().success());
        }
        let url = format!("file://{}", page.canonicalize().unwrap().display());
        let child = Command::new("sh")
            .arg("-c")
            .arg(
                "exec \"$0\" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
                 --no-first-run --remote-debugging-pipe --window-size=1200,1000 \
                 --user-data-dir=\"$3\" \"$4\" 3<\"$1\" 4>\"$2\" 2>/dev/null",
            )
            .arg(chromium)
            .arg(&cmd)
            .arg(&out)
            .arg(dir.join("profile-cdp"))
            .arg(&url)
            .spawn()
            .unwrap();
        let to = std::fs::OpenOptions::new().write(true).open(&cmd).unwrap();
        let mut reader = std::fs::File::open(&out).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            while let Ok(n) = reader.read(&mut chunk) {
                if n == 0 {
                    return;
                }
                buf.extend_from_slice(&chunk[..n]);
                while let Some(end) = buf.iter().position(|&b| b == 0) {
                    let msg: Vec<u8> = buf.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice(&msg[..end]) {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut d = Devtools { child, to, from: rx, session: String::new(), id: 0 };
        // The page the command line opened, once loaded.
        for _ in 0..100 {
            let t = d.call("Target.getTargets", serde_json::json!({}));
            let page = t["targetInfos"].as_array().unwrap().iter().find(|i| {
                i["type"] == "page" && i["url"].as_str().is_some_and(|u| u.starts_with("file:"))
            });
            if let Some(p) = page {
                let id = p["targetId"].clone();
                let a = d.call(
                    "Target.attachToTarget",
                    serde_json::json!({"targetId": id, "flatten": true}),
                );
                d.session = a["sessionId"].as_str().unwrap().to_string();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(!d.session.is_empty(), "no page in Chromium");
        for _ in 0..100 {
            if d.eval("document.documentElement.getAttribute('data-ready')") == "1" {
                return d;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the page's script did not run");
    }

    /// Sends `method` (to the page once attached) and waits for its answer.
    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::Write as _;
        self.id += 1;
        let mut m = serde_json::json!({"id": self.id, "method": method, "params": params});
        if !self.session.is_empty() {
            m["sessionId"] = serde_json::Value::String(self.session.clone());
        }
        let mut bytes = serde_json::to_vec(&m).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        loop {
            let v = self
                .from
                .recv_timeout(std::time::Duration::from_secs(30))
                .expect("Chromium answers");
            if v["id"] == self.id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// The value of a JavaScript expression in the page, as a string.
    fn eval(&mut self, expr: &str) -> String {
        let r = self.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": format!("String({expr})"), "returnByValue": true}),
        );
        r["result"]["value"].as_str().unwrap_or("").to_string()
    }

    fn mouse(&mut self, kind: &str, x: f64, y: f64, clicks: u32) {
        let buttons = if kind == "mouseReleased" { 0 } else { 1 };
        self.call(
            "Input.dispatchMouseEvent",
            serde_json::json!({"type": kind, "x": x, "y": y, "button": "left",
                               "buttons": buttons, "clickCount": clicks}),
        );
    }
}

impl Drop for Devtools {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The marks a zoomed graph draws inside its plot are exactly those with a frame in
/// [lo, hi] (ns after the graph's start); (drawn, all).
fn marks_in_view(
    name: &str,
    g: &GraphDom,
    lo: u64,
    hi: u64,
    t: &dyn Fn(&u64) -> u64,
) -> (usize, usize) {
    let (mut shown, mut total) = (0, 0);
    for p in &g.panels {
        for m in &p.marks {
            // Drawn inside the plot: any part of it between its left and right edges.
            let drawn = m.x_end >= g.left - 0.01 && m.x <= g.right + 0.01;
            let ts: Vec<u64> = m.frames.iter().map(t).collect();
            let (a, b) = (*ts.iter().min().unwrap(), *ts.iter().max().unwrap());
            let wanted = b >= lo && a <= hi;
            assert_eq!(
                drawn, wanted,
                "{name}: {} of frames {:?} (t {a}-{b} ns, x {}-{}) against the range {lo}-{hi} ns",
                m.class, m.frames, m.x, m.x_end
            );
            shown += usize::from(drawn);
            total += 1;
        }
    }
    (shown, total)
}

/// The time (ns after the graph's start) at pixel `x` of a graph's time axis (`data-tx`).
fn time_at(tx: &[f64], x: f64) -> f64 {
    for w in tx.chunks(2).collect::<Vec<_>>().windows(2) {
        let ((xa, ta), (xb, tb)) = ((w[0][0], w[0][1]), (w[1][0], w[1][1]));
        if x <= xb {
            return if xb > xa { ta + (tb - ta) * (x - xa) / (xb - xa) } else { ta };
        }
    }
    tx[tx.len() - 1]
}

/// Real mouse input: a drag across the middle of the rping failure's graph (or, without the
/// real captures, of a suite capture's) zooms into that time range: the address names it,
/// the marks inside the plot are exactly those whose frames fall in it, the bytes chart
/// follows; a double-click brings back the whole graph; `+` zooms into the middle half,
/// Escape resets, ctrl+wheel zooms around the pointer.
#[test]
fn drag_zooms_and_double_click_resets() {
    let Some(chromium) = browser::chromium() else { return };
    let dir = browser::scratch("graphs-drag");
    let cap = match real::real_dir() {
        Some(real) => real.join(RPING_FAILURE),
        None => root().join("pcaps/conformance/req-gbn-retx-same.pcap"),
    };
    let name = cap.file_name().unwrap().to_string_lossy().to_string();
    let page = dir.join("drag.html");
    let written = report(&cap, &page);
    let g = &graphs(&written)[0];
    let times = frame_times(&cap);
    let t = |f: &u64| times[f] - g.t0;
    let mut d = Devtools::open(chromium, &page, &dir);
    let at = d.eval("(function(){var s=document.getElementById('g1');s.scrollIntoView();var r=s.getBoundingClientRect();return r.left+','+r.top;})()");
    let (left, top) = at
        .split_once(',')
        .map(|(a, b)| (a.parse::<f64>().unwrap(), b.parse::<f64>().unwrap()))
        .unwrap();
    // From 30% to 60% of the plot's width, across the first panel's middle (a flat box:
    // time only).
    let (xa, xb) = (g.left + (g.right - g.left) * 0.3, g.left + (g.right - g.left) * 0.6);
    let y = (g.panels[0].top + g.panels[0].bottom) / 2.0;
    d.mouse("mousePressed", left + xa, top + y, 1);
    for k in 1..=10 {
        d.mouse("mouseMoved", left + xa + (xb - xa) * f64::from(k) / 10.0, top + y + 1.0, 0);
    }
    d.mouse("mouseReleased", left + xb, top + y + 1.0, 1);
    let hash = d.eval("location.hash");
    let view = d.eval("document.getElementById('g1').getAttribute('data-view')");
    let tx = nums(attr(&written[written.find("<svg class=\"seq").unwrap()..], "data-tx").unwrap());
    let (lo, hi) = view
        .split_once('-')
        .map(|(a, b)| (a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()))
        .unwrap();
    // The view is the dragged range, to a pixel's time.
    let px = |x: f64| time_at(&tx, x);
    assert!(
        (lo as f64 - px(xa)).abs() <= (px(xa + 1.0) - px(xa - 1.0)).abs() + 1.0,
        "{name}: from {lo}, dragged from {}",
        px(xa)
    );
    assert!(
        (hi as f64 - px(xb)).abs() <= (px(xb + 1.0) - px(xb - 1.0)).abs() + 1.0,
        "{name}: to {hi}, dragged to {}",
        px(xb)
    );
    assert_eq!(hash, format!("#zoom=g1:{view}"), "{name}: the address");
    let dom = d.eval("document.documentElement.outerHTML");
    let zoomed = graphs(&dom).into_iter().find(|z| z.id == "g1").unwrap();
    let (shown, total) = marks_in_view(&name, &zoomed, lo, hi, &t);
    println!("drag {name}: {shown} of {total} marks in {lo}-{hi} ns");
    assert!(shown > 0 && shown < total, "{name}: the drag shows {shown} of {total} marks");
    // The connection's bytes chart follows its graph.
    let bytes =
        d.eval("document.querySelector('svg.bytes[data-of=\"g1\"]').getAttribute('data-view')");
    assert_eq!(bytes, view, "{name}: the bytes chart's view");
    // A double-click: the whole graph again, every mark where it was written.
    d.mouse("mousePressed", left + xa, top + y, 1);
    d.mouse("mouseReleased", left + xa, top + y, 1);
    d.mouse("mousePressed", left + xa, top + y, 2);
    d.mouse("mouseReleased", left + xa, top + y, 2);
    let dom = d.eval("document.documentElement.outerHTML");
    let back = graphs(&dom).into_iter().find(|z| z.id == "g1").unwrap();
    let pos = |g: &GraphDom| -> Vec<(String, f64)> {
        g.panels
            .iter()
            .flat_map(|p| &p.marks)
            .map(|m| (m.class.clone(), (m.x * 100.0).round() / 100.0))
            .collect()
    };
    assert_eq!(pos(&back), pos(g), "{name}: reset");
    assert_eq!(d.eval("location.hash"), "", "{name}: the address after the reset");
    // Keys on the focused graph: `+` zooms into the middle half, Escape resets.
    let whole = d.eval("document.getElementById('g1').getAttribute('data-view')");
    let (w0, w1) = whole
        .split_once('-')
        .map(|(a, b)| (a.parse::<f64>().unwrap(), b.parse::<f64>().unwrap()))
        .unwrap();
    assert_eq!((w0, w1), (0.0, tx[tx.len() - 1]), "{name}: the whole view");
    d.call(
        "Input.dispatchKeyEvent",
        serde_json::json!({"type": "keyDown", "key": "+", "text": "+"}),
    );
    let half = d.eval("document.getElementById('g1').getAttribute('data-view')");
    let (h0, h1) = half
        .split_once('-')
        .map(|(a, b)| (a.parse::<f64>().unwrap(), b.parse::<f64>().unwrap()))
        .unwrap();
    let quarter = (g.right - g.left) / 4.0;
    assert!(
        (h0 - px(g.left + quarter)).abs() <= 1.0 && (h1 - px(g.right - quarter)).abs() <= 1.0,
        "{name}: + gave {half}"
    );
    d.call("Input.dispatchKeyEvent", serde_json::json!({"type": "keyDown", "key": "Escape", "code": "Escape", "windowsVirtualKeyCode": 27}));
    assert_eq!(
        d.eval("document.getElementById('g1').getAttribute('data-view')"),
        whole,
        "{name}: Escape"
    );
    // Ctrl + wheel zooms in around the pointer: the time under it stays under it.
    let xm = g.left + (g.right - g.left) * 0.7;
    d.call(
        "Input.dispatchMouseEvent",
        serde_json::json!({"type": "mouseWheel", "x": left + xm, "y": top + y, "deltaX": 0, "deltaY": -120, "modifiers": 2}),
    );
    let wheel = d.eval("document.getElementById('g1').getAttribute('data-view')");
    let (z0, z1) = wheel
        .split_once('-')
        .map(|(a, b)| (a.parse::<f64>().unwrap(), b.parse::<f64>().unwrap()))
        .unwrap();
    // (Both edges move in; in time, a fold in view may keep most of the span.)
    assert!(z0 > w0 && z1 < w1, "{name}: ctrl+wheel gave {wheel}");
    assert!(z0 < px(xm) && px(xm) < z1, "{name}: ctrl+wheel gave {wheel} around {}", px(xm));
}
