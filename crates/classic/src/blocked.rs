//! The cache-line blocked Bloom filter: all k bits of a key in one 512-bit block.

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use derive_where::derive_where;

use bloomkit_core::batch::{pipeline_groups, prefetch, with_simd};
use bloomkit_core::build::{FromSettings, Settings};
use bloomkit_core::hash::{
    block_contains_fast, block_contains_inlined, block_positions, reduce, BlockProbe, BLOCK_BITS,
};
use bloomkit_core::sizing::{self, check_hashes, Design};
use bloomkit_core::{check_same_shape, EmptyLike, Error, Parameter, PortableHasher, Xxh3Builder};

/// The size up to which [`AtomicBlockedBloomFilter::contains_hash`](crate::AtomicBlockedBloomFilter::contains_hash)
/// tests a key's bits without a branch (its words are atomics, loaded one at a time);
/// larger filters, whose lines usually come from DRAM, stop at the first clear bit. Chosen
/// between the 1.2 MB and 12 MB filters where the two scalar tests were measured on a
/// machine with 1 MiB of L2 and 32 MiB of L3. ([`BlockedBloomFilter`] tests every bit at
/// every size since its test runs in AVX2: see [`BlockedBloomFilter::contains_hash`].)
pub const BRANCH_FREE_MAX_BYTES: usize = 8 << 20;

/// The lookups the owned filter and its view ([`crate::BlockedBloomFilterRef`]) share: one
/// code path, so the view answers as fast as the filter.
#[derive(Clone, Copy)]
pub(crate) struct BlockLookup<'a> {
    pub(crate) blocks: &'a [[u64; 8]],
    pub(crate) hashes: u32,
}

impl<'a> BlockLookup<'a> {
    /// The block of the key whose hash is `hash`.
    #[inline(always)]
    pub(crate) fn block_of(self, hash: u64) -> &'a [u64; 8] {
        &self.blocks[reduce(hash, self.blocks.len() as u64) as usize]
    }

    /// One block (one cache line), the key's k bits all tested with no branch on them
    /// ([`block_contains_fast`]). See [`BlockedBloomFilter::contains_hash`].
    #[inline(always)]
    pub(crate) fn contains_hash(self, hash: u64) -> bool {
        block_contains_fast(self.block_of(hash), hash, self.hashes)
    }

    /// The key's hash and its block index, with the block's cache line requested.
    #[inline]
    pub(crate) fn locate(self, hash: u64) -> (u64, usize) {
        let block = reduce(hash, self.blocks.len() as u64) as usize;
        prefetch(&self.blocks[block]);
        (hash, block)
    }

    /// `contains_batch` with the blocks of a group of keys requested first, and tested
    /// branch-free (the misses overlap; the branch would only stall them).
    pub(crate) fn contains_batch<K, S, I>(self, hasher: &S, keys: I, out: &mut Vec<bool>)
    where
        K: Hash + ?Sized,
        S: BuildHasher,
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        pipeline_groups(
            out,
            keys,
            |_, key| self.locate(hasher.hash_one(key.borrow())),
            |out, group| {
                test_group(
                    out,
                    group,
                    #[inline(always)]
                    |hash, block| block_contains_inlined(&self.blocks[block], hash, self.hashes),
                );
            },
        );
    }
}

/// Appends `test(hash, block)` for each staged key of `group` to `out`, in one SIMD scope
/// ([`with_simd`]): the block tests are inlined into the loop instead of being called once
/// per key. The finish of the blocked and split-block filters' batched lookups.
#[inline(always)]
pub(crate) fn test_group(
    out: &mut Vec<bool>,
    group: &[(u64, usize)],
    test: impl Fn(u64, usize) -> bool,
) {
    with_simd(
        #[inline(always)]
        || {
            out.reserve(group.len());
            for &(hash, block) in group {
                out.push(test(hash, block));
            }
        },
    );
}

