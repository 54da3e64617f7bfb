//! The family's one list, bound to its types: open, decode, build and merge any variant's
//! bytes for `str` keys, whichever variant they hold.
//!
//! Core's [`Variant`] says what each variant *is* ([`Variant::facts`]); this module says
//! which type serves it, in one table ([`entry`]). The `bloomkit` command, the fuzz checks
//! and the foreign bindings dispatch through it instead of matching on variants
//! themselves, so a new variant is added in three places outside its crate: core's
//! `variant.rs`, this file's table, and a fuzz seed. Every entry is compiled only with its
//! variant's cargo feature; [`entry`] answers `None` for a variant left out.
//!
//! The objects it hands out ([`AnyLookup`], [`AnyFilter`]) answer through one virtual call
//! per key, or per batch with [`AnyLookup::contains_batch`], which runs the variant's own
//! batched, prefetching lookup. Code that knows its variant should use the type itself.
//!
//! # Examples
//!
//! ```
//! use bloomkit::prelude::*;
//! use bloomkit::registry;
//!
//! let mut f = QuotientFilter::<str>::new(1_000, 0.01)?;
//! f.try_insert("alice")?;
//! let bytes = bloomkit::format::AlignedBytes::copy_from(&f.to_bytes());
//!
//! // Whatever the file holds: a zero-copy view where the variant has one.
//! let any = registry::open(&bytes, Default::default())?;
//! assert_eq!(any.variant(), bloomkit::Variant::Quotient);
//! assert!(any.is_view());
//! let mut out = Vec::new();
//! any.contains_batch(&["alice", "bob"], &mut out);
//! assert!(out[0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::Any;
use std::io::{self, Write};

use bloomkit_core::format::{self, Verify};
use bloomkit_core::variant::{Inserts, Keys};
use bloomkit_core::{Codec, Error, Lookup, LookupCore, Variant};

/// Why the registry cannot serve some bytes or some request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The bytes, or an operation on the filter, failed: the filter's own error.
    #[error(transparent)]
    Filter(#[from] Error),
    /// The variant's cargo feature is not enabled in this build.
    #[error("{0} support is not compiled in (enable its cargo feature)")]
    NotCompiled(Variant),
    /// The variant's keys are not `str` (the bitmap's integers, the multi-attribute
    /// filter's records).
    #[error("{variant}'s keys are {what}, not strings: read it with the library ({type_name})")]
    NotStrKeys {
        /// The variant.
        variant: Variant,
        /// What its keys are.
        what: &'static str,
        /// Its type, to use instead.
        type_name: &'static str,
    },
    /// The filter was built with a keyed hasher, whose key is not in its bytes.
    #[error(
        "built with a keyed hasher (SipHash under a secret key, which the bytes do not hold): \
         open it with the library and the key"
    )]
    Keyed,
    /// The variant cannot do what was asked ([`Variant::facts`] says what it can).
    #[error("{} {why}", .variant.with_article())]
    Cannot {
        /// The variant.
        variant: Variant,
        /// What it cannot do, and what to do instead.
        why: &'static str,
    },
}

/// What a registry object is: one of a variant's own figures, for a description
/// (`bloomkit info`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Detail {
    /// A flat bit array of this many bits.
    Bits(u64),
    /// `count` blocks of `bits` bits each.
    Blocks {
        /// How many blocks.
        count: u64,
        /// Bits in each block.
        bits: u32,
    },
    /// Bits set per key: `None` for the split-block layouts (one bit in each 32-bit word).
    Hashes(Option<u32>),
    /// `ones` of `bits` bits set.
    Fill {
        /// Bits set.
        ones: u64,
        /// All bits.
        bits: u64,
    },
    /// `count` counters of `bits` bits each.
    Counters {
        /// How many counters.
        count: u64,
        /// Bits in each counter.
        bits: u32,
    },
    /// Sub-filters of a scalable filter.
    Slices(u64),
    /// A window filter's table and generations: a key alive for `generations` generations
    /// after its own, a generation every `per_generation` inserts, `buckets` buckets of four
    /// slots, each a fingerprint and a generation tag.
    Ring {
        /// Generations a key is kept alive for after its own (`L`).
        generations: u32,
        /// Inserts a generation takes.
        per_generation: u64,
        /// Buckets of four slots.
        buckets: u64,
        /// Bits of a fingerprint.
        fingerprint_bits: u32,
        /// Bits of a generation tag.
        tag_bits: u32,
    },
    /// Slots of a quotient table and the bits of each fingerprint's remainder.
    Slots {
        /// Home slots.
        count: u64,
        /// Remainder bits a slot holds.
        remainder_bits: u32,
    },
    /// Whether a table that grows has saturated: it could not make room for a key, so it
    /// answers "present" for every key until cleared (the quotient and expandable filters).
    Saturated(bool),
}

