//! The parts of a multi-attribute filter (one bit array per attribute and per kept
//! combination) and every read over them, written once for the owned filter's parts
//! ([`BloomFilter`]) and a view's ([`BloomFilterRef`](bloomkit_classic::BloomFilterRef)):
//! the two differ only in where the bits lie.

use core::fmt;
use core::hash::{BuildHasher, Hash};

use bloomkit_classic::BloomFilter;
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::sizing::Design;
use bloomkit_core::{Error, PortableHasher};

use crate::record::{Record, Visitor, MAX_ATTRIBUTES};
use crate::{mask_of, PartInfo, QueryFpr};

/// A set of attributes as a bit mask: bit `i` is attribute `i`.
pub(crate) type Mask = u32;

/// The hashes of one record's (or one query's) attributes, by attribute index.
pub(crate) type Hashes = [u64; MAX_ATTRIBUTES];

/// A part's bit array as a multi-attribute filter reads it: a [`BloomFilter`] in an owned
/// [`MultiFilter`](crate::MultiFilter), a
/// [`BloomFilterRef`](bloomkit_classic::BloomFilterRef) in a view
/// ([`MultiFilterRef`](crate::MultiFilterRef)). It names the part type of a
/// [`Query`](crate::Query); sealed (implemented by those two types only).
pub trait PartFilter: sealed::Part {}

pub(crate) mod sealed {
    use super::{Design, ProbeScheme};

    /// The reads a query makes of a part (each the part type's own method of that name).
    pub trait Part {
        /// The hasher the part's values are hashed with.
        type Hasher: core::hash::BuildHasher;
        fn hasher(&self) -> &Self::Hasher;
        fn contains_hash(&self, hash: u64) -> bool;
        fn num_bits(&self) -> u64;
        fn num_hashes(&self) -> u32;
        fn count_ones(&self) -> u64;
        fn is_empty(&self) -> bool;
        fn design(&self) -> Option<Design>;
        fn fpr_at(&self, items: u64) -> f64;
        fn estimated_len(&self) -> f64;
        fn estimated_fpr(&self) -> f64;
        fn probe_scheme(&self) -> ProbeScheme;
        fn heap_bytes(&self) -> usize;
    }
}

/// Implements [`PartFilter`] for a classic filter type by its inherent methods.
macro_rules! part_filter {
    ($([$($g:tt)*] $ty:ty;)*) => {$(
        impl<$($g)*> sealed::Part for $ty {
            type Hasher = S;
            fn hasher(&self) -> &S { <$ty>::hasher(self) }
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool { <$ty>::contains_hash(self, hash) }
            fn num_bits(&self) -> u64 { <$ty>::num_bits(self) }
            fn num_hashes(&self) -> u32 { <$ty>::num_hashes(self) }
            fn count_ones(&self) -> u64 { <$ty>::count_ones(self) }
            fn is_empty(&self) -> bool { <$ty>::is_empty(self) }
            fn design(&self) -> Option<Design> { <$ty>::design(self) }
            fn fpr_at(&self, items: u64) -> f64 { <$ty>::fpr_at(self, items) }
            fn estimated_len(&self) -> f64 { <$ty>::estimated_len(self) }
            fn estimated_fpr(&self) -> f64 { <$ty>::estimated_fpr(self) }
            fn probe_scheme(&self) -> ProbeScheme { <$ty>::probe_scheme(self) }
            fn heap_bytes(&self) -> usize { <$ty>::heap_bytes(self) }
        }
        impl<$($g)*> PartFilter for $ty {}
    )*};
}

