//! RedisBloom's scalable Bloom filter, locally: [`RedisBloomChain`] hashes, sizes, grows and
//! lays out its bits as the module does (RedisBloom 2.x, `BF.*`), reads a `BF.SCANDUMP` and
//! writes chunks `BF.LOADCHUNK` takes.
//!
//! The format, as the module writes it: a header of 20 bytes (`u64` items, `u32` filters,
//! `u32` options, `u32` growth, little-endian, packed) and 53 bytes per sub-filter (`u64`
//! bytes, `u64` bits, `u64` items, `f64` error, `f64` bits per entry, `u32` hashes, `u64`
//! capacity, `u8` log2 of a power-of-two size or 0); then each sub-filter's bytes, in order.
//! A key's hashes are MurmurHash64A over its bytes (seed `0xc6a4a7935bd1e995`, then seeded
//! with the first), its `i`-th bit `(a + i * b) mod bits`, bit `x` at `1 << (x % 8)` of byte
//! `x / 8`. Filters loaded from old dumps without the 64-bit option hash with the 32-bit
//! MurmurHash2, and those with a power-of-two size take the bits modulo it: both are read.

use crate::Error;
use bloomkit_core::Setting;

/// RedisBloom's default growth factor (`BF.RESERVE` without `EXPANSION`).
pub const DEFAULT_EXPANSION: u32 = 2;
/// The largest chunk `BF.SCANDUMP` sends (16 MiB); [`RedisBloomChain::chunks`] sends no
/// larger.
pub const MAX_CHUNK_BYTES: usize = 16 << 20;

/// `options`: sizes are not rounded to a power of two.
const NOROUND: u32 = 1;
/// `options`: the capacity is given in bits (old filters).
const ENTS_IS_BITS: u32 = 2;
/// `options`: 64-bit hashes.
const FORCE64: u32 = 4;
/// `options`: the filter never grows.
const NO_SCALING: u32 = 8;
/// Bytes of the header before the sub-filters' entries.
const HEADER: usize = 20;
/// Bytes of a sub-filter's entry in the header.
const LINK: usize = 53;
/// The module's `ln(2)^2` and `ln(2)`, as it writes them: truncated, and kept so, since a
/// sub-filter's `k` is the ceiling of a product with them.
const LN2_SQUARED: f64 = 0.480453013918201;
#[allow(clippy::approx_constant)]
const LN2: f64 = 0.693147180559945;
/// RedisBloom's per-chain and per-filter overheads in `BF.INFO`'s `Size`.
const CHAIN_OVERHEAD: u64 = 32;
const LINK_OVERHEAD: u64 = 64;
/// Keys hashed (and their memory requested) ahead of the one a batched call works on.
const AHEAD: usize = 8;
/// The most hash functions a sub-filter of a dump may have: 4096 is a rate of 2^-5900 (the
/// module's 64th sub-filter of a chain at 1e-300 has under 1100); more would only make every
/// lookup slow.
const MAX_HASHES: u32 = 4096;
/// The most sub-filters a dump may declare (a chain doubling from one key reaches 2^64
/// keys in 64 links; this leaves room for growth 1).
const MAX_LINKS: u64 = 1 << 16;

