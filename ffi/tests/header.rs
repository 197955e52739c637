//! The committed header `include/roce_parser.h` must be what cbindgen generates from the
//! current source. Regenerate it with:
//!
//! ```sh
//! REGENERATE_HEADER=1 cargo test -p roce-parser-ffi --test header
//! ```
#![allow(clippy::expect_used, clippy::panic)]

use std::path::Path;

fn generate() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen could not generate the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("header is UTF-8")
}

#[test]
fn header_is_fresh() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/roce_parser.h");
    let generated = generate();
    if std::env::var_os("REGENERATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed.lines().zip(generated.lines()).position(|(a, b)| a != b).map_or_else(
            || committed.lines().count().min(generated.lines().count()) + 1,
            |i| i + 1,
        );
        panic!(
            "{} is stale (first difference at line {first}): the C interface in ffi/src changed \
             without the header.\nRegenerate it and commit the result:\n\n    \
             REGENERATE_HEADER=1 cargo test -p roce-parser-ffi --test header\n",
            path.display()
        );
    }
}

#[test]
fn header_declares_the_whole_api() {
    let h = generate();
    for name in [
        "int roce_parse_frame(const uint8_t *frame, size_t len, struct roce_packet *out);",
        "roce_parse_frame_opts(",
        "roce_parse_ip(",
        "roce_parse_ip_opts(",
        "roce_parse_ethertype(",
        "roce_parse_udp_payload(",
        "const char *roce_status_str(int status);",
        "const char *roce_opcode_name(uint8_t opcode);",
        "const char *roce_problem_str(uint32_t bit);",
        "const char *roce_problem_code(uint32_t bit);",
        "const char *roce_layer_name(uint8_t layer);",
        "const char *roce_encap_name(uint8_t kind);",
        "typedef struct roce_tunnel {",
        "roce_tunnel tunnels[ROCE_PARSER_MAX_TUNNELS];",
        "#define ROCE_ENCAP_GENEVE 6",
        "#define ROCE_PARSER_ABI_VERSION 3",
        "int roce_parse_infiniband(const uint8_t *packet, size_t len, struct roce_packet *out);",
        "roce_parse_infiniband_opts(",
        "typedef struct roce_lrh {",
        "struct roce_lrh lrh;",
        "#define ROCE_VERSION_INFINIBAND 3",
        "#define ROCE_PROBLEM_VCRC_BAD (1 << 30)",
        "const char *roce_parser_version(void);",
        "typedef struct roce_packet {",
        "ROCE_OK = 0,",
        "ROCE_ERR_NOT_ROCE = -4,",
        "#define ROCE_ICRC_OK 1",
        "#define ROCE_PROBLEM_ICRC_BAD (1 << 22)",
        "extern \"C\" {",
    ] {
        assert!(h.contains(name), "the generated header lacks `{name}`");
    }
}

/// The C constant of each problem is its stable code in upper case (`pad_nonzero` is
/// `ROCE_PROBLEM_PAD_NONZERO`), with the problem's bit: one vocabulary for C and JSON.
#[test]
fn problem_constants_are_the_json_codes() {
    let h = generate();
    for p in roce_parser::Problem::ALL {
        let bit = (*p as u32).trailing_zeros();
        let line = format!("#define ROCE_PROBLEM_{} (1 << {bit})", p.code().to_uppercase());
        assert!(h.contains(&line), "the header lacks `{line}` for {p:?}");
    }
}
