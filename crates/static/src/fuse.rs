//! Binary fuse filters (Graf & Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor
//! Filters", 2022): each key has three slots, one in each of three consecutive segments of
//! a table of fingerprints, and the XOR of the three is the key's fingerprint.
//!
//! Building is peeling a 3-hypergraph: a slot that only one key touches can be solved last
//! for that key, which frees its other two slots. With about 1.125 n slots (more for small n)
//! the peel succeeds for all but a few percent of seeds, and a failed seed is replaced.

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use core::ops::BitXor;

use bloomkit_core::batch::{pipeline, prefetch};
use bloomkit_core::{Error, Variant, Xxh3Builder};
use derive_where::derive_where;

use crate::common::{self, mix, mul_high, Seeds, MAX_ATTEMPTS};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
}

/// The fingerprint of a binary fuse filter: `u8`, `u16` or `u32`. Its width sets the
/// false-positive rate, `2^-BITS`, and the memory, about `1.125 * BITS` bits per key.
pub trait Fingerprint:
    sealed::Sealed + bytemuck::Pod + Eq + Default + fmt::Debug + Send + Sync + BitXor<Output = Self>
{
    /// The width in bits.
    const BITS: u32;
    /// The variant tag of filters with this fingerprint in the byte format.
    const VARIANT: Variant;
    /// The fingerprint of a mixed hash: its two halves XORed, truncated.
    fn of(hash: u64) -> Self;
    /// The low `BITS` bits of `word`.
    fn truncate(word: u64) -> Self;
    /// `self` in the low `BITS` bits of a word.
    fn widen(self) -> u64;
}

macro_rules! fingerprint {
    ($t:ty, $variant:ident) => {
        impl Fingerprint for $t {
            const BITS: u32 = <$t>::BITS;
            const VARIANT: Variant = Variant::$variant;
            #[inline(always)]
            fn of(hash: u64) -> Self {
                (hash ^ (hash >> 32)) as $t
            }
            #[inline(always)]
            fn truncate(word: u64) -> Self {
                word as $t
            }
            #[inline(always)]
            fn widen(self) -> u64 {
                u64::from(self)
            }
        }
    };
}
fingerprint!(u8, BinaryFuse8);
fingerprint!(u16, BinaryFuse16);
fingerprint!(u32, BinaryFuse32);

/// The longest segment: beyond it, longer segments no longer make building succeed more
/// often, and they cost locality.
const MAX_SEGMENT_LENGTH: u32 = 1 << 18;

/// The largest number of slots: slot indices are `u32`.
const MAX_SLOTS: u64 = u32::MAX as u64;

/// Where a binary fuse filter's slots are: the construction seed and the segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct FuseLayout {
    /// The seed mixed into every key's hash by the successful attempt.
    pub(crate) seed: u64,
    /// Slots per segment: a power of two in `4..=2^18`.
    pub(crate) segment_length: u32,
    /// Segments a key's first slot can fall in; the table has two more.
    pub(crate) segment_count: u32,
    /// Distinct keys (by 64-bit hash) in the filter.
    pub(crate) items: u64,
}

impl FuseLayout {
    /// The layout for up to `n` keys (before the seed is known), as the paper sizes it:
    /// segments of `2^floor(log_3.33(n) + 2.25)` slots, and `max(1.125, 0.875 + 0.25
    /// ln(10^6) / ln(n))` slots per key.
    pub(crate) fn for_items(n: usize, bits: u32) -> Result<FuseLayout, Error> {
        let nf = n as f64;
        let segment_length = if n == 0 {
            4
        } else {
            let log = (nf.ln() / 3.33f64.ln() + 2.25).floor().clamp(2.0, 18.0);
            (1u32 << log as u32).min(MAX_SEGMENT_LENGTH)
        };
        let factor = if n <= 1 {
            0.0
        } else {
            (0.875 + 0.25 * 1e6f64.ln() / nf.ln()).max(1.125)
        };
        let capacity = (nf * factor).round();
        let segments = (capacity / f64::from(segment_length)).ceil() - 2.0;
        let segment_count = segments.max(1.0);
        let slots = (segment_count + 2.0) * f64::from(segment_length);
        if slots > MAX_SLOTS as f64 {
            return Err(Error::TooLarge {
                what: bloomkit_core::Unit::Bits,
                size: slots * f64::from(bits),
                max: MAX_SLOTS * u64::from(bits),
            });
        }
        Ok(FuseLayout {
            seed: 0,
            segment_length,
            segment_count: segment_count as u32,
            items: 0,
        })
    }