/// The accessors of a filter stored as `blocks: Vec<B>` with a running count of set bits
/// `ones` (the blocked and split-block filters): `clear`, `is_empty`, `num_blocks`,
/// `num_bits`, `count_ones` and `heap_bytes`, written once.
macro_rules! block_accessors {
    ([$($generics:tt)*] $ty:ty, block = $block:ty, bits = $bits:literal) => {
        impl<K: ?Sized, $($generics)*> $ty {
            /// Removes every key, keeping the allocation.
            pub fn clear(&mut self) {
                self.blocks.fill(<$block>::default());
                self.ones = 0;
            }

            /// Whether no bit is set (nothing was inserted since the last clear); O(1).
            pub fn is_empty(&self) -> bool {
                self.ones == 0
            }

            #[doc = concat!("The number of ", stringify!($bits), "-bit blocks.")]
            pub fn num_blocks(&self) -> u64 {
                self.blocks.len() as u64
            }

            #[doc = concat!("The number of bits (", stringify!($bits), " per block).")]
            pub fn num_bits(&self) -> u64 {
                self.num_blocks() * $bits
            }

            /// The number of set bits; O(1).
            pub fn count_ones(&self) -> u64 {
                self.ones
            }

            /// Bytes of heap memory held.
            pub fn heap_bytes(&self) -> usize {
                self.blocks.capacity() * core::mem::size_of::<$block>()
            }
        }
    };
}
pub(crate) use block_accessors;

/// `Union` (bitwise OR: every key of either) and `Intersection` (bitwise AND: every key
/// both held) for the filters of blocks, through their `check_compatible` and `combine`.
macro_rules! bitwise_set_ops {
    ([$($generics:tt)*] $ty:ty) => {
        impl<K: ?Sized, $($generics)*> bloomkit_core::Union for $ty {
            /// Bitwise OR: every key of either.
            fn union_with(&mut self, other: &Self) -> Result<(), bloomkit_core::Error> {
                self.check_compatible(other)?;
                self.combine(other, |a, b| a | b);
                Ok(())
            }
        }

        impl<K: ?Sized, $($generics)*> bloomkit_core::Intersection for $ty {
            /// Bitwise AND: every key both held.
            fn intersect_with(&mut self, other: &Self) -> Result<(), bloomkit_core::Error> {
                self.check_compatible(other)?;
                self.combine(other, |a, b| a & b);
                Ok(())
            }
        }
    };
}
pub(crate) use bitwise_set_ops;

block_accessors!([S] BlockedBloomFilter<K, S>, block = Block, bits = 512);

/// One 64-byte block, aligned to a cache line.
#[derive(Clone, Copy, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub(crate) struct Block(pub(crate) [u64; 8]);

/// `words` as blocks, eight words each.
///
/// # Errors
/// [`Error::PartialBlock`] when the count is not a multiple of eight, and the errors of
/// allocating the blocks.
pub(crate) fn blocks_from_words(words: &[u64]) -> Result<Vec<Block>, Error> {
    if words.len() % 8 != 0 {
        return Err(Error::PartialBlock {
            words: words.len() as u64,
        });
    }
    let mut blocks = zeroed_blocks(words.len() as u64 / 8)?;
    bytemuck::cast_slice_mut::<Block, u64>(&mut blocks).copy_from_slice(words);
    Ok(blocks)
}

/// `a[i] = op(a[i], b[i])` word by word (over the shorter length); returns the set bits of
/// the result, which the blocked and split-block filters keep as their count of ones.
pub(crate) fn combine_words<W: Copy>(
    a: &mut [W],
    b: &[W],
    op: fn(W, W) -> W,
    ones: fn(W) -> u32,
) -> u64 {
    let mut total = 0;
    for (x, &y) in a.iter_mut().zip(b) {
        *x = op(*x, y);
        total += u64::from(ones(*x));
    }
    total
}

/// The set bits of `blocks`.
pub(crate) fn count_ones(blocks: &[Block]) -> u64 {
    blocks
        .iter()
        .flat_map(|b| b.0)
        .map(|w| u64::from(w.count_ones()))
        .sum()
}

/// A Bloom filter whose k bits per key all fall in one 512-bit block (Putze, Sanders &
/// Singler 2007): a lookup touches one cache line, where a classic filter touches up to k,
/// and tests the key's positions inside it with no branch on them, in AVX2 where the CPU
/// has it ([`bloomkit_core::hash::block_contains_fast`]).
///
/// The price is accuracy at equal size: block loads vary, so it needs about 3% more bits
/// than the classic filter at 1% (9.9 bits/key) and 8% more at 0.1%. It is sized with the
/// blocked model ([`sizing::blocked_fpr_model`]), so it still honours its target.
///
/// # Examples
///
/// ```
/// use bloomkit_classic::BlockedBloomFilter;
///
/// let mut f = BlockedBloomFilter::new(1_000_000, 0.01)?;
/// assert!(f.insert("key"));
/// assert!(f.contains("key"));
/// assert!(f.fpr_at(1_000_000) <= 0.01);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
///
/// The key type is part of the filter's type (see [`BloomFilter`](crate::BloomFilter)):
///
/// ```compile_fail
/// use bloomkit_classic::BlockedBloomFilter;
///
/// let mut f = BlockedBloomFilter::new(1_000, 0.01).unwrap();
/// f.insert(&1u64);
/// f.contains(&1i32); // does not compile
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct BlockedBloomFilter<K: ?Sized, S = Xxh3Builder> {
    pub(crate) blocks: Vec<Block>,
    pub(crate) hashes: u32,
    pub(crate) design: Option<Design>,
    pub(crate) hasher: S,
    pub(crate) ones: u64,
    pub(crate) key: PhantomData<fn(&K)>,
}

