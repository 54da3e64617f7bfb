//! A counting Bloom filter: counters instead of bits, so items can be removed.
//!
//! Use it when items leave the set: sessions that expire, cache entries that are evicted,
//! blacklist entries that are lifted. It is sized like the classic filter (the same items
//! and rate give the same m and k) and hashes the same way, so
//! [`to_classic`](CountingBloomFilter::to_classic) turns it into a [`BloomFilter`] that
//! answers `contains` identically in 1/4 to 1/32 of the memory: a writer keeps the counting
//! filter and ships the classic one to readers.
//!
//! # Counters that cannot betray you
//!
//! Counters have a fixed width, the same on every platform: 4 bits packed two per byte (the
//! default, [`U4`], after Fan et al. 2000), or `u8`, `u16`, `u32`. A counter that reaches its
//! ceiling **sticks** there: it never wraps to a small value on insert, and it is never
//! decremented again, so no later removal can take it to zero while an item that set it may
//! still be in the filter. The price of a stuck counter is a little accuracy (it reads as
//! present until [`clear`](CountingBloomFilter::clear)), never a false negative.
//!
//! A [`remove`](CountingBloomFilter::remove) of a key that one of its counters shows was
//! never inserted returns [`Error::NotPresent`] and changes nothing. But **removing a key
//! that was never inserted and happens to test positive (a false positive) decrements
//! counters that belong to other keys, and can make them disappear.** So `remove` has a
//! precondition (its `# Correctness` section): remove only keys you inserted. If you cannot
//! rule a stranger out, check the key against your source of truth before removing it.
//! Under that precondition no sequence of operations creates a false negative.
//!
//! # Examples
//!
//! ```
//! use bloomkit_counting::CountingBloomFilter;
//!
//! let mut sessions = CountingBloomFilter::new(10_000, 0.01)?; // 4-bit counters
//! sessions.insert("alice");
//! sessions.insert("bob");
//! sessions.remove("alice")?;
//! assert!(!sessions.contains("alice"));
//! assert!(sessions.contains("bob"));
//!
//! // A key it certainly never saw: an error, and nothing changes.
//! assert!(sessions.remove("mallory").is_err());
//!
//! // Ship a read-only copy: the classic filter answers identically, in 1/4 of the memory.
//! let readers = sessions.to_classic()?;
//! assert!(readers.contains("bob") && !readers.contains("alice"));
//! assert!(readers.heap_bytes() * 4 <= sessions.heap_bytes() + 32);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! Wider counters, for items inserted many times over:
//!
//! ```
//! use bloomkit_counting::CountingBloomFilter;
//!
//! let mut votes = CountingBloomFilter::builder(1_000, 0.01).counter::<u16>().build()?;
//! for _ in 0..1_000 {
//!     votes.insert(&42u64);
//! }
//! assert_eq!(votes.count(&42u64), 1_000);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! # Memory
//!
//! `m` counters of the chosen width: at p = 1%, 9.59 counters per item, so 4.8 bytes per
//! item with 4-bit counters, 9.6 with `u8`, 19.2 with `u16` and 38.4 with `u32`.
//!
//! # Crate features
//!
//! - `serde` (default): `Serialize`/`Deserialize` (validated on the way in), and
//!   [`CountingBloomFilter::to_bytes`] / [`CountingBloomFilter::from_bytes`] in bloomkit's
//!   versioned byte format.

#![forbid(unsafe_code)]

/// The core crate this one builds on (the `Filter` trait, errors, hashing, sizing), so that
/// a user of this crate alone can name them without depending on it separately.
pub use bloomkit_core;

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use derive_where::derive_where;

use bloomkit_classic::BloomFilter;
use bloomkit_core::bits::BitArray;
use bloomkit_core::build::{FromSettings, Settings};
use bloomkit_core::hash::{Positions, ProbeScheme};
use bloomkit_core::sizing::{self, check_hashes, Design, MAX_HASHES};
use bloomkit_core::{
    check_same_probes, check_same_shape, EmptyLike, Error, Parameter, PortableHasher, Remove,
    Union, Xxh3Builder,
};

mod atomic;
#[cfg(feature = "serde")]
mod codec;
mod counter;

pub use atomic::AtomicCountingBloomFilter;
#[cfg(feature = "serde")]
pub use codec::{counter_bits, CountingBloomFilterRef};
pub use counter::{Counter, CounterArray, Nibbles, Wide, U4};

