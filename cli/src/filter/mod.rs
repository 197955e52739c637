//! `-Y EXPR` / `--filter EXPR` and `--conn A:QPN-B:QPN`: the command line's options for the
//! display filter of every command (docs/filter.md). The filter itself (its grammar, its
//! evaluation on a frame, the connections it selects for `check`, `report` and `stats`) is
//! the library's, `roce_analysis::filter`, re-exported here.

pub use roce_analysis::filter::{
    DisplayFilter, FilterError, Selection, SelectionJson, MAX_DEPTH, MAX_LEN, MAX_SELECTED,
};

/// The filter options every capture-reading command takes.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct FilterArgs {
    /// Display filter over the JSON field names (tshark -Y; docs/filter.md), e.g.
    /// 'bth.dest_qp == 0x11 && bth.psn >= 1000 || icrc.status == "bad"'. dissect, export:
    /// the frames that match; check, report, stats' connections: the connections with a
    /// frame that matches, judged whole
    #[arg(short = 'Y', long = "filter", value_name = "EXPR", value_parser = parse_arg)]
    pub filter: Option<DisplayFilter>,
    /// Only the QP pair A:QPN-B:QPN, both directions (10.0.0.1:0x11-10.0.0.2:0x12); with -Y,
    /// both must hold
    #[arg(long = "conn", value_name = "A:QPN-B:QPN", value_parser = DisplayFilter::conn)]
    pub conn: Option<DisplayFilter>,
}

fn parse_arg(s: &str) -> Result<DisplayFilter, String> {
    DisplayFilter::parse(s).map_err(|e| format!("\n{e}"))
}

impl FilterArgs {
    /// The filter the options give, if any (`-Y` and `--conn` together: both hold).
    pub fn filter(self) -> Option<DisplayFilter> {
        match (self.filter, self.conn) {
            (Some(y), Some(c)) => Some(y.and(c)),
            (y, c) => y.or(c),
        }
    }
}
