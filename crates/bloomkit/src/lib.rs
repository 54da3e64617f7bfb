//! bloomkit: a family of set-membership filters behind one [`Filter`] trait.
//!
//! "Is x in the set?", answered in a fraction of the memory of a `HashSet`, for crawlers
//! that skip URLs they have seen, key-value stores that skip disk reads for absent keys,
//! blacklists, and recommenders that skip items already shown. Pick the variant that suits
//! your data; switch without rewriting the code that uses it.
//!
//! # Examples
//!
//! ```
//! use bloomkit::prelude::*;
//!
//! // 1,000,000 expected URLs at a 1% false-positive rate: about 1.14 MiB.
//! let mut seen = BloomFilter::new(1_000_000, 0.01)?;
//! for url in ["https://a.example/", "https://b.example/"] {
//!     if seen.insert(url) {
//!         // first time: crawl it
//!     }
//! }
//! assert!(seen.contains("https://a.example/"));
//! assert!(!seen.contains("https://c.example/")); // wrong at most ~1% of the time
//!
//! // Ship it to another process: versioned, checksummed, portable bytes. The key type is
//! // part of the filter's type (here `str`), so the reader names it.
//! let bytes = seen.to_bytes();
//! let there = BloomFilter::<str>::from_bytes(&bytes)?;
//! assert!(there.contains("https://b.example/"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Code written against the trait works with every variant:
//!
//! ```
//! use bloomkit::Filter;
//!
//! fn count_new<F: Filter<Key = str>>(filter: &mut F, keys: &[&str]) -> Result<usize, F::InsertError> {
//!     let mut new = 0;
//!     for key in keys {
//!         if filter.try_insert(key)? {
//!             new += 1;
//!         }
//!     }
//!     Ok(new)
//! }
//! # #[cfg(feature = "classic")] {
//! let mut f = bloomkit::BloomFilter::<str>::new(100, 0.01).unwrap();
//! assert_eq!(count_new(&mut f, &["a", "b", "a"]), Ok(2));
//! # }
//! ```
//!
//! Every Bloom variant is configured through the same [`Builder`], checked once at `build`;
//! a setting a variant has no use for does not compile:
//!
//! ```
//! # #[cfg(all(feature = "classic", feature = "counting", feature = "scalable"))] {
//! use bloomkit::prelude::*;
//!
//! let classic = BloomFilter::builder(10_000, 0.01).seed(7).max_bytes(1 << 20).build()?;
//! let counting = CountingBloomFilter::builder(10_000, 0.01).seed(7).counter::<u8>().build()?;
//! let scalable = ScalableBloomFilter::builder(10_000, 0.01).seed(7).growth(4).build()?;
//! # let _: (&BloomFilter<str>, &CountingBloomFilter<str, u8>, &ScalableBloomFilter<str>) =
//! #     (&classic, &counting, &scalable);
//! # }
//! # Ok::<(), bloomkit::Error>(())
//! ```
//!
//! ```compile_fail
//! // A classic filter does not grow: `growth` is not one of its settings.
//! let f = bloomkit::BloomFilter::<str>::builder(10_000, 0.01).growth(4).build();
//! ```
//!
//! # Which structure?
//!
//! - **classic Bloom filter** ([`BloomFilter`]): a known number of items, no deletes;
//!   about 9.6 bits per item at 1%, 4.8 more per 10x lower rate. Its cache-line blocked
//!   sibling ([`BlockedBloomFilter`]) touches one cache line per lookup for about 3% more
//!   memory at 1%; the SIMD block filter ([`SimdBlockFilter`]) sets and tests a key's eight
//!   bits, one per 32-bit word of a 256-bit block, with a few SIMD instructions, the
//!   fastest to build and to ask one key at a time, for about 6% more memory than the
//!   blocked filter at 1% (best between about 0.5% and 2%).
//! - **a `HashSet`**: when the set is small enough to keep exactly, or false positives are
//!   unacceptable and there is no second check.
//! - **bitmap** (`Bitmap`, feature `bitmap`): keys are dense integers in a bounded range
//!   (ids, IPv4 addresses, timestamps in a window): exact, one bit per possible key, with
//!   counting, rank/select and set algebra.
//! - **counting Bloom filter** (`CountingBloomFilter`, feature `counting`): items leave the
//!   set; fixed-width counters that stick at their ceiling instead of wrapping, and
//!   conversion to a classic filter for readers.
//! - **scalable Bloom filter** (`ScalableBloomFilter`, feature `scalable`): the number of
//!   items is not known in advance; it grows and still guarantees the target rate.
//! - **multi-attribute filter** (`MultiFilter`, feature `multi`): the items are records of
//!   several fields, asked about by one field, a few fields together, or whole; one filter
//!   per field, plus record-level and declared-subset filters so that fields from different
//!   records do not combine into false answers.
//! - **static filters** (`BinaryFuse8` / `16` / `32`, `RibbonFilter`, feature `static`): the
//!   set is known when the filter is built and never changes (an immutable file's keys, a
//!   shipped blocklist): built once, read-only, smaller than any Bloom filter at the same
//!   rate (binary fuse: 9.0 bits/key at 0.39%; ribbon: about 7 bits/key at 1%).
//! - **quotient filter** (`QuotientFilter`, feature `quotient`): items leave the set, or a
//!   key's copies are counted, at about 10 bits a key for 1% (a counting Bloom filter needs
//!   38): fingerprints in a compact table that can also merge, double and shrink; and the
//!   **expandable filter** (`ExpandableFilter`, same feature) for a count not known in
//!   advance: one table that doubles as it fills, the rate kept under the target, with
//!   removes.
//! - **window filter** (`WindowFilter`, feature `window`): only *recent* items matter ("seen
//!   in the last N items?", "in the last hour?"): every key of the window answered, older
//!   keys forgotten by 1.1 windows, the rate under the target at every moment, in memory
//!   fixed up front (about 21 bits per window item at 1%).
//!
//! And filters with a job: **`kv`** (`bloomkit::kv`, feature `kv`) keeps a counting (or
//! classic, or blocked) filter in front of an embedded on-disk key-value store (redb), so a
//! lookup of an absent key never reads the disk, and no crash can make it lose a key;
//! **`redis`** (`bloomkit::redis`, feature `redis`) shares one blocked or classic filter
//! between many processes and machines through Redis (or Redis Cluster), with the same bits
//! as the local filter.
//!
//! # Crate features
//!
//! - `classic` (default): the classic, blocked and SIMD block Bloom filters, as
//!   [`classic`], [`BloomFilter`], [`BlockedBloomFilter`] and [`SimdBlockFilter`] (and
//!   Parquet's [`SplitBlockFilter`]).
//! - `counting` (default): the counting Bloom filter, as `counting` and
//!   `CountingBloomFilter`.
//! - `scalable` (default): the scalable Bloom filter, as `scalable` and
//!   `ScalableBloomFilter`.
//! - `bitmap` (default): the bitmap for dense integer keys, as `bitmap` and `Bitmap`.
//! - `multi` (default): the multi-attribute filter for records, as `multi` and
//!   `MultiFilter`.
//! - `static` (default): the static filters, as `static_filters`, `BinaryFuse8`,
//!   `BinaryFuse16`, `BinaryFuse32` and `RibbonFilter` (and their views).
//! - `quotient` (default): the quotient and expandable filters, as `quotient`,
//!   `QuotientFilter` and `ExpandableFilter`.
//! - `window` (default): the window filter, as `window` and `WindowFilter` (and its view
//!   `WindowFilterRef`).
//! - `jvm`: `bloomkit::jvm`, the JVM's filters byte for byte: Guava's `BloomFilter` (both
//!   strategies, the built-in funnels) and Spark's sketch `BloomFilter` (versions 1 and 2). Not on by
//!   default: interop with Java services, not a member of the family.
//! - `kv`: `bloomkit::kv`, a filter in front of a redb key-value store (`FilteredStore`,
//!   `RedbStore`). Not on by default: it brings a database, and needs Rust 1.90.
//! - `redis`: `bloomkit::redis`, a filter shared through Redis (`RedisFilter`). Not on by
//!   default: it brings a Redis client, and needs Rust 1.88.
//!
//! Every variant is on by default, so switching between them needs no `Cargo.toml` change;
//! for a minimal build, use `default-features = false` and name the variants you need.
//! - `serde` (default): serde impls, and bloomkit's versioned and checksummed byte format on
//!   every enabled variant (`to_bytes` / `from_bytes`, streaming `write_to` / `read_from`),
//!   with zero-copy read-only views of the classic, blocked, SIMD block, static and quotient
//!   filters (`BloomFilterRef`, `BlockedBloomFilterRef`, `SimdBlockFilterRef`,
//!   `BinaryFuseRef`, `RibbonFilterRef`, `QuotientFilterRef`) for memory-mapped files.
//! - `rayon`: `par_extend` (rayon's `ParallelExtend`) on the classic, blocked, SIMD block and counting
//!   filters, a parallel build from a parallel iterator: one private filter per thread,
//!   merged at the end (the engine is `bloomkit::parallel`, present with the feature).
//! - `full`: everything.
//!
//! The hashing and sizing layers are always available as [`hash`] and [`sizing`], and the
//! one [`Builder`] every Bloom variant is configured with as [`build`].

