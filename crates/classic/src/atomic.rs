//! Filters that many threads insert into at once: [`AtomicBloomFilter`] and
//! [`AtomicBlockedBloomFilter`].
//!
//! Each is its single-threaded twin with the words made atomic: the same sizing, hashing,
//! bit positions and byte format, so a filter converts both ways without re-hashing a key
//! (the bits are copied as they are). `insert` takes `&self`: share the filter through an
//! `Arc` or a scoped thread and insert from every thread, with no lock.

use core::fmt;
use core::hash::BuildHasher;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use derive_where::derive_where;

use bloomkit_core::batch::prefetch;
use bloomkit_core::bits::{AtomicWords, BitArray};
use bloomkit_core::build::{FromSettings, Probing, Settings};
use bloomkit_core::hash::{block_contains, block_contains_all, reduce, BlockProbe, ProbeScheme};
use bloomkit_core::sizing::{self, Design};
use bloomkit_core::{Error, PortableHasher, Xxh3Builder};

use crate::blocked::{Block, BRANCH_FREE_MAX_BYTES};
use crate::{BlockedBloomFilter, BloomFilter};

/// A [`BloomFilter`] that any number of threads insert into at once, through `&self`.
///
/// # Why no key is lost
///
/// An insert sets each of its bits with `fetch_or` on the bit's word (after a plain load that
/// skips bits already set). Bits only ever go from 0 to 1 (until `clear`, which needs
/// `&mut self`), and every read-modify-write of one word takes its place in that word's
/// single modification order, so two threads setting bits in the same word never undo each
/// other's bit: no update is lost, whatever the interleaving. `Relaxed` ordering suffices for
/// that; what it does not give (nothing can) is an answer about an insert that has not
/// finished: a key is certainly found by a thread that synchronized with the insert's end
/// (joined the thread, received from a channel, took a lock after it), and may be missed
/// before that, as in any concurrent set.
///
/// Two threads inserting the same key at once may both get `true` ("certainly new"): each
/// may have set one of its bits.
///
/// # Examples
///
/// ```
/// use bloomkit_classic::{AtomicBloomFilter, BloomFilter};
///
/// let seen = AtomicBloomFilter::new(100_000, 0.01)?;
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let seen = &seen;
///         s.spawn(move || {
///             for i in 0..1_000u64 {
///                 seen.insert(&(t * 1_000 + i));
///             }
///         });
///     }
/// });
/// assert!((0..4_000u64).all(|i| seen.contains(&i)));
///
/// // The same bits as a filter built by one thread from the same keys.
/// let mut one = BloomFilter::new(100_000, 0.01)?;
/// one.insert_batch(0..4_000u64);
/// assert_eq!(seen.to_filter()?, one);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct AtomicBloomFilter<K: ?Sized, S = Xxh3Builder> {
    words: AtomicWords,
    bits: u64,
    hashes: u32,
    probes: ProbeScheme,
    design: Option<Design>,
    hasher: S,
    key: PhantomData<fn(&K)>,
}

impl<K: ?Sized, S: BuildHasher> FromSettings for AtomicBloomFilter<K, S> {
    type Hasher = S;

    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        // The twin's sizing exactly; the zeroed words are allocated once, here.
        let (design, plan) = settings.slot_plan(|bits| bits.div_ceil(64) * 8)?;
        let words = plan.bits.div_ceil(64);
        Ok(AtomicBloomFilter {
            words: AtomicWords::zeroed(words)?,
            bits: plan.bits,
            hashes: plan.hashes,
            probes: settings.probes.unwrap_or_default(),
            design: Some(design),
            hasher,
            key: PhantomData,
        })
    }
}

impl<K: ?Sized, S: BuildHasher> Probing for AtomicBloomFilter<K, S> {}

