//! Zero-copy, read-only views of serialized classic and blocked filters: the header,
//! parameters and (by default) checksums are checked, and the bit array is used where it
//! lies, for example in a memory-mapped file.

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;

use bloomkit_core::bits::BitSlice;
use bloomkit_core::format::{Reader, Verify};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::{self, check_hashes, Design};
use bloomkit_core::{DecodeError, Error, PortableHasher, Variant, Xxh3Builder};

use crate::blocked::BlockLookup;
use crate::codec::{BlockedParams, Params, SimdBlockParams};
use crate::split_block::SplitLookup;
use crate::{BlockedBloomFilter, BloomFilter, Lookup, SimdBlockFilter, SplitBlockFilter};

/// The parameters both views read, checked as the owned filters check them.
fn checked_design(design: Option<Design>) -> Result<Option<Design>, Error> {
    design.map(|d| Design::new(d.capacity, d.fpr)).transpose()
}

/// What both views say alike: the constructors with the default hasher, the key-taking
/// lookups, and the design and hasher getters. (`$owned` names the filter in the docs.)
macro_rules! view_common {
    ($(
        $(#[$doc:meta])*
        $view:ident($lookup:ident) of $owned:ident, $variant:ident, $params:ident,
        debug: [$($field:literal => $getter:ident),*];
    )*) => {$(
        $(#[$doc])*
        pub struct $view<'a, K: ?Sized, S = Xxh3Builder> {
            lookup: $lookup<'a>,
            design: Option<Design>,
            hasher: S,
            key: PhantomData<fn(&K)>,
        }

        bloomkit_core::impl_lookup!(['a, S: BuildHasher] $view<'a, K, S>, key = K);

        impl<K: ?Sized, S: fmt::Debug> fmt::Debug for $view<'_, K, S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($view))
                    $(.field($field, &self.$getter()))*
                    .field("design", &self.design)
                    .field("hasher", &self.hasher)
                    .finish()
            }
        }

        impl<'a, K: ?Sized, S: PortableHasher> $view<'a, K, S> {
            /// A view of `bytes` written with hasher `S`, checked as `verify` says.
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes).
            pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
                let mut reader = Reader::open(bytes, Variant::$variant, verify)?;
                let hasher = reader.hasher::<S>()?;
                let params: $params = reader.params()?;
                Self::read(reader, hasher, params)
            }
        }

        impl<'a, K: ?Sized> $view<'a, K> {
            /// A view of `bytes`, every byte checked (both checksums: reads the whole input
            /// once). For a hasher of your own, use [`with_hasher`](Self::with_hasher).
            ///
            /// # Errors
            #[doc = concat!("As [`", stringify!($owned), "::from_bytes`], and")]
            /// [`DecodeError::NotViewable`] for bytes that cannot be used in place.
            pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
                Self::with_hasher(bytes, Verify::All)
            }

            /// A view of `bytes` whose payload checksum is not checked ([`Verify`]): answers
            /// in O(1) time, without reading the payload first.
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes), but for a corrupted payload.
            pub fn from_bytes_unverified_payload(bytes: &'a [u8]) -> Result<Self, Error> {
                Self::with_hasher(bytes, Verify::SkipPayloadChecksum)
            }
        }

        impl<K: ?Sized, S> $view<'_, K, S> {
            /// The items and rate the filter was sized for, if it was sized from them.
            pub fn design(&self) -> Option<Design> {
                self.design
            }

            /// The hasher.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// Heap memory the view holds: none (it borrows its bytes).
            pub fn heap_bytes(&self) -> usize {
                0
            }
        }

        impl<K: Hash + ?Sized, S: BuildHasher> $view<'_, K, S> {
            /// Whether `key` (or a form it borrows as) may be in the filter: the owned
            /// filter's answer, by the same code.
            #[inline(always)]
            pub fn contains<Q: Hash + ?Sized>(&self, key: &Q) -> bool
            where
                K: Borrow<Q>,
            {
                self.contains_hash(self.hasher.hash_one(key))
            }

            /// Whether each of `keys` may be in the filter, appended to `out` in order, as
            #[doc = concat!("[`", stringify!($owned), "::contains_batch`] answers them.")]
            pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
            where
                I: IntoIterator,
                I::Item: Borrow<K>,
            {
                self.lookup.contains_batch(&self.hasher, keys, out);
            }
        }
    )*};
}