    /// The same slots cut into segments of half the length (twice as many, plus two), or
    /// `self` when the segments are at their shortest.
    pub(crate) fn halved(self) -> FuseLayout {
        if self.segment_length <= 4 {
            return self;
        }
        FuseLayout {
            segment_length: self.segment_length / 2,
            segment_count: self.segment_count * 2 + 2,
            ..self
        }
    }

    /// The number of slots.
    #[inline(always)]
    pub(crate) fn slots(&self) -> usize {
        (self.segment_count as usize + 2) * self.segment_length as usize
    }

    /// Checks a decoded layout: everything [`for_items`](Self::for_items) could produce for
    /// some `n`, so lookups stay in bounds.
    #[cfg(feature = "serde")]
    pub(crate) fn check(&self) -> Result<(), Error> {
        let bad = |what: &str| {
            Err(Error::Decode(bloomkit_core::DecodeError::Invalid(format!(
                "binary fuse: {what}"
            ))))
        };
        if !self.segment_length.is_power_of_two()
            || !(4..=MAX_SEGMENT_LENGTH).contains(&self.segment_length)
        {
            return bad("segment length is not a power of two in 4..=262144");
        }
        if self.segment_count == 0 {
            return bad("no segment");
        }
        let slots = (u64::from(self.segment_count) + 2) * u64::from(self.segment_length);
        if slots > MAX_SLOTS {
            return bad("more slots than u32 indices address");
        }
        if self.items > slots {
            return bad("more keys than slots");
        }
        Ok(())
    }

    /// The three slots of the key whose mixed hash is `hash`: one in each of three
    /// consecutive segments.
    #[inline(always)]
    pub(crate) fn slots_of(&self, hash: u64) -> [usize; 3] {
        let span = u64::from(self.segment_count) * u64::from(self.segment_length);
        let h0 = mul_high(hash, span) as usize;
        let len = self.segment_length as usize;
        let mask = len - 1;
        let h1 = (h0 + len) ^ ((hash >> 18) as usize & mask);
        let h2 = (h0 + 2 * len) ^ (hash as usize & mask);
        [h0, h1, h2]
    }
}

/// Slot `i` of a table packed into words in the format's order: slot `i` in bits
/// `(i % per) * BITS ..` of word `i / per`, on every platform.
#[cfg(any(test, not(target_endian = "little")))]
#[inline(always)]
fn packed_get<F: Fingerprint>(words: &[u64], i: usize) -> F {
    let per = 64 / F::BITS as usize;
    F::truncate(words[i / per] >> ((i % per) as u32 * F::BITS))
}

/// Sets slot `i` of a packed table (see [`packed_get`]).
#[cfg(any(test, not(target_endian = "little")))]
#[inline(always)]
fn packed_set<F: Fingerprint>(words: &mut [u64], i: usize, value: F) {
    let per = 64 / F::BITS as usize;
    let shift = (i % per) as u32 * F::BITS;
    let mask = (u64::MAX >> (64 - F::BITS)) << shift;
    let w = &mut words[i / per];
    *w = (*w & !mask) | (value.widen() << shift);
}

/// The fingerprints of a table as they are read: on little-endian machines the words'
/// memory is the slots in order, read as a slice of `F`; elsewhere each slot is shifted
/// out of its word ([`packed_get`]), so both read the bytes of the format alike.
#[derive(Clone, Copy)]
pub(crate) struct Table<'a, F> {
    #[cfg(target_endian = "little")]
    values: &'a [F],
    #[cfg(not(target_endian = "little"))]
    words: &'a [u64],
    #[cfg(not(target_endian = "little"))]
    fingerprint: PhantomData<F>,
}

