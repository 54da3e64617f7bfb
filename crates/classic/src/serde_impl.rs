//! Serde impls and the byte format for [`BloomFilter`]; both decode through
//! [`BloomFilter::from_parts`], which validates everything.

use bloomkit_core::bits::BitArray;
use bloomkit_core::format::{check_serde_version, Probed, ProbedParams, Reader, Writer, VERSION};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::Design;
use bloomkit_core::{Codec, Error, HasherSpec, PortableHasher, Variant};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::blocked::{blocks_from_words, Block};
use crate::{BlockedBloomFilter, BloomFilter};

/// The parameter block of the byte format (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Params {
    pub(crate) bits: u64,
    pub(crate) hashes: u32,
    pub(crate) design: Option<Design>,
}

impl ProbedParams for Params {
    const PAYLOAD: &'static str = "words";
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

impl<K: ?Sized, S: PortableHasher> Serialize for BloomFilter<K, S> {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        Probed {
            version: VERSION,
            hasher: self.hasher.spec(),
            params: self.params(),
            payload: self.bits.words(),
            probes: self.probe_scheme(),
        }
        .serialize(serializer)
    }
}

impl<'de, K: ?Sized, S: PortableHasher> Deserialize<'de> for BloomFilter<K, S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = Probed::<Params, Vec<u64>>::deserialize(deserializer)?;
        let hasher = S::from_spec(repr.hasher).map_err(D::Error::custom)?;
        Self::from_parts(hasher, repr.params, repr.probes, repr.payload).map_err(D::Error::custom)
    }
}

/// The blocked filter's parameter block (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct BlockedParams {
    pub(crate) blocks: u64,
    pub(crate) hashes: u32,
    pub(crate) design: Option<Design>,
}

#[derive(Serialize)]
struct BlockedReprRef<'a> {
    /// The format version (`format::VERSION`), so a reader can tell layouts apart.
    version: u16,
    hasher: HasherSpec,
    params: BlockedParams,
    words: &'a [u64],
}

#[derive(Deserialize)]
struct BlockedRepr {
    /// The format version (`format::VERSION`), so a reader can tell layouts apart.
    version: u16,
    hasher: HasherSpec,
    params: BlockedParams,
    words: Vec<u64>,
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

impl<K: ?Sized, S: PortableHasher> Serialize for BlockedBloomFilter<K, S> {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        BlockedReprRef {
            version: VERSION,
            hasher: self.hasher.spec(),
            params: self.blocked_params(),
            words: bytemuck::cast_slice(&self.blocks),
        }
        .serialize(serializer)
    }
}

impl<'de, K: ?Sized, S: PortableHasher> Deserialize<'de> for BlockedBloomFilter<K, S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = BlockedRepr::deserialize(deserializer)?;
        check_serde_version(repr.version).map_err(D::Error::custom)?;
        let hasher = S::from_spec(repr.hasher).map_err(D::Error::custom)?;
        let blocks = blocks_from_words(&repr.words).map_err(D::Error::custom)?;
        Self::from_parts(hasher, repr.params, blocks).map_err(D::Error::custom)
    }
}
