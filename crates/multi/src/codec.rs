//! The byte format of [`MultiFilter`] ([`Codec`]), serde through those bytes, and the
//! zero-copy view [`MultiFilterRef`]. Decoding, owned or in place, goes through
//! [`read_parts`], which validates everything.

use core::fmt;
use core::hash::BuildHasher;
use core::marker::PhantomData;

use bloomkit_classic::{BloomFilter, BloomFilterRef};
use bloomkit_core::bits::BitArray;
use bloomkit_core::format::{Reader, Verify, Writer};
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::Design;
use bloomkit_core::{Codec, Error, PortableHasher, Variant, Xxh3Builder};
use serde::{Deserialize, Serialize};

use crate::parts::{full_mask, Mask, Part, Parts};
use crate::{MultiFilter, Record, MAX_ATTRIBUTES};

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
            arity: self.parts.attributes.len() as u32,
            combinations: self.parts.combos.len() as u32,
        }
    }

    fn all_parts(&self) -> impl Iterator<Item = (PartParams, &[u64])> {
        self.parts.all().map(|p| {
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

/// Reads the parameters and every part from `reader` (after the hasher), each part's bit
/// array made by `part` (owned: copied; a view: in place) with the part's hasher, then
/// rejects anything the builder could not have produced.
fn read_parts<'a, S: PortableHasher, F>(
    reader: &mut Reader<'a>,
    hasher: &S,
    fixed: Option<usize>,
    mut part: impl FnMut(&mut Reader<'a>, PartParams, ProbeScheme, S) -> Result<F, Error>,
) -> Result<Parts<F>, Error> {
    let params: Params = reader.params()?;
    let arity = checked_arity(params, fixed)?;
    let probes = reader.probes()?;
    // One part at a time: a hostile count cannot allocate more than the input holds.
    let mut parts = Vec::new();
    for _ in 0..arity as u64 + u64::from(params.combinations) {
        let p: PartParams = reader.params()?;
        if p.bits == 0 {
            return Err(Error::ZeroBits.into_decode());
        }
        parts.push(
            Part::new(hasher, p.mask, |h| part(reader, p, probes, h))
                .map_err(Error::into_decode)?,
        );
    }
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
    Ok(Parts::new(hasher, parts, combos))
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
        let parts = read_parts(&mut reader, &hasher, R::ARITY, |reader, p, probes, h| {
            let bits = BitArray::from_words(reader.words()?, p.bits)?;
            BloomFilter::from_bit_array(bits, p.hashes, probes, h, Some(p.design))
        })?;
        reader.finish()?;
        Ok(MultiFilter {
            parts,
            hasher,
            record: PhantomData,
        })
    }
}

bloomkit_core::impl_serde_via_bytes!([R: Record + ?Sized, S: PortableHasher] MultiFilter<R, S>);

/// A read-only [`MultiFilter`] over serialized bytes, without copying its bit arrays: for
/// filters in memory-mapped files, which many processes can then share in the page cache.
/// It answers every query the owned filter answers (whole records, one attribute, any
/// subset; the predicted and estimated rates), by the same code.
///
/// The bytes must be of format version 2 or 3 and every part's bit array aligned to 8
/// bytes in memory, which it is in a memory map (page-aligned) and in any buffer aligned to
/// 64; other bytes get [`DecodeError::NotViewable`](bloomkit_core::DecodeError::NotViewable)
/// with the reason, and the owned decoder ([`MultiFilter::from_bytes`]) reads them all.
///
/// # Examples
///
/// ```
/// use bloomkit_core::format::AlignedBytes;
/// use bloomkit_multi::{MultiFilter, MultiFilterRef};
///
/// let mut f = MultiFilter::<(u32, String)>::builder(1_000, 0.01).subset(&[0, 1])?.build()?;
/// f.try_insert(&(7, "seven".to_string()))?;
/// // Any aligned buffer: in practice a memory map.
/// let bytes = AlignedBytes::copy_from(&f.to_bytes());
///
/// let view = MultiFilterRef::<(u32, String)>::from_bytes(&bytes)?;
/// assert!(view.contains(&(7, "seven".to_string())));
/// assert!(view.query().attr::<1>("seven").contains());
/// assert!(!view.query().attr::<0>(&8).contains());
/// assert_eq!(view.to_filter(), f);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub struct MultiFilterRef<'a, R: ?Sized, S = Xxh3Builder> {
    pub(crate) parts: Parts<BloomFilterRef<'a, (), S>>,
    hasher: S,
    record: PhantomData<fn(&R)>,
}

impl<R: ?Sized, S: fmt::Debug + BuildHasher> fmt::Debug for MultiFilterRef<'_, R, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.parts.debug("MultiFilterRef", &self.hasher, f)
    }
}

impl<'a, R: Record + ?Sized, S: PortableHasher> MultiFilterRef<'a, R, S> {
    /// A view of `bytes` written with hasher `S`, checked as `verify` says.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes).
    pub fn with_hasher(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let mut reader = Reader::open(bytes, Variant::Multi, verify)?;
        let hasher = reader.hasher::<S>()?;
        let parts = read_parts(&mut reader, &hasher, R::ARITY, |reader, p, probes, h| {
            let words = reader.words_in_place::<u64>()?;
            BloomFilterRef::from_words(words, p.bits, p.hashes, probes, h, Some(p.design))
        })?;
        reader.finish()?;
        Ok(MultiFilterRef {
            parts,
            hasher,
            record: PhantomData,
        })
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> MultiFilter<R, S>
    where
        S: Clone,
    {
        let copy = |p: &Part<BloomFilterRef<'a, (), S>>| Part {
            mask: p.mask,
            key: p.key,
            filter: p.filter.to_filter(),
        };
        MultiFilter {
            parts: Parts {
                attributes: self.parts.attributes.iter().map(copy).collect(),
                combos: self.parts.combos.iter().map(copy).collect(),
                record_key: self.parts.record_key,
            },
            hasher: self.hasher.clone(),
            record: PhantomData,
        }
    }
}

impl<'a, R: Record + ?Sized> MultiFilterRef<'a, R> {
    /// A view of `bytes`, every byte checked (both checksums: reads the whole input once).
    /// For a hasher of your own, use [`with_hasher`](Self::with_hasher).
    ///
    /// # Errors
    /// As [`MultiFilter::from_bytes`], and
    /// [`DecodeError::NotViewable`](bloomkit_core::DecodeError::NotViewable) for bytes that
    /// cannot be used in place.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::All)
    }

    /// A view of `bytes` whose payload checksum is not checked ([`Verify`]): answers without
    /// reading the payload first.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), but for a corrupted payload.
    pub fn from_bytes_unverified_payload(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_hasher(bytes, Verify::SkipPayloadChecksum)
    }
}
