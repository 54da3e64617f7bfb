//! Parquet's split-block Bloom filter, byte for byte.

use core::borrow::Borrow;
use core::convert::Infallible;
use core::fmt;
use core::marker::PhantomData;
use derive_where::derive_where;

use bloomkit_core::batch::{insert_counting, pipeline_groups, prefetch};
use bloomkit_core::build::{FromSettings, Settings};
use bloomkit_core::hash::{
    split_block_contains, split_block_contains_inlined, split_block_insert, xxh64,
};
use bloomkit_core::sizing::{self, Design};
use bloomkit_core::{DecodeError, Error, Filter, FilterCore, Lookup, LookupCore, Parameter};

use crate::blocked::test_group;
use crate::thrift;

/// Bytes in one block: eight 32-bit words.
pub const SPLIT_BLOCK_BYTES: usize = 32;

/// The most blocks a split-block filter holds: Parquet writes a filter's size as an `i32`
/// count of bytes, so every filter stays writable (2 GiB, about 1.6 * 10^9 keys at 1%).
pub const MAX_SPLIT_BLOCKS: u64 = i32::MAX as u64 / SPLIT_BLOCK_BYTES as u64;

/// A value as Parquet hashes it into a Bloom filter: XXH64 with seed 0 of its PLAIN
/// encoding (the spec's "Bloom filter hash"). Integers are their physical type's
/// little-endian bytes (`INT32` for `i8`..`i32` and `u8`..`u32`, widened as Parquet writes
/// them; `INT64` for `i64`, `u64`), floats their IEEE 754 little-endian bytes, byte arrays
/// and strings their bytes without a length prefix.
///
/// Implement it for a type of your own by handing [`ParquetValue::with_plain`] the bytes
/// Parquet would hash (for example a `FIXED_LEN_BYTE_ARRAY`'s bytes, or a decimal's).
///
/// # Examples
///
/// ```
/// use bloomkit_classic::ParquetValue;
///
/// // The spec's test vector: XXH64 of the empty byte array.
/// assert_eq!("".parquet_hash(), 17241709254077376921);
/// assert_eq!(7i32.parquet_hash(), 7u32.parquet_hash()); // both INT32
/// assert_eq!((-1i8).parquet_hash(), (-1i32).parquet_hash()); // sign-extended
/// ```
pub trait ParquetValue {
    /// Calls `f` with the value's PLAIN-encoded bytes.
    fn with_plain<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;

    /// The value's hash for a Parquet Bloom filter: XXH64, seed 0, of its plain bytes.
    #[inline]
    fn parquet_hash(&self) -> u64 {
        self.with_plain(|bytes| xxh64(0, bytes))
    }
}

macro_rules! parquet_int {
    ($($t:ty => $physical:ty),* $(,)?) => {$(
        impl ParquetValue for $t {
            #[inline]
            fn with_plain<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                f(&<$physical>::from(*self).to_le_bytes())
            }
        }
    )*};
}

parquet_int!(i8 => i32, i16 => i32, i32 => i32, u8 => u32, u16 => u32, u32 => u32,
             i64 => i64, u64 => u64, f32 => f32, f64 => f64);