part_filter! {
    [S: BuildHasher] BloomFilter<(), S>;
}
#[cfg(feature = "serde")]
part_filter! {
    ['a, S: BuildHasher] bloomkit_classic::BloomFilterRef<'a, (), S>;
}

/// One bit array: over one attribute's values (a one-bit mask) or over the combined values
/// of several (a declared subset, or all of them: the record-level filter).
#[derive(Clone, PartialEq)]
pub(crate) struct Part<F> {
    pub(crate) mask: Mask,
    /// The part's seed, derived from the filter's ([`part_seed`]): its hasher's, and the
    /// key a combination's hash is mixed from.
    pub(crate) key: u64,
    pub(crate) filter: F,
}

impl<F> Part<F> {
    /// The part for `mask` of a filter hashing with `family`: its hasher is `family`
    /// reseeded (same id, a seed derived from the family's and the mask).
    pub(crate) fn new<S: PortableHasher>(
        family: &S,
        mask: Mask,
        filter: impl FnOnce(S) -> Result<F, Error>,
    ) -> Result<Part<F>, Error> {
        let key = part_seed(family.seed(), mask);
        Ok(Part {
            mask,
            key,
            filter: filter(family.reseeded(key))?,
        })
    }
}

/// The seed of the part over `mask`, derived from the filter's seed: one attribute's part
/// and a combination's never share a seed (different tags), and the derivation is a
/// bijective mix (splitmix64's finalizer), so distinct tags give distinct seeds.
pub(crate) fn part_seed(seed: u64, mask: Mask) -> u64 {
    let tag = if mask.count_ones() == 1 {
        u64::from(mask.trailing_zeros())
    } else {
        (1 << 32) | u64::from(mask)
    };
    mix(seed ^ tag.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// splitmix64's finalizer: a bijection of `u64` whose every output bit depends on every
/// input bit.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The hash of a combination of attributes: their hashes (seeded, one per attribute)
/// chained through [`mix`] from the part's `key`, in attribute order. For a fixed prefix
/// each step is a bijection of the next attribute's hash, so combinations that differ in
/// any attribute collide only by chance; and it costs a few multiplications where hashing
/// the attribute hashes again would cost another hash per combination (measured:
/// `benches/multi.rs`).
#[inline]
fn combine(key: u64, mask: Mask, hashes: &Hashes) -> u64 {
    let mut acc = key;
    let mut rest = mask;
    while rest != 0 {
        let i = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        acc = mix(acc ^ hashes[i % MAX_ATTRIBUTES]);
    }
    acc
}

/// The hash the part over `mask` (with key `key`) is probed with, from a record's or
/// query's hashes: an attribute's own hash, or the combination's.
#[inline]
fn probe_hash(key: u64, mask: Mask, hashes: &Hashes) -> u64 {
    if mask.count_ones() == 1 {
        hashes[mask.trailing_zeros() as usize % MAX_ATTRIBUTES]
    } else {
        combine(key, mask, hashes)
    }
}

/// The attribute indices of `mask`, in order.
pub(crate) fn indices(mask: Mask) -> impl Iterator<Item = usize> {
    (0..MAX_ATTRIBUTES).filter(move |&i| mask & (1 << i) != 0)
}

/// The mask of all `arity` attributes.
pub(crate) fn full_mask(arity: usize) -> Mask {
    if arity >= 32 {
        Mask::MAX
    } else {
        (1 << arity) - 1
    }
}

/// Hashes each visited attribute with its own part's hasher, counting them.
struct Hashing<'a, F> {
    attributes: &'a [Part<F>],
    hashes: Hashes,
    count: usize,
}

impl<F: PartFilter> Visitor for Hashing<'_, F> {
    #[inline]
    fn attribute<T: Hash + ?Sized>(&mut self, value: &T) {
        if let Some(part) = self.attributes.get(self.count) {
            self.hashes[self.count] = part.filter.hasher().hash_one(value);
        }
        self.count = self.count.saturating_add(1);
    }
}

/// Every part of a filter, and the reads over them.
#[derive(Clone, PartialEq)]
pub(crate) struct Parts<F> {
    /// Attribute `i`'s part at index `i`.
    pub(crate) attributes: Vec<Part<F>>,
    /// The combinations kept, by increasing mask; the record-level filter (every
    /// attribute's bit set), if kept, is last.
    pub(crate) combos: Vec<Part<F>>,
    /// The record-level part's key (even when it is not kept): what a whole record's
    /// attribute hashes combine from into its one hash (`Lookup::hash_key`).
    pub(crate) record_key: u64,
}

impl<F> Parts<F> {
    /// The parts of a filter hashing with `family` (checked by the caller).
    pub(crate) fn new<S: PortableHasher>(
        family: &S,
        attributes: Vec<Part<F>>,
        combos: Vec<Part<F>>,
    ) -> Self {
        Parts {
            record_key: part_seed(family.seed(), full_mask(attributes.len())),
            attributes,
            combos,
        }
    }

    /// Every part: the attributes' in order, then the combinations'.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Part<F>> {
        self.attributes.iter().chain(&self.combos)
    }

    pub(crate) fn all_mut(&mut self) -> impl Iterator<Item = &mut Part<F>> {
        self.attributes.iter_mut().chain(&mut self.combos)
    }

    pub(crate) fn arity(&self) -> usize {
        self.attributes.len()
    }

    pub(crate) fn full(&self) -> Mask {
        full_mask(self.attributes.len())
    }

    /// The record-level filter, if kept (a record of one attribute is that attribute: its
    /// filter is the record-level one).
    pub(crate) fn record_part(&self) -> Option<&Part<F>> {
        let full = self.full();
        self.combos
            .last()
            .or(self.attributes.first())
            .filter(|p| p.mask == full)
    }

    /// The declared attribute subsets (each as attribute indices), not counting the
    /// record-level filter.
    pub(crate) fn subsets(&self) -> Vec<Vec<usize>> {
        let full = self.full();
        self.combos
            .iter()
            .filter(|p| p.mask != full)
            .map(|p| indices(p.mask).collect())
            .collect()
    }

    /// The parts a query over `mask` consults, in order: the one kept for exactly `mask` if
    /// any (the most selective: a "no" there ends the query), then every attribute of `mask`
    /// and every other kept combination inside it. A false positive must pass them all, so
    /// the query's rate is the product of theirs.
    pub(crate) fn consulted(&self, mask: Mask) -> impl Iterator<Item = &Part<F>> {
        // Combinations have two attributes or more, so `own` is never an attribute's part.
        let own = self.combos.iter().find(|p| p.mask == mask);
        let inside = move |p: &&Part<F>| p.mask & !mask == 0;
        own.into_iter()
            .chain(self.attributes.iter().filter(inside))
            .chain(
                self.combos
                    .iter()
                    .filter(inside)
                    .filter(move |p| p.mask != mask),
            )
    }

    /// The hash `part` is probed with for a record or query of `hashes`.
    #[inline]
    pub(crate) fn part_hash(part: &Part<F>, hashes: &Hashes) -> u64 {
        probe_hash(part.key, part.mask, hashes)
    }
}