#![forbid(unsafe_code)]

pub use bloomkit_core as core;
#[cfg(feature = "rayon")]
pub use bloomkit_core::parallel;
pub use bloomkit_core::variant;
pub use bloomkit_core::{
    bits, build, check_fpr, hash, sizing, unified, Builder, DecodeError, Design, EmptyLike, Error,
    Filter, FilterCore, HashKey, HasherSpec, Intersection, KeyedHasher, Limit, Lookup, LookupCore,
    Parameter, PortableHasher, ProbeScheme, Remove, Setting, Unified, Union, Variant, Xxh3Builder,
    Xxh3Scheme,
};
#[cfg(feature = "serde")]
pub use bloomkit_core::{format, Codec};

#[cfg(feature = "classic")]
pub use bloomkit_classic as classic;
#[cfg(feature = "classic")]
pub use bloomkit_classic::{
    AtomicBlockedBloomFilter, AtomicBloomFilter, BlockedBloomFilter, BloomFilter, ParquetValue,
    SimdBlockFilter, SplitBlockFilter,
};
#[cfg(all(feature = "classic", feature = "serde"))]
pub use bloomkit_classic::{
    BlockedBloomFilterRef, BloomFilterRef, SimdBlockFilterRef, SplitBlockFilterRef,
};

#[cfg(feature = "counting")]
pub use bloomkit_counting as counting;
#[cfg(all(feature = "counting", feature = "serde"))]
pub use bloomkit_counting::CountingBloomFilterRef;
#[cfg(feature = "counting")]
pub use bloomkit_counting::{AtomicCountingBloomFilter, CountingBloomFilter};