impl ParquetValue for [u8] {
    #[inline]
    fn with_plain<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl<const N: usize> ParquetValue for [u8; N] {
    #[inline]
    fn with_plain<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl ParquetValue for Vec<u8> {
    #[inline]
    fn with_plain<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl ParquetValue for str {
    #[inline]
    fn with_plain<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl ParquetValue for String {
    #[inline]
    fn with_plain<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl<T: ParquetValue + ?Sized> ParquetValue for &T {
    #[inline]
    fn with_plain<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        (**self).with_plain(f)
    }
}

/// One block: eight 32-bit words, aligned so that no block straddles two cache lines.
#[derive(Clone, Copy, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(32))]
pub(crate) struct SplitBlock(pub(crate) [u32; 8]);

/// The lookups every filter of split blocks shares ([`SplitBlockFilter`],
/// [`SimdBlockFilter`](crate::SimdBlockFilter) and its zero-copy view): one code path, so
/// each answers as fast as the others. The blocks are seen as four 64-bit words each (eight
/// 32-bit words in memory order), which a view's 8-aligned bytes can lend.
#[derive(Clone, Copy)]
pub(crate) struct SplitLookup<'a> {
    pub(crate) blocks: &'a [[u64; 4]],
}

impl<'a> SplitLookup<'a> {
    /// The block of a key whose hash is `hash`: the upper 32 bits scaled to the block count.
    #[inline(always)]
    pub(crate) fn index(self, hash: u64) -> usize {
        (((hash >> 32) * self.blocks.len() as u64) >> 32) as usize
    }

    /// Block `i` as its eight 32-bit words.
    #[inline(always)]
    fn block(self, i: usize) -> &'a [u32; 8] {
        bytemuck::cast_ref(&self.blocks[i])
    }

    /// Whether the key whose hash is `hash` may be in the filter: its low 32 bits pick one
    /// bit in each word of its block.
    #[inline(always)]
    pub(crate) fn contains_hash(self, hash: u64) -> bool {
        split_block_contains(self.block(self.index(hash)), hash as u32)
    }

    /// The key's hash and block index, with the block's cache line requested.
    #[inline]
    pub(crate) fn locate(self, hash: u64) -> (u64, usize) {
        let block = self.index(hash);
        prefetch(&self.blocks[block]);
        (hash, block)
    }

    /// `contains_batch` with the blocks of a group of keys requested first, each key hashed
    /// by `hash`.
    pub(crate) fn contains_batch_by<K: ?Sized, I>(
        self,
        keys: I,
        out: &mut Vec<bool>,
        hash: impl Fn(&K) -> u64,
    ) where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        pipeline_groups(
            out,
            keys,
            |_, key| self.locate(hash(key.borrow())),
            |out, group| {
                test_group(
                    out,
                    group,
                    #[inline(always)]
                    |hash, block| split_block_contains_inlined(self.block(block), hash as u32),
                );
            },
        );
    }

    /// [`contains_batch_by`](Self::contains_batch_by) with `hasher`.
    pub(crate) fn contains_batch<K, S, I>(self, hasher: &S, keys: I, out: &mut Vec<bool>)
    where
        K: core::hash::Hash + ?Sized,
        S: core::hash::BuildHasher,
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        self.contains_batch_by(keys, out, |key: &K| hasher.hash_one(key));
    }

