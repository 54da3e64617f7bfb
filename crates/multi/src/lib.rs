//! The multi-attribute ("parallel") Bloom filter: records of several attributes (fields),
//! one bit array and one group of hash functions per attribute, queried by one attribute, by
//! any subset of attributes, or whole (Xiao & Hua, "Using Parallel Bloom Filters for
//! Multi-Attribute Representation on Network Services", IEEE TPDS 21(1), 2010).
//!
//! Per-attribute answers are independent, so a record assembled from the fields of different
//! stored records (`(a1, b2)` after inserting `(a1, b1)` and `(a2, b2)`) passes every
//! attribute filter: on attributes alone it is reported present however large the filters
//! are. As the paper does, the filter keeps a **record-level filter** over whole records (on
//! by default; turn it off to save memory) and, for the attribute subsets you declare you will
//! query, a filter over each subset's combined values; a query answered by one of those is
//! wrong at most at that filter's rate, whatever the combination.
//!
//! Each attribute is sized from its own number of distinct values and rate, with its own seed
//! derived from the filter's, through bloomkit's hashing and sizing: every bit array is a
//! [`BloomFilter`] from `bloomkit-classic`. An attribute's value is hashed once; a
//! combination's hash is derived from its attributes' hashes, so a record costs one hash per
//! attribute however many combinations are kept.
//!
//! # Examples
//!
//! ```
//! use bloomkit_multi::MultiFilter;
//!
//! // Requests as (source address, user agent, path): 100,000 records at 1%, with few
//! // distinct agents; the (address, path) pair is queried, so it gets its own filter.
//! let mut seen = MultiFilter::<(String, String, String)>::builder(100_000, 0.01)
//!     .attribute(1, 1_000, 0.01)? // about 1,000 distinct user agents
//!     .subset(&[0, 2])?
//!     .build()?;
//! let request = ("10.0.0.1".to_string(), "curl/8.5".to_string(), "/login".to_string());
//! assert!(seen.try_insert(&request)?); // certainly new
//! seen.try_insert(&("10.0.0.2".into(), "firefox".into(), "/".into()))?;
//!
//! assert!(seen.contains(&request));
//! assert!(seen.query().attr::<0>("10.0.0.1").contains()); // seen this address?
//! assert!(seen.query().attr::<0>("10.0.0.1").attr::<2>("/login").contains());
//! // A pair assembled from two records: every attribute filter says yes, the pair's own
//! // filter says no (wrong at most 1% of the time).
//! assert!(!seen.query().attr::<0>("10.0.0.2").attr::<2>("/login").contains());
//! // What each kind of query promises, from the sizing module:
//! let rates = seen.predicted_fpr(&[0, 1])?;
//! println!("(address, agent) query: {:e} for new values, {:?} for recombined ones",
//!          rates.new_values, rates.recombined);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! # How a query is answered
//!
//! A query over a set of attributes `Q` (one, several, or all of them) asks the filter kept
//! for exactly `Q` first, if there is one (the record-level filter for all of them, a
//! declared subset): a "no" there ends it. Then every attribute filter of `Q` and every
//! declared subset inside `Q` must say yes too, so a false positive must pass them all and
//! the query's rate is the product of theirs. An inserted record's values pass every part
//! (no false negatives). [`MultiFilter::predicted_fpr`] gives the rate of each query kind at
//! design load and [`MultiFilter::estimated_fpr_of`] from the current fill.
//!
//! # Crate features
//!
//! - `serde` (default): `Serialize`/`Deserialize` and bloomkit's byte format
//!   ([`MultiFilter::to_bytes`], [`MultiFilter::from_bytes`], `docs/format.md`), and
//!   [`MultiFilterRef`], the zero-copy view that answers from those bytes in place.

#![forbid(unsafe_code)]

/// The core crate this one builds on (the `Filter` trait, errors, hashing, sizing).
pub use bloomkit_core;

use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use derive_where::derive_where;

use bloomkit_classic::BloomFilter;
use bloomkit_core::hash::ProbeScheme;
use bloomkit_core::{
    Error, Filter, FilterCore, Intersection, Lookup, LookupCore, Parameter, PortableHasher, Union,
    Xxh3Builder,
};

#[cfg(feature = "serde")]
mod codec;
mod parts;
mod record;