impl<K: ?Sized, S: BuildHasher> AtomicBloomFilter<K, S> {
    /// Inserts the key whose hash is `hash`; returns as [`insert`](Self::insert).
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> bool {
        let mut fresh = 0u64;
        self.probes.for_each(hash, self.bits, self.hashes, |i| {
            let word = &self.words[(i >> 6) as usize];
            let bit = 1u64 << (i & 63);
            // A plain load first: a bit already set costs no locked instruction and does
            // not take the cache line away from other threads.
            // "Certainly new" from the load, and the old value of `fetch_or` unused, as in
            // the blocked filter's insert: one `lock or`, no compare-and-swap loop.
            if word.load(Relaxed) & bit == 0 {
                word.fetch_or(bit, Relaxed);
                fresh |= bit;
            }
        });
        fresh != 0
    }

    /// Whether the key whose hash is `hash` may be in the filter.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.probes.all(hash, self.bits, self.hashes, |i| {
            self.words[(i >> 6) as usize].load(Relaxed) >> (i & 63) & 1 == 1
        })
    }

    #[inline]
    fn locate(&self, hash: u64) -> u64 {
        self.probes.for_each(hash, self.bits, self.hashes, |i| {
            prefetch(&self.words[(i >> 6) as usize]);
        });
        hash
    }

    /// Removes every key (`&mut self`: no insert can run meanwhile).
    pub fn clear(&mut self) {
        for word in self.words.iter_mut() {
            *word.get_mut() = 0;
        }
    }

    /// `m`, the number of bits.
    pub fn num_bits(&self) -> u64 {
        self.bits
    }

    /// The number of set bits, counted now (O(m / 64); inserts running meanwhile may or may
    /// not be counted).
    pub fn count_ones(&self) -> u64 {
        self.words
            .iter()
            .map(|w| u64::from(w.load(Relaxed).count_ones()))
            .sum()
    }

    /// An estimate of the number of distinct keys inserted, from the set bits counted now
    /// (as [`BloomFilter::estimated_len`]).
    pub fn estimated_len(&self) -> f64 {
        sizing::estimate_cardinality(self.bits, self.hashes, self.count_ones())
            .unwrap_or(f64::INFINITY)
    }

    /// The false-positive rate from the fill counted now.
    pub fn estimated_fpr(&self) -> f64 {
        sizing::fpr_from_fill(self.bits, self.hashes, self.count_ones()).unwrap_or(1.0)
    }

    /// Bytes of heap memory held (the words).
    pub fn heap_bytes(&self) -> usize {
        core::mem::size_of_val(&*self.words)
    }

    /// A single-threaded copy of the filter as it is now: the same bits, parameters and
    /// hasher.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when the copy cannot be allocated.
    pub fn to_filter(&self) -> Result<BloomFilter<K, S>, Error>
    where
        S: Clone,
    {
        let mut words = Vec::new();
        words
            .try_reserve_exact(self.words.len())
            .map_err(|_| Error::AllocationFailed {
                bytes: self.heap_bytes() as u64,
            })?;
        words.extend(self.words.iter().map(|w| w.load(Relaxed)));
        let bits = BitArray::from_words(words, self.bits)?;
        BloomFilter::from_bit_array(
            bits,
            self.hashes,
            self.probes,
            self.hasher.clone(),
            self.design,
        )
    }

    /// The filter with the bits of `filter` (which it consumes), for inserts from many
    /// threads.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when the atomic words cannot be allocated.
    pub fn from_filter(filter: BloomFilter<K, S>) -> Result<Self, Error> {
        Ok(AtomicBloomFilter {
            words: AtomicWords::from_values(filter.bits.words())?,
            bits: filter.bits.len(),
            hashes: filter.hashes,
            probes: filter.probes,
            design: filter.design,
            hasher: filter.hasher,
            key: PhantomData,
        })
    }

    /// ORs `other`'s bits in: afterwards `self` contains every key `other` contains. Runs
    /// alongside inserts and other merges (a per-partition filter merged into a shared one).
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the two were built with different bits, probes, hasher,
    /// seed or probe scheme; nothing is changed then.
    pub fn union_with(&self, other: &BloomFilter<K, S>) -> Result<(), Error>
    where
        S: PortableHasher,
    {
        bloomkit_core::check_same_shape(
            (bloomkit_core::Parameter::Bits, self.bits, other.bits.len()),
            (self.hashes, other.hashes),
            (self.hasher.spec(), other.hasher.spec()),
        )?;
        bloomkit_core::check_same_probes(self.probes, other.probes)?;
        for (word, &bits) in self.words.iter().zip(other.bits.words()) {
            if bits != 0 {
                word.fetch_or(bits, Relaxed);
            }
        }
        Ok(())
    }
}

