//! The traits every structure implements: the read-only side ([`LookupCore`], and
//! [`Lookup`] with the key type) and the side that inserts ([`FilterCore`], [`Filter`]),
//! the capability traits where variants differ ([`Remove`], [`Union`], [`Intersection`]),
//! and the [`Unified`] adapter for collections of mixed variants.
//!
//! # One contract per name
//!
//! The filters keep these, in their trait impls and in their inherent methods of the same
//! name (an inherent method never shadows a trait method with another signature):
//!
//! | name | contract |
//! |---|---|
//! | `insert`, `insert_hash`, `insert_batch` | only where an insert cannot fail ([`FilterCore::InsertError`] is [`Infallible`]); `insert` returns whether the key was new |
//! | `try_insert`, `try_insert_hash`, `try_insert_batch` | every variant; on `Err` every key inserted before stays |
//! | `contains`, `try_insert`, `remove` | the key by reference (`&Self::Key`), integers included |
//! | `contains_batch(keys, out)` | appends one answer per key to `out`, in order; never clears it |
//! | `remove` | `Result<(), Error>`: [`Error::NotPresent`] when the key is not there, and nothing changes |
//! | `target_fpr` | `Option<f64>`: `None` for a filter built from raw parameters |
//!
//! (The key-value guard's `FilteredStore` is a store, not a filter: its `insert` and
//! `remove` write through to the store. bloomkit-redis's remote filters answer over a
//! network and have their own fallible calls.)

use core::borrow::Borrow;
use core::convert::Infallible;

use crate::hash::ProbeScheme;
use crate::{Error, HasherSpec, Parameter};

/// What every structure that answers membership does without knowing its key type: the
/// lookup by hash, sizes and estimates. Owned filters, read-only views over bytes and static
/// filters all implement it; [`FilterCore`] adds inserting.
///
/// Dyn-compatible: `Box<dyn LookupCore>` reports on any of them.
pub trait LookupCore {
    /// Whether the key whose hash is `hash` may be in the filter.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Filter, FilterCore};
    ///
    /// // Two filters with the same hasher and seed: hash the key once, ask both.
    /// let mut today = BloomFilter::<str>::new(1_000, 0.01)?;
    /// let yesterday = BloomFilter::<str>::new(1_000, 0.01)?;
    /// today.insert("alice");
    /// let hash = today.hash_key("alice");
    /// assert!(today.contains_hash(hash));
    /// assert!(!yesterday.contains_hash(hash));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn contains_hash(&self, hash: u64) -> bool;

    /// An estimate of the number of distinct items inserted (exact for exact variants).
    /// Infinite when the filter is saturated and can no longer tell.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Filter, FilterCore};
    ///
    /// let mut f = BloomFilter::<u64>::new(10_000, 0.01)?;
    /// f.insert_batch(0..5_000u64);
    /// let n = f.estimated_len();
    /// assert!((4_850.0..5_150.0).contains(&n), "{n}"); // from the fill, within a few percent
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn estimated_len(&self) -> f64;

    /// Bytes of heap memory the filter holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::FilterCore;
    ///
    /// // A million items at 1%: about 9.6 bits each.
    /// let f = BloomFilter::<str>::new(1_000_000, 0.01)?;
    /// assert!((1_150_000..1_250_000).contains(&f.heap_bytes()));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn heap_bytes(&self) -> usize;

    /// The false-positive rate the filter was sized for at its design load, if it was sized
    /// from a target (`None` for a filter built from raw parameters; `Some(0.0)` for exact
    /// variants).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::LookupCore;
    ///
    /// assert_eq!(BloomFilter::<str>::new(1_000, 0.01)?.target_fpr(), Some(0.01));
    /// // Built from raw bits and probes, it has no target.
    /// assert_eq!(BloomFilter::<str>::with_bits(8_192, 5)?.target_fpr(), None);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn target_fpr(&self) -> Option<f64>;

