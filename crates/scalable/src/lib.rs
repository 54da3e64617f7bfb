//! A scalable Bloom filter: it grows with its content, for when the number of items is not
//! known in advance (a crawler's seen-URL set, a stream of event ids), and keeps its
//! false-positive promise while it grows.
//!
//! It is a list of Bloom filters ("slices", Almeida et al. 2007, "Scalable Bloom
//! Filters"). Each new slice holds `s` times the items of the last (growth `s`, default 2)
//! at a tighter rate `p_i = p0 * r^i` (tightening `r`, default 0.85), so the compound rate
//! is at most `p0 / (1 - r)`. Most implementations set `p0 = p` and overshoot their target
//! several-fold once they have grown; bloomkit sets **`p0 = p * (1 - r)`**, so the bound is
//! `p` itself.
//!
//! The slices are cache-line blocked filters ([`BlockedBloomFilter`]), each sized with the
//! blocked model to its own rate: a lookup costs one cache line per slice, and an absent key
//! is usually ruled out by one or two bit tests in it.
//!
//! # Examples
//!
//! ```
//! use bloomkit_scalable::ScalableBloomFilter;
//!
//! // Start small; grow as the crawl goes.
//! let mut seen = ScalableBloomFilter::new(1_000, 0.01)?;
//! for i in 0..50_000u64 {
//!     seen.try_insert(&i)?;
//! }
//! assert!(seen.contains(&123u64));
//! assert!(seen.fpr_bound() <= 0.01);     // the guarantee, whatever the growth
//! assert_eq!(seen.num_slices(), 6);     // 1,000 + 2,000 + ... + 32,000 >= 50,000
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! With a hard cap, inserts past it are refused and change nothing:
//!
//! ```
//! use bloomkit_scalable::ScalableBloomFilter;
//!
//! let mut capped = ScalableBloomFilter::builder(100, 0.01).growth(4).max_items(150).build()?;
//! for i in 0..150u64 {
//!     capped.try_insert(&i)?;
//! }
//! assert!(capped.try_insert(&1_000u64).is_err());
//! assert!(!capped.contains(&1_000u64));
//! assert_eq!(capped.len(), 150);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! # Cost
//!
//! After growing from `c0` to `n` items there are about `log_s(n / c0)` slices (10 for
//! 1,000x at `s = 2`, 6 for `s = 4`), using 1.9x (`s = 2`) to 2.3x (`s = 4`) the memory of
//! a classic filter sized for `n` at 1%. A key is hashed once; a lookup then tests the slices
//! newest (largest, most likely to hold a member) first, one cache line each, and shares
//! the key's positions inside a block across all of them. Measured after 1,000x growth at 1%
//! against a classic filter sized for the final `n`
//! (`cargo bench -p bloomkit-benches --bench scalable`, three runs): members 0.90-0.96x
//! (`s = 2`) and 0.87-0.91x (`s = 4`) its time, absent keys 2.5-2.7x and 1.7-1.8x.
//!
//! The tightening ratio trades early memory for late: 0.85 (the default) uses less memory
//! up to about 100x growth, 0.9 from about 1000x on.
//!
//! # Crate features
//!
//! - `serde` (default): `Serialize`/`Deserialize` (validated on the way in), and
//!   [`ScalableBloomFilter::to_bytes`] / [`ScalableBloomFilter::from_bytes`] in bloomkit's
//!   versioned byte format.

#![forbid(unsafe_code)]

/// The core crate this one builds on (the `Filter` trait, errors, hashing, sizing), so that
/// a user of this crate alone can name them without depending on it separately.
pub use bloomkit_core;

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use derive_where::derive_where;

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_core::batch::{pipeline, prefetch, try_insert_counting};
use bloomkit_core::build::{FromSettings, Growable, Settings, WithHasher};
use bloomkit_core::hash::block_contains;
use bloomkit_core::{
    check_fpr, sizing, Error, Limit, Parameter, PortableHasher, Setting, Union, Xxh3Builder,
};

#[cfg(feature = "serde")]
mod codec;

#[cfg(feature = "serde")]
pub use codec::ScalableBloomFilterRef;