bloomkit_core::impl_shape_accessors!([S] AtomicBloomFilter<K, S>, key = K, probes);

bloomkit_core::impl_key_methods!(
    [S: BuildHasher] AtomicBloomFilter<K, S>, key = K,
    doc = ("bloomkit_classic", AtomicBloomFilter),
    insert = shared Self::insert_hash, contains_batch = pipeline
);

bloomkit_core::impl_infallible_filter!([S: BuildHasher] AtomicBloomFilter<K, S>, key = K);

impl<K: ?Sized, S: fmt::Debug> fmt::Debug for AtomicBloomFilter<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicBloomFilter")
            .field("bits", &self.bits)
            .field("hashes", &self.hashes)
            .field("probes", &self.probes)
            .field("design", &self.design)
            .field("hasher", &self.hasher)
            .finish_non_exhaustive()
    }
}

/// One 64-byte block of atomic words, aligned to a cache line as [`Block`] is.
#[repr(align(64))]
#[derive(Default)]
struct AtomicBlock([AtomicU64; 8]);

/// A copy of the block as it is now.
impl Clone for AtomicBlock {
    fn clone(&self) -> Self {
        AtomicBlock(core::array::from_fn(|i| {
            AtomicU64::new(self.0[i].load(Relaxed))
        }))
    }
}

/// The same words as read now.
impl PartialEq for AtomicBlock {
    fn eq(&self, other: &Self) -> bool {
        self.0
            .iter()
            .zip(&other.0)
            .all(|(x, y)| x.load(Relaxed) == y.load(Relaxed))
    }
}

/// A [`BlockedBloomFilter`] that any number of threads insert into at once, through
/// `&self`: an insert is at most eight `fetch_or`s on one cache line.
///
/// # Examples
///
/// ```
/// use bloomkit_classic::AtomicBlockedBloomFilter;
/// use std::sync::Arc;
///
/// let seen = Arc::new(AtomicBlockedBloomFilter::<u64>::new(100_000, 0.01)?);
/// let workers: Vec<_> = (0..2u64)
///     .map(|t| {
///         let seen = Arc::clone(&seen);
///         std::thread::spawn(move || seen.insert_batch(t * 50_000..(t + 1) * 50_000))
///     })
///     .collect();
/// for w in workers {
///     w.join().unwrap();
/// }
/// assert!((0..100_000u64).all(|i| seen.contains(&i)));
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct AtomicBlockedBloomFilter<K: ?Sized, S = Xxh3Builder> {
    blocks: Box<[AtomicBlock]>,
    hashes: u32,
    design: Option<Design>,
    hasher: S,
    key: PhantomData<fn(&K)>,
}

/// `blocks` zeroed atomic blocks, or the reason they cannot be had.
fn atomic_blocks(blocks: u64) -> Result<Box<[AtomicBlock]>, Error> {
    Ok(bloomkit_core::bits::filled_vec(blocks, AtomicBlock::default)?.into_boxed_slice())
}

