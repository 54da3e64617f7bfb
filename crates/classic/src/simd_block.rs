//! The SIMD block filter: Parquet's split-block layout with bloomkit's shared hasher.

use core::fmt;
use core::hash::BuildHasher;
use core::marker::PhantomData;
use derive_where::derive_where;

use bloomkit_core::build::{FromSettings, Settings};
use bloomkit_core::sizing::{self, Design};
use bloomkit_core::{check_same_shape, EmptyLike, Error, Parameter, PortableHasher, Xxh3Builder};

use crate::split_block::{insert_split, zeroed, SplitBlock, SplitLookup};
use crate::{MAX_SPLIT_BLOCKS, SPLIT_BLOCK_BYTES};

/// The fastest Bloom filter of the family to build and to query one key at a time: 256-bit
/// blocks of eight 32-bit words, a key's bits one in each word (Parquet's split-block layout,
/// Boost.Bloom's `fast_multiblock32<8>`), hashed with bloomkit's shared hasher, so a string
/// key costs one XXH3 call.
///
/// A key's 64-bit hash picks its block with the upper 32 bits and its bit in each word with
/// the lower 32 bits, through eight fixed odd multipliers. A lookup reads 32 bytes and tests
/// the eight bits in one AVX2 instruction, an insert sets them in one (one key at a time,
/// the AVX2 functions are chosen once per process on a CPU that has it, SSE2 on one that
/// does not, a portable path elsewhere: all give the same answers).
///
/// Compared with [`BlockedBloomFilter`](crate::BlockedBloomFilter) (k bits anywhere in a
/// 512-bit block): builds about twice as fast and lookups of string keys a little faster, at
/// about 6% more memory for the same rate at 1% (10.5 bits per key against 9.9), and k fixed
/// at 8, so it is best at rates near 0.5% to 2%; below about 0.1% the blocked filter
/// needs markedly less memory (see `docs/performance.md` for the figures and how to reproduce
/// them). It is sized with the block-load model ([`sizing::split_block_fpr_model`]), so the
/// measured rate honours the target.
///
/// [`SplitBlockFilter`](crate::SplitBlockFilter) is the same layout with Parquet's hash
/// (XXH64 of the plain encoding), for the bytes a Parquet file stores; this one hashes as
/// the rest of bloomkit does, so any `Hash` key works and filters serialize in bloomkit's
/// byte format (variant [`SimdBlock`](bloomkit_core::Variant::SimdBlock)).
///
/// # Examples
///
/// ```
/// use bloomkit_classic::SimdBlockFilter;
///
/// let mut urls = SimdBlockFilter::<str>::new(1_000_000, 0.01)?;
/// assert!(urls.insert("https://example.com/"));
/// assert!(urls.contains("https://example.com/"));
/// assert!(urls.fpr_at(1_000_000) <= 0.01);
///
/// let bytes = urls.to_bytes();
/// assert_eq!(SimdBlockFilter::<str>::from_bytes(&bytes)?, urls);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive_where(Clone, PartialEq; S)]
pub struct SimdBlockFilter<K: ?Sized, S = Xxh3Builder> {
    pub(crate) blocks: Vec<SplitBlock>,
    pub(crate) design: Option<Design>,
    pub(crate) hasher: S,
    pub(crate) ones: u64,
    key: PhantomData<fn(&K)>,
}

impl<K: ?Sized, S: BuildHasher> FromSettings for SimdBlockFilter<K, S> {
    type Hasher = S;

    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        let design = settings.design()?;
        let blocks = sizing::split_block_blocks(settings.items, settings.fpr, MAX_SPLIT_BLOCKS)?;
        settings.check_bytes(blocks.saturating_mul(SPLIT_BLOCK_BYTES as u64))?;
        let mut filter = Self::with_blocks_and_hasher(blocks, hasher)?;
        filter.design = Some(design);
        Ok(filter)
    }
}

bloomkit_core::impl_builder_entry!(SimdBlockFilter, "bloomkit_classic", hasher);

impl<K: ?Sized> SimdBlockFilter<K> {
    /// A filter of exactly `blocks` blocks of 32 bytes, with the default hasher.
    ///
    /// # Errors
    /// [`Error::ZeroBits`], [`Error::TooLarge`] past [`MAX_SPLIT_BLOCKS`],
    /// [`Error::AllocationFailed`].
    pub fn with_blocks(blocks: u64) -> Result<Self, Error> {
        Self::with_blocks_and_hasher(blocks, Xxh3Builder::default())
    }
}

crate::blocked::block_accessors!([S] SimdBlockFilter<K, S>, block = SplitBlock, bits = 256);