/// MurmurHash64A (Austin Appleby), as RedisBloom computes it.
fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for block in blocks.by_ref() {
        let mut k = u64::from_le_bytes(block.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut t = 0u64;
        for (i, &b) in tail.iter().enumerate() {
            t |= u64::from(b) << (8 * i);
        }
        h ^= t;
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^ (h >> R)
}

/// The 32-bit MurmurHash2 of old (non-`FORCE64`) filters.
fn murmur2(key: &[u8], seed: u32) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let mut h = seed ^ key.len() as u32;
    let mut blocks = key.chunks_exact(4);
    for block in blocks.by_ref() {
        let mut k = u32::from_le_bytes(block.try_into().expect("4 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate().rev() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// `bytes` zero bytes, or the error of an allocation that cannot be made.
fn zeroed(bytes: u64) -> Result<Vec<u8>, Error> {
    let refused = || Error::Filter(bloomkit_core::Error::AllocationFailed { bytes });
    let len = usize::try_from(bytes).map_err(|_| refused())?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| refused())?;
    v.resize(len, 0);
    Ok(v)
}

/// A key's two hashes in a chain of `options`.
fn hashes_of(key: &[u8], options: u32) -> (u64, u64) {
    if options & FORCE64 != 0 {
        let a = murmur64a(key, 0xc6a4_a793_5bd1_e995);
        (a, murmur64a(key, a))
    } else {
        let a = murmur2(key, 0x9747_b28c);
        (u64::from(a), u64::from(murmur2(key, a)))
    }
}

/// `x % d` for a fixed `d` by two multiplications instead of a division (Lemire, Kaser and
/// Kurz, "Faster remainder by direct computation", 2019: exact for every 64-bit `x` with a
/// 128-bit multiplier). The module divides; a lookup takes one remainder per bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FastMod {
    d: u64,
    m: u128,
}

impl FastMod {
    fn new(d: u64) -> FastMod {
        // ceil(2^128 / d); 0 for d = 1 (then every remainder is 0, as computed below).
        FastMod {
            d,
            m: (u128::MAX / u128::from(d.max(1))).wrapping_add(1),
        }
    }

    #[inline]
    fn rem(self, x: u64) -> u64 {
        let low = self.m.wrapping_mul(u128::from(x));
        let d = u128::from(self.d);
        let bottom = (u128::from(low as u64) * d) >> 64;
        let top = (low >> 64) * d;
        ((top + bottom) >> 64) as u64
    }
}

/// The bit positions of a key with hashes `(a, b)` in a sub-filter: `(a + i b) mod bits`, or
/// modulo `2^n2` (in 32-bit arithmetic when `narrow`), as the module computes them.
#[inline]
fn positions(
    rem: FastMod,
    n2: u8,
    narrow: bool,
    hashes: u32,
    (a, b): (u64, u64),
) -> impl Iterator<Item = u64> {
    (0..u64::from(hashes)).map(move |i| {
        if n2 == 0 {
            rem.rem(a.wrapping_add(i.wrapping_mul(b)))
        } else if narrow {
            // 32-bit arithmetic, as the module's non-64-bit path.
            let x = (a as u32).wrapping_add((i as u32).wrapping_mul(b as u32));
            u64::from(x % (1u32 << n2))
        } else {
            a.wrapping_add(i.wrapping_mul(b)) % (1u64 << n2)
        }
    })
}

/// One sub-filter of a chain, as the module keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct RedisBloomLink {
    bytes: Vec<u8>,
    bits: u64,
    /// `x % bits` by multiplication.
    rem: FastMod,
    size: u64,
    error: f64,
    bpe: f64,
    hashes: u32,
    entries: u64,
    n2: u8,
}

impl RedisBloomLink {
    /// A sub-filter for `entries` keys at `error`, sized as the module sizes it (no rounding
    /// to a power of two: RedisBloom 2.x creates every filter so).
    fn new(entries: u64, error: f64) -> Result<RedisBloomLink, Error> {
        let (bpe, bytes) = RedisBloomLink::sized(entries, error);
        let v = zeroed(bytes)?;
        Ok(RedisBloomLink {
            bytes: v,
            bits: bytes * 8,
            rem: FastMod::new(bytes * 8),
            size: 0,
            error,
            bpe,
            hashes: (LN2 * bpe).ceil() as u32,
            entries,
            n2: 0,
        })
    }

    /// Bits per entry and bytes of a sub-filter for `entries` keys at `error`, as the module
    /// sizes it, without allocating: the bytes checked against a limit first.
    fn sized(entries: u64, error: f64) -> (f64, u64) {
        let bpe = (-(error.ln() / LN2_SQUARED)).abs();
        // `(uint64_t)(entries * bpe)`: a cast that saturates (and the bytes with it).
        let bits = ((entries as f64 * bpe) as u64).max(1);
        (bpe, bits.div_ceil(64).saturating_mul(8))
    }

    /// The bit positions of a key with hashes `(a, b)`, as the module computes them.
    #[inline]
    fn positions(&self, h: (u64, u64), force64: bool) -> impl Iterator<Item = u64> + use<> {
        let narrow = self.n2 > 0 && !force64 && self.n2 <= 31;
        positions(self.rem, self.n2, narrow, self.hashes, h)
    }

    fn has(&self, h: (u64, u64), force64: bool) -> bool {
        self.positions(h, force64)
            .all(|x| self.bytes[(x >> 3) as usize] & (1 << (x % 8)) != 0)
    }

    fn set(&mut self, h: (u64, u64), force64: bool) {
        let narrow = self.n2 > 0 && !force64 && self.n2 <= 31;
        let (rem, n2, hashes) = (self.rem, self.n2, self.hashes);
        for x in positions(rem, n2, narrow, hashes, h) {
            self.bytes[(x >> 3) as usize] |= 1 << (x % 8);
        }
    }

    /// Asks for the cache lines of a key's bits in this sub-filter.
    fn prefetch(&self, h: (u64, u64), force64: bool) {
        for x in self.positions(h, force64) {
            bloomkit_core::batch::prefetch(&self.bytes[(x >> 3) as usize]);
        }
    }

    /// Keys this sub-filter takes before the chain grows.
    pub fn capacity(&self) -> u64 {
        self.entries
    }

    /// Keys inserted into it.
    pub fn len(&self) -> u64 {
        self.size
    }

    /// Whether no key was inserted into it.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Its false-positive rate at capacity.
    pub fn error_rate(&self) -> f64 {
        self.error
    }

    /// Bits (`m`).
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Hash functions (`k`).
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Its bit array, as the module keeps it.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// A piece of a dump: bytes `at..at + len` of sub-filter `link`, at offset `start` over all
/// sub-filters' bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece {
    pub(crate) link: usize,
    pub(crate) at: usize,
    pub(crate) start: u64,
    pub(crate) len: usize,
}

/// RedisBloom's scalable Bloom filter (a chain of sub-filters), locally: answers exactly as
/// the module for the same keys, from a `BF.SCANDUMP` ([`from_dump`](Self::from_dump),
/// [`RedisBloomFilter::download`](crate::RedisBloomFilter::download)), or built offline
/// ([`new`](Self::new), [`insert`](Self::insert)) and loaded with `BF.LOADCHUNK`
/// ([`chunks`](Self::chunks), [`RedisBloomFilter::load`](crate::RedisBloomFilter::load)).
///
/// # Examples
///
/// ```
/// use bloomkit_redis::RedisBloomChain;
///
/// // What `BF.RESERVE f 0.01 1000` creates, filled offline.
/// let mut chain = RedisBloomChain::new(1_000, 0.01, Some(2))?;
/// for i in 0..3_000 {
///     chain.insert(format!("user:{i}"))?;
/// }
/// assert!(chain.contains("user:42"));
/// assert_eq!(chain.links().len(), 2); // grew once, as the module would
///
/// // The chunks `BF.LOADCHUNK` takes, and back.
/// let chunks: Vec<(u64, Vec<u8>)> = chain.chunks().map(|(i, c)| (i, c.to_vec())).collect();
/// let copy = RedisBloomChain::from_dump(chunks)?;
/// assert_eq!(copy, chain);
/// # Ok::<(), bloomkit_redis::Error>(())
/// ```
///
/// # Memory
///
/// A chain never holds more than its [`max_bytes`](Self::max_bytes) of sub-filter bytes
/// ([`DEFAULT_MAX_BYTES`](crate::DEFAULT_MAX_BYTES) unless
/// [`with_max_bytes`](Self::with_max_bytes) says otherwise): a header that declares more, or
/// a growth that would pass it (a dump's growth factor can be any `u32`), is
/// [`Error::TooLarge`] before anything is allocated.
#[derive(Debug, Clone)]
pub struct RedisBloomChain {
    links: Vec<RedisBloomLink>,
    /// Where each sub-filter's bytes start among all sub-filters' bytes in order: a chunk
    /// finds its sub-filter by binary search.
    starts: Vec<u64>,
    size: u64,
    options: u32,
    growth: u32,
    max_bytes: u64,
}

/// Chains are equal when they hold the same sub-filters and header fields (the memory
/// limit is this process's setting, not the filter's).
impl PartialEq for RedisBloomChain {
    fn eq(&self, other: &RedisBloomChain) -> bool {
        (&self.links, self.size, self.options, self.growth)
            == (&other.links, other.size, other.options, other.growth)
    }
}

/// The name errors of a local chain give.
const LOCAL: &str = "local RedisBloom chain";

/// [`Error::TooLarge`] for a local chain of `bytes` bytes of sub-filters.
fn too_large(bytes: u64, max_bytes: u64) -> Error {
    Error::TooLarge {
        name: LOCAL.to_owned(),
        bits: bytes.saturating_mul(8),
        max_bytes,
    }
}

/// Checks sizing as `BF.RESERVE` does.
pub(crate) fn check_sizing(
    capacity: u64,
    error_rate: f64,
    expansion: Option<u32>,
) -> Result<(), Error> {
    if capacity == 0 {
        return Err(Error::Filter(bloomkit_core::Error::ZeroItems));
    }
    if !(error_rate > 0.0 && error_rate < 1.0) {
        return Err(Error::Filter(bloomkit_core::Error::InvalidFpr(error_rate)));
    }
    if expansion == Some(0) {
        return Err(Error::Filter(bloomkit_core::Error::InvalidGrowth {
            what: Setting::Growth,
            expected: "an integer of at least 1",
            got: 0.0,
        }));
    }
    Ok(())
}

fn bad(detail: impl Into<String>) -> Error {
    Error::Corrupt {
        name: "BF.SCANDUMP".to_owned(),
        detail: detail.into(),
    }
}

/// A little-endian reader over a header.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        head.try_into().expect("length checked")
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
}

