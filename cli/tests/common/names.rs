//! Names as the reports print them, rebuilt from the JSON.

/// The name `check`, `stats` and the report print for the connection object of the JSON
/// (`{a, qpn_a, b, qpn_b, incarnation}`).
pub fn conn_name(c: &serde_json::Value) -> String {
    let q = |v: &serde_json::Value| v.as_u64().map_or("?".to_string(), |q| format!("0x{q:06x}"));
    let mut s = format!(
        "{} QP {} <-> {} QP {}",
        c["a"].as_str().unwrap(),
        q(&c["qpn_a"]),
        c["b"].as_str().unwrap(),
        q(&c["qpn_b"])
    );
    if c["incarnation"].as_u64().unwrap() > 1 {
        s.push_str(&format!(" (incarnation {})", c["incarnation"]));
    }
    s
}
