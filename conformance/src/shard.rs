//! Splitting a capture by host pair, so that N processes (on N machines, or N threads of one)
//! each judge a part and the parts add up to the whole.
//!
//! The connection model is per host pair: both directions of every QP between two hosts, their
//! CM exchange on QP1 and their CNPs all carry the same two addresses. A frame's shard is
//! therefore a function of its *unordered* address pair only, and every connection lands whole
//! in one shard.
//!
//! The hash is part of the command line's contract (`--shard K/N`, docs/parquet.md): it must
//! give the same shard on every machine, every run and every version, so it is not the
//! process-seeded hash of [`crate::hash`]. It is FNV-1a (64 bits) over 32 bytes: the two
//! addresses as 16-byte IPv6 addresses (IPv4 as `::ffff:a.b.c.d`), the smaller first (bytewise),
//! then MurmurHash3's 64-bit finalizer (fmix64), and the shard is the hash modulo N. Frames with no address (not IP, not decoded) belong to
//! shard 0.

use std::fmt;
use std::net::IpAddr;

use roce_parser::Packet;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The stable hash of an unordered host pair: `host_pair_hash(a, b) == host_pair_hash(b, a)`.
///
/// ```
/// use roce_conformance::host_pair_hash;
/// let (a, b) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
/// assert_eq!(host_pair_hash(a, b), host_pair_hash(b, a));
/// assert_eq!(host_pair_hash(a, b), 0x4537_6971_daba_9929);
/// ```
pub fn host_pair_hash(a: IpAddr, b: IpAddr) -> u64 {
    let (a, b) = (v6_octets(a), v6_octets(b));
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let mut h = FNV_OFFSET;
    for byte in lo.iter().chain(hi.iter()) {
        h ^= u64::from(*byte);
        h = h.wrapping_mul(FNV_PRIME);
    }
    fmix64(h)
}

/// MurmurHash3's 64-bit finalizer. FNV-1a alone is weak in its low bits (its lowest bit is
/// the parity of the input bytes' lowest bits: every pair 10.1.0.i / 10.2.0.i fell in shard 0
/// of 2), and the shard is taken from them.
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

fn v6_octets(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// The two addresses a frame's connection model keys on: the IP header's, or RoCEv1's GRH
/// GIDs; `None` for a frame with neither.
pub fn host_pair(p: &Packet<'_>) -> Option<(IpAddr, IpAddr)> {
    if let Some(ip) = p.ip {
        return Some((ip.src, ip.dst));
    }
    let g = p.roce.as_ref()?.grh?;
    Some((IpAddr::V6(g.sgid_addr()), IpAddr::V6(g.dgid_addr())))
}

/// Shard `index` of `count` (`--shard K/N`, 0 <= K < N); [`Shard::ALL`] is the whole capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// One shard holding everything.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`; `None` unless `index < count`.
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index < count).then_some(Shard { index, count })
    }

    /// Which shard this is, 0-based.
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many shards the capture is split into.
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether the shard is the whole capture.
    pub fn is_all(self) -> bool {
        self.count == 1
    }

    /// The shard (of `count`) a host pair belongs to.
    pub fn of_pair(a: IpAddr, b: IpAddr, count: u32) -> u32 {
        (host_pair_hash(a, b) % u64::from(count.max(1))) as u32
    }

    /// The shard (of `count`) of a frame: its host pair's, or 0 for a frame without addresses
    /// (`None`: not decoded).
    pub fn of_frame(p: Option<&Packet<'_>>, count: u32) -> u32 {
        match p.and_then(host_pair) {
            Some((a, b)) if count > 1 => Shard::of_pair(a, b, count),
            _ => 0,
        }
    }

    /// Whether a frame (`None`: not decoded) belongs to this shard.
    pub fn owns(self, p: Option<&Packet<'_>>) -> bool {
        self.is_all() || Shard::of_frame(p, self.count) == self.index
    }
}