#[cfg(feature = "scalable")]
pub use bloomkit_scalable as scalable;
#[cfg(feature = "scalable")]
pub use bloomkit_scalable::ScalableBloomFilter;
#[cfg(all(feature = "scalable", feature = "serde"))]
pub use bloomkit_scalable::ScalableBloomFilterRef;

#[cfg(feature = "bitmap")]
pub use bloomkit_bitmap as bitmap;
#[cfg(feature = "bitmap")]
pub use bloomkit_bitmap::Bitmap;
#[cfg(all(feature = "bitmap", feature = "serde"))]
pub use bloomkit_bitmap::BitmapRef;

#[cfg(feature = "multi")]
pub use bloomkit_multi as multi;
#[cfg(feature = "multi")]
pub use bloomkit_multi::MultiFilter;
#[cfg(all(feature = "multi", feature = "serde"))]
pub use bloomkit_multi::MultiFilterRef;

#[cfg(feature = "static")]
pub use bloomkit_static as static_filters;
#[cfg(feature = "static")]
pub use bloomkit_static::{BinaryFuse, BinaryFuse16, BinaryFuse32, BinaryFuse8, RibbonFilter};
#[cfg(all(feature = "static", feature = "serde"))]
pub use bloomkit_static::{BinaryFuseRef, RibbonFilterRef};