    /// The false-positive rate estimated from the filter's current fill.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Filter, FilterCore};
    ///
    /// let mut f = BloomFilter::<u64>::new(10_000, 0.01)?;
    /// assert_eq!(f.estimated_fpr(), 0.0); // empty: nothing can test positive
    /// f.insert_batch(0..10_000u64);
    /// let p = f.estimated_fpr();
    /// assert!((0.007..0.013).contains(&p), "{p}"); // at its design load, near the target
    /// f.insert_batch(10_000..40_000u64);
    /// assert!(f.estimated_fpr() > 0.3); // overfilled: the estimate says so
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn estimated_fpr(&self) -> f64;

    /// Whether nothing was inserted since the last clear: no bit or counter is set. Every
    /// structure has it through this trait; variants that keep a count answer in O(1) with
    /// an inherent method of the same name, the others count (the atomic filters, views).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::AtomicBloomFilter;
    /// use bloomkit_core::LookupCore;
    ///
    /// let f = AtomicBloomFilter::<u64>::new(1_000, 0.01)?;
    /// assert!(LookupCore::is_empty(&f));
    /// f.insert(&7);
    /// assert!(!LookupCore::is_empty(&f));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn is_empty(&self) -> bool {
        self.estimated_len() == 0.0
    }
}

/// What every filter that can change does without knowing its key type: insert by hash,
/// clear, and why an insert can be refused; the read-only half is [`LookupCore`].
///
/// This half of the interface has no key type in it, so it is dyn-compatible on its own
/// (`Box<dyn FilterCore<InsertError = Error>>`) and is what code that only reports on filters
/// (memory, fill, rates) needs. [`Filter`] adds the key.
///
/// # Implementing
///
/// `try_insert_hash` must leave the filter unchanged when it returns an error, and
/// `contains_hash` must return `true` for every hash inserted since the last `clear` (and not
/// removed, where removal exists).
///
/// # Examples
///
/// ```
/// use bloomkit_core::LookupCore;
///
/// /// One line about any filter or view, whatever its keys.
/// fn describe(f: &dyn LookupCore) -> String {
///     format!("{} bytes, about {:.0} items, FPR now {:.4}", f.heap_bytes(), f.estimated_len(), f.estimated_fpr())
/// }
/// ```
pub trait FilterCore: LookupCore {
    /// Why an insert can be refused; [`Infallible`] for variants that never refuse.
    type InsertError: std::error::Error + Send + Sync + 'static;

    /// Inserts the key whose hash (from [`Lookup::hash_key`]) is `hash`.
    ///
    /// Returns `Ok(true)` if the key was certainly not present before (the filter changed),
    /// `Ok(false)` if it may already have been present.
    ///
    /// # Errors
    /// When the variant refuses the key; the filter is then unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Filter, FilterCore};
    ///
    /// let mut f = BloomFilter::<str>::new(1_000, 0.01)?;
    /// let hash = f.hash_key("alice");
    /// assert_eq!(f.try_insert_hash(hash), Ok(true)); // new
    /// assert_eq!(f.try_insert_hash(hash), Ok(false)); // seen before
    /// assert!(f.contains("alice"));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Self::InsertError>;

    /// Removes every item, keeping the filter's parameters and allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Filter, FilterCore};
    ///
    /// let mut f = BloomFilter::<u64>::new(1_000, 0.01)?;
    /// f.insert_batch(0..500u64);
    /// let bytes = f.heap_bytes();
    /// f.clear();
    /// assert!(!f.contains(&7));
    /// assert_eq!(f.estimated_len(), 0.0);
    /// assert_eq!(f.heap_bytes(), bytes); // the allocation is kept for reuse
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn clear(&mut self);
}

