//! A rank-select quotient filter: a compact multiset of fingerprints that inserts, deletes
//! and counts copies of a key (Pandey, Bender, Johnson, Patro, "A General-Purpose Counting
//! Filter: Making Every Bit Count", SIGMOD 2017).
//!
//! A key's 64-bit hash gives a fingerprint: among `m` home slots (any multiple of 64) its
//! home slot is `hash * m / 2^64` (for `m = 2^q`, the hash's top `q` bits), and the next `r`
//! bits of the product are stored. A slot costs `r` bits plus 3 bits of metadata (and the
//! table has about 1/64 more slots past the last home slot), so at 1% (`r = 7`) and 95% load
//! a key takes 10.7 bits, against 38.4 for a counting Bloom filter with 4-bit counters. A
//! filter built for `n` keys takes the fewest home slots that hold `n` at 95% load, so it
//! takes about 10.7 bits a key at 1% when full (at most 11.5 from 12,000 keys on; below
//! that the 64-slot blocks weigh more). A key never inserted is reported present when its
//! fingerprint matches a stored one: about `load * 2^-r`.
//!
//! The filter holds at most [`MAX_LOAD`] (95%) of its home slots: an insert past that is
//! [`Error::Full`], with the load, and changes nothing;
//! [`resize`](QuotientFilter::resize) doubles the room (at twice the rate when full again,
//! since the fingerprints keep their bits), and `extend` does so by itself. Its rate is
//! below the target until it is full.
//!
//! Removing a key never inserted is refused ([`Error::NotPresent`], nothing changes) when
//! no copy of its fingerprint is held, which is almost always; when it shares a fingerprint
//! with a key held (a false positive), that key loses a copy, as with a counting Bloom
//! filter: remove only keys you inserted.
//!
//! Copies of a key are counted inside its run, as the paper does, in a form of our own that
//! keeps lookups a plain backwards walk: one copy of remainder `x` is the slot `x`, two are
//! `x x`, more are `x`, the digits of `copies - 3` written as values above `x`, then `x`
//! again. A thousand copies of a key take four or five slots at `r = 7`, not a thousand; a
//! filter full of distinct keys is laid out as without counters. (The two largest
//! remainders have no room above them for digits: their copies take a slot each, about one
//! key in `2^(r-1)`.) [`max_items`](QuotientFilter::max_items) and
//! [`load_factor`](QuotientFilter::load_factor) count slots; [`len`](QuotientFilter::len)
//! counts copies.
//!
//! For a count not known in advance, [`ExpandableFilter`] is one such table that doubles as
//! it fills, its fingerprints giving a bit to the home slot at each doubling, with the rate
//! kept under the target at every size (its docs give the design and the rate
//! model).
//!
//! With the `serde` feature (default), `to_bytes` / `from_bytes` write and read bloomkit's
//! checksummed format (variant tag 12, `docs/format.md`), serde goes through those bytes,
//! and [`QuotientFilterRef`] answers from bytes in place (a memory-mapped file) without
//! copying them.
//!
//! # Examples
//!
//! ```
//! use bloomkit_quotient::QuotientFilter;
//!
//! let mut sessions = QuotientFilter::<str>::new(10_000, 0.01)?;
//! sessions.try_insert("alice")?;
//! sessions.try_insert("alice")?;
//! sessions.try_insert("bob")?;
//! assert_eq!(sessions.count("alice"), 2);
//! sessions.remove("alice")?;
//! assert!(sessions.contains("alice") && sessions.contains("bob"));
//! sessions.remove("alice")?;
//! assert!(!sessions.contains("alice")); // unless "alice" shares a fingerprint with "bob"
//! # Ok::<(), bloomkit_core::Error>(())
//! ```

#![forbid(unsafe_code)]

/// The core crate (the traits, errors and hashing), re-exported.
pub use bloomkit_core;

