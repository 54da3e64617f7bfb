//! The classic Bloom filter: `m` bits, `k` probes per key, no false negatives, and a
//! false-positive rate that honours the target it was sized for.
//!
//! A key is hashed once (XXH3-64 with a seed by default) and its k bit positions derived
//! from that hash by enhanced double hashing in 64-bit arithmetic
//! ([`bloomkit_core::hash::ProbeScheme::Wide`]; filters written before format version 3 keep
//! the scheme they were built with, `ProbeScheme::Enhanced`). The filter
//! is sized with [`bloomkit_core::sizing::plan`], which picks an integer k and the smallest
//! m whose predicted FPR is at most the target. Measured from one item to 10^8 and from
//! p = 0.5 down to 1e-7, rates averaged over key sets are at or under the target and single
//! filters within 1.1x of it (see the crate's statistical tests).
//!
//! # Examples
//!
//! ```
//! use bloomkit_classic::BloomFilter;
//!
//! // Room for 10,000 URLs at a 1% false-positive rate.
//! let mut seen = BloomFilter::new(10_000, 0.01)?;
//! assert!(seen.insert("https://example.com/a")); // certainly new
//! assert!(!seen.insert("https://example.com/a")); // maybe seen before
//! assert!(seen.contains("https://example.com/a"));
//! assert!(!seen.contains("https://example.com/never-inserted"));
//!
//! println!("{} bits, {} probes, {:.3}% FPR now", seen.num_bits(), seen.num_hashes(),
//!          seen.estimated_fpr() * 100.0);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! Union and intersection of filters built alike:
//!
//! ```
//! use bloomkit_classic::BloomFilter;
//! use bloomkit_core::{Intersection, Union};
//!
//! let mut a = BloomFilter::new(1_000, 0.01)?;
//! let mut b = BloomFilter::new(1_000, 0.01)?;
//! a.insert(&1u64);
//! b.insert(&2u64);
//! let both = a.union(&b)?;
//! assert!(both.contains(&1u64) && both.contains(&2u64));
//!
//! // Filters built differently cannot be combined: an error, not a panic.
//! let other = BloomFilter::builder(1_000, 0.01).seed(42).build()?;
//! assert!(a.union_with(&other).is_err());
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! # Crate features
//!
//! - `serde` (default): `Serialize`/`Deserialize` (validated on the way in), and
//!   [`BloomFilter::to_bytes`] / [`BloomFilter::from_bytes`] in bloomkit's versioned byte
//!   format (`docs/format.md`).

#![forbid(unsafe_code)]

/// The core crate this one builds on (the `Filter` trait, errors, hashing, sizing), so that
/// a user of this crate alone can name them without depending on it separately.
pub use bloomkit_core;

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use derive_where::derive_where;

use bloomkit_core::batch::pipeline;
use bloomkit_core::bits::{BitArray, BitSlice};
use bloomkit_core::build::{FromSettings, Probing, Settings};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::{self, check_hashes, Design};
use bloomkit_core::{
    check_same_probes, check_same_shape, EmptyLike, Error, Intersection, Parameter, PortableHasher,
    Union, Xxh3Builder,
};

/// The sizes, estimates and word-wise set operation of the two owned split-block filters
/// (256-bit blocks of eight 32-bit words, one bit a word a key), over their fields
/// `design`, `blocks` and `ones` and their `lookup()`.
macro_rules! split_block_common {
    () => {
        /// The items and rate the filter was sized for, if it was sized from them.
        pub fn design(&self) -> Option<Design> {
            self.design
        }

        /// The block-load model's rate once `items` distinct keys are in.
        pub fn fpr_at(&self, items: u64) -> f64 {
            sizing::split_block_fpr_model(items, self.num_blocks()).unwrap_or(1.0)
        }

        /// The distinct keys inserted, estimated block by block from the fill: a block whose
        /// words hold `x` set bits in all held about `ln(1 - x/256) / ln(31/32)` keys.
        /// Infinite once a block is full. Reads every block.
        pub fn estimated_len(&self) -> f64 {
            self.lookup().estimated_len()
        }

        /// The rate now, from the bits: the average over blocks of the product over words
        /// of each word's share of set bits (exact for a hash uniform over its 64 bits).
        /// Reads every block.
        pub fn estimated_fpr(&self) -> f64 {
            self.lookup().estimated_fpr()
        }

        /// `self = op(self, other)` word by word, for union and intersection; the count of
        /// ones follows.
        fn combine(&mut self, other: &Self, op: fn(u32, u32) -> u32) {
            self.ones = crate::blocked::combine_words(
                bytemuck::cast_slice_mut(&mut self.blocks),
                bytemuck::cast_slice(&other.blocks),
                op,
                u32::count_ones,
            );
        }
    };
}