/// A counting Bloom filter over keys of type `K`, with counters of width `C` ([`U4`] by
/// default) and hasher `S`. The key type is part of the filter's type, as in a `HashSet<K>`
/// (see `BloomFilter`).
#[derive_where(Clone, PartialEq; S)]
pub struct CountingBloomFilter<K: ?Sized, C: Counter = U4, S = Xxh3Builder> {
    counters: C::Array,
    hashes: u32,
    probes: ProbeScheme,
    design: Option<Design>,
    hasher: S,
    /// Counters above zero.
    nonzero: u64,
    /// Counters stuck at the ceiling.
    saturated: u64,
    key: PhantomData<fn(&K)>,
}

impl<K: ?Sized, C: Counter, S: BuildHasher> FromSettings for CountingBloomFilter<K, C, S> {
    type Hasher = S;

    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        let (design, plan) = settings.slot_plan(|counters| {
            u64::try_from(counter::packed_bits::<C>(counters).div_ceil(8)).unwrap_or(u64::MAX)
        })?;
        let mut filter = Self::with_counters_and_hasher(plan.bits, plan.hashes, hasher)?;
        filter.design = Some(design);
        filter.probes = settings.probes.unwrap_or_default();
        Ok(filter)
    }
}

/// The builder's settings a counting filter takes beyond the common ones: a probe scheme,
/// a hasher and a counter width (for this type and its atomic twin).
macro_rules! counting_settings {
    ($ty:ident) => {
        impl<K: ?Sized, C: Counter, S: BuildHasher> bloomkit_core::build::Probing for $ty<K, C, S> {}

        impl<K: ?Sized, C: Counter, S: BuildHasher, H: BuildHasher>
            bloomkit_core::build::WithHasher<H> for $ty<K, C, S>
        {
            type Output = $ty<K, C, H>;
        }

        impl<K: ?Sized, C: Counter, C2: Counter, S: BuildHasher>
            bloomkit_core::build::WithCounter<C2> for $ty<K, C, S>
        {
            type Output = $ty<K, C2, S>;
        }
    };
}
pub(crate) use counting_settings;

counting_settings!(CountingBloomFilter);

bloomkit_core::impl_builder_entry!(CountingBloomFilter, "bloomkit_counting");

/// The plain constructors build 4-bit counters with XXH3 (as `HashMap::new` builds its
/// default hasher), so they need no type annotation beyond the key's; for another width,
/// ask the builder:
///
/// ```
/// use bloomkit_counting::CountingBloomFilter;
///
/// let mut f = CountingBloomFilter::builder(1_000, 0.01).counter::<u8>().seed(7).build()?;
/// for _ in 0..200 {
///     f.insert("hot key");
/// }
/// assert_eq!(f.count("hot key"), 200); // a 4-bit counter would stick at 15
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
impl<K: ?Sized> CountingBloomFilter<K> {
    /// `counters` 4-bit counters (rounded up as `BloomFilter::with_bits` rounds its bits)
    /// and `hashes` probes per key, with the default hasher.
    ///
    /// # Errors
    /// [`Error::ZeroBits`], [`Error::InvalidHashCount`], [`Error::TooLarge`],
    /// [`Error::AllocationFailed`].
    pub fn with_counters(counters: u64, hashes: u32) -> Result<Self, Error> {
        Self::with_counters_and_hasher(counters, hashes, Xxh3Builder::default())
    }
}

impl<K: ?Sized, C: Counter, S: BuildHasher> CountingBloomFilter<K, C, S> {
    /// `counters` counters of width `C` and `hashes` probes, hashing with `hasher`.
    ///
    /// # Errors
    /// As [`with_counters`](CountingBloomFilter::with_counters).
    pub fn with_counters_and_hasher(counters: u64, hashes: u32, hasher: S) -> Result<Self, Error> {
        let hashes = check_hashes(u64::from(hashes))?;
        let m = sizing::coprime_bits(counters, hashes)?;
        Ok(CountingBloomFilter {
            counters: C::Array::zeroed(m)?,
            hashes,
            probes: ProbeScheme::default(),
            design: None,
            hasher,
            nonzero: 0,
            saturated: 0,
            key: PhantomData,
        })
    }

    #[inline]
    fn probes(&self, hash: u64) -> Positions {
        self.probes
            .positions(hash, self.counters.len(), self.hashes)
    }

