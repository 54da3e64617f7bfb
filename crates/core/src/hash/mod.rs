//! One 64-bit hash per key, and the k probe positions derived from it.
//!
//! Every bloomkit filter hashes a key exactly once, with a [`BuildHasher`] (by default
//! [`Xxh3Builder`]: XXH3-64 with a seed), and derives all k bit positions from that one
//! value: a classic-layout filter by its [`ProbeScheme`] ([`WideProbes`], or [`Probes`] for
//! filters written before format version 3), a blocked filter with [`BlockProbe`]. Callers
//! who query several filters with the same key can hash it
//! once with [`Lookup::hash_key`](crate::Lookup::hash_key) and reuse the value.
//!
//! # Portability
//!
//! [`Xxh3Hasher`] writes every integer in little-endian order and every `usize`/`isize`
//! as 64 bits, so a key whose `Hash` impl is built from integers, strings and slices
//! hashes to the same value on every platform, in every process, on every run, and
//! (pinned by golden tests) across bloomkit releases. That is what lets a filter built in
//! one process answer identically in another ([`PortableHasher`] records the hasher and
//! seed in the serialized bytes).

use core::hash::{BuildHasher, Hash};

pub use crate::xxh3::xxh64;

/// The integer writes of bloomkit's hashers: little-endian on every platform, `usize` and
/// `isize` as 64 bits, so 32- and 64-bit, little- and big-endian machines agree.
macro_rules! little_endian_writes {
    () => {
        #[inline(always)]
        fn write_u8(&mut self, i: u8) {
            self.write(&[i]);
        }
        #[inline(always)]
        fn write_u16(&mut self, i: u16) {
            self.write(&i.to_le_bytes());
        }
        #[inline(always)]
        fn write_u32(&mut self, i: u32) {
            self.write(&i.to_le_bytes());
        }
        #[inline(always)]
        fn write_u64(&mut self, i: u64) {
            self.write(&i.to_le_bytes());
        }
        #[inline(always)]
        fn write_u128(&mut self, i: u128) {
            self.write(&i.to_le_bytes());
        }
        #[inline(always)]
        fn write_usize(&mut self, i: usize) {
            self.write(&(i as u64).to_le_bytes());
        }
        #[inline(always)]
        fn write_isize(&mut self, i: isize) {
            self.write(&(i as i64).to_le_bytes());
        }
    };
}

pub use crate::arch::{
    block_contains_fast, block_contains_inlined, portable_split_block_contains,
    portable_split_block_insert, split_block_contains, split_block_contains_inlined,
    split_block_insert, split_block_mask, SPLIT_BLOCK_SALT,
};

/// A [`BuildHasher`] whose output depends only on the key and a recorded seed, never on the
/// process, platform or Rust release, so that a filter using it can be serialized.
///
/// bloomkit reserves ids `0..=127`; pick an id of 128 or more for a hasher of your own.
///
/// # Implementing
///
/// Return the same `hash_one` for the same key and seed everywhere, and rebuild exactly
/// that hasher in [`from_spec`](PortableHasher::from_spec). Changing the output of an
/// existing id silently breaks every filter stored with it: use a new id instead.
pub trait PortableHasher: BuildHasher {
    /// The id written into serialized filters.
    const ID: u8;
    /// A short name for messages.
    const NAME: &'static str;

    /// The seed this hasher was built with (for [`KeyedHasher`], a check value of its key).
    fn seed(&self) -> u64;

    /// The (id, seed) pair that identifies this hasher.
    fn spec(&self) -> HasherSpec {
        HasherSpec {
            id: Self::ID,
            seed: self.seed(),
        }
    }

    /// A hasher of the same kind (the same id, the same key if it has one) with another
    /// seed: what a filter made of parts seeded apart (the multi-attribute filter) gives each
    /// part.
    fn reseeded(&self, seed: u64) -> Self
    where
        Self: Sized;

    /// The hasher a serialized filter names, if it is this type and needs nothing the bytes
    /// do not hold.
    ///
    /// # Errors
    /// [`DecodeError::HasherMismatch`](crate::DecodeError::HasherMismatch) when `spec` names
    /// another hasher; [`DecodeError::KeyRequired`](crate::DecodeError::KeyRequired) for a
    /// keyed hasher, whose key the bytes do not hold.
    fn from_spec(spec: HasherSpec) -> Result<Self, crate::DecodeError>
    where
        Self: Sized;

    /// As [`from_spec`](PortableHasher::from_spec), with the secret key a keyed hasher
    /// needs (ignored by unkeyed hashers).
    ///
    /// # Errors
    /// As [`from_spec`](PortableHasher::from_spec), and
    /// [`DecodeError::WrongKey`](crate::DecodeError::WrongKey) when `key` is not the key the
    /// filter was written with.
    fn from_spec_with_key(spec: HasherSpec, key: &HashKey) -> Result<Self, crate::DecodeError>
    where
        Self: Sized,
    {
        let _ = key;
        Self::from_spec(spec)
    }
}

/// The error of a hasher that is not the one `spec` names.
fn mismatch<S: PortableHasher>(spec: HasherSpec) -> crate::DecodeError {
    crate::DecodeError::HasherMismatch {
        expected: S::ID,
        found: spec.id,
    }
}

/// Which hash function, with which seed: two filters can only be combined, and a serialized
/// filter can only be read back, when these match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HasherSpec {
    /// The [`PortableHasher::ID`].
    pub id: u8,
    /// The seed.
    pub seed: u64,
}

impl HasherSpec {
    /// No hashing: keys are their own positions (the bitmap). Id 0, seed 0.
    pub const IDENTITY: HasherSpec = HasherSpec { id: 0, seed: 0 };

    /// Parquet's hash: XXH64, seed 0, over a value's plain encoding (the split-block
    /// filter, whose bits a Parquet reader must find). Id 5, seed 0.
    pub const PARQUET_XXH64: HasherSpec = HasherSpec { id: 5, seed: 0 };

    /// Whether this is [`KeyedHasher`] (SipHash under a secret key): its key is not in a
    /// filter's bytes, so only a reader given the key can answer.
    pub const fn is_keyed(self) -> bool {
        self.id == <KeyedHasher as PortableHasher>::ID
    }
}

mod block;
mod keyed;
mod probe;
#[cfg(test)]
mod tests;
mod xxh3_builder;

pub use block::*;
pub use keyed::*;
pub use probe::*;
pub use xxh3_builder::*;