impl<K: ?Sized, S: BuildHasher> FromSettings for BlockedBloomFilter<K, S> {
    type Hasher = S;

    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        let design = settings.design()?;
        let plan = sizing::blocked_plan(settings.items, settings.fpr)?;
        settings.check_bytes(plan.bits.saturating_mul(BLOCK_BITS / 8))?;
        let mut filter = Self::with_blocks_and_hasher(plan.bits, plan.hashes, hasher)?;
        filter.design = Some(design);
        Ok(filter)
    }
}

bloomkit_core::impl_builder_entry!(BlockedBloomFilter, "bloomkit_classic", hasher);

impl<K: ?Sized> BlockedBloomFilter<K> {
    /// A filter of exactly `blocks` blocks of 512 bits and `hashes` probes per key.
    ///
    /// # Errors
    /// [`Error::ZeroBits`], [`Error::InvalidHashCount`], [`Error::TooLarge`],
    /// [`Error::AllocationFailed`].
    pub fn with_blocks(blocks: u64, hashes: u32) -> Result<Self, Error> {
        Self::with_blocks_and_hasher(blocks, hashes, Xxh3Builder::default())
    }
}

/// Swamidass & Baldi's estimate of the keys in a blocked filter, block by block from each
/// block's count of set bits, summed; infinite once a block is full.
pub(crate) fn len_from_fill(block_ones: impl Iterator<Item = u32>, k: u32) -> f64 {
    let k = f64::from(k);
    let per_bit = BLOCK_BITS as f64;
    block_ones
        .map(|x| -(per_bit / k) * (-f64::from(x) / per_bit).ln_1p())
        .sum()
}

/// A blocked filter's false-positive rate from each block's count of set bits: the average
/// over blocks of `(X_b / 512)^k`.
pub(crate) fn fpr_from_fill(block_ones: impl Iterator<Item = u32>, k: u32) -> f64 {
    let (mut sum, mut blocks) = (0.0, 0u64);
    for x in block_ones {
        sum += (f64::from(x) / BLOCK_BITS as f64).powi(k as i32);
        blocks += 1;
    }
    sum / blocks as f64
}

/// `blocks` zeroed blocks, or the reason they cannot be had.
pub(crate) fn zeroed_blocks(blocks: u64) -> Result<Vec<Block>, Error> {
    if blocks == 0 {
        return Err(Error::ZeroBits);
    }
    let max = bloomkit_core::bits::MAX_BITS / BLOCK_BITS;
    if blocks > max {
        return Err(Error::TooLarge {
            what: bloomkit_core::Unit::Bits,
            size: blocks as f64 * BLOCK_BITS as f64,
            max: max * BLOCK_BITS,
        });
    }
    bloomkit_core::bits::filled_vec(blocks, Block::default)
}

impl<K: ?Sized, S: BuildHasher> BlockedBloomFilter<K, S> {
    /// `blocks` blocks and `hashes` probes, hashing with `hasher`.
    ///
    /// # Errors
    /// As [`BlockedBloomFilter::with_blocks`].
    pub fn with_blocks_and_hasher(blocks: u64, hashes: u32, hasher: S) -> Result<Self, Error> {
        let hashes = check_hashes(u64::from(hashes))?;
        Ok(BlockedBloomFilter {
            blocks: zeroed_blocks(blocks)?,
            hashes,
            design: None,
            hasher,
            ones: 0,
            key: PhantomData,
        })
    }

    /// An empty filter of exactly `blocks` blocks, `hashes` probes per key, hashing with
    /// `hasher`, sized for `design` (what [`design`](Self::design) reports): the shape of a
    /// filter whose bits arrive later, through [`or_words`](Self::or_words).
    ///
    /// # Errors
    /// As [`with_blocks`](Self::with_blocks), and the errors of [`Design::new`].
    pub fn empty(
        blocks: u64,
        hashes: u32,
        hasher: S,
        design: Option<Design>,
    ) -> Result<Self, Error> {
        Self::from_blocks(zeroed_blocks(blocks)?, hashes, hasher, design)
    }