    /// [`insert`](Self::insert) by hash: increments the key's k counters, each saturating at
    /// the ceiling.
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let mut new = false;
        let (counters, nonzero, saturated) =
            (&mut self.counters, &mut self.nonzero, &mut self.saturated);
        // The scheme matched once for the key, not per probe.
        self.probes
            .for_each(hash, counters.len(), self.hashes, |i| {
                let c = counters.get(i);
                if c == 0 {
                    new = true;
                    *nonzero += 1;
                }
                if c < C::MAX {
                    counters.set(i, c + 1);
                    if c + 1 == C::MAX {
                        *saturated += 1;
                    }
                }
            });
        new
    }

    /// [`contains`](Self::contains) by hash: whether all the key's counters are above zero.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let counters = &self.counters;
        self.probes
            .all(hash, counters.len(), self.hashes, |i| counters.get(i) > 0)
    }

    fn runs(&self, hash: u64) -> Runs {
        Runs::new(self.probes(hash), self.hashes)
    }

    /// Removes one occurrence of `key`: decrements each of its counters that is not stuck
    /// at the ceiling.
    ///
    /// # Correctness
    ///
    /// `key` must have been inserted, and inserted more times than it was removed since.
    /// It is a logic error to remove any other key: the filter cannot tell it from a member
    /// when all its counters are above zero (a false positive, with the filter's
    /// false-positive rate), and then lowers counters that other keys share, which can make
    /// them read as absent: false negatives. The behaviour is not undefined, and nothing
    /// panics; but the no-false-negative promise holds only while this precondition does.
    /// When a removal's key may be a stranger, check it against your source of truth first.
    ///
    /// Most strangers are caught: if any counter of the key is too low for it ever to have
    /// been inserted, the removal is refused and nothing changes.
    ///
    /// # Errors
    /// [`Error::NotPresent`] when a counter of the key is too low for it ever to have been
    /// inserted (zero, in all but tiny filters); the filter is then unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_counting::CountingBloomFilter;
    ///
    /// let mut f = CountingBloomFilter::new(1_000, 0.01)?;
    /// f.insert("alice");
    /// f.remove("alice")?;                    // inserted once, removed once
    /// assert!(!f.contains("alice"));
    /// assert!(f.remove("alice").is_err());   // now certainly absent: refused
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn remove<Q: Hash + ?Sized>(&mut self, key: &Q) -> Result<(), Error>
    where
        K: Hash + Borrow<Q>,
    {
        self.remove_hash(self.hash_key(key))
    }

    /// [`remove`](Self::remove) by hash.
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    pub fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        let runs = self.runs(hash);
        // Check everything first, so a refusal changes nothing.
        if !runs.removable::<C>(|i| self.counters.get(i)) {
            return Err(Error::NotPresent);
        }
        for &(i, times) in runs.as_slice() {
            let c = self.counters.get(i);
            if c != C::MAX {
                self.counters.set(i, c - times);
                if c == times {
                    self.nonzero -= 1;
                }
            }
        }
        Ok(())
    }

    /// An estimate of how many times `key` was inserted (and not removed): the smallest of
    /// its counters (each divided by the number of the key's probes that land on it, which
    /// is more than one only in tiny filters). Never below the true count or the ceiling,
    /// whichever is smaller: a counter stuck at the ceiling reads as the ceiling, since it
    /// no longer tells how often it was raised. Above the true count when other keys share
    /// all its counters.
    pub fn count<Q: Hash + ?Sized>(&self, key: &Q) -> u64
    where
        K: Hash + Borrow<Q>,
    {
        self.count_hash(self.hash_key(key))
    }

    /// [`count`](Self::count) by hash.
    pub fn count_hash(&self, hash: u64) -> u64 {
        self.runs(hash).count::<C>(|i| self.counters.get(i))
    }

    /// Requests the cache lines of the key's counters; returns the hash.
    #[inline]
    fn locate(&self, hash: u64) -> u64 {
        let counters = &self.counters;
        self.probes
            .for_each(hash, counters.len(), self.hashes, |i| counters.prefetch(i));
        hash
    }

    /// Removes every item, and unsticks every counter.
    pub fn clear(&mut self) {
        self.counters.clear();
        self.nonzero = 0;
        self.saturated = 0;
    }

    /// Whether no counter is above zero.
    pub fn is_empty(&self) -> bool {
        self.nonzero == 0
    }

    /// `m`, the number of counters.
    pub fn num_counters(&self) -> u64 {
        self.counters.len()
    }

    /// How many counters are stuck at the ceiling. Above zero, the filter is overloaded for
    /// its counter width: removals no longer free those positions.
    pub fn saturated_counters(&self) -> u64 {
        self.saturated
    }

    /// How many counters are above zero.
    pub fn nonzero_counters(&self) -> u64 {
        self.nonzero
    }

    /// Counter `i`, for inspection; `None` past [`num_counters`](Self::num_counters).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_counting::CountingBloomFilter;
    ///
    /// let f = CountingBloomFilter::<u64>::with_counters(10, 3)?;
    /// assert_eq!(f.counter(0), Some(0));
    /// assert_eq!(f.counter(f.num_counters()), None);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn counter(&self, i: u64) -> Option<u64> {
        (i < self.counters.len()).then(|| self.counters.get(i))
    }

    /// An estimate of the number of distinct keys present (Swamidass & Baldi 2007 on the
    /// nonzero counters); infinite when every counter is nonzero.
    pub fn estimated_len(&self) -> f64 {
        sizing::estimate_cardinality(self.counters.len(), self.hashes, self.nonzero)
            .unwrap_or(f64::INFINITY)
    }

    /// The false-positive rate now, from the fraction of nonzero counters: `(X / m)^k`.
    pub fn estimated_fpr(&self) -> f64 {
        sizing::fpr_from_fill(self.counters.len(), self.hashes, self.nonzero).unwrap_or(1.0)
    }

    /// The false-positive rate the sizing model predicts after `items` distinct insertions.
    pub fn fpr_at(&self, items: u64) -> f64 {
        sizing::fpr_model_with(items, self.counters.len(), self.hashes, self.probes).unwrap_or(1.0)
    }

    /// Bytes of heap memory held (the counters).
    pub fn heap_bytes(&self) -> usize {
        self.counters.heap_bytes()
    }

    /// The classic Bloom filter with the same m, k, hasher and seed, holding a bit wherever
    /// a counter is above zero: it answers `contains` exactly as this filter does, in
    /// `C::BITS` times less memory. Readers that never remove need only that.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] if the bit array cannot be allocated.
    pub fn to_classic(&self) -> Result<BloomFilter<K, S>, Error>
    where
        S: Clone,
    {
        let mut bits = BitArray::new(self.counters.len())?;
        for i in 0..self.counters.len() {
            if self.counters.get(i) > 0 {
                bits.set(i);
            }
        }
        BloomFilter::from_bit_array(
            bits,
            self.hashes,
            self.probes,
            self.hasher.clone(),
            self.design,
        )
    }

    /// A filter over `counters` (whatever their values), its counts of nonzero and stuck
    /// counters recounted.
    pub(crate) fn from_counters(
        counters: C::Array,
        hashes: u32,
        probes: ProbeScheme,
        design: Option<Design>,
        hasher: S,
    ) -> Self {
        let mut filter = CountingBloomFilter {
            counters,
            hashes,
            probes,
            design,
            hasher,
            nonzero: 0,
            saturated: 0,
            key: PhantomData,
        };
        filter.recount();
        filter
    }

    fn recount(&mut self) {
        let (mut nonzero, mut saturated) = (0, 0);
        for i in 0..self.counters.len() {
            let c = self.counters.get(i);
            // `if`, not `+= u64::from(flag)` (rust-lang/rust#158206; see `BitArray::set`).
            if c > 0 {
                nonzero += 1;
            }
            if c == C::MAX {
                saturated += 1;
            }
        }
        self.nonzero = nonzero;
        self.saturated = saturated;
    }
}