/// The read-only side of [`Filter`]: "may this key be in the set?", for every structure
/// that answers it, owned or borrowed, growable or static (the views over bytes implement
/// this, and no insert that could only fail). Generic code that only looks keys up takes a
/// `Lookup` and accepts every one of them.
///
/// # Examples
///
/// ```
/// use bloomkit_classic::{BloomFilter, BloomFilterRef};
/// use bloomkit_core::Lookup;
///
/// fn blocked_count<F: Lookup<Key = str>>(filter: &F, urls: &[&str]) -> usize {
///     urls.iter().filter(|u| filter.contains(**u)).count()
/// }
/// let mut f = BloomFilter::<str>::new(1_000, 0.01)?;
/// f.insert("https://bad.example/");
/// let urls = ["https://bad.example/", "https://good.example/"];
/// assert!(blocked_count(&f, &urls) >= 1);
/// // The same function over a zero-copy view of the filter's bytes.
/// let bytes = bloomkit_core::format::AlignedBytes::copy_from(&f.to_bytes());
/// let view = BloomFilterRef::<str>::from_bytes(&bytes)?;
/// assert_eq!(blocked_count(&view, &urls), blocked_count(&f, &urls));
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub trait Lookup: LookupCore {
    /// The type of the keys.
    type Key: ?Sized;

    /// The 64-bit hash this filter derives `key`'s positions from.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::Filter;
    ///
    /// let a = BloomFilter::<str>::new(1_000, 0.01)?;
    /// let b = BloomFilter::<str>::new(50, 0.001)?;
    /// // The hash depends on the hasher and seed, not on the filter's size.
    /// assert_eq!(a.hash_key("alice"), b.hash_key("alice"));
    /// let seeded = BloomFilter::<str>::builder(1_000, 0.01).seed(7).build()?;
    /// assert_ne!(a.hash_key("alice"), seeded.hash_key("alice"));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn hash_key(&self, key: &Self::Key) -> u64;

    /// Whether `key` may be in the filter: `true` for every inserted key, `false` for a key
    /// never inserted except with probability about the false-positive rate.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::Filter;
    ///
    /// fn seen<F: Filter<Key = str>>(filter: &F, url: &str) -> bool {
    ///     filter.contains(url)
    /// }
    /// let mut f = BloomFilter::<str>::new(1_000, 0.01)?;
    /// f.insert("https://a.example/");
    /// assert!(seen(&f, "https://a.example/"));
    /// assert!(!seen(&f, "https://b.example/")); // wrong at most ~1% of the time
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    #[inline]
    fn contains(&self, key: &Self::Key) -> bool {
        self.contains_hash(self.hash_key(key))
    }

    /// Whether each of `keys` may be in the filter, appended to `out` in key order: the
    /// answers [`contains`](Lookup::contains) gives one key at a time. `keys` may yield keys
    /// or references to them (anything that borrows as the key: `0..100u64`, `&[1u64, 2]`,
    /// `["a", "b"]`, a `Vec<String>` for `str` keys).
    ///
    /// Variants whose lookups miss the cache (the Bloom filters) override it to hash a group
    /// of keys, prefetch their cache lines, then probe ([`crate::batch`]), so the misses of a
    /// filter larger than the cache overlap. (`Self: Sized`: not callable through `dyn`.)
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::Filter;
    ///
    /// let mut f = BloomFilter::<u64>::new(1_000, 0.01)?;
    /// f.insert_batch([1u64, 3, 5]);
    /// let mut out = Vec::new();
    /// f.contains_batch(1..=3u64, &mut out);
    /// assert_eq!(out, [true, false, true]);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
    where
        I: IntoIterator,
        I::Item: Borrow<Self::Key>,
        Self: Sized,
    {
        out.extend(keys.into_iter().map(|key| self.contains(key.borrow())));
    }
}