impl<'a, F: Fingerprint> Table<'a, F> {
    /// The first `slots` fingerprints of `words`.
    #[inline(always)]
    pub(crate) fn new(words: &'a [u64], slots: usize) -> Self {
        #[cfg(target_endian = "little")]
        {
            Table {
                values: &bytemuck::cast_slice::<u64, F>(words)[..slots],
            }
        }
        #[cfg(not(target_endian = "little"))]
        {
            let _ = slots;
            Table {
                words,
                fingerprint: PhantomData,
            }
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> F {
        #[cfg(target_endian = "little")]
        {
            self.values[i]
        }
        #[cfg(not(target_endian = "little"))]
        {
            packed_get(self.words, i)
        }
    }

    #[inline(always)]
    fn prefetch(&self, i: usize) {
        #[cfg(target_endian = "little")]
        prefetch(&self.values[i]);
        #[cfg(not(target_endian = "little"))]
        prefetch(&self.words[i * F::BITS as usize / 64]);
    }
}

/// The lookup of a binary fuse filter over its fingerprints, owned or borrowed.
#[derive(Clone, Copy)]
pub(crate) struct FuseLookup<'a, F> {
    pub(crate) layout: FuseLayout,
    pub(crate) fingerprints: Table<'a, F>,
}

impl<F: Fingerprint> FuseLookup<'_, F> {
    /// Whether the key whose (unmixed) hash is `hash` may be in the filter.
    #[inline(always)]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        let h = mix(hash, self.layout.seed);
        self.contains_mixed(h)
    }

    #[inline(always)]
    fn contains_mixed(&self, h: u64) -> bool {
        if self.layout.items == 0 {
            return false;
        }
        let [a, b, c] = self.layout.slots_of(h);
        let fp = self.fingerprints;
        F::of(h) ^ fp.get(a) ^ fp.get(b) ^ fp.get(c) == F::default()
    }

    /// Prefetches the three slots of a mixed hash.
    #[inline(always)]
    fn prefetch(&self, h: u64) {
        if self.layout.items != 0 {
            for s in self.layout.slots_of(h) {
                self.fingerprints.prefetch(s);
            }
        }
    }

    /// Answers for `hashes`, each mixed and its slots prefetched a group ahead.
    #[inline]
    pub(crate) fn contains_batch(&self, hashes: impl Iterator<Item = u64>, out: &mut Vec<bool>) {
        out.reserve(hashes.size_hint().0);
        pipeline(
            out,
            hashes,
            |_, hash| {
                let h = mix(hash, self.layout.seed);
                self.prefetch(h);
                h
            },
            |out, h| out.push(self.contains_mixed(h)),
        );
    }

    /// `2^-BITS`, or 0 for an empty filter.
    pub(crate) fn fpr(&self) -> f64 {
        if self.layout.items == 0 {
            0.0
        } else {
            (-f64::from(F::BITS)).exp2()
        }
    }
}