#[cfg(feature = "serde")]
pub use codec::MultiFilterRef;
pub use parts::PartFilter;
pub use record::{
    Attribute, DynamicRecord, FixedArity, QueryValue, Record, Visitor, MAX_ATTRIBUTES,
};

use parts::{full_mask, indices, Hashes, Mask, Part, Parts};

/// The filter of one part of an owned filter: a classic filter probed by hash (its key
/// type is unused).
type OwnedPart<S> = BloomFilter<(), S>;

/// What a query promises: its false-positive rate for the two kinds of non-members.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryFpr {
    /// For a non-member whose queried values were none of them inserted: every filter the
    /// query consults must err at once.
    pub new_values: f64,
    /// For a combination of values each of which was inserted, in different records, that
    /// no record holds together: only a filter kept for exactly these attributes can tell,
    /// so without one this is 1. `None` for a one-attribute query, where there are no
    /// combinations.
    pub recombined: Option<f64>,
}

/// One bit array of a [`MultiFilter`], as [`MultiFilter::parts`] describes it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PartInfo {
    /// The attributes it is over: one for an attribute filter, several for a declared
    /// subset, all of them for the record-level filter.
    pub attributes: Vec<usize>,
    /// Its bits.
    pub bits: u64,
    /// Its probes per value.
    pub hashes: u32,
    /// The distinct values (or combinations) it was sized for.
    pub capacity: u64,
    /// The false-positive rate it was sized for.
    pub fpr: f64,
}

/// A multi-attribute Bloom filter over records of type `R` (see the [crate] docs).
///
/// `R` is a tuple of up to 12 hashable fields, a type of yours implementing [`Record`], or a
/// dynamic record (`[T]`, `Vec<T>`) whose arity the builder is given. `S` is the hasher
/// family: every part hashes with the filter's hasher reseeded
/// ([`PortableHasher::reseeded`]) with a seed derived from the filter's.
#[derive_where(Clone, PartialEq; S)]
pub struct MultiFilter<R: ?Sized, S = Xxh3Builder> {
    parts: Parts<OwnedPart<S>>,
    /// The filter's hasher: its seed is the one every part's derives from.
    hasher: S,
    record: PhantomData<fn(&R)>,
}

impl<R: ?Sized, S: fmt::Debug + BuildHasher> fmt::Debug for MultiFilter<R, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.parts.debug("MultiFilter", &self.hasher, f)
    }
}

/// Builds a [`MultiFilter`]: every attribute and combination sized from the filter's
/// records and rate unless told otherwise. Made by [`MultiFilter::builder`].
#[derive(Debug, Clone)]
pub struct MultiBuilder<R: ?Sized, S = Xxh3Builder> {
    records: u64,
    fpr: f64,
    arity: Option<usize>,
    /// (attribute, distinct values, rate).
    attributes: Vec<(usize, u64, f64)>,
    /// (mask, values, rate).
    subsets: Vec<(Mask, u64, f64)>,
    /// Whether the record-level filter is kept, and how it is sized (by default for the
    /// filter's records and rate; `subset_sized` over every attribute resizes it alone).
    record_filter: bool,
    record_size: (u64, f64),
    probes: ProbeScheme,
    /// The most heap the parts together may take.
    max_bytes: Option<u64>,
    hasher: S,
    record: PhantomData<fn(&R)>,
}

impl<R: Record + ?Sized> MultiFilter<R> {
    /// A filter for `records` records at false-positive rate `fpr`: a record-level filter
    /// sized for that, and each attribute sized for `records` distinct values at `fpr`
    /// (an upper bound; say how many distinct values an attribute has with
    /// [`MultiBuilder::attribute`] to save memory). Seed 0.
    ///
    /// # Errors
    /// [`Error::ZeroItems`], [`Error::InvalidFpr`], sizes that overflow; for dynamic records
    /// (`[T]`, `Vec<T>`), [`Error::InvalidArity`]: use the builder and
    /// [`MultiBuilder::arity`].
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_multi::MultiFilter;
    ///
    /// let mut f = MultiFilter::<(u32, &str)>::new(1_000, 0.01)?;
    /// f.try_insert(&(7, "seven"))?;
    /// assert!(f.contains(&(7, "seven")));
    /// assert!(f.query().attr::<1>("seven").contains());
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn new(records: u64, fpr: f64) -> Result<Self, Error> {
        Self::builder(records, fpr).build()
    }