/// An approximate (or exact) set of keys of one type: "is this key in the set?", with no
/// false negatives.
///
/// Write code against `Filter` and you can switch between bloomkit's variants (classic,
/// blocked, counting, scalable, bitmap) without rewriting it. The key type is part of every
/// filter's type (`BloomFilter<str>`, `Bitmap<u32>`), as it is of a `HashSet<K>`, so a key of
/// another type does not compile instead of silently hashing differently. Every variant
/// answers [`contains`](Lookup::contains) with `true` for every key inserted since the last
/// [`clear`](FilterCore::clear) (and not removed, where removal exists); for a key never
/// inserted it answers `false`, except with a small probability, the false-positive rate.
///
/// # Inserting: infallible or not
///
/// Some variants can refuse an insert: a bitmap for a key outside its range, a scalable
/// filter at its limit. They say so through [`InsertError`](FilterCore::InsertError) and
/// [`try_insert`](Filter::try_insert), and change nothing when they refuse. Variants that
/// never refuse set `InsertError = Infallible`, and for them [`insert`](Filter::insert)
/// returns a plain `bool`. Generic code that must accept every variant calls `try_insert`.
/// To keep variants with different error types in one collection, wrap them in
/// [`Unified`] (or call [`unified`]): its error is always [`Error`].
///
/// # Hashing once
///
/// Each key is hashed once, to a `u64` by [`hash_key`](Lookup::hash_key); all probe
/// positions derive from that value. The `*_hash` methods of [`FilterCore`] take such a
/// value, so a caller that tests one key against several filters built with the same hasher
/// and seed hashes it only once.
///
/// # Implementing
///
/// Implement [`FilterCore`] and `hash_key`; the key-taking methods are provided on top of the
/// `*_hash` ones. Override `contains_batch` and `insert_batch` where a batch can be faster
/// than one key at a time.
///
/// # Examples
///
/// ```
/// use bloomkit_core::Filter;
///
/// /// Remembers what it has seen; works with any bloomkit variant over `str` keys.
/// fn first_sighting<F: Filter<Key = str>>(seen: &mut F, url: &str) -> Result<bool, F::InsertError> {
///     seen.try_insert(url)
/// }
/// ```
pub trait Filter: FilterCore + Lookup {
    /// Inserts `key`; see [`try_insert_hash`](FilterCore::try_insert_hash).
    ///
    /// # Errors
    /// When the variant refuses the key; the filter is then unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_bitmap::Bitmap;
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Error, Filter};
    ///
    /// let mut bloom = BloomFilter::<u32>::new(100, 0.01)?;
    /// assert_eq!(Filter::try_insert(&mut bloom, &42), Ok(true));
    /// assert_eq!(Filter::try_insert(&mut bloom, &42), Ok(false));
    /// // A bitmap refuses keys outside its range, and changes nothing.
    /// let mut ids = Bitmap::new(0u32..=99)?;
    /// assert_eq!(Filter::try_insert(&mut ids, &42), Ok(true));
    /// assert!(matches!(Filter::try_insert(&mut ids, &420), Err(Error::KeyOutOfRange { .. })));
    /// assert_eq!(ids.len(), 1);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    #[inline]
    fn try_insert(&mut self, key: &Self::Key) -> Result<bool, Self::InsertError> {
        let hash = self.hash_key(key);
        self.try_insert_hash(hash)
    }

    /// Inserts every key of `keys`, in order, returning how many were certainly new (as
    /// [`try_insert`](Filter::try_insert) counts them one at a time). Every dynamic variant
    /// overrides it to hash a group of keys and request their cache lines before inserting
    /// them ([`crate::batch`]).
    ///
    /// # Errors
    /// The first refusal: the keys before it are in, it and the keys after it are not (the
    /// filter's own `len` or count tells how many went in).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_core::Filter;
    /// use bloomkit_classic::BloomFilter;
    ///
    /// fn load<F: Filter<Key = u64>>(f: &mut F) -> Result<usize, F::InsertError> {
    ///     f.try_insert_batch(0..100u64)
    /// }
    /// let mut f = BloomFilter::<u64>::new(1_000, 0.01)?;
    /// assert_eq!(load(&mut f).unwrap(), 100);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Self::InsertError>
    where
        I: IntoIterator,
        I::Item: Borrow<Self::Key>,
        Self: Sized,
    {
        let mut new = 0;
        for key in keys {
            // `if`, not `new += usize::from(flag)`: rust-lang/rust#158206.
            if self.try_insert(key.borrow())? {
                new += 1;
            }
        }
        Ok(new)
    }

    /// Inserts every key of `keys` into a filter that never refuses an insert, returning how
    /// many were certainly new (as [`insert`](Filter::insert) counts them one at a time).
    /// Bloom variants override it as they do [`contains_batch`](Lookup::contains_batch).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::Filter;
    ///
    /// let mut f = BloomFilter::<str>::new(1_000, 0.01)?;
    /// let urls = vec!["https://a.example/".to_string(), "https://b.example/".to_string()];
    /// assert_eq!(f.insert_batch(urls), 2); // Strings for str keys
    /// assert_eq!(f.insert_batch(["https://a.example/"]), 0); // already there
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn insert_batch<I>(&mut self, keys: I) -> usize
    where
        I: IntoIterator,
        I::Item: Borrow<Self::Key>,
        Self: Sized + FilterCore<InsertError = Infallible>,
    {
        let mut new = 0;
        for key in keys {
            // `if`, not `new += usize::from(flag)`: rust-lang/rust#158206.
            if self.insert(key.borrow()) {
                new += 1;
            }
        }
        new
    }

    /// Inserts `key` into a filter that never refuses an insert. Returns `true` if the key
    /// was certainly not present before, `false` if it may already have been.
    ///
    /// (`Self: Sized` keeps `Filter` dyn-compatible; through a `dyn Filter`, call
    /// [`try_insert`](Filter::try_insert).)
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::Filter;
    ///
    /// let mut seen = BloomFilter::<str>::new(1_000, 0.01)?;
    /// for url in ["https://a.example/", "https://b.example/", "https://a.example/"] {
    ///     if Filter::insert(&mut seen, url) {
    ///         // first sighting: crawl it
    ///     }
    /// }
    /// assert!(seen.contains("https://b.example/"));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    #[inline]
    fn insert(&mut self, key: &Self::Key) -> bool
    where
        Self: Sized + FilterCore<InsertError = Infallible>,
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
/// What a successful removal promises differs: the bitmap is exact; a counting filter cannot
/// tell a false positive from a member, so removing a key that was never inserted is a
/// logic error there (see its `remove`).
pub trait Remove: Filter {
    /// Removes the key whose hash is `hash`.
    ///
    /// # Errors
    /// [`Error::NotPresent`] when the key is certainly not in the filter, or another
    /// variant-specific reason; the filter is then unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_core::{Error, Filter, Remove};
    /// use bloomkit_counting::CountingBloomFilter;
    ///
    /// let mut f = CountingBloomFilter::<str>::new(1_000, 0.01)?;
    /// f.insert("alice");
    /// let hash = f.hash_key("alice");
    /// f.remove_hash(hash)?;
    /// assert!(!f.contains("alice"));
    /// assert_eq!(f.remove_hash(hash), Err(Error::NotPresent)); // and nothing changed
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error>;