    /// The set bits, counted.
    pub(crate) fn count_ones(self) -> u64 {
        bytemuck::cast_slice::<[u64; 4], u64>(self.blocks)
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// The distinct keys inserted, estimated block by block from the fill (a block holding
    /// `x` set bits took about `ln(1 - x/256) / ln(31/32)` keys); infinite once one is full.
    pub(crate) fn estimated_len(self) -> f64 {
        let per_key = (31.0f64 / 32.0).ln();
        self.blocks
            .iter()
            .map(|b| {
                let x: u32 = b.iter().map(|w| w.count_ones()).sum();
                (-f64::from(x) / 256.0).ln_1p() / per_key
            })
            .sum()
    }

    /// The rate now, from the bits: the average over blocks of the product over words of
    /// each word's share of set bits.
    pub(crate) fn estimated_fpr(self) -> f64 {
        let total: f64 = self
            .blocks
            .iter()
            .map(|b| {
                bytemuck::cast_ref::<[u64; 4], [u32; 8]>(b)
                    .iter()
                    .map(|w| f64::from(w.count_ones()) / 32.0)
                    .product::<f64>()
            })
            .sum();
        total / self.blocks.len() as f64
    }
}

/// Sets the bits of the key whose hash is `hash` in `blocks[block]`, adding the bits that
/// were clear to `ones`; whether there was one (the key was certainly new).
#[inline]
pub(crate) fn insert_split(
    blocks: &mut [SplitBlock],
    ones: &mut u64,
    hash: u64,
    block: usize,
) -> bool {
    let added = split_block_insert(&mut blocks[block].0, hash as u32);
    *ones += u64::from(added);
    added != 0
}

/// Parquet's split-block Bloom filter (Putze, Sanders & Singler's blocked filter as Apache
/// Impala, Kudu and then the Parquet spec fixed it): 256-bit blocks of eight 32-bit words; a
/// value's hash (XXH64, seed 0, of its plain encoding: [`ParquetValue`]) picks a block with
/// its upper 32 bits and one bit in each of the eight words with its lower 32 bits, through
/// eight fixed odd multipliers. A lookup reads 32 bytes and tests eight bits at once (AVX2
/// where the CPU has it, chosen once per process; SSE2 or a portable test elsewhere).
///
/// Its bytes are the bitset every Parquet reader and writer exchanges (parquet-rs,
/// parquet-java, DataFusion, Spark, Impala): [`to_parquet_bytes`](Self::to_parquet_bytes)
/// writes the header and bitset a Parquet file stores for a column chunk, and
/// [`from_parquet_bytes`](Self::from_parquet_bytes) reads one.
///
/// Unlike Parquet's own sizing formula (the classic one, which leaves out the spread of
/// block loads: 9.7 bits per key at 1%, short of what the rate needs), [`new`](Self::new)
/// sizes with the block-load model ([`sizing::split_block_fpr_model`]), so the measured rate
/// honours the target: about 10.5 bits per key at 1%. Any number of blocks is allowed
/// (Parquet readers take any whole number of blocks);
/// [`with_parquet_sizing`](Self::with_parquet_sizing) gives the power-of-two size parquet-rs
/// would pick.
///
/// # Examples
///
/// ```
/// use bloomkit_classic::SplitBlockFilter;
///
/// let mut ids: SplitBlockFilter<i64> = SplitBlockFilter::new(100_000, 0.01)?;
/// ids.insert(&42);
/// assert!(ids.contains(&42));
///
/// // The bytes a Parquet file stores for the column chunk: header, then bitset.
/// let bytes = ids.to_parquet_bytes();
/// let back = SplitBlockFilter::<i64>::from_parquet_bytes(&bytes)?;
/// assert!(back.contains(&42));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive_where(Clone, PartialEq)]
pub struct SplitBlockFilter<K: ?Sized> {
    blocks: Vec<SplitBlock>,
    design: Option<Design>,
    ones: u64,
    key: PhantomData<fn(&K)>,
}

impl<K: ?Sized> fmt::Debug for SplitBlockFilter<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SplitBlockFilter")
            .field("blocks", &self.blocks.len())
            .field("ones", &self.ones)
            .field("design", &self.design)
            .finish()
    }
}

/// `blocks` zeroed split blocks, or the reason they cannot be had.
pub(crate) fn zeroed(blocks: u64) -> Result<Vec<SplitBlock>, Error> {
    if blocks == 0 {
        return Err(Error::ZeroBits);
    }
    if blocks > MAX_SPLIT_BLOCKS {
        return Err(Error::TooLarge {
            what: bloomkit_core::Unit::Bits,
            size: blocks as f64 * 256.0,
            max: MAX_SPLIT_BLOCKS * 256,
        });
    }
    bloomkit_core::bits::filled_vec(blocks, SplitBlock::default)
}

/// Checks decoded parts of a filter of split blocks (a count of blocks a constructor could
/// have made, a design it could have had); the design, re-checked.
pub(crate) fn checked_parts(
    blocks: usize,
    design: Option<Design>,
) -> Result<Option<Design>, Error> {
    if blocks == 0 {
        return Err(Error::ZeroBits);
    }
    if blocks as u64 > MAX_SPLIT_BLOCKS {
        return Err(Error::TooLarge {
            what: bloomkit_core::Unit::Bits,
            size: blocks as f64 * 256.0,
            max: MAX_SPLIT_BLOCKS * 256,
        });
    }
    design.map(|d| Design::new(d.capacity, d.fpr)).transpose()
}