/// The key-taking reads both tables' filters and their views share: `contains`, `count` (its
/// doc's first words given) and `hash_key`.
macro_rules! key_reads {
    ([$($lt:lifetime)?] $ty:ident, count = $count_doc:literal) => {
        impl<$($lt,)? K: Hash + ?Sized, S: BuildHasher> $ty<$($lt,)? K, S> {
            /// Whether `key` may be in the filter: `true` for every key inserted and not removed.
            pub fn contains(&self, key: &K) -> bool {
                self.contains_hash(self.hasher.hash_one(key))
            }

            #[doc = concat!($count_doc, " (see [`count_hash`](Self::count_hash)).")]
            pub fn count(&self, key: &K) -> u64 {
                self.count_hash(self.hasher.hash_one(key))
            }

            /// The 64-bit hash of `key` that the `*_hash` methods take: the filter's hasher
            /// applied once.
            #[inline]
            pub fn hash_key(&self, key: &K) -> u64 {
                self.hasher.hash_one(key)
            }
        }
    };
}

#[cfg(feature = "serde")]
mod codec;
mod expandable;
mod table;

#[cfg(feature = "serde")]
pub use expandable::ExpandableFilterRef;
pub use expandable::{ExpandableFilter, GROWTH_HORIZON};

#[cfg(feature = "serde")]
pub use codec::QuotientFilterRef;

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;

use bloomkit_core::batch::{pipeline, try_insert_counting, with_popcnt};
use bloomkit_core::build::{FromSettings, Settings};
use bloomkit_core::{Error, Remove, Xxh3Builder};
use derive_where::derive_where;

use table::Table;

/// `len` default values, allocated fallibly.
fn zeroed<T: Default + Clone>(len: usize) -> Result<Vec<T>, Error> {
    bloomkit_core::bits::filled_vec(len as u64, T::default)
}

/// The share of home slots a filter fills before inserts are refused ([`Error::Full`]):
/// past it, runs grow long and inserts slow down.
pub const MAX_LOAD: f64 = 0.95;

/// The copies `quotients` home slots take: [`MAX_LOAD`] of them, in integers (19/20 is
/// 0.95: the floor of `0.95 q`).
#[inline(always)]
fn room(quotients: usize) -> u64 {
    quotients as u64 * 19 / 20
}

/// The error of a table of `quotients` home slots whose `used` slots cannot take more.
fn full(used: u64, quotients: usize) -> Error {
    Error::Full {
        items: used,
        slots: quotients as u64,
    }
}

/// The most home slots this build supports: 2^40.
const MAX_QUOTIENT_BITS: u32 = 40;

/// The most home slots: 2^40.
const MAX_HOME_SLOTS: usize = 1 << MAX_QUOTIENT_BITS;

/// The most home slots a table whose count is not a power of two may have: the byte format
/// writes such a count as its blocks of 64 in 31 bits (`docs/format.md`), so 2^37 less a
/// block; a table sized past it takes the next power of two.
const MAX_ANY_HOME_SLOTS: usize = ((1 << 31) - 1) * table::BLOCK;

/// Whether a table of `home` home slots can be held and written: a multiple of 64 up to
/// [`MAX_ANY_HOME_SLOTS`], or a power of two up to [`MAX_HOME_SLOTS`].
fn home_slots_ok(home: usize) -> bool {
    home >= table::BLOCK
        && home % table::BLOCK == 0
        && (home <= MAX_ANY_HOME_SLOTS || (home.is_power_of_two() && home <= MAX_HOME_SLOTS))
}

/// The fewest home slots, a multiple of 64 (at least 64), that hold `items` at
/// [`MAX_LOAD`]: `room(m) >= items` exactly when `19 m >= 20 items` (both tables' sizing).
fn home_slots_for(items: u64) -> u128 {
    let block = table::BLOCK as u128;
    (u128::from(items) * 20)
        .div_ceil(19)
        .next_multiple_of(block)
        .max(block)
}

/// The widest fingerprint a hash gives after choosing among `home` home slots: the hash's
/// 64 bits less those the home slot takes, so that a fingerprint bit is always a bit of the
/// hash.
fn max_width(home: usize) -> u32 {
    64 - (usize::BITS - (home - 1).leading_zeros())
}

