//! The byte format of [`Bitmap`] ([`Codec`]), and serde through those bytes. Decoding goes
//! through `from_parts`, which validates everything.

use bloomkit_core::bits::BitArray;
use bloomkit_core::format::{Reader, Writer};
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
        Ok(Bitmap {
            lo,
            hi,
            base: crate::ordinal(lo)
                .ok_or_else(|| Error::invalid_bytes("a bound has no ordinal"))?,
            bits: BitArray::from_words(words, keys)?,
        })
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
        let found = reader.header().hasher;
        if found != HasherSpec::IDENTITY {
            return Err(Error::invalid_bytes(format!(
                "a bitmap has no hasher, found hasher id {} seed {}",
                found.id, found.seed
            )));
        }
        let params: Params = reader.params()?;
        let words = reader.words()?;
        reader.finish()?;
        Self::from_parts(params, words)
    }
}

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
