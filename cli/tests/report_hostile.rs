//! Every byte of a capture is hostile: a pcapng whose section, interface and packet options
//! hold markup (`<script>`, `"><img onerror=...>`, quotes, a closing `</table>`) gives a
//! report whose text shows them and whose DOM, as Chromium renders it, holds no element or
//! attribute the report's template does not make.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod common;
use common::{browser, pcapng};

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_roce-inspect");

const HOSTILE: [&str; 4] = [
    "<script>alert(1)</script>",
    "\"><img src=x onerror=alert(2)>",
    "' onmouseover='alert(3)' x='",
    "</td></tr></table><svg onload=alert(4)><style>body{display:none}</style>",
];

fn hostile_capture(dir: &Path) -> PathBuf {
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../pcaps/conformance/req-gbn-retx-same.pcap");
    let frames = pcapng::frames(&sample);
    let mut w = pcapng::Writer::new();
    let h: Vec<&[u8]> = HOSTILE.iter().map(|s| s.as_bytes()).collect();
    w.section(false, &[(1, h[0]), (2, h[1]), (3, h[2]), (4, h[3])]);
    w.interface(1, 0, &[(2, h[0]), (3, h[1]), (1, h[3]), (9, &[9])]);
    for (i, (ts, len, data)) in frames.iter().enumerate() {
        let c = h[i % h.len()];
        w.packet(0, *ts, data, *len, &[(1, c)]);
    }
    let p = dir.join("hostile.pcapng");
    std::fs::write(&p, &w.out).unwrap();
    p
}

/// The template's elements and attributes: anything else came from the capture.
const TAGS: [&str; 31] = [
    "html", "div", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "table",
    "thead", "tbody", "tr", "th", "td", "select", "option", "section", "span", "svg", "g", "path",
    "line", "circle", "rect", "polyline", "text", "script", "button",
];

fn assert_template_only(dom: &str) {
    let els = browser::elements(dom);
    assert!(els.len() > 50, "{} elements", els.len());
    let scripts = els.iter().filter(|(t, _)| t == "script").count();
    assert_eq!(scripts, 1, "script elements");
    let styles = els.iter().filter(|(t, _)| t == "style").count();
    assert_eq!(styles, 1, "style elements");
    for (tag, attrs) in &els {
        assert!(TAGS.contains(&tag.as_str()), "element <{tag}> is not the template's");
        for a in attrs {
            assert!(!a.starts_with("on"), "<{tag} {a}=...>: an event handler");
            assert!(
                [
                    "class",
                    "id",
                    "lang",
                    "charset",
                    "http-equiv",
                    "content",
                    "name",
                    "value",
                    "hidden",
                    "xmlns",
                    "viewbox",
                    "width",
                    "height",
                    "role",
                    "x",
                    "y",
                    "x1",
                    "y1",
                    "x2",
                    "y2",
                    "cx",
                    "cy",
                    "r",
                    "d",
                    "points",
                    "data-conn",
                    "data-rule",
                    "data-n",
                    "data-k",
                    "data-v",
                    "data-ready",
                    "data-dir",
                    "data-t0",
                    "data-tx",
                    "data-p",
                    "data-view",
                    "data-of",
                    "dx",
                    "tabindex"
                ]
                .contains(&a.as_str()),
                "<{tag} {a}=...>: an attribute the template does not write"
            );
        }
    }
}

#[test]
fn hostile_strings_are_text() {
    let dir = browser::scratch("hostile-report");
    let cap = hostile_capture(&dir);
    let out = dir.join("r.html");
    let o = Command::new(BIN).arg("report").arg(&cap).arg("-o").arg(&out).output().unwrap();
    assert!(o.status.code().unwrap() <= 1, "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).unwrap();
    for h in HOSTILE {
        assert!(!html.contains(h), "{h} reached the page unescaped");
        let escaped = h
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;");
        assert!(html.contains(&escaped), "{h} is not shown (escaped) in the page");
    }
    assert_template_only(&html);
    let Some(chromium) = browser::chromium() else { return };
    let r = browser::dump_dom(chromium, &out, &dir);
    assert!(r.console.is_empty(), "console: {:?}", r.console);
    assert!(r.dom.contains("data-ready=\"1\""), "the page's script did not run");
    assert_template_only(&r.dom);
    // The strings are there, as text.
    assert!(r.dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}
