//! The byte format of [`Bitmap`] ([`Codec`]), and serde through those bytes. Decoding goes
//! through `from_parts`, which validates everything.

use core::ops::RangeInclusive;

use bloomkit_core::bits::{BitArray, BitSlice};
use bloomkit_core::format::{Reader, Verify, Writer};
use bloomkit_core::{Codec, Error, HasherSpec, Variant};
use serde::{Deserialize, Serialize};

use crate::{Bitmap, Key};

/// The parameter block of the byte format (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Params {
    /// Width of the key type in bits, and whether it is signed: a `Bitmap<u32>` is not read
    /// back as a `Bitmap<i64>`.
    key_bits: u32,
    key_signed: bool,
    /// The bounds: a signed key's value, an unsigned key's value as the `i128` with the same
    /// bits (`u128` bounds above `i128::MAX` read as negative), see [`to_wire`].
    lo: i128,
    hi: i128,
}

/// A bound as the format writes it: its value as an `i128` for signed keys, its bits as an
/// `i128` for unsigned ones. That is the value itself for every bound that fits an `i128`
/// (all that 0.1.0 could write), and a bit-for-bit copy for `u128` bounds above `i128::MAX`.
/// It takes the bound's ordinal (`crate::ordinal`), which the bitmap keeps for its low bound
/// and derives for its high one, so writing has no failure path.
fn to_wire<K: Key>(o: u128) -> i128 {
    if crate::is_signed::<K>() {
        (o ^ (1 << 127)) as i128
    } else {
        o as i128
    }
}

/// The bound [`to_wire`] wrote, if it is a `K`.
fn from_wire<K: Key>(v: i128) -> Option<K> {
    if crate::is_signed::<K>() {
        K::from_i128(v)
    } else {
        K::from_u128(v as u128)
    }
}

fn key_type<K: Key>() -> (u32, bool) {
    use core::any::TypeId;
    let pointer_sized =
        TypeId::of::<K>() == TypeId::of::<usize>() || TypeId::of::<K>() == TypeId::of::<isize>();
    (
        written_width(K::zero().count_zeros(), pointer_sized),
        K::min_value() < K::zero(),
    )
}

/// The key width the format records: `usize` and `isize` as 64 bits on every platform, so a
/// `Bitmap<usize>` has the same bytes on 32- and 64-bit machines (those of a `Bitmap<u64>`
/// over the same range); a 32-bit machine reads them back when the range fits its `usize`.
fn written_width(type_bits: u32, pointer_sized: bool) -> u32 {
    if pointer_sized {
        64
    } else {
        type_bits
    }
}

fn type_name(bits: u32, signed: bool) -> String {
    format!("{}{bits}", if signed { 'i' } else { 'u' })
}

impl<K: Key> Bitmap<K> {
    fn params(&self) -> Params {
        let (key_bits, key_signed) = key_type::<K>();
        Params {
            key_bits,
            key_signed,
            // `base + (len - 1)` is `ordinal(hi)`, at most u128::MAX (subtract first: a range
            // ending at u128::MAX has `base + len` = 2^128).
            lo: to_wire::<K>(self.base),
            hi: to_wire::<K>(self.base + (u128::from(self.bits.len()) - 1)),
        }
    }

    /// Rebuilds a bitmap from decoded parts, rejecting anything `new` would not produce.
    fn from_parts(params: Params, words: Vec<u64>) -> Result<Self, Error> {
        let (lo, hi, base, keys) = Self::check_params(params)?;
        Ok(Bitmap {
            lo,
            hi,
            base,
            bits: BitArray::from_words(words, keys)?,
        })
    }

    /// The range a parameter block declares (`lo`, `hi`, `ordinal(lo)`, the number of
    /// keys), checked as `new` would check it: for the owned decoder and the view.
    fn check_params(params: Params) -> Result<(K, K, u128, u64), Error> {
        let expected = key_type::<K>();
        if (params.key_bits, params.key_signed) != expected {
            return Err(Error::invalid_bytes(format!(
                "bitmap of {} keys, expected {} keys",
                type_name(params.key_bits, params.key_signed),
                type_name(expected.0, expected.1)
            )));
        }
        let bound = |v: i128| {
            from_wire::<K>(v).ok_or_else(|| {
                Error::invalid_bytes(format!(
                    "range bound {v} is not a {}",
                    type_name(expected.0, expected.1)
                ))
            })
        };
        let (lo, hi) = (bound(params.lo)?, bound(params.hi)?);
        let keys = Self::range_len(lo, hi).map_err(Error::into_decode)?;
        let base =
            crate::ordinal(lo).ok_or_else(|| Error::invalid_bytes("a bound has no ordinal"))?;
        Ok((lo, hi, base, keys))
    }

    /// The bitmap in bloomkit's byte format: header, key type and range, the words, and a
    /// checksum (`docs/format.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_bitmap::Bitmap;
    ///
    /// let b = Bitmap::from_keys(-5i32..=5, [-5, 0, 5])?;
    /// let back = Bitmap::<i32>::from_bytes(&b.to_bytes())?;
    /// assert_eq!(b, back);
    /// assert!(Bitmap::<u32>::from_bytes(&b.to_bytes()).is_err()); // another key type
    /// # Ok::<(), bloomkit_core::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Codec::to_bytes(self)
    }

    /// Reads a bitmap written by [`to_bytes`](Self::to_bytes) with the same key type.
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, bytes of another variant,
    /// key type or format version; never a panic, and no allocation beyond the input's size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Codec::from_bytes(bytes)
    }
}