/// The split-block filter hashes with Parquet's XXH64, seed 0: no hasher to choose (`()`).
impl<K: ?Sized> FromSettings for SplitBlockFilter<K> {
    type Hasher = ();

    fn from_settings(settings: &Settings, (): ()) -> Result<Self, Error> {
        let design = settings.design()?;
        let blocks = sizing::split_block_blocks(settings.items, settings.fpr, MAX_SPLIT_BLOCKS)?;
        settings.check_bytes(blocks.saturating_mul(SPLIT_BLOCK_BYTES as u64))?;
        let mut filter = Self::with_blocks(blocks)?;
        filter.design = Some(design);
        Ok(filter)
    }
}

bloomkit_core::impl_builder_entry!(SplitBlockFilter, "bloomkit_classic");

impl<K: ?Sized> SplitBlockFilter<K> {
    /// A filter of exactly `blocks` blocks of 32 bytes.
    ///
    /// # Errors
    /// [`Error::ZeroBits`], [`Error::TooLarge`], [`Error::AllocationFailed`].
    pub fn with_blocks(blocks: u64) -> Result<Self, Error> {
        Ok(SplitBlockFilter {
            blocks: zeroed(blocks)?,
            design: None,
            ones: 0,
            key: PhantomData,
        })
    }

    /// A filter over decoded blocks, checked as [`with_blocks`](Self::with_blocks) checks
    /// a size (the byte format's decoder).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn from_blocks(
        blocks: Vec<SplitBlock>,
        design: Option<Design>,
    ) -> Result<Self, Error> {
        let design = checked_parts(blocks.len(), design)?;
        let mut filter = SplitBlockFilter {
            blocks,
            design,
            ones: 0,
            key: PhantomData,
        };
        filter.ones = filter.count_ones_slow();
        Ok(filter)
    }

    /// The filter parquet-rs would make for `ndv` distinct values at `fpp`
    /// (`Sbbf::new_with_ndv_fpp`): Parquet's formula `-8 ndv / ln(1 - fpp^(1/8))` bits, in
    /// bytes rounded up to a power of two between 32 bytes and 128 MiB. Its rate is what
    /// [`fpr_at`](Self::fpr_at) says, not necessarily `fpp`; use [`new`](Self::new) for a
    /// rate that holds.
    ///
    /// # Errors
    /// [`Error::ZeroItems`], [`Error::InvalidFpr`], [`Error::AllocationFailed`].
    pub fn with_parquet_sizing(ndv: u64, fpp: f64) -> Result<Self, Error> {
        let design = Design::new(ndv, fpp)?;
        let bits = -8.0 * ndv as f64 / (1.0 - fpp.powf(1.0 / 8.0)).ln();
        let bytes = ((bits as u64) / 8).clamp(32, 128 << 20).next_power_of_two();
        let mut filter = Self::with_blocks(bytes / SPLIT_BLOCK_BYTES as u64)?;
        filter.design = Some(design);
        Ok(filter)
    }

    /// Reads the bytes a Parquet file stores for a column chunk's Bloom filter: the Thrift
    /// `BloomFilterHeader`, then the bitset, and nothing after it.
    ///
    /// # Errors
    /// [`DecodeError::NotSplitBlock`] for a header that does not parse or names another
    /// algorithm, hash or compression; [`DecodeError::Truncated`];
    /// [`DecodeError::TrailingBytes`].
    pub fn from_parquet_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (len, header) = thrift::read_header(bytes)?;
        let available = (bytes.len() - header) as u64;
        if available < len {
            return Err(DecodeError::Truncated {
                needed: header as u64 + len,
                available: bytes.len() as u64,
            });
        }
        if available > len {
            return Err(DecodeError::TrailingBytes(available - len));
        }
        Self::from_bitset(&bytes[header..])
    }

    /// The length of Parquet's filter bytes (the Thrift header and the bitset) whose first
    /// bytes are `start`, as the header declares it: how a tool reads such bytes from a pipe
    /// up to their end and no further. Nothing past the header is read or checked.
    ///
    /// # Errors
    /// As [`from_parquet_bytes`](Self::from_parquet_bytes) for the header: `start` must hold
    /// all of it.
    ///
    /// # Examples
    /// ```
    /// use bloomkit_classic::SplitBlockFilter;
    ///
    /// let bytes = SplitBlockFilter::<u64>::new(1_000, 0.01)?.to_parquet_bytes();
    /// assert_eq!(SplitBlockFilter::<u64>::parquet_len(&bytes[..32])?, bytes.len() as u64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parquet_len(start: &[u8]) -> Result<u64, DecodeError> {
        let (len, header) = thrift::read_header(start)?;
        Ok(header as u64 + len)
    }

    /// A filter over a bitset alone (the bytes after the header): whole 32-byte blocks of
    /// eight little-endian 32-bit words.
    ///
    /// # Errors
    /// [`DecodeError::NotSplitBlock`] for an empty bitset or one that is not whole blocks;
    /// [`DecodeError::Parameter`] past [`MAX_SPLIT_BLOCKS`] or when the memory is refused.
    pub fn from_bitset(bitset: &[u8]) -> Result<Self, DecodeError> {
        if bitset.is_empty() || bitset.len() % SPLIT_BLOCK_BYTES != 0 {
            return Err(DecodeError::NotSplitBlock(format!(
                "a bitset of {} bytes is not a positive number of 32-byte blocks",
                bitset.len()
            )));
        }
        let mut filter = Self::with_blocks((bitset.len() / SPLIT_BLOCK_BYTES) as u64)
            .map_err(|e| DecodeError::Parameter(Box::new(e)))?;
        let words = bytemuck::cast_slice_mut::<SplitBlock, u32>(&mut filter.blocks);
        for (word, bytes) in words.iter_mut().zip(bitset.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        filter.ones = filter.count_ones_slow();
        Ok(filter)
    }

    /// The header and bitset a Parquet file stores for this filter (what parquet-rs's
    /// `Sbbf::write` writes and `Sbbf::from_bytes` reads).
    pub fn to_parquet_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.blocks.len() * SPLIT_BLOCK_BYTES);
        // At most MAX_SPLIT_BLOCKS blocks: the size fits an i32.
        thrift::write_header((self.blocks.len() * SPLIT_BLOCK_BYTES) as i32, &mut out);
        self.write_bitset(&mut out);
        out
    }

    /// The bitset alone: eight little-endian 32-bit words per block.
    pub fn to_bitset(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.blocks.len() * SPLIT_BLOCK_BYTES);
        self.write_bitset(&mut out);
        out
    }

    fn write_bitset(&self, out: &mut Vec<u8>) {
        for word in self.words() {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }

    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn blocks(&self) -> &[SplitBlock] {
        &self.blocks
    }

    /// The words, eight per block, in memory order.
    pub fn words(&self) -> &[u32] {
        bytemuck::cast_slice(&self.blocks)
    }

    fn count_ones_slow(&self) -> u64 {
        self.lookup().count_ones()
    }

    #[inline(always)]
    fn lookup(&self) -> SplitLookup<'_> {
        SplitLookup {
            blocks: bytemuck::cast_slice(&self.blocks),
        }
    }

    /// Inserts the key whose [`ParquetValue::parquet_hash`] is `hash`; `true` if one of its
    /// bits was clear (the key was certainly new).
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let block = self.lookup().index(hash);
        self.insert_at(hash, block)
    }

    #[inline]
    fn insert_at(&mut self, hash: u64, block: usize) -> bool {
        insert_split(&mut self.blocks, &mut self.ones, hash, block)
    }

    /// Whether the key whose [`ParquetValue::parquet_hash`] is `hash` may be in the filter.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.lookup().contains_hash(hash)
    }

    /// The key's block index, with its cache line requested.
    #[inline]
    fn locate(&self, hash: u64) -> (u64, usize) {
        self.lookup().locate(hash)
    }

    split_block_common!();

    /// Checks that `other` has the same number of blocks (all split-block filters hash alike).
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the block counts.
    pub fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        if self.blocks.len() != other.blocks.len() {
            return Err(Error::Incompatible {
                what: Parameter::Blocks,
                left: self.num_blocks(),
                right: other.num_blocks(),
            });
        }
        Ok(())
    }
}