    /// ORs `words` into the filter's words from word `at` on (eight words a block, in the
    /// order [`words`](Self::words) lists them): a union with part of a filter of the same
    /// shape, for loading one piece at a time (a filter streamed from a network or a file)
    /// without a second copy of the whole.
    ///
    /// # Errors
    /// [`Error::WordCount`] when the words run past the filter's end; `self` is then
    /// unchanged.
    pub fn or_words(&mut self, at: usize, words: &[u64]) -> Result<(), Error> {
        let all = bytemuck::cast_slice_mut::<Block, u64>(&mut self.blocks);
        let end = at
            .checked_add(words.len())
            .filter(|&end| end <= all.len())
            .ok_or(Error::WordCount {
                bits: all.len() as u64 * 64,
                expected: all.len() as u64,
                found: (at as u64).saturating_add(words.len() as u64),
            })?;
        for (w, &o) in all[at..end].iter_mut().zip(words) {
            let before = w.count_ones();
            *w |= o;
            self.ones += u64::from(w.count_ones() - before);
        }
        Ok(())
    }

    /// A filter over existing blocks given as words (eight per block, as
    /// [`to_words`](Self::to_words) returns them), with `hashes` probes and `hasher`.
    ///
    /// # Errors
    /// [`Error::ZeroBits`] for no words, [`Error::PartialBlock`] when the count is not a multiple
    /// of eight, [`Error::InvalidHashCount`], and the errors of [`Design::new`].
    pub fn from_words(
        words: &[u64],
        hashes: u32,
        hasher: S,
        design: Option<Design>,
    ) -> Result<Self, Error> {
        Self::from_blocks(blocks_from_words(words)?, hashes, hasher, design)
    }

    /// A filter over `blocks` (taken, not copied), checked as [`from_words`](Self::from_words)
    /// checks its input.
    pub(crate) fn from_blocks(
        blocks: Vec<Block>,
        hashes: u32,
        hasher: S,
        design: Option<Design>,
    ) -> Result<Self, Error> {
        if blocks.is_empty() {
            return Err(Error::ZeroBits);
        }
        let design = match design {
            Some(d) => Some(Design::new(d.capacity, d.fpr)?),
            None => None,
        };
        let ones = count_ones(&blocks);
        Ok(BlockedBloomFilter {
            blocks,
            hashes: check_hashes(u64::from(hashes))?,
            design,
            hasher,
            ones,
            key: PhantomData,
        })
    }

    /// The blocks as words, eight per block (a copy; [`words`](Self::words) borrows them).
    pub fn to_words(&self) -> Vec<u64> {
        self.words().to_vec()
    }

    /// The blocks as words, eight per block, borrowed: block `b` is words `8b .. 8b + 8`.
    pub fn words(&self) -> &[u64] {
        bytemuck::cast_slice(&self.blocks)
    }

    #[inline]
    fn probe(&self, hash: u64) -> BlockProbe {
        BlockProbe::new(hash, self.blocks.len() as u64, self.hashes)
    }