/// [`Shard::of_pair`] with the last host pairs remembered (1,024 slots, direct-mapped): the
/// hash is some 30 dependent multiplies, and a capture has few host pairs beside its frames.
/// The same answers as [`Shard::of_pair`] and [`Shard::of_frame`], cheaper.
///
/// A slot is keyed by the two addresses as [`host_pair_hash`] reads them (IPv4 as its
/// IPv4-mapped IPv6 address, so the key decides the shard exactly), and picked by a hash
/// that is the same in either order: a hit costs no sorting and no enum comparison. It is
/// asked twice per packet under `--threads` (the reader places the frame, its worker checks
/// the parser agrees); keyed by `IpAddr`s, sorted first, it took 90 instructions a call,
/// now 30 (BENCHMARKS.md).
#[derive(Debug, Clone)]
pub struct ShardOfPair {
    count: u32,
    slots: Vec<Option<(u128, u128, u32)>>,
}

const PAIR_SLOTS: usize = 1024;

/// An address as [`host_pair_hash`] reads it: IPv4 as IPv4-mapped IPv6.
#[inline(always)]
fn mapped(x: IpAddr) -> u128 {
    match x {
        IpAddr::V4(v) => u128::from(v.to_ipv6_mapped()),
        IpAddr::V6(v) => u128::from(v),
    }
}