    /// A builder for a filter of `records` records at rate `fpr` (see [`MultiBuilder`]).
    pub fn builder(records: u64, fpr: f64) -> MultiBuilder<R> {
        MultiBuilder {
            records,
            fpr,
            arity: R::ARITY,
            attributes: Vec::new(),
            subsets: Vec::new(),
            record_filter: true,
            record_size: (records, fpr),
            probes: ProbeScheme::default(),
            max_bytes: None,
            hasher: Xxh3Builder::default(),
            record: PhantomData,
        }
    }
}

/// The attributes of `list` as a mask, checked against the arity.
fn mask_of(list: &[usize], arity: usize) -> Result<Mask, Error> {
    let mut mask: Mask = 0;
    for &i in list {
        if i >= arity {
            return Err(Error::NoSuchAttribute { index: i, arity });
        }
        if mask & (1 << i) != 0 {
            return Err(Error::InvalidSubset {
                subset: list.to_vec(),
                reason: "it names an attribute twice",
            });
        }
        mask |= 1 << i;
    }
    Ok(mask)
}

impl<R: Record + ?Sized, S: PortableHasher> MultiBuilder<R, S> {
    /// The number of attributes, for dynamic records (`[T]`, `Vec<T>`); for a type that
    /// fixes its arity, it must agree.
    ///
    /// # Errors
    /// [`Error::InvalidArity`] outside `1..=MAX_ATTRIBUTES`; [`Error::WrongArity`] if the
    /// record type has another arity.
    pub fn arity(mut self, arity: usize) -> Result<Self, Error> {
        if !(1..=MAX_ATTRIBUTES).contains(&arity) {
            return Err(Error::InvalidArity {
                arity,
                max: MAX_ATTRIBUTES,
            });
        }
        if let Some(fixed) = R::ARITY {
            if fixed != arity {
                return Err(Error::WrongArity {
                    expected: fixed,
                    found: arity,
                });
            }
        }
        self.arity = Some(arity);
        Ok(self)
    }

    fn checked_arity(&self) -> Result<usize, Error> {
        match self.arity {
            Some(a) if (1..=MAX_ATTRIBUTES).contains(&a) => Ok(a),
            other => Err(Error::InvalidArity {
                arity: other.unwrap_or(0),
                max: MAX_ATTRIBUTES,
            }),
        }
    }

    /// Sizes attribute `index` for `distinct` distinct values at rate `fpr` (default: the
    /// filter's records and rate). An attribute with few distinct values (a country, a
    /// status code) needs few bits.
    ///
    /// # Errors
    /// [`Error::NoSuchAttribute`]; [`Error::InvalidArity`] for a dynamic record before
    /// [`arity`](Self::arity). (Bad sizes are reported by [`build`](Self::build).)
    pub fn attribute(mut self, index: usize, distinct: u64, fpr: f64) -> Result<Self, Error> {
        let arity = self.checked_arity()?;
        mask_of(&[index], arity)?;
        self.attributes.retain(|&(i, _, _)| i != index);
        self.attributes.push((index, distinct, fpr));
        Ok(self)
    }

    /// Declares a subset of attributes (two or more, by index) that will be queried
    /// together, so that it gets a filter over its combined values, sized for the filter's
    /// records and rate: its queries are then wrong at most at that rate, even for
    /// combinations of values taken from different records. (All the attributes together
    /// are the record-level filter, kept by default.)
    ///
    /// # Errors
    /// As [`subset_sized`](Self::subset_sized).
    pub fn subset(self, attributes: &[usize]) -> Result<Self, Error> {
        let (records, fpr) = (self.records, self.fpr);
        self.subset_sized(attributes, records, fpr)
    }