#[cfg(feature = "quotient")]
pub use bloomkit_quotient as quotient;
#[cfg(feature = "quotient")]
pub use bloomkit_quotient::{ExpandableFilter, QuotientFilter};
#[cfg(all(feature = "quotient", feature = "serde"))]
pub use bloomkit_quotient::{ExpandableFilterRef, QuotientFilterRef};

#[cfg(feature = "window")]
pub use bloomkit_window as window;
#[cfg(feature = "window")]
pub use bloomkit_window::WindowFilter;
#[cfg(all(feature = "window", feature = "serde"))]
pub use bloomkit_window::WindowFilterRef;

#[cfg(feature = "kv")]
pub use bloomkit_kv as kv;

#[cfg(feature = "jvm")]
pub use bloomkit_jvm as jvm;

#[cfg(feature = "serde")]
pub mod registry;

/// One filter shared by many processes and machines through Redis (`redis` feature).
#[cfg(feature = "redis")]
pub use bloomkit_redis as redis;

/// The traits and types most programs need: `use bloomkit::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "redis")]
    pub use crate::redis::{Options as RedisOptions, RedisFilter};
    #[cfg(feature = "bitmap")]
    pub use crate::Bitmap;
    #[cfg(feature = "serde")]
    pub use crate::Codec;
    #[cfg(all(feature = "counting", feature = "serde"))]
    pub use crate::CountingBloomFilterRef;
    #[cfg(feature = "multi")]
    pub use crate::MultiFilter;
    #[cfg(all(feature = "multi", feature = "serde"))]
    pub use crate::MultiFilterRef;
    #[cfg(all(feature = "quotient", feature = "serde"))]
    pub use crate::QuotientFilterRef;
    #[cfg(feature = "scalable")]
    pub use crate::ScalableBloomFilter;
    #[cfg(feature = "window")]
    pub use crate::WindowFilter;
    #[cfg(feature = "classic")]
    pub use crate::{AtomicBlockedBloomFilter, AtomicBloomFilter, BlockedBloomFilter, BloomFilter};
    #[cfg(feature = "counting")]
    pub use crate::{AtomicCountingBloomFilter, CountingBloomFilter};
    #[cfg(feature = "static")]
    pub use crate::{BinaryFuse16, BinaryFuse32, BinaryFuse8, RibbonFilter};
    #[cfg(all(feature = "static", feature = "serde"))]
    pub use crate::{BinaryFuseRef, RibbonFilterRef};
    #[cfg(all(feature = "classic", feature = "serde"))]
    pub use crate::{
        BlockedBloomFilterRef, BloomFilterRef, SimdBlockFilterRef, SplitBlockFilterRef,
    };
    pub use crate::{
        Error, Filter, FilterCore, HashKey, Intersection, KeyedHasher, Lookup, LookupCore, Remove,
        Union, Xxh3Builder,
    };
    #[cfg(feature = "quotient")]
    pub use crate::{ExpandableFilter, QuotientFilter};
    #[cfg(feature = "classic")]
    pub use crate::{SimdBlockFilter, SplitBlockFilter};
}

/// The README's examples, compiled and run as doctests so they cannot go stale.
#[cfg(all(
    doctest,
    feature = "classic",
    feature = "counting",
    feature = "scalable",
    feature = "bitmap",
    feature = "serde",
    feature = "window",
    feature = "jvm",
    feature = "redis"
))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
