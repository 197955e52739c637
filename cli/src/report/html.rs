//! The page: one self-contained HTML file. Every string that came from the capture (and every
//! message made from it) goes through [`esc`]; the Content-Security-Policy allows nothing but
//! the page's own style and script (by hash): no network, no other script, no plug-in.

use std::fmt::Write as _;

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

/// Escapes text for HTML text and (double- or single-quoted) attribute values.
pub fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.bytes().any(|b| {
        matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'') || b < 0x20 && b != b'\n' && b != b'\t'
    }) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '\n' | '\t' => o.push(c),
            c if (c as u32) < 0x20 => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    std::borrow::Cow::Owned(o)
}

pub const STYLE: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
h3{font-size:1em;font-family:monospace}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3;cursor:pointer}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.error td:first-child{color:#b00}tr.warning td:first-child{color:#a60}
.legend span{margin-right:1em}.sw{display:inline-block;width:10px;height:10px;margin-right:3px;vertical-align:middle}
svg{display:block;margin:.3em 0;background:#fff}
svg text{font:11px monospace;fill:#333}svg .yl{text-anchor:end}svg .tl{text-anchor:middle}
svg .ptitle{font-weight:bold}
svg .frame{fill:none;stroke:#999}svg .tick{stroke:#999}
svg .req{stroke:#1f5fbf;stroke-width:2;fill:none}
svg .ack{fill:none;stroke:#2a9d3a;stroke-width:1.2}
svg .m-retx{stroke:#d62728;fill:#d62728;stroke-width:2}
svg .m-nak{fill:#ff7f0e}svg .m-rnr{fill:#9467bd}svg .m-fatal{fill:#000}
svg .m-nak line,svg .m-rnr line,svg .m-fatal line{stroke:#888}
svg .m-ce{fill:#e6b800}svg .m-cnp{fill:#17becf;stroke:#0b6b75}
svg .m-read,svg .m-atomic{stroke:#8c564b;fill:#8c564b;stroke-dasharray:3 2;opacity:.45}
svg .m-atomic{stroke:#e377c2;fill:#e377c2}
svg .m-cm line{stroke:#7f7f7f;stroke-dasharray:2 3}svg .m-cm text{fill:#555}
svg .m-began line,svg .m-ended line{stroke:#444;stroke-width:1.5;stroke-dasharray:6 3}
svg .m-finding path{stroke:#b00;stroke-width:2.5;fill:none}svg .m-finding .fring{fill:none;stroke:#b00;stroke-width:1.5}
svg .m-finding.sev-warning path,svg .m-finding.sev-warning .fring{stroke:#d98c00}
svg .b-new{fill:#1f5fbf}svg .b-retx{fill:#d62728}
svg .w-nak{fill:#ff7f0e}svg .w-cnp{fill:#17becf}svg .w-ce{fill:#e6b800}svg .w-icrc{fill:#555}
.muted{color:#777}.scroll{max-height:22em;overflow:auto;border:1px solid #eee;display:inline-block;max-width:100%}
.lg{margin-right:1em;font-weight:bold}.lg[data-k=req]{color:#1f5fbf}.lg[data-k=ack]{color:#2a9d3a}
.lg[data-k=m-retx]{color:#d62728}.lg[data-k=m-nak]{color:#ff7f0e}.lg[data-k=m-rnr]{color:#9467bd}
.lg[data-k=m-ce]{color:#c9a000}.lg[data-k=m-cnp]{color:#17becf}.lg[data-k=m-read]{color:#8c564b}
.lg[data-k=m-atomic]{color:#e377c2}.lg[data-k=m-finding]{color:#b00}.lg[data-k=m-cm]{color:#7f7f7f}
";

pub const SCRIPT: &str = "(function(){
var t=document.getElementById('ftable');
if(t){var body=t.tBodies[0],rs=document.getElementById('frule'),cs=document.getElementById('fconn');
function apply(){var r=rs.value,c=cs.value;for(var i=0;i<body.rows.length;i++){var w=body.rows[i];w.hidden=(r!==''&&w.dataset.rule!==r)||(c!==''&&w.dataset.conn!==c);}}
rs.addEventListener('change',apply);cs.addEventListener('change',apply);
var hs=t.tHead.rows[0].cells;
Array.prototype.forEach.call(hs,function(h,k){h.addEventListener('click',function(){
var rows=Array.prototype.slice.call(body.rows),d=h.dataset.dir==='a'?-1:1;h.dataset.dir=d>0?'a':'d';
rows.sort(function(a,b){var x=a.cells[k].textContent,y=b.cells[k].textContent,nx=parseFloat(x),ny=parseFloat(y);
if(!isNaN(nx)&&!isNaN(ny))return (nx-ny)*d;return x<y?-d:x>y?d:0;});
rows.forEach(function(r){body.appendChild(r);});});});}
document.documentElement.setAttribute('data-ready','1');
})();";

/// The CSP source of `text`: `'sha256-'` and its SHA-256 in standard base64 (padded). A hash,
/// not a nonce: the same capture gives the same file.
fn hash_source(text: &str) -> String {
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text)))
}

/// The Content-Security-Policy of the page: nothing from anywhere, but the page's own style
/// and script.
pub fn csp() -> String {
    format!(
        "default-src 'none'; style-src {}; script-src {}; img-src 'none'; \
         font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'",
        hash_source(STYLE),
        hash_source(SCRIPT)
    )
}

/// Opens the page (up to `<body>`), titled `title`.
pub fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title><style>{STYLE}</style></head>\n<body>\n",
        csp(),
        esc(title)
    );
}

/// Closes the page, with its script.
pub fn tail(out: &mut String) {
    let _ = write!(out, "\n<script>{SCRIPT}</script>\n</body></html>\n");
}

/// A table row of cells, escaped; cells that are numbers are right-aligned.
pub fn row(out: &mut String, attrs: &str, cells: &[&str]) {
    let _ = write!(out, "<tr{attrs}>");
    for c in cells {
        let num = !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'%');
        let _ = write!(out, "<td{}>{}</td>", if num { " class=\"n\"" } else { "" }, esc(c));
    }
    out.push_str("</tr>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(esc("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
        assert_eq!(esc("plain"), "plain");
        assert_eq!(esc("x\u{1}y"), "x\u{fffd}y");
    }

    /// FIPS 180-2's "abc" and the empty string, as a CSP source (the digests in base64).
    #[test]
    fn hash_sources() {
        assert_eq!(hash_source("abc"), "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='");
        assert_eq!(hash_source(""), "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
    }
}
