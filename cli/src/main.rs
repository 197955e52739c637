//! roce-inspect: dissect, count and check RoCE traffic in pcap / pcapng captures. The
//! command line is the library's ([`roce_inspect::run`], `cli/src/cmd/`).

fn main() -> std::process::ExitCode {
    roce_inspect::run()
}
