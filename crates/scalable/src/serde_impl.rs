//! Serde impls and the byte format for [`ScalableBloomFilter`]; both decode through
//! [`ScalableBloomFilter::from_parts`], which validates everything.

use bloomkit_classic::BlockedBloomFilter;
use bloomkit_core::format::{Reader, Writer};
use bloomkit_core::{Codec, DecodeError, Design, Error, HasherSpec, PortableHasher, Variant};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Config, ScalableBloomFilter, Slice};

/// The filter-wide parameter block (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Params {
    initial_capacity: u64,
    fpr: f64,
    growth: u32,
    tightening: f64,
    max_items: Option<u64>,
    max_bytes: Option<u64>,
    next: u32,
    len: u64,
    slices: u64,
}

/// One slice's parameter block, followed in the byte format by its words.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct SliceParams {
    blocks: u64,
    hashes: u32,
    capacity: u64,
    fpr: f64,
    items: u64,
}

#[derive(Serialize)]
struct SliceRef {
    params: SliceParams,
    words: Vec<u64>,
}

#[derive(Serialize)]
struct ReprRef {
    hasher: HasherSpec,
    params: Params,
    slices: Vec<SliceRef>,
}

#[derive(Deserialize)]
struct SliceRepr {
    params: SliceParams,
    words: Vec<u64>,
}

#[derive(Deserialize)]
struct Repr {
    hasher: HasherSpec,
    params: Params,
    slices: Vec<SliceRepr>,
}

fn invalid_msg(msg: String) -> Error {
    Error::Decode(DecodeError::Invalid(msg))
}

impl<S: PortableHasher + Clone> ScalableBloomFilter<S> {
    fn params(&self) -> Params {
        let c = self.config;
        Params {
            initial_capacity: c.initial_capacity,
            fpr: c.fpr,
            growth: c.growth,
            tightening: c.tightening,
            max_items: c.max_items,
            max_bytes: c.max_bytes,
            next: self.next,
            len: self.len,
            slices: self.slices.len() as u64,
        }
    }

    fn slice_params(slice: &Slice<S>) -> SliceParams {
        SliceParams {
            blocks: slice.filter.num_blocks(),
            hashes: slice.filter.num_hashes(),
            capacity: slice.capacity,
            fpr: slice.filter.design().map_or(f64::NAN, |d| d.fpr),
            items: slice.items,
        }
    }

    fn slice_from_parts(hasher: &S, p: SliceParams, words: &[u64]) -> Result<Slice<S>, Error> {
        if p.items > p.capacity {
            return Err(invalid_msg(format!(
                "slice holds {} items, more than its capacity {}",
                p.items, p.capacity
            )));
        }
        if p.blocks == 0 || p.blocks.checked_mul(8) != Some(words.len() as u64) {
            return Err(invalid_msg(format!(
                "a slice of {} blocks with {} words",
                p.blocks,
                words.len()
            )));
        }
        let design = Design::new(p.capacity, p.fpr).map_err(Error::into_decode)?;
        let filter = BlockedBloomFilter::from_words(words, p.hashes, hasher.clone(), Some(design))
            .map_err(Error::into_decode)?;
        Ok(Slice {
            filter,
            capacity: p.capacity,
            items: p.items,
        })
    }

    /// Rebuilds a filter from decoded parts, rejecting anything the filter could not have
    /// reached by itself.
    fn from_parts(hasher: S, params: Params, slices: Vec<Slice<S>>) -> Result<Self, Error> {
        let config = Config {
            initial_capacity: params.initial_capacity,
            fpr: params.fpr,
            growth: params.growth,
            tightening: params.tightening,
            max_items: params.max_items,
            max_bytes: params.max_bytes,
        }
        .check()
        .map_err(Error::into_decode)?;
        if slices.is_empty() || slices.len() as u64 != params.slices {
            return Err(invalid_msg(format!(
                "{} slices announced, {} present",
                params.slices,
                slices.len()
            )));
        }
        if params.next == 0 {
            return Err(invalid_msg(
                "no slice of the sequence was ever created".into(),
            ));
        }
        config.slice(params.next - 1).map_err(Error::into_decode)?;
        let items: u64 = slices.iter().map(|s| s.items).sum();
        if items != params.len {
            return Err(invalid_msg(format!(
                "slices hold {items} items, the filter says {}",
                params.len
            )));
        }
        if params.max_items.is_some_and(|max| params.len > max) {
            return Err(invalid_msg("more items than the filter's own limit".into()));
        }
        Ok(ScalableBloomFilter {
            slices,
            hasher,
            config,
            next: params.next,
            len: params.len,
        })
    }

    /// The filter in bloomkit's byte format: header, the filter's parameters, then each
    /// slice's parameters and bit array, and a checksum (`docs/format.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_scalable::ScalableBloomFilter;
    ///
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// for i in 0..100u64 {
    ///     f.insert(&i)?;
    /// }
    /// let g = ScalableBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(Variant::Scalable, self.hasher.spec());
        w.params(&self.params());
        for slice in &self.slices {
            w.params(&Self::slice_params(slice))
                .words(&slice.filter.to_words());
        }
        w.finish()
    }

    fn decode(bytes: &[u8]) -> Result<Self, Error> {
        let mut reader = Reader::open(bytes, Variant::Scalable)?;
        let hasher = reader.hasher::<S>()?;
        let params: Params = reader.params()?;
        // One slice at a time: a hostile count cannot allocate more than the input holds.
        let mut slices = Vec::new();
        for _ in 0..params.slices {
            let p: SliceParams = reader.params()?;
            let words = reader.words()?;
            slices.push(Self::slice_from_parts(&hasher, p, &words)?);
        }
        reader.finish()?;
        Self::from_parts(hasher, params, slices)
    }
}

impl ScalableBloomFilter {
    /// Reads a filter written by [`to_bytes`](ScalableBloomFilter::to_bytes). (For a hasher
    /// of your own, use [`Codec::from_bytes`].)
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, hasher
    /// or format version; never a panic, and no allocation beyond the input's size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::decode(bytes)
    }
}

impl<S: PortableHasher + Clone> Codec for ScalableBloomFilter<S> {
    fn to_bytes(&self) -> Vec<u8> {
        ScalableBloomFilter::to_bytes(self)
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::decode(bytes)
    }
}

impl<S: PortableHasher + Clone> Serialize for ScalableBloomFilter<S> {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        ReprRef {
            hasher: self.hasher.spec(),
            params: self.params(),
            slices: self
                .slices
                .iter()
                .map(|s| SliceRef {
                    params: Self::slice_params(s),
                    words: s.filter.to_words(),
                })
                .collect(),
        }
        .serialize(serializer)
    }
}

impl<'de, S: PortableHasher + Clone> Deserialize<'de> for ScalableBloomFilter<S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = Repr::deserialize(deserializer)?;
        let hasher = S::from_spec(repr.hasher).map_err(D::Error::custom)?;
        let slices = repr
            .slices
            .into_iter()
            .map(|s| Self::slice_from_parts(&hasher, s.params, &s.words))
            .collect::<Result<Vec<_>, _>>()
            .map_err(D::Error::custom)?;
        Self::from_parts(hasher, repr.params, slices).map_err(D::Error::custom)
    }
}
