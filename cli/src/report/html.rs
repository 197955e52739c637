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
svg .ptitle{font-weight:bold}svg .ytitle{text-anchor:end;fill:#555}
svg .fold rect{fill:#f2f2f2;stroke:#aaa;stroke-dasharray:2 2}svg .fold text{font-size:9px;text-anchor:middle;fill:#555}
svg .zbox{fill:#1f5fbf;fill-opacity:.12;stroke:#1f5fbf;stroke-dasharray:3 2}svg.zoomable{cursor:crosshair}
.zoombar button{font:12px system-ui,sans-serif;margin-right:.4em}
svg .frame{fill:none;stroke:#999}svg .tick{stroke:#999}
svg .req{stroke:#1f5fbf;stroke-width:2;fill:none}
svg .ack{fill:none;stroke:#2a9d3a;stroke-width:1.2}
svg .m-retx{stroke:#d62728;fill:#d62728;stroke-width:2}
svg .m-nak{fill:#ff7f0e}svg .m-rnr{fill:#9467bd}svg .m-fatal{fill:#000}
svg .m-nak line,svg .m-rnr line,svg .m-fatal line{stroke:#888}
svg .m-ce path{stroke:#e6b800;stroke-width:3;stroke-linecap:square;fill:none}svg .m-cnp{fill:#17becf;stroke:#0b6b75}
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

pub const SCRIPT: &str = r#"(function(){
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
var NS='http://www.w3.org/2000/svg',graphs={},groups={};
function nums(s){return (s||'').trim().split(/[\s,]+/).map(Number);}
function pairs(s){var v=nums(s),o=[];for(var i=0;i+1<v.length;i+=2)o.push([v[i],v[i+1]]);return o;}
function lerp(ps,a,v){var b=1-a,n=ps.length-1;if(v<=ps[0][a])return ps[0][b];if(v>=ps[n][a])return ps[n][b];
for(var i=1;i<=n;i++){var p=ps[i-1],q=ps[i];if(v<q[a]){var d=q[a]-p[a];return d>0?p[b]+(q[b]-p[b])*(v-p[a])/d:p[b];}}return ps[n][b];}
function fmtT(ns,span){var g=Math.max(span,Math.abs(ns)),u=g>=1e9?[1e9,'s']:g>=1e6?[1e6,'ms']:g>=1e3?[1e3,'\u00b5s']:[1,'ns'];
var d=Math.min(6,Math.max(0,1-Math.floor(Math.log10(Math.max(span/u[0]/4,1e-9)))));return (ns/u[0]).toFixed(d)+' '+u[1];}
function nice(span,n,min){var r=Math.max(span/n,min),p=Math.pow(10,Math.floor(Math.log10(r))),m=r/p;return (m<=1?1:m<=2?2:m<=5?5:10)*p;}
function ticks(ps,lo,hi,S,per,gap){var out=[];for(var i=0;i+1<ps.length;i+=2){var pa=ps[i][0],va=ps[i][1],pb=ps[i+1][0],vb=ps[i+1][1];
var a=Math.max(Math.min(pa,pb),lo),b=Math.min(Math.max(pa,pb),hi);if(a>b)continue;
var V=function(x){return pb===pa?va:va+(x-pa)*(vb-va)/(pb-pa);},v0=Math.min(V(a),V(b)),v1=Math.max(V(a),V(b));
var add=function(x,v,st){if(!out.length||Math.abs(out[out.length-1][0]-x)>=gap)out.push([x,v,st]);};
if(vb<=va){add(S(pa),va,0);continue;}
var st=nice(v1-v0,Math.floor(Math.abs(S(b)-S(a))/per)+1,1);
for(var v=Math.ceil(v0/st)*st;v<=v1;v+=st)add(S(pa+(v-va)*(pb-pa)/(vb-va)),v,st);}return out;}
function r3(v){return String(Math.round(v*1000)/1000);}
function el(parent,tag,at,text){var e=document.createElementNS(NS,tag);for(var k in at)e.setAttribute(k,typeof at[k]==='number'?r3(at[k]):at[k]);if(text!==undefined)e.textContent=text;parent.appendChild(e);return e;}
function ends(P){return [P.ym[P.ym.length-1][0],P.ym[0][0]];}
function draw(G){var sx=(G.R-G.L)/(G.xb-G.xa);function X(x){return G.L+(x-G.xa)*sx;}
G.panels.forEach(function(P){var e2=ends(P),top=e2[0],bot=e2[1],sy=(bot-top)/(P.yb-P.ya);function Y(y){return top+(y-P.ya)*sy;}
P.els.forEach(function(o){var e=o.e,a=o.a;
if(o.d!==undefined){var cmd='',i=0;e.setAttribute('d',o.d.replace(/[A-Za-z]|-?[\d.]+(?:e[-+]?\d+)?/g,function(m){if(/[A-Za-z]/.test(m)){cmd=m;i=0;return m;}if(cmd!=='M'&&cmd!=='L')return m;return r3(i++%2?Y(+m):X(+m));}));}
else if(o.p){var s=[];for(var j=0;j+1<o.p.length;j+=2)s.push(r3(X(o.p[j]))+','+r3(Y(o.p[j+1])));e.setAttribute('points',s.join(' '));}
else{if('x1'in a){e.setAttribute('x1',r3(X(a.x1)));e.setAttribute('x2',r3(X(a.x2)));e.setAttribute('y1',r3(Y(a.y1)));e.setAttribute('y2',r3(Y(a.y2)));}
if('cx'in a){e.setAttribute('cx',r3(X(a.cx)));e.setAttribute('cy',r3(Y(a.cy)));}
if('x'in a)e.setAttribute('x',r3(X(a.x)));
if('width'in a){e.setAttribute('width',r3(Math.max(.5,a.width*sx)));e.setAttribute('y',r3(Y(a.y)));e.setAttribute('height',r3(Math.max(.5,a.height*sy)));}
else if(o.yf)e.setAttribute('y',r3(Y(a.y)));}});
var ax=P.axis;while(ax.firstChild)ax.removeChild(ax.firstChild);
ticks(G.tx,G.xa,G.xb,X,120,70).forEach(function(k){el(ax,'line',{'class':'tick',x1:k[0],y1:bot,x2:k[0],y2:bot+4});el(ax,'text',{'class':'tl',x:k[0],y:bot+16},fmtT(k[1],k[2]>0?k[2]*4:k[1]));});
ticks(P.ym,P.ya,P.yb,Y,40,14).forEach(function(k){el(ax,'line',{'class':'tick',x1:G.L-4,y1:k[0],x2:G.L,y2:k[0]});el(ax,'text',{'class':'yl',x:G.L-6,y:k[0]+3},String(Math.round(k[1])));});});
G.svg.setAttribute('data-view',Math.round(lerp(G.tx,0,G.xa))+'-'+Math.round(lerp(G.tx,0,G.xb)));}
function setView(G,xa,xb,keep){var full=G.R-G.L,w=Math.min(full,Math.max(xb-xa,full/1e7));xa=Math.min(Math.max(xa,G.L),G.R-w);
groups[G.id].forEach(function(H){H.xa=xa;H.xb=xa+w;draw(H);});
if(!keep)try{history.replaceState(null,'',G.xa<=G.L&&G.xb>=G.R?location.pathname+location.search:'#zoom='+G.id+':'+Math.round(lerp(G.tx,0,G.xa))+'-'+Math.round(lerp(G.tx,0,G.xb)));}catch(e){}}
function setY(P,ya,yb){var e2=ends(P),top=e2[0],bot=e2[1],h=Math.min(bot-top,Math.max(yb-ya,1e-4));ya=Math.min(Math.max(ya,top),bot-h);P.ya=ya;P.yb=ya+h;}
function reset(G){G.panels.forEach(function(P){var e2=ends(P);P.ya=e2[0];P.yb=e2[1];});setView(G,G.L,G.R);}
function zoomAt(G,x,f){var o=G.xa+(x-G.L)*(G.xb-G.xa)/(G.R-G.L);setView(G,o-(o-G.xa)*f,o+(G.xb-o)*f);}
function setup(svg){var tx=pairs(svg.getAttribute('data-tx'));if(tx.length<2)return;
var G={svg:svg,id:svg.id||svg.getAttribute('data-of'),tx:tx,L:tx[0][0],R:tx[tx.length-1][0],panels:[]};G.xa=G.L;G.xb=G.R;
if(!groups[G.id])groups[G.id]=[];groups[G.id].push(G);if(svg.id)graphs[svg.id]=G;
Array.prototype.forEach.call(svg.querySelectorAll('g.panel'),function(g){var P={ym:pairs(g.getAttribute('data-p')),axis:g.querySelector('g.axis'),els:[]},e2=ends(P);P.ya=e2[0];P.yb=e2[1];
Array.prototype.forEach.call(g.querySelectorAll('svg.plot line,svg.plot circle,svg.plot rect,svg.plot text,svg.plot path,svg.plot polyline'),function(e){var o={e:e,a:{},yf:e.getAttribute('class')==='yf'};
if(e.tagName==='path')o.d=e.getAttribute('d');else if(e.tagName==='polyline')o.p=nums(e.getAttribute('points'));
else['x','y','width','height','x1','y1','x2','y2','cx','cy'].forEach(function(k){var v=e.getAttribute(k);if(v!==null)o.a[k]=+v;});P.els.push(o);});G.panels.push(P);});
svg.classList.add('zoomable');svg.setAttribute('tabindex','0');
if(svg.id){var bar=document.createElement('p');bar.className='zoombar muted';
[['reset zoom',function(){reset(G);}],['zoom in',function(){zoomAt(G,(G.L+G.R)/2,.5);}],['zoom out',function(){zoomAt(G,(G.L+G.R)/2,2);}]].forEach(function(b){var e=document.createElement('button');e.textContent=b[0];e.addEventListener('click',b[1]);bar.appendChild(e);});
bar.appendChild(document.createTextNode('drag a box (or a time range) to zoom, shift+drag or the arrow keys to pan, ctrl+wheel or +/- to zoom, double-click or Esc to reset'));
svg.parentNode.insertBefore(bar,svg);}
function at(ev){var m=svg.getScreenCTM();if(!m)return null;var p=svg.createSVGPoint();p.x=ev.clientX;p.y=ev.clientY;return p.matrixTransform(m.inverse());}
function panelAt(y){for(var i=0;i<G.panels.length;i++){var P=G.panels[i],e2=ends(P);if(y>=e2[0]&&y<=e2[1])return P;}return null;}
var drag=null;
svg.addEventListener('mousedown',function(ev){if(ev.button)return;var p=at(ev);if(!p||p.x<G.L||p.x>G.R)return;var P=panelAt(p.y);if(!P)return;ev.preventDefault();svg.focus();
drag={x:p.x,y:p.y,P:P,pan:ev.shiftKey,xa:G.xa,xb:G.xb,ya:P.ya,yb:P.yb};if(!drag.pan)drag.box=el(svg,'rect',{'class':'zbox',x:p.x,y:p.y,width:0,height:0});});
window.addEventListener('mousemove',function(ev){if(!drag)return;var p=at(ev);if(!p)return;var P=drag.P,e2=ends(P),top=e2[0],bot=e2[1];
if(drag.pan){var dx=(p.x-drag.x)*(drag.xb-drag.xa)/(G.R-G.L),dy=(p.y-drag.y)*(drag.yb-drag.ya)/(bot-top);setY(P,drag.ya-dy,drag.yb-dy);setView(G,drag.xa-dx,drag.xb-dx,true);return;}
var x=Math.min(Math.max(p.x,G.L),G.R),y=Math.min(Math.max(p.y,top),bot);
drag.box.setAttribute('x',r3(Math.min(x,drag.x)));drag.box.setAttribute('y',r3(Math.min(y,drag.y)));drag.box.setAttribute('width',r3(Math.abs(x-drag.x)));drag.box.setAttribute('height',r3(Math.abs(y-drag.y)));});
window.addEventListener('mouseup',function(){if(!drag)return;var d=drag;drag=null;if(d.pan){setView(G,G.xa,G.xb);return;}
var P=d.P,e2=ends(P),top=e2[0],bot=e2[1],b=d.box,x=+b.getAttribute('x'),y=+b.getAttribute('y'),w=+b.getAttribute('width'),h=+b.getAttribute('height');svg.removeChild(b);
if(h>3){var oy=function(v){return P.ya+(v-top)*(P.yb-P.ya)/(bot-top);};setY(P,oy(y),oy(y+h));}
if(w>3){var ox=function(v){return G.xa+(v-G.L)*(G.xb-G.xa)/(G.R-G.L);};setView(G,ox(x),ox(x+w));}else if(h>3)draw(G);});
svg.addEventListener('dblclick',function(){reset(G);});
svg.addEventListener('wheel',function(ev){if(!(ev.ctrlKey||ev.metaKey||ev.altKey))return;var p=at(ev);if(!p)return;ev.preventDefault();zoomAt(G,Math.min(Math.max(p.x,G.L),G.R),ev.deltaY>0?1.25:.8);},{passive:false});
svg.addEventListener('keydown',function(ev){var w=G.xb-G.xa,k=ev.key;
if(k==='+'||k==='=')zoomAt(G,(G.L+G.R)/2,.5);else if(k==='-')zoomAt(G,(G.L+G.R)/2,2);
else if(k==='ArrowLeft')setView(G,G.xa-w/4,G.xb-w/4);else if(k==='ArrowRight')setView(G,G.xa+w/4,G.xb+w/4);
else if(k==='ArrowUp'||k==='ArrowDown'){var s=k==='ArrowUp'?-1:1;G.panels.forEach(function(P){var h=P.yb-P.ya;setY(P,P.ya+s*h/4,P.yb+s*h/4);});draw(G);}
else if(k==='Escape'||k==='0'||k==='Home')reset(G);else return;ev.preventDefault();});}
Array.prototype.forEach.call(document.querySelectorAll('svg[data-tx]'),setup);
function fromHash(){var m=/^#zoom=([^:]+):(-?[\d.]+)-(-?[\d.]+)$/.exec(decodeURIComponent(location.hash));var G=m&&graphs[m[1]];if(!G)return;
setView(G,lerp(G.tx,1,+m[2]),lerp(G.tx,1,+m[3]),true);}
fromHash();window.addEventListener('hashchange',fromHash);
document.documentElement.setAttribute('data-ready','1');
})();"#;

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
