//! A bitmap for dense integer keys: one bit per possible key in a bounded range.
//!
//! When keys are integers packed into a known range (auto-increment ids, IPv4 addresses,
//! timestamps in a window, "user ids that logged in today"), a bitmap is exact (no false
//! positives), smaller than a Bloom filter, and can count: 100 million ids in a range of
//! 125 million take 15.6 MB, where a 1% Bloom filter needs about 120 MB. It implements
//! bloomkit's [`Filter`] trait (with a false-positive rate of 0), so code written against
//! the trait can switch to it.
//!
//! # Examples
//!
//! ```
//! use bloomkit_bitmap::Bitmap;
//!
//! // Who logged in today? User ids run from 1 to 10,000,000.
//! let mut today = Bitmap::new(1u32..=10_000_000)?;
//! assert!(today.try_insert(&42)?);           // new
//! assert!(!today.try_insert(&42)?);          // already there
//! today.try_insert(&7)?;
//! today.try_insert(&9_999_999)?;
//! assert_eq!(today.len(), 3);            // exact, O(1)
//! assert!(today.contains(&7) && !today.contains(&8));
//! assert_eq!(today.iter().collect::<Vec<_>>(), [7, 42, 9_999_999]);
//! assert_eq!(today.rank(100), 2);        // ids <= 100
//! assert_eq!(today.select(2), Some(9_999_999));
//!
//! // Keys outside the range are an error that names them, not a panic.
//! let err = today.try_insert(&0).unwrap_err();
//! assert_eq!(err.to_string(), "key 0 is outside the bitmap's range 1..=10000000");
//!
//! // Set algebra, word at a time.
//! let yesterday = Bitmap::from_keys(1u32..=10_000_000, [7, 8, 9])?;
//! let both_days = today.intersection(&yesterday)?;
//! assert_eq!(both_days.iter().collect::<Vec<_>>(), [7]);
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! Signed keys and negative bounds work the same way:
//!
//! ```
//! use bloomkit_bitmap::Bitmap;
//!
//! let mut celsius = Bitmap::new(-40i16..=60)?;
//! celsius.extend_checked([-40, -3, 0, 25])?;
//! assert_eq!((celsius.min(), celsius.max()), (Some(-40), Some(25)));
//! # Ok::<(), bloomkit_core::Error>(())
//! ```
//!
//! # Cost
//!
//! Memory is one bit per key in the range plus a small constant; a range whose bitmap cannot
//! be allocated (say `0..=u64::MAX`) is an error, not an abort. `insert`, `remove`,
//! `contains` and `len` are O(1); `rank`, `select`, `min`, `max` and the set operations scan
//! the words (`count_ones` per `u64`), at memory speed.
//!
//! # Crate features
//!
//! - `serde` (default): `Serialize`/`Deserialize` (validated on the way in), and
//!   [`Bitmap::to_bytes`] / [`Bitmap::from_bytes`] in bloomkit's versioned byte format.

#![forbid(unsafe_code)]

/// The core crate this one builds on (the `Filter` trait, errors, hashing, sizing), so that
/// a user of this crate alone can name them without depending on it separately.
pub use bloomkit_core;

use core::fmt;
use core::hash::Hash;
use core::ops::RangeInclusive;

use bloomkit_core::bits::{BitArray, Ones, MAX_BITS};
use bloomkit_core::{Error, Filter, FilterCore, Intersection, Remove, Union};
use num_traits::{FromPrimitive, PrimInt, ToPrimitive};

#[cfg(feature = "serde")]
mod codec;
#[cfg(feature = "serde")]
pub use codec::BitmapRef;

/// The integer types a [`Bitmap`] can hold: every primitive integer (`u8`..`u128`,
/// `i8`..`i128`, `usize`, `isize`), through num-traits.
pub trait Key:
    PrimInt + ToPrimitive + FromPrimitive + Hash + fmt::Debug + fmt::Display + Send + Sync + 'static
{
}

