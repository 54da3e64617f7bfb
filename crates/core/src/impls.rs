//! The machinery that implements the traits of [`crate::filter`]: the forwarding impls for
//! `&F`, `&mut F` and `Box<F>`, and the macros the variant crates implement the read side,
//! the infallible insert side and their shared accessors with (exported, hidden: not part
//! of the public API). The contract they implement is written once, in `filter.rs`.

use crate::{Error, Filter, FilterCore, Lookup, LookupCore, Remove};

/// Forwards the read side ([`LookupCore`], [`Lookup`]) through a pointer type, so that `&F`,
/// `&mut F` and `Box<F>` answer lookups.
macro_rules! forward_lookup {
    ($($ptr:ty),*) => {$(
        impl<F: LookupCore + ?Sized> LookupCore for $ptr {
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                (**self).contains_hash(hash)
            }
            fn estimated_len(&self) -> f64 {
                (**self).estimated_len()
            }
            fn heap_bytes(&self) -> usize {
                (**self).heap_bytes()
            }
            fn target_fpr(&self) -> Option<f64> {
                (**self).target_fpr()
            }
            fn estimated_fpr(&self) -> f64 {
                (**self).estimated_fpr()
            }
            fn is_empty(&self) -> bool {
                (**self).is_empty()
            }
        }

        impl<F: Lookup + ?Sized> Lookup for $ptr {
            type Key = F::Key;
            #[inline]
            fn hash_key(&self, key: &Self::Key) -> u64 {
                (**self).hash_key(key)
            }
            #[inline]
            fn contains(&self, key: &Self::Key) -> bool {
                (**self).contains(key)
            }
        }
    )*};
}

forward_lookup!(&F, &mut F, Box<F>);

/// Forwards the insert side ([`FilterCore`], [`Filter`], [`Remove`]) through a pointer type,
/// so that `&mut F` and `Box<F>` (including `Box<dyn Filter<..>>`) are filters too.
macro_rules! forward {
    ($($ptr:ty),*) => {$(
        impl<F: FilterCore + ?Sized> FilterCore for $ptr {
            type InsertError = F::InsertError;
            #[inline]
            fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Self::InsertError> {
                (**self).try_insert_hash(hash)
            }
            fn clear(&mut self) {
                (**self).clear();
            }
        }

        impl<F: Filter + ?Sized> Filter for $ptr {
            // Forwarded, not provided: a variant may say more in its own (a bitmap names
            // the key it refuses).
            #[inline]
            fn try_insert(&mut self, key: &Self::Key) -> Result<bool, Self::InsertError> {
                (**self).try_insert(key)
            }
        }

        impl<F: Remove + ?Sized> Remove for $ptr {
            fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
                (**self).remove_hash(hash)
            }
            fn remove(&mut self, key: &Self::Key) -> Result<(), Error> {
                (**self).remove(key)
            }
        }
    )*};
}

forward!(&mut F, Box<F>);