impl RedisBloomChain {
    /// An empty chain as `BF.RESERVE key error_rate capacity [EXPANSION e | NONSCALING]`
    /// creates it: `expansion` `None` is `NONSCALING`. The first sub-filter gets half the
    /// error rate (each later one half of the one before) unless the chain never grows.
    ///
    /// Its memory limit is [`DEFAULT_MAX_BYTES`](crate::DEFAULT_MAX_BYTES)
    /// ([`new_within`](Self::new_within) takes another).
    ///
    /// # Errors
    /// [`Error::Filter`] for capacity 0, a rate outside (0, 1), expansion 0, or a size that
    /// cannot be allocated; [`Error::TooLarge`] when the first sub-filter alone passes the
    /// limit.
    pub fn new(
        capacity: u64,
        error_rate: f64,
        expansion: Option<u32>,
    ) -> Result<RedisBloomChain, Error> {
        RedisBloomChain::new_within(capacity, error_rate, expansion, crate::DEFAULT_MAX_BYTES)
    }

    /// [`new`](Self::new) with a limit of `max_bytes` bytes of sub-filters, which the chain
    /// keeps ([`with_max_bytes`](Self::with_max_bytes)).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn new_within(
        capacity: u64,
        error_rate: f64,
        expansion: Option<u32>,
        max_bytes: u64,
    ) -> Result<RedisBloomChain, Error> {
        check_sizing(capacity, error_rate, expansion)?;
        let tightening = if expansion.is_some() { 0.5 } else { 1.0 };
        let options = NOROUND | FORCE64 | if expansion.is_none() { NO_SCALING } else { 0 };
        let (_, bytes) = RedisBloomLink::sized(capacity, error_rate * tightening);
        if bytes > max_bytes {
            return Err(too_large(bytes, max_bytes));
        }
        Ok(RedisBloomChain {
            links: vec![RedisBloomLink::new(capacity, error_rate * tightening)?],
            starts: vec![0],
            size: 0,
            options,
            growth: expansion.unwrap_or(DEFAULT_EXPANSION),
            max_bytes,
        })
    }

    /// The chain with a memory limit of `max_bytes` bytes of sub-filters in place of
    /// [`DEFAULT_MAX_BYTES`](crate::DEFAULT_MAX_BYTES): an insert whose growth would pass it
    /// is [`Error::TooLarge`] (the chain is kept whatever it holds now).
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: u64) -> RedisBloomChain {
        self.max_bytes = max_bytes;
        self
    }

    /// The most bytes of sub-filters this chain may hold (see
    /// [`with_max_bytes`](Self::with_max_bytes)).
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Bytes of sub-filters held.
    fn held_bytes(&self) -> u64 {
        self.starts.last().copied().unwrap_or(0)
            + self.links.last().map_or(0, |l| l.bytes.len() as u64)
    }

    /// Whether `key` may be in the filter: what `BF.EXISTS` answers.
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        let h = hashes_of(key.as_ref(), self.options);
        let force64 = self.options & FORCE64 != 0;
        self.links.iter().rev().any(|l| l.has(h, force64))
    }

    /// Inserts `key` as `BF.ADD` does; `true` if it was new (`BF.ADD` answers 1). A key
    /// already answered present is not counted. A full sub-filter makes the chain grow.
    ///
    /// # Errors
    /// [`Error::Full`] when the chain never grows (`NONSCALING`) and is full: nothing
    /// changed. [`Error::TooLarge`] when the new sub-filter would take the chain past its
    /// [`max_bytes`](Self::max_bytes), [`Error::Filter`] when it cannot be allocated: nothing
    /// changed either.
    pub fn insert(&mut self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        self.insert_hashed(hashes_of(key.as_ref(), self.options))
    }

    /// Inserts `keys` in order, as [`insert`](Self::insert) each, with the memory of the keys
    /// a few ahead requested early (a batch job's build); returns how many were new.
    ///
    /// # Errors
    /// As [`insert`](Self::insert): the keys before the one refused are in.
    pub fn insert_batch<I>(&mut self, keys: I) -> Result<u64, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let mut new = 0;
        let force64 = self.options & FORCE64 != 0;
        let options = self.options;
        let mut ahead = std::collections::VecDeque::with_capacity(AHEAD);
        let mut keys = keys.into_iter();
        loop {
            while ahead.len() < AHEAD {
                let Some(key) = keys.next() else { break };
                let h = hashes_of(key.as_ref(), options);
                self.links
                    .last()
                    .expect("a chain has a link")
                    .prefetch(h, force64);
                ahead.push_back(h);
            }
            let Some(h) = ahead.pop_front() else { break };
            new += u64::from(self.insert_hashed(h)?);
        }
        Ok(new)
    }

    /// Appends, for each of `keys` in order, whether it may be in the filter, with the
    /// memory of the keys a few ahead requested early.
    pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let force64 = self.options & FORCE64 != 0;
        let newest = self.links.last().expect("a chain has a link");
        let mut ahead = std::collections::VecDeque::with_capacity(AHEAD);
        let mut keys = keys.into_iter();
        loop {
            while ahead.len() < AHEAD {
                let Some(key) = keys.next() else { break };
                let h = hashes_of(key.as_ref(), self.options);
                newest.prefetch(h, force64);
                ahead.push_back(h);
            }
            let Some(h) = ahead.pop_front() else { break };
            out.push(self.links.iter().rev().any(|l| l.has(h, force64)));
        }
    }

    /// [`insert`](Self::insert) of a key whose hashes are `h`.
    fn insert_hashed(&mut self, h: (u64, u64)) -> Result<bool, Error> {
        let force64 = self.options & FORCE64 != 0;
        if self.links.iter().rev().any(|l| l.has(h, force64)) {
            return Ok(false);
        }
        let last = self.links.last().expect("a chain has a link");
        if last.size >= last.entries {
            if self.options & NO_SCALING != 0 {
                return Err(Error::Full {
                    name: "local RedisBloom chain".to_owned(),
                    detail: format!(
                        "{} keys in a non-scaling filter of {}",
                        self.size, last.entries
                    ),
                });
            }
            if self.options & NOROUND == 0 {
                // The module sizes such a chain's next sub-filter to a power of two; that
                // sizing is not reproduced here, so the copy would stop answering as it.
                return Err(Error::Corrupt {
                    name: "local RedisBloom chain".to_owned(),
                    detail: "growing a chain from an old dump (sizes rounded to powers of \
                             two) is not supported locally: insert through the server"
                        .to_owned(),
                });
            }
            // The new sub-filter's bytes against the limit before anything is allocated:
            // a dump's growth factor can be any `u32`.
            let held = self.held_bytes();
            let entries = last.entries.saturating_mul(u64::from(self.growth));
            let error = last.error * 0.5;
            let (_, bytes) = RedisBloomLink::sized(entries, error);
            let total = held.saturating_add(bytes);
            if total > self.max_bytes {
                return Err(too_large(total, self.max_bytes));
            }
            self.links.push(RedisBloomLink::new(entries, error)?);
            self.starts.push(held);
        }
        let size = self.size.checked_add(1).ok_or_else(|| Error::Full {
            name: "local RedisBloom chain".to_owned(),
            detail: "2^64 - 1 keys".to_owned(),
        })?;
        let last = self.links.last_mut().expect("a chain has a link");
        last.set(h, force64);
        last.size += 1;
        self.size = size;
        Ok(true)
    }

    /// Keys inserted: `BF.CARD`.
    pub fn len(&self) -> u64 {
        self.size
    }

    /// Whether no key was inserted.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// The sub-filters, oldest first.
    pub fn links(&self) -> &[RedisBloomLink] {
        &self.links
    }

    /// The growth factor; `None` when the chain never grows.
    pub fn expansion(&self) -> Option<u32> {
        (self.options & NO_SCALING == 0).then_some(self.growth)
    }

    /// What `BF.INFO` reports for this chain.
    pub fn info(&self) -> crate::options::RedisBloomInfo {
        crate::options::RedisBloomInfo {
            capacity: self
                .links
                .iter()
                .fold(0u64, |sum, l| sum.saturating_add(l.entries)),
            size: self.links.iter().fold(CHAIN_OVERHEAD, |sum, l| {
                sum.saturating_add(LINK_OVERHEAD + l.bytes.len() as u64)
            }),
            filters: self.links.len() as u64,
            items: self.size,
            expansion: self.expansion().map(u64::from),
        }
    }

    /// The dump's header (`BF.SCANDUMP key 0`).
    pub fn header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER + LINK * self.links.len());
        h.extend_from_slice(&self.size.to_le_bytes());
        h.extend_from_slice(&(self.links.len() as u32).to_le_bytes());
        h.extend_from_slice(&self.options.to_le_bytes());
        h.extend_from_slice(&self.growth.to_le_bytes());
        for l in &self.links {
            h.extend_from_slice(&(l.bytes.len() as u64).to_le_bytes());
            h.extend_from_slice(&l.bits.to_le_bytes());
            h.extend_from_slice(&l.size.to_le_bytes());
            h.extend_from_slice(&l.error.to_le_bytes());
            h.extend_from_slice(&l.bpe.to_le_bytes());
            h.extend_from_slice(&l.hashes.to_le_bytes());
            h.extend_from_slice(&l.entries.to_le_bytes());
            h.push(l.n2);
        }
        h
    }

    /// The dump as `BF.SCANDUMP` gives it and `BF.LOADCHUNK` takes it: `(iterator, bytes)`
    /// pairs, the header first (iterator 1, as `BF.LOADCHUNK` wants it), then each
    /// sub-filter's bytes in chunks of at most [`MAX_CHUNK_BYTES`], each with the iterator
    /// `BF.SCANDUMP` answers after it (offset + 1 + length).
    pub fn chunks(&self) -> impl Iterator<Item = (u64, std::borrow::Cow<'_, [u8]>)> + '_ {
        let header = std::iter::once((1, std::borrow::Cow::Owned(self.header())));
        header.chain(self.pieces().map(|p| {
            let bytes = &self.links[p.link].bytes[p.at..p.at + p.len];
            (
                p.start + 1 + p.len as u64,
                std::borrow::Cow::Borrowed(bytes),
            )
        }))
    }

    /// Each piece of the bytes `BF.SCANDUMP` sends, in order (at most [`MAX_CHUNK_BYTES`],
    /// within one sub-filter).
    pub(crate) fn pieces(&self) -> impl Iterator<Item = Piece> + '_ {
        let mut offset = 0u64;
        self.links.iter().enumerate().flat_map(move |(link, l)| {
            let start = offset;
            let n = l.bytes.len();
            offset += n as u64;
            (0..n).step_by(MAX_CHUNK_BYTES).map(move |at| Piece {
                link,
                at,
                start: start + at as u64,
                len: (n - at).min(MAX_CHUNK_BYTES),
            })
        })
    }

    /// An empty chain of the shape a dump's header gives (`BF.LOADCHUNK key 1 header`),
    /// checked as the module checks it and more (sizes consistent, nothing that would make a
    /// lookup read past the bits); fill it with [`load_chunk`](Self::load_chunk). It
    /// allocates the bytes the header declares: check [`declared_bytes`](Self::declared_bytes)
    /// first for a header from elsewhere
    /// ([`from_bytes`](Self::from_bytes) and
    /// [`from_dump`](Self::from_dump) allocate no more than their input holds). A header that
    /// declares more than [`DEFAULT_MAX_BYTES`](crate::DEFAULT_MAX_BYTES) is refused before
    /// anything is allocated ([`from_header_within`](Self::from_header_within) takes another
    /// limit).
    ///
    /// # Errors
    /// [`Error::Corrupt`] for a header the module would refuse or that cannot be,
    /// [`Error::TooLarge`] past the limit, and [`Error::Filter`] when its bits cannot be
    /// allocated.
    pub fn from_header(header: &[u8]) -> Result<RedisBloomChain, Error> {
        RedisBloomChain::from_header_within(header, crate::DEFAULT_MAX_BYTES)
    }

    /// [`from_header`](Self::from_header) with a limit of `max_bytes` bytes of sub-filters,
    /// which the chain keeps ([`with_max_bytes`](Self::with_max_bytes)).
    ///
    /// # Errors
    /// As [`from_header`](Self::from_header).
    pub fn from_header_within(header: &[u8], max_bytes: u64) -> Result<RedisBloomChain, Error> {
        if header.len() < HEADER {
            return Err(bad(format!("a header of {} bytes", header.len())));
        }
        let mut r = Reader(header);
        let size = r.u64();
        let count = u64::from(r.u32());
        let options = r.u32();
        let growth = r.u32();
        if count == 0 || count > MAX_LINKS {
            return Err(bad(format!("{count} sub-filters")));
        }
        if header.len() as u64 != HEADER as u64 + LINK as u64 * count {
            return Err(bad(format!(
                "a header of {} bytes for {count} sub-filters",
                header.len()
            )));
        }
        if options & !(NOROUND | ENTS_IS_BITS | FORCE64 | NO_SCALING) != 0 {
            return Err(bad(format!("options {options:#x}")));
        }
        if growth == 0 && options & NO_SCALING == 0 {
            return Err(bad("a growing chain with growth 0"));
        }
        let declared = RedisBloomChain::declared_bytes(header).unwrap_or(u64::MAX);
        if declared > max_bytes {
            return Err(too_large(declared, max_bytes));
        }
        let mut links = Vec::with_capacity(count as usize);
        let mut starts = Vec::with_capacity(count as usize);
        let mut start = 0u64;
        let mut total = 0u64;
        for i in 0..count {
            let bytes = r.u64();
            let bits = r.u64();
            let items = r.u64();
            let error = r.f64();
            let bpe = r.f64();
            let hashes = r.u32();
            let entries = r.u64();
            let n2 = r.take::<1>()[0];
            let wrong = |what: String| Err(bad(format!("sub-filter {i}: {what}")));
            if entries == 0 || items > entries {
                return wrong(format!("{items} items for a capacity of {entries}"));
            }
            if !(error > 0.0 && error < 1.0) {
                return wrong(format!("error rate {error}"));
            }
            if bits == 0 || bytes.checked_mul(8) != Some(bits) {
                return wrong(format!("{bits} bits in {bytes} bytes"));
            }
            if n2 > 63 || (n2 > 0 && bits < 1u64 << n2) {
                return wrong(format!("{bits} bits for a size of 2^{n2}"));
            }
            if !bpe.is_finite()
                || hashes == 0
                || hashes > MAX_HASHES
                || hashes != (LN2 * bpe).ceil() as u32
            {
                return wrong(format!("{hashes} hashes for {bpe} bits per entry"));
            }
            total = total
                .checked_add(items)
                .ok_or_else(|| bad("the sub-filters' items overflow"))?;
            let v = zeroed(bytes)?;
            starts.push(start);
            start += bytes;
            links.push(RedisBloomLink {
                bytes: v,
                bits,
                rem: FastMod::new(bits),
                size: items,
                error,
                bpe,
                hashes,
                entries,
                n2,
            });
        }
        if total != size {
            return Err(bad(format!(
                "{size} items in the header, {total} in its sub-filters"
            )));
        }
        Ok(RedisBloomChain {
            links,
            starts,
            size,
            options,
            growth,
            max_bytes,
        })
    }

    /// The whole dump in one buffer: the header, then every sub-filter's bytes in order
    /// (`BF.SCANDUMP`'s chunks concatenated), for a file.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.header();
        for l in &self.links {
            out.extend_from_slice(&l.bytes);
        }
        out
    }

    /// A chain from [`to_bytes`](Self::to_bytes)'s buffer: the header (its length from its
    /// count of sub-filters), then exactly the bytes it declares. It allocates no more than
    /// the buffer holds, whatever its size; its limit for growing after is
    /// [`DEFAULT_MAX_BYTES`](crate::DEFAULT_MAX_BYTES) ([`with_max_bytes`](Self::with_max_bytes)).
    ///
    /// # Errors
    /// As [`from_header`](Self::from_header); a buffer shorter or longer than its header
    /// declares is [`Error::Corrupt`].
    pub fn from_bytes(bytes: &[u8]) -> Result<RedisBloomChain, Error> {
        if bytes.len() < HEADER {
            return Err(bad(format!("a dump of {} bytes", bytes.len())));
        }
        let count = u64::from(u32::from_le_bytes(
            bytes[8..12].try_into().expect("4 bytes"),
        ));
        let header = (HEADER as u64).saturating_add(count.saturating_mul(LINK as u64));
        let header = usize::try_from(header)
            .ok()
            .filter(|&h| h <= bytes.len())
            .ok_or_else(|| {
                bad(format!(
                    "a dump of {} bytes for {count} sub-filters",
                    bytes.len()
                ))
            })?;
        let (head, body) = bytes.split_at(header);
        let declared = RedisBloomChain::declared_bytes(head).unwrap_or(u64::MAX);
        if declared != body.len() as u64 {
            return Err(bad(format!(
                "{} bytes of sub-filters, the header declares {declared}",
                body.len()
            )));
        }
        // The bytes are in hand (declared == held): no limit on reading them; the default
        // one on growing past them.
        let mut chain = RedisBloomChain::from_header_within(head, u64::MAX)?
            .with_max_bytes(crate::DEFAULT_MAX_BYTES);
        let mut at = 0;
        for l in &mut chain.links {
            let n = l.bytes.len();
            l.bytes.copy_from_slice(&body[at..at + n]);
            at += n;
        }
        Ok(chain)
    }

    /// The bytes a dump's header declares, all sub-filters together, without allocating
    /// them: for a limit checked before a download or a decode.
    ///
    /// `None` for a header whose length is not that of whole entries.
    pub fn declared_bytes(header: &[u8]) -> Option<u64> {
        if header.len() < HEADER || !(header.len() - HEADER).is_multiple_of(LINK) {
            return None;
        }
        header[HEADER..].chunks(LINK).try_fold(0u64, |sum, l| {
            sum.checked_add(u64::from_le_bytes(l[..8].try_into().expect("8 bytes")))
        })
    }

    /// Copies a data chunk of a dump in (`BF.LOADCHUNK key iterator bytes`, for an iterator
    /// past the header): `iterator` is the one `BF.SCANDUMP` answered after the chunk, so the
    /// chunk starts at byte `iterator - 1 - len` of the sub-filters' bytes in order, and must
    /// lie within one sub-filter.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for a chunk that is empty, starts nowhere, or crosses the end of
    /// its sub-filter (nothing is copied).
    pub fn load_chunk(&mut self, iterator: u64, chunk: &[u8]) -> Result<(), Error> {
        let len = chunk.len() as u64;
        let start = iterator
            .checked_sub(len + 1)
            .filter(|_| len > 0)
            .ok_or_else(|| bad(format!("a chunk of {len} bytes at iterator {iterator}")))?;
        // The last sub-filter starting at or before `start`: a binary search, so a dump's
        // chunks load in time linear in the dump whatever its number of sub-filters.
        let link = self
            .starts
            .partition_point(|&s| s <= start)
            .saturating_sub(1);
        let (l, at) = (&mut self.links[link], start - self.starts[link]);
        let n = l.bytes.len() as u64;
        if at >= n {
            return Err(bad(format!(
                "iterator {iterator} is past the last sub-filter"
            )));
        }
        if len > n - at {
            return Err(bad(format!(
                "a chunk of {len} bytes at iterator {iterator} crosses a sub-filter's end"
            )));
        }
        l.bytes[at as usize..(at + len) as usize].copy_from_slice(chunk);
        Ok(())
    }

    /// A chain from a whole dump: `(iterator, bytes)` pairs as `BF.SCANDUMP` answers them
    /// (the header first, with iterator 1; a final `(0, [])` is allowed).
    ///
    /// # Errors
    /// As [`from_header`](Self::from_header) and [`load_chunk`](Self::load_chunk); a
    /// dump without a header or with chunks missing is [`Error::Corrupt`].
    pub fn from_dump<I, B>(chunks: I) -> Result<RedisBloomChain, Error>
    where
        I: IntoIterator<Item = (u64, B)>,
        B: AsRef<[u8]>,
    {
        // Every chunk in hand before the header's sizes are allocated: a header alone cannot
        // make this allocate more than the dump holds.
        let mut chunks: Vec<(u64, B)> = chunks.into_iter().collect();
        let held: u64 = chunks
            .iter()
            .skip(1)
            .map(|(_, c)| c.as_ref().len() as u64)
            .sum();
        let header = match chunks.first() {
            Some((1, header)) => header.as_ref(),
            _ => return Err(bad("a dump starts with its header, at iterator 1")),
        };
        let total = RedisBloomChain::declared_bytes(header)
            .ok_or_else(|| bad(format!("a header of {} bytes", header.len())))?;
        if total != held {
            return Err(bad(format!("{held} bytes in the dump, {total} declared")));
        }
        // Every chunk is in hand (checked above): no limit on reading them; the default one
        // on growing past them.
        let mut chain = RedisBloomChain::from_header_within(header, u64::MAX)?
            .with_max_bytes(crate::DEFAULT_MAX_BYTES);
        let mut filled = 0u64;
        for (iterator, chunk) in chunks.drain(1..) {
            let chunk = chunk.as_ref();
            if iterator == 0 && chunk.is_empty() {
                break;
            }
            // In order, as `BF.SCANDUMP` sends them: each starts where the last ended.
            if iterator != filled + 1 + chunk.len() as u64 {
                return Err(bad(format!(
                    "a chunk of {} bytes at iterator {iterator} after {filled} bytes",
                    chunk.len()
                )));
            }
            chain.load_chunk(iterator, chunk)?;
            filled += chunk.len() as u64;
        }
        if filled != total {
            return Err(bad(format!("{filled} of {total} bytes in the dump")));
        }
        Ok(chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_remainders_are_exact() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let edges = [
            0,
            1,
            2,
            3,
            7,
            63,
            64,
            65,
            u64::MAX - 1,
            u64::MAX,
            1 << 63,
            (1 << 63) + 1,
        ];
        let mut divisors: Vec<u64> = edges.into_iter().filter(|&d| d > 0).collect();
        for _ in 0..2_000 {
            let shift = next() % 64;
            divisors.push((next() >> shift).max(1));
        }
        for d in divisors {
            let f = FastMod::new(d);
            for v in edges.into_iter().chain((0..200).map(|_| next())) {
                assert_eq!(f.rem(v), v % d, "{v} % {d}");
            }
        }
    }

    #[test]
    fn batched_calls_answer_as_single_ones() {
        let keys: Vec<String> = (0..5_000).map(|i| format!("k{i}")).collect();
        let mut one = RedisBloomChain::new(500, 0.01, Some(2)).unwrap();
        let mut batched = one.clone();
        let single: u64 = keys.iter().map(|k| u64::from(one.insert(k).unwrap())).sum();
        // A key inserted again is not new, and the count says so.
        assert!(!one.clone().insert("k0").unwrap());
        assert!(single < 5_000 && single > 4_900, "{single}");
        assert_eq!(batched.insert_batch(&keys).unwrap(), single);
        assert_eq!(batched, one);
        let probes: Vec<String> = (0..20_000).map(|i| format!("k{i}")).collect();
        let mut out = Vec::new();
        one.contains_batch(&probes, &mut out);
        let expected: Vec<bool> = probes.iter().map(|k| one.contains(k)).collect();
        assert_eq!(out, expected);
        let mut full = RedisBloomChain::new(100, 0.01, None).unwrap();
        assert!(matches!(full.insert_batch(&keys), Err(Error::Full { .. })));
        assert_eq!(full.len(), 100);
    }

    #[test]
    fn murmur_matches_the_modules_golden_values() {
        // Computed with RedisBloom 2.8.2's own MurmurHash2.c (gcc, x86-64).
        for (key, a, b) in [
            (&b"hello"[..], 0x5ba5_b8a5_9803_e699, 0xa7d4_51d5_88a0_c2a4),
            (b"", 0x1ab1_1ea5_a7b2_c56e, 0xbbdd_cb5a_b56d_d547),
            (b"a", 0x4292_cee2_27b9_150a, 0x7e9b_5270_31f5_0c11),
            (b"abcdefgh", 0xd435_df7a_565a_8af1, 0xbf3d_673c_0b10_29cf),
            (
                b"hello world!",
                0x6fc0_90f3_e01a_7b8c,
                0xac73_5213_3b63_861a,
            ),
            (b"foo", 0x822b_4f99_b121_f10d, 0x9d63_d52a_557f_61c2),
        ] {
            assert_eq!(hashes_of(key, FORCE64), (a, b), "{key:?}");
        }
    }

    #[test]
    fn a_reserved_chain_has_the_modules_header_and_bits() {
        // `BF.RESERVE f 0.01 1000`, `BF.ADD f hello`, `BF.SCANDUMP f 0`, from RedisBloom 2.8.2.
        let mut chain = RedisBloomChain::new(1000, 0.01, Some(2)).unwrap();
        assert!(chain.insert("hello").unwrap());
        let golden = "0100000000000000010000000500000002000000\
                      6805000000000000402b00000000000001000000000000007b14ae47e17a743f\
                      e9862fb2350e264008000000e80300000000000000";
        let hex: String = chain.header().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, golden);
        let set: Vec<u64> = (0..chain.links[0].bits)
            .filter(|&x| chain.links[0].bytes[(x / 8) as usize] & (1 << (x % 8)) != 0)
            .collect();
        let mut expected = vec![11033, 2749, 3681, 6469, 7401, 10189, 1905, 2837];
        expected.sort_unstable();
        assert_eq!(set, expected);
        assert_eq!(
            chain.info(),
            crate::options::RedisBloomInfo {
                capacity: 1000,
                size: 1480,
                filters: 1,
                items: 1,
                expansion: Some(2)
            }
        );
    }

    #[test]
    fn growth_sizes_links_as_the_module() {
        // `BF.RESERVE f 0.01 10` then 300 adds: links of 16/32/72/160/336 bytes, 8..=12
        // hashes, capacities 10..=160 (BF.DEBUG on RedisBloom 2.8.2).
        let mut chain = RedisBloomChain::new(10, 0.01, Some(2)).unwrap();
        for i in 0..300 {
            chain.insert(format!("k{i}")).unwrap();
        }
        let shape: Vec<(usize, u32, u64)> = chain
            .links
            .iter()
            .map(|l| (l.bytes.len(), l.hashes, l.entries))
            .collect();
        assert_eq!(
            shape,
            [
                (16, 8, 10),
                (32, 9, 20),
                (72, 10, 40),
                (160, 11, 80),
                (336, 12, 160)
            ]
        );
    }

    #[test]
    fn a_non_scaling_chain_refuses_new_keys_when_full() {
        let mut chain = RedisBloomChain::new(5, 0.05, None).unwrap();
        let mut added = 0;
        let mut i = 0;
        while added < 5 {
            // An `if`, not `+= usize::from(bool)` (rust-lang/rust#158206).
            if chain.insert(format!("k{i}")).unwrap() {
                added += 1;
            }
            i += 1;
        }
        let before = chain.clone();
        let refused = (i..i + 100).find_map(|j| chain.insert(format!("k{j}")).err());
        assert!(matches!(refused, Some(Error::Full { .. })), "{refused:?}");
        assert_eq!(chain.len(), before.len());
    }

    #[test]
    fn chunks_read_back_and_bad_dumps_are_refused() {
        let mut chain = RedisBloomChain::new(100, 0.001, Some(3)).unwrap();
        for i in 0..1000 {
            chain.insert(i.to_string()).unwrap();
        }
        let chunks: Vec<(u64, Vec<u8>)> = chain.chunks().map(|(i, c)| (i, c.to_vec())).collect();
        assert_eq!(RedisBloomChain::from_dump(chunks.clone()).unwrap(), chain);
        // Every truncation of the header, and every dump with a chunk missing, is an error.
        for cut in 0..chunks[0].1.len() {
            assert!(RedisBloomChain::from_header(&chunks[0].1[..cut]).is_err());
        }
        for skip in 1..chunks.len() {
            let mut less = chunks.clone();
            less.remove(skip);
            assert!(RedisBloomChain::from_dump(less).is_err());
        }
        // Every single-byte corruption of the header either parses to a consistent chain or
        // is refused; none panics.
        for at in 0..chunks[0].1.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut header = chunks[0].1.clone();
                header[at] ^= flip;
                let _ = RedisBloomChain::from_header(&header);
            }
        }
    }
}