    /// [`subset`](Self::subset), sized for `combinations` distinct combinations at `fpr`.
    /// Naming every attribute sizes the record-level filter (and keeps it).
    ///
    /// # Errors
    /// [`Error::NoSuchAttribute`]; [`Error::InvalidSubset`] for fewer than two attributes,
    /// an attribute named twice, or a subset declared twice.
    pub fn subset_sized(
        mut self,
        attributes: &[usize],
        combinations: u64,
        fpr: f64,
    ) -> Result<Self, Error> {
        let arity = self.checked_arity()?;
        let mask = mask_of(attributes, arity)?;
        let invalid = |reason| Error::InvalidSubset {
            subset: attributes.to_vec(),
            reason,
        };
        if mask.count_ones() < 2 {
            return Err(invalid(
                "a subset needs two or more attributes (one attribute has its own filter)",
            ));
        }
        if mask == full_mask(arity) {
            self.record_filter = true;
            self.record_size = (combinations, fpr);
            return Ok(self);
        }
        if self.subsets.iter().any(|&(m, _, _)| m == mask) {
            return Err(invalid("it is declared twice"));
        }
        self.subsets.push((mask, combinations, fpr));
        Ok(self)
    }

    /// Whether to keep the record-level filter (default `true`). Without it, whole-record
    /// queries are answered by the attribute filters (and declared subsets) alone, so a
    /// record assembled from other records' values is reported present; the filter then
    /// has no target for whole records ([`LookupCore::target_fpr`] is `None`). (A record of
    /// one attribute is that attribute: its filter stays, as the record-level filter.)
    pub fn record_filter(mut self, keep: bool) -> Self {
        self.record_filter = keep;
        self
    }

    /// The seed every part's seed derives from (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.hasher = self.hasher.reseeded(seed);
        self
    }

    /// Refuse to build a filter whose parts would hold more than `limit` bytes of heap
    /// together ([`MultiFilter::heap_bytes`]): [`Error::OverLimit`] with what it would
    /// need, before anything is allocated. The limit of every builder in bloomkit.
    pub fn max_bytes(mut self, limit: u64) -> Self {
        self.max_bytes = Some(limit);
        self
    }

    /// Place every part's positions by `scheme` instead of the default
    /// ([`ProbeScheme::Wide`]); see `bloomkit_core::build::Builder::probe_scheme`.
    pub fn probe_scheme(mut self, scheme: ProbeScheme) -> Self {
        self.probes = scheme;
        self
    }

    /// Another hasher family (every part hashes with `hasher` reseeded with its derived seed).
    pub fn hasher<H: PortableHasher>(self, hasher: H) -> MultiBuilder<R, H> {
        MultiBuilder {
            records: self.records,
            fpr: self.fpr,
            arity: self.arity,
            attributes: self.attributes,
            subsets: self.subsets,
            record_filter: self.record_filter,
            record_size: self.record_size,
            probes: self.probes,
            max_bytes: self.max_bytes,
            hasher,
            record: PhantomData,
        }
    }

    /// The filter.
    ///
    /// # Errors
    /// [`Error::ZeroItems`], [`Error::InvalidFpr`] and the other sizing errors of any part;
    /// [`Error::InvalidArity`] for a dynamic record without [`arity`](Self::arity).
    pub fn build(self) -> Result<MultiFilter<R, S>, Error> {
        let arity = self.checked_arity()?;
        // Every part's (mask, values, rate): the attributes in order, then the combinations.
        let mut wanted: Vec<(Mask, u64, f64)> = (0..arity)
            .map(|i| {
                let (n, p) = self
                    .attributes
                    .iter()
                    .find(|&&(a, _, _)| a == i)
                    .map_or((self.records, self.fpr), |&(_, n, p)| (n, p));
                (1 << i, n, p)
            })
            .collect();
        let mut combos = self.subsets.clone();
        // One attribute: its filter is the record-level filter.
        if self.record_filter && arity > 1 {
            let (n, p) = self.record_size;
            combos.push((full_mask(arity), n, p));
        }
        combos.sort_by_key(|&(mask, _, _)| mask);
        wanted.extend(combos);
        let family = &self.hasher;
        let part = |(mask, n, p): (Mask, u64, f64), limit: Option<u64>| {
            Part::new(family, mask, |hasher| {
                let b = BloomFilter::<()>::builder(n, p)
                    .hasher(hasher)
                    .probe_scheme(self.probes);
                match limit {
                    Some(limit) => b.max_bytes(limit),
                    None => b,
                }
                .build()
            })
        };
        if let Some(limit) = self.max_bytes {
            // What each part needs, asked of its builder with a limit of 0 (which refuses
            // before allocating), so the whole filter is refused before any part exists.
            let mut needed = 0u64;
            for &(mask, n, p) in &wanted {
                let bytes = match part((mask, n, p), Some(0)) {
                    Err(Error::OverLimit { needed, .. }) => needed,
                    Err(other) => return Err(other),
                    Ok(part) => part.filter.heap_bytes() as u64,
                };
                needed = needed
                    .saturating_add(bytes + core::mem::size_of::<Part<OwnedPart<S>>>() as u64);
            }
            if needed > limit {
                return Err(Error::OverLimit {
                    what: bloomkit_core::Limit::Bytes,
                    needed,
                    limit,
                });
            }
        }
        let mut parts = wanted
            .into_iter()
            .map(|spec| part(spec, None))
            .collect::<Result<Vec<_>, Error>>()?;
        let combos = parts.split_off(arity);
        Ok(MultiFilter::assemble(self.hasher, parts, combos))
    }
}