/// The growth factor used unless set: each slice holds twice the items of the last.
pub const DEFAULT_GROWTH: u32 = 2;
/// The tightening ratio used unless set: each slice's rate is 0.85 times the last's.
pub const DEFAULT_TIGHTENING: f64 = 0.85;
/// The largest growth factor: each slice holds at most 16 times the items of the last, so
/// no insert allocates more than 16 times what the filter already holds. (Almeida et al.
/// use 2 and 4.)
pub const MAX_GROWTH: u32 = 16;
/// The tightening ratios a filter accepts, `[0.5, 0.95]`. Below 0.5 the slices' rates
/// shrink so fast that after a few dozen slices no 64-bit hash can reach them and the
/// filter stops growing; above 0.95 the first slice must be 20 times tighter than the
/// target, for little gain. (Almeida et al. recommend 0.8 to 0.9; RedisBloom halves.)
pub const TIGHTENING_RANGE: core::ops::RangeInclusive<f64> = 0.5..=0.95;

/// A scalable Bloom filter over keys of type `K`, made of blocked slices. The key type is
/// part of the filter's type, as in a `HashSet<K>`.
#[derive_where(Clone, PartialEq; S)]
pub struct ScalableBloomFilter<K: ?Sized, S = Xxh3Builder> {
    /// Oldest first; the last is the one inserts go into.
    slices: Vec<Slice<K, S>>,
    hasher: S,
    config: Config,
    /// The position in the geometric sequence of the next slice this filter creates.
    next: u32,
    /// Inserts accepted (keys that were certainly new).
    len: u64,
}

/// One blocked filter of the list, and how many items went into it.
#[derive_where(Clone, PartialEq; S)]
struct Slice<K: ?Sized, S> {
    filter: BlockedBloomFilter<K, S>,
    capacity: u64,
    items: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Config {
    initial_capacity: u64,
    fpr: f64,
    growth: u32,
    tightening: f64,
    max_items: Option<u64>,
    max_bytes: Option<u64>,
}

impl Config {
    fn check(self) -> Result<Config, Error> {
        if self.initial_capacity == 0 {
            return Err(Error::ZeroItems);
        }
        check_fpr(self.fpr)?;
        if !(2..=MAX_GROWTH).contains(&self.growth) {
            return Err(Error::InvalidGrowth {
                what: Setting::Growth,
                expected: "in 2..=16",
                got: f64::from(self.growth),
            });
        }
        if !TIGHTENING_RANGE.contains(&self.tightening) {
            return Err(Error::InvalidGrowth {
                what: Setting::Tightening,
                expected: "in [0.5, 0.95]",
                got: self.tightening,
            });
        }
        check_fpr(self.first_fpr())?;
        Ok(self)
    }

    /// [`Error::IncompatibleSettings`] naming the first setting that differs from `other`'s
    /// (limits aside).
    fn check_same_settings(&self, other: &Config) -> Result<(), Error> {
        let differ = |what, left, right| Err(Error::IncompatibleSettings { what, left, right });
        if self.fpr != other.fpr {
            return differ(Setting::TargetFpr, self.fpr, other.fpr);
        }
        if self.initial_capacity != other.initial_capacity {
            // As f64 for the message only; the comparison is exact.
            let (l, r) = (self.initial_capacity as f64, other.initial_capacity as f64);
            return differ(Setting::InitialCapacity, l, r);
        }
        if self.growth != other.growth {
            let (l, r) = (f64::from(self.growth), f64::from(other.growth));
            return differ(Setting::Growth, l, r);
        }
        if self.tightening != other.tightening {
            return differ(Setting::Tightening, self.tightening, other.tightening);
        }
        Ok(())
    }

    /// `p0 = p * (1 - r)`: the rate of the first slice, so that the sum over all slices,
    /// `p0 / (1 - r)`, is the target.
    fn first_fpr(self) -> f64 {
        self.fpr * (1.0 - self.tightening)
    }

    /// Capacity and rate of slice `i` of the sequence.
    fn slice(self, i: u32) -> Result<(u64, f64), Error> {
        let capacity = u64::from(self.growth)
            .checked_pow(i)
            .and_then(|g| g.checked_mul(self.initial_capacity))
            .ok_or(Error::TooLarge {
                what: bloomkit_core::Unit::Items,
                size: f64::INFINITY,
                max: u64::MAX,
            })?;
        Ok((capacity, self.slice_fpr(i)))
    }

