//! The coverage figure: `coverage` prints it as Markdown and exits 1 when an opcode of the
//! table is not reached (see `coverage::missing`); `coverage --readme` also writes it into
//! fuzz/README.md between its markers.
use roce_fuzz_tools::{corpus_dir, coverage, project_root};

fn main() {
    let cov = coverage::measure(&corpus_dir());
    let figure = coverage::markdown(&cov);
    print!("{figure}");
    if std::env::args().any(|a| a == "--readme") {
        let path = project_root().join("fuzz/README.md");
        let readme = std::fs::read_to_string(&path).expect("read fuzz/README.md");
        let updated = coverage::replace_figure(&readme, &figure).expect("figure markers");
        std::fs::write(&path, updated).expect("write fuzz/README.md");
        eprintln!("{} updated", path.display());
    }
    let missing = coverage::missing(&cov);
    if !missing.is_empty() {
        eprintln!("opcodes not reached:");
        for m in &missing {
            eprintln!("  {m}");
        }
        std::process::exit(1);
    }
}
