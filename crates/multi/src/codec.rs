//! The byte format of [`MultiFilter`] ([`Codec`]), and serde through those bytes. Decoding
//! goes through `from_parts`, which validates everything.

use bloomkit_classic::BloomFilter;
use bloomkit_core::bits::BitArray;
use bloomkit_core::format::{Reader, Writer};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::Design;
use bloomkit_core::{Codec, Error, PortableHasher, Variant};
use serde::{Deserialize, Serialize};

use crate::{full_mask, Mask, MultiFilter, Part, Record, MAX_ATTRIBUTES};

/// The filter's parameter block (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Params {
    /// Attributes per record; one part each, in order.
    arity: u32,
    /// The combinations kept (declared subsets and the record-level filter), after them.
    combinations: u32,
}

/// One part's parameter block; its bit array follows it.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct PartParams {
    mask: Mask,
    bits: u64,
    hashes: u32,
    design: Design,
}

impl<R: ?Sized, S: PortableHasher> MultiFilter<R, S> {
    fn params(&self) -> Params {
        Params {
            arity: self.attributes.len() as u32,
            combinations: self.combos.len() as u32,
        }
    }

    fn all_parts(&self) -> impl Iterator<Item = (PartParams, &[u64])> {
        self.attributes.iter().chain(&self.combos).map(|p| {
            let params = PartParams {
                mask: p.mask,
                bits: p.filter.num_bits(),
                hashes: p.filter.num_hashes(),
                design: p
                    .filter
                    .design()
                    .expect("every part is sized from a design"),
            };
            (params, p.filter.bits().words())
        })
    }

    /// One part from its decoded parameters and words, hashing with the filter's hasher
    /// reseeded as the part's.
    fn part_from(
        family: &S,
        p: PartParams,
        probes: ProbeScheme,
        words: Vec<u64>,
    ) -> Result<Part<S>, Error> {
        if p.bits == 0 {
            return Err(Error::ZeroBits.into_decode());
        }
        let bits = BitArray::from_words(words, p.bits).map_err(Error::into_decode)?;
        Part::new(family, p.mask, |hasher| {
            BloomFilter::from_bit_array(bits, p.hashes, probes, hasher, Some(p.design))
        })
        .map_err(Error::into_decode)
    }

    /// The arity of `params`, checked against the record type's.
    fn checked_arity(params: Params, fixed: Option<usize>) -> Result<usize, Error> {
        let arity = params.arity as usize;
        if !(1..=MAX_ATTRIBUTES).contains(&arity) {
            return Err(Error::InvalidArity {
                arity,
                max: MAX_ATTRIBUTES,
            }
            .into_decode());
        }
        if fixed.is_some_and(|f| f != arity) {
            return Err(Error::invalid_bytes(format!(
                "the filter holds records of {arity} attributes, this record type has {}",
                fixed.unwrap_or(0)
            )));
        }
        Ok(arity)
    }

    /// Rebuilds a filter from decoded parts (the attributes' in order, then the
    /// combinations'), rejecting anything the builder could not have produced.
    fn from_parts(hasher: S, params: Params, mut parts: Vec<Part<S>>) -> Result<Self, Error> {
        let arity = params.arity as usize;
        let announced = arity + params.combinations as usize;
        if parts.len() != announced {
            return Err(Error::invalid_bytes(format!(
                "{announced} parts announced, {} present",
                parts.len()
            )));
        }
        for (i, p) in parts[..arity].iter().enumerate() {
            if p.mask != 1 << i {
                return Err(Error::invalid_bytes(format!(
                    "part {i} is over attributes {:#b}, expected attribute {i} alone",
                    p.mask
                )));
            }
        }
        let full = full_mask(arity);
        let mut previous = 0;
        for p in &parts[arity..] {
            if p.mask.count_ones() < 2 || p.mask & !full != 0 || p.mask <= previous {
                return Err(Error::invalid_bytes(format!(
                    "combination {:#b} is not two or more of {arity} attributes in increasing order",
                    p.mask
                )));
            }
            previous = p.mask;
        }
        let combos = parts.split_off(arity);
        Ok(Self::assemble(hasher, parts, combos))
    }
}

impl<R: Record + ?Sized, S: PortableHasher> MultiFilter<R, S> {
    /// The filter in bloomkit's byte format: header, parameters, each part's parameters and
    /// bit array, checksums (`docs/format.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_multi::MultiFilter;
    ///
    /// let mut f = MultiFilter::<(u32, String)>::new(1_000, 0.01)?;
    /// f.try_insert(&(7, "seven".to_string()))?;
    /// let g = MultiFilter::<(u32, String)>::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// assert!(g.query().attr::<1>("seven").contains());
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }
}

impl<R: Record + ?Sized> MultiFilter<R> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes). (For a hasher of your own,
    /// use [`Codec::from_bytes`].)
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, another variant, hasher
    /// or format version, or records of another arity than `R`'s; never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

impl<R: Record + ?Sized, S: PortableHasher> Codec for MultiFilter<R, S> {
    const VARIANT: Variant = Variant::Multi;

    fn encode(&self) -> Writer<'_> {
        let mut w = Writer::new(Variant::Multi, self.hasher.spec())
            .params(&self.params())
            .probes(self.probe_scheme());
        for (params, words) in self.all_parts() {
            w = w.params(&params).words(words);
        }
        w
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let hasher = reader.hasher::<S>()?;
        let params: Params = reader.params()?;
        let arity = Self::checked_arity(params, R::ARITY)?;
        let probes = reader.probes()?;
        // One part at a time: a hostile count cannot allocate more than the input holds.
        let mut parts = Vec::new();
        for _ in 0..arity as u64 + u64::from(params.combinations) {
            let p: PartParams = reader.params()?;
            let words = reader.words()?;
            parts.push(Self::part_from(&hasher, p, probes, words)?);
        }
        reader.finish()?;
        Self::from_parts(hasher, params, parts)
    }
}

bloomkit_core::impl_serde_via_bytes!([R: Record + ?Sized, S: PortableHasher] MultiFilter<R, S>);