    /// Removes `key`; see [`remove_hash`](Remove::remove_hash).
    ///
    /// # Errors
    /// As [`remove_hash`](Remove::remove_hash).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_core::{Filter, Remove};
    /// use bloomkit_counting::CountingBloomFilter;
    ///
    /// let mut sessions = CountingBloomFilter::<str>::new(1_000, 0.01)?;
    /// sessions.insert("alice");
    /// sessions.insert("bob");
    /// Remove::remove(&mut sessions, "alice")?; // only keys that were inserted: see the trait docs
    /// assert!(!sessions.contains("alice") && sessions.contains("bob"));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    #[inline]
    fn remove(&mut self, key: &Self::Key) -> Result<(), Error> {
        let hash = self.hash_key(key);
        self.remove_hash(hash)
    }
}

/// A filter whose insert error is always [`Error`], whatever the variant's own: what lets
/// variants with different error types live in one collection
/// (`Vec<Box<dyn Filter<Key = str, InsertError = Error>>>`). Make one with [`unified`].
///
/// # Examples
///
/// ```
/// use bloomkit_core::{unified, Error, Filter};
/// # use bloomkit_core::{FilterCore, Lookup, LookupCore, Xxh3Builder};
/// # use std::hash::BuildHasher;
/// # /// A stand-in for a bloomkit variant that never refuses.
/// # #[derive(Default)] struct Never(std::collections::HashSet<u64>);
/// # impl LookupCore for Never {
/// #     fn contains_hash(&self, h: u64) -> bool { self.0.contains(&h) }
/// #     fn estimated_len(&self) -> f64 { self.0.len() as f64 }
/// #     fn heap_bytes(&self) -> usize { 0 }
/// #     fn target_fpr(&self) -> Option<f64> { None }
/// #     fn estimated_fpr(&self) -> f64 { 0.0 }
/// # }
/// # impl FilterCore for Never {
/// #     type InsertError = std::convert::Infallible;
/// #     fn try_insert_hash(&mut self, h: u64) -> Result<bool, Self::InsertError> { Ok(self.0.insert(h)) }
/// #     fn clear(&mut self) { self.0.clear() }
/// # }
/// # impl Lookup for Never { type Key = str; fn hash_key(&self, k: &str) -> u64 { Xxh3Builder::default().hash_one(k) } }
/// # impl Filter for Never {}
///
/// let mut filters: Vec<Box<dyn Filter<Key = str, InsertError = Error>>> =
///     vec![unified(Never::default())];
/// for f in &mut filters {
///     f.try_insert("a")?;
/// }
/// assert!(filters.iter().all(|f| f.contains("a")));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unified<F>(pub F);