impl<F: PartFilter> Parts<F> {
    /// The shape of every part, for `Debug`.
    pub(crate) fn debug(
        &self,
        name: &str,
        hasher: &dyn fmt::Debug,
        f: &mut fmt::Formatter<'_>,
    ) -> fmt::Result {
        let part = |p: &Part<F>| {
            (
                indices(p.mask).collect::<Vec<_>>(),
                p.filter.num_bits(),
                p.filter.num_hashes(),
                p.filter.count_ones(),
            )
        };
        f.debug_struct(name)
            .field("arity", &self.attributes.len())
            .field(
                "attributes (bits, probes, ones)",
                &self.attributes.iter().map(part).collect::<Vec<_>>(),
            )
            .field(
                "combinations (attributes, bits, probes, ones)",
                &self.combos.iter().map(part).collect::<Vec<_>>(),
            )
            .field("hasher", hasher)
            .finish()
    }

    pub(crate) fn probe_scheme(&self) -> ProbeScheme {
        self.attributes[0].filter.probe_scheme()
    }

    pub(crate) fn info(&self) -> Vec<PartInfo> {
        self.all()
            .map(|p| {
                let design = p.filter.design();
                PartInfo {
                    attributes: indices(p.mask).collect(),
                    bits: p.filter.num_bits(),
                    hashes: p.filter.num_hashes(),
                    capacity: design.map_or(0, |d| d.capacity),
                    fpr: design.map_or(f64::NAN, |d| d.fpr),
                }
            })
            .collect()
    }

    /// Whether no record has been inserted since the last clear (every insert sets bits in
    /// every attribute's array).
    pub(crate) fn is_empty(&self) -> bool {
        self.attributes[0].filter.is_empty()
    }

    /// Whether the values in `hashes` at `mask` may be one record's.
    pub(crate) fn contains_mask(&self, mask: Mask, hashes: &Hashes) -> bool {
        if mask == 0 {
            return !self.is_empty();
        }
        self.consulted(mask)
            .all(|p| p.filter.contains_hash(Self::part_hash(p, hashes)))
    }

    /// The attribute hashes of `record`, and how many attributes it visited.
    fn visit<Q: Record + ?Sized>(&self, record: &Q) -> (Hashes, usize) {
        let mut v = Hashing {
            attributes: &self.attributes,
            hashes: [0; MAX_ATTRIBUTES],
            count: 0,
        };
        record.visit(&mut v);
        (v.hashes, v.count)
    }

