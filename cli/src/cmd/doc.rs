//! `completions` and `man`: generated from the command line's definition (`super::Cli`, `cli/src/cmd/mod.rs`).

use std::process::ExitCode;

use crate::input::InputError;
use crate::output;
use clap::{Args, CommandFactory as _};

use super::Cli;
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Completions` (cmd/mod.rs).
#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

impl CompletionsArgs {
    /// `completions SHELL`: generated into memory (clap_complete panics on a failed write),
    /// then written out.
    pub fn run(self) -> Outcome {
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut Cli::command(), "roce-inspect", &mut script);
        output::stdout(&script).map(|()| ExitCode::SUCCESS)
    }
}

// No doc comment here: the subcommand's help is the one on `Command::Man` (cmd/mod.rs).
#[derive(Args)]
pub struct ManArgs {
    /// A subcommand, for its own page
    pub subcommand: Option<String>,
}

impl ManArgs {
    /// `man [SUBCOMMAND]`: roce-inspect(1), or roce-inspect-SUBCOMMAND(1) with its options.
    pub fn run(self) -> Outcome {
        let cmd = Cli::command();
        let page = match self.subcommand.as_deref() {
            None => cmd,
            Some(name) => {
                let Some(sub) = cmd.find_subcommand(name) else {
                    return Err(InputError(format!("no subcommand '{name}' to document")));
                };
                let name = sub.get_name();
                sub.clone()
                    .display_name(format!("roce-inspect-{name}"))
                    .bin_name(format!("roce-inspect {name}"))
            }
        };
        let mut roff = Vec::new();
        clap_mangen::Man::new(page)
            .source(format!("roce-inspect {}", crate::version()))
            .manual("roce-inspect manual")
            .render(&mut roff)
            .map_err(|e| InputError(format!("rendering the manual page: {e}")))?;
        output::stdout(&roff).map(|()| ExitCode::SUCCESS)
    }
}