/// `filter`, boxed with its insert error made [`Error`]: see [`Unified`].
pub fn unified<F>(filter: F) -> Box<dyn Filter<Key = F::Key, InsertError = Error>>
where
    F: Filter + 'static,
    F::InsertError: Into<Error>,
{
    Box::new(Unified(filter))
}

impl<F: Filter> LookupCore for Unified<F>
where
    F::InsertError: Into<Error>,
{
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        self.0.contains_hash(hash)
    }
    fn estimated_len(&self) -> f64 {
        self.0.estimated_len()
    }
    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
    fn target_fpr(&self) -> Option<f64> {
        self.0.target_fpr()
    }
    fn estimated_fpr(&self) -> f64 {
        self.0.estimated_fpr()
    }
}

impl<F: Filter> FilterCore for Unified<F>
where
    F::InsertError: Into<Error>,
{
    type InsertError = Error;
    #[inline]
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        self.0.try_insert_hash(hash).map_err(Into::into)
    }
    fn clear(&mut self) {
        self.0.clear();
    }
}

impl<F: Filter> Lookup for Unified<F>
where
    F::InsertError: Into<Error>,
{
    type Key = F::Key;
    #[inline]
    fn hash_key(&self, key: &Self::Key) -> u64 {
        self.0.hash_key(key)
    }
    #[inline]
    fn contains(&self, key: &Self::Key) -> bool {
        self.0.contains(key)
    }
}

impl<F: Filter> Filter for Unified<F>
where
    F::InsertError: Into<Error>,
{
    #[inline]
    fn try_insert(&mut self, key: &Self::Key) -> Result<bool, Error> {
        self.0.try_insert(key).map_err(Into::into)
    }
}

/// Filters that can make an empty filter of their own shape: the same size, probes, hasher
/// and seed, so that it can be filled elsewhere (another thread, another partition) and
/// merged back with [`Union::union_with`]. A fallible `clone` of the parameters, not of the
/// items: short of memory it is an error, where `Clone` aborts.
///
/// # Examples
///
/// ```
/// use bloomkit_classic::BloomFilter;
/// use bloomkit_core::{EmptyLike, Filter, Union};
///
/// let mut today = BloomFilter::<str>::new(1_000, 0.01)?;
/// today.insert("a");
/// let mut partition = today.empty_like()?; // same shape, no items
/// assert!(partition.is_empty());
/// partition.insert("b");
/// today.union_with(&partition)?; // accepted: built alike
/// assert!(today.contains("a") && today.contains("b"));
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
pub trait EmptyLike: Sized {
    /// An empty filter that [`Union::union_with`] accepts from and into `self`.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when its memory cannot be had.
    fn empty_like(&self) -> Result<Self, Error>;
}

/// Filters that can absorb another filter built with the same parameters, so that the
/// result contains every item of either.
pub trait Union: Sized + Clone {
    /// Adds every item of `other` to `self`.
    ///
    /// # Errors
    /// [`Error::Incompatible`] when the two were built with different parameters (size,
    /// probes, hasher or seed); `self` is then unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Filter, Union};
    ///
    /// let mut here = BloomFilter::<str>::new(1_000, 0.01)?;
    /// let mut there = BloomFilter::<str>::new(1_000, 0.01)?;
    /// here.insert("a");
    /// there.insert("b");
    /// here.union_with(&there)?;
    /// assert!(here.contains("a") && here.contains("b"));
    /// // Another size or seed: refused.
    /// let other = BloomFilter::<str>::new(5_000, 0.01)?;
    /// assert!(here.union_with(&other).is_err());
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn union_with(&mut self, other: &Self) -> Result<(), Error>;