bloomkit_core::impl_shape_accessors!([C: Counter, S] CountingBloomFilter<K, C, S>, key = K, probes);

bloomkit_core::impl_key_methods!(
    [C: Counter, S: BuildHasher] CountingBloomFilter<K, C, S>, key = K,
    doc = ("bloomkit_counting", CountingBloomFilter),
    insert = exclusive Self::insert_hash, contains_batch = pipeline
);

impl<K: ?Sized, C: Counter, S: PortableHasher> CountingBloomFilter<K, C, S> {
    /// Checks that `other` was built with the same counters, probes, hasher, seed and probe
    /// scheme.
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first parameter that differs.
    pub fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        check_same_shape(
            (
                Parameter::Counters,
                self.counters.len(),
                other.counters.len(),
            ),
            (self.hashes, other.hashes),
            (self.hasher.spec(), other.hasher.spec()),
        )?;
        check_same_probes(self.probes, other.probes)
    }
}

impl<K: ?Sized, C: Counter, S: BuildHasher + Clone> EmptyLike for CountingBloomFilter<K, C, S> {
    fn empty_like(&self) -> Result<Self, Error> {
        Ok(CountingBloomFilter::from_counters(
            C::Array::zeroed(self.counters.len())?,
            self.hashes,
            self.probes,
            self.design,
            self.hasher.clone(),
        ))
    }
}