    /// The rate of slice `i`, `p0 * r^i`: defined for every `i`, even where the capacity
    /// overflows.
    fn slice_fpr(self, i: u32) -> f64 {
        self.first_fpr() * self.tightening.powi(i as i32)
    }
}

impl<K: ?Sized, S: BuildHasher + Clone> FromSettings for ScalableBloomFilter<K, S> {
    type Hasher = S;

    /// The filter, with its first slice.
    ///
    /// # Errors
    /// [`Error::ZeroItems`], [`Error::InvalidFpr`], [`Error::InvalidGrowth`] for a growth
    /// outside `2..=`[`MAX_GROWTH`] or a tightening ratio outside [`TIGHTENING_RANGE`],
    /// [`Error::OverLimit`] when the first slice alone exceeds `max_bytes`, and the errors
    /// of sizing and allocation.
    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        let config = Config {
            initial_capacity: settings.items,
            fpr: settings.fpr,
            growth: settings.growth.unwrap_or(DEFAULT_GROWTH),
            tightening: settings.tightening.unwrap_or(DEFAULT_TIGHTENING),
            max_items: settings.max_items,
            max_bytes: settings.max_bytes,
        };
        let mut filter = ScalableBloomFilter {
            slices: Vec::new(),
            hasher,
            config: config.check()?,
            next: 0,
            len: 0,
        };
        filter.grow()?;
        Ok(filter)
    }
}

impl<K: ?Sized, S: BuildHasher + Clone, H: BuildHasher + Clone> WithHasher<H>
    for ScalableBloomFilter<K, S>
{
    type Output = ScalableBloomFilter<K, H>;
}

/// A scalable filter takes the builder's growth, tightening and item limit.
impl<K: ?Sized, S: BuildHasher + Clone> Growable for ScalableBloomFilter<K, S> {}

impl<K: ?Sized, S: BuildHasher + Clone> ScalableBloomFilter<K, S> {
    /// Adds the next slice of the sequence, unless a limit or an error stops it; then the
    /// filter is unchanged. Past the first slice, a slice that cannot be sized or allocated
    /// is [`Error::GrowthStopped`], which names the slice, so the caller is not left with a
    /// rate or a size they never asked for.
    fn grow(&mut self) -> Result<(), Error> {
        let slice = self.next;
        let result = self.try_grow();
        match result {
            Err(e) if slice > 0 && !matches!(e, Error::LimitReached { .. }) => {
                // The capacity saturates where it overflows u64 (only past a slice of
                // 2^59 items, which no allocator gives); the rate is always the slice's.
                let capacity = self.config.slice(slice).map_or(u64::MAX, |(c, _)| c);
                Err(Error::GrowthStopped {
                    slice,
                    capacity,
                    fpr: self.config.slice_fpr(slice),
                    source: Box::new(e),
                })
            }
            other => other,
        }
    }

    fn try_grow(&mut self) -> Result<(), Error> {
        let (capacity, fpr) = self.config.slice(self.next)?;
        // The list of slices grows one place at a time (exactly: a filter has a few dozen
        // slices at most), so the heap after this slice is known before anything is
        // allocated, and a byte limit is exact.
        let slice_size = core::mem::size_of::<Slice<K, S>>() as u64;
        let places = self.slices.capacity().max(self.slices.len() + 1) as u64;
        if let Some(max) = self.config.max_bytes {
            let plan = sizing::blocked_plan(capacity, fpr)?;
            let held = self
                .slices
                .iter()
                .map(|s| s.filter.heap_bytes() as u64)
                .sum::<u64>();
            let needed = held + plan.bits * 64 + places * slice_size;
            if needed > max {
                return Err(if self.next == 0 {
                    // At build time: the filter cannot even start.
                    Error::OverLimit {
                        what: Limit::Bytes,
                        needed,
                        limit: max,
                    }
                } else {
                    Error::LimitReached {
                        what: Limit::Bytes,
                        limit: max,
                    }
                });
            }
        }
        let filter = BlockedBloomFilter::<K>::builder(capacity, fpr)
            .hasher(self.hasher.clone())
            .build()?;
        if self.slices.len() == self.slices.capacity() {
            self.slices
                .try_reserve_exact(1)
                .map_err(|_| Error::AllocationFailed {
                    bytes: places * slice_size,
                })?;
        }
        self.slices.push(Slice {
            filter,
            capacity,
            items: 0,
        });
        self.next += 1;
        Ok(())
    }