impl<R: ?Sized, S: PortableHasher> MultiFilter<R, S> {
    /// The filter from its parts (checked by the caller).
    fn assemble(
        hasher: S,
        attributes: Vec<Part<OwnedPart<S>>>,
        combos: Vec<Part<OwnedPart<S>>>,
    ) -> Self {
        MultiFilter {
            parts: Parts::new(&hasher, attributes, combos),
            hasher,
            record: PhantomData,
        }
    }
}

/// The reads of a multi-attribute filter, written once for the owned filter and its view
/// (`$part` is the type of their parts: the only difference is where the bits lie).
macro_rules! reads {
    ($([$($g:tt)*] $ty:ty, part = $part:ty;)*) => {$(
        impl<$($g)*> $ty where S: BuildHasher {
            /// The number of attributes of the filter's records.
            pub fn arity(&self) -> usize {
                self.parts.arity()
            }

            /// How a value's positions follow from its hash in every part
            /// (`BloomFilter::probe_scheme`): [`ProbeScheme::Wide`] for every filter this
            /// build creates, [`ProbeScheme::Enhanced`] for one read from bytes of format
            /// version 2.
            pub fn probe_scheme(&self) -> ProbeScheme {
                self.parts.probe_scheme()
            }

            /// Whether the filter keeps a record-level filter over whole records.
            pub fn has_record_filter(&self) -> bool {
                self.parts.record_part().is_some()
            }

            /// The declared attribute subsets (each as attribute indices), not counting the
            /// record-level filter.
            pub fn subsets(&self) -> Vec<Vec<usize>> {
                self.parts.subsets()
            }

            /// Every bit array: the attributes' in order, then the combinations' (declared
            /// subsets, then the record-level filter), with their sizes and design points.
            pub fn parts(&self) -> Vec<PartInfo> {
                self.parts.info()
            }

            /// Whether no record has been inserted since the last clear (every insert sets
            /// bits in every attribute's array).
            pub fn is_empty(&self) -> bool {
                self.parts.is_empty()
            }

            /// A query by some of the attributes: add values with [`Query::attr`] (typed) or
            /// [`Query::try_attr`] (by index), then ask [`Query::contains`].
            ///
            /// # Examples
            ///
            /// ```
            /// use bloomkit_multi::MultiFilter;
            ///
            /// let mut f = MultiFilter::<(&str, u16, &str)>::new(1_000, 0.01)?;
            /// f.try_insert(&("alice", 443, "/login"))?;
            /// assert!(f.query().attr::<0>("alice").attr::<1>(&443).contains());
            /// assert!(!f.query().attr::<0>("alice").attr::<1>(&80).contains());
            /// # Ok::<(), bloomkit_core::Error>(())
            /// ```
            pub fn query(&self) -> Query<'_, R, S, $part> {
                Query {
                    parts: &self.parts,
                    hashes: [0; MAX_ATTRIBUTES],
                    mask: 0,
                    contradiction: false,
                    types: PhantomData,
                }
            }

            /// What a query over `attributes` (indices) promises at the design load of every
            /// part it consults, from the sizing module (`sizing::fpr_model` of each part,
            /// multiplied where independent parts must all err).
            ///
            /// # Errors
            /// [`Error::NoSuchAttribute`], [`Error::InvalidSubset`] for an attribute named
            /// twice.
            pub fn predicted_fpr(&self, attributes: &[usize]) -> Result<QueryFpr, Error> {
                self.parts.predicted_fpr(attributes)
            }

            /// As [`predicted_fpr`](Self::predicted_fpr), from each part's current fill
            /// instead of its design load.
            ///
            /// # Errors
            /// As [`predicted_fpr`](Self::predicted_fpr).
            pub fn estimated_fpr_of(&self, attributes: &[usize]) -> Result<QueryFpr, Error> {
                self.parts.estimated_fpr_of(attributes)
            }

            /// Bytes of heap memory, all parts together (a view's bit arrays are borrowed:
            /// only its list of parts).
            pub fn heap_bytes(&self) -> usize {
                self.parts.heap_bytes()
            }
        }

        impl<$($g)*> $ty where R: Record, S: BuildHasher {
            /// Whether `record` may have been inserted. The record-level filter answers first
            /// (a "no" there ends the query); on a "maybe", every attribute filter and
            /// declared subset must agree too, so a record of new values is a false positive
            /// only if every part errs: the rate is their product, not the record-level
            /// filter's alone ([`predicted_fpr`](Self::predicted_fpr) of all attributes,
            /// `new_values`). A dynamic record of another arity was never inserted: `false`.
            pub fn contains(&self, record: &R) -> bool {
                self.parts.contains(record)
            }

            /// Whether some inserted record's attribute `I` may be `value` (a shorthand for
            /// `query().attr::<I>(value).contains()`).
            pub fn contains_attr<const I: usize>(
                &self,
                value: &(impl QueryValue<<R as Attribute<I>>::Value> + ?Sized),
            ) -> bool
            where
                R: Attribute<I>,
            {
                self.parts.contains_attr(I, value)
            }
        }

        /// Whole records are the keys. The hash entry points (`hash_key`, `contains_hash`)
        /// address the record-level filter, which one hash can reach: `contains_hash`
        /// answers from it alone (`true` without it: it cannot tell).
        impl<$($g)*> LookupCore for $ty where R: Record, S: BuildHasher {
            fn contains_hash(&self, hash: u64) -> bool {
                self.parts.contains_record_hash(hash)
            }
            /// Records, from the record-level filter's fill; without it, the most distinct
            /// values (or combinations) any part holds, a lower bound.
            fn estimated_len(&self) -> f64 {
                self.parts.estimated_len()
            }
            fn heap_bytes(&self) -> usize {
                self.parts.heap_bytes()
            }
            /// The record-level filter's target; `None` without it (whole-record queries then
            /// have no bound for recombined records).
            fn target_fpr(&self) -> Option<f64> {
                self.parts.target_fpr()
            }
            /// For whole-record queries: `estimated_fpr_of` all attributes, its `new_values`
            /// rate (without a record-level filter, recombined records pass).
            fn estimated_fpr(&self) -> f64 {
                self.parts.estimated_fpr()
            }
        }

        impl<$($g)*> Lookup for $ty where R: Record, S: BuildHasher {
            type Key = R;

            /// The record's one hash: its attribute hashes combined with the record-level
            /// hasher.
            fn hash_key(&self, record: &R) -> u64 {
                self.parts.hash_key(record)
            }
            fn contains(&self, record: &R) -> bool {
                self.parts.contains(record)
            }
        }
    )*};
}