impl<K: ?Sized, C: Counter, S: PortableHasher + Clone> Union for CountingBloomFilter<K, C, S> {
    /// Counter-wise saturating addition: every key of either is present, with its counts
    /// added (up to the ceiling, where counters stick).
    fn union_with(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        for i in 0..self.counters.len() {
            let (a, b) = (self.counters.get(i), other.counters.get(i));
            self.counters.set(i, (a + b).min(C::MAX));
        }
        self.recount();
        Ok(())
    }
}

bloomkit_core::impl_infallible_filter!([C: Counter, S: BuildHasher] CountingBloomFilter<K, C, S>, key = K);

/// See [`CountingBloomFilter::remove`]: remove only keys that were inserted.
impl<K: Hash + ?Sized, C: Counter, S: BuildHasher> Remove for CountingBloomFilter<K, C, S> {
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        CountingBloomFilter::remove_hash(self, hash)
    }
}

#[cfg(feature = "rayon")]
bloomkit_core::impl_par_extend!(
    [C: Counter, S: PortableHasher + Clone + Send] CountingBloomFilter<K, C, S>, key = K,
    doc = ("bloomkit_counting", CountingBloomFilter),
    /// Counters merge by saturating addition: the partial counts add up to exactly the
    /// counters of one sequential insert, stuck ones included, so every key inserted once can
    /// be removed once.
);

impl<K: ?Sized, C: Counter, S: fmt::Debug> fmt::Debug for CountingBloomFilter<K, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountingBloomFilter")
            .field("counter_bits", &C::BITS)
            .field("counters", &self.counters.len())
            .field("hashes", &self.hashes)
            .field("probes", &self.probes)
            .field("nonzero", &self.nonzero)
            .field("saturated", &self.saturated)
            .field("design", &self.design)
            .field("hasher", &self.hasher)
            .finish()
    }
}

/// A key's distinct positions, sorted, each with how many of its k probes land there. A
/// key's probes coincide only in tiny filters, but when they do, an insert raises that
/// counter more than once and a removal must lower it as often. Shared by the counting
/// filter and its atomic twin, so both read and refuse exactly alike.
pub(crate) struct Runs {
    runs: [(u64, u64); MAX_HASHES as usize],
    len: usize,
}

impl Runs {
    fn new(probes: Positions, k: u32) -> Runs {
        let mut positions = [0u64; MAX_HASHES as usize];
        let k = k as usize;
        for (slot, i) in positions.iter_mut().zip(probes) {
            *slot = i;
        }
        positions[..k].sort_unstable();
        let mut runs = [(0u64, 0u64); MAX_HASHES as usize];
        let mut len = 0;
        for &p in &positions[..k] {
            if len > 0 && runs[len - 1].0 == p {
                runs[len - 1].1 += 1;
            } else {
                runs[len] = (p, 1);
                len += 1;
            }
        }
        Runs { runs, len }
    }

    /// `(position, probes landing there)`, by position.
    fn as_slice(&self) -> &[(u64, u64)] {
        &self.runs[..self.len]
    }

    /// Whether every counter (read through `get`) is high enough for the key to have been
    /// inserted: at least its number of probes there, or stuck at the ceiling.
    fn removable<C: Counter>(&self, get: impl Fn(u64) -> u64) -> bool {
        self.as_slice().iter().all(|&(i, times)| {
            let c = get(i);
            c == C::MAX || c >= times
        })
    }

    /// The key's estimated count: the smallest of its counters, each divided by its number
    /// of probes there; a counter stuck at the ceiling reads as the ceiling.
    fn count<C: Counter>(&self, get: impl Fn(u64) -> u64) -> u64 {
        self.as_slice()
            .iter()
            .map(|&(i, times)| {
                let c = get(i);
                // Stuck: it was raised at least this often, perhaps far more; dividing it by
                // `times` could read below the key's own count.
                if c == C::MAX {
                    C::MAX
                } else {
                    c / times
                }
            })
            .min()
            .unwrap_or(0)
    }
}

/// The README's examples, compiled and run as doctests so that it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