/// Implements [`LookupCore`] and [`Lookup`] for a Bloom-style structure over keys `K` by
/// forwarding to its inherent methods: `hasher()`, `contains_hash`, `contains_batch`,
/// `estimated_len`, `heap_bytes`, `design()` and `estimated_fpr`. For crates that implement
/// a variant (and its read-only views); the other generic parameters go in brackets, and the
/// key parameter is named last:
///
/// ```text
/// bloomkit_core::impl_lookup!(['a, S: BuildHasher] BloomFilterRef<'a, K, S>, key = K);
/// ```
///
/// A structure that counts its keys exactly and keeps its target rate elsewhere than a
/// `Design` says so: `len()` is the estimate, and the target rate is an expression of `f`
/// (the structure):
///
/// ```text
/// bloomkit_core::impl_lookup!([S: BuildHasher] QuotientFilter<K, S>, key = K,
///     exact_len, target_fpr = |f| f.target_fpr);
/// ```
///
/// Exported only so the variant crates can use it: not part of the public API, and hidden
/// from the docs.
#[doc(hidden)]
#[macro_export]
macro_rules! impl_lookup {
    ([$($generics:tt)*] $ty:ty, key = $key:ident) => {
        $crate::impl_lookup!(@impl [$($generics)*] $ty, $key,
            len = |f| <$ty>::estimated_len(f),
            target_fpr = |f| <$ty>::design(f).map(|d| d.fpr));
    };
    ([$($generics:tt)*] $ty:ty, key = $key:ident, exact_len, target_fpr = |$f:ident| $fpr:expr) => {
        $crate::impl_lookup!(@impl [$($generics)*] $ty, $key,
            len = |f| <$ty>::len(f) as f64,
            target_fpr = |$f| ::core::option::Option::Some($fpr));
    };
    (@impl [$($generics:tt)*] $ty:ty, $key:ident,
        len = |$l:ident| $len:expr, target_fpr = |$t:ident| $fpr:expr) => {
        impl<$($generics)*, $key: ::core::hash::Hash + ?::core::marker::Sized> $crate::LookupCore for $ty {
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                <$ty>::contains_hash(self, hash)
            }
            fn estimated_len(&self) -> f64 {
                let $l = self;
                $len
            }
            fn heap_bytes(&self) -> usize {
                <$ty>::heap_bytes(self)
            }
            fn target_fpr(&self) -> ::core::option::Option<f64> {
                let $t = self;
                $fpr
            }
            fn estimated_fpr(&self) -> f64 {
                <$ty>::estimated_fpr(self)
            }
        }

        impl<$($generics)*, $key: ::core::hash::Hash + ?::core::marker::Sized> $crate::Lookup for $ty {
            type Key = $key;

            #[inline]
            fn hash_key(&self, key: &$key) -> u64 {
                ::core::hash::BuildHasher::hash_one(<$ty>::hasher(self), key)
            }
            #[inline]
            fn contains_batch<I>(&self, keys: I, out: &mut ::std::vec::Vec<bool>)
            where
                I: ::core::iter::IntoIterator,
                I::Item: ::core::borrow::Borrow<$key>,
            {
                <$ty>::contains_batch(self, keys, out);
            }
        }
    };
}

/// [`FilterCore`] and [`Filter`] for a filter whose inserts can fail with [`Error`](crate::Error)
/// (it fills, or reaches a limit), forwarding to its inherent `try_insert_hash`,
/// `try_insert_batch` and `clear`. Same arguments as [`impl_lookup!`], which it does not
/// include (such filters count their keys: `impl_lookup!(..., exact_len, ...)`):
///
/// ```text
/// bloomkit_core::impl_fallible_filter!([S: BuildHasher] QuotientFilter<K, S>, key = K);
/// ```
///
/// Exported only so the variant crates can use it: not part of the public API, and hidden
/// from the docs.
#[doc(hidden)]
#[macro_export]
macro_rules! impl_fallible_filter {
    ([$($generics:tt)*] $ty:ty, key = $key:ident) => {
        impl<$($generics)*, $key: ::core::hash::Hash + ?::core::marker::Sized> $crate::FilterCore for $ty {
            type InsertError = $crate::Error;

            #[inline]
            fn try_insert_hash(&mut self, hash: u64) -> ::core::result::Result<bool, $crate::Error> {
                <$ty>::try_insert_hash(self, hash)
            }
            fn clear(&mut self) {
                <$ty>::clear(self);
            }
        }

        impl<$($generics)*, $key: ::core::hash::Hash + ?::core::marker::Sized> $crate::Filter for $ty {
            fn try_insert_batch<I>(&mut self, keys: I) -> ::core::result::Result<usize, $crate::Error>
            where
                I: ::core::iter::IntoIterator,
                I::Item: ::core::borrow::Borrow<$key>,
            {
                <$ty>::try_insert_batch(self, keys)
            }
        }
    };
}