impl<K: ?Sized, S: BuildHasher> FromSettings for AtomicBlockedBloomFilter<K, S> {
    type Hasher = S;

    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        // The twin's checks and sizing (a zero-block twin is never allocated: it is only
        // sized here), then atomic blocks of the same count.
        let design = settings.design()?;
        let plan = sizing::blocked_plan(settings.items, settings.fpr)?;
        settings.check_bytes(plan.bits.saturating_mul(64))?;
        Ok(AtomicBlockedBloomFilter {
            blocks: atomic_blocks(plan.bits)?,
            hashes: plan.hashes,
            design: Some(design),
            hasher,
            key: PhantomData,
        })
    }
}

impl<K: ?Sized, S: BuildHasher> AtomicBlockedBloomFilter<K, S> {
    #[inline]
    fn block(&self, hash: u64) -> &[AtomicU64; 8] {
        &self.blocks[reduce(hash, self.blocks.len() as u64) as usize].0
    }

    /// Inserts the key whose hash is `hash`; returns as [`insert`](Self::insert).
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> bool {
        let probe = BlockProbe::new(hash, self.blocks.len() as u64, self.hashes);
        let block = &self.blocks[probe.block as usize].0;
        // First, with no branch, the bits each word lacks (eight plain loads of one cache
        // line); then one `lock or` per word that lacks any, and none for the others. A
        // branch per word would mispredict several times an insert (a word holds none of a
        // key's 7 bits 39% of the time, and then half-full words decide at random); the
        // loop over the set bits of `todo` mispredicts about once, at its exit. `todo` is
        // built with shifts, not from a bool cast to an integer, which
        // rust-lang/rust#158206 miscompiles next to a returned flag (see `BitArray::set`). The old value of `fetch_or` is not used: with it, a multi-bit OR compiles
        // to a compare-and-swap loop on x86; without it, to one `lock or`. "Certainly
        // new" comes from the loads: a bit seen clear there was clear before this call.
        let missing: [u64; 8] = core::array::from_fn(|i| probe.mask[i] & !block[i].load(Relaxed));
        let mut todo = 0u64;
        for (i, &m) in missing.iter().enumerate() {
            // The top bit of `m | -m` is set exactly when `m != 0`.
            todo |= ((m | m.wrapping_neg()) >> 63) << i;
        }
        let fresh = todo;
        while todo != 0 {
            let i = todo.trailing_zeros() as usize;
            block[i].fetch_or(missing[i], Relaxed);
            todo &= todo - 1;
        }
        fresh != 0
    }