/// The traits of the three owned hashed filters whose inserts cannot fail: [`Filter`] and
/// the rest through `impl_infallible_filter!`, and `ParallelExtend` with the `rayon`
/// feature.
macro_rules! filter_traits {
    ($ty:ident) => {
        bloomkit_core::impl_infallible_filter!([S: core::hash::BuildHasher] $ty<K, S>, key = K);

        #[cfg(feature = "rayon")]
        bloomkit_core::impl_par_extend!(
            [S: bloomkit_core::PortableHasher + Clone + Send] $ty<K, S>, key = K,
            doc = ("bloomkit_classic", $ty)
        );
    };
}

mod atomic;
mod blocked;
#[cfg(feature = "serde")]
mod codec;
mod simd_block;
mod split_block;
mod thrift;
#[cfg(feature = "serde")]
mod view;

pub use atomic::{AtomicBlockedBloomFilter, AtomicBloomFilter};
pub use blocked::{BlockedBloomFilter, BRANCH_FREE_MAX_BYTES};
pub use simd_block::SimdBlockFilter;
pub use split_block::{ParquetValue, SplitBlockFilter, MAX_SPLIT_BLOCKS, SPLIT_BLOCK_BYTES};
#[cfg(feature = "serde")]
pub use view::{BlockedBloomFilterRef, BloomFilterRef, SimdBlockFilterRef, SplitBlockFilterRef};

/// The lookups the owned filter and its view ([`BloomFilterRef`]) share: one code path, so
/// the view answers as fast as the filter.
#[derive(Clone, Copy)]
pub(crate) struct Lookup<'a> {
    pub(crate) bits: BitSlice<'a>,
    pub(crate) hashes: u32,
    pub(crate) probes: ProbeScheme,
}

impl Lookup<'_> {
    #[inline]
    pub(crate) fn contains_hash(self, hash: u64) -> bool {
        let bits = self.bits;
        self.probes
            .all(hash, bits.len(), self.hashes, |i| bits.get(i))
    }

    #[inline]
    fn locate(self, hash: u64) -> u64 {
        let bits = self.bits;
        self.probes
            .for_each(hash, bits.len(), self.hashes, |i| bits.prefetch(i));
        hash
    }

    /// `contains_batch` with the k cache lines of a group of keys requested first.
    pub(crate) fn contains_batch<K, S, I>(self, hasher: &S, keys: I, out: &mut Vec<bool>)
    where
        K: Hash + ?Sized,
        S: BuildHasher,
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        pipeline(
            out,
            keys,
            |_, key| self.locate(hasher.hash_one(key.borrow())),
            |out, hash| out.push(self.contains_hash(hash)),
        );
    }
}

/// A classic Bloom filter over keys of type `K`.
///
/// The key type is part of the filter's type, as in a `HashSet<K>`: a `BloomFilter<u64>`
/// takes `&u64` and answers `contains(&1)` for the `1` it was given, where a filter generic
/// per call would hash the literal `1` as an `i32` and miss it. Lookups accept any form the
/// key borrows as (`contains("a")` on a `BloomFilter<String>`), as `HashSet::contains` does.
///
/// `S` is the [`BuildHasher`] that turns a key into the one 64-bit hash its positions come
/// from; the default [`Xxh3Builder`] is fast, seeded and portable, which is what union,
/// intersection and serialization require ([`PortableHasher`]).
///
/// ```compile_fail
/// use bloomkit_classic::BloomFilter;
///
/// let mut f = BloomFilter::new(1_000, 0.01).unwrap();
/// f.insert(&1u64);
/// f.contains(&1i32); // a u64 filter does not take an i32: this does not compile
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct BloomFilter<K: ?Sized, S = Xxh3Builder> {
    bits: BitArray,
    hashes: u32,
    probes: ProbeScheme,
    design: Option<Design>,
    hasher: S,
    key: PhantomData<fn(&K)>,
}

impl<K: ?Sized, S: BuildHasher> FromSettings for BloomFilter<K, S> {
    type Hasher = S;

    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        let (design, plan) = settings.slot_plan(|bits| bits.div_ceil(64) * 8)?;
        let mut filter = Self::with_bits_and_hasher(plan.bits, plan.hashes, hasher)?;
        filter.design = Some(design);
        filter.probes = settings.probes.unwrap_or_default();
        Ok(filter)
    }
}