/// A filter of any variant keyed by `str`, read-only: a view over bytes or a decoded filter.
pub trait AnyLookup {
    /// Which variant it is.
    fn variant(&self) -> Variant;
    /// Whether it answers from the bytes in place (a zero-copy view) rather than a copy.
    fn is_view(&self) -> bool;
    /// The trait every variant shares: estimated items, rates, memory.
    fn core(&self) -> &dyn LookupCore;
    /// Whether `key` may be in the filter ([`Lookup::contains`]).
    fn contains(&self, key: &str) -> bool;
    /// Appends the answers for `keys` to `out`, through the variant's batched lookup
    /// ([`Lookup::contains_batch`]: `out` is never cleared).
    fn contains_batch(&self, keys: &[&str], out: &mut Vec<bool>);
    /// The variant's own figures (bits, blocks, counters, slices), for a description.
    fn details(&self) -> Vec<Detail>;
}

/// A decoded or new filter of any variant keyed by `str`: [`AnyLookup`], and it takes keys
/// and writes its bytes.
pub trait AnyFilter: AnyLookup + Send + Sync {
    /// The hash the filter derives `key`'s positions from ([`Lookup::hash_key`]).
    fn hash_key(&self, key: &str) -> u64;
    /// Inserts `key` ([`bloomkit_core::Filter::try_insert`]); the static filters refuse.
    ///
    /// # Errors
    /// The variant's own refusal (full, past a limit), or [`RegistryError::Cannot`] for a
    /// filter built once from every key.
    fn try_insert(&mut self, key: &str) -> Result<bool, RegistryError>;
    /// Inserts a hash from [`hash_key`](AnyFilter::hash_key).
    ///
    /// # Errors
    /// As [`try_insert`](AnyFilter::try_insert).
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, RegistryError>;
    /// The length of [`write_to`](AnyFilter::write_to)'s bytes.
    fn serialized_len(&self) -> u64;
    /// Writes the filter in bloomkit's byte format.
    ///
    /// # Errors
    /// The writer's.
    fn write_to(&self, out: &mut dyn Write) -> io::Result<()>;
    /// The concrete filter, to downcast (`as_any().downcast_ref::<SplitBlockFilter<str>>()`).
    fn as_any(&self) -> &dyn Any;
    /// The concrete filter, mutably.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A variant's type for the registry: what the table needs beyond the shared traits.
trait Member: Lookup<Key = str> + Sized {
    const VARIANT: Variant;
    const VIEW: bool = false;
    fn details(&self) -> Vec<Detail> {
        Vec::new()
    }
}

impl<F: Member> AnyLookup for F {
    fn variant(&self) -> Variant {
        F::VARIANT
    }
    fn is_view(&self) -> bool {
        F::VIEW
    }
    fn core(&self) -> &dyn LookupCore {
        self
    }
    fn contains(&self, key: &str) -> bool {
        Lookup::contains(self, key)
    }
    fn contains_batch(&self, keys: &[&str], out: &mut Vec<bool>) {
        Lookup::contains_batch(self, keys.iter().copied(), out);
    }
    fn details(&self) -> Vec<Detail> {
        Member::details(self)
    }
}

/// Inserting through the registry: every dynamic variant's `try_insert`, and a refusal for
/// the static ones (no insert at all).
trait Insert {
    fn insert_hash(&mut self, hash: u64) -> Result<bool, RegistryError>;
}

impl<F: Member + Insert + Codec + Send + Sync + 'static> AnyFilter for F {
    fn hash_key(&self, key: &str) -> u64 {
        Lookup::hash_key(self, key)
    }
    fn try_insert(&mut self, key: &str) -> Result<bool, RegistryError> {
        let hash = Lookup::hash_key(self, key);
        self.insert_hash(hash)
    }
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, RegistryError> {
        self.insert_hash(hash)
    }
    fn serialized_len(&self) -> u64 {
        Codec::serialized_len(self)
    }
    fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        Codec::write_to(self, out)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// What a build needs to know, whichever variant it makes.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Spec {
    /// Keys to size for (a growing filter's first size).
    pub items: u64,
    /// The target false-positive rate (the binary fuse filters have their own).
    pub fpr: f64,
    /// The hash seed (Parquet's split-block filter has none).
    pub seed: u64,
    /// A counting filter's counter width: 4, 8, 16 or 32.
    pub counter_bits: u32,
}

impl Spec {
    /// `items` keys at rate `fpr`, seed 0, 4-bit counters.
    pub fn new(items: u64, fpr: f64) -> Spec {
        Spec {
            items,
            fpr,
            seed: 0,
            counter_bits: 4,
        }
    }

    /// The same with `seed`.
    #[must_use]
    pub fn seed(self, seed: u64) -> Spec {
        Spec { seed, ..self }
    }