impl<K> Key for K where
    K: PrimInt
        + ToPrimitive
        + FromPrimitive
        + Hash
        + fmt::Debug
        + fmt::Display
        + Send
        + Sync
        + 'static
{
}

/// What [`Lookup::hash_key`] returns for a key outside the range: no valid offset is this
/// large (offsets are below [`MAX_BITS`] `<= 2^63`).
const OUTSIDE: u64 = u64::MAX;

/// A set of integer keys from a fixed range `lo..=hi`, one bit per possible key.
#[derive(Clone, PartialEq, Eq)]
pub struct Bitmap<K> {
    lo: K,
    hi: K,
    /// `ordinal(lo)`, so offsets are `ordinal(key) - base`.
    base: u128,
    bits: BitArray,
}

impl<K: Key> Bitmap<K> {
    /// An empty bitmap for keys in `range`.
    ///
    /// # Errors
    /// [`Error::EmptyRange`] when the range has no keys; [`Error::TooLarge`] when it has more
    /// than [`MAX_BITS`] keys (as `0..=u64::MAX` does); [`Error::AllocationFailed`] when the
    /// memory cannot be had.
    pub fn new(range: RangeInclusive<K>) -> Result<Self, Error> {
        let (lo, hi) = range.into_inner();
        let keys = Self::range_len(lo, hi)?;
        Ok(Bitmap {
            lo,
            hi,
            base: ordinal(lo).ok_or_else(|| too_large(lo, hi))?,
            bits: BitArray::new(keys)?,
        })
    }