impl<K: ?Sized, S: BuildHasher> Probing for BloomFilter<K, S> {}

bloomkit_core::impl_builder_entry!(BloomFilter, "bloomkit_classic", hasher);

impl<K: ?Sized> BloomFilter<K> {
    /// A filter of `bits` bits (rounded up to the next size with no prime factor below
    /// `hashes`, see [`sizing::coprime_bits`]: a few bits more at most) and `hashes` probes
    /// per key, with the default hasher.
    ///
    /// # Errors
    /// [`Error::ZeroBits`], [`Error::InvalidHashCount`] (outside
    /// `1..=`[`sizing::MAX_HASHES`]), [`Error::TooLarge`], [`Error::AllocationFailed`].
    pub fn with_bits(bits: u64, hashes: u32) -> Result<Self, Error> {
        Self::with_bits_and_hasher(bits, hashes, Xxh3Builder::default())
    }
}

impl<K: ?Sized, S: BuildHasher> BloomFilter<K, S> {
    /// A filter of `bits` bits (rounded up as in [`BloomFilter::with_bits`]) and `hashes`
    /// probes, hashing with `hasher`.
    ///
    /// # Errors
    /// As [`BloomFilter::with_bits`].
    pub fn with_bits_and_hasher(bits: u64, hashes: u32, hasher: S) -> Result<Self, Error> {
        let hashes = check_hashes(u64::from(hashes))?;
        let bits = sizing::coprime_bits(bits, hashes)?;
        Ok(BloomFilter {
            bits: BitArray::new(bits)?,
            hashes,
            probes: ProbeScheme::default(),
            design: None,
            hasher,
            key: PhantomData,
        })
    }

    /// A filter over an existing bit array, with `hashes` probes per key placed by `probes`
    /// and `hasher`: for example the occupancy of a counting filter, which then answers
    /// identically. The bits are taken as they are (no coprime rounding: they must match the
    /// filter they came from, and so must the probe scheme: the one it was built with, see
    /// [`probe_scheme`](Self::probe_scheme)).
    ///
    /// # Errors
    /// [`Error::ZeroBits`] for an empty array, [`Error::InvalidHashCount`], and the errors of
    /// [`Design::new`] for a bad design point.
    pub fn from_bit_array(
        bits: BitArray,
        hashes: u32,
        probes: ProbeScheme,
        hasher: S,
        design: Option<Design>,
    ) -> Result<Self, Error> {
        if bits.is_empty() {
            return Err(Error::ZeroBits);
        }
        let design = match design {
            Some(d) => Some(Design::new(d.capacity, d.fpr)?),
            None => None,
        };
        Ok(BloomFilter {
            bits,
            hashes: check_hashes(u64::from(hashes))?,
            probes,
            design,
            hasher,
            key: PhantomData,
        })
    }

    /// ORs `words` into the filter's bit array from word `at` on: see
    /// [`BitArray::or_words`].
    ///
    /// # Errors
    /// As there; `self` is then unchanged.
    pub fn or_words(&mut self, at: usize, words: &[u64]) -> Result<(), Error> {
        self.bits.or_words(at, words)
    }

    /// Inserts the key whose hash (from [`hash_key`](Self::hash_key)) is `hash`; returns as
    /// [`insert`](Self::insert).
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let mut new = false;
        let bits = &mut self.bits;
        self.probes
            .for_each(hash, bits.len(), self.hashes, |i| new |= bits.set(i));
        new
    }

    /// Whether the key whose hash is `hash` may be in the filter.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.lookup().contains_hash(hash)
    }

    /// Requests the cache lines of the key whose hash is `hash`; returns the hash.
    #[inline]
    fn locate(&self, hash: u64) -> u64 {
        self.lookup().locate(hash)
    }

    #[inline]
    fn lookup(&self) -> Lookup<'_> {
        Lookup {
            bits: self.bits.as_slice(),
            hashes: self.hashes,
            probes: self.probes,
        }
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.bits.clear();
    }

    /// Whether no bit is set (nothing was inserted since the last clear).
    pub fn is_empty(&self) -> bool {
        self.bits.count_ones() == 0
    }

    /// `m`, the number of bits.
    pub fn num_bits(&self) -> u64 {
        self.bits.len()
    }

    /// The number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    /// The bit array, for inspection.
    pub fn bits(&self) -> &BitArray {
        &self.bits
    }

    /// An estimate of the number of distinct keys inserted (Swamidass & Baldi 2007);
    /// infinite when every bit is set.
    pub fn estimated_len(&self) -> f64 {
        sizing::estimate_cardinality(self.bits.len(), self.hashes, self.bits.count_ones())
            .unwrap_or(f64::INFINITY)
    }

    /// The false-positive rate right now, from the fraction of set bits: `(X / m)^k`.
    pub fn estimated_fpr(&self) -> f64 {
        sizing::fpr_from_fill(self.bits.len(), self.hashes, self.bits.count_ones()).unwrap_or(1.0)
    }

    /// The false-positive rate bloomkit's model predicts for this filter after `items`
    /// distinct insertions ([`sizing::fpr_model`]).
    pub fn fpr_at(&self, items: u64) -> f64 {
        sizing::fpr_model_with(items, self.bits.len(), self.hashes, self.probes).unwrap_or(1.0)
    }

    /// Bytes of heap memory held (the bit array).
    pub fn heap_bytes(&self) -> usize {
        self.bits.heap_bytes()
    }
}

