//! Ctrl-C for captures without an end: `-i IFACE` and `check --follow` stop reading on SIGINT
//! or SIGTERM and the command prints its report, as at the end of a file, instead of dying
//! with it unprinted.
//!
//! The handler (signal-hook's `flag`) only sets an `AtomicBool`; the readers look at it
//! between reads, so no code of ours runs in signal context.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

fn flag() -> &'static Arc<AtomicBool> {
    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    STOP.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Whether [`on_signal`] routes SIGINT and SIGTERM to the stop flag (crate::outfile then
/// leaves them to it: the command completes its outputs).
pub fn routed() -> bool {
    ROUTED.load(Ordering::Relaxed)
}

static ROUTED: AtomicBool = AtomicBool::new(false);

/// Routes SIGINT and SIGTERM to the stop flag (from now on they no longer end the process)
/// and returns it.
pub fn on_signal() -> std::io::Result<Arc<AtomicBool>> {
    ROUTED.store(true, Ordering::Relaxed);
    let stop = flag();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(stop))?;
    }
    Ok(Arc::clone(stop))
}

/// Whether SIGINT or SIGTERM came.
pub fn requested(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}