    /// Inserts `key`. Returns `Ok(true)` if it was certainly new, `Ok(false)` if it may
    /// already be present, in which case nothing is added (repeats use no capacity).
    ///
    /// (`try_insert`, not `insert`: a scalable filter can refuse an insert, and in bloomkit
    /// `insert` names only inserts that cannot fail.)
    ///
    /// # Errors
    /// [`Error::LimitReached`] when the key is new and the filter is at its item or byte
    /// limit, or [`Error::GrowthStopped`] when the slice it needs cannot be added; the
    /// filter is then unchanged.
    #[inline]
    pub fn try_insert(&mut self, key: &K) -> Result<bool, Error>
    where
        K: Hash,
    {
        self.try_insert_hash(self.hasher.hash_one(key))
    }

    /// [`try_insert`](Self::try_insert) by hash.
    ///
    /// # Errors
    /// As [`try_insert`](Self::try_insert).
    pub fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        if let Some(max) = self.config.max_items {
            if self.len >= max {
                return Err(Error::LimitReached {
                    what: Limit::Items,
                    limit: max,
                });
            }
        }
        if self.current().items >= self.current().capacity {
            self.grow()?;
        }
        // A slice holds at most its capacity, and the capacities of the slices, whose bits
        // this filter holds, sum to far less than 2^64: neither count can overflow.
        let current = self.slices.last_mut().expect("a filter always has a slice");
        current.filter.insert_hash(hash);
        current.items += 1;
        self.len += 1;
        Ok(true)
    }

    /// Inserts every key of `keys`, in order, growing as it fills, with each key's block
    /// in every slice requested for a group of keys before any is inserted. Returns how
    /// many were certainly new (as [`try_insert`](Self::try_insert) counts them).
    ///
    /// # Errors
    /// As [`try_insert`](Self::try_insert), at the first key refused: the keys before it
    /// are in, it and the keys after it are not.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_scalable::ScalableBloomFilter;
    ///
    /// let mut f = ScalableBloomFilter::<u64>::new(100, 0.01)?;
    /// let new = f.try_insert_batch(0..10_000u64)?; // grows as it fills
    /// assert!(new > 9_900); // less the keys that may have been in already
    /// assert!(f.num_slices() > 1);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        K: Hash,
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        try_insert_counting(
            self,
            keys,
            |f, key| f.stage(key.borrow()),
            Self::try_insert_hash,
        )
    }

    /// A key's hash, with its block in every slice requested.
    #[inline(always)]
    fn stage(&self, key: &K) -> u64
    where
        K: Hash,
    {
        let hash = self.hasher.hash_one(key);
        for slice in &self.slices {
            prefetch(slice.filter.block_of(hash));
        }
        hash
    }

    fn current(&self) -> &Slice<K, S> {
        self.slices.last().expect("a filter always has a slice")
    }

    /// Whether `key` (or a form it borrows as) may be in the filter.
    #[inline]
    pub fn contains<Q: Hash + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// [`contains`](Self::contains) by hash: the slices newest (largest, most likely to hold
    /// a member) first, one cache line each. Blocks differ between slices but a key's
    /// positions inside its block do not, so they come from the same few multiplications.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.slices
            .iter()
            .rev()
            .any(|s| block_contains(s.filter.block_of(hash), hash, s.filter.num_hashes()))
    }

    /// Whether each of `keys` may be in the filter, appended to `out` in order: the answers
    /// of [`contains`](Self::contains), with the key's block in every slice requested for a
    /// group of keys before any is probed ([`bloomkit_core::batch`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_scalable::ScalableBloomFilter;
    ///
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// for i in 0..1_000u64 {
    ///     f.try_insert(&i)?;
    /// }
    /// let mut found = Vec::new();
    /// f.contains_batch(&[1u64, 500, 999], &mut found);
    /// assert_eq!(found, [true, true, true]);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        K: Hash,
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        pipeline(
            out,
            keys,
            |_, key| self.stage(key.borrow()),
            |out, hash| out.push(self.contains_hash(hash)),
        );
    }

    /// The 64-bit hash of `key` (or a form it borrows as) that the `*_hash` methods take.
    #[inline]
    pub fn hash_key<Q: Hash + ?Sized>(&self, key: &Q) -> u64
    where
        K: Borrow<Q>,
    {
        self.hasher.hash_one(key)
    }

    /// Removes every item, keeping the slices (and so the memory, the capacity and the rate
    /// bound): new items go into the newest slice until it is full, then the filter grows
    /// as before.
    pub fn clear(&mut self) {
        for slice in &mut self.slices {
            slice.filter.clear();
            slice.items = 0;
        }
        self.len = 0;
    }

    /// The number of items inserted (keys that were certainly new when inserted).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of items the current slices hold at their design rates (saturating at
    /// `u64::MAX`, which no filter that fits in memory reaches).
    pub fn capacity(&self) -> u64 {
        self.slices
            .iter()
            .fold(0u64, |sum, s| sum.saturating_add(s.capacity))
    }

    /// The number of slices.
    pub fn num_slices(&self) -> usize {
        self.slices.len()
    }

    /// The false-positive rate this filter guarantees now: the sum of its slices' design
    /// rates, at most 1. At most the target for a filter built by itself, however far it
    /// grows; the sum of the two bounds after a [`union`](Union::union_with).
    pub fn fpr_bound(&self) -> f64 {
        let sum: f64 = self
            .slices
            .iter()
            .map(|s| s.filter.design().map_or(1.0, |d| d.fpr))
            .sum();
        sum.min(1.0)
    }

    /// The false-positive rate now, from the slices' fill: `1 - prod(1 - fpr_i)`.
    pub fn estimated_fpr(&self) -> f64 {
        1.0 - self
            .slices
            .iter()
            .map(|s| 1.0 - s.filter.estimated_fpr())
            .product::<f64>()
    }

    /// Bytes of heap memory held by the slices.
    pub fn heap_bytes(&self) -> usize {
        self.slices
            .iter()
            .map(|s| s.filter.heap_bytes())
            .sum::<usize>()
            + self.slices.capacity() * core::mem::size_of::<Slice<K, S>>()
    }

    /// The growth factor.
    pub fn growth(&self) -> u32 {
        self.config.growth
    }

    /// The tightening ratio.
    pub fn tightening(&self) -> f64 {
        self.config.tightening
    }

    /// The slices, oldest first, for inspection: each is a blocked Bloom filter.
    pub fn slices(&self) -> impl ExactSizeIterator<Item = &BlockedBloomFilter<K, S>> {
        self.slices.iter().map(|s| &s.filter)
    }

    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}