/// A hash's home slot among `home` and its next `bits` bits (`1..=63`): `hash * home / 2^64`
/// and the top bits of the fraction. For `home = 2^q` these are the hash's top `q` bits and
/// the `bits` after them; doubling `home` takes the fraction's first bit into the home slot
/// (`2x` or `2x + 1`), which is how both tables move their entries when they double.
#[inline(always)]
fn fingerprint(hash: u64, home: usize, bits: u32) -> (usize, u64) {
    let product = u128::from(hash) * home as u128;
    ((product >> 64) as usize, (product as u64) >> (64 - bits))
}

/// The fewest bits of remainder: with one, a remainder has no value above it to count its
/// copies with (see the crate docs).
const MIN_REMAINDER_BITS: u32 = 2;

/// A rank-select quotient filter over keys `K` (see the crate docs): inserts, lookups,
/// removes and counts of copies, in `r + 3` bits a slot.
#[derive_where(Clone, PartialEq; S)]
pub struct QuotientFilter<K: ?Sized, S = Xxh3Builder> {
    table: Table,
    target_fpr: f64,
    /// Whether [`Extend`] met a key it could not make room for: the filter then answers
    /// "present" for every key (see [`is_saturated`](Self::is_saturated)).
    saturated: bool,
    hasher: S,
    key: PhantomData<fn(&K)>,
}

bloomkit_core::impl_builder_entry!(QuotientFilter, "bloomkit_quotient", hasher);

impl<K: ?Sized, S: BuildHasher> FromSettings for QuotientFilter<K, S> {
    type Hasher = S;

    /// Home slots for `items` copies at [`MAX_LOAD`] (the fewest multiple of 64 that holds
    /// them, or the next power of two past 2^37), and remainders long enough that a full
    /// table matches a key never inserted with probability at most `fpr` (about
    /// `MAX_LOAD * 2^-r`).
    fn from_settings(settings: &Settings, hasher: S) -> Result<Self, Error> {
        let design = settings.design()?;
        let mut home = home_slots_for(design.capacity);
        if home > MAX_ANY_HOME_SLOTS as u128 {
            home = home.next_power_of_two();
        }
        if home > MAX_HOME_SLOTS as u128 {
            return Err(Error::TooLarge {
                what: bloomkit_core::Unit::HomeSlots,
                size: home as f64,
                max: MAX_HOME_SLOTS as u64,
            });
        }
        let home = home as usize;
        let remainder_bits = ((MAX_LOAD / design.fpr).log2().ceil() as u32).max(MIN_REMAINDER_BITS);
        if remainder_bits > max_width(home) {
            return Err(Error::FprBelowMinimum {
                fpr: design.fpr,
                min: MAX_LOAD * (-f64::from(max_width(home))).exp2(),
                variant: bloomkit_core::Variant::Quotient,
            });
        }
        settings.check_bytes(Table::heap_bytes_for(home, remainder_bits))?;
        Ok(QuotientFilter {
            table: Table::with_home_slots(home, remainder_bits)?,
            target_fpr: design.fpr,
            saturated: false,
            hasher,
            key: PhantomData,
        })
    }
}