    /// Hashes `record`'s attributes; the record's arity must be the filter's.
    pub(crate) fn hash_record<Q: Record + ?Sized>(&self, record: &Q) -> Result<Hashes, Error> {
        let (hashes, count) = self.visit(record);
        if count != self.attributes.len() {
            return Err(Error::WrongArity {
                expected: self.attributes.len(),
                found: count,
            });
        }
        Ok(hashes)
    }

    /// The record's one hash: its attribute hashes combined with the record-level key.
    pub(crate) fn hash_key<Q: Record + ?Sized>(&self, record: &Q) -> u64 {
        probe_hash(self.record_key, self.full(), &self.visit(record).0)
    }

    /// Whether `record` may have been inserted (see `MultiFilter::contains`).
    pub(crate) fn contains<Q: Record + ?Sized>(&self, record: &Q) -> bool {
        match self.hash_record(record) {
            Ok(hashes) => self.contains_mask(self.full(), &hashes),
            Err(_) => false,
        }
    }

    /// Whether attribute `index` may be `value` in some record: its own filter's answer
    /// (no combination has one attribute).
    pub(crate) fn contains_attr<Q: Hash + ?Sized>(&self, index: usize, value: &Q) -> bool {
        self.attributes
            .get(index)
            .is_some_and(|p| p.filter.contains_hash(p.filter.hasher().hash_one(value)))
    }

    /// What a query over `attributes` promises, each consulted part's rate given by `rate`.
    pub(crate) fn query_fpr(
        &self,
        attributes: &[usize],
        rate: impl Fn(&F) -> f64,
    ) -> Result<QueryFpr, Error> {
        let mask = mask_of(attributes, self.arity())?;
        if mask == 0 {
            return Err(Error::InvalidSubset {
                subset: Vec::new(),
                reason: "a query needs at least one attribute",
            });
        }
        let own = self.combos.iter().find(|p| p.mask == mask);
        let new_values = self.consulted(mask).map(|p| rate(&p.filter)).product();
        let recombined = match (mask.count_ones(), own) {
            (1, _) => None,
            (_, Some(p)) => Some(rate(&p.filter)),
            (_, None) => Some(1.0),
        };
        Ok(QueryFpr {
            new_values,
            recombined,
        })
    }

    /// [`query_fpr`](Self::query_fpr) at each part's design load.
    pub(crate) fn predicted_fpr(&self, attributes: &[usize]) -> Result<QueryFpr, Error> {
        self.query_fpr(attributes, |f| {
            f.design().map_or(f64::NAN, |d| f.fpr_at(d.capacity))
        })
    }

    /// [`query_fpr`](Self::query_fpr) from each part's fill.
    pub(crate) fn estimated_fpr_of(&self, attributes: &[usize]) -> Result<QueryFpr, Error> {
        self.query_fpr(attributes, sealed::Part::estimated_fpr)
    }

    /// Bytes of heap memory: every part's bit array (none for a view's) and its entry.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.all()
            .map(|p| p.filter.heap_bytes() + core::mem::size_of::<Part<F>>())
            .sum()
    }

    /// `LookupCore::contains_hash`: the record-level filter's answer (`true` without it).
    pub(crate) fn contains_record_hash(&self, hash: u64) -> bool {
        self.record_part()
            .is_none_or(|p| p.filter.contains_hash(hash))
    }

    /// Records, from the record-level filter's fill; without it, the most distinct values
    /// (or combinations) any part holds, a lower bound.
    pub(crate) fn estimated_len(&self) -> f64 {
        match self.record_part() {
            Some(p) => p.filter.estimated_len(),
            None => self
                .consulted(self.full())
                .map(|p| p.filter.estimated_len())
                .fold(0.0, f64::max),
        }
    }

    /// The record-level filter's target, if it is kept.
    pub(crate) fn target_fpr(&self) -> Option<f64> {
        self.record_part()
            .and_then(|p| p.filter.design())
            .map(|d| d.fpr)
    }

    /// The whole-record query's rate from the fill.
    pub(crate) fn estimated_fpr(&self) -> f64 {
        self.consulted(self.full())
            .map(|p| p.filter.estimated_fpr())
            .product()
    }
}