impl<K: ?Sized, S: PortableHasher + Clone> Union for ScalableBloomFilter<K, S> {
    /// Takes in `other`'s slices: the result contains every item of either, and its
    /// guaranteed rate, [`fpr_bound`](ScalableBloomFilter::fpr_bound), becomes the **sum** of
    /// the two bounds (each slice keeps its own rate; nothing is re-hashed). New items keep
    /// going into `self`'s newest slice.
    ///
    /// The two must have the same target, initial capacity, growth and tightening (their
    /// limits may differ: `self`'s apply to the result).
    ///
    /// # Errors
    /// [`Error::Incompatible`] for another hasher or seed, [`Error::IncompatibleSettings`]
    /// for other settings; [`Error::LimitReached`] when the result would exceed `self`'s
    /// limits. `self` is then unchanged.
    fn union_with(&mut self, other: &Self) -> Result<(), Error> {
        let (a, b) = (self.hasher.spec(), other.hasher.spec());
        if a.id != b.id {
            return Err(Error::Incompatible {
                what: Parameter::Hashers,
                left: a.id.into(),
                right: b.id.into(),
            });
        }
        if a.seed != b.seed {
            return Err(Error::Incompatible {
                what: Parameter::Seeds,
                left: a.seed,
                right: b.seed,
            });
        }
        self.config.check_same_settings(&other.config)?;
        let len = self.len.checked_add(other.len);
        let max_items = self.config.max_items.unwrap_or(u64::MAX);
        let Some(len) = len.filter(|&len| len <= max_items) else {
            return Err(Error::LimitReached {
                what: Limit::Items,
                limit: max_items,
            });
        };
        if let Some(max) = self.config.max_bytes {
            let bytes = (self.heap_bytes() as u64).saturating_add(other.heap_bytes() as u64);
            if bytes > max {
                return Err(Error::LimitReached {
                    what: Limit::Bytes,
                    limit: max,
                });
            }
        }
        let mut slices = Vec::new();
        slices
            .try_reserve_exact(self.slices.len() + other.slices.len())
            .map_err(|_| Error::AllocationFailed {
                bytes: other.heap_bytes() as u64,
            })?;
        // Other's slices first: self's newest slice stays last, where inserts go.
        slices.extend(other.slices.iter().cloned());
        slices.append(&mut self.slices);
        self.slices = slices;
        self.len = len;
        Ok(())
    }
}

