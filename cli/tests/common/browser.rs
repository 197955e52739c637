//! Headless Chromium for the report tests: found on PATH (`chromium`, `chromium-browser`,
//! `google-chrome`); missing, the test skips with a note, except under CI=true, where it fails
//! (.ci/run installs Debian's chromium).
#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The browser's program, or `None` after a note (outside CI).
pub fn chromium() -> Option<&'static str> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let ok = Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success());
        if ok {
            return Some(name);
        }
    }
    assert!(
        !ci(),
        "CI=true but no chromium on PATH: .ci/run installs it (apt-get install chromium)"
    );
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let _ = writeln!(
        std::io::stderr(),
        "note: skipped `{test}`: it needs headless Chromium (apt-get install chromium)"
    );
    None
}

fn base_args(profile: &Path) -> Vec<String> {
    vec![
        "--headless".into(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-dev-shm-usage".into(),
        "--no-first-run".into(),
        "--disable-extensions".into(),
        "--disable-background-networking".into(),
        "--enable-logging=stderr".into(),
        "--v=0".into(),
        format!("--user-data-dir={}", profile.display()),
    ]
}

/// What Chromium made of a page: the DOM after scripts ran, and the console lines it logged.
pub struct Rendered {
    pub dom: String,
    pub console: Vec<String>,
}

/// Loads `page` and dumps its DOM.
pub fn dump_dom(browser: &str, page: &Path, scratch: &Path) -> Rendered {
    let profile = scratch.join("profile-dom");
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let out = Command::new(browser)
        .args(base_args(&profile))
        .arg("--virtual-time-budget=3000")
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("running chromium");
    assert!(
        out.status.success(),
        "chromium --dump-dom {url} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Refused to") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    Rendered { dom: String::from_utf8(out.stdout).unwrap(), console }
}

/// Takes a screenshot of `page` into `png`.
pub fn screenshot(browser: &str, page: &Path, png: &Path, scratch: &Path, size: (u32, u32)) {
    let profile = scratch.join("profile-shot");
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let out = Command::new(browser)
        .args(base_args(&profile))
        .arg("--hide-scrollbars")
        .arg(format!("--window-size={},{}", size.0, size.1))
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .expect("running chromium");
    assert!(
        out.status.success() && png.is_file(),
        "chromium --screenshot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The pixels of an 8-bit RGB or RGBA PNG (what Chromium writes): (width, height, channels,
/// rows unfiltered).
pub fn png_pixels(path: &Path) -> (usize, usize, usize, Vec<u8>) {
    use std::io::Read as _;
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let mut i = 8;
    let (mut w, mut h, mut ch) = (0usize, 0usize, 0usize);
    let mut idat = Vec::new();
    while i + 8 <= b.len() {
        let len = u32::from_be_bytes(b[i..i + 4].try_into().unwrap()) as usize;
        let ty = &b[i + 4..i + 8];
        let data = &b[i + 8..i + 8 + len];
        match ty {
            b"IHDR" => {
                w = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                h = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!(data[8], 8, "bit depth");
                ch = match data[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("PNG colour type {t}"),
                };
                assert_eq!(data[12], 0, "interlaced PNG");
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        i += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..]).read_to_end(&mut raw).unwrap();
    let stride = w * ch;
    let mut out = vec![0u8; stride * h];
    for y in 0..h {
        let f = raw[y * (stride + 1)];
        let src = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for x in 0..stride {
            let a = if x >= ch { out[y * stride + x - ch] } else { 0 };
            let up = if y > 0 { out[(y - 1) * stride + x] } else { 0 };
            let c = if x >= ch && y > 0 { out[(y - 1) * stride + x - ch] } else { 0 };
            let v = match f {
                0 => src[x],
                1 => src[x].wrapping_add(a),
                2 => src[x].wrapping_add(up),
                3 => src[x].wrapping_add(((u16::from(a) + u16::from(up)) / 2) as u8),
                4 => {
                    let p = i16::from(a) + i16::from(up) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(up)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    let pred = if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        up
                    } else {
                        c
                    };
                    src[x].wrapping_add(pred)
                }
                f => panic!("PNG filter {f}"),
            };
            out[y * stride + x] = v;
        }
    }
    (w, h, ch, out)
}

/// Distinct colours among the pixels (up to `cap`).
pub fn colours(path: &Path, cap: usize) -> usize {
    let (_, _, ch, px) = png_pixels(path);
    let mut seen = std::collections::HashSet::new();
    for p in px.chunks(ch) {
        seen.insert(p[..3].to_vec());
        if seen.len() >= cap {
            break;
        }
    }
    seen.len()
}

/// A fresh scratch folder under the target directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The elements of a serialized DOM: (tag, attribute names), in order.
pub fn elements(dom: &str) -> Vec<(String, Vec<String>)> {
    let mut v = Vec::new();
    let b = dom.as_bytes();
    let mut i = 0;
    while let Some(off) = dom[i..].find('<') {
        let s = i + off + 1;
        i = s;
        if b.get(s).is_none_or(|c| !c.is_ascii_alphabetic()) {
            continue;
        }
        let end = tag_end(dom, s);
        let inner = &dom[s..end];
        let name_len =
            inner.find(|c: char| c.is_whitespace() || c == '/' || c == '>').unwrap_or(inner.len());
        let name = inner[..name_len].to_ascii_lowercase();
        v.push((name.clone(), attr_names(&inner[name_len..])));
        i = end;
        // Raw text: the next `<` inside is not a tag.
        if name == "script" || name == "style" {
            let close = format!("</{name}");
            i = dom[i..].find(&close).map_or(dom.len(), |k| i + k + 1);
        }
    }
    v
}

/// The end of a start tag (the `>` outside quotes).
fn tag_end(s: &str, from: usize) -> usize {
    let mut q: Option<char> = None;
    for (k, c) in s[from..].char_indices() {
        match (q, c) {
            (None, '"' | '\'') => q = Some(c),
            (Some(x), c) if c == x => q = None,
            (None, '>') => return from + k,
            _ => {}
        }
    }
    s.len()
}

fn attr_names(s: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut rest = s;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            return v;
        }
        let n =
            rest.find(|c: char| c == '=' || c.is_whitespace() || c == '/').unwrap_or(rest.len());
        v.push(rest[..n].to_ascii_lowercase());
        rest = &rest[n..];
        if let Some(r) = rest.strip_prefix('=') {
            let r = r.trim_start();
            rest = match r.chars().next() {
                Some(q @ ('"' | '\'')) => r[1..].find(q).map_or("", |e| &r[e + 2..]),
                _ => r.find(char::is_whitespace).map_or("", |e| &r[e..]),
            };
        }
    }
}