/// The reads of the two views over 256-bit split blocks (`$owned` names the filter in the
/// docs).
macro_rules! split_reads {
    ([$($generics:tt)*] $view:ty, $owned:ident) => {
        impl<$($generics)*> $view {
            /// Whether the key whose hash is `hash` may be in the filter.
            #[inline(always)]
            pub fn contains_hash(&self, hash: u64) -> bool {
                self.lookup.contains_hash(hash)
            }

            /// The number of 256-bit blocks.
            pub fn num_blocks(&self) -> u64 {
                self.lookup.blocks.len() as u64
            }

            /// The number of bits (256 per block).
            pub fn num_bits(&self) -> u64 {
                self.num_blocks() * 256
            }

            /// The number of set bits, counted (reads every block).
            pub fn count_ones(&self) -> u64 {
                self.lookup.count_ones()
            }

            /// An estimate of the number of distinct keys inserted, from the fill of each
            #[doc = concat!("block (as [`", stringify!($owned), "::estimated_len`]; reads every block).")]
            pub fn estimated_len(&self) -> f64 {
                self.lookup.estimated_len()
            }

            /// The false-positive rate from the fill of each block (as
            #[doc = concat!("[`", stringify!($owned), "::estimated_fpr`]; reads every block).")]
            pub fn estimated_fpr(&self) -> f64 {
                self.lookup.estimated_fpr()
            }
        }
    };
}

view_common! {
    /// A read-only [`BloomFilter`] over serialized bytes, without copying its bit array: made
    /// for filters in memory-mapped files, which many processes can then share in the page
    /// cache, and which answer their first query without being read whole.
    ///
    /// The bytes must be of format version 2 or 3 (3 is what this build writes) and the bit
    /// array aligned to 8 bytes in memory, which it is in a memory map (page-aligned) and in any buffer
    /// aligned to 64. Other bytes get [`DecodeError::NotViewable`] with the reason; the owned
    /// decoder ([`BloomFilter::from_bytes`]) reads them all.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::{BloomFilter, BloomFilterRef};
    /// use bloomkit_core::format::AlignedBytes;
    ///
    /// let mut f = BloomFilter::<str>::new(1_000, 0.01)?;
    /// f.insert("a");
    /// // Any aligned buffer: in practice a memory map (see the `mmap_shared` example).
    /// let bytes = AlignedBytes::copy_from(&f.to_bytes());
    ///
    /// let view = BloomFilterRef::<str>::from_bytes(&bytes)?;
    /// assert!(view.contains("a"));
    /// assert_eq!(view.to_filter(), f);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    BloomFilterRef(Lookup) of BloomFilter, Classic, Params, debug: ["bits" => num_bits, "hashes" => num_hashes];

    /// A read-only [`BlockedBloomFilter`] over serialized bytes, without copying its blocks:
    /// the view for large filters in memory-mapped files (one cache line per lookup, which a
    /// map serves from the page cache). Version 2 bytes place the blocks at 64-byte offsets, so
    /// in a page-aligned map every block is one cache line, as in the owned filter.
    ///
    /// Same rules as [`BloomFilterRef`]: version 2 or 3 bytes, the payload aligned to 8 bytes in
    /// memory, or [`DecodeError::NotViewable`] with the reason.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::{BlockedBloomFilter, BlockedBloomFilterRef};
    /// use bloomkit_core::format::AlignedBytes;
    ///
    /// let mut f = BlockedBloomFilter::<u64>::new(10_000, 0.01)?;
    /// f.insert_batch(0..100u64);
    /// let bytes = AlignedBytes::copy_from(&f.to_bytes());
    ///
    /// // O(1): the payload's checksum is not read; each lookup reads one block.
    /// let view = BlockedBloomFilterRef::<u64>::from_bytes_unverified_payload(&bytes)?;
    /// let mut found = Vec::new();
    /// view.contains_batch(0..100u64, &mut found);
    /// assert_eq!(found, vec![true; 100]);
    /// assert_eq!((view.num_blocks(), view.heap_bytes()), (f.num_blocks(), 0));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    BlockedBloomFilterRef(BlockLookup) of BlockedBloomFilter, Blocked, BlockedParams, debug: ["blocks" => num_blocks, "hashes" => num_hashes];

    /// A read-only [`SimdBlockFilter`] over serialized bytes, without copying its blocks (for
    /// filters in memory-mapped files): the owned filter's lookups, by the same code.
    ///
    /// Same rules as [`BloomFilterRef`]: the payload aligned to 8 bytes in memory, or
    /// [`DecodeError::NotViewable`] with the reason.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::{SimdBlockFilter, SimdBlockFilterRef};
    /// use bloomkit_core::format::AlignedBytes;
    ///
    /// let mut f = SimdBlockFilter::<u64>::new(10_000, 0.01)?;
    /// f.insert_batch(0..100u64);
    /// let bytes = AlignedBytes::copy_from(&f.to_bytes());
    ///
    /// let view = SimdBlockFilterRef::<u64>::from_bytes(&bytes)?;
    /// assert!((0..100u64).all(|k| view.contains(&k)));
    /// assert_eq!(view.to_filter(), f);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    SimdBlockFilterRef(SplitLookup) of SimdBlockFilter, SimdBlock, SimdBlockParams, debug: ["blocks" => num_blocks];
}

