//! Counts over time in a fixed number of bins whose width doubles as the capture goes on:
//! streaming (the time range is not known before the end), memory fixed per series.

/// Bins kept at most; when a time falls past the last one, pairs of bins merge and the width
/// doubles.
pub(crate) const BINS: usize = 128;

/// `K` counters per bin over time, from `origin` (the first time added).
#[derive(Debug, Clone, Default)]
pub struct Bins<const K: usize> {
    origin: u64,
    /// Nanoseconds per bin (0 before the first add).
    width: u64,
    vals: Vec<[u64; K]>,
}

/// The first width: 1 microsecond.
const FIRST_WIDTH_NS: u64 = 1_000;

impl<const K: usize> Bins<K> {
    /// Sets the origin (before the first add): bins count from `t`.
    pub fn start(&mut self, t: u64) {
        if self.width == 0 {
            self.origin = t;
            self.width = FIRST_WIDTH_NS;
        }
    }

    /// Adds `v` to counter `k` of the bin of time `t` (times before the origin count in the
    /// first bin).
    pub fn add(&mut self, t: u64, k: usize, v: u64) {
        if self.width == 0 {
            self.origin = t;
            self.width = FIRST_WIDTH_NS;
        }
        let mut i = t.saturating_sub(self.origin) / self.width;
        while i >= BINS as u64 {
            self.halve();
            i = t.saturating_sub(self.origin) / self.width;
        }
        let i = i as usize;
        if self.vals.len() <= i {
            self.vals.resize(i + 1, [0; K]);
        }
        if let Some(c) = self.vals.get_mut(i).and_then(|b| b.get_mut(k)) {
            *c += v;
        }
    }

    /// Merges pairs of bins: the width doubles.
    fn halve(&mut self) {
        let merged: Vec<[u64; K]> = self
            .vals
            .chunks(2)
            .map(|pair| {
                let mut m = [0; K];
                for b in pair {
                    for (acc, x) in m.iter_mut().zip(b) {
                        *acc += x;
                    }
                }
                m
            })
            .collect();
        self.vals = merged;
        self.width = self.width.saturating_mul(2);
    }

    /// The first bin's start, ns since the epoch.
    pub fn origin(&self) -> u64 {
        self.origin
    }

    /// Nanoseconds per bin (0 before the first time is added).
    pub fn width_ns(&self) -> u64 {
        self.width
    }

    /// The bins from the origin on (the last one holds the latest time added).
    pub fn values(&self) -> &[[u64; K]] {
        &self.vals
    }

    /// The sum of counter `k` over every bin.
    pub fn total(&self, k: usize) -> u64 {
        self.vals.iter().filter_map(|b| b.get(k)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_doubles_and_totals_stay() {
        let mut b: Bins<2> = Bins::default();
        for i in 0..10_000u64 {
            b.add(1_000_000 + i * 997, (i % 2) as usize, 3);
        }
        assert!(b.values().len() <= BINS);
        assert_eq!(b.total(0) + b.total(1), 30_000);
        assert_eq!(b.origin(), 1_000_000);
        assert!(b.width_ns() * BINS as u64 > 9_999 * 997);
    }
}