impl<K: ?Sized, S> QuotientFilter<K, S> {
    /// Adds a copy of the key whose hash is `hash`; `Ok(true)` when its fingerprint was not
    /// held before (the key is certainly new).
    ///
    /// # Errors
    /// [`Error::Full`] when the copy needs a slot and [`max_items`](Self::max_items) are in
    /// use (or the runs reach the table's end, or the copies held would pass 2^64); nothing
    /// is changed.
    #[inline]
    pub fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        self.table.prefetch_remainders(self.split(hash).0);
        with_popcnt(
            #[inline(always)]
            || self.insert_split(hash),
        )
    }

    /// [`try_insert_hash`](Self::try_insert_hash) inside a POPCNT scope.
    #[inline(always)]
    fn insert_split(&mut self, hash: u64) -> Result<bool, Error> {
        let (home, rem) = self.split(hash);
        match self.table.add(home, rem, 1, self.max_items()) {
            Some(new) => Ok(new),
            None => Err(full(self.table.used, self.table.quotients)),
        }
    }

    /// Removes a copy of the key whose hash is `hash`.
    ///
    /// # Errors
    /// [`Error::NotPresent`] when no copy of its fingerprint is held: the key was certainly
    /// never inserted (or all its copies were removed); nothing is changed. Removing a key
    /// never inserted that shares a fingerprint with one that was removes that one's copy,
    /// as with a counting Bloom filter: remove only keys you inserted.
    pub fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        let (home, rem) = self.split(hash);
        self.table.prefetch_remainders(home);
        if with_popcnt(
            #[inline(always)]
            || self.table.remove(home, rem),
        ) {
            Ok(())
        } else {
            Err(Error::NotPresent)
        }
    }

    /// The same keys in twice the home slots (one bit of every remainder moves into the
    /// quotient): room for twice as many keys, at twice the rate when full again, since
    /// the fingerprints keep their range (home slots times `2^r`). A filter of 2-bit
    /// remainders cannot grow.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past 2^40 home slots (past `2^37 - 64` for a count that is not a
    /// power of two: the most the format writes); [`Error::CannotResize`] with 2-bit
    /// remainders (the shortest the table keeps);
    /// [`Error::Full`] when counted copies need more slots with one bit less of remainder
    /// (a key held many times whose shorter remainder is among the two largest, which keep
    /// a slot a copy); [`Error::AllocationFailed`]. Nothing is changed on an error.
    pub fn resize(&mut self) -> Result<(), Error> {
        let r = self.table.remainder_bits;
        let quotients = self.table.quotients * 2;
        if !home_slots_ok(quotients) {
            let max = if quotients.is_power_of_two() {
                MAX_HOME_SLOTS
            } else {
                MAX_ANY_HOME_SLOTS
            };
            return Err(Error::TooLarge {
                what: bloomkit_core::Unit::HomeSlots,
                size: quotients as f64,
                max: max as u64,
            });
        }
        if r <= MIN_REMAINDER_BITS {
            return Err(Error::CannotResize {
                op: "resize",
                reason: format!(
                    "its remainders have {r} bits, the fewest a quotient filter keeps \
                     (a resize gives one to the home slot)"
                ),
            });
        }
        // In order: each fingerprint lands after the ones before it, with nothing to move.
        let split = self.table.iter().map(|(x, rem, copies)| {
            let home = (x << 1) | (rem >> (r - 1)) as usize;
            (home, rem & ((1 << (r - 1)) - 1), copies)
        });
        self.table = Table::from_sorted(quotients, r - 1, room(quotients), split)
            .ok_or(full(self.table.used, quotients))??;
        Ok(())
    }

    /// The same keys in half the home slots (one quotient bit moves into every remainder):
    /// the rate when full halves back.
    ///
    /// # Errors
    /// [`Error::Full`] when the keys held need more slots than the smaller filter takes
    /// (nothing is changed); [`Error::CannotResize`] when half the home slots is not a
    /// multiple of 64 (64 of them, and any odd number of 64-slot blocks: most filters sized
    /// for a count of keys, which take the fewest blocks that hold it) or with remainders
    /// that would pass 57 bits; [`Error::AllocationFailed`].
    pub fn shrink(&mut self) -> Result<(), Error> {
        let r = self.table.remainder_bits;
        if self.table.quotients % (2 * table::BLOCK) != 0 {
            return Err(Error::CannotResize {
                op: "shrink",
                reason: format!(
                    "it has {} home slots: half of them is not a multiple of 64",
                    self.table.quotients
                ),
            });
        }
        if r >= 57 {
            return Err(Error::CannotResize {
                op: "shrink",
                reason: format!(
                    "its remainders have {r} bits: a shrink would give them {}, past the 57 \
                     a quotient filter keeps",
                    r + 1
                ),
            });
        }
        let half = self.table.quotients / 2;
        if self.table.distinct > room(half) {
            return Err(full(self.table.used, half));
        }
        let joined = self
            .table
            .iter()
            .map(|(x, rem, copies)| (x >> 1, ((x as u64 & 1) << r) | rem, copies));
        self.table = Table::from_sorted(half, r + 1, room(half), joined)
            .ok_or(full(self.table.used, half))??;
        Ok(())
    }

    /// Every copy held by `other` added to this filter (the union of multisets: counts add).
    ///
    /// # Errors
    /// [`Error::Incompatible`] unless both have the same home slots, remainder bits and
    /// hasher; [`Error::Full`] when the sum does not fit (nothing is changed).
    pub fn union_with(&mut self, other: &Self) -> Result<(), Error>
    where
        S: bloomkit_core::PortableHasher,
    {
        use bloomkit_core::Parameter;
        let incompatible =
            |what, left: u64, right: u64| Err(Error::Incompatible { what, left, right });
        if self.table.quotients != other.table.quotients {
            return incompatible(
                Parameter::HomeSlots,
                self.table.quotients as u64,
                other.table.quotients as u64,
            );
        }
        if self.table.remainder_bits != other.table.remainder_bits {
            return incompatible(
                Parameter::Bits,
                u64::from(self.table.remainder_bits),
                u64::from(other.table.remainder_bits),
            );
        }
        let (a, b) = (self.hasher.spec(), other.hasher.spec());
        if a.id != b.id {
            return incompatible(Parameter::Hashers, a.id.into(), b.id.into());
        }
        if a.seed != b.seed {
            return incompatible(Parameter::Seeds, a.seed, b.seed);
        }
        let quotients = self.table.quotients;
        let used = self.table.used + other.table.used;
        if self.table.len.checked_add(other.table.len).is_none() {
            return Err(full(used, quotients));
        }
        // A merge of the two sorted lists of fingerprints into a new table, in one pass (the
        // copies of a fingerprint both hold add up in one entry).
        let merged = {
            let (mut a, mut b) = (self.table.iter().peekable(), other.table.iter().peekable());
            let sorted = core::iter::from_fn(|| match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if (y.0, y.1) < (x.0, x.1) => b.next(),
                (Some(_), _) => a.next(),
                (None, _) => b.next(),
            });
            Table::from_sorted(
                quotients,
                self.table.remainder_bits,
                room(quotients),
                sorted,
            )
        };
        self.table = merged.ok_or(full(used, quotients))??;
        self.saturated |= other.saturated;
        Ok(())
    }

    /// [`union_with`](Self::union_with) that makes room as a `Vec` does: a filter with fewer
    /// home slots than the other is [`resize`](Self::resize)d up to it (its copy, for
    /// `other`), and while the union does not fit both double. Returns how many times this
    /// filter doubled (each doubling keeps the fingerprints' bits: the rate at full load
    /// doubles, see `resize`).
    ///
    /// # Errors
    /// As `union_with` and `resize`: [`Error::Incompatible`] for another hasher, seed or
    /// fingerprint range (home slots times `2^r`, which a resize keeps); [`Error::TooLarge`],
    /// [`Error::CannotResize`] or [`Error::Full`] when the room cannot be made. Nothing is
    /// changed on an error.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_quotient::QuotientFilter;
    ///
    /// let mut a = QuotientFilter::<u64>::new(1_000, 0.01)?;
    /// let mut b = QuotientFilter::<u64>::new(1_000, 0.01)?;
    /// let n = a.max_items() * 3 / 4; // each three quarters full: together, too many
    /// for k in 0..n {
    ///     a.try_insert(&k)?;
    ///     b.try_insert(&(k + 1_000_000))?;
    /// }
    /// assert!(a.clone().union_with(&b).is_err());
    /// let doublings = a.union_growing(&b)?;
    /// assert_eq!(doublings, 1);
    /// assert!((0..n).all(|k| a.contains(&k) && a.contains(&(k + 1_000_000))));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn union_growing(&mut self, other: &Self) -> Result<u32, Error>
    where
        S: bloomkit_core::PortableHasher + Clone,
    {
        use bloomkit_core::Parameter;
        // The fingerprint's range: home slots times 2^r, the same for both when one is the
        // other doubled a few times.
        let range = |f: &Self| (f.table.quotients as u128) << f.table.remainder_bits;
        if range(self) != range(other) {
            let saturating = |f: &Self| u64::try_from(range(f)).unwrap_or(u64::MAX);
            return Err(Error::Incompatible {
                what: Parameter::Fingerprints,
                left: saturating(self),
                right: saturating(other),
            });
        }
        let mut acc = self.clone();
        let mut other = other.clone();
        let mut doublings = 0;
        while acc.table.quotients < other.table.quotients {
            acc.resize()?;
            doublings += 1;
        }
        while other.table.quotients < acc.table.quotients {
            other.resize()?;
        }
        loop {
            match acc.union_with(&other) {
                Err(Error::Full { .. }) => {
                    acc.resize()?;
                    other.resize()?;
                    doublings += 1;
                }
                Err(e) => return Err(e),
                Ok(()) => break,
            }
        }
        *self = acc;
        Ok(doublings)
    }

    /// Removes every key (and ends a saturation).
    pub fn clear(&mut self) {
        self.table.clear();
        self.saturated = false;
    }

    /// Heap memory held.
    pub fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}