impl<K: ?Sized, S> SimdBlockFilter<K, S> {
    /// `blocks` blocks of 32 bytes, hashing with `hasher`.
    ///
    /// # Errors
    /// As [`SimdBlockFilter::with_blocks`].
    pub fn with_blocks_and_hasher(blocks: u64, hasher: S) -> Result<Self, Error> {
        Ok(SimdBlockFilter {
            blocks: zeroed(blocks)?,
            design: None,
            hasher,
            ones: 0,
            key: PhantomData,
        })
    }

    /// A filter over `words` (four little-endian 64-bit words per block, as
    /// [`words`](Self::words) lists them), hashing with `hasher`, sized for `design`.
    ///
    /// # Errors
    /// [`Error::ZeroBits`] for no words, [`Error::PartialBlock`] when the count is not a
    /// multiple of four, [`Error::TooLarge`], and the errors of [`Design::new`].
    pub fn from_words(words: &[u64], hasher: S, design: Option<Design>) -> Result<Self, Error> {
        if words.len() % 4 != 0 {
            return Err(Error::PartialBlock {
                words: words.len() as u64,
            });
        }
        let mut blocks = zeroed(words.len() as u64 / 4)?;
        bytemuck::cast_slice_mut::<SplitBlock, u64>(&mut blocks).copy_from_slice(words);
        Self::from_blocks(blocks, hasher, design)
    }

    /// A filter over `blocks` (taken, not copied), checked as [`from_words`](Self::from_words)
    /// checks its input.
    pub(crate) fn from_blocks(
        blocks: Vec<SplitBlock>,
        hasher: S,
        design: Option<Design>,
    ) -> Result<Self, Error> {
        let design = crate::split_block::checked_parts(blocks.len(), design)?;
        let mut filter = SimdBlockFilter {
            blocks,
            design,
            hasher,
            ones: 0,
            key: PhantomData,
        };
        filter.ones = filter.lookup().count_ones();
        Ok(filter)
    }

    /// The blocks as 64-bit words, four per block (eight 32-bit words, two to a word, the
    /// lower first): block `b` is words `4b .. 4b + 4`.
    pub fn words(&self) -> &[u64] {
        bytemuck::cast_slice(&self.blocks)
    }

    #[inline(always)]
    pub(crate) fn lookup(&self) -> SplitLookup<'_> {
        SplitLookup {
            blocks: bytemuck::cast_slice(&self.blocks),
        }
    }

    /// [`insert`](Self::insert) by hash; `true` if one of the key's bits was clear.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let block = self.lookup().index(hash);
        self.insert_at((hash, block))
    }

    #[inline]
    fn insert_at(&mut self, (hash, block): (u64, usize)) -> bool {
        insert_split(&mut self.blocks, &mut self.ones, hash, block)
    }

    /// [`contains`](Self::contains) by hash: one 32-byte block, eight bits tested at once.
    #[inline(always)]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.lookup().contains_hash(hash)
    }

    /// The key's hash and its block index, with the block's cache line requested.
    #[inline]
    fn locate(&self, hash: u64) -> (u64, usize) {
        self.lookup().locate(hash)
    }

    /// `k`: always 8, one bit in each word of a block.
    pub fn num_hashes(&self) -> u32 {
        8
    }

    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    split_block_common!();
}

bloomkit_core::impl_key_methods!(
    [S: BuildHasher] SimdBlockFilter<K, S>, key = K,
    doc = ("bloomkit_classic", SimdBlockFilter),
    insert = exclusive Self::insert_at, contains_batch = lookup
);

impl<K: ?Sized, S: PortableHasher> SimdBlockFilter<K, S> {
    /// Checks that `other` has the same blocks, hasher and seed.
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first parameter that differs.
    pub fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        check_same_shape(
            (Parameter::Blocks, self.num_blocks(), other.num_blocks()),
            (8, 8),
            (self.hasher.spec(), other.hasher.spec()),
        )
    }
}

impl<K: ?Sized, S: Clone> EmptyLike for SimdBlockFilter<K, S> {
    fn empty_like(&self) -> Result<Self, Error> {
        let mut empty = Self::with_blocks_and_hasher(self.num_blocks(), self.hasher.clone())?;
        empty.design = self.design;
        Ok(empty)
    }
}

crate::blocked::bitwise_set_ops!([S: PortableHasher + Clone] SimdBlockFilter<K, S>);

filter_traits!(SimdBlockFilter);

impl<K: ?Sized, S: fmt::Debug> fmt::Debug for SimdBlockFilter<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimdBlockFilter")
            .field("blocks", &self.blocks.len())
            .field("ones", &self.ones)
            .field("design", &self.design)
            .field("hasher", &self.hasher)
            .finish()
    }
}
