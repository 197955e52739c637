//! The commands: one module each, with its clap arguments (`#[derive(clap::Args)]`) and a
//! `run` that turns them into the library's options in one place and calls the library.
//! The argument groups several commands share are in `common`.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::output;
use common::Common;

mod check;
mod common;
mod diagnose;
mod dissect;
mod doc;
#[cfg(feature = "parquet")]
mod export;
mod gen;
mod graph;
mod report;
mod rules;
mod stats;

/// What a command comes to: its exit status, or an error (printed by [`run`], exit 2).
pub type Outcome = Result<std::process::ExitCode, crate::input::InputError>;

#[derive(Parser)]
#[command(
    name = "roce-inspect",
    version = crate::version(),
    about = "Dissect, count and check RoCEv2 / RoCEv1 traffic in pcap and pcapng captures",
    long_about = "Dissect, count and check RoCEv2 / RoCEv1 traffic in pcap and pcapng captures.\n\n\
        Reads pcap (micro- and nanosecond) and pcapng, plain or gzip-compressed, from a file or\n\
        '-' for stdin; link types Ethernet, Linux cooked (SLL, SLL2), raw IP and null/loopback.\n\
        RoCEv2 is recognised by its UDP destination port (4791, or --port), never by the source\n\
        port; RoCEv1 by EtherType 0x8915. Every ICRC is verified.",
    after_help = "Examples:\n  \
        roce-inspect dissect capture.pcap\n  \
        roce-inspect dissect -V --frames 10-20,25 -r capture.pcapng\n  \
        roce-inspect dissect --format jsonl --qp 0x152 --opcode RC_ACKNOWLEDGE capture.pcap\n  \
        roce-inspect stats capture.pcap.gz\n  \
        tcpdump -w - -i eth0 udp port 4791 | roce-inspect stats -\n\n\
        As in tshark:\n  \
        -r FILE                      tshark -r FILE (the positional FILE works too)\n  \
        -c N (any command)           tshark -c N\n  \
        dissect --frames 1-10,15,20- tshark -Y 'frame.number in {1..10 15 20..}'\n  \
        --port 4791 --port 4792      tshark -d udp.port==4792,infiniband (both decoded)\n  \
        -n                           tshark -n (accepted: names are never resolved)\n  \
        dissect -V                   tshark -V\n  \
        dissect -T fields -e bth.psn tshark -T fields -e infiniband.bth.psn (-E as tshark's)\n  \
        dissect -x                   tshark -x (hex and ASCII of each frame)\n  \
        dissect -t r|a|ad|e|d        tshark -t (a and ad in UTC: tshark -t u|ud)\n  \
        check -l, dissect -l         tshark -l (flush per finding / frame)\n  \
        dissect --qp 0x11 -w out.pcap  tshark -Y 'infiniband.bth.destqp == 0x11' -w out.pcap\n  \
        dissect -P -w out.pcap       tshark -P -w out.pcap (print while saving)\n  \
        -Y 'bth.dest_qp == 0x11'     tshark -Y 'infiniband.bth.destqp == 0x11' (docs/filter.md)\n  \
        --conn A:QPN-B:QPN           both directions of one QP pair\n  \
        -i eth0 -f 'udp port 4791'   tshark -i eth0 -f 'udp port 4791' (feature live)\n  \
        -a duration:10 -a packets:N  tshark -a duration:10 -a packets:N (with -i)\n\n\
        Exit status: 0 on success (warnings about damaged input go to stderr),\n\
        2 when the input could not be read, the output could not be written or the command\n\
        line was wrong. A closed pipe (`| head`) ends the output quietly."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Answer what went wrong: a verdict for the capture and for each connection
    /// incarnation (unanswered, retry exhausted, lossy path, congested, congestion control
    /// not working, receiver not ready, application error, connection setup failed,
    /// healthy), with the evidence (frames, counts, rule IDs, measured values), the first
    /// failure and those that followed it, and what to look at next; docs/diagnose.md
    ///
    /// Exit status: 0 when no connection failed, 1 when one did (a verdict of severity
    /// failure), 2 when the input could not be read or the command line was wrong.
    Diagnose(diagnose::DiagnoseArgs),
    /// Show every frame: one line each (frame, time, addresses, opcode, DestQP, PSN, flags,
    /// payload length, ICRC status, problems), the full field tree (-V), or JSON.
    ///
    /// Non-RoCE frames are listed too, so frame numbers match Wireshark's. JSON field names
    /// are a stable contract.
    Dissect(dissect::DissectArgs),
    /// Summarise a capture: totals, ICRC counts, the opcode histogram, and per connection
    /// packets, bytes, messages, ACKs, NAKs by kind, RNR NAKs, CNPs, ECN-CE marks,
    /// retransmitted PSNs, duration and goodput; connections opened by CM with their outcome.
    Stats(stats::StatsArgs),
    /// Check a capture against the InfiniBand transport rules: replay it through a
    /// reference queue-pair model and report which side broke which rule, with frames.
    ///
    /// Exit status: 0 when no error-severity finding (warnings alone leave it 0), 1 when at
    /// least one, 2 when the input could not be read or the command line was wrong.
    Check(check::CheckArgs),
    /// Write the capture as Parquet for DuckDB, Spark or pandas: DIR/packets.parquet (one
    /// row per frame), DIR/connections.parquet and DIR/findings.parquet (the checker's
    /// report); docs/parquet.md. Exit status as `check`: 1 when an error-severity finding
    #[cfg(feature = "parquet")]
    Export(export::ExportArgs),
    /// Write an HTML report: summary, findings, and per connection a time-sequence graph
    /// (PSN over time: new and retransmitted requests, the ACK line, NAKs, RNR and fatal
    /// NAKs, READ and atomic spans, ECN-CE, CNPs, CM, findings) with goodput; docs/report.md
    ///
    /// The page is one file with no network access (inline SVG, a Content-Security-Policy);
    /// open it in a browser. Exit status as `check`: 1 when an error-severity finding.
    Report(report::ReportArgs),
    /// Write the time-sequence graph of one connection as SVG (for a bug report)
    Graph(graph::GraphArgs),
    /// List the conformance rules: ID, severity, the side judged, what it checks, source
    Rules(rules::RulesArgs),
    /// Write a generated capture (nanosecond pcap) built with the roce-parser builder.
    Gen(gen::GenArgs),
    /// Print a shell completion script, generated from this command line's definition.
    ///
    /// bash: `roce-inspect completions bash > ~/.local/share/bash-completion/completions/roce-inspect`;
    /// zsh: `roce-inspect completions zsh > ~/.zfunc/_roce-inspect` (with ~/.zfunc in $fpath);
    /// fish: `roce-inspect completions fish > ~/.config/fish/completions/roce-inspect.fish`.
    Completions(doc::CompletionsArgs),
    /// Print the manual page (roff), generated from this command line's definition:
    /// `roce-inspect man > roce-inspect.1`, or `roce-inspect man dissect` for
    /// roce-inspect-dissect(1).
    Man(doc::ManArgs),
}