/// The fingerprints of `n` mixed... keys, as `u64` words (so that the byte format and the
/// views read them as aligned words), for the first seed of `seeds` that peels.
///
/// `hashes` is the input; after a failed attempt it is sorted and deduplicated once (the
/// attempt detects most duplicates itself, but not all).
fn build<F: Fingerprint>(hashes: &mut Vec<u64>) -> Result<(FuseLayout, Vec<u64>), Error> {
    let given = hashes.len() as u64;
    let mut base = FuseLayout::for_items(hashes.len(), F::BITS)?;
    let mut scratch = Scratch::new(base.slots(), hashes.len())?;
    let mut deduplicated = false;
    for (attempt, seed) in Seeds::new().take(MAX_ATTEMPTS as usize).enumerate() {
        if attempt > 0 && !deduplicated {
            // Duplicates the attempt did not see keep every seed from peeling, and many
            // duplicates size the table for keys that are not there: sort them out once,
            // and size the table for the distinct keys.
            hashes.sort_unstable();
            hashes.dedup();
            deduplicated = true;
            if (hashes.len() as u64) < given {
                base = FuseLayout::for_items(hashes.len(), F::BITS)?;
                scratch = Scratch::new(base.slots(), hashes.len())?;
            }
        }
        // Every other retry cuts the same table into twice as many segments of half the
        // length: just past a step of the segment-length formula, the formula's segments
        // are too long for the table to peel with any seed (FastFilter/xorfilter#50).
        let mut layout = if attempt % 2 == 1 {
            base.halved()
        } else {
            base
        };
        layout.seed = seed;
        if let Some(items) = scratch.peel(&layout, hashes) {
            // More than one key in eight seen twice: the table is that much too large;
            // build again for the distinct keys (a sort, paid only by such inputs).
            if !deduplicated && (hashes.len() - items) * 8 > hashes.len() {
                scratch.reset(hashes.len());
                continue;
            }
            layout.items = items as u64;
            let words = scratch.assign::<F>(&layout, items)?;
            return Ok((layout, words));
        }
    }
    Err(Error::ConstructionFailed {
        variant: F::VARIANT,
        items: given,
        attempts: MAX_ATTEMPTS,
    })
}

/// `(i + 1) % 3` and `(i + 2) % 3` for `i` in `0..3`, by indexing from `i` and `i + 1`.
const NEXT: [usize; 4] = [1, 2, 0, 1];

/// The working memory of a build: per slot a count and the XOR of the keys touching it;
/// per key its mixed hash (sorted by segment, then in peel order) and which of its slots it
/// was peeled from.
struct Scratch {
    /// Per slot: (keys touching it) << 2 | XOR of which-slot indices (0, 1, 2) of those keys.
    counts: Vec<u8>,
    /// Per slot: XOR of the mixed hashes of the keys touching it.
    xors: Vec<u64>,
    /// Mixed hashes, in segment order, then the peeled ones in peel order.
    order: Vec<u64>,
    /// Which slot (0, 1, 2) each peeled key was solved at, in peel order.
    which: Vec<u8>,
    /// Slots touched by exactly one key, waiting to be peeled (a stack).
    queue: Vec<u32>,
}

impl Scratch {
    fn new(slots: usize, keys: usize) -> Result<Scratch, Error> {
        Ok(Scratch {
            counts: common::zeroed(slots)?,
            xors: common::zeroed(slots)?,
            order: common::zeroed(keys)?,
            which: common::zeroed(keys)?,
            queue: common::zeroed(slots + 1)?,
        })
    }

