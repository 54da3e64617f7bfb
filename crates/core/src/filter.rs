//! The [`Filter`] trait every variant implements, and the capability traits where variants
//! differ ([`Remove`], [`Union`], [`Intersection`]).

use core::convert::Infallible;

use crate::{Error, HasherSpec, Parameter};

/// An approximate (or exact) set: "is this key in the set?", with no false negatives.
///
/// Write code against `Filter<T>` and you can switch between bloomkit's variants (classic,
/// counting, scalable, bitmap, ...) without rewriting it. Every variant answers
/// [`contains`](Filter::contains) with `true` for every key inserted since the last
/// [`clear`](Filter::clear) (and not removed, where removal exists); for a key never
/// inserted it answers `false`, except with a small probability, the false-positive rate.
///
/// # Inserting: infallible or not
///
/// Some variants can refuse an insert: a bitmap for a key outside its range, a scalable
/// filter at its hard cap. They say so through [`InsertError`](Filter::InsertError) and
/// [`try_insert`](Filter::try_insert), and change nothing when they refuse. Variants that
/// never refuse (the classic filter) set `InsertError = Infallible`, and for them the
/// provided [`insert`](Filter::insert) returns a plain `bool`: no `Result` to unwrap, and
/// the compiler proves it cannot fail. Generic code that must accept every variant calls
/// `try_insert`.
///
/// # Hashing once
///
/// Each key is hashed once, to a `u64` by [`hash_key`](Filter::hash_key); all probe
/// positions derive from that value. The `*_hash` methods take such a value, so a caller
/// that tests the same key against several filters built with the same hasher and seed, or
/// that already has a good 64-bit hash of its key, hashes it only once.
///
/// # Implementing
///
/// Implement the required methods; the key-taking methods are provided on top of the
/// `*_hash` ones. `try_insert_hash` must leave the filter unchanged when it returns an
/// error, and `contains_hash` must return `true` for every hash inserted since the last
/// `clear`.
///
/// # Examples
///
/// ```
/// use bloomkit_core::Filter;
///
/// /// Remembers what it has seen; works with any bloomkit variant.
/// fn first_sighting<F: Filter<str>>(seen: &mut F, url: &str) -> Result<bool, F::InsertError> {
///     seen.try_insert(url)
/// }
/// ```
pub trait Filter<T: ?Sized> {
    /// Why an insert can be refused; [`Infallible`] for variants that never refuse.
    type InsertError: std::error::Error + Send + Sync + 'static;

    /// The 64-bit hash this filter derives `key`'s positions from.
    fn hash_key(&self, key: &T) -> u64;

    /// Inserts the key whose hash is `hash`.
    ///
    /// Returns `Ok(true)` if the key was certainly not present before (the filter changed),
    /// `Ok(false)` if it may already have been present (so inserting it changed nothing).
    ///
    /// # Errors
    /// When the variant refuses the key; the filter is then unchanged.
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Self::InsertError>;

    /// Whether the key whose hash is `hash` may be in the filter.
    fn contains_hash(&self, hash: u64) -> bool;

    /// Removes every item, keeping the filter's parameters and allocation.
    fn clear(&mut self);

    /// An estimate of the number of distinct items inserted (exact for exact variants).
    /// Infinite when the filter is saturated and can no longer tell.
    fn estimated_len(&self) -> f64;

    /// Bytes of heap memory the filter holds.
    fn heap_bytes(&self) -> usize;

    /// The false-positive rate the filter was sized for at its design load, if it was sized
    /// from a target (`None` for a filter built from raw parameters).
    fn target_fpr(&self) -> Option<f64>;

    /// The false-positive rate estimated from the filter's current fill.
    fn estimated_fpr(&self) -> f64;

    /// Inserts `key`; see [`try_insert_hash`](Filter::try_insert_hash).
    ///
    /// # Errors
    /// When the variant refuses the key; the filter is then unchanged.
    #[inline]
    fn try_insert(&mut self, key: &T) -> Result<bool, Self::InsertError> {
        let hash = self.hash_key(key);
        self.try_insert_hash(hash)
    }

    /// Whether `key` may be in the filter: `true` for every inserted key, `false` for a key
    /// never inserted except with probability about the false-positive rate.
    #[inline]
    fn contains(&self, key: &T) -> bool {
        self.contains_hash(self.hash_key(key))
    }

    /// Whether each of `keys` may be in the filter, appended to `out` in key order: the
    /// answers [`contains`](Filter::contains) gives one key at a time.
    ///
    /// Variants whose lookups miss the cache (the Bloom filters) override it to hash a group
    /// of keys, prefetch their cache lines, then probe ([`crate::batch`]), so the misses of a
    /// filter larger than the cache overlap. (`Self: Sized`: not callable through `dyn`.)
    fn contains_batch<'k, I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator<Item = &'k T>,
        T: 'k,
        Self: Sized,
    {
        out.extend(keys.into_iter().map(|key| self.contains(key)));
    }

    /// Inserts every key of `keys` into a filter that never refuses an insert, returning how
    /// many were certainly new (as [`insert`](Filter::insert) counts them one at a time).
    /// Bloom variants override it as they do [`contains_batch`](Filter::contains_batch).
    fn insert_batch<'k, I>(&mut self, keys: I) -> usize
    where
        I: IntoIterator<Item = &'k T>,
        T: 'k,
        Self: Sized + Filter<T, InsertError = Infallible>,
    {
        keys.into_iter().filter(|key| self.insert(key)).count()
    }