    /// Whether the key whose hash is `hash` may be in the filter: the bits tested in place
    /// as [`BlockedBloomFilter::contains_hash`] tests them, one `Relaxed` load per probe.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let block = self.block(hash);
        if self.blocks.len() <= BRANCH_FREE_MAX_BYTES / 64 {
            block_contains_all(block, hash, self.hashes)
        } else {
            block_contains(block, hash, self.hashes)
        }
    }

    #[inline]
    fn locate(&self, hash: u64) -> u64 {
        prefetch(self.block(hash));
        hash
    }

    /// Removes every key (`&mut self`: no insert can run meanwhile).
    pub fn clear(&mut self) {
        for block in self.blocks.iter_mut() {
            for word in &mut block.0 {
                *word.get_mut() = 0;
            }
        }
    }

    /// The number of 512-bit blocks.
    pub fn num_blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    fn block_ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks
            .iter()
            .map(|b| b.0.iter().map(|w| w.load(Relaxed).count_ones()).sum())
    }

    /// An estimate of the number of distinct keys inserted, from the blocks as they are now
    /// (as [`BlockedBloomFilter::estimated_len`]; O(blocks)).
    pub fn estimated_len(&self) -> f64 {
        crate::blocked::len_from_fill(self.block_ones(), self.hashes)
    }

    /// The false-positive rate from the fill now (as
    /// [`BlockedBloomFilter::estimated_fpr`]; O(blocks)).
    pub fn estimated_fpr(&self) -> f64 {
        crate::blocked::fpr_from_fill(self.block_ones(), self.hashes)
    }

    /// Bytes of heap memory held (the blocks).
    pub fn heap_bytes(&self) -> usize {
        self.blocks.len() * core::mem::size_of::<AtomicBlock>()
    }

    fn snapshot<T>(&self, hasher: T) -> Result<BlockedBloomFilter<K, T>, Error> {
        let mut blocks = crate::blocked::zeroed_blocks(self.blocks.len() as u64)?;
        let mut ones = 0u64;
        for (block, atomic) in blocks.iter_mut().zip(self.blocks.iter()) {
            for (word, a) in block.0.iter_mut().zip(&atomic.0) {
                *word = a.load(Relaxed);
                ones += u64::from(word.count_ones());
            }
        }
        Ok(BlockedBloomFilter {
            blocks,
            hashes: self.hashes,
            design: self.design,
            hasher,
            ones,
            key: PhantomData,
        })
    }

    /// A single-threaded copy of the filter as it is now.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when the copy cannot be allocated.
    pub fn to_filter(&self) -> Result<BlockedBloomFilter<K, S>, Error>
    where
        S: Clone,
    {
        self.snapshot(self.hasher.clone())
    }

    /// The filter with the blocks of `filter` (which it consumes), for inserts from many
    /// threads.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when the atomic blocks cannot be allocated.
    pub fn from_filter(filter: BlockedBloomFilter<K, S>) -> Result<Self, Error> {
        let blocks = atomic_blocks(filter.blocks.len() as u64)?;
        for (atomic, block) in blocks.iter().zip(&filter.blocks) {
            copy_block(atomic, block);
        }
        Ok(AtomicBlockedBloomFilter {
            blocks,
            hashes: filter.hashes,
            design: filter.design,
            hasher: filter.hasher,
            key: PhantomData,
        })
    }

    /// ORs `other`'s bits in, alongside inserts and other merges.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the two were built with different blocks, probes,
    /// hasher or seed; nothing is changed then.
    pub fn union_with(&self, other: &BlockedBloomFilter<K, S>) -> Result<(), Error>
    where
        S: PortableHasher,
    {
        bloomkit_core::check_same_shape(
            (
                bloomkit_core::Parameter::Blocks,
                self.blocks.len() as u64,
                other.blocks.len() as u64,
            ),
            (self.hashes, other.hashes),
            (self.hasher.spec(), other.hasher.spec()),
        )?;
        for (atomic, block) in self.blocks.iter().zip(&other.blocks) {
            for (word, &bits) in atomic.0.iter().zip(&block.0) {
                if bits != 0 {
                    word.fetch_or(bits, Relaxed);
                }
            }
        }
        Ok(())
    }
}

fn copy_block(atomic: &AtomicBlock, block: &Block) {
    for (a, &w) in atomic.0.iter().zip(&block.0) {
        a.store(w, Relaxed);
    }
}

bloomkit_core::impl_shape_accessors!([S] AtomicBlockedBloomFilter<K, S>, key = K);

bloomkit_core::impl_key_methods!(
    [S: BuildHasher] AtomicBlockedBloomFilter<K, S>, key = K,
    doc = ("bloomkit_classic", AtomicBlockedBloomFilter),
    insert = shared Self::insert_hash, contains_batch = pipeline
);

bloomkit_core::impl_infallible_filter!([S: BuildHasher] AtomicBlockedBloomFilter<K, S>, key = K);

impl<K: ?Sized, S: fmt::Debug> fmt::Debug for AtomicBlockedBloomFilter<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicBlockedBloomFilter")
            .field("blocks", &self.blocks.len())
            .field("hashes", &self.hashes)
            .field("design", &self.design)
            .field("hasher", &self.hasher)
            .finish_non_exhaustive()
    }
}
bloomkit_core::impl_builder_entry!(AtomicBloomFilter, "bloomkit_classic", hasher);

bloomkit_core::impl_builder_entry!(AtomicBlockedBloomFilter, "bloomkit_classic", hasher);
