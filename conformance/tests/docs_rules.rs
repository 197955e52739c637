//! docs/rules.md is the rule catalog as Markdown: regenerated with
//! `ROCE_INSPECT_BLESS=1 cargo test -p roce-conformance --test docs_rules`, and this test
//! fails when the catalog changed and the document was not regenerated.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::Path;

#[test]
fn docs_rules_md_is_fresh() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
    let want = roce_conformance::internal::rules::markdown();
    if std::env::var_os("ROCE_INSPECT_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: regenerate it with ROCE_INSPECT_BLESS=1 cargo test -p roce-conformance --test docs_rules",
        path.display()
    );
    // Every rule of the catalog is in it, once.
    for r in roce_conformance::RULES {
        assert_eq!(have.matches(&format!("| {} |", r.id)).count(), 1, "{}", r.id);
    }
}
