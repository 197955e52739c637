//! The hasher of the checker's maps (and of `roce-inspect stats`): the checker looks up its
//! flow table five to eight times per packet, and std's SipHash over a flow key (two IP
//! addresses and a QPN) was 40% of `check`'s time (perf, 200,000 generated frames).
//!
//! This is the Fx hash (rustc's: rotate, XOR, multiply per word), started from a random seed
//! drawn once per process from std's `RandomState`, so a capture cannot be built ahead of time
//! to make every flow land in the same bucket for every run. It is not a keyed cryptographic
//! hash; the tables it serves are bounded (`Options::max_flows`), which bounds the worst case.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

/// A `HashMap` with [`FastState`].
pub type FastHashMap<K, V> = HashMap<K, V, FastState>;
/// A `HashSet` with [`FastState`].
pub type FastHashSet<K> = HashSet<K, FastState>;

const K: u64 = 0xf135_7aea_2e62_a9c5;

/// Builds [`FastHasher`]s from the process's seed.
#[derive(Debug, Clone, Copy)]
pub struct FastState {
    seed: u64,
}

impl Default for FastState {
    fn default() -> Self {
        static SEED: OnceLock<u64> = OnceLock::new();
        let seed = *SEED.get_or_init(|| RandomState::new().hash_one(0x5eed_u64));
        FastState { seed }
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;
    #[inline]
    fn build_hasher(&self) -> FastHasher {
        FastHasher { hash: self.seed }
    }
}

/// Fx: one rotate, XOR and multiply per word written.
#[derive(Debug, Clone, Copy)]
pub struct FastHasher {
    hash: u64,
}

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            if let Some(d) = w.get_mut(..rest.len()) {
                d.copy_from_slice(rest);
            }
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // hashbrown picks the bucket from the low bits and a tag from the top 7, and the
        // multiplies leave their best bits high: a folded multiply (the 128-bit product's
        // halves XORed) spreads them over all 64.
        let full = u128::from(self.hash) * u128::from(K);
        (full as u64) ^ ((full >> 64) as u64)
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
