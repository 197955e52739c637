//! The flow table: the live flows by [`FlowKey`], remembering where the flows looked up last
//! are.
//!
//! One packet looks its flow up several times: the model when it observes it, the checker's
//! requester or responder, the fatal-NAK rule, then every consumer that keeps state in the
//! flow's slot (`stats`' counters, the report's series, `diagnose`'s evidence), and a
//! response also its requester's flow. Each lookup of a map hashes the key and probes for
//! it: about 80 instructions (two IP addresses and a DestQP to hash and compare). This table
//! is `hashbrown`'s `HashTable` (the table inside std's `HashMap`), whose bucket indices
//! stay valid until the table grows, so it keeps the indices of the last two flows found
//! and tries them first: a repeated lookup costs one key comparison. A remembered index is
//! only a hint: the key in its bucket is compared, so a bucket emptied or reused since
//! (removal, growth) is simply a miss and the lookup probes as a map would.

use hashbrown::HashTable;
use std::hash::BuildHasher;

use super::{Flow, FlowKey};
use crate::hash::FastState;

/// The live flows by key (see the module doc).
#[derive(Debug)]
pub(super) struct FlowTable<T> {
    table: HashTable<(FlowKey, Flow<T>)>,
    state: FastState,
    /// Bucket indices of the flows found last, the latest first (hints, see the module doc).
    recent: [usize; 2],
}

/// The same key: the DestQP first, the field most likely to differ.
#[inline(always)]
fn same(a: &FlowKey, b: &FlowKey) -> bool {
    a.dest_qp == b.dest_qp && a.src == b.src && a.dst == b.dst
}

impl<T> Default for FlowTable<T> {
    fn default() -> Self {
        FlowTable { table: HashTable::new(), state: FastState::default(), recent: [usize::MAX; 2] }
    }
}

impl<T> FlowTable<T> {
    #[inline(always)]
    fn hash(&self, key: &FlowKey) -> u64 {
        self.state.hash_one(key)
    }

    /// Whether bucket `i` holds flow `key`.
    #[inline(always)]
    fn holds(&self, i: usize, key: &FlowKey) -> bool {
        self.table.get_bucket(i).is_some_and(|(k, _)| same(k, key))
    }

    /// The bucket of `key` among the hints.
    #[inline(always)]
    fn hinted(&self, key: &FlowKey) -> Option<usize> {
        let [a, b] = self.recent;
        if self.holds(a, key) {
            Some(a)
        } else if self.holds(b, key) {
            Some(b)
        } else {
            None
        }
    }

    /// The flow `key`.
    #[inline]
    pub(super) fn get(&self, key: &FlowKey) -> Option<&Flow<T>> {
        match self.hinted(key) {
            Some(i) => self.table.get_bucket(i),
            None => self.table.find(self.hash(key), |(k, _)| same(k, key)),
        }
        .map(|(_, f)| f)
    }

    /// The flow `key`, to change it: a hint's bucket in line, a probe of the table out of
    /// line.
    #[inline(always)]
    pub(super) fn get_mut(&mut self, key: &FlowKey) -> Option<&mut Flow<T>> {
        match self.hinted(key) {
            Some(i) => self.table.get_bucket_mut(i).map(|(_, f)| f),
            None => self.find_mut(key),
        }
    }

    /// [`FlowTable::get_mut`] of a flow not among the hints: found by its hash, and
    /// remembered as the latest hint.
    #[inline(never)]
    fn find_mut(&mut self, key: &FlowKey) -> Option<&mut Flow<T>> {
        let i = self.table.find_bucket_index(self.hash(key), |(k, _)| same(k, key))?;
        self.recent = [i, self.recent[0]];
        self.table.get_bucket_mut(i).map(|(_, f)| f)
    }

    /// Whether flow `key` is live.
    pub(super) fn contains_key(&self, key: &FlowKey) -> bool {
        self.get(key).is_some()
    }

    /// Adds flow `key`, or replaces it (the old flow returned).
    pub(super) fn insert(&mut self, key: FlowKey, flow: Flow<T>) -> Option<Flow<T>> {
        if let Some(old) = self.get_mut(&key) {
            return Some(std::mem::replace(old, flow));
        }
        let state = self.state;
        self.table.insert_unique(self.hash(&key), (key, flow), |(k, _)| state.hash_one(k));
        None
    }

    /// Removes flow `key`.
    pub(super) fn remove(&mut self, key: &FlowKey) -> Option<Flow<T>> {
        let entry = self.table.find_entry(self.hash(key), |(k, _)| same(k, key)).ok()?;
        let ((_, flow), _) = entry.remove();
        Some(flow)
    }

    /// The live flows' keys, in no particular order.
    pub(super) fn keys(&self) -> impl Iterator<Item = &FlowKey> {
        self.table.iter().map(|(k, _)| k)
    }

    /// The live flows, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&FlowKey, &Flow<T>)> {
        self.table.iter().map(|(k, f)| (k, f))
    }

    /// How many flows are live.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connections::{BeganBy, Boundary};
    use std::net::{IpAddr, Ipv4Addr};

    fn key(host: u8, qp: u32) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, host)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, host)),
            dest_qp: qp,
        }
    }

    fn flow(packets: u64) -> Flow<()> {
        let began = Boundary { how: BeganBy::FirstPackets, frame: 0, why: String::new() };
        let mut f = Flow::<()>::new(1, began);
        f.packets = packets;
        f
    }

    /// Lookups through the hints agree with the keys' own flows while flows come and go and
    /// the table grows: a hint left on a bucket removed, reused by another key or moved by
    /// growth never answers for the wrong key.
    #[test]
    fn hints_never_answer_for_another_key() {
        let mut t = FlowTable::<()>::default();
        let mut live = std::collections::BTreeMap::new();
        for step in 0u32..20_000 {
            let k = key((step % 7) as u8, step.wrapping_mul(2_654_435_761) % 97);
            match step % 5 {
                0 | 1 => {
                    t.insert(k, flow(u64::from(step)));
                    live.insert(k, u64::from(step));
                }
                2 => {
                    assert_eq!(t.remove(&k).map(|f| f.packets), live.remove(&k));
                }
                _ => {
                    if let Some(f) = t.get_mut(&k) {
                        f.packets += 1;
                    }
                    if let Some(n) = live.get_mut(&k) {
                        *n += 1;
                    }
                }
            }
            // The key just used, the one before, and one far away: through hints and not.
            for probe in [k, key((step % 7) as u8, (step + 1) % 97), key(200, 5)] {
                assert_eq!(t.get(&probe).map(|f| f.packets), live.get(&probe).copied());
                assert_eq!(t.get_mut(&probe).map(|f| f.packets), live.get(&probe).copied());
            }
            assert_eq!(t.len(), live.len());
        }
        let mut keys: Vec<_> = t.keys().copied().collect();
        keys.sort();
        assert_eq!(keys, live.keys().copied().collect::<Vec<_>>());
    }
}