    /// Peels the keys' hypergraph under `layout`'s seed. Returns the number of distinct
    /// keys peeled when every key was, `None` when the seed fails (the scratch is then
    /// reset for the next one).
    fn peel(&mut self, layout: &FuseLayout, hashes: &[u64]) -> Option<usize> {
        let n = hashes.len();
        if n == 0 {
            return Some(0);
        }
        // Counting sort of the mixed hashes by their first segment (the top bits): keys
        // are then added, and mostly peeled, segment by segment, in cache.
        let buckets_bits = (u64::from(layout.segment_count)
            .next_power_of_two()
            .trailing_zeros())
        .clamp(1, 20);
        common::mixed_by_top_bits(hashes, layout.seed, buckets_bits, &mut self.order[..n]);
        let order = &mut self.order[..n];

        // Add every key to its three slots. A key added twice (the same mixed hash) leaves
        // one of its slots holding exactly those two copies with a XOR of 0: when that
        // shows, the second copy is taken out again and counted as a duplicate.
        let mut duplicates = 0usize;
        let mut overflow = false;
        let (counts, xors) = (&mut self.counts, &mut self.xors);
        for &m in order.iter() {
            let s = layout.slots_of(m);
            let mut twice = false;
            for (i, &slot) in s.iter().enumerate() {
                let c = counts[slot];
                overflow |= c >= 252;
                let c = c.wrapping_add(4) ^ i as u8;
                counts[slot] = c;
                let x = xors[slot] ^ m;
                xors[slot] = x;
                twice |= x == 0 && c >> 2 == 2;
            }
            if twice {
                duplicates += 1;
                for (i, &slot) in s.iter().enumerate() {
                    counts[slot] = counts[slot].wrapping_sub(4) ^ i as u8;
                    xors[slot] ^= m;
                }
            }
        }
        if overflow {
            self.reset(n);
            return None;
        }

        // Peel: a slot touched by one key is that key's; taking the key out of its other two
        // slots may leave them touched by one key, and so on.
        // A stack written without branches (an entry is written always and kept when its
        // slot qualifies): each slot enters at most once, when it first has one key (at
        // the start, or going from two keys to one), so `slots` entries (+1 for the write
        // past the top) are enough.
        let stack = &mut self.queue;
        let mut top = 0usize;
        for (i, &c) in counts.iter().enumerate() {
            stack[top] = i as u32;
            top += usize::from(c >> 2 == 1); // bool-add: the comparison is not used again
        }
        let mut peeled = 0usize;
        while top > 0 {
            top -= 1;
            let slot = stack[top] as usize;
            let count = counts[slot];
            if count >> 2 != 1 {
                continue;
            }
            let m = xors[slot];
            let found = (count & 3) as usize;
            order[peeled] = m;
            self.which[peeled] = found as u8;
            peeled += 1;
            // The key leaves its other two slots (its own slot is not read again).
            let s = layout.slots_of(m);
            for i in [NEXT[found], NEXT[found + 1]] {
                let other = s[i];
                let c = counts[other];
                stack[top] = other as u32;
                top += usize::from(c >> 2 == 2); // bool-add: the comparison is not used again
                counts[other] = c.wrapping_sub(4) ^ i as u8;
                xors[other] ^= m;
            }
        }
        if peeled + duplicates == n {
            // Every key peeled (or counted as a duplicate).
            Some(peeled)
        } else {
            self.reset(n);
            None
        }
    }

    fn reset(&mut self, n: usize) {
        self.counts.fill(0);
        self.xors.fill(0);
        self.order[..n].fill(0);
    }

    /// The fingerprints, solving the peeled keys in reverse peel order: each key's slot was
    /// touched by no key peeled before it, so it is set once, after the key's other two.
    fn assign<F: Fingerprint>(
        &self,
        layout: &FuseLayout,
        peeled: usize,
    ) -> Result<Vec<u64>, Error> {
        let slots = layout.slots();
        let per_word = 8 / core::mem::size_of::<F>();
        let mut words: Vec<u64> = common::zeroed(slots.div_ceil(per_word))?;
        #[cfg(target_endian = "little")]
        {
            let fp: &mut [F] = &mut bytemuck::cast_slice_mut::<u64, F>(&mut words)[..slots];
            for i in (0..peeled).rev() {
                let m = self.order[i];
                let found = self.which[i] as usize;
                let s = layout.slots_of(m);
                fp[s[found]] = F::of(m) ^ fp[s[NEXT[found]]] ^ fp[s[NEXT[found + 1]]];
            }
        }
        #[cfg(not(target_endian = "little"))]
        for i in (0..peeled).rev() {
            let m = self.order[i];
            let found = self.which[i] as usize;
            let s = layout.slots_of(m);
            let value = F::of(m)
                ^ packed_get::<F>(&words, s[NEXT[found]])
                ^ packed_get::<F>(&words, s[NEXT[found + 1]]);
            packed_set(&mut words, s[found], value);
        }
        Ok(words)
    }
}

