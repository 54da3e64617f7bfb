//! Counter widths and the packed arrays that store them.

use core::fmt::Debug;
use std::borrow::Cow;

use bloomkit_core::bits::MAX_BITS;
use bloomkit_core::{DecodeError, Error};
use num_traits::{AsPrimitive, PrimInt, Unsigned};

/// Counter widths and their arrays are bloomkit's own: the byte format and the saturation
/// guarantee depend on exactly these.
mod sealed {
    pub trait Sealed {}
    impl Sealed for super::U4 {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}

    pub trait SealedArray {}
    impl SealedArray for super::Nibbles {}
    impl<T: super::Wide> SealedArray for Vec<T> {}
}

/// A counter width: [`U4`] (the default), `u8`, `u16` or `u32`. The same on every platform.
///
/// A counter saturates at [`MAX`](Counter::MAX) and then sticks there: it is never
/// incremented past it (no wrap-around to a small value) and never decremented again (so no
/// removal can take it to zero while an item that set it may remain).
pub trait Counter: sealed::Sealed + Copy + Debug + Send + Sync + 'static {
    /// Bits per counter.
    const BITS: u32;
    /// The ceiling, where a counter saturates and sticks.
    const MAX: u64;
    /// The array type that stores counters of this width.
    type Array: CounterArray;
}

/// Counters of 4 bits, two per byte: the width Fan et al. (2000) chose, for which at design
/// load the chance that any counter overflows is at most `1.37e-15 * m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct U4;

impl Counter for U4 {
    const BITS: u32 = 4;
    const MAX: u64 = 15;
    type Array = Nibbles;
}

/// The full-width unsigned integers usable as counters (`u8`, `u16`, `u32`), through
/// num-traits.
pub trait Wide:
    sealed::Sealed
    + PrimInt
    + Unsigned
    + AsPrimitive<u64>
    + Default
    + Debug
    + Send
    + Sync
    + bytemuck::Pod
    + 'static
{
}

impl Wide for u8 {}
impl Wide for u16 {}
impl Wide for u32 {}

impl<T: Wide> Counter for T {
    const BITS: u32 = (core::mem::size_of::<T>() * 8) as u32;
    const MAX: u64 = u64::MAX >> (64 - core::mem::size_of::<T>() * 8);
    type Array = Vec<T>;
}

/// `value` (at most `T`'s ceiling) as a `T`.
#[inline]
fn narrow<T: Wide>(value: u64) -> T {
    <T as num_traits::NumCast>::from(value).unwrap_or_else(T::max_value)
}

