//! Static filters for sets known in advance: built once from their keys (or the keys'
//! 64-bit hashes), then read-only. The keys of an immutable file (an LSM table, a Parquet
//! row group), a blocklist shipped with a release, a dictionary.
//!
//! For such a set a Bloom filter spends memory on being able to insert later. These spend
//! it on the set they were given:
//!
//! | filter | bits/key (large sets) | false-positive rate | lookup |
//! |---|---|---|---|
//! | [`BinaryFuse8`] | 9.0 | 0.39% (`2^-8`) | 3 slots |
//! | [`BinaryFuse16`] | 18.0 | 0.0015% (`2^-16`) | 3 slots |
//! | [`BinaryFuse32`] | 36.0 | 2.3e-10 (`2^-32`) | 3 slots |
//! | [`RibbonFilter`] at 1% / 0.1% | about 7.0 / 10.5 | any target in `[2^-32, 0.5]` | 1-2 adjacent blocks |
//!
//! (A Bloom filter needs 9.6 bits/key at 1%, 14.4 at 0.1%.)
//!
//! # Examples
//!
//! ```
//! use bloomkit_core::Lookup;
//! use bloomkit_static::{BinaryFuse8, RibbonFilter};
//!
//! let blocked: Vec<String> = (0..10_000).map(|i| format!("198.51.{}.{}", i / 256, i % 256)).collect();
//! // Keys, or anything that borrows as one: `&str`s here.
//! let fuse = BinaryFuse8::<str>::from_keys(blocked.iter().map(String::as_str))?;
//! let ribbon = RibbonFilter::<str>::from_keys_with_fpr(blocked.iter().map(String::as_str), 0.01)?;
//! assert!(fuse.contains("198.51.0.7") && ribbon.contains("198.51.0.7"));
//! assert_eq!(fuse.len(), 10_000);
//!
//! // Any code written against the read-only side of bloomkit's trait takes them.
//! fn hits<F: Lookup<Key = str>>(f: &F, keys: &[&str]) -> usize {
//!     keys.iter().filter(|k| f.contains(k)).count()
//! }
//! assert_eq!(hits(&fuse, &["198.51.0.7", "198.51.0.8"]), 2);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! # Building
//!
//! `from_keys` takes any iterator of keys or references (duplicates allowed: they are one
//! key), hashes each once with bloomkit's hasher (the same values as every other variant's
//! `hash_key`), and builds. `from_hashes` takes those 64-bit hashes directly, as writers
//! that already hashed their keys have them. A build that fails for one seed tries the next
//! (64 at most, deterministic: the same keys always give the same bytes); distinct keys
//! do not exhaust them. A build holds the hashes and its working arrays: measured at 10^7 keys
//! (`from_hashes`, peak resident memory above the caller's input), its peak is about 33 bytes
//! per key for binary fuse and 38 for ribbon, the result included.
//!
//! # Sets larger than memory: one filter per range of the hash space
//!
//! A build holds 33-38 bytes a key at its peak, so 10^9 keys need about 33-38 GB at once.
//! Split the hash space instead: the top bits of [`hash_key`](bloomkit_core::Lookup::hash_key)
//! choose a part, each part is built from its own hashes with `from_hashes` (one pass over
//! the keys per part, or one pass writing each hash to its part's file), and a lookup asks
//! the part its hash falls in. The parts answer exactly as one filter would: same rate, no
//! false negative, the memory of one part while building.
//!
//! ```
//! use std::hash::BuildHasher;
//!
//! use bloomkit_core::{LookupCore, Xxh3Builder};
//! use bloomkit_static::BinaryFuse8;
//!
//! const PARTS: u64 = 4; // a power of two; the top 2 bits of a hash pick the part
//! let part_of = |hash: u64| (hash >> (64 - PARTS.trailing_zeros())) as usize;
//! let hasher = Xxh3Builder::default(); // what `from_keys` and `hash_key` hash with
//!
//! // One pass per part over the keys (here in memory; in practice a file read again).
//! let keys = 0..100_000u64;
//! let parts: Vec<BinaryFuse8<u64>> = (0..PARTS as usize)
//!     .map(|p| {
//!         let hashes = keys.clone().map(|k| hasher.hash_one(k)).filter(|&h| part_of(h) == p);
//!         BinaryFuse8::<u64>::from_hashes(hashes)
//!     })
//!     .collect::<Result<_, _>>()?;
//!
//! let contains = |key: u64| {
//!     let hash = hasher.hash_one(key);
//!     parts[part_of(hash)].contains_hash(hash)
//! };
//! assert!(keys.clone().all(contains));
//! assert_eq!(parts.iter().map(|p| p.len()).sum::<u64>(), 100_000);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! Each part is its own file (`to_bytes`), read or viewed on its own.
//!
//! # The byte format
//!
//! With the `serde` feature (default), `to_bytes` / `from_bytes` write and read bloomkit's
//! checksummed format (variant tags 8-11, `docs/format.md`), serde goes through those bytes,
//! and [`BinaryFuseRef`] / [`RibbonFilterRef`] answer from bytes in place (a memory-mapped
//! file) without copying them.