/// A binary fuse filter with `F`-bit fingerprints over keys `K`: a static filter, built
/// once from its keys ([`from_keys`](Self::from_keys)) or their 64-bit hashes
/// ([`from_hashes`](Self::from_hashes)), then read-only.
///
/// Use the aliases [`BinaryFuse8`], [`BinaryFuse16`] and [`BinaryFuse32`]. A lookup reads
/// three slots (three cache misses in a large filter); the false-positive rate is
/// `2^-bits` (0.39%, 0.0015%, 2.3e-10) at about 1.125 * bits bits per key for large sets
/// (more below 10^5 keys: the table needs room to peel).
///
/// # Examples
///
/// ```
/// use bloomkit_static::BinaryFuse8;
///
/// let keys: Vec<u64> = (0..10_000).collect();
/// let filter = BinaryFuse8::<u64>::from_keys(&keys)?;
/// assert!(keys.iter().all(|k| filter.contains(k)));
/// println!("{:.2} bits/key", filter.bits_per_key());
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct BinaryFuse<F, K: ?Sized, S = Xxh3Builder> {
    pub(crate) layout: FuseLayout,
    /// The fingerprints as words: `layout.slots()` values of `F`, zero-padded to a word.
    pub(crate) words: Vec<u64>,
    pub(crate) hasher: S,
    pub(crate) key: PhantomData<fn(&K, F)>,
}

/// A binary fuse filter with 8-bit fingerprints: 0.39% false positives at about 9.0 bits
/// per key. See [`BinaryFuse`].
pub type BinaryFuse8<K, S = Xxh3Builder> = BinaryFuse<u8, K, S>;
/// A binary fuse filter with 16-bit fingerprints: 0.0015% at about 18.0 bits per key.
pub type BinaryFuse16<K, S = Xxh3Builder> = BinaryFuse<u16, K, S>;
/// A binary fuse filter with 32-bit fingerprints: 2.3e-10 at about 36.0 bits per key.
pub type BinaryFuse32<K, S = Xxh3Builder> = BinaryFuse<u32, K, S>;

impl<F: Fingerprint, K: Hash + ?Sized> BinaryFuse<F, K> {
    /// A filter of `keys` (any iterator of keys or references to them; duplicates allowed),
    /// hashed with bloomkit's default hasher.
    ///
    /// Memory while building: about 33 bytes per key at its peak (measured at 10^7 keys), the
    /// result included (the hashes, per slot a count and a XOR, per key its place in the peel
    /// order).
    ///
    /// # Errors
    /// [`Error::ConstructionFailed`] when 64 seeds in a row fail to peel: with distinct keys
    /// this has probability far below 10^-50; [`Error::TooLarge`] above about 3.8 * 10^9
    /// keys (slot indices are 32-bit); [`Error::AllocationFailed`] when the memory is refused.
    pub fn from_keys<I>(keys: I) -> Result<Self, Error>
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        Self::from_keys_with_hasher(keys, Xxh3Builder::default())
    }

    /// A filter of the keys whose 64-bit hashes are `hashes`, as
    /// [`hash_key`](bloomkit_core::Lookup::hash_key) gives them (bloomkit's default hasher;
    /// a writer that already hashed its keys skips hashing them again).
    ///
    /// # Errors
    /// As [`from_keys`](Self::from_keys).
    pub fn from_hashes(hashes: impl IntoIterator<Item = u64>) -> Result<Self, Error> {
        Self::from_hashes_with_hasher(hashes, Xxh3Builder::default())
    }
}

impl<F: Fingerprint, K: ?Sized, S: BuildHasher> BinaryFuse<F, K, S> {
    /// A filter of `keys`, hashed with `hasher` (lookups hash with it too).
    ///
    /// # Errors
    /// As [`from_keys`](BinaryFuse::from_keys).
    pub fn from_keys_with_hasher<I>(keys: I, hasher: S) -> Result<Self, Error>
    where
        K: Hash,
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        let hashes = common::hash_keys::<K, _, _>(keys, &hasher)?;
        Self::from_hash_vec(hashes, hasher)
    }

    /// A filter of the keys whose hashes under `hasher` are `hashes`.
    ///
    /// # Errors
    /// As [`from_keys`](BinaryFuse::from_keys).
    pub fn from_hashes_with_hasher(
        hashes: impl IntoIterator<Item = u64>,
        hasher: S,
    ) -> Result<Self, Error> {
        let hashes = common::collect(hashes.into_iter())?;
        Self::from_hash_vec(hashes, hasher)
    }

    fn from_hash_vec(mut hashes: Vec<u64>, hasher: S) -> Result<Self, Error> {
        let (layout, words) = build::<F>(&mut hashes)?;
        Ok(BinaryFuse {
            layout,
            words,
            hasher,
            key: PhantomData,
        })
    }
}