/// [`impl_lookup!`], and [`FilterCore`], [`Filter`] and `Extend` for a filter whose inserts
/// never fail, forwarding to its inherent `insert_hash`, `insert_batch` and `clear`. Same arguments as
/// [`impl_lookup!`]:
///
/// ```text
/// bloomkit_core::impl_infallible_filter!([S: BuildHasher] BloomFilter<K, S>, key = K);
/// ```
///
/// Exported only so the variant crates can use it: not part of the public API, and hidden
/// from the docs.
#[doc(hidden)]
#[macro_export]
macro_rules! impl_infallible_filter {
    ([$($generics:tt)*] $ty:ty, key = $key:ident) => {
        $crate::impl_lookup!([$($generics)*] $ty, key = $key);

        impl<$($generics)*, $key: ::core::hash::Hash + ?::core::marker::Sized> $crate::FilterCore for $ty {
            type InsertError = ::core::convert::Infallible;

            #[inline]
            fn try_insert_hash(&mut self, hash: u64) -> ::core::result::Result<bool, ::core::convert::Infallible> {
                ::core::result::Result::Ok(<$ty>::insert_hash(self, hash))
            }
            fn clear(&mut self) {
                <$ty>::clear(self);
            }
        }

        impl<$($generics)*, $key: ::core::hash::Hash + ?::core::marker::Sized> $crate::Filter for $ty {
            #[inline]
            fn insert_batch<I>(&mut self, keys: I) -> usize
            where
                I: ::core::iter::IntoIterator,
                I::Item: ::core::borrow::Borrow<$key>,
            {
                <$ty>::insert_batch(self, keys)
            }
            #[inline]
            fn try_insert_batch<I>(&mut self, keys: I) -> ::core::result::Result<usize, ::core::convert::Infallible>
            where
                I: ::core::iter::IntoIterator,
                I::Item: ::core::borrow::Borrow<$key>,
            {
                ::core::result::Result::Ok(<$ty>::insert_batch(self, keys))
            }
        }

        /// Inserts keys or references to them (anything that borrows as the key type), as
        /// `insert_batch` does.
        impl<$($generics)*, $key: ::core::hash::Hash + ?::core::marker::Sized, T> ::core::iter::Extend<T> for $ty
        where
            T: ::core::borrow::Borrow<$key>,
        {
            fn extend<I: ::core::iter::IntoIterator<Item = T>>(&mut self, keys: I) {
                <$ty>::insert_batch(self, keys);
            }
        }
    };
}

/// The accessors of a hashed filter's shape, read from its fields `hashes`, `hasher`,
/// `design` (and `probes` where the call says `probes`): `num_hashes`, `hasher`, `design`
/// (and `probe_scheme`), with their docs written once. Generic parameters other than the key
/// go in brackets, the hasher's named `S`:
///
/// ```text
/// bloomkit_core::impl_shape_accessors!([S] BloomFilter<K, S>, key = K, probes);
/// ```
///
/// Exported only so the variant crates can use it: not part of the public API.
#[doc(hidden)]
#[macro_export]
macro_rules! impl_shape_accessors {
    ([$($generics:tt)*] $ty:ty, key = $key:ident, probes) => {
        $crate::impl_shape_accessors!([$($generics)*] $ty, key = $key);

        impl<$key: ?::core::marker::Sized, $($generics)*> $ty {
            /// How a key's positions follow from its hash:
            /// [`ProbeScheme::Wide`](bloomkit_core::ProbeScheme::Wide) for every filter this
            /// build creates, [`ProbeScheme::Enhanced`](bloomkit_core::ProbeScheme::Enhanced)
            /// for one read from bytes of format version 1 or 2 (which keeps answering as it
            /// was built).
            pub fn probe_scheme(&self) -> $crate::ProbeScheme {
                self.probes
            }
        }
    };
    ([$($generics:tt)*] $ty:ty, key = $key:ident) => {
        impl<$key: ?::core::marker::Sized, $($generics)*> $ty {
            /// `k`, the number of probes per key.
            pub fn num_hashes(&self) -> u32 {
                self.hashes
            }

            /// The hasher that turns a key into the one 64-bit hash its probes come from.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// The items and rate the filter was sized for, when it was sized from them
            /// (`new`, `builder`); `None` for one made from an explicit size.
            pub fn design(&self) -> ::core::option::Option<$crate::Design> {
                self.design
            }
        }
    };
}