    /// The same with `counter_bits`.
    #[must_use]
    pub fn counter_bits(self, counter_bits: u32) -> Spec {
        Spec {
            counter_bits,
            ..self
        }
    }
}

type Owned = Box<dyn AnyFilter>;
type Open = for<'a> fn(&'a [u8], Verify) -> Result<Box<dyn AnyLookup + 'a>, Error>;
type Decode<R> = fn(&[u8]) -> Result<R, Error>;
type Make = fn(&Spec) -> Result<Owned, Error>;
type FromHashes = fn(Vec<u64>, &Spec) -> Result<Owned, Error>;
type UnionInto = fn(&mut dyn AnyFilter, &[u8]) -> Result<u32, Error>;

/// How one variant is served: its row of the table.
#[derive(Clone, Copy)]
pub struct Entry {
    variant: Variant,
    open: Open,
    decode: Decode<Owned>,
    /// An empty filter from a spec (the dynamic variants).
    make: Option<Make>,
    /// A filter built once from every key's distinct hashes (the static variants).
    from_hashes: Option<FromHashes>,
    /// Folds another filter's bytes into the first: the doublings it needed to make room.
    union: Option<UnionInto>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("variant", &self.variant)
            .finish_non_exhaustive()
    }
}

impl Entry {
    /// The variant it serves.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Whether it builds one key at a time ([`make`](Entry::make)) or once from every key's
    /// hash ([`from_hashes`](Entry::from_hashes)).
    pub fn builds_from_hashes(&self) -> bool {
        self.from_hashes.is_some()
    }

    /// An empty filter sized by `spec`.
    ///
    /// # Errors
    /// The variant's own sizing errors, or [`RegistryError::Cannot`] for a static filter.
    pub fn make(&self, spec: &Spec) -> Result<Owned, RegistryError> {
        let make = self.make.ok_or(RegistryError::Cannot {
            variant: self.variant,
            why: "is built once from every key: use from_hashes",
        })?;
        Ok(make(spec)?)
    }

    /// A static filter of `hashes` (distinct, from [`AnyFilter::hash_key`] of an empty one,
    /// `from_hashes(Vec::new(), spec)`).
    ///
    /// # Errors
    /// The variant's own construction errors, or [`RegistryError::Cannot`] for a variant
    /// that takes keys one at a time.
    pub fn from_hashes(&self, hashes: Vec<u64>, spec: &Spec) -> Result<Owned, RegistryError> {
        let build = self.from_hashes.ok_or(RegistryError::Cannot {
            variant: self.variant,
            why: "takes keys one at a time: use make",
        })?;
        Ok(build(hashes, spec)?)
    }

    /// Decodes bytes of this variant into an owned filter (checking every checksum).
    ///
    /// # Errors
    /// Corrupt, truncated or foreign bytes.
    pub fn decode(&self, bytes: &[u8]) -> Result<Owned, RegistryError> {
        Ok((self.decode)(bytes)?)
    }

    /// Merges the filter in `other` (bytes of this variant) into `into`, a filter this
    /// entry decoded or made: the union ([`bloomkit_core::Union`]), making room where the
    /// variant can (a quotient filter doubles). Returns the doublings it needed.
    ///
    /// # Errors
    /// [`RegistryError::Cannot`] for a variant without a union; the variant's own error
    /// for another shape, hasher or seed, or corrupt bytes.
    pub fn union_into(&self, into: &mut dyn AnyFilter, other: &[u8]) -> Result<u32, RegistryError> {
        let union = self.union.ok_or(RegistryError::Cannot {
            variant: self.variant,
            why: match self.variant.facts().inserts {
                Inserts::Never => {
                    "is built once from every key and has no union: rebuild it from the keys \
                     of every partition"
                }
                _ => "has no union: rebuild it from the keys of every partition",
            },
        })?;
        Ok(union(into, other)?)
    }
}

/// The entry of `variant`: `None` when its cargo feature is not compiled in.
pub fn entry(variant: Variant) -> Option<&'static Entry> {
    table::ENTRIES.iter().find(|e| e.variant == variant)
}

/// The entry for `variant`, or why the registry cannot serve it as `str` keys.
///
/// # Errors
/// [`RegistryError::NotStrKeys`] for the bitmap and multi-attribute filter,
/// [`RegistryError::NotCompiled`] for a variant whose feature is off.
pub fn str_entry(variant: Variant) -> Result<&'static Entry, RegistryError> {
    let facts = variant.facts();
    let what = match facts.keys {
        Keys::Integers => Some("integers"),
        Keys::Records => Some("records whose type the bytes do not hold"),
        _ => None,
    };
    if let Some(what) = what {
        return Err(RegistryError::NotStrKeys {
            variant,
            what,
            type_name: facts.type_name,
        });
    }
    entry(variant).ok_or(RegistryError::NotCompiled(variant))
}