impl<K: Key> Codec for Bitmap<K> {
    const VARIANT: Variant = Variant::Bitmap;

    fn encode(&self) -> Writer<'_> {
        Writer::new(Variant::Bitmap, HasherSpec::IDENTITY)
            .params(&self.params())
            .words(self.bits.words())
    }

    fn decode(mut reader: Reader<'_>) -> Result<Self, Error> {
        let params = read_params(&mut reader)?;
        let words = reader.words()?;
        reader.finish()?;
        Self::from_parts(params, words)
    }
}

/// The header's hasher (none) and the parameter block, for both decoders.
fn read_params(reader: &mut Reader<'_>) -> Result<Params, Error> {
    let found = reader.header().hasher;
    if found != HasherSpec::IDENTITY {
        return Err(Error::invalid_bytes(format!(
            "a bitmap has no hasher, found hasher id {} seed {}",
            found.id, found.seed
        )));
    }
    Ok(reader.params()?)
}

/// A zero-copy view of a [`Bitmap`]'s bytes: answers from the bytes in place (a memory
/// map, a buffer) without copying the words, as the bitmap they encode answers.
///
/// The bytes must be 8-byte aligned where the words start (`format::AlignedBytes` reads a
/// file so; a map is page-aligned); otherwise [`bloomkit_core::DecodeError::NotViewable`].
///
/// # Examples
///
/// ```
/// use bloomkit_bitmap::{Bitmap, BitmapRef};
/// use bloomkit_core::format::AlignedBytes;
///
/// let ids = Bitmap::from_keys(1_000u32..=9_999, [1_000, 4_242, 9_999])?;
/// let bytes = AlignedBytes::copy_from(&ids.to_bytes());
/// let view = BitmapRef::<u32>::from_bytes(bytes.as_bytes())?;
/// assert!(view.contains(&4_242) && !view.contains(&4_243) && !view.contains(&5));
/// assert_eq!(view.len(), 3);
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct BitmapRef<'a, K> {
    lo: K,
    hi: K,
    base: u128,
    bits: BitSlice<'a>,
}

impl<K: Key> core::fmt::Debug for BitmapRef<'_, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BitmapRef")
            .field("range", &(self.lo..=self.hi))
            .field("len", &self.len())
            .finish()
    }
}

impl<'a, K: Key> BitmapRef<'a, K> {
    /// A view of `bytes`, every byte checked (the payload's checksum included).
    ///
    /// # Errors
    /// As [`Bitmap::from_bytes`], and [`bloomkit_core::DecodeError::NotViewable`] for words
    /// that are not 8-byte aligned.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::with_verify(bytes, Verify::All)
    }

    /// A view of `bytes`, checked as `verify` says (the header's checksum always).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes).
    pub fn with_verify(bytes: &'a [u8], verify: Verify) -> Result<Self, Error> {
        let mut reader = Reader::open(bytes, Variant::Bitmap, verify)?;
        let params = read_params(&mut reader)?;
        let words = reader.words_in_place::<u64>()?;
        reader.finish()?;
        let (lo, hi, base, keys) = Bitmap::<K>::check_params(params)?;
        let bits = BitSlice::new(words, keys)?;
        Ok(BitmapRef { lo, hi, base, bits })
    }

    /// Whether `key` is in the set (exact).
    #[inline]
    pub fn contains(&self, key: &K) -> bool {
        crate::offset(*key, self.lo, self.hi, self.base).is_some_and(|i| self.bits.get(i))
    }

    /// The number of keys in the set.
    pub fn len(&self) -> u64 {
        self.bits.count_ones()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The range of keys it can hold.
    pub fn range(&self) -> RangeInclusive<K> {
        self.lo..=self.hi
    }

    /// An owned copy.
    ///
    /// # Errors
    /// [`Error::AllocationFailed`] when the words cannot be allocated.
    pub fn to_bitmap(&self) -> Result<Bitmap<K>, Error> {
        let mut words = Vec::new();
        words
            .try_reserve_exact(self.bits.words().len())
            .map_err(|_| Error::AllocationFailed {
                bytes: self.bits.words().len() as u64 * 8,
            })?;
        words.extend_from_slice(self.bits.words());
        Ok(Bitmap {
            lo: self.lo,
            hi: self.hi,
            base: self.base,
            bits: BitArray::from_words(words, self.bits.len())?,
        })
    }
}

// The view owns nothing on the heap.
crate::exact_reads!([K: Key] BitmapRef<'_, K>, |_| 0);

bloomkit_core::impl_serde_via_bytes!([K: Key] Bitmap<K>);

#[cfg(test)]
mod tests {
    use super::*;

    /// `usize` bitmaps record 64-bit keys whatever the platform's pointer width; fixed-width
    /// types record their own.
    #[test]
    fn pointer_sized_keys_are_written_as_64_bits_everywhere() {
        assert_eq!(written_width(32, true), 64); // usize on a 32-bit machine
        assert_eq!(written_width(64, true), 64);
        assert_eq!(written_width(32, false), 32); // u32
        assert_eq!(key_type::<usize>(), (64, false));
        assert_eq!(key_type::<isize>(), (64, true));
        assert_eq!(key_type::<u16>(), (16, false));
        let b = Bitmap::from_keys(3usize..=70, [3, 64, 70]).unwrap();
        let same = Bitmap::from_keys(3u64..=70, [3, 64, 70]).unwrap();
        assert_eq!(b.to_bytes(), same.to_bytes());
        assert_eq!(Bitmap::<usize>::from_bytes(&same.to_bytes()).unwrap(), b);
    }
}
