//! The core of bloomkit: what every filter variant shares.
//!
//! This crate is mainly of interest to crates that implement a filter, and to code that is
//! generic over filters. To *use* a filter, depend on the `bloomkit` facade, which
//! re-exports this crate and the variants behind cargo features.
//!
//! - [`Lookup`]: the read-only interface every structure implements (owned filters,
//!   zero-copy views), and [`Filter`] on top of it, the interface every filter that inserts
//!   implements, so user code can switch variants; [`Remove`], [`Union`] and
//!   [`Intersection`] for what only some can do.
//! - [`hash`]: one 64-bit hash per key (XXH3-64 with a seed by default, any
//!   [`BuildHasher`](core::hash::BuildHasher) if you bring one) and the k probe positions
//!   derived from it by enhanced double hashing ([`hash::ProbeScheme`]).
//! - [`sizing`]: bits and probes from (items, FPR), FPR from (items, bits, probes),
//!   capacity, and cardinality from a filter's fill, each checked and documented with its
//!   source.
//! - [`build`]: the one [`Builder`] every Bloom variant is configured with, checked once
//!   at `build()`.
//! - [`bits`]: the bit array the Bloom-style filters and the bitmap store their state in.
//! - [`Error`]: one error type, with messages that name the bad value.
//! - `format` (feature `serde`): the versioned, checksummed byte format, and [`Codec`].
//!
//! # The design decision
//!
//! The key type is part of every filter's type (`BloomFilter<str>`, `Bitmap<u32>`), as it is
//! of a `HashSet<K>`: a key of another type does not compile, where a filter generic per call
//! would hash `1i32` and `1u64` differently and miss a key without a word. The interface has
//! a read side and an insert side, each in two halves: [`LookupCore`] (lookup by hash, sizes,
//! rate estimates) and [`FilterCore`] (insert by hash, `clear`,
//! [`InsertError`](FilterCore::InsertError)) do not depend on the key, so they are
//! dyn-compatible and need no annotation; [`Lookup`] adds the key as an associated type
//! ([`Lookup::Key`]) with `contains`, and [`Filter`] the key-taking inserts. A read-only view
//! over bytes is a `Lookup` and not a `Filter`. Variants differ in whether an insert can
//! fail (a bitmap refuses keys outside its range): `try_insert` is the generic entry point,
//! and for variants whose error type is [`Infallible`](core::convert::Infallible),
//! [`insert`](Filter::insert) returns a plain `bool`. `&mut F` and `Box<F>` are filters too,
//! and [`Unified`] gives variants with different errors one error type, for mixed
//! collections. `docs/architecture.md` has the reasoning.
//!
//! # Examples
//!
//! ```
//! use bloomkit_core::sizing::{fpr_model, plan};
//! use bloomkit_core::hash::{ProbeScheme, Xxh3Builder};
//! use std::hash::BuildHasher;
//!
//! // How big must a filter for 1M items at 1% be?
//! let plan = plan(1_000_000, 0.01)?;
//! assert_eq!(plan.hashes, 7);
//! assert!(plan.bits < 9_600_000); // about 1.14 MiB
//! assert!(fpr_model(1_000_000, plan.bits, plan.hashes)? <= 0.01);
//!
//! // Where does a key go? One hash, seven positions.
//! let hash = Xxh3Builder::default().hash_one("https://example.com/");
//! let positions: Vec<u64> = ProbeScheme::Wide
//!     .positions(hash, plan.bits, plan.hashes)
//!     .collect();
//! assert_eq!(positions.len(), 7);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! # Crate features
//!
//! - `serde` (default): serde derives on the shared types, and the [`format`](mod@format) module with [`Codec`]
//!   (bincode 2).
//! - `rayon`: the `parallel` module, the engine behind every variant's `par_extend`.

mod arch;
pub mod batch;
pub mod bits;
pub mod build;
mod error;
mod filter;
#[cfg(feature = "serde")]
pub mod format;
pub mod hash;
mod impls;
#[cfg(feature = "rayon")]
pub mod parallel;
pub mod sizing;
pub mod variant;
mod xxh3;

pub use build::Builder;
pub use error::{check_fpr, DecodeError, Error, Limit, Parameter, Setting, Unit};
pub use filter::{
    check_same_probes, check_same_shape, unified, EmptyLike, Filter, FilterCore, Intersection,
    Lookup, LookupCore, Remove, Unified, Union,
};
#[cfg(feature = "serde")]
pub use format::Codec;
pub use hash::{
    HashKey, HasherSpec, KeyedHasher, PortableHasher, ProbeScheme, Xxh3Builder, Xxh3Scheme,
};
pub use sizing::Design;
pub use variant::Variant;

/// The README's examples, compiled and run as doctests so that it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