/// The filter in `bytes` (bloomkit's format), whichever variant: a zero-copy view where the
/// variant has one, a decoded copy otherwise. Bytes a view cannot use in place (format
/// version 1; a big-endian host) are decoded instead. `verify` applies to the views; a
/// decoded copy always checks every checksum.
///
/// # Errors
/// Corrupt or truncated bytes, a keyed hasher, a variant whose keys are not `str`, or
/// whose feature is off.
pub fn open(bytes: &[u8], verify: Verify) -> Result<Box<dyn AnyLookup + '_>, RegistryError> {
    let header = format::peek(bytes).map_err(Error::Decode)?;
    if header.hasher.is_keyed() {
        return Err(RegistryError::Keyed);
    }
    Ok((str_entry(header.variant)?.open)(bytes, verify)?)
}

/// The filter in `bytes` decoded into memory, whichever variant (every checksum checked).
///
/// # Errors
/// As [`open`].
pub fn decode(bytes: &[u8]) -> Result<Owned, RegistryError> {
    let header = format::peek(bytes).map_err(Error::Decode)?;
    if header.hasher.is_keyed() {
        return Err(RegistryError::Keyed);
    }
    str_entry(header.variant)?.decode(bytes)
}

/// The table: one entry per compiled variant, and the glue each needs.
mod table {
    #![allow(clippy::wildcard_imports)]
    use super::*;