bloomkit_core::impl_shape_accessors!([S] BloomFilter<K, S>, key = K, probes);

bloomkit_core::impl_key_methods!(
    [S: BuildHasher] BloomFilter<K, S>, key = K, doc = ("bloomkit_classic", BloomFilter),
    insert = exclusive Self::insert_hash, contains_batch = lookup
);

impl<K: ?Sized, S: PortableHasher> BloomFilter<K, S> {
    /// Checks that `other` was built with the same bits, probes, hasher, seed and probe
    /// scheme, so the two can be combined.
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first parameter that differs.
    pub fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        check_same_shape(
            (Parameter::Bits, self.bits.len(), other.bits.len()),
            (self.hashes, other.hashes),
            (self.hasher.spec(), other.hasher.spec()),
        )?;
        check_same_probes(self.probes, other.probes)
    }

    /// An estimate of the number of distinct keys in the union of `self` and `other`, from
    /// the popcount of `self | other`, without building it.
    ///
    /// # Errors
    /// [`Error::Incompatible`].
    pub fn estimated_union_len(&self, other: &Self) -> Result<f64, Error> {
        self.check_compatible(other)?;
        let ones = self.bits.count_union(&other.bits);
        Ok(
            sizing::estimate_cardinality(self.bits.len(), self.hashes, ones)
                .unwrap_or(f64::INFINITY),
        )
    }

    /// An estimate of the number of keys common to `self` and `other`:
    /// `n(A) + n(B) - n(A | B)` (Swamidass & Baldi 2007; the popcount of `A & B` is biased
    /// upwards and is not used). Clamped at 0.
    ///
    /// # Errors
    /// [`Error::Incompatible`].
    pub fn estimated_intersection_len(&self, other: &Self) -> Result<f64, Error> {
        let union = self.estimated_union_len(other)?;
        Ok((self.estimated_len() + other.estimated_len() - union).max(0.0))
    }
}

impl<K: ?Sized, S: Clone> EmptyLike for BloomFilter<K, S> {
    fn empty_like(&self) -> Result<Self, Error> {
        Ok(BloomFilter {
            bits: BitArray::new(self.bits.len())?,
            hashes: self.hashes,
            probes: self.probes,
            design: self.design,
            hasher: self.hasher.clone(),
            key: PhantomData,
        })
    }
}

impl<K: ?Sized, S: PortableHasher + Clone> Union for BloomFilter<K, S> {
    /// Bitwise OR: the result contains every key either contained.
    fn union_with(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        self.bits.union_with(&other.bits)
    }
}

impl<K: ?Sized, S: PortableHasher + Clone> Intersection for BloomFilter<K, S> {
    /// Bitwise AND: the result contains every key both contained, and its false-positive
    /// rate is no higher than either's. Its [`estimated_len`](BloomFilter::estimated_len)
    /// overestimates the intersection; prefer
    /// [`estimated_intersection_len`](BloomFilter::estimated_intersection_len) on the inputs.
    fn intersect_with(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        self.bits.intersect_with(&other.bits)
    }
}

filter_traits!(BloomFilter);

impl<K: ?Sized, S: fmt::Debug> fmt::Debug for BloomFilter<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BloomFilter")
            .field("bits", &self.bits.len())
            .field("hashes", &self.hashes)
            .field("probes", &self.probes)
            .field("ones", &self.bits.count_ones())
            .field("design", &self.design)
            .field("hasher", &self.hasher)
            .finish()
    }
}

/// The README's examples, compiled and run as doctests so that it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
