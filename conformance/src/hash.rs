//! The hasher of the checker's maps (and of `roce-inspect stats`): the checker looks up its
//! flow table five to eight times per packet, and std's SipHash over a flow key (two IP
//! addresses and a QPN) was 40% of `check`'s time (perf, 200,000 generated frames).
//!
//! The hash is rustc's Fx hash from the `rustc-hash` crate (what the field uses for small
//! keys), started from a random seed drawn once per process from std's `RandomState`, so a
//! capture cannot be built ahead of time to make every flow land in the same bucket for every
//! run. It is not a keyed cryptographic hash; the tables it serves are bounded
//! (`Options::max_flows`), which bounds the worst case.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::OnceLock;

pub use rustc_hash::FxHasher as FastHasher;

/// A `HashMap` with [`FastState`].
pub type FastHashMap<K, V> = HashMap<K, V, FastState>;
/// A `HashSet` with [`FastState`].
pub type FastHashSet<K> = HashSet<K, FastState>;

/// Builds [`FastHasher`]s from the process's seed.
#[derive(Debug, Clone, Copy)]
pub struct FastState {
    seed: usize,
}

impl Default for FastState {
    fn default() -> Self {
        static SEED: OnceLock<usize> = OnceLock::new();
        let seed = *SEED.get_or_init(|| RandomState::new().hash_one(0x5eed_u64) as usize);
        FastState { seed }
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;
    #[inline]
    fn build_hasher(&self) -> FastHasher {
        FastHasher::with_seed(self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    #[test]
    fn equal_keys_hash_equal_and_neighbours_spread() {
        let s = FastState::default();
        let key = |q: u32| (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), q);
        assert_eq!(s.hash_one(key(7)), s.hash_one(key(7)));
        let mut buckets = FastHashSet::default();
        for q in 0..4096u32 {
            buckets.insert(s.hash_one(key(q)) & 0xfff);
        }
        // 4096 QPNs into 4096 buckets: a good spread fills well over half of them.
        assert!(buckets.len() > 2400, "{}", buckets.len());
    }
}
