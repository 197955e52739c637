//! roce-conformance: replays RoCE packets through a reference model of the InfiniBand
//! reliable transport and reports, with frame numbers, which side broke which rule.
//!
//! - [`Connections`] is the connection model every consumer shares: flows, pairing (CM exact,
//!   PSN echo otherwise), PMTU, P_Key, and the lifecycle of connection incarnations (CM
//!   REQ/REP to DREQ/DREP or REJ, reconnects on reused QPNs with or without CM), bounded by a
//!   cap with reported eviction.
//! - [`Checker`] feeds each packet through the model and the rules of the catalog
//!   ([`RULES`], [`find_rule`]): streaming, memory bounded by the live connections, never by
//!   packets.
//!   [`Checker::finish`] returns the final findings and one report per incarnation.
//! - [`Psn`] is a 24-bit PSN whose order and arithmetic wrap.
//! - [`Timing`] measures a request flow's timers from the wire (ACK, READ, atomic and NAK
//!   latencies, RNR waits, timeout retransmissions and the local ACK timeout exponent they
//!   imply) in bounded memory ([`Quantiles`]).
//!
//! ```
//! use roce_conformance::{Checker, Options};
//!
//! let opts = Options { assume_complete: true, ..Options::default() };
//! let checker = Checker::new(opts);
//! // feed(&FrameInfo, &Packet) for every frame, in capture order, then:
//! let report = checker.finish();
//! assert!(report.findings.is_empty());
//! ```
//!
//! Where things are: go-back-N is `requester.rs` (`go_back_n`, `new_psn_after_nak`); each
//! rule has one function, listed in the module docs of `requester.rs` and `responder.rs`;
//! the catalog (IDs, severities, sources) is `rules.rs`; pairing and lifecycle are
//! `connections/`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)
)]

mod checker;
mod congestion;
mod connections;
mod context;
mod finding;
mod hash;
mod json;
mod net_rules;
mod options;
mod packet_rules;
mod psn;
mod requester;
mod responder;
mod rules;
mod shard;
mod sharded;
mod stream;
mod timing;

pub use checker::{Checker, ConnectionReport, Report, StateStats};
pub use connections::{
    BeganBy, Boundary, CmExchange, ConnId, ConnectionInfo, Connections, Ended, EndedBy, Flow,
    FlowKey, ModelOptions, ModelStats, Observation, PairedBy, PkeySource, PmtuSource, Seen,
    RECONNECT_PSN_DISTANCE,
};
pub use finding::{Finding, RuleCount};
pub use options::{CnpPacing, CnpScope, FrameInfo, Options};
pub use psn::{read_psns, Psn, PSN_MASK};
pub use rules::{find as find_rule, Rule, RuleSet, Severity, Side, ALL as RULES};
pub use shard::{host_pair, host_pair_hash, Shard, ShardOfPair};
pub use sharded::{can_split, merge_shards, NotMergeable, ShardReport};
pub use timing::{
    local_ack_timeout_ns, CnpScopes, CongestionReport, Disagreement, FlowCongestion,
    InferredTimeout, Negotiated, Quantiles, ReadLatency, RnrWait, Summary, TimeoutRetransmission,
    Timing, TimingReport, ACK_TIMEOUT_UNIT_NS,
};

/// Not part of the API: what roce-inspect, roce-analysis and the fuzz targets use beside it
/// (the model's per-packet answers, the hasher of their tables, the JSON contract's value
/// formats and shapes, the rule catalog's generator). It may change in any release.
#[doc(hidden)]
pub mod internal {
    pub use crate::connections::{exchange_of, Retained};
    pub use crate::connections::{Observation, Seen};

    /// The checker's hasher, shared with the command line's tables.
    pub mod hash {
        pub use crate::hash::*;
    }

    /// The value formats of the JSON contract (docs/json.md).
    pub mod json {
        pub use crate::json::*;
    }

    /// The rule catalog: [`crate::RULES`], one constant per rule, and its Markdown.
    pub mod rules {
        pub use crate::rules::*;
    }

    /// Timers and congestion, with the JSON shapes of `stats`.
    pub mod timing {
        pub use crate::timing::*;
    }
}
