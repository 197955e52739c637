//! `gen`: generated captures (the sample, the conformance suite, benchmark traffic).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use roce_inspect::input::InputError;
use roce_inspect::outfile::{Dash, OutFile};
use roce_inspect::{check, gen};

use super::common::parse_at_least_one;
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Gen` (main.rs).
#[derive(Args)]
pub struct GenArgs {
    #[command(subcommand)]
    pub scenario: GenScenario,
}

#[derive(Subcommand)]
pub enum GenScenario {
    /// The sample of pcaps/: CM, SEND with immediate, WRITE, READ, atomic, NAK and go-back-N,
    /// RNR NAK and retry, ECN-CE with a CNP, UD, IPv6
    Sample {
        /// Output file
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// The conformance suite: for every rule a capture where it fires and clean captures,
    /// each with its .expect.json (replay with `check --expect`)
    Suite {
        /// Output directory
        #[arg(short, long)]
        output: PathBuf,
    },
    /// A large capture for benchmarks: RC WRITE / READ / SEND traffic over many connections
    Bench {
        #[arg(short, long)]
        output: PathBuf,
        /// Number of frames
        #[arg(long, default_value_t = 200_000)]
        frames: usize,
        /// Number of RC connections (at least 1)
        #[arg(long, default_value_t = 64, value_parser = parse_at_least_one)]
        connections: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

impl GenArgs {
    pub fn run(self) -> Outcome {
        match self.scenario {
            GenScenario::Suite { output } => check::write_suite(&output),
            GenScenario::Sample { output, seed } => {
                generate(&output, |w| gen::scenarios::sample(seed).write_pcap(w))
            }
            GenScenario::Bench { output, frames, connections, seed } => {
                // Streamed: frames are written as they are generated, memory stays flat.
                generate(&output, |w| gen::scenarios::bench(w, seed, frames, connections))
            }
        }
        .map(|()| ExitCode::SUCCESS)
    }
}

/// `gen -o FILE` (`-` for stdout): the capture `write` makes, completed only when whole
/// (crate::outfile).
fn generate(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<OutFile>) -> std::io::Result<()>,
) -> Result<(), InputError> {
    let mut w = std::io::BufWriter::new(OutFile::create("-o", path, &[], Dash::Stdout)?);
    write(&mut w).and_then(|()| w.flush()).map_err(|e| w.get_ref().error(e))?;
    w.into_parts().0.commit()
}