    /// A view over the bytes, or the decoded filter where a view cannot use them in place.
    fn view_or_decode<'a, V: AnyLookup + 'a, F: AnyLookup + Codec + 'a>(
        bytes: &'a [u8],
        view: Result<V, Error>,
    ) -> Result<Box<dyn AnyLookup + 'a>, Error> {
        match view {
            Err(Error::Decode(bloomkit_core::DecodeError::NotViewable(_))) => {
                Ok(Box::new(F::from_bytes(bytes)?))
            }
            other => Ok(Box::new(other?)),
        }
    }

    fn decoded_owned<F: AnyLookup + Codec + 'static>(
        bytes: &[u8],
    ) -> Result<Box<dyn AnyLookup>, Error> {
        Ok(Box::new(F::from_bytes(bytes)?))
    }

    fn decode<F: AnyFilter + Codec + 'static>(bytes: &[u8]) -> Result<Owned, Error> {
        Ok(Box::new(F::from_bytes(bytes)?))
    }

    fn union<F: AnyFilter + Codec + bloomkit_core::Union + 'static>(
        into: &mut dyn AnyFilter,
        other: &[u8],
    ) -> Result<u32, Error> {
        let other = F::from_bytes(other)?;
        mine::<F>(into)?.union_with(&other)?;
        Ok(0)
    }

    /// The concrete filter behind `f`, which must be one this entry made.
    fn mine<F: 'static>(f: &mut dyn AnyFilter) -> Result<&mut F, Error> {
        f.as_any_mut().downcast_mut::<F>().ok_or(Error::Unsupported(
            "merging into a filter of another type than the entry's",
        ))
    }

    /// Inserts that cannot fail.
    macro_rules! member {
        ($([$($g:tt)*] $ty:ty => $variant:ident, view = $view:expr, insert = $insert:ident, |$f:ident| $details:expr;)*) => {$(
            impl<$($g)*> Member for $ty {
                const VARIANT: Variant = Variant::$variant;
                const VIEW: bool = $view;
                fn details(&self) -> Vec<Detail> {
                    let $f = self;
                    $details
                }
            }
            member!(@insert $insert [$($g)*] $ty);
        )*};
        (@insert none [$($g:tt)*] $ty:ty) => {};
        (@insert never [$($g:tt)*] $ty:ty) => {
            impl<$($g)*> Insert for $ty {
                fn insert_hash(&mut self, _: u64) -> Result<bool, RegistryError> {
                    Err(RegistryError::Cannot {
                        variant: <Self as Member>::VARIANT,
                        why: "is built once from every key: rebuild it to add keys",
                    })
                }
            }
        };
        (@insert fallible [$($g:tt)*] $ty:ty) => {
            impl<$($g)*> Insert for $ty {
                fn insert_hash(&mut self, hash: u64) -> Result<bool, RegistryError> {
                    Ok(bloomkit_core::FilterCore::try_insert_hash(self, hash).map_err(Error::from)?)
                }
            }
        };
    }

    fn bloom(blocks: Option<(u64, u32)>, k: Option<u32>, ones: u64, bits: u64) -> Vec<Detail> {
        vec![
            match blocks {
                Some((count, bits)) => Detail::Blocks { count, bits },
                None => Detail::Bits(bits),
            },
            Detail::Hashes(k),
            Detail::Fill { ones, bits },
        ]
    }

    #[cfg(feature = "classic")]
    mod classic {
        use super::*;
        use crate::{
            BlockedBloomFilter, BlockedBloomFilterRef, BloomFilter, BloomFilterRef,
            SimdBlockFilter, SimdBlockFilterRef, SplitBlockFilter, SplitBlockFilterRef,
        };

        member! {
            [] BloomFilter<str> => Classic, view = false, insert = fallible,
                |f| bloom(None, Some(f.num_hashes()), f.count_ones(), f.num_bits());
            ['a] BloomFilterRef<'a, str> => Classic, view = true, insert = none,
                |f| bloom(None, Some(f.num_hashes()), f.count_ones(), f.num_bits());
            [] BlockedBloomFilter<str> => Blocked, view = false, insert = fallible,
                |f| bloom(Some((f.num_blocks(), 512)), Some(f.num_hashes()), f.count_ones(), f.num_bits());
            ['a] BlockedBloomFilterRef<'a, str> => Blocked, view = true, insert = none,
                |f| bloom(Some((f.num_blocks(), 512)), Some(f.num_hashes()), f.count_ones(), f.num_bits());
            [] SimdBlockFilter<str> => SimdBlock, view = false, insert = fallible,
                |f| bloom(Some((f.num_blocks(), 256)), None, f.count_ones(), f.num_bits());
            ['a] SimdBlockFilterRef<'a, str> => SimdBlock, view = true, insert = none,
                |f| bloom(Some((f.num_blocks(), 256)), None, f.count_ones(), f.num_bits());
            [] SplitBlockFilter<str> => SplitBlock, view = false, insert = fallible,
                |f| bloom(Some((f.num_blocks(), 256)), None, f.count_ones(), f.num_bits());
            ['a] SplitBlockFilterRef<'a, str> => SplitBlock, view = true, insert = none,
                |f| bloom(Some((f.num_blocks(), 256)), None, f.count_ones(), f.num_bits());
        }

        pub(super) const CLASSIC: Entry = Entry {
            variant: Variant::Classic,
            open: |b, v| {
                view_or_decode::<_, BloomFilter<str>>(b, BloomFilterRef::with_hasher(b, v))
            },
            decode: decode::<BloomFilter<str>>,
            make: Some(|s| {
                Ok(Box::new(
                    BloomFilter::<str>::builder(s.items, s.fpr)
                        .seed(s.seed)
                        .build()?,
                ))
            }),
            from_hashes: None,
            union: Some(union::<BloomFilter<str>>),
        };
        pub(super) const BLOCKED: Entry = Entry {
            variant: Variant::Blocked,
            open: |b, v| {
                view_or_decode::<_, BlockedBloomFilter<str>>(
                    b,
                    BlockedBloomFilterRef::with_hasher(b, v),
                )
            },
            decode: decode::<BlockedBloomFilter<str>>,
            make: Some(|s| {
                Ok(Box::new(
                    BlockedBloomFilter::<str>::builder(s.items, s.fpr)
                        .seed(s.seed)
                        .build()?,
                ))
            }),
            from_hashes: None,
            union: Some(union::<BlockedBloomFilter<str>>),
        };
        pub(super) const SIMD_BLOCK: Entry = Entry {
            variant: Variant::SimdBlock,
            open: |b, v| {
                view_or_decode::<_, SimdBlockFilter<str>>(b, SimdBlockFilterRef::with_hasher(b, v))
            },
            decode: decode::<SimdBlockFilter<str>>,
            make: Some(|s| {
                Ok(Box::new(
                    SimdBlockFilter::<str>::builder(s.items, s.fpr)
                        .seed(s.seed)
                        .build()?,
                ))
            }),
            from_hashes: None,
            union: Some(union::<SimdBlockFilter<str>>),
        };
        pub(super) const SPLIT_BLOCK: Entry = Entry {
            variant: Variant::SplitBlock,
            open: |b, v| {
                view_or_decode::<_, SplitBlockFilter<str>>(
                    b,
                    SplitBlockFilterRef::with_verify(b, v),
                )
            },
            decode: decode::<SplitBlockFilter<str>>,
            make: Some(|s| {
                Ok(Box::new(
                    SplitBlockFilter::<str>::builder(s.items, s.fpr).build()?,
                ))
            }),
            from_hashes: None,
            union: Some(union::<SplitBlockFilter<str>>),
        };
    }

    #[cfg(feature = "counting")]
    mod counting {
        use super::*;
        use crate::counting::{counter_bits, Counter, CountingBloomFilterRef, U4};
        use crate::CountingBloomFilter;

        member! {
            [C: Counter] CountingBloomFilter<str, C> => Counting, view = false, insert = fallible,
                |f| vec![
                    Detail::Counters { count: f.num_counters(), bits: C::BITS },
                    Detail::Hashes(Some(f.num_hashes())),
                ];
            ['a, C: Counter] CountingBloomFilterRef<'a, str, C> => Counting, view = true, insert = none,
                |f| vec![
                    Detail::Counters { count: f.num_counters(), bits: C::BITS },
                    Detail::Hashes(Some(f.num_hashes())),
                ];
        }

        /// `each` at the counter width the bytes' parameters name; bytes whose parameters do
        /// not read (format version 1 keeps them elsewhere) try every width, and a failure
        /// is the 4-bit decoder's error.
        fn by_width<R>(bytes: &[u8], each: [(u32, Decode<R>); 4]) -> Result<R, Error> {
            let named = counter_bits(bytes);
            let mut first = None;
            for (bits, attempt) in each {
                if named.is_some_and(|n| n != bits) {
                    continue;
                }
                match attempt(bytes) {
                    Ok(f) => return Ok(f),
                    Err(e) => {
                        first.get_or_insert(e);
                    }
                }
            }
            Err(first.unwrap_or_else(|| {
                Error::Decode(bloomkit_core::DecodeError::Invalid(format!(
                    "counter width {} bits: not one of 4, 8, 16, 32",
                    named.unwrap_or(0)
                )))
            }))
        }

        type C4 = CountingBloomFilter<str, U4>;
        type C8 = CountingBloomFilter<str, u8>;
        type C16 = CountingBloomFilter<str, u16>;
        type C32 = CountingBloomFilter<str, u32>;

        /// A view at the width the parameters name; bytes a view cannot use in place, and
        /// format version 1 (whose parameters name no width), decoded.
        fn open_any_width(bytes: &[u8], verify: Verify) -> Result<Box<dyn AnyLookup + '_>, Error> {
            let view = |bits| -> Result<Box<dyn AnyLookup + '_>, Error> {
                Ok(match bits {
                    8 => Box::new(CountingBloomFilterRef::<str, u8>::with_hasher(
                        bytes, verify,
                    )?),
                    16 => Box::new(CountingBloomFilterRef::<str, u16>::with_hasher(
                        bytes, verify,
                    )?),
                    32 => Box::new(CountingBloomFilterRef::<str, u32>::with_hasher(
                        bytes, verify,
                    )?),
                    _ => Box::new(CountingBloomFilterRef::<str, U4>::with_hasher(
                        bytes, verify,
                    )?),
                })
            };
            let decoded = || -> Result<Box<dyn AnyLookup + '_>, Error> {
                let each: [(u32, Decode<Box<dyn AnyLookup>>); 4] = [
                    (4, decoded_owned::<C4>),
                    (8, decoded_owned::<C8>),
                    (16, decoded_owned::<C16>),
                    (32, decoded_owned::<C32>),
                ];
                by_width(bytes, each)
            };
            match counter_bits(bytes) {
                Some(bits @ (4 | 8 | 16 | 32)) => match view(bits) {
                    Err(Error::Decode(bloomkit_core::DecodeError::NotViewable(_))) => decoded(),
                    other => other,
                },
                _ => decoded(),
            }
        }

        fn decode_any_width(bytes: &[u8]) -> Result<Owned, Error> {
            by_width(
                bytes,
                [
                    (4, decode::<C4>),
                    (8, decode::<C8>),
                    (16, decode::<C16>),
                    (32, decode::<C32>),
                ],
            )
        }

        fn make<C: Counter>(s: &Spec) -> Result<Owned, Error>
        where
            CountingBloomFilter<str, C>: AnyFilter,
        {
            Ok(Box::new(
                CountingBloomFilter::<str>::builder(s.items, s.fpr)
                    .counter::<C>()
                    .seed(s.seed)
                    .build()?,
            ))
        }

        pub(super) const COUNTING: Entry = Entry {
            variant: Variant::Counting,
            open: open_any_width,
            decode: decode_any_width,
            make: Some(|s| match s.counter_bits {
                4 => make::<U4>(s),
                8 => make::<u8>(s),
                16 => make::<u16>(s),
                32 => make::<u32>(s),
                other => Err(Error::Decode(bloomkit_core::DecodeError::Invalid(format!(
                    "counter width {other} bits: not one of 4, 8, 16, 32"
                )))),
            }),
            from_hashes: None,
            // The union decodes the other file at the first one's width: a file of another
            // width is refused by that decoder, with its own message.
            union: Some(|into, other| {
                let any = into.as_any();
                if any.is::<C8>() {
                    union::<C8>(into, other)
                } else if any.is::<C16>() {
                    union::<C16>(into, other)
                } else if any.is::<C32>() {
                    union::<C32>(into, other)
                } else {
                    union::<C4>(into, other)
                }
            }),
        };
    }

    #[cfg(feature = "scalable")]
    mod scalable {
        use super::*;
        use crate::scalable::ScalableBloomFilterRef;
        use crate::ScalableBloomFilter;

        member! {
            [] ScalableBloomFilter<str> => Scalable, view = false, insert = fallible,
                |f| vec![Detail::Slices(f.num_slices() as u64)];
            ['a] ScalableBloomFilterRef<'a, str> => Scalable, view = true, insert = none,
                |f| vec![Detail::Slices(f.num_slices() as u64)];
        }

        pub(super) const SCALABLE: Entry = Entry {
            variant: Variant::Scalable,
            open: |b, v| {
                view_or_decode::<_, ScalableBloomFilter<str>>(
                    b,
                    ScalableBloomFilterRef::with_hasher(b, v),
                )
            },
            decode: decode::<ScalableBloomFilter<str>>,
            make: Some(|s| {
                Ok(Box::new(
                    ScalableBloomFilter::<str>::builder(s.items, s.fpr)
                        .seed(s.seed)
                        .build()?,
                ))
            }),
            from_hashes: None,
            union: Some(union::<ScalableBloomFilter<str>>),
        };
    }

    #[cfg(feature = "static")]
    mod statics {
        use super::*;
        use crate::{
            BinaryFuse16, BinaryFuse32, BinaryFuse8, BinaryFuseRef, RibbonFilter, RibbonFilterRef,
            Xxh3Builder,
        };

        member! {
            [] BinaryFuse8<str> => BinaryFuse8, view = false, insert = never, |_f| Vec::new();
            [] BinaryFuse16<str> => BinaryFuse16, view = false, insert = never, |_f| Vec::new();
            [] BinaryFuse32<str> => BinaryFuse32, view = false, insert = never, |_f| Vec::new();
            [] RibbonFilter<str> => Ribbon, view = false, insert = never, |_f| Vec::new();
            ['a] BinaryFuseRef<'a, u8, str> => BinaryFuse8, view = true, insert = none, |_f| Vec::new();
            ['a] BinaryFuseRef<'a, u16, str> => BinaryFuse16, view = true, insert = none, |_f| Vec::new();
            ['a] BinaryFuseRef<'a, u32, str> => BinaryFuse32, view = true, insert = none, |_f| Vec::new();
            ['a] RibbonFilterRef<'a, str> => Ribbon, view = true, insert = none, |_f| Vec::new();
        }

        pub(super) const FUSE8: Entry = Entry {
            variant: Variant::BinaryFuse8,
            open: |b, v| Ok(Box::new(BinaryFuseRef::<u8, str>::with_hasher(b, v)?)),
            decode: decode::<BinaryFuse8<str>>,
            make: None,
            from_hashes: Some(|h, s| {
                Ok(Box::new(BinaryFuse8::<str>::from_hashes_with_hasher(
                    h,
                    Xxh3Builder::with_seed(s.seed),
                )?))
            }),
            union: None,
        };
        pub(super) const FUSE16: Entry = Entry {
            variant: Variant::BinaryFuse16,
            open: |b, v| Ok(Box::new(BinaryFuseRef::<u16, str>::with_hasher(b, v)?)),
            decode: decode::<BinaryFuse16<str>>,
            make: None,
            from_hashes: Some(|h, s| {
                Ok(Box::new(BinaryFuse16::<str>::from_hashes_with_hasher(
                    h,
                    Xxh3Builder::with_seed(s.seed),
                )?))
            }),
            union: None,
        };
        pub(super) const FUSE32: Entry = Entry {
            variant: Variant::BinaryFuse32,
            open: |b, v| Ok(Box::new(BinaryFuseRef::<u32, str>::with_hasher(b, v)?)),
            decode: decode::<BinaryFuse32<str>>,
            make: None,
            from_hashes: Some(|h, s| {
                Ok(Box::new(BinaryFuse32::<str>::from_hashes_with_hasher(
                    h,
                    Xxh3Builder::with_seed(s.seed),
                )?))
            }),
            union: None,
        };
        pub(super) const RIBBON: Entry = Entry {
            variant: Variant::Ribbon,
            open: |b, v| Ok(Box::new(RibbonFilterRef::<str>::with_hasher(b, v)?)),
            decode: decode::<RibbonFilter<str>>,
            make: None,
            from_hashes: Some(|h, s| {
                Ok(Box::new(RibbonFilter::<str>::from_hashes_with_hasher(
                    h,
                    s.fpr,
                    Xxh3Builder::with_seed(s.seed),
                )?))
            }),
            union: None,
        };
    }

    #[cfg(feature = "quotient")]
    mod quotient {
        use super::*;
        use crate::quotient::ExpandableFilterRef;
        use crate::{ExpandableFilter, QuotientFilter, QuotientFilterRef};

        member! {
            [] QuotientFilter<str> => Quotient, view = false, insert = fallible,
                |f| vec![Detail::Slots { count: f.capacity(), remainder_bits: f.remainder_bits() }, Detail::Saturated(f.is_saturated())];
            ['a] QuotientFilterRef<'a, str> => Quotient, view = true, insert = none,
                |f| vec![Detail::Slots { count: f.capacity(), remainder_bits: f.remainder_bits() }, Detail::Saturated(f.is_saturated())];
            [] ExpandableFilter<str> => Expandable, view = false, insert = fallible,
                |f| vec![Detail::Slots { count: f.capacity(), remainder_bits: f.fingerprint_bits() }, Detail::Saturated(f.is_saturated())];
            ['a] ExpandableFilterRef<'a, str> => Expandable, view = true, insert = none,
                |f| vec![Detail::Slots { count: f.capacity(), remainder_bits: f.fingerprint_bits() }, Detail::Saturated(f.is_saturated())];
        }

        pub(super) const QUOTIENT: Entry = Entry {
            variant: Variant::Quotient,
            open: |b, v| Ok(Box::new(QuotientFilterRef::<str>::with_hasher(b, v)?)),
            decode: decode::<QuotientFilter<str>>,
            make: Some(|s| {
                Ok(Box::new(
                    QuotientFilter::<str>::builder(s.items, s.fpr)
                        .seed(s.seed)
                        .build()?,
                ))
            }),
            from_hashes: None,
            // The union makes room as a `Vec` does: the table doubles until it fits.
            union: Some(|into, other| {
                let other = QuotientFilter::<str>::from_bytes(other)?;
                mine::<QuotientFilter<str>>(into)?.union_growing(&other)
            }),
        };
        pub(super) const EXPANDABLE: Entry = Entry {
            variant: Variant::Expandable,
            open: |b, v| {
                view_or_decode::<_, ExpandableFilter<str>>(
                    b,
                    ExpandableFilterRef::with_hasher(b, v),
                )
            },
            decode: decode::<ExpandableFilter<str>>,
            make: Some(|s| {
                Ok(Box::new(
                    ExpandableFilter::<str>::builder(s.items, s.fpr)
                        .seed(s.seed)
                        .build()?,
                ))
            }),
            from_hashes: None,
            union: None,
        };
    }

    #[cfg(feature = "window")]
    mod window {
        use super::*;
        use crate::{WindowFilter, WindowFilterRef};

        fn ring(
            generations: u32,
            per_generation: u64,
            buckets: u64,
            bits: (u32, u32),
        ) -> Vec<Detail> {
            vec![Detail::Ring {
                generations,
                per_generation,
                buckets,
                fingerprint_bits: bits.0,
                tag_bits: bits.1,
            }]
        }

        member! {
            [] WindowFilter<str> => Window, view = false, insert = fallible,
                |f| ring(f.generations(), f.per_generation(), f.num_buckets(), (f.fingerprint_bits(), f.tag_bits()));
            ['a] WindowFilterRef<'a, str> => Window, view = true, insert = none,
                |f| ring(f.generations(), f.per_generation(), f.num_buckets(), (f.fingerprint_bits(), f.tag_bits()));
        }

        pub(super) const WINDOW: Entry = Entry {
            variant: Variant::Window,
            open: |b, v| {
                view_or_decode::<_, WindowFilter<str>>(b, WindowFilterRef::with_hasher(b, v))
            },
            decode: decode::<WindowFilter<str>>,
            // `items` is the window: the last `items` inserts.
            make: Some(|s| {
                Ok(Box::new(
                    WindowFilter::<str>::builder(s.items, s.fpr)
                        .seed(s.seed)
                        .build()?,
                ))
            }),
            from_hashes: None,
            union: None,
        };
    }

    /// Every compiled variant's entry, in tag order.
    pub(super) const ENTRIES: &[Entry] = &[
        #[cfg(feature = "classic")]
        classic::CLASSIC,
        #[cfg(feature = "counting")]
        counting::COUNTING,
        #[cfg(feature = "scalable")]
        scalable::SCALABLE,
        #[cfg(feature = "classic")]
        classic::BLOCKED,
        #[cfg(feature = "classic")]
        classic::SIMD_BLOCK,
        #[cfg(feature = "static")]
        statics::FUSE8,
        #[cfg(feature = "static")]
        statics::FUSE16,
        #[cfg(feature = "static")]
        statics::FUSE32,
        #[cfg(feature = "static")]
        statics::RIBBON,
        #[cfg(feature = "quotient")]
        quotient::QUOTIENT,
        #[cfg(feature = "quotient")]
        quotient::EXPANDABLE,
        #[cfg(feature = "classic")]
        classic::SPLIT_BLOCK,
        #[cfg(feature = "window")]
        window::WINDOW,
    ];
}