impl<'a, K: ?Sized, S: PortableHasher> BloomFilterRef<'a, K, S> {
    /// The view of what `reader` holds after the hasher.
    fn read(mut reader: Reader<'a>, hasher: S, params: Params) -> Result<Self, Error> {
        let probes = reader.probes()?;
        let words = reader.words_in_place::<u64>()?;
        reader.finish()?;
        Self::from_words(
            words,
            params.bits,
            params.hashes,
            probes,
            hasher,
            params.design,
        )
        .map_err(Error::into_decode)
    }

    /// A view of `words`, a classic filter's bit array in place (as
    /// [`BloomFilter::bits`] holds it: `bits` bits in whole words), with the filter's
    /// `hashes`, probe scheme, hasher and design: for formats that hold classic filters
    /// inside their own bytes (the multi-attribute filter's parts).
    ///
    /// # Errors
    /// [`Error::ZeroBits`] for no bits, [`Error::InvalidHashCount`], an invalid design, and
    /// a word count that does not hold `bits` bits.
    pub fn from_words(
        words: &'a [u64],
        bits: u64,
        hashes: u32,
        probes: ProbeScheme,
        hasher: S,
        design: Option<Design>,
    ) -> Result<Self, Error> {
        if bits == 0 {
            return Err(Error::ZeroBits);
        }
        Ok(BloomFilterRef {
            lookup: Lookup {
                bits: BitSlice::new(words, bits)?,
                hashes: check_hashes(u64::from(hashes))?,
                probes,
            },
            design: checked_design(design)?,
            hasher,
            key: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> BloomFilter<K, S>
    where
        S: Clone,
    {
        let bits = bloomkit_core::bits::BitArray::from_words(
            self.lookup.bits.words().to_vec(),
            self.lookup.bits.len(),
        )
        .expect("the view's bits were checked");
        BloomFilter::from_bit_array(
            bits,
            self.lookup.hashes,
            self.lookup.probes,
            self.hasher.clone(),
            self.design,
        )
        .expect("the view's parameters were checked")
    }
}

impl<K: ?Sized, S> BloomFilterRef<'_, K, S> {
    /// Whether the key whose hash is `hash` may be in the filter.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.lookup.contains_hash(hash)
    }

    /// The number of bits, m.
    pub fn num_bits(&self) -> u64 {
        self.lookup.bits.len()
    }

    /// `k`, the number of probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.lookup.hashes
    }