reads! {
    [R: ?Sized, S] MultiFilter<R, S>, part = OwnedPart<S>;
}
#[cfg(feature = "serde")]
reads! {
    ['a, R: ?Sized, S] MultiFilterRef<'a, R, S>, part = bloomkit_classic::BloomFilterRef<'a, (), S>;
}

impl<R: ?Sized, S: BuildHasher> MultiFilter<R, S> {
    /// Removes every record, keeping the parameters and allocations.
    pub fn clear(&mut self) {
        for p in self.parts.all_mut() {
            p.filter.clear();
        }
    }
}

/// Inserts every record (or reference to one) of a type whose arity is fixed
/// ([`FixedArity`]: the tuples), whose inserts cannot fail. Dynamic records take
/// [`try_insert`](MultiFilter::try_insert), which refuses a record of another arity.
///
/// # Examples
///
/// ```
/// use bloomkit_multi::MultiFilter;
///
/// let mut orders = MultiFilter::<(u32, &str)>::new(1_000, 0.01)?;
/// orders.extend([(7, "paris"), (9, "lyon")]);
/// assert!(orders.contains(&(7, "paris")));
/// assert!(orders.query().attr::<1>("lyon").contains());
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
impl<R: FixedArity + ?Sized, S: BuildHasher, T: core::borrow::Borrow<R>> Extend<T>
    for MultiFilter<R, S>
{
    fn extend<I: IntoIterator<Item = T>>(&mut self, records: I) {
        for record in records {
            // Never refused: the filter was built with the arity the type fixes (`R::ARITY`,
            // checked again when bytes are read), and a tuple visits exactly that many values.
            let _ = self.try_insert(record.borrow());
        }
    }
}

impl<R: Record + ?Sized, S: BuildHasher> MultiFilter<R, S> {
    /// Inserts `record` into every part. Returns `Ok(true)` if it was certainly not present
    /// before (a whole-record query would have said no), `Ok(false)` if it may have been.
    ///
    /// # Errors
    /// [`Error::WrongArity`] for a dynamic record of another length; nothing is changed.
    /// (Records whose type fixes the arity are never refused.)
    pub fn try_insert(&mut self, record: &R) -> Result<bool, Error> {
        let hashes = self.parts.hash_record(record)?;
        let mut new = false;
        for p in self.parts.all_mut() {
            let hash = Parts::part_hash(p, &hashes);
            // A whole-record query consults every part: it would have said no exactly when
            // some part changes (rust-lang/rust#158206: an `if`, not arithmetic on the flag).
            if p.filter.insert_hash(hash) {
                new = true;
            }
        }
        Ok(new)
    }
}

/// A query by some attributes of a [`MultiFilter`]'s records (or a [`MultiFilterRef`]'s:
/// `F` is the type of the filter's parts); made by [`MultiFilter::query`].
pub struct Query<'f, R: ?Sized, S = Xxh3Builder, F = BloomFilter<(), S>> {
    parts: &'f Parts<F>,
    hashes: Hashes,
    mask: Mask,
    /// Two different values given for one attribute: no record has both.
    contradiction: bool,
    types: PhantomData<fn(&R, &S)>,
}