impl Command {
    /// The options every capture-reading command shares.
    fn common(&self) -> Option<&Common> {
        match self {
            Command::Dissect(dissect::DissectArgs { common, .. })
            | Command::Stats(stats::StatsArgs { common, .. })
            | Command::Diagnose(diagnose::DiagnoseArgs { common, .. })
            | Command::Check(check::CheckArgs { common, .. })
            | Command::Report(report::ReportArgs { common, .. })
            | Command::Graph(graph::GraphArgs { common, .. }) => Some(common),
            #[cfg(feature = "parquet")]
            Command::Export(export::ExportArgs { common, .. }) => Some(common),
            _ => None,
        }
    }
}

/// Help and version (stdout: a failed write is an error, exit 2, a closed pipe is not) and
/// command-line errors (stderr, exit 2).
fn clap_exit(e: &clap::Error) -> ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    let printed = e.print();
    if e.use_stderr() {
        return ExitCode::from(code);
    }
    match output::written(printed.and_then(|()| std::io::stdout().flush())) {
        Ok(()) => ExitCode::from(code),
        Err(err) => {
            output::error(err);
            ExitCode::from(2)
        }
    }
}

/// The command line: parses the process's arguments, runs the command they name and gives
/// the exit status (0, 1 for a finding of error severity, 2 for an error, printed on stderr).
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    if let Some(Err(e)) = cli.command.common().map(|c| crate::tshark::check_ports(&c.port)) {
        output::error(e);
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Dissect(args) => args.run(),
        Command::Diagnose(args) => args.run(),
        Command::Stats(args) => args.run(),
        Command::Check(args) => args.run(),
        #[cfg(feature = "parquet")]
        Command::Export(args) => args.run(),
        Command::Report(args) => args.run(),
        Command::Graph(args) => args.run(),
        Command::Rules(args) => args.run(),
        Command::Gen(args) => args.run(),
        Command::Completions(args) => args.run(),
        Command::Man(args) => args.run(),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            output::error(e);
            ExitCode::from(2)
        }
    }
}