/// An array of counters of one width. Values written are at most the width's ceiling.
///
/// Sealed: implemented only for [`Nibbles`] and `Vec` of the [`Wide`] widths.
pub trait CounterArray: sealed::SealedArray + Clone + PartialEq + Eq + Debug + Send + Sync {
    /// `len` zero counters.
    ///
    /// # Errors
    /// [`Error::TooLarge`] or [`Error::AllocationFailed`].
    fn zeroed(len: u64) -> Result<Self, Error>;
    /// The number of counters.
    fn len(&self) -> u64;
    /// Whether there are no counters at all (filters always have at least one).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Counter `i`.
    fn get(&self, i: u64) -> u64;
    /// Requests the cache line holding counter `i` (a hint that changes nothing).
    fn prefetch(&self, i: u64);
    /// Sets counter `i` to `value` (at most the ceiling).
    fn set(&mut self, i: u64, value: u64);
    /// Zeroes every counter.
    fn clear(&mut self);
    /// Bytes of heap memory held.
    fn heap_bytes(&self) -> usize;
    /// The counters packed little-endian at their width: borrowed where the array's memory
    /// already is that (4-bit counters everywhere, wider ones on little-endian platforms).
    fn encode(&self) -> Cow<'_, [u8]>;
    /// Counters from [`encode`](CounterArray::encode)'s output, checked (taking the bytes
    /// over, without a copy, where the layouts agree).
    ///
    /// # Errors
    /// [`DecodeError::Invalid`] on a length mismatch or a value above the ceiling.
    fn decode(bytes: Cow<'_, [u8]>, len: u64) -> Result<Self, DecodeError>;
}

/// Bits that `counters` counters of width `C` occupy packed (in `u128`: no overflow).
pub(crate) fn packed_bits<C: Counter>(counters: u64) -> u128 {
    u128::from(counters) * u128::from(C::BITS)
}

/// Bytes for `len` counters of `bits` bits, or the reason they cannot be had.
fn checked_bytes(len: u64, bits: u32) -> Result<usize, Error> {
    let too_large = || Error::TooLarge {
        what: bloomkit_core::Unit::Counters,
        size: len as f64,
        max: MAX_BITS,
    };
    if len > MAX_BITS {
        return Err(too_large());
    }
    let bytes = (u128::from(len) * u128::from(bits)).div_ceil(8);
    usize::try_from(bytes).map_err(|_| too_large())
}

/// `n` zeroed values (`bytes` in all), through core's one fallible allocation path.
fn zeroed_vec<T: Default>(n: usize, bytes: usize) -> Result<Vec<T>, Error> {
    bloomkit_core::bits::filled_vec(n as u64, T::default).map_err(|_| Error::AllocationFailed {
        bytes: bytes as u64,
    })
}

/// 4-bit counters packed two per byte: counter `i` is the low nibble of byte `i / 2` when
/// `i` is even, the high nibble when odd.
#[derive(Clone, PartialEq, Eq)]
pub struct Nibbles {
    bytes: Vec<u8>,
    len: u64,
}

impl Debug for Nibbles {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Nibbles")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl CounterArray for Nibbles {
    fn zeroed(len: u64) -> Result<Self, Error> {
        let bytes = checked_bytes(len, 4)?;
        Ok(Nibbles {
            bytes: zeroed_vec(bytes, bytes)?,
            len,
        })
    }
    #[inline]
    fn len(&self) -> u64 {
        self.len
    }
    #[inline]
    fn get(&self, i: u64) -> u64 {
        u64::from((self.bytes[(i >> 1) as usize] >> ((i & 1) * 4)) & 0x0f)
    }
    #[inline]
    fn prefetch(&self, i: u64) {
        bloomkit_core::batch::prefetch(&self.bytes[(i >> 1) as usize]);
    }
    #[inline]
    fn set(&mut self, i: u64, value: u64) {
        debug_assert!(value <= 15);
        let shift = (i & 1) * 4;
        let byte = &mut self.bytes[(i >> 1) as usize];
        *byte = (*byte & !(0x0f << shift)) | ((value as u8) << shift);
    }
    fn clear(&mut self) {
        self.bytes.fill(0);
    }
    fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn decode(bytes: Cow<'_, [u8]>, len: u64) -> Result<Self, DecodeError> {
        let expected = checked_bytes(len, 4).map_err(|e| DecodeError::Invalid(e.to_string()))?;
        if bytes.len() != expected {
            return Err(DecodeError::Invalid(format!(
                "{len} 4-bit counters need {expected} bytes, found {}",
                bytes.len()
            )));
        }
        // With an odd count, the last byte's high nibble is padding and must be zero.
        if len % 2 == 1 && bytes[expected - 1] >> 4 != 0 {
            return Err(DecodeError::Invalid(
                "nonzero padding after the last counter".into(),
            ));
        }
        Ok(Nibbles {
            bytes: bytes.into_owned(),
            len,
        })
    }
}

impl<T: Wide> CounterArray for Vec<T> {
    fn zeroed(len: u64) -> Result<Self, Error> {
        let bytes = checked_bytes(len, T::BITS)?;
        zeroed_vec(len as usize, bytes)
    }
    #[inline]
    fn len(&self) -> u64 {
        Vec::len(self) as u64
    }
    #[inline]
    fn get(&self, i: u64) -> u64 {
        self[i as usize].as_()
    }
    #[inline]
    fn prefetch(&self, i: u64) {
        bloomkit_core::batch::prefetch(&self[i as usize]);
    }
    #[inline]
    fn set(&mut self, i: u64, value: u64) {
        debug_assert!(value <= T::MAX);
        self[i as usize] = narrow(value);
    }
    fn clear(&mut self) {
        self.fill(T::zero());
    }
    fn heap_bytes(&self) -> usize {
        self.capacity() * core::mem::size_of::<T>()
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        if cfg!(target_endian = "little") {
            return Cow::Borrowed(bytemuck::cast_slice(self));
        }
        let width = core::mem::size_of::<T>();
        let mut out = Vec::with_capacity(self.len() * width);
        for &c in self {
            let v: u64 = c.as_();
            out.extend_from_slice(&v.to_le_bytes()[..width]);
        }
        Cow::Owned(out)
    }
    fn decode(bytes: Cow<'_, [u8]>, len: u64) -> Result<Self, DecodeError> {
        let width = core::mem::size_of::<T>();
        let expected =
            checked_bytes(len, T::BITS).map_err(|e| DecodeError::Invalid(e.to_string()))?;
        if bytes.len() != expected {
            return Err(DecodeError::Invalid(format!(
                "{len} {}-bit counters need {expected} bytes, found {}",
                T::BITS,
                bytes.len()
            )));
        }
        Ok(bytes
            .chunks_exact(width)
            .map(|chunk| {
                let mut b = [0u8; 8];
                b[..width].copy_from_slice(chunk);
                narrow(u64::from_le_bytes(b))
            })
            .collect())
    }
}