    /// A new filter holding every item of `self` and `other`.
    ///
    /// # Errors
    /// As [`union_with`](Union::union_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Filter, Union};
    ///
    /// let mut a = BloomFilter::<u64>::new(1_000, 0.01)?;
    /// let mut b = BloomFilter::<u64>::new(1_000, 0.01)?;
    /// a.insert(&1);
    /// b.insert(&2);
    /// let both = a.union(&b)?;
    /// assert!(both.contains(&1) && both.contains(&2));
    /// assert!(!a.contains(&2)); // the inputs are unchanged
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn union(&self, other: &Self) -> Result<Self, Error> {
        let mut out = self.clone();
        out.union_with(other)?;
        Ok(out)
    }

    /// One filter holding every item of every filter in `filters`: the reduce step of a
    /// build split into partitions (one filter per partition, per file or per worker, all
    /// built with the same parameters), as Spark's `bloom_filter_agg` merges its partial
    /// filters. The first filter is copied once; each further one is ORed in, in order.
    ///
    /// # Errors
    /// [`Error::NoFilters`] for an empty input; [`Error::MergeFailed`] naming the first
    /// filter (by position) that cannot be merged with the ones before it, with the reason.
    /// The inputs are borrowed and never changed, so nothing is lost on an error.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Error, Filter, Union};
    ///
    /// // One filter per partition, the same parameters for all.
    /// let parts: Vec<BloomFilter<u64>> = (0..4u64)
    ///     .map(|p| {
    ///         let mut f = BloomFilter::new(10_000, 0.01)?;
    ///         f.insert_batch(p * 1_000..(p + 1) * 1_000);
    ///         Ok(f)
    ///     })
    ///     .collect::<Result<_, Error>>()?;
    /// let all = BloomFilter::merge_all(&parts)?;
    /// assert!((0..4_000u64).all(|k| all.contains(&k)));
    ///
    /// assert_eq!(BloomFilter::<u64>::merge_all([]), Err(Error::NoFilters));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn merge_all<'a, I>(filters: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = &'a Self>,
        Self: 'a,
    {
        let mut filters = filters.into_iter();
        let mut out = filters.next().ok_or(Error::NoFilters)?.clone();
        for (index, filter) in (1u64..).zip(filters) {
            out.union_with(filter)
                .map_err(|source| Error::MergeFailed {
                    index,
                    source: Box::new(source),
                })?;
        }
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
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_classic::BloomFilter;
    /// use bloomkit_core::{Filter, Intersection};
    ///
    /// let mut monday = BloomFilter::<str>::new(1_000, 0.01)?;
    /// let mut tuesday = BloomFilter::<str>::new(1_000, 0.01)?;
    /// monday.insert_batch(["alice", "bob"]);
    /// tuesday.insert_batch(["bob", "carol"]);
    /// monday.intersect_with(&tuesday)?;
    /// assert!(monday.contains("bob")); // in both: always kept
    /// assert!(!monday.contains("carol")); // only in one: dropped, up to false positives
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    fn intersect_with(&mut self, other: &Self) -> Result<(), Error>;

    /// A new filter holding the items common to `self` and `other`.
    ///
    /// # Errors
    /// As [`intersect_with`](Intersection::intersect_with).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_bitmap::Bitmap;
    /// use bloomkit_core::Intersection;
    ///
    /// // Exact for a bitmap.
    /// let a = Bitmap::from_keys(0u32..=99, [1, 2, 3])?;
    /// let b = Bitmap::from_keys(0u32..=99, [2, 3, 4])?;
    /// let both = a.intersection(&b)?;
    /// assert_eq!(both.iter().collect::<Vec<_>>(), [2, 3]);
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
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

/// Checks that two filters place a key's probes by the same [`ProbeScheme`]: the same bits
/// mean the same keys only then.
///
/// # Errors
/// [`Error::Incompatible`] with [`Parameter::ProbeSchemes`] and the two schemes' ids.
pub fn check_same_probes(left: ProbeScheme, right: ProbeScheme) -> Result<(), Error> {
    if left == right {
        Ok(())
    } else {
        Err(Error::Incompatible {
            what: Parameter::ProbeSchemes,
            left: left.id().into(),
            right: right.id().into(),
        })
    }
}