crate::blocked::block_accessors!([] SplitBlockFilter<K>, block = SplitBlock, bits = 256);

impl<K: ParquetValue + ?Sized> SplitBlockFilter<K> {
    /// The key's hash: XXH64, seed 0, of its plain encoding.
    #[inline]
    pub fn hash_key(&self, key: &K) -> u64 {
        key.parquet_hash()
    }

    /// Inserts `key`; `true` if it was certainly new.
    #[inline]
    pub fn insert(&mut self, key: &K) -> bool {
        self.insert_hash(key.parquet_hash())
    }

    /// Whether `key` may be in the filter (never `false` for an inserted key).
    ///
    /// For many keys, [`contains_batch`](Self::contains_batch) answers the same several times
    /// faster once the filter is out of cache (its blocks are requested a group at a time).
    #[inline]
    pub fn contains(&self, key: &K) -> bool {
        self.contains_hash(key.parquet_hash())
    }

    /// Looks up every key of `keys`, appending one answer per key to `out`, with the blocks
    /// of a group of keys requested before any is tested (see [`bloomkit_core::batch`]).
    pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        self.lookup()
            .contains_batch_by(keys, out, |key: &K| key.parquet_hash());
    }

    /// Inserts every key of `keys`; returns how many were certainly new.
    pub fn insert_batch<I>(&mut self, keys: I) -> usize
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        insert_counting(
            self,
            keys,
            |f, key| f.locate(key.borrow().parquet_hash()),
            |f, (hash, block)| f.insert_at(hash, block),
        )
    }
}

