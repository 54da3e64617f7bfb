//! The byte format of [`BloomFilter`], [`BlockedBloomFilter`], [`SimdBlockFilter`] and
//! [`SplitBlockFilter`] ([`Codec`]), and serde
//! through those bytes. Decoding goes through `from_parts`, which validates everything.

use bloomkit_core::bits::BitArray;
use bloomkit_core::format::{Reader, Writer};
use bloomkit_core::hash::{HasherSpec, ProbeScheme};
use bloomkit_core::sizing::Design;
use bloomkit_core::{Codec, Error, PortableHasher, Variant};
use serde::{Deserialize, Serialize};

use crate::blocked::Block;
use crate::split_block::SplitBlock;
use crate::{BlockedBloomFilter, BloomFilter, SimdBlockFilter, SplitBlockFilter};

/// The parameter block of the byte format (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Params {
    pub(crate) bits: u64,
    pub(crate) hashes: u32,
    pub(crate) design: Option<Design>,
}

impl<K: ?Sized, S: PortableHasher> BloomFilter<K, S> {
    fn params(&self) -> Params {
        Params {
            bits: self.bits.len(),
            hashes: self.hashes,
            design: self.design,
        }
    }

    /// Rebuilds a filter from decoded parts, rejecting anything a constructor would not
    /// have produced.
    fn from_parts(
        hasher: S,
        params: Params,
        probes: ProbeScheme,
        words: Vec<u64>,
    ) -> Result<Self, Error> {
        if params.bits == 0 {
            return Err(Error::ZeroBits.into_decode());
        }
        let bits = BitArray::from_words(words, params.bits).map_err(Error::into_decode)?;
        Self::from_bit_array(bits, params.hashes, probes, hasher, params.design)
            .map_err(Error::into_decode)
    }

    /// The filter in bloomkit's byte format: a header naming the variant, hasher and seed,
    /// the parameters, the bit array, and checksums (`docs/format.md`). To write to a file
    /// or socket without this buffer, use [`Codec::write_to`].
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    ///
    /// let mut f = BloomFilter::new(1_000, 0.01)?;
    /// f.insert("a");
    /// let bytes = f.to_bytes();
    /// let g = BloomFilter::from_bytes(&bytes)?;
    /// assert!(g.contains("a"));
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<K: ?Sized> BloomFilter<K> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes), in this process or another.
    /// (For a filter with a hasher of your own, use [`Codec::from_bytes`].)
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, bytes of another variant
    /// or format version, or written with another hasher. It never panics, and allocates no
    /// more than the input's size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

impl<K: ?Sized, S: PortableHasher> Codec for BloomFilter<K, S> {
    const VARIANT: Variant = Variant::Classic;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::Classic, self.hasher.spec())
            .params(&self.params())
            .probes(self.probe_scheme())
            .words(self.bits.words())
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let hasher = reader.hasher::<S>()?;
        let params: Params = reader.params()?;
        let probes = reader.probes()?;
        let words = reader.words()?;
        reader.finish()?;
        Self::from_parts(hasher, params, probes, words)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher] BloomFilter<K, S>);

/// The blocked filter's parameter block (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct BlockedParams {
    pub(crate) blocks: u64,
    pub(crate) hashes: u32,
    pub(crate) design: Option<Design>,
}

impl<K: ?Sized, S: PortableHasher> BlockedBloomFilter<K, S> {
    fn blocked_params(&self) -> BlockedParams {
        BlockedParams {
            blocks: self.num_blocks(),
            hashes: self.hashes,
            design: self.design,
        }
    }

    /// Rebuilds a blocked filter from decoded parts, rejecting anything a constructor would
    /// not have produced.
    fn from_parts(hasher: S, params: BlockedParams, blocks: Vec<Block>) -> Result<Self, Error> {
        if params.blocks != blocks.len() as u64 {
            return Err(Error::Decode(bloomkit_core::DecodeError::Invalid(format!(
                "{} blocks announced, {} present",
                params.blocks,
                blocks.len()
            ))));
        }
        Self::from_blocks(blocks, params.hashes, hasher, params.design).map_err(Error::into_decode)
    }