impl<R: ?Sized, S, F> fmt::Debug for Query<'_, R, S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Query")
            .field("attributes", &indices(self.mask).collect::<Vec<_>>())
            .field("contradiction", &self.contradiction)
            .finish_non_exhaustive()
    }
}

impl<R: ?Sized, S: BuildHasher, F: PartFilter<Hasher = S>> Query<'_, R, S, F> {
    /// Adds attribute `I`'s value (typed: `I` must be an attribute of `R`, and `value` of
    /// its type or a form it borrows as, `&str` for a `String`).
    #[must_use]
    pub fn attr<const I: usize>(
        self,
        value: &(impl QueryValue<<R as Attribute<I>>::Value> + ?Sized),
    ) -> Self
    where
        R: Attribute<I>,
    {
        // A record type's `Attribute` impls only name its attributes, and the filter's
        // arity is the type's: the index is in range.
        self.with(I, value)
    }

    fn with<Q: Hash + ?Sized>(mut self, index: usize, value: &Q) -> Self {
        let Some(part) = self.parts.attributes.get(index) else {
            // An `Attribute` impl past the record's own arity: no record has such a value.
            self.contradiction = true;
            return self;
        };
        let hash = part.filter.hasher().hash_one(value);
        let bit = 1 << index;
        if self.mask & bit != 0 && self.hashes[index] != hash {
            self.contradiction = true;
        }
        self.mask |= bit;
        self.hashes[index] = hash;
        self
    }

    /// Whether some inserted record may hold all the values given (with no value given:
    /// whether any record was inserted).
    pub fn contains(&self) -> bool {
        !self.contradiction && self.parts.contains_mask(self.mask, &self.hashes)
    }
}