crate::blocked::bitwise_set_ops!([] SplitBlockFilter<K>);

impl<K: ParquetValue + ?Sized> LookupCore for SplitBlockFilter<K> {
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        SplitBlockFilter::contains_hash(self, hash)
    }
    fn estimated_len(&self) -> f64 {
        SplitBlockFilter::estimated_len(self)
    }
    fn heap_bytes(&self) -> usize {
        SplitBlockFilter::heap_bytes(self)
    }
    fn target_fpr(&self) -> Option<f64> {
        self.design.map(|d| d.fpr)
    }
    fn estimated_fpr(&self) -> f64 {
        SplitBlockFilter::estimated_fpr(self)
    }
}

impl<K: ParquetValue + ?Sized> FilterCore for SplitBlockFilter<K> {
    type InsertError = Infallible;
    #[inline]
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Infallible> {
        Ok(self.insert_hash(hash))
    }
    fn clear(&mut self) {
        SplitBlockFilter::clear(self);
    }
}

impl<K: ParquetValue + ?Sized> Lookup for SplitBlockFilter<K> {
    type Key = K;

    #[inline]
    fn hash_key(&self, key: &K) -> u64 {
        key.parquet_hash()
    }
    fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        SplitBlockFilter::contains_batch(self, keys, out);
    }
}

impl<K: ParquetValue + ?Sized> Filter for SplitBlockFilter<K> {
    fn insert_batch<I>(&mut self, keys: I) -> usize
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        SplitBlockFilter::insert_batch(self, keys)
    }
    fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Infallible>
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        Ok(SplitBlockFilter::insert_batch(self, keys))
    }
}

impl<K: ParquetValue + ?Sized, T: Borrow<K>> Extend<T> for SplitBlockFilter<K> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, keys: I) {
        self.insert_batch(keys);
    }
}
