//! Serde impls and the byte format for [`Bitmap`]; both decode through
//! [`Bitmap::from_parts`], which validates everything.

use bloomkit_core::bits::BitArray;
use bloomkit_core::format::{Reader, Writer};
use bloomkit_core::{Codec, DecodeError, Error, HasherSpec, Variant};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Bitmap, Key};

/// The parameter block of the byte format (`docs/format.md`).
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Params {
    /// Width of the key type in bits, and whether it is signed: a `Bitmap<u32>` is not read
    /// back as a `Bitmap<i64>`.
    key_bits: u32,
    key_signed: bool,
    lo: i128,
    hi: i128,
}

#[derive(Serialize)]
struct ReprRef<'a> {
    params: Params,
    words: &'a [u64],
}

#[derive(Deserialize)]
struct Repr {
    params: Params,
    words: Vec<u64>,
}

fn invalid(msg: String) -> Error {
    Error::Decode(DecodeError::Invalid(msg))
}

fn key_type<K: Key>() -> (u32, bool) {
    (K::zero().count_zeros(), K::min_value() < K::zero())
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
            lo: self.base,
            hi: self.base + i128::from(self.bits.len()) - 1,
        }
    }

    /// Rebuilds a bitmap from decoded parts, rejecting anything `new` would not produce.
    fn from_parts(params: Params, words: Vec<u64>) -> Result<Self, Error> {
        let expected = key_type::<K>();
        if (params.key_bits, params.key_signed) != expected {
            return Err(invalid(format!(
                "bitmap of {} keys, expected {} keys",
                type_name(params.key_bits, params.key_signed),
                type_name(expected.0, expected.1)
            )));
        }
        let bound = |v: i128| {
            K::from_i128(v).ok_or_else(|| {
                invalid(format!(
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
            base: params.lo,
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
        Writer::new(Variant::Bitmap, HasherSpec::IDENTITY)
            .params(&self.params())
            .words(self.bits.words())
            .finish()
    }

    /// Reads a bitmap written by [`to_bytes`](Self::to_bytes) with the same key type.
    ///
    /// # Errors
    /// [`Error::Decode`] for truncated, corrupted or hostile bytes, bytes of another variant,
    /// key type or format version; never a panic, and no allocation beyond the input's size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut reader = Reader::open(bytes, Variant::Bitmap)?;
        let found = reader.header().hasher;
        if found != HasherSpec::IDENTITY {
            return Err(invalid(format!(
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

impl<K: Key> Codec for Bitmap<K> {
    fn to_bytes(&self) -> Vec<u8> {
        Bitmap::to_bytes(self)
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Bitmap::from_bytes(bytes)
    }
}

impl<K: Key> Serialize for Bitmap<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ReprRef {
            params: self.params(),
            words: self.bits.words(),
        }
        .serialize(serializer)
    }
}

impl<'de, K: Key> Deserialize<'de> for Bitmap<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = Repr::deserialize(deserializer)?;
        Self::from_parts(repr.params, repr.words).map_err(D::Error::custom)
    }
}