bloomkit_core::impl_fallible_filter!([S: BuildHasher + Clone] ScalableBloomFilter<K, S>, key = K);

bloomkit_core::impl_lookup!([S: BuildHasher + Clone] ScalableBloomFilter<K, S>, key = K,
    exact_len, target_fpr = |f| f.config.fpr);

/// Inserts keys or references to them, growing as the filter fills. `extend` cannot return
/// an error, and never drops a key or panics: a key the filter refuses (at the builder's
/// [`max_items`](bloomkit_core::build::Builder::max_items) or
/// [`max_bytes`](bloomkit_core::build::Builder::max_bytes), or when the next slice cannot be
/// allocated) goes into the newest slice anyway, uncounted: the limits on memory hold, and
/// the rate climbs above the target instead ([`estimated_fpr`](ScalableBloomFilter::estimated_fpr)
/// shows it). To be told instead, call [`try_insert_batch`](ScalableBloomFilter::try_insert_batch).
///
/// # Examples
///
/// ```
/// use bloomkit_scalable::ScalableBloomFilter;
///
/// let mut f = ScalableBloomFilter::<u64>::new(100, 0.01)?;
/// f.extend(0..10_000u64);
/// assert!((0..10_000u64).all(|k| f.contains(&k)));
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
impl<K: Hash + ?Sized, S: BuildHasher + Clone, T: Borrow<K>> Extend<T>
    for ScalableBloomFilter<K, S>
{
    fn extend<I: IntoIterator<Item = T>>(&mut self, keys: I) {
        pipeline(
            self,
            keys,
            |f, key| f.stage(key.borrow()),
            |f, hash| {
                if f.try_insert_hash(hash).is_err() {
                    // The one refusal `extend` cannot report: keep the key, past the limit.
                    let newest = f.slices.last_mut().expect("a filter always has a slice");
                    newest.filter.insert_hash(hash);
                }
            },
        );
    }
}

impl<K: ?Sized, S: fmt::Debug> fmt::Debug for ScalableBloomFilter<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScalableBloomFilter")
            .field("len", &self.len)
            .field("slices", &self.slices.len())
            .field("config", &self.config)
            .field("hasher", &self.hasher)
            .finish()
    }
}

bloomkit_core::impl_builder_entry!(ScalableBloomFilter, "bloomkit_scalable");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_sizes_that_overflow_are_errors() {
        let config = |growth| Config {
            initial_capacity: 3,
            fpr: 0.01,
            growth,
            tightening: 0.85,
            max_items: None,
            max_bytes: None,
        };
        // Regression: growth 2^31 was accepted, and a filter's second slice asked for
        // gigabytes.
        for growth in [0, 1, MAX_GROWTH + 1, 1 << 31, u32::MAX] {
            assert!(matches!(
                config(growth).check(),
                Err(Error::InvalidGrowth {
                    what: Setting::Growth,
                    ..
                })
            ));
        }
        let config = config(MAX_GROWTH).check().unwrap();
        assert_eq!(config.slice(15).unwrap().0, 3 * 16u64.pow(15));
        assert!(matches!(config.slice(16), Err(Error::TooLarge { .. })));
        assert!(matches!(
            config.slice(u32::MAX),
            Err(Error::TooLarge { .. })
        ));
    }
}

/// The README's examples, compiled and run as doctests so that it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