/// The read side of a binary fuse filter and its view (`$ty` has `layout`, `words` as
/// `u64`s and `hasher`): one definition for both.
macro_rules! fuse_read_side {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<$($lt,)? F: $crate::Fingerprint, K: ?Sized, S: ::core::hash::BuildHasher> $ty<$($lt,)? F, K, S> {
            $crate::key_lookups!();
        }

        impl<$($lt,)? F: $crate::Fingerprint, K: ?Sized, S> $ty<$($lt,)? F, K, S> {
            #[inline(always)]
            pub(crate) fn lookup(&self) -> $crate::fuse::FuseLookup<'_, F> {
                $crate::fuse::FuseLookup {
                    layout: self.layout,
                    fingerprints: $crate::fuse::Table::new(self.words.as_ref(), self.layout.slots()),
        }
            }

            $crate::hash_lookups!();

            /// The number of distinct keys (by 64-bit hash) the filter holds: exact.
            pub fn len(&self) -> u64 {
                self.layout.items
            }

            /// The number of fingerprint slots.
            pub fn num_slots(&self) -> u64 {
                self.layout.slots() as u64
            }

            /// Bits of fingerprint table per distinct key (the whole table over [`len`](Self::len)).
            pub fn bits_per_key(&self) -> f64 {
                (self.layout.slots() as f64 * f64::from(F::BITS)) / self.layout.items.max(1) as f64
            }

            /// The false-positive rate: `2^-bits` for a key never inserted (0 when empty).
            pub fn estimated_fpr(&self) -> f64 {
                self.lookup().fpr()
            }


                    pub(crate) fn target(&self) -> Option<f64> {
                        Some((-f64::from(F::BITS)).exp2())
                    }
        }
    };
}
#[cfg(feature = "serde")]
pub(crate) use fuse_read_side;

fuse_read_side!(BinaryFuse);

impl<F: Fingerprint, K: ?Sized, S> BinaryFuse<F, K, S> {
    /// Heap memory held: the fingerprint table.
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

impl<F: Fingerprint, K: ?Sized, S: fmt::Debug> fmt::Debug for BinaryFuse<F, K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(F::VARIANT.name())
            .field("items", &self.layout.items)
            .field("slots", &self.layout.slots())
            .field("segment_length", &self.layout.segment_length)
            .field("seed", &self.layout.seed)
            .field("hasher", &self.hasher)
            .finish()
    }
}