    /// A bitmap for `range` holding `keys`.
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`Error::KeyOutOfRange`] for the first key outside the
    /// range.
    pub fn from_keys(
        range: RangeInclusive<K>,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<Self, Error> {
        let mut bitmap = Self::new(range)?;
        bitmap.extend_checked(keys)?;
        Ok(bitmap)
    }

    /// The number of keys in `lo..=hi`, checked.
    fn range_len(lo: K, hi: K) -> Result<u64, Error> {
        if lo > hi {
            return Err(Error::EmptyRange {
                lo: lo.to_string(),
                hi: hi.to_string(),
            });
        }
        // `hi - lo` as ordinals: at most u128::MAX, so checking it against MAX_BITS - 1
        // first keeps the `+ 1` from overflowing.
        let span = ordinal(lo).zip(ordinal(hi)).map(|(l, h)| h - l);
        match span {
            Some(span) if span < u128::from(MAX_BITS) => Ok(span as u64 + 1),
            _ => Err(too_large(lo, hi)),
        }
    }

    /// The bit of `key`, if it is in the range.
    #[inline]
    fn offset(&self, key: K) -> Option<u64> {
        offset(key, self.lo, self.hi, self.base)
    }

    /// The key of bit `offset`, which is below `len`.
    #[inline]
    fn key_at(&self, offset: u64) -> K {
        from_ordinal(self.base + u128::from(offset))
            .expect("every offset below the range length is a key of the range")
    }

    fn out_of_range(&self, key: K) -> Error {
        Error::KeyOutOfRange {
            key: key.to_string(),
            lo: self.lo.to_string(),
            hi: self.hi.to_string(),
        }
    }

    /// Inserts `key`; returns `true` if it was not present.
    ///
    /// (`try_insert`, not `insert`: a bitmap refuses keys outside its range, and in bloomkit
    /// `insert` names only inserts that cannot fail. The key by reference, as through the
    /// `Filter` trait: one signature per name.)
    ///
    /// # Errors
    /// [`Error::KeyOutOfRange`] for a key outside the range; nothing changes.
    #[inline]
    pub fn try_insert(&mut self, key: &K) -> Result<bool, Error> {
        match self.offset(*key) {
            Some(i) => Ok(self.bits.set(i)),
            None => Err(self.out_of_range(*key)),
        }
    }

    /// Inserts every key, all or nothing; returns how many were new.
    ///
    /// # Errors
    /// [`Error::KeyOutOfRange`] for the first key outside the range, after undoing the
    /// inserts this call made: the bitmap is then as it was.
    pub fn extend_checked(&mut self, keys: impl IntoIterator<Item = K>) -> Result<u64, Error> {
        let mut added = Vec::new();
        for key in keys {
            match self.offset(key) {
                Some(i) => {
                    if self.bits.set(i) {
                        added.push(i);
                    }
                }
                None => {
                    for i in added {
                        self.bits.unset(i);
                    }
                    return Err(self.out_of_range(key));
                }
            }
        }
        Ok(added.len() as u64)
    }

    /// Whether `key` is present. A key outside the range is simply absent.
    #[inline]
    pub fn contains(&self, key: &K) -> bool {
        self.offset(*key).is_some_and(|i| self.bits.get(i))
    }

    /// Removes `key`, as every bloomkit filter's `remove` does: `Ok` if it was present,
    /// [`Error::NotPresent`] if not (a key outside the range is not present); nothing
    /// changes then. Exact: no other key is affected.
    ///
    /// # Errors
    /// [`Error::NotPresent`].
    #[inline]
    pub fn remove(&mut self, key: &K) -> Result<(), Error> {
        match self.offset(*key) {
            Some(i) if self.bits.unset(i) => Ok(()),
            _ => Err(Error::NotPresent),
        }
    }

    /// The number of keys present, in O(1).
    #[inline]
    pub fn len(&self) -> u64 {
        self.bits.count_ones()
    }

    /// Whether no key is present.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.bits.clear();
    }

    /// The range of keys this bitmap can hold.
    pub fn range(&self) -> RangeInclusive<K> {
        self.lo..=self.hi
    }

    /// The number of keys the range has room for.
    pub fn capacity(&self) -> u64 {
        self.bits.len()
    }

    /// The keys present, in ascending order.
    pub fn iter(&self) -> Iter<'_, K> {
        Iter {
            bitmap: self,
            ones: self.bits.ones(),
        }
    }

    /// The smallest key present.
    pub fn min(&self) -> Option<K> {
        self.bits.first_one().map(|i| self.key_at(i))
    }

    /// The largest key present.
    pub fn max(&self) -> Option<K> {
        self.bits.last_one().map(|i| self.key_at(i))
    }

    /// How many keys present are `<= key` (any `key`, in the range or not).
    pub fn rank(&self, key: K) -> u64 {
        if key < self.lo {
            0
        } else if key > self.hi {
            self.len()
        } else {
            self.offset(key).map_or(0, |i| self.bits.rank(i + 1))
        }
    }

    /// The `n`-th smallest key present (0-based), if there are more than `n`.
    pub fn select(&self, n: u64) -> Option<K> {
        self.bits.select(n).map(|i| self.key_at(i))
    }

    /// Bytes of heap memory held: one bit per key of the range, rounded up to words.
    pub fn heap_bytes(&self) -> usize {
        self.bits.heap_bytes()
    }

    /// Checks that `other` covers the same range.
    ///
    /// # Errors
    /// [`Error::RangeMismatch`].
    pub fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        if self.lo == other.lo && self.hi == other.hi {
            Ok(())
        } else {
            Err(Error::RangeMismatch {
                left: format!("{}..={}", self.lo, self.hi),
                right: format!("{}..={}", other.lo, other.hi),
            })
        }
    }

    fn combine(
        &mut self,
        other: &Self,
        op: fn(&mut BitArray, &BitArray) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.check_compatible(other)?;
        op(&mut self.bits, &other.bits)
    }

    /// Adds every key of `other`.
    ///
    /// # Errors
    /// [`Error::RangeMismatch`]; `self` is then unchanged.
    pub fn union_with(&mut self, other: &Self) -> Result<(), Error> {
        self.combine(other, BitArray::union_with)
    }

    /// Keeps only the keys `other` also has.
    ///
    /// # Errors
    /// As [`union_with`](Self::union_with).
    pub fn intersect_with(&mut self, other: &Self) -> Result<(), Error> {
        self.combine(other, BitArray::intersect_with)
    }

    /// Removes every key `other` has.
    ///
    /// # Errors
    /// As [`union_with`](Self::union_with).
    pub fn difference_with(&mut self, other: &Self) -> Result<(), Error> {
        self.combine(other, BitArray::difference_with)
    }

    /// Keeps the keys exactly one of the two has.
    ///
    /// # Errors
    /// As [`union_with`](Self::union_with).
    pub fn symmetric_difference_with(&mut self, other: &Self) -> Result<(), Error> {
        self.combine(other, BitArray::symmetric_difference_with)
    }

    fn combined(
        &self,
        other: &Self,
        op: fn(&mut Self, &Self) -> Result<(), Error>,
    ) -> Result<Self, Error> {
        self.check_compatible(other)?;
        let mut out = self.clone();
        op(&mut out, other)?;
        Ok(out)
    }

    /// The keys of either.
    ///
    /// # Errors
    /// As [`union_with`](Self::union_with).
    pub fn union(&self, other: &Self) -> Result<Self, Error> {
        self.combined(other, Self::union_with)
    }

    /// The keys of both.
    ///
    /// # Errors
    /// As [`union_with`](Self::union_with).
    pub fn intersection(&self, other: &Self) -> Result<Self, Error> {
        self.combined(other, Self::intersect_with)
    }

    /// The keys of `self` that `other` lacks.
    ///
    /// # Errors
    /// As [`union_with`](Self::union_with).
    pub fn difference(&self, other: &Self) -> Result<Self, Error> {
        self.combined(other, Self::difference_with)
    }

    /// The keys of exactly one of the two.
    ///
    /// # Errors
    /// As [`union_with`](Self::union_with).
    pub fn symmetric_difference(&self, other: &Self) -> Result<Self, Error> {
        self.combined(other, Self::symmetric_difference_with)
    }
}

