//! Streaming quantiles in bounded memory: a log-linear histogram (the layout of
//! HdrHistogram with 16 sub-buckets per power of two), kept sparse. A long capture adds
//! counts, never samples: at most [`BUCKETS`] (value range, count) pairs whatever the number
//! of samples, and in practice a few dozen, since latencies of one connection span a few
//! octaves. A dense HdrHistogram of the same range costs kilobytes per histogram, and
//! `stats` keeps several per connection for tens of thousands of connections.
//!
//! Accuracy: below 16 ns values are exact; above, a bucket spans 1/16 of its power of two,
//! and a quantile is the mean of the samples in its bucket, so the error is at most 1/16
//! (6.25 %) of the value, and none when the samples of that bucket are equal (a responder
//! that always answers in the same time is reported to the nanosecond).

use serde::Serialize;

/// Sub-buckets per power of two (2^SUB_BITS).
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets for values up to 2^64 - 1.
pub const BUCKETS: usize = (SUB as usize) * (65 - SUB_BITS as usize);

/// The bucket of a value.
fn bucket(v: u64) -> u16 {
    if v < SUB {
        return v as u16;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let mantissa = v >> (e - SUB_BITS); // SUB..2*SUB
    (u64::from(e - SUB_BITS + 1) * SUB + (mantissa - SUB)) as u16
}

/// The lowest value of a bucket and its width.
fn range(b: u16) -> (u64, u64) {
    let b = u64::from(b);
    if b < SUB {
        return (b, 1);
    }
    let e = b / SUB - 1 + u64::from(SUB_BITS);
    let mantissa = SUB + b % SUB;
    let shift = e - u64::from(SUB_BITS);
    (mantissa << shift, 1 << shift)
}

/// count, p50, p90, p99 and max of a set of durations in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Durations recorded.
    pub count: u64,
    /// The shortest, exact.
    pub min: u64,
    /// The median (within 1/16 of the value).
    pub p50: u64,
    /// The 90th percentile (within 1/16 of the value).
    pub p90: u64,
    /// The 99th percentile (within 1/16 of the value).
    pub p99: u64,
    /// The longest, exact.
    pub max: u64,
}

/// A streaming histogram of durations (ns).
///
/// ```
/// use roce_conformance::Quantiles;
/// let mut q = Quantiles::default();
/// for ns in [1_000, 1_000, 1_000, 9_000] {
///     q.record(ns);
/// }
/// let s = q.summary().unwrap();
/// assert_eq!((s.count, s.min, s.p50, s.max), (4, 1_000, 1_000, 9_000));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Quantiles {
    /// (bucket, count, sum of the samples), sorted by bucket.
    counts: Vec<(u16, u64, u64)>,
    count: u64,
    min: u64,
    max: u64,
}

impl Quantiles {
    /// Adds one sample.
    pub fn record(&mut self, ns: u64) {
        let b = bucket(ns);
        match self.counts.binary_search_by_key(&b, |e| e.0) {
            Ok(i) => {
                if let Some(e) = self.counts.get_mut(i) {
                    e.1 += 1;
                    e.2 = e.2.saturating_add(ns);
                }
            }
            Err(i) => self.counts.insert(i, (b, 1, ns)),
        }
        if self.count == 0 || ns < self.min {
            self.min = ns;
        }
        self.max = self.max.max(ns);
        self.count += 1;
    }

    /// Adds every sample of another histogram.
    pub fn merge(&mut self, o: &Quantiles) {
        for &(b, n, sum) in &o.counts {
            match self.counts.binary_search_by_key(&b, |e| e.0) {
                Ok(i) => {
                    if let Some(e) = self.counts.get_mut(i) {
                        e.1 += n;
                        e.2 = e.2.saturating_add(sum);
                    }
                }
                Err(i) => self.counts.insert(i, (b, n, sum)),
            }
        }
        if o.count > 0 {
            if self.count == 0 || o.min < self.min {
                self.min = o.min;
            }
            self.max = self.max.max(o.max);
        }
        self.count += o.count;
    }

    /// Durations recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Gives back the spare room of the buckets (a histogram that is complete).
    pub fn shrink_to_fit(&mut self) {
        self.counts.shrink_to_fit();
    }

    /// The buckets held (at most [`BUCKETS`]).
    pub fn buckets(&self) -> usize {
        self.counts.len()
    }

    /// The value below which a fraction `q` of the samples lie (`None` when empty).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank == self.count {
            return Some(self.max);
        }
        let mut seen = 0;
        for &(b, n, sum) in &self.counts {
            seen += n;
            if seen >= rank {
                // The mean of the bucket's samples; within the bucket unless the sum
                // saturated (then the bucket's middle).
                let (lo, width) = range(b);
                let mean = sum / n.max(1);
                let v = if (lo..lo.saturating_add(width)).contains(&mean) {
                    mean
                } else {
                    lo + width / 2
                };
                return Some(v.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// count / min / p50 / p90 / p99 / max (`None` when empty).
    pub fn summary(&self) -> Option<Summary> {
        Some(Summary {
            count: self.count,
            min: self.min,
            p50: self.quantile(0.50)?,
            p90: self.quantile(0.90)?,
            p99: self.quantile(0.99)?,
            max: self.max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_partition_the_values() {
        let mut last = None;
        for v in (0..5000u64).chain([u64::MAX / 3, u64::MAX - 1, u64::MAX]) {
            let b = bucket(v);
            assert!(usize::from(b) < BUCKETS, "{v}");
            let (lo, w) = range(b);
            assert!(lo <= v && v - lo < w, "{v} in bucket {b} = {lo}+{w}");
            if v < 5000 {
                assert!(last.is_none_or(|l| l <= b));
                last = Some(b);
            }
        }
    }

    #[test]
    fn quantiles_within_one_sixteenth() {
        let mut q = Quantiles::default();
        for v in 1..=10_000u64 {
            q.record(v * 1000);
        }
        let s = q.summary().unwrap();
        assert_eq!((s.count, s.min, s.max), (10_000, 1000, 10_000_000));
        for (got, want) in [(s.p50, 5_000_000f64), (s.p90, 9_000_000.), (s.p99, 9_900_000.)] {
            assert!((got as f64 - want).abs() / want <= 1.0 / 16.0, "{got} vs {want}");
        }
        assert!(q.buckets() < 200);
    }

    #[test]
    fn merge_is_recording_both() {
        let (mut a, mut b, mut both) =
            (Quantiles::default(), Quantiles::default(), Quantiles::default());
        for v in [5u64, 70, 900, 12_345] {
            a.record(v);
            both.record(v);
        }
        for v in [3u64, 1 << 40] {
            b.record(v);
            both.record(v);
        }
        a.merge(&b);
        assert_eq!(a.summary(), both.summary());
    }
}