/// The slot of the pair (`x`, `y`), the same in either order: the two addresses folded to 64
/// bits and added, then Fibonacci hashing (the top 10 bits of the product). Xoring in place of
/// the sum put all 64 of `gen bench`'s pairs 10.1.0.i / 10.2.0.i in one slot.
#[inline(always)]
fn slot(x: u128, y: u128) -> usize {
    let fold = |v: u128| (v as u64) ^ ((v >> 64) as u64);
    (fold(x).wrapping_add(fold(y)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as usize
}

impl ShardOfPair {
    /// For `count` shards.
    pub fn new(count: u32) -> Self {
        ShardOfPair { count: count.max(1), slots: vec![None; PAIR_SLOTS] }
    }

    /// The shard of the host pair (`a`, `b`), in either order.
    #[inline]
    pub fn of_pair(&mut self, a: IpAddr, b: IpAddr) -> u32 {
        if self.count == 1 {
            return 0;
        }
        let (x, y) = (mapped(a), mapped(b));
        let i = slot(x, y);
        if let Some(Some((p, q, k))) = self.slots.get(i) {
            if (*p == x && *q == y) || (*p == y && *q == x) {
                return *k;
            }
        }
        let k = Shard::of_pair(a, b, self.count);
        if let Some(slot) = self.slots.get_mut(i) {
            *slot = Some((x, y, k));
        }
        k
    }

    /// [`Shard::of_frame`]: the shard of a frame's host pair, 0 without one.
    #[inline]
    pub fn of_frame(&mut self, p: Option<&Packet<'_>>) -> u32 {
        match p.and_then(host_pair) {
            Some((a, b)) => self.of_pair(a, b),
            None => 0,
        }
    }
}

impl Default for Shard {
    fn default() -> Self {
        Shard::ALL
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `K/N`, with 0 <= K < N (e.g. `0/4` .. `3/4`).
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("'{s}' is not a shard: write K/N with 0 <= K < N, e.g. 0/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u32, u32) =
            (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if n == 0 {
            return Err(format!("'{s}': the number of shards N must be at least 1"));
        }
        Shard::new(k, n).ok_or_else(|| {
            format!("'{s}': shard K must be below N (shards are numbered 0 to {})", n - 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    /// The documented values (docs/parquet.md): they may never change.
    #[test]
    fn hash_is_the_documented_one() {
        // FNV-1a of the empty input is its offset basis: the constants are FNV's.
        let (a, b) = (ip("10.0.0.1"), ip("10.0.0.2"));
        assert_eq!(host_pair_hash(a, b), host_pair_hash(b, a));
        assert_eq!(host_pair_hash(a, b), 0x4537_6971_daba_9929);
        assert_eq!(Shard::of_pair(a, b, 4), (0x4537_6971_daba_9929u64 % 4) as u32);
        // IPv4 is hashed as its IPv4-mapped IPv6 address.
        assert_eq!(
            host_pair_hash(a, b),
            host_pair_hash(ip("::ffff:10.0.0.2"), ip("::ffff:10.0.0.1"))
        );
    }

    #[test]
    fn shards_parse_and_refuse() {
        assert_eq!("1/4".parse::<Shard>(), Ok(Shard { index: 1, count: 4 }));
        assert_eq!("0/1".parse::<Shard>(), Ok(Shard::ALL));
        for bad in ["4/4", "1/0", "x/2", "1", "-1/2", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    /// `gen bench`'s host pairs (10.1.0.i with 10.2.0.i) over 2 and 4 shards: none empty
    /// (plain FNV-1a put all 64 in shard 0 of 2).
    #[test]
    fn neighbouring_pairs_spread_over_few_shards() {
        for n in [2u32, 4] {
            let mut counts = vec![0u32; n as usize];
            for i in 0..64u8 {
                let a = IpAddr::V4(std::net::Ipv4Addr::new(10, 1, 0, i));
                let b = IpAddr::V4(std::net::Ipv4Addr::new(10, 2, 0, i));
                counts[Shard::of_pair(a, b, n) as usize] += 1;
            }
            let fair = 64 / n;
            assert!(counts.iter().all(|&c| c >= fair / 2), "{n} shards: {counts:?}");
        }
    }

    #[test]
    fn the_remembered_shards_are_the_hashed_ones() {
        for n in [1u32, 2, 3, 5] {
            let mut cache = ShardOfPair::new(n);
            // Twice over 2,000 pairs of both families: misses, then hits and collisions.
            for round in 0..2 {
                for i in 0..1000u32 {
                    let a = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + i * 13));
                    let b = IpAddr::V4(std::net::Ipv4Addr::from(0x0a01_0000 + i));
                    let c =
                        IpAddr::V6(std::net::Ipv6Addr::from(0xfe80_u128 << 112 | u128::from(i)));
                    let d = IpAddr::V6(std::net::Ipv6Addr::from(0xfe80_u128 << 112 | 7));
                    // The same host as IPv4 and as IPv4-mapped IPv6 (one shard, as the
                    // hash reads both alike), and a pair of one host.
                    let m = IpAddr::V6(std::net::Ipv6Addr::from(0xffff_0a01_0000 + u128::from(i)));
                    for (x, y) in [(a, b), (b, a), (c, d), (d, c), (a, m), (m, b), (c, c), (a, c)] {
                        assert_eq!(cache.of_pair(x, y), Shard::of_pair(x, y, n), "{n} {round}");
                    }
                }
            }
        }
    }

    /// One host with 5,000 peers: pairs that share a host and a slot must not share the
    /// answer.
    #[test]
    fn a_remembered_pair_is_the_whole_pair() {
        for n in [2u32, 3] {
            let mut cache = ShardOfPair::new(n);
            let a = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
            for round in 0..2 {
                for i in 0..5000u32 {
                    let b = IpAddr::V4(std::net::Ipv4Addr::from(0x0b00_0000 + i));
                    assert_eq!(cache.of_pair(a, b), Shard::of_pair(a, b, n), "{n} {round} {b}");
                    assert_eq!(cache.of_pair(b, a), Shard::of_pair(a, b, n), "{n} {round} {b}");
                }
            }
        }
    }

    /// Host pairs that differ in the same bits do not share slots (each shared slot is a
    /// full hash per packet while the pairs alternate).
    #[test]
    fn neighbouring_pairs_take_their_own_slots() {
        let v4 = |a: u32| mapped(IpAddr::V4(std::net::Ipv4Addr::from(a)));
        let bench: std::collections::HashSet<usize> =
            (0..64).map(|i| slot(v4(0x0a01_0000 + i), v4(0x0a02_0000 + i))).collect();
        assert_eq!(bench.len(), 64);
        let v6 = |i: u128| (0xfe80_u128 << 112) | i;
        let six: std::collections::HashSet<usize> =
            (0..256).map(|i| slot(v6(i), v6(i + 1000))).collect();
        assert_eq!(six.len(), 256);
        assert_eq!(slot(v4(1), v4(2)), slot(v4(2), v4(1)));
    }

    #[test]
    fn every_pair_is_in_exactly_one_shard() {
        let mut counts = [0u32; 4];
        for i in 0..256u32 {
            let a = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + i));
            let b = IpAddr::V4(std::net::Ipv4Addr::from(0x0a01_0000 + i * 7));
            let k = Shard::of_pair(a, b, 4);
            assert_eq!(k, Shard::of_pair(b, a, 4));
            counts[k as usize] += 1;
        }
        // 256 pairs over 4 shards: none empty, none holding most.
        assert!(counts.iter().all(|&c| (32..=96).contains(&c)), "{counts:?}");
    }
}