/// Whether `K` has negative values (a constant for each key type).
#[inline]
fn is_signed<K: Key>() -> bool {
    K::min_value() < K::zero()
}

/// `key`'s place among all values of its type, as a `u128` that keeps their order: an
/// unsigned key as it is, a signed one offset by 2^127 (its sign bit flipped). Every
/// primitive integer has one, `u128::MAX` and `i128::MIN` included, and the distance between
/// two keys is the difference of their ordinals. (`None` only for a `Key` type that is not
/// a primitive integer and does not fit.)
#[inline]
fn ordinal<K: Key>(key: K) -> Option<u128> {
    if is_signed::<K>() {
        key.to_i128().map(|k| (k as u128) ^ (1 << 127))
    } else {
        key.to_u128()
    }
}

/// The key whose [`ordinal`] is `o`, if `K` has one.
#[inline]
fn from_ordinal<K: Key>(o: u128) -> Option<K> {
    if is_signed::<K>() {
        K::from_i128((o ^ (1 << 127)) as i128)
    } else {
        K::from_u128(o)
    }
}

/// The bit of `key` in a bitmap of `lo..=hi` whose first ordinal is `base`, if it is in the
/// range: for the bitmap and its view.
#[inline]
fn offset<K: Key>(key: K, lo: K, hi: K, base: u128) -> Option<u64> {
    if key < lo || key > hi {
        return None;
    }
    Some((ordinal(key)? - base) as u64)
}

fn too_large<K: Key>(lo: K, hi: K) -> Error {
    let span = ordinal(lo).zip(ordinal(hi)).map(|(l, h)| (h - l) as f64);
    Error::TooLarge {
        what: bloomkit_core::Unit::Bits,
        size: span.map_or(f64::INFINITY, |s| s + 1.0),
        max: MAX_BITS,
    }
}