impl<K: Hash + ?Sized, S: BuildHasher> QuotientFilter<K, S> {
    /// Adds a copy of `key`; `Ok(true)` when it is certainly new.
    ///
    /// # Errors
    /// As [`try_insert_hash`](Self::try_insert_hash).
    pub fn try_insert(&mut self, key: &K) -> Result<bool, Error> {
        self.try_insert_hash(self.hasher.hash_one(key))
    }

    /// Removes a copy of `key`.
    ///
    /// # Errors
    /// As [`remove_hash`](Self::remove_hash).
    pub fn remove(&mut self, key: &K) -> Result<(), Error> {
        self.remove_hash(self.hasher.hash_one(key))
    }

    /// Adds a copy of every key of `keys`, in order, requesting their cache lines a group at a
    /// time as [`contains_batch`](Self::contains_batch) does. Returns how many were certainly
    /// new (as [`try_insert`](Self::try_insert) counts them one at a time).
    ///
    /// # Errors
    /// [`Error::Full`] at the first key that does not fit: the keys before it are in, it and
    /// the keys after it are not ([`len`](Self::len) tells how many went in).
    pub fn try_insert_batch<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        with_popcnt(
            #[inline(always)]
            || {
                try_insert_counting(
                    self,
                    keys,
                    |f, key| f.stage(key.borrow()),
                    Self::insert_split,
                )
            },
        )
    }

    /// Adds a copy of every key of `keys`, doubling the table whenever it is full, as a
    /// `Vec` grows (each doubling spends a remainder bit: the rate when full doubles, see
    /// [`resize`](Self::resize)). Returns the doublings it needed. The batched inserts of
    /// [`try_insert_batch`](Self::try_insert_batch), with room made instead of
    /// [`Error::Full`].
    ///
    /// # Errors
    /// As [`resize`](Self::resize) when the table must double and cannot
    /// ([`Error::CannotResize`] when its remainders have no bit left to give,
    /// [`Error::TooLarge`], [`Error::Full`], [`Error::AllocationFailed`]): the keys before
    /// that one are in, it and the keys after it are not.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_quotient::QuotientFilter;
    ///
    /// let mut f = QuotientFilter::<u64>::new(1_000, 0.01)?;
    /// let doublings = f.extend_growing(0..10_000u64)?;
    /// assert!(doublings >= 3);
    /// assert!((0..10_000u64).all(|k| f.contains(&k)));
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn extend_growing<I>(&mut self, keys: I) -> Result<u32, Error>
    where
        I: IntoIterator,
        I::Item: Borrow<K>,
    {
        let mut doublings = 0;
        with_popcnt(
            #[inline(always)]
            || {
                try_insert_counting(
                    self,
                    keys,
                    |f, key| f.stage(key.borrow()),
                    |f, hash| loop {
                        match f.insert_split(hash) {
                            Err(Error::Full { .. }) => {
                                f.resize()?;
                                doublings += 1;
                            }
                            other => return other,
                        }
                    },
                )
            },
        )?;
        Ok(doublings)
    }
}

