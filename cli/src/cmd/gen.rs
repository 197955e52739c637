//! `gen`: generated captures (the sample, the conformance suite, benchmark traffic).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::input::InputError;
use crate::outfile::{Dash, OutFile};
use crate::{check, gen};
use clap::{Args, Subcommand};
use roce_parser::{EncapKind, ENCAPSULATIONS};

use super::common::parse_at_least_one;
use super::Outcome;

// No doc comment here: the subcommand's help is the one on `Command::Gen` (cmd/mod.rs).
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
        #[command(flatten)]
        mirror: MirrorArgs,
    },
    /// The conformance suite: for every rule a capture where it fires and clean captures,
    /// each with its .expect.json (replay with `check --expect`)
    Suite {
        /// Output directory
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Diagnosis scenarios: for each, NAME.pcap and NAME.verdicts.json, the verdicts its
    /// connections must get (healthy, unanswered, retry exhausted, lossy path, congestion,
    /// RNR storm, remote access error, setup failures, a failure cascade)
    Diagnose {
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
        #[command(flatten)]
        mirror: MirrorArgs,
    },
}

/// `--mirror KIND [--mirror-id N]`: the capture as a switch mirror or an overlay delivers it.
#[derive(Args)]
pub struct MirrorArgs {
    /// Wrap every frame as a switch mirror session or an overlay delivers it (outer
    /// 192.0.2.1 -> 192.0.2.2): erspan1, erspan2, erspan3, gre (transparent Ethernet
    /// bridging), vxlan, geneve
    #[arg(long, value_name = "KIND", value_parser = parse_encap)]
    mirror: Option<EncapKind>,
    /// The ERSPAN session ID (0-1023), GRE key or VNI of --mirror
    #[arg(long, value_name = "N", default_value_t = 1, requires = "mirror")]
    mirror_id: u32,
    /// Write the RoCEv2 traffic as a routed native InfiniBand fabric carries it, in ERF
    /// records as ibdump writes them (LRH, a GRH with the IP addresses as GIDs, the same
    /// transport, ICRC and VCRC)
    #[arg(long, conflicts_with = "mirror")]
    native_ib: bool,
}

impl MirrorArgs {
    fn get(&self) -> Option<gen::Delivery> {
        if self.native_ib {
            return Some(gen::Delivery::NativeIb);
        }
        self.mirror
            .map(|kind| gen::Delivery::Mirror(gen::Mirror { kind, id: self.mirror_id, count: 0 }))
    }
}

/// An encapsulation by its code (`ENCAPSULATIONS`: the JSON's `encap[].kind`).
fn parse_encap(s: &str) -> Result<EncapKind, String> {
    ENCAPSULATIONS.iter().find(|e| e.code == s).map(|e| e.kind).ok_or_else(|| {
        let codes: Vec<&str> = ENCAPSULATIONS.iter().map(|e| e.code).collect();
        format!("unknown encapsulation {s:?}; one of {}", codes.join(", "))
    })
}

impl GenArgs {
    pub fn run(self) -> Outcome {
        match self.scenario {
            GenScenario::Suite { output } => check::write_suite(&output),
            GenScenario::Diagnose { output } => write_diagnose(&output),
            GenScenario::Sample { output, seed, mirror } => generate(&output, |w| {
                gen::scenarios::sample(seed).write_pcap_mirrored(w, mirror.get())
            }),
            GenScenario::Bench { output, frames, connections, seed, mirror } => {
                // Streamed: frames are written as they are generated, memory stays flat.
                generate(&output, |w| {
                    gen::scenarios::bench(w, seed, frames, connections, mirror.get())
                })
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

/// `gen diagnose`: every diagnosis scenario's capture and verdicts file into `dir`, each
/// file completed only when whole (crate::outfile), as `gen suite` writes its own.
fn write_diagnose(dir: &Path) -> Result<(), InputError> {
    if dir == Path::new("-") {
        return Err(InputError(
            "gen diagnose -o -: the scenarios are a folder of files; give a directory".into(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| InputError(format!("{}: {e}", dir.display())))?;
    for s in gen::diagnose::scenarios() {
        let pcap =
            OutFile::create("-o", &dir.join(format!("{}.pcap", s.name)), &[], Dash::Refused)?;
        let mut w = std::io::BufWriter::new(pcap);
        s.trace.write_pcap(&mut w).map_err(|e| w.get_ref().error(e))?;
        w.flush().map_err(|e| w.get_ref().error(e))?;
        w.into_parts().0.commit()?;
        let text = serde_json::to_string_pretty(&s.verdicts_json())
            .map_err(|e| InputError(e.to_string()))?;
        let vj = dir.join(format!("{}.verdicts.json", s.name));
        check::write_whole(
            OutFile::create("-o", &vj, &[], Dash::Refused)?,
            (text + "\n").as_bytes(),
        )?;
    }
    Ok(())
}