    /// How a key's positions follow from its hash ([`BloomFilter::probe_scheme`]).
    pub fn probe_scheme(&self) -> ProbeScheme {
        self.lookup.probes
    }

    /// The number of set bits, counted (reads the whole bit array).
    pub fn count_ones(&self) -> u64 {
        self.lookup.bits.count_ones()
    }

    /// Whether no bit is set (counts the bits, reading the whole array).
    pub fn is_empty(&self) -> bool {
        self.count_ones() == 0
    }

    /// The false-positive rate bloomkit's model predicts for this filter after `items`
    /// distinct insertions (as [`BloomFilter::fpr_at`]).
    pub fn fpr_at(&self, items: u64) -> f64 {
        sizing::fpr_model_with(
            items,
            self.num_bits(),
            self.num_hashes(),
            self.probe_scheme(),
        )
        .unwrap_or(1.0)
    }

    /// An estimate of the number of distinct keys inserted, from the fill (as
    /// [`BloomFilter::estimated_len`]; counts the bits, reading the whole array).
    pub fn estimated_len(&self) -> f64 {
        sizing::estimate_cardinality(self.num_bits(), self.num_hashes(), self.count_ones())
            .unwrap_or(f64::INFINITY)
    }

    /// The false-positive rate from the fill (as [`BloomFilter::estimated_fpr`]; reads the
    /// whole array).
    pub fn estimated_fpr(&self) -> f64 {
        sizing::fpr_from_fill(self.num_bits(), self.num_hashes(), self.count_ones()).unwrap_or(1.0)
    }
}

impl<'a, K: ?Sized, S: PortableHasher> BlockedBloomFilterRef<'a, K, S> {
    /// The view of what `reader` holds after the hasher.
    fn read(mut reader: Reader<'a>, hasher: S, params: BlockedParams) -> Result<Self, Error> {
        let words = reader.words_in_place::<u64>()?;
        reader.finish()?;
        if params.blocks.checked_mul(8) != Some(words.len() as u64) {
            return Err(Error::Decode(DecodeError::Invalid(format!(
                "{} blocks announced, {} words present",
                params.blocks,
                words.len()
            ))));
        }
        Self::from_words(words, params.hashes, hasher, params.design).map_err(Error::into_decode)
    }

    /// A view of `words`, a blocked filter's bit array in place (whole 512-bit blocks, as
    /// [`BlockedBloomFilter::words`] gives them), with the filter's `hashes`, hasher and
    /// design: for formats that hold blocked filters inside their own bytes (the scalable
    /// filter's slices).
    ///
    /// # Errors
    /// [`Error::ZeroBits`] for no words, [`Error::InvalidHashCount`], an invalid design,
    /// and [`DecodeError::NotViewable`] for words that are not whole blocks aligned to 8
    /// bytes.
    pub fn from_words(
        words: &'a [u64],
        hashes: u32,
        hasher: S,
        design: Option<Design>,
    ) -> Result<Self, Error> {
        if words.is_empty() {
            return Err(Error::ZeroBits);
        }
        let blocks: &[[u64; 8]] = bytemuck::try_cast_slice(words).map_err(|e| {
            Error::Decode(DecodeError::NotViewable(format!(
                "{} words are not whole 512-bit blocks in place: {e}",
                words.len()
            )))
        })?;
        Ok(BlockedBloomFilterRef {
            lookup: BlockLookup {
                blocks,
                hashes: check_hashes(u64::from(hashes))?,
            },
            design: checked_design(design)?,
            hasher,
            key: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> BlockedBloomFilter<K, S>
    where
        S: Clone,
    {
        BlockedBloomFilter::from_words(
            bytemuck::cast_slice(self.lookup.blocks),
            self.lookup.hashes,
            self.hasher.clone(),
            self.design,
        )
        .expect("the view's parameters were checked")
    }
}

impl<K: ?Sized, S> BlockedBloomFilterRef<'_, K, S> {
    /// Whether the key whose hash is `hash` may be in the filter.
    #[inline(always)]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.lookup.contains_hash(hash)
    }

    /// Requests the cache line of the block the key whose hash is `hash` goes to (a hint
    /// that changes nothing): for batches that probe several filters at once.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        bloomkit_core::batch::prefetch(self.lookup.block_of(hash));
    }