/// Adds a copy of every key, doubling the table whenever it is full, as
/// [`extend_growing`](QuotientFilter::extend_growing) does. `extend` cannot return an error
/// and never drops a key or panics: when the table cannot double again (its remainders are
/// down to 2 bits, it is at the most home slots [`resize`](QuotientFilter::resize) allows,
/// counted copies need more slots, or the memory cannot be had), the filter
/// [saturates](QuotientFilter::is_saturated): from then on it answers "present" for every
/// key, until [`clear`](QuotientFilter::clear). A filter built for `n` keys at 1% (7-bit
/// remainders) doubles five times before that, to about `32 n` keys. To be told instead,
/// call `extend_growing` or [`try_insert_batch`](QuotientFilter::try_insert_batch).
///
/// # Examples
///
/// ```
/// use bloomkit_quotient::QuotientFilter;
///
/// let mut f = QuotientFilter::<u64>::new(1_000, 0.01)?;
/// f.extend(0..10_000u64); // doubles four times
/// assert!((0..10_000u64).all(|k| f.contains(&k)));
/// assert!(!f.is_saturated());
/// f.extend(0..1_000_000u64); // past what 2-bit remainders can hold
/// assert!(f.is_saturated() && f.contains(&u64::MAX));
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
impl<K: Hash + ?Sized, S: BuildHasher, T: Borrow<K>> Extend<T> for QuotientFilter<K, S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, keys: I) {
        // A saturated filter answers every key already; otherwise the keys before a refusal
        // are in, and the refused key and those after it are answered by the saturation.
        if !self.saturated && self.extend_growing(keys).is_err() {
            self.saturated = true;
        }
    }
}

