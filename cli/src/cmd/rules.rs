//! `rules`: the conformance rules.

use std::process::ExitCode;

use crate::{check, output};
use clap::Args;

use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Rules` (cmd/mod.rs).
#[derive(Args)]
pub struct RulesArgs {
    /// Output format (json: docs/json.md, "rules --format json")
    #[arg(long, value_enum, default_value_t = check::Format::Text)]
    pub format: check::Format,
}

impl RulesArgs {
    pub fn run(self) -> Outcome {
        let text = match self.format {
            check::Format::Text => check::list_rules(),
            check::Format::Json => check::list_rules_json(),
        };
        output::stdout(text.as_bytes()).map(|()| ExitCode::SUCCESS)
    }
}