#![forbid(unsafe_code)]

/// The core crate (the traits, errors and hashing), re-exported.
pub use bloomkit_core;

/// [`bloomkit_core::LookupCore`] and [`bloomkit_core::Lookup`] for a static filter or view
/// with inherent `contains_hash`, `hasher`, `contains_batch`, `len`, `heap_bytes`,
/// `estimated_fpr` and `target`.
macro_rules! impl_static_lookup {
    ([$($generics:tt)*] $ty:ty, key = $key:ident) => {
        impl<$($generics)*, $key: ::core::hash::Hash + ?Sized> bloomkit_core::LookupCore for $ty {
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                <$ty>::contains_hash(self, hash)
            }
            fn estimated_len(&self) -> f64 {
                <$ty>::len(self) as f64
            }
            fn heap_bytes(&self) -> usize {
                <$ty>::heap_bytes(self)
            }
            fn target_fpr(&self) -> Option<f64> {
                <$ty>::target(self)
            }
            fn estimated_fpr(&self) -> f64 {
                <$ty>::estimated_fpr(self)
            }
            fn is_empty(&self) -> bool {
                <$ty>::is_empty(self)
            }
        }

        impl<$($generics)*, $key: ::core::hash::Hash + ?Sized> bloomkit_core::Lookup for $ty {
            type Key = $key;

            #[inline]
            fn hash_key(&self, key: &$key) -> u64 {
                ::core::hash::BuildHasher::hash_one(<$ty>::hasher(self), key)
            }
            #[inline]
            fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
            where
                I: IntoIterator,
                I::Item: ::core::borrow::Borrow<$key>,
            {
                <$ty>::contains_batch(self, keys, out);
            }
        }
    };
}
pub(crate) use impl_static_lookup;

/// `contains` and `contains_batch` by key, over the type's `hasher`, `contains_hash` and
/// `lookup().contains_batch`: the same for every static filter and view.
macro_rules! key_lookups {
    () => {
        /// Whether `key` may be in the filter: `true` for every key it was built from.
        #[inline]
        pub fn contains(&self, key: &K) -> bool
        where
            K: ::core::hash::Hash,
        {
            self.contains_hash(::core::hash::BuildHasher::hash_one(&self.hasher, key))
        }

        /// Answers for `keys` in order, appended to `out`: hashed, and what each will read
        /// prefetched a group ahead, so the misses of a large filter overlap.
        pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
        where
            K: ::core::hash::Hash,
            I: IntoIterator,
            I::Item: ::core::borrow::Borrow<K>,
        {
            let hasher = &self.hasher;
            self.lookup().contains_batch(
                keys.into_iter().map(|k| {
                    ::core::hash::BuildHasher::hash_one(hasher, ::core::borrow::Borrow::borrow(&k))
                }),
                out,
            );
        }
    };
}
pub(crate) use key_lookups;

/// `contains_hash`, `hasher` and `is_empty` over the type's `lookup()`, `hasher` and
/// `layout.items`: the same for every static filter and view, whatever the hasher.
macro_rules! hash_lookups {
    () => {
        /// Whether the key whose hash is `hash` may be in the filter.
        #[inline]
        pub fn contains_hash(&self, hash: u64) -> bool {
            self.lookup().contains_hash(hash)
        }

        /// The hasher keys are hashed with.
        pub fn hasher(&self) -> &S {
            &self.hasher
        }

        /// Whether the filter was built from no key.
        pub fn is_empty(&self) -> bool {
            self.layout.items == 0
        }
    };
}
pub(crate) use hash_lookups;

#[cfg(feature = "serde")]
mod codec;
mod common;
mod fuse;
mod ribbon;

#[cfg(feature = "serde")]
pub use codec::{BinaryFuseRef, RibbonFilterRef};
pub use fuse::{BinaryFuse, BinaryFuse16, BinaryFuse32, BinaryFuse8, Fingerprint};
pub use ribbon::{RibbonFilter, DEFAULT_RIBBON_FPR};