    /// [`insert`](Self::insert) by hash.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let block = reduce(hash, self.blocks.len() as u64) as usize;
        self.insert_at((hash, block))
    }

    /// Sets the key's bits in `block`, the block its hash maps to (as
    /// [`locate`](Self::locate) returns them).
    #[inline]
    fn insert_at(&mut self, (hash, block): (u64, usize)) -> bool {
        debug_assert_eq!(self.probe(hash).block as usize, block);
        let block = &mut self.blocks[block].0;
        // Bit by bit, counting the ones that were clear: no mask to build and no popcount
        // (which the baseline x86-64 target does in software, eight times per insert).
        // Coinciding positions are counted once: the second finds its bit set. The count
        // comes from the bit itself, not from a bool cast to an integer, which
        // rust-lang/rust#158206 miscompiles in release builds (see `BitArray::set`).
        let mut new_bits = 0u64;
        for p in block_positions(hash, self.hashes) {
            let (word, shift) = (&mut block[(p >> 6) as usize], p & 63);
            new_bits += !(*word >> shift) & 1;
            *word |= 1 << shift;
        }
        self.ones += new_bits;
        new_bits > 0
    }

    /// [`contains`](Self::contains) by hash: one block (one cache line), the key's k bits
    /// all tested with no branch on them, in AVX2 where the CPU has it
    /// ([`block_contains_fast`]; seven bits per round of about fifteen instructions).
    ///
    /// Measured (`examples/targets.rs`, interleaved, one at a time, u64 keys, p = 1%, ratios
    /// of median times): the AVX2 test against the scalar early exit
    /// ([`block_contains`](bloomkit_core::hash::block_contains)) 1.24x / 1.88x (members /
    /// absent) at 10^6 keys, 1.68x / 2.96x at 10^7, 1.40x / 1.71x at 10^8 (124 MB, DRAM);
    /// against the scalar branch-free test 1.35x / 1.33x, 1.86x / 1.86x and 1.57x / 1.56x.
    /// With no branch to mispredict, consecutive lookups overlap their misses, and the fewer
    /// instructions a lookup takes, the more of them the CPU keeps in flight.
    #[inline(always)]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.lookup().contains_hash(hash)
    }

    /// The key's hash and its block index, with the block's cache line requested.
    #[inline]
    fn locate(&self, hash: u64) -> (u64, usize) {
        self.lookup().locate(hash)
    }

    /// The 512-bit block the key whose hash is `hash` maps to, as eight words.
    #[inline(always)]
    pub fn block_of(&self, hash: u64) -> &[u64; 8] {
        self.lookup().block_of(hash)
    }

    #[inline(always)]
    fn lookup(&self) -> BlockLookup<'_> {
        BlockLookup {
            blocks: bytemuck::cast_slice(&self.blocks),
            hashes: self.hashes,
        }
    }

    fn block_ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks
            .iter()
            .map(|b| b.0.iter().map(|w| w.count_ones()).sum())
    }

    /// An estimate of the number of distinct keys inserted: Swamidass & Baldi's estimator
    /// applied block by block and summed; infinite once a block is full.
    pub fn estimated_len(&self) -> f64 {
        len_from_fill(self.block_ones(), self.hashes)
    }

    /// The false-positive rate now: the average over blocks of `(X_b / 512)^k`, which is
    /// exact for this filter's fill (a non-member lands in a uniformly random block).
    pub fn estimated_fpr(&self) -> f64 {
        fpr_from_fill(self.block_ones(), self.hashes)
    }

    /// The false-positive rate the blocked model predicts after `items` distinct insertions.
    pub fn fpr_at(&self, items: u64) -> f64 {
        sizing::blocked_fpr_model(items, self.num_blocks(), self.hashes).unwrap_or(1.0)
    }

    fn combine(&mut self, other: &Self, op: fn(u64, u64) -> u64) {
        self.ones = combine_words(
            bytemuck::cast_slice_mut(&mut self.blocks),
            bytemuck::cast_slice(&other.blocks),
            op,
            u64::count_ones,
        );
    }
}

bloomkit_core::impl_shape_accessors!([S] BlockedBloomFilter<K, S>, key = K);

bloomkit_core::impl_key_methods!(
    [S: BuildHasher] BlockedBloomFilter<K, S>, key = K,
    doc = ("bloomkit_classic", BlockedBloomFilter),
    insert = exclusive Self::insert_at, contains_batch = lookup
);

impl<K: ?Sized, S: PortableHasher> BlockedBloomFilter<K, S> {
    /// Checks that `other` has the same blocks, probes, hasher and seed.
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first parameter that differs.
    pub fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        check_same_shape(
            (Parameter::Blocks, self.num_blocks(), other.num_blocks()),
            (self.hashes, other.hashes),
            (self.hasher.spec(), other.hasher.spec()),
        )
    }
}

impl<K: ?Sized, S: Clone> EmptyLike for BlockedBloomFilter<K, S> {
    fn empty_like(&self) -> Result<Self, Error> {
        Ok(BlockedBloomFilter {
            blocks: zeroed_blocks(self.blocks.len() as u64)?,
            hashes: self.hashes,
            design: self.design,
            hasher: self.hasher.clone(),
            ones: 0,
            key: PhantomData,
        })
    }
}

bitwise_set_ops!([S: PortableHasher + Clone] BlockedBloomFilter<K, S>);

filter_traits!(BlockedBloomFilter);

impl<K: ?Sized, S: fmt::Debug> fmt::Debug for BlockedBloomFilter<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockedBloomFilter")
            .field("blocks", &self.blocks.len())
            .field("hashes", &self.hashes)
            .field("ones", &self.ones)
            .field("design", &self.design)
            .field("hasher", &self.hasher)
            .finish()
    }
}