/// The read side of a bitmap and of its view (`BitmapRef`): both hold `lo`, `hi`, `base`
/// and bits with `get` and `len`; `$heap` is their heap memory.
macro_rules! exact_reads {
    ([$($generics:tt)*] $ty:ty, $heap:expr) => {
        impl<$($generics)*> bloomkit_core::LookupCore for $ty {
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                hash < self.bits.len() && self.bits.get(hash)
            }
            fn estimated_len(&self) -> f64 {
                self.bits.count_ones() as f64
            }
            fn heap_bytes(&self) -> usize {
                $heap(self)
            }
            /// Always `Some(0.0)`: a bitmap is exact.
            fn target_fpr(&self) -> Option<f64> {
                Some(0.0)
            }
            fn estimated_fpr(&self) -> f64 {
                0.0
            }
        }

        impl<$($generics)*> bloomkit_core::Lookup for $ty {
            type Key = K;

            /// The key's offset in the range (`u64::MAX` for a key outside it): a bitmap's
            /// "hash" is the identity.
            #[inline]
            fn hash_key(&self, key: &K) -> u64 {
                $crate::offset(*key, self.lo, self.hi, self.base).unwrap_or($crate::OUTSIDE)
            }
        }
    };
}
#[cfg(feature = "serde")]
pub(crate) use exact_reads;

exact_reads!([K: Key] Bitmap<K>, Bitmap::heap_bytes);

impl<K: Key> FilterCore for Bitmap<K> {
    type InsertError = Error;
    fn try_insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        if hash < self.bits.len() {
            Ok(self.bits.set(hash))
        } else {
            Err(Error::KeyOutOfRange {
                key: format!("at offset {hash}"),
                lo: self.lo.to_string(),
                hi: self.hi.to_string(),
            })
        }
    }
    fn clear(&mut self) {
        Bitmap::clear(self);
    }
}

impl<K: Key> Filter for Bitmap<K> {
    /// Names the key in the error, which the offset alone cannot.
    #[inline]
    fn try_insert(&mut self, key: &K) -> Result<bool, Error> {
        Bitmap::try_insert(self, key)
    }
}

impl<K: Key> Remove for Bitmap<K> {
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        if hash < self.bits.len() && self.bits.unset(hash) {
            Ok(())
        } else {
            Err(Error::NotPresent)
        }
    }
}

impl<K: Key> Union for Bitmap<K> {
    fn union_with(&mut self, other: &Self) -> Result<(), Error> {
        Bitmap::union_with(self, other)
    }
}

impl<K: Key> Intersection for Bitmap<K> {
    fn intersect_with(&mut self, other: &Self) -> Result<(), Error> {
        Bitmap::intersect_with(self, other)
    }
}

/// The keys of a [`Bitmap`], ascending; from [`Bitmap::iter`].
#[derive(Clone)]
pub struct Iter<'a, K> {
    bitmap: &'a Bitmap<K>,
    ones: Ones<'a>,
}

impl<K: Key> Iterator for Iter<'_, K> {
    type Item = K;

    #[inline]
    fn next(&mut self) -> Option<K> {
        self.ones.next().map(|i| self.bitmap.key_at(i))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ones.size_hint()
    }
}

impl<K: Key> ExactSizeIterator for Iter<'_, K> {}

impl<K: Key> fmt::Debug for Iter<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("left", &self.ones.len())
            .finish()
    }
}

impl<'a, K: Key> IntoIterator for &'a Bitmap<K> {
    type Item = K;
    type IntoIter = Iter<'a, K>;

    fn into_iter(self) -> Iter<'a, K> {
        self.iter()
    }
}

impl<K: Key> fmt::Debug for Bitmap<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bitmap")
            .field("range", &(self.lo..=self.hi))
            .field("len", &self.len())
            .finish()
    }
}

/// The README's examples, compiled and run as doctests so that it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