/// The read side, the same for the filter and its view over bytes ([`QuotientFilterRef`]):
/// lookups, counts, sizes and estimates over the fields `table`,
/// `target_fpr` and `hasher`, `Debug`, and the read-only side of bloomkit's trait.
macro_rules! read_side {
    ([$($lt:lifetime)?] $ty:ident) => {
        impl<$($lt,)? K: ?Sized, S> $ty<$($lt,)? K, S> {
            /// The fingerprint of a hash: its home slot and remainder.
            #[inline(always)]
            fn split(&self, hash: u64) -> (usize, u64) {
                fingerprint(hash, self.table.quotients, self.table.remainder_bits)
            }

            /// The hasher keys are hashed with.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// Copies held (exact: every copy of a fingerprint is counted; a
            /// [saturated](Self::is_saturated) filter leaves out the keys `extend` could not place).
            pub fn len(&self) -> u64 {
                self.table.len
            }

            /// Whether the filter holds nothing.
            pub fn is_empty(&self) -> bool {
                self.table.len == 0
            }

            /// Home slots (a multiple of 64).
            pub fn capacity(&self) -> u64 {
                self.table.quotients as u64
            }

            /// The slots inserts may fill before [`Error::Full`]: [`MAX_LOAD`] of the home slots.
            /// A key takes one; its copies past the first take one more, then one for every
            /// digit of their count (see the crate docs).
            pub fn max_items(&self) -> u64 {
                room(self.table.quotients)
            }

            /// Slots in use over home slots.
            pub fn load_factor(&self) -> f64 {
                self.table.used as f64 / self.table.quotients as f64
            }

            /// Bits of remainder a slot stores.
            pub fn remainder_bits(&self) -> u32 {
                self.table.remainder_bits
            }

            /// Whether the key whose hash is `hash` may be in the filter.
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                // The remainders near the home slot are requested before the block's bits are
                // read, so that the two misses overlap; a key whose home slot holds no run is
                // answered from those bits, without entering the POPCNT scope (a call).
                let home = self.split(hash).0;
                self.table.prefetch_remainders(home);
                if !self.table.is_occupied(home) {
                    return self.saturated;
                }
                with_popcnt(
                    #[inline(always)]
                    || self.contains_split(hash),
                )
            }

            /// [`contains_hash`](Self::contains_hash) inside a POPCNT scope (see `with_popcnt`).
            #[inline(always)]
            fn contains_split(&self, hash: u64) -> bool {
                let (home, rem) = self.split(hash);
                self.table.contains(home, rem) | self.saturated
            }

            /// Copies of the key whose hash is `hash` (at least those inserted and not removed;
            /// more when another key shares its fingerprint). A saturated filter answers
            /// `u64::MAX` for every key: it no longer knows.
            pub fn count_hash(&self, hash: u64) -> u64 {
                if self.saturated {
                    return u64::MAX;
                }
                let (home, rem) = self.split(hash);
                with_popcnt(
                    #[inline(always)]
                    || self.table.count(home, rem),
                )
            }

            /// Whether the filter is saturated: [`Extend`] met a key it could not make room
            /// for (the table could not double again: see [`resize`](QuotientFilter::resize)'s
            /// errors), so that every key answers "present" (and counts `u64::MAX`) until
            /// [`clear`](QuotientFilter::clear). Only `extend` saturates a filter (it cannot
            /// return an error and never drops a key); every other insert returns the error.
            /// The byte format keeps the state.
            pub fn is_saturated(&self) -> bool {
                self.saturated
            }

            /// The false-positive rate now: the chance that a key never inserted shares its
            /// fingerprint with one held, `1 - (1 - 2^-r / m)^d` for `d` distinct fingerprints and `m` home slots
            /// (1 when the filter is [saturated](Self::is_saturated)).
            pub fn estimated_fpr(&self) -> f64 {
                if self.saturated {
                    return 1.0;
                }
                let p = (-f64::from(self.table.remainder_bits)).exp2()
                    / self.table.quotients as f64;
                -((-p).ln_1p() * self.table.distinct as f64).exp_m1()
            }

        }

        key_reads!([$($lt)?] $ty, count = "Copies of `key` held");

        impl<$($lt,)? K: Hash + ?Sized, S: BuildHasher> $ty<$($lt,)? K, S> {

            /// Whether each of `keys` may be in the filter, appended to `out` in order: the answers
            /// of [`contains`](Self::contains), with the cache lines of a group of keys requested
            /// before any is probed ([`bloomkit_core::batch`]), so that in a filter larger than the
            /// cache their misses overlap.
            ///
            /// # Examples
            ///
            /// ```
            /// use bloomkit_quotient::QuotientFilter;
            ///
            /// let mut f = QuotientFilter::<str>::new(1_000, 0.01)?;
            /// assert_eq!(f.try_insert_batch(["a", "b", "a"])?, 2); // keys, or references to them
            /// let mut found = Vec::new();
            /// f.contains_batch(["a", "b"], &mut found);
            /// assert_eq!(found, [true, true]);
            /// assert_eq!(f.count("a"), 2);
            /// # Ok::<(), bloomkit_core::Error>(())
            /// ```
            pub fn contains_batch<I>(&self, keys: I, out: &mut Vec<bool>)
            where
                I: IntoIterator,
                I::Item: Borrow<K>,
            {
                with_popcnt(
                    #[inline(always)]
                    || {
                        pipeline(
                            out,
                            keys,
                            |_, key| self.stage(key.borrow()),
                            |out, hash| out.push(self.contains_split(hash)),
                        );
                    },
                );
            }

            /// A key's hash, with the cache lines its lookup starts with requested.
            #[inline(always)]
            fn stage(&self, key: &K) -> u64 {
                let hash = self.hasher.hash_one(key);
                self.table.prefetch(self.split(hash).0);
                hash
            }
        }

        impl<$($lt,)? K: ?Sized, S: fmt::Debug> fmt::Debug for $ty<$($lt,)? K, S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("len", &self.table.len)
                    .field("home_slots", &self.table.quotients)
                    .field("remainder_bits", &self.table.remainder_bits)
                    .field("saturated", &self.saturated)
                    .field("hasher", &self.hasher)
                    .finish()
            }
        }

        bloomkit_core::impl_lookup!([$($lt,)? S: BuildHasher] $ty<$($lt,)? K, S>, key = K,
            exact_len, target_fpr = |f| f.target_fpr);
    };
}

read_side!([] QuotientFilter);
#[cfg(feature = "serde")]
read_side!(['a] QuotientFilterRef);

bloomkit_core::impl_fallible_filter!([S: BuildHasher] QuotientFilter<K, S>, key = K);

impl<K: Hash + ?Sized, S: BuildHasher> Remove for QuotientFilter<K, S> {
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        QuotientFilter::remove_hash(self, hash)
    }
}

/// The multiset union, as [`QuotientFilter::union_with`] (counts add); for a union that
/// makes room, [`QuotientFilter::union_growing`].
impl<K: ?Sized, S: bloomkit_core::PortableHasher + Clone> bloomkit_core::Union
    for QuotientFilter<K, S>
{
    fn union_with(&mut self, other: &Self) -> Result<(), Error> {
        QuotientFilter::union_with(self, other)
    }
}