impl<R: DynamicRecord + ?Sized, S: BuildHasher, F: PartFilter<Hasher = S>> Query<'_, R, S, F> {
    /// Adds attribute `index`'s value, for records whose arity is known at run time
    /// (`Vec<T>`, `[T]`): the index is checked against the filter's arity, and `value` must
    /// be of the records' element type or a form it borrows as, so a key of another type
    /// does not compile (it would hash differently and answer `false`).
    ///
    /// ```compile_fail
    /// use bloomkit_multi::MultiFilter;
    ///
    /// let f = MultiFilter::<Vec<u64>>::builder(1_000, 0.01).arity(2).unwrap().build().unwrap();
    /// f.query().try_attr(0, &7i32); // attributes are u64
    /// ```
    ///
    /// # Errors
    /// [`Error::NoSuchAttribute`] for an index past the filter's arity.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_multi::MultiFilter;
    ///
    /// let mut f = MultiFilter::<Vec<u64>>::builder(1_000, 0.01).arity(3)?.build()?;
    /// f.try_insert(&vec![1, 7, 9])?;
    /// assert!(f.query().try_attr(1, &7)?.contains()); // the literal is a u64 here
    /// assert!(f.query().try_attr(3, &7).is_err()); // no attribute 3
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn try_attr(
        self,
        index: usize,
        value: &(impl QueryValue<R::Value> + ?Sized),
    ) -> Result<Self, Error> {
        let arity = self.parts.arity();
        if index >= arity {
            return Err(Error::NoSuchAttribute { index, arity });
        }
        Ok(self.with(index, value))
    }
}

impl<R: ?Sized, S: PortableHasher> MultiFilter<R, S> {
    /// Checks that `other` was built alike: same attributes, same combinations, same seed,
    /// and every part of the same size.
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first difference.
    pub fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        let count = |f: &Self| f.parts.arity() as u64;
        if count(self) != count(other) {
            return Err(Error::Incompatible {
                what: Parameter::Attributes,
                left: count(self),
                right: count(other),
            });
        }
        let masks = |f: &Self| {
            f.parts
                .combos
                .iter()
                .map(|p| u64::from(p.mask))
                .chain([u64::MAX])
                .collect::<Vec<_>>()
        };
        if let Some((a, b)) = masks(self)
            .into_iter()
            .zip(masks(other))
            .find(|(a, b)| a != b)
        {
            return Err(Error::Incompatible {
                what: Parameter::Subsets,
                left: a,
                right: b,
            });
        }
        self.parts
            .all()
            .zip(other.parts.all())
            .try_for_each(|(a, b)| a.filter.check_compatible(&b.filter))
    }
}

impl<R: ?Sized, S: PortableHasher + Clone> MultiFilter<R, S> {
    /// Applies `op` to every part and its twin in `other`, after checking that the two
    /// filters were built alike (so that no part fails midway).
    fn zip_parts(
        &mut self,
        other: &Self,
        op: fn(&mut OwnedPart<S>, &OwnedPart<S>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.parts.all_mut().zip(other.parts.all()) {
            op(&mut a.filter, &b.filter)?;
        }
        Ok(())
    }
}

impl<R: ?Sized, S: PortableHasher + Clone> Union for MultiFilter<R, S> {
    /// Every part ORed with its twin: the result holds every record of either.
    fn union_with(&mut self, other: &Self) -> Result<(), Error> {
        self.zip_parts(other, Union::union_with)
    }
}

impl<R: ?Sized, S: PortableHasher + Clone> Intersection for MultiFilter<R, S> {
    /// Every part ANDed with its twin: the result holds every record both held (and every
    /// value and combination common to both).
    fn intersect_with(&mut self, other: &Self) -> Result<(), Error> {
        self.zip_parts(other, Intersection::intersect_with)
    }
}

/// `try_insert_hash` is refused with [`Error::Unsupported`] unless the record has one
/// attribute, since a record must reach every part: use the record-taking methods.
impl<R: Record + ?Sized, S: BuildHasher> FilterCore for MultiFilter<R, S> {
    type InsertError = Error;
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        // A whole-record query consults every part, and one hash reaches only the part over
        // the whole record: inserting by hash is possible only when that is the one part.
        if self.parts.consulted(self.parts.full()).nth(1).is_some() {
            return Err(Error::Unsupported(
                "a record's attribute filters cannot be reached from its hash: insert the record",
            ));
        }
        match self.parts.attributes.first_mut() {
            Some(p) => Ok(p.filter.insert_hash(hash)),
            None => Err(Error::Unsupported(
                "a filter of no attributes holds nothing",
            )),
        }
    }
    fn clear(&mut self) {
        MultiFilter::clear(self);
    }
}

impl<R: Record + ?Sized, S: BuildHasher> Filter for MultiFilter<R, S> {
    fn try_insert(&mut self, record: &R) -> Result<bool, Error> {
        MultiFilter::try_insert(self, record)
    }
}
