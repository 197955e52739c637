//! The committed corpus, replayed through every target on stable Rust (no libFuzzer): no
//! target fails on it, every target has seeds, every opcode of the table is reached (by each
//! packet target and the checker), and fuzz/README.md shows the current coverage figure.
use roce_fuzz_tools::{corpus_dir, coverage, project_root};

#[test]
fn corpus_replays_and_reaches_every_opcode() {
    let cov = coverage::measure(&corpus_dir());
    for t in &cov {
        assert!(t.files > 0, "corpus/{} is empty", t.name);
    }
    let missing = coverage::missing(&cov);
    assert!(
        missing.is_empty(),
        "opcodes not reached (run `cargo run -p roce-fuzz-tools --bin seeds -- --top-up`):\n{}",
        missing.join("\n")
    );
    let cm = cov.iter().find(|t| t.name == "cm_mad").expect("cm_mad");
    assert_eq!(cm.cm().len(), roce_fuzz_common::reach::CM_NAMES.len(), "CM messages");
}

#[test]
fn readme_shows_the_current_figure() {
    let cov = coverage::measure(&corpus_dir());
    let figure = coverage::markdown(&cov);
    let readme = std::fs::read_to_string(project_root().join("fuzz/README.md")).expect("README");
    assert_eq!(
        coverage::replace_figure(&readme, &figure).as_deref(),
        Some(readme.as_str()),
        "fuzz/README.md does not hold the current coverage figure; regenerate it with \
         `cargo run -p roce-fuzz-tools --bin coverage -- --readme` (see README)"
    );
}

/// Inputs that once failed a target, kept where the crate they hit replays them
/// (testdata/regressions/<target>-*.bin): the targets pass on them now.
#[test]
fn regression_inputs_pass() {
    let dir = project_root().join("testdata/regressions");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        for &(target, run) in roce_fuzz_common::TARGETS {
            if name.starts_with(&format!("{target}-")) && name.ends_with(".bin") {
                let data = std::fs::read(entry.path()).expect("read regression input");
                run(&data, &mut roce_fuzz_common::Reach::default());
                replayed += 1;
            }
        }
    }
    println!("{replayed} regression inputs replayed");
}

/// The `encap` seeds wrap what their names say: every kind, alone and two deep, each parsed
/// back as the tunnels built with the inner packet's ICRC verified (the target checks the
/// rest on every input).
#[test]
fn encap_seeds_build_every_kind() {
    use roce_fuzz_common::spec::EncapInput;
    use roce_parser::{parse_ethernet, Config, Encap, IcrcStatus, ENCAPSULATIONS};
    let mut seen = std::collections::HashSet::new();
    let mut two = 0;
    for (label, bytes) in roce_fuzz_tools::seeds::encap_seeds() {
        let input = EncapInput::decode(&bytes).expect("a whole header");
        assert_eq!(input.encode(), bytes, "{label}: encode and decode disagree");
        let w = input.wrap().unwrap_or_else(|| panic!("{label}: not built"));
        if input.raw_fields() {
            continue;
        }
        let p = parse_ethernet(&w.frame, &Config::default()).expect("Ethernet");
        let kinds: Vec<_> = p.tunnels().map(Encap::kind).collect();
        assert_eq!(kinds, w.kinds, "{label}");
        assert_eq!(p.roce.map(|r| r.icrc_status), Some(IcrcStatus::Ok), "{label}");
        seen.extend(kinds.iter().copied());
        two += usize::from(kinds.len() == 2);
    }
    assert_eq!(seen.len(), ENCAPSULATIONS.len(), "kinds seeded: {seen:?}");
    assert!(two >= 4, "two-deep seeds: {two}");
}