    /// The filter in bloomkit's byte format: header, parameters, the blocks as words, and
    /// checksums (`docs/format.md`). To write without this buffer, use [`Codec::write_to`].
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<K: ?Sized> BlockedBloomFilter<K> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes). (For a hasher of your own,
    /// use [`Codec::from_bytes`].)
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, hasher
    /// or format version; never a panic, and no allocation beyond the input's size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

impl<K: ?Sized, S: PortableHasher> Codec for BlockedBloomFilter<K, S> {
    const VARIANT: Variant = Variant::Blocked;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::Blocked, self.hasher.spec())
            .params(&self.blocked_params())
            .words_as(&self.blocks)
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let hasher = reader.hasher::<S>()?;
        let params: BlockedParams = reader.params()?;
        let blocks: Vec<Block> = reader.words_as()?;
        reader.finish()?;
        Self::from_parts(hasher, params, blocks)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher] BlockedBloomFilter<K, S>);

/// The SIMD block filter's parameter block (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct SimdBlockParams {
    pub(crate) blocks: u64,
    pub(crate) design: Option<Design>,
}

impl SimdBlockParams {
    /// Checks that the payload held the `found` blocks the parameters announced.
    pub(crate) fn check_blocks(&self, found: usize) -> Result<(), Error> {
        if self.blocks != found as u64 {
            return Err(Error::Decode(bloomkit_core::DecodeError::Invalid(format!(
                "{} blocks announced, {found} present",
                self.blocks
            ))));
        }
        Ok(())
    }
}

impl<K: ?Sized, S: PortableHasher> SimdBlockFilter<K, S> {
    /// The filter in bloomkit's byte format: header, parameters, the blocks as words, and
    /// checksums (`docs/format.md`). To write without this buffer, use [`Codec::write_to`].
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<K: ?Sized> SimdBlockFilter<K> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes). (For a hasher of your own,
    /// use [`Codec::from_bytes`].)
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, hasher
    /// or format version; never a panic, and no allocation beyond the input's size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

impl<K: ?Sized, S: PortableHasher> Codec for SimdBlockFilter<K, S> {
    const VARIANT: Variant = Variant::SimdBlock;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::SimdBlock, self.hasher.spec())
            .params(&SimdBlockParams {
                blocks: self.num_blocks(),
                design: self.design,
            })
            .words_as(&self.blocks)
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let hasher = reader.hasher::<S>()?;
        let params: SimdBlockParams = reader.params()?;
        let blocks: Vec<SplitBlock> = reader.words_as()?;
        reader.finish()?;
        params.check_blocks(blocks.len())?;
        Self::from_blocks(blocks, hasher, params.design).map_err(Error::into_decode)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized, S: PortableHasher] SimdBlockFilter<K, S>);

impl<K: ?Sized> SplitBlockFilter<K> {
    /// The filter in bloomkit's byte format (variant tag 14, hasher id 5: Parquet's XXH64,
    /// seed 0), with its design and checksums; [`to_parquet_bytes`](Self::to_parquet_bytes)
    /// gives the bytes a Parquet file stores instead. The blocks are the same either way.
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }

    /// Reads a filter written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, a
    /// hasher other than Parquet's, or a format version this build does not read.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

/// Parquet's hash is fixed (XXH64, seed 0): the header names it as hasher id 5, and bytes
/// naming any other hasher are refused.
impl<K: ?Sized> Codec for SplitBlockFilter<K> {
    const VARIANT: Variant = Variant::SplitBlock;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::SplitBlock, HasherSpec::PARQUET_XXH64)
            .params(&SimdBlockParams {
                blocks: self.num_blocks(),
                design: self.design(),
            })
            .words_as(self.blocks())
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let found = reader.header().hasher;
        if found != HasherSpec::PARQUET_XXH64 {
            return Err(Error::Decode(bloomkit_core::DecodeError::HasherMismatch {
                expected: HasherSpec::PARQUET_XXH64.id,
                found: found.id,
            }));
        }
        let params: SimdBlockParams = reader.params()?;
        let blocks: Vec<SplitBlock> = reader.words_as()?;
        reader.finish()?;
        params.check_blocks(blocks.len())?;
        Self::from_blocks(blocks, params.design).map_err(Error::into_decode)
    }
}

bloomkit_core::impl_serde_via_bytes!([K: ?Sized] SplitBlockFilter<K>);