    /// The number of 512-bit blocks.
    pub fn num_blocks(&self) -> u64 {
        self.lookup.blocks.len() as u64
    }

    /// The number of bits (512 per block).
    pub fn num_bits(&self) -> u64 {
        self.num_blocks() * 512
    }

    /// `k`, the number of probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.lookup.hashes
    }

    /// The number of set bits, counted (reads every block).
    pub fn count_ones(&self) -> u64 {
        bytemuck::cast_slice::<[u64; 8], u64>(self.lookup.blocks)
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    fn block_ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.lookup
            .blocks
            .iter()
            .map(|b| b.iter().map(|w| w.count_ones()).sum())
    }

    /// An estimate of the number of distinct keys inserted, from the fill of each block (as
    /// [`BlockedBloomFilter::estimated_len`]; reads every block).
    pub fn estimated_len(&self) -> f64 {
        crate::blocked::len_from_fill(self.block_ones(), self.num_hashes())
    }

    /// The false-positive rate from the fill of each block (as
    /// [`BlockedBloomFilter::estimated_fpr`]; reads every block).
    pub fn estimated_fpr(&self) -> f64 {
        crate::blocked::fpr_from_fill(self.block_ones(), self.num_hashes())
    }
}

impl<'a, K: ?Sized, S: PortableHasher> SimdBlockFilterRef<'a, K, S> {
    /// The view of what `reader` holds after the hasher.
    fn read(mut reader: Reader<'a>, hasher: S, params: SimdBlockParams) -> Result<Self, Error> {
        let blocks = reader.words_in_place::<[u64; 4]>()?;
        reader.finish()?;
        params.check_blocks(blocks.len())?;
        let design = crate::split_block::checked_parts(blocks.len(), params.design)
            .map_err(Error::into_decode)?;
        Ok(SimdBlockFilterRef {
            lookup: SplitLookup { blocks },
            design,
            hasher,
            key: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> SimdBlockFilter<K, S>
    where
        S: Clone,
    {
        SimdBlockFilter::from_words(
            bytemuck::cast_slice(self.lookup.blocks),
            self.hasher.clone(),
            self.design,
        )
        .expect("the view's parameters were checked")
    }
}

split_reads!([K: ?Sized, S] SimdBlockFilterRef<'_, K, S>, SimdBlockFilter);

/// A read-only [`SplitBlockFilter`] over bloomkit's bytes of it, without copying its blocks:
/// Parquet's split-block filter answered in place from a memory-mapped file, by the owned
/// filter's lookup code, each key hashed as Parquet hashes it
/// ([`ParquetValue`](crate::ParquetValue)).
///
/// The bytes must be bloomkit's format (`SplitBlockFilter::to_bytes`), of format version 2 or 3,
/// with the blocks aligned to 8 bytes in memory (a memory map, or any buffer aligned to 64);
/// other bytes get [`DecodeError::NotViewable`], and the owned decoder reads them. (A Parquet
/// file's own header and bitset: [`SplitBlockFilter::from_parquet_bytes`].)
///
/// # Examples
///
/// ```
/// use bloomkit_classic::{SplitBlockFilter, SplitBlockFilterRef};
/// use bloomkit_core::format::AlignedBytes;
///
/// let mut f = SplitBlockFilter::<str>::new(1_000, 0.01)?;
/// f.insert("parquet");
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
///
/// let view = SplitBlockFilterRef::<str>::from_bytes(&bytes)?;
/// assert!(view.contains("parquet"));
/// assert_eq!(view.to_filter(), f);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub struct SplitBlockFilterRef<'a, K: ?Sized> {
    lookup: SplitLookup<'a>,
    design: Option<Design>,
    key: PhantomData<fn(&K)>,
}

impl<'a, K: ?Sized> SplitBlockFilterRef<'a, K> {
    /// A view of `bytes`, every byte checked (both checksums).
    ///
    /// # Errors
    /// As [`SplitBlockFilter::from_bytes`](bloomkit_core::Codec::from_bytes), and
    /// [`DecodeError::NotViewable`] for bytes that cannot be used in place.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_verify(bytes, Verify::All)
    }

    /// A view of `bytes` checked as `verify` says ([`Verify::SkipPayloadChecksum`]: answers
    /// without reading the payload first).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), but for a corrupted payload when it is not
    /// checked.
    pub fn with_verify(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let mut reader = Reader::open(bytes, Variant::SplitBlock, verify)?;
        let found = reader.header().hasher;
        if found != bloomkit_core::HasherSpec::PARQUET_XXH64 {
            return Err(Error::Decode(DecodeError::HasherMismatch {
                expected: bloomkit_core::HasherSpec::PARQUET_XXH64.id,
                found: found.id,
            }));
        }
        let params: crate::codec::SimdBlockParams = reader.params()?;
        let blocks = reader.words_in_place::<[u64; 4]>()?;
        reader.finish()?;
        params.check_blocks(blocks.len())?;
        let design = crate::split_block::checked_parts(blocks.len(), params.design)
            .map_err(Error::into_decode)?;
        Ok(SplitBlockFilterRef {
            lookup: SplitLookup { blocks },
            design,
            key: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> SplitBlockFilter<K> {
        let blocks = self
            .lookup
            .blocks
            .iter()
            .map(|b| bytemuck::cast::<[u64; 4], crate::split_block::SplitBlock>(*b))
            .collect();
        SplitBlockFilter::from_blocks(blocks, self.design)
            .expect("the view's parameters were checked")
    }

    /// The items and rate the filter was sized for, if it was sized from them.
    pub fn design(&self) -> Option<Design> {
        self.design
    }
}

split_reads!([K: ?Sized] SplitBlockFilterRef<'_, K>, SplitBlockFilter);

impl<K: crate::ParquetValue + ?Sized> SplitBlockFilterRef<'_, K> {
    /// Whether `key` may be in the filter: the owned filter's answer, by the same code.
    #[inline(always)]
    pub fn contains(&self, key: &K) -> bool {
        self.lookup.contains_hash(key.parquet_hash())
    }

    /// Whether each of `keys` may be in the filter, appended to `out` in order, as
    /// [`SplitBlockFilter::contains_batch`] answers them.
    pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        self.lookup
            .contains_batch_by(keys, out, |key: &K| key.parquet_hash());
    }
}

impl<K: crate::ParquetValue + ?Sized> bloomkit_core::LookupCore for SplitBlockFilterRef<'_, K> {
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        self.lookup.contains_hash(hash)
    }
    fn estimated_len(&self) -> f64 {
        self.lookup.estimated_len()
    }
    fn heap_bytes(&self) -> usize {
        0
    }
    fn target_fpr(&self) -> Option<f64> {
        self.design.map(|d| d.fpr)
    }
    fn estimated_fpr(&self) -> f64 {
        self.lookup.estimated_fpr()
    }
}

impl<K: crate::ParquetValue + ?Sized> bloomkit_core::Lookup for SplitBlockFilterRef<'_, K> {
    type Key = K;

    #[inline]
    fn hash_key(&self, key: &K) -> u64 {
        key.parquet_hash()
    }
    #[inline]
    fn contains(&self, key: &K) -> bool {
        SplitBlockFilterRef::contains(self, key)
    }
    fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        SplitBlockFilterRef::contains_batch(self, keys, out);
    }
}

impl<K: ?Sized> fmt::Debug for SplitBlockFilterRef<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SplitBlockFilterRef")
            .field("blocks", &self.lookup.blocks.len())
            .field("design", &self.design)
            .finish()
    }
}