/// The key-taking methods of a Bloom-style filter, written once for every variant that has
/// them: `insert`, `contains`, `hash_key`, `contains_batch` and `insert_batch`, with their
/// docs and doctests. They stand on the filter's inherent `hasher()`, `insert_hash`,
/// `contains_hash`, `locate(&self, u64) -> L` (which requests the key's cache lines) and the
/// insert of a located key named in the call (`insert_batch` uses it). Generic parameters other than the key go in brackets, as
/// for [`impl_infallible_filter!`]; then the crate and type for the doctests; then whether
/// inserts take `&mut self` (`exclusive`) or `&self` (`shared`: the atomic filters); then how
/// `contains_batch` runs: `pipeline` (the generic [`batch::pipeline`](crate::batch::pipeline)
/// over `locate` and `contains_hash`) or `lookup` (the filter's `lookup().contains_batch`,
/// the code its read-only view shares):
///
/// ```text
/// bloomkit_core::impl_key_methods!(
///     [S: BuildHasher] BloomFilter<K, S>, key = K, doc = ("bloomkit_classic", BloomFilter),
///     insert = exclusive Self::insert_hash, contains_batch = lookup
/// );
/// ```
///
/// Exported only so the variant crates can use it: not part of the public API.
#[doc(hidden)]
#[macro_export]
macro_rules! impl_key_methods {
    (
        [$($generics:tt)*] $ty:ty, key = $key:ident, doc = ($krate:literal, $name:ident),
        insert = exclusive $insert:path, contains_batch = $batch:ident $(,)?
    ) => {
        $crate::impl_key_methods!(
            @methods [$($generics)*] $ty, $key, $krate, $name, [mut], "", $insert, $batch
        );
    };
    (
        [$($generics:tt)*] $ty:ty, key = $key:ident, doc = ($krate:literal, $name:ident),
        insert = shared $insert:path, contains_batch = $batch:ident $(,)?
    ) => {
        $crate::impl_key_methods!(
            @methods [$($generics)*] $ty, $key, $krate, $name, [], " From any thread: the filter \
            is shared by reference (an `Arc`), and no insert is lost to another.", $insert, $batch
        );
    };
    // An exclusive filter is the pipeline's context itself (`&mut Self`); a shared one is
    // reached through a reference to its reference. (Through `&mut &mut Self`, the blocked
    // filter's batched u64 insert took 185 instructions a key under callgrind; as the
    // context itself, 177.)
    (@insert_batch [mut], $this:ident, $keys:ident, $insert:path) => {
        $crate::impl_key_methods!(@insert_counting $this, $keys, $insert)
    };
    (@insert_batch [], $this:ident, $keys:ident, $insert:path) => {{
        let mut this = $this;
        $crate::impl_key_methods!(@insert_counting &mut this, $keys, $insert)
    }};
    (@insert_counting $ctx:expr, $keys:ident, $insert:path) => {
        $crate::batch::insert_counting(
            $ctx,
            $keys,
            |f, key| f.locate(f.hash_key(::core::borrow::Borrow::borrow(&key))),
            |f, at| $insert(f, at),
        )
    };
    (@contains_batch lookup, $this:ident, $keys:ident, $out:ident) => {
        $this.lookup().contains_batch($this.hasher(), $keys, $out)
    };
    (@contains_batch pipeline, $this:ident, $keys:ident, $out:ident) => {
        $crate::batch::pipeline(
            $out,
            $keys,
            |_, key| $this.locate($this.hash_key(::core::borrow::Borrow::borrow(&key))),
            |out, hash| out.push($this.contains_hash(hash)),
        )
    };
    (
        @methods [$($generics:tt)*] $ty:ty, $key:ident, $krate:literal, $name:ident,
        [$($mut:tt)?], $shared_note:literal, $insert:path, $batch:ident
    ) => {
        impl<$key: ::core::hash::Hash + ?::core::marker::Sized, $($generics)*> $ty {
            /// Inserts `key`. Returns `true` if it was certainly not present before (one of its
            /// bits or counters was still zero), `false` if it may already have been.
            #[doc = $shared_note]
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use ", $krate, "::", stringify!($name), ";")]
            ///
            #[doc = concat!(
                "let ", stringify!($($mut)?), " f = ", stringify!($name),
                "::<u64>::new(1_000, 0.01)?;"
            )]
            /// assert!(f.insert(&1)); // certainly new
            /// assert!(!f.insert(&1)); // maybe seen before
            /// assert!(f.contains(&1)); // the literal is a u64: the filter's key type
            /// # Ok::<(), bloomkit_core::Error>(())
            /// ```
            #[inline]
            pub fn insert(&$($mut)? self, key: &$key) -> bool {
                self.insert_hash(self.hash_key(key))
            }

            /// Whether `key` (the key, or a form it borrows as: `&str` for a `String` key) may
            /// be in the filter. Never `false` for an inserted key.
            ///
            /// For many keys, [`contains_batch`](Self::contains_batch) answers the same, faster
            /// once the filter is larger than the cache.
            #[inline(always)]
            pub fn contains<Q: ::core::hash::Hash + ?::core::marker::Sized>(&self, key: &Q) -> bool
            where
                $key: ::core::borrow::Borrow<Q>,
            {
                self.contains_hash(self.hash_key(key))
            }

            /// The 64-bit hash of `key` (or a form it borrows as) that the `*_hash` methods
            /// take: the filter's hasher applied once.
            #[inline]
            pub fn hash_key<Q: ::core::hash::Hash + ?::core::marker::Sized>(&self, key: &Q) -> u64
            where
                $key: ::core::borrow::Borrow<Q>,
            {
                ::core::hash::BuildHasher::hash_one(self.hasher(), key)
            }

            /// Whether each of `keys` may be in the filter, appended to `out` in order: the
            /// answers of [`contains`](Self::contains), with the cache lines of a group of keys
            /// requested before any is probed ([`bloomkit_core::batch`]), so that in a filter
            /// larger than the cache their misses overlap.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use ", $krate, "::", stringify!($name), ";")]
            ///
            #[doc = concat!(
                "let ", stringify!($($mut)?), " f = ", stringify!($name),
                "::<str>::new(1_000, 0.01)?;"
            )]
            /// assert_eq!(f.insert_batch(["a", "b", "a"]), 2); // keys, or references to them
            /// let mut found = Vec::new();
            /// f.contains_batch(["a", "b"], &mut found);
            /// assert_eq!(found, [true, true]);
            /// # Ok::<(), bloomkit_core::Error>(())
            /// ```
            pub fn contains_batch<I>(&self, keys: I, out: &mut ::std::vec::Vec<bool>)
            where
                I: ::core::iter::IntoIterator,
                I::Item: ::core::borrow::Borrow<$key>,
            {
                $crate::impl_key_methods!(@contains_batch $batch, self, keys, out);
            }

            /// Inserts every key of `keys`, requesting their cache lines a group at a time as
            /// [`contains_batch`](Self::contains_batch) does. Returns how many were certainly
            /// new (as [`insert`](Self::insert) counts them one at a time).
            pub fn insert_batch<I>(&$($mut)? self, keys: I) -> usize
            where
                I: ::core::iter::IntoIterator,
                I::Item: ::core::borrow::Borrow<$key>,
            {
                $crate::impl_key_methods!(@insert_batch [$($mut)?], self, keys, $insert)
            }
        }
    };
}