    /// Inserts `key` into a filter that never refuses an insert. Returns `true` if the key
    /// was certainly not present before, `false` if it may already have been.
    ///
    /// (`Self: Sized` keeps `Filter` usable as a trait object; through a `dyn Filter`, call
    /// [`try_insert`](Filter::try_insert).)
    #[inline]
    fn insert(&mut self, key: &T) -> bool
    where
        Self: Sized + Filter<T, InsertError = Infallible>,
    {
        match self.try_insert(key) {
            Ok(new) => new,
            Err(never) => match never {},
        }
    }
}

/// Filters that can delete items (the counting filter, the bitmap).
///
/// A removal either succeeds or changes nothing: no variant leaves the filter half-changed.
pub trait Remove<T: ?Sized>: Filter<T> {
    /// Removes the key whose hash is `hash`.
    ///
    /// # Errors
    /// [`Error::NotPresent`] when the key is certainly not in the filter, or another
    /// variant-specific reason; the filter is then unchanged.
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error>;

    /// Removes `key`; see [`remove_hash`](Remove::remove_hash).
    ///
    /// # Errors
    /// As [`remove_hash`](Remove::remove_hash).
    #[inline]
    fn remove(&mut self, key: &T) -> Result<(), Error> {
        let hash = self.hash_key(key);
        self.remove_hash(hash)
    }
}

/// Filters that can absorb another filter built with the same parameters, so that the
/// result contains every item of either.
pub trait Union: Sized + Clone {
    /// Adds every item of `other` to `self`.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the two were built with different parameters (size,
    /// probes, hasher or seed); `self` is then unchanged.
    fn union_with(&mut self, other: &Self) -> Result<(), Error>;

    /// A new filter holding every item of `self` and `other`.
    ///
    /// # Errors
    /// As [`union_with`](Union::union_with).
    fn union(&self, other: &Self) -> Result<Self, Error> {
        let mut out = self.clone();
        out.union_with(other)?;
        Ok(out)
    }
}

/// Filters that can be intersected with another built with the same parameters: the result
/// contains every item that both contained (and, for approximate filters, has a
/// false-positive rate no higher than either's).
pub trait Intersection: Sized + Clone {
    /// Keeps in `self` only what `other` also contains.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the two were built with different parameters; `self` is
    /// then unchanged.
    fn intersect_with(&mut self, other: &Self) -> Result<(), Error>;

    /// A new filter holding the items common to `self` and `other`.
    ///
    /// # Errors
    /// As [`intersect_with`](Intersection::intersect_with).
    fn intersection(&self, other: &Self) -> Result<Self, Error> {
        let mut out = self.clone();
        out.intersect_with(other)?;
        Ok(out)
    }
}

/// The size, probes and hasher of two filters, compared in that order: what a union or
/// intersection of Bloom-style filters must check. `size` names the unit
/// ([`Parameter::Bits`], [`Parameter::Counters`], [`Parameter::Blocks`]) with the left and
/// right values.
///
/// # Errors
/// [`Error::Incompatible`] naming the first that differs.
pub fn check_same_shape(
    size: (Parameter, u64, u64),
    hashes: (u32, u32),
    hashers: (HasherSpec, HasherSpec),
) -> Result<(), Error> {
    let (a, b) = hashers;
    let pairs = [
        size,
        (Parameter::HashFunctions, hashes.0.into(), hashes.1.into()),
        (Parameter::Hashers, a.id.into(), b.id.into()),
        (Parameter::Seeds, a.seed, b.seed),
    ];
    match pairs.into_iter().find(|(_, l, r)| l != r) {
        Some((what, left, right)) => Err(Error::Incompatible { what, left, right }),
        None => Ok(()),
    }
}

/// Implements [`Filter`] for a Bloom-style filter whose inserts never fail, by forwarding to
/// its inherent methods: `hasher()`, `insert_hash`, `contains_hash`, `contains_batch`,
/// `insert_batch`, `clear`,
/// `estimated_len`, `heap_bytes`, `design()` and `estimated_fpr`. For crates that implement
/// a variant; the generic parameters go in brackets:
///
/// ```text
/// bloomkit_core::impl_infallible_filter!([S: BuildHasher] BloomFilter<S>);
/// ```
#[macro_export]
macro_rules! impl_infallible_filter {
    ([$($generics:tt)*] $ty:ty) => {
        impl<T: ::core::hash::Hash + ?::core::marker::Sized, $($generics)*> $crate::Filter<T> for $ty {
            type InsertError = ::core::convert::Infallible;

            #[inline]
            fn hash_key(&self, key: &T) -> u64 {
                ::core::hash::BuildHasher::hash_one(<$ty>::hasher(self), key)
            }
            #[inline]
            fn try_insert_hash(&mut self, hash: u64) -> ::core::result::Result<bool, ::core::convert::Infallible> {
                ::core::result::Result::Ok(<$ty>::insert_hash(self, hash))
            }
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                <$ty>::contains_hash(self, hash)
            }
            #[inline]
            fn contains_batch<'k, I>(&self, keys: I, out: &mut ::std::vec::Vec<bool>)
            where
                I: ::core::iter::IntoIterator<Item = &'k T>,
                T: 'k,
            {
                <$ty>::contains_batch(self, keys, out);
            }
            #[inline]
            fn insert_batch<'k, I>(&mut self, keys: I) -> usize
            where
                I: ::core::iter::IntoIterator<Item = &'k T>,
                T: 'k,
            {
                <$ty>::insert_batch(self, keys)
            }
            fn clear(&mut self) {
                <$ty>::clear(self);
            }
            fn estimated_len(&self) -> f64 {
                <$ty>::estimated_len(self)
            }
            fn heap_bytes(&self) -> usize {
                <$ty>::heap_bytes(self)
            }
            fn target_fpr(&self) -> ::core::option::Option<f64> {
                <$ty>::design(self).map(|d| d.fpr)
            }
            fn estimated_fpr(&self) -> f64 {
                <$ty>::estimated_fpr(self)
            }
        }
    };
}