crate::impl_static_lookup!([F: Fingerprint, S: BuildHasher] BinaryFuse<F, K, S>, key = K);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_paper_for_large_sets() {
        let l = FuseLayout::for_items(1_000_000, 8).unwrap();
        let per_key = l.slots() as f64 / 1e6;
        assert!((1.125..1.14).contains(&per_key), "{per_key}");
        #[cfg(feature = "serde")]
        assert!(l.check().is_ok());
    }

    /// Just past each step of the segment-length formula (`n = 3.33^(k - 2.25)`), the
    /// formula's layout does not peel with any seed: 11,477 keys failed all 64 before the
    /// halved layout was tried too.
    #[test]
    fn sizes_just_past_a_segment_step_build() {
        for k in 5..=12 {
            let step = 3.33f64.powf(f64::from(k) - 2.25);
            for n in [step * 1.001, step * 1.01, step * 1.03, 11_477.0] {
                let n = n.ceil() as u64;
                let f = BinaryFuse8::<u64>::from_keys(0..n).unwrap();
                assert_eq!(f.len(), n);
                assert!((0..n).all(|k| f.contains(&k)), "n = {n}");
                let g = BinaryFuse16::<u64>::from_hashes((0..n).map(|i| i * 0x9e37_79b9)).unwrap();
                assert_eq!(g.len(), n);
            }
        }
    }

    /// Peel success by size, for the formula's segments and halved ones (not run by default:
    /// `cargo test --release -p bloomkit-static --lib -- --ignored segment_survey --nocapture`).
    #[test]
    #[ignore]
    fn segment_survey() {
        for k in 5..=16 {
            let step = 3.33f64.powf(f64::from(k) - 2.25);
            for f in [0.98, 1.001, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0] {
                let n = (step * f).ceil() as usize;
                if n > 20_000_000 {
                    continue;
                }
                let hashes: Vec<u64> = (0..n as u64).map(|i| crate::common::mix(i, 77)).collect();
                let base = FuseLayout::for_items(n, 8).unwrap();
                let mut scratch = Scratch::new(base.slots(), n).unwrap();
                let trials = if n > 1_000_000 { 3 } else { 10 };
                let mut ok = [0; 2];
                for (t, layout) in [base, base.halved()].into_iter().enumerate() {
                    for seed in Seeds::new().take(trials) {
                        let l = FuseLayout { seed, ..layout };
                        if scratch.peel(&l, &hashes).is_some() {
                            ok[t] += 1;
                        }
                        scratch.reset(n);
                    }
                }
                println!(
                    "n = {n:>9} (step {k} x {f}): segment {} peels {}/{trials}, halved {}/{trials}",
                    base.segment_length, ok[0], ok[1]
                );
            }
        }
    }

    #[test]
    fn tiny_sets_build() {
        for n in 0..200u64 {
            let keys: Vec<u64> = (0..n).collect();
            let f = BinaryFuse8::<u64>::from_keys(&keys).unwrap();
            assert_eq!(f.len(), n);
            assert!(keys.iter().all(|k| f.contains(k)), "n = {n}");
        }
    }

    /// The packed order (what big-endian machines read through) is the little-endian
    /// memory order this machine reads through a cast: the format's bytes mean the same.
    #[test]
    fn packed_slots_are_the_little_endian_order() {
        fn check<F: Fingerprint>() {
            let mut words: Vec<u64> = (0..16u64).map(|i| crate::common::mix(i, 3)).collect();
            let n = words.len() * 64 / F::BITS as usize;
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let width = F::BITS as usize / 8;
            for i in 0..n {
                let mut le = [0u8; 8];
                le[..width].copy_from_slice(&bytes[i * width..(i + 1) * width]);
                assert_eq!(packed_get::<F>(&words, i).widen(), u64::from_le_bytes(le));
            }
            for i in (0..n).step_by(3) {
                let v = F::truncate(crate::common::mix(i as u64, 9));
                packed_set(&mut words, i, v);
                assert_eq!(packed_get::<F>(&words, i), v);
                assert_eq!(Table::<F>::new(&words, n).get(i), v);
            }
        }
        check::<u8>();
        check::<u16>();
        check::<u32>();
    }

    #[test]
    fn many_duplicates_do_not_inflate_the_table() {
        let keys: Vec<u64> = (0..100_000u64).flat_map(|k| [k; 10]).collect();
        let f = BinaryFuse8::<u64>::from_keys(&keys).unwrap();
        let distinct = BinaryFuse8::<u64>::from_keys(0..100_000u64).unwrap();
        assert_eq!(f.len(), 100_000);
        assert_eq!(f.num_slots(), distinct.num_slots());
    }

    #[test]
    fn duplicates_are_one_key() {
        let keys: Vec<u64> = (0..5_000u64).map(|i| i % 1_000).collect();
        let f = BinaryFuse16::<u64>::from_keys(&keys).unwrap();
        assert_eq!(f.len(), 1_000);
        assert!((0..1_000u64).all(|k| f.contains(&k)));
        let same = BinaryFuse16::<u64>::from_keys(vec![7u64; 10_000]).unwrap();
        assert_eq!(same.len(), 1);
        assert!(same.contains(&7));
    }
}
